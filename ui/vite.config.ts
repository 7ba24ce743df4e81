import { svelte } from '@sveltejs/vite-plugin-svelte'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  plugins: [svelte()],
  // Tauri serves the built files; a fixed port lets `tauri dev` find the dev server.
  server: { port: 5173, strictPort: true },
  build: { target: 'safari16', chunkSizeWarningLimit: 4096 },
  test: { include: ['src/**/*.test.ts'] },
})
