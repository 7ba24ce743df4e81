import js from '@eslint/js'
import svelte from 'eslint-plugin-svelte'
import globals from 'globals'
import ts from 'typescript-eslint'
import svelteConfig from './svelte.config.js'

export default ts.config(
  // src/bindings.ts is generated from the Rust commands (src-tauri/src/bindings.rs).
  { ignores: ['dist/', 'node_modules/', 'src/bindings.ts'] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  { languageOptions: { globals: { ...globals.browser } } },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { projectService: true, extraFileExtensions: ['.svelte'], parser: ts.parser, svelteConfig } },
  },
  {
    // The one door to Tauri: everything else talks to `src/backend.ts` (which wraps the generated
    // `src/bindings.ts`).
    files: ['src/**/*.{ts,svelte}'],
    ignores: ['src/backend.ts', 'src/bindings.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['@tauri-apps/*'] }] },
  },
)
