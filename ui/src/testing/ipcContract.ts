// What the UI's tests check `backend.ts` against, taken from the generated contract rather than
// from Rust source: the commands of a module as the one list names them
// (src-tauri/src/commands/list.rs), and the arguments each sends as the bindings generated from
// the Rust commands send them (src/bindings.ts, which a Rust test keeps current).

import listSource from '../../../src-tauri/src/commands/list.rs?raw'
import bindingsSource from '../bindings.ts?raw'

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

/** The commands `module::command` in the list, each with the argument names its binding sends. */
export function commandsOf(module: string): Map<string, string[]> {
  const sent = generatedArguments()
  const commands = new Map<string, string[]>()
  for (const [, command] of listSource.matchAll(new RegExp(`^\\s*${module}::(\\w+)`, 'gm'))) {
    const args = sent.get(command)
    if (args === undefined) throw new Error(`${command} is in list.rs but not in the generated bindings`)
    commands.set(command, args)
  }
  return commands
}
