// The curation and baseline calls in backend.ts against the Rust commands they invoke: each
// command exists in src-tauri/src/commands/curation.rs or baseline.rs, and the argument names
// sent are exactly its parameters in the camelCase Tauri expects (as the bindings generated from
// the Rust commands send them).

import { beforeEach, describe, expect, it, vi } from 'vitest'
import { commandsOf } from '../../testing/ipcContract'

const invoke = vi.fn()
vi.mock('@tauri-apps/api/core', () => ({ invoke: (...args: unknown[]) => invoke(...args) }))
vi.mock('@tauri-apps/api/event', () => ({ listen: vi.fn() }))

const backend = await import('../../backend')

const answer = {
  role: 'resident',
  yearsExperience: 3,
  diagnosis: 'MS',
  differential: ['ADEM'],
  reasoning: 'ovoid plaques',
  secondsOnTask: 60,
}
const calls: [keyof typeof backend, unknown[]][] = [
  ['curationHistory', ['s', 'c']],
  ['curationSaveDraft', ['s', 'c', 'ana', 1, {}]],
  ['curationSubmit', ['s', 'c', 2]],
  ['curationReview', ['s', 'c', 2, 'finalised', '']],
  ['curationDiff', ['s', 'c', 1, 2]],
  ['curationCompare', ['s', 'c', 2, 3]],
  ['curationMerge', ['s', 'c', 2, 3, { diagnosis: 'a' }]],
  ['curationSaveConsensus', ['s', 'c', 1, {}]],
  ['revealGroundTruth', [4]],
  ['baselineTasks', ['s']],
  ['baselineBlindTask', ['s', 'c', 't1']],
  ['baselineSubmit', ['s', 'c', 't1', answer]],
]

describe('curation and baseline commands', () => {
  const rust = new Map([...commandsOf('curation'), ...commandsOf('baseline')])

  beforeEach(() => invoke.mockReset().mockResolvedValue(null))

  it('finds every command of curation.rs and baseline.rs', () => {
    expect([...rust.keys()].sort()).toEqual(
      calls.map(([fn]) => fn.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).sort(),
    )
  })

  it.each(calls)('%s sends the parameters the command declares', async (fn, args) => {
    await (backend[fn] as (...a: unknown[]) => Promise<unknown>)(...args)
    expect(invoke).toHaveBeenCalledTimes(1)
    const [command, sent] = invoke.mock.calls[0] as [string, Record<string, unknown> | undefined]
    expect(rust.has(command), `${command} is not a curation or baseline command`).toBe(true)
    expect(Object.keys(sent ?? {}).sort()).toEqual([...(rust.get(command) ?? [])].sort())
  })
})
