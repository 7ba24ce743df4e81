// What the UI's tests check `backend.ts` against, taken from the generated contract: the commands
// the bindings invoke (src/bindings.ts, generated from the Rust commands and kept current by a Rust
// test), each with the arguments its binding sends, and which of them a module of
// src-tauri/src/commands/ defines (build.rs makes every `#[tauri::command]` fn there a command,
// and refuses two of one name, so a name is defined in one file).

import bindingsSource from '../bindings.ts?raw'

const commandFiles = import.meta.glob<string>('../../../src-tauri/src/commands/*.rs', {
  query: '?raw',
  import: 'default',
  eager: true,
})

/** `"command", { a, b: transform(b) }` → ['a', 'b'], for every command the bindings invoke. */
function generatedArguments(): Map<string, string[]> {
  const sent = new Map<string, string[]>()
  for (const [, command, args] of bindingsSource.matchAll(/__TAURI_INVOKE(?:<.*?>)?\("(\w+)"(?:, \{ ([^}]*) \})?\)/g)) {
    const names = (args ?? '')
      .split(',')
      .map((arg) => arg.split(':')[0].trim())
      .filter((name) => name !== '')
    sent.set(command, names)
  }
  return sent
}

/** The commands of `commands/<module>.rs`, each with the argument names its binding sends. */
export function commandsOf(module: string): Map<string, string[]> {
  const source = commandFiles[`../../../src-tauri/src/commands/${module}.rs`]
  if (source === undefined) throw new Error(`src-tauri/src/commands/${module}.rs does not exist`)
  const commands = new Map<string, string[]>()
  for (const [command, args] of generatedArguments()) {
    if (new RegExp(`\\bfn ${command}\\b`).test(source)) commands.set(command, args)
  }
  if (commands.size === 0) throw new Error(`no command of the bindings is defined in ${module}.rs`)
  return commands
}
