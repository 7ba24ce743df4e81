// The rating calls in backend.ts against the Rust commands they invoke: every command exists in
// src-tauri/src/commands/rating.rs, and the argument names sent are exactly its parameters in
// the camelCase Tauri expects (as the bindings generated from the Rust commands send them). A
// rename on either side fails here rather than at run time.

import { beforeEach, describe, expect, it, vi } from 'vitest'
import { commandsOf } from './testing/ipcContract'

const invoke = vi.fn()
vi.mock('@tauri-apps/api/core', () => ({ invoke: (...args: unknown[]) => invoke(...args) }))
vi.mock('@tauri-apps/api/event', () => ({ listen: vi.fn() }))
vi.mock('@tauri-apps/plugin-dialog', () => ({ open: vi.fn(), save: vi.fn() }))

const backend = await import('./backend')

const calls: [keyof typeof backend, unknown[]][] = [
  ['listRaters', []],
  ['createRater', ['Dr Ada', 'neurologist', 4]],
  ['currentRater', []],
  ['setCurrentRater', [1]],
  ['leaveReading', []],
  ['listAssignmentPlans', ['neurorater-demo']],
  ['createLeadPlan', [{}]],
  ['topUpAssignmentPlan', [{}]],
  ['ensureDemoQueue', []],
  ['readingQueue', ['neurorater-demo']],
  ['readingItem', [2]],
  ['saveRating', [1, 2, {}]],
  ['addErrorLabel', [1, 2, {}]],
  ['updateErrorLabel', [1, 3, {}]],
  ['deleteErrorLabel', [1, 3]],
  ['submitRating', [1, 2]],
  ['reopenRating', [1, 2]],
  ['setPosition', [2]],
  ['resumePosition', []],
]

describe('rating commands', () => {
  const rust = commandsOf('rating')

  beforeEach(() => invoke.mockReset().mockResolvedValue(null))

  it('finds every command of rating.rs', () => {
    expect([...rust.keys()].sort()).toEqual(
      calls.map(([fn]) => fn.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).sort(),
    )
  })

  it.each(calls)('%s sends the parameters the command declares', async (fn, args) => {
    await (backend[fn] as (...a: unknown[]) => Promise<unknown>)(...args)
    expect(invoke).toHaveBeenCalledTimes(1)
    const [command, sent] = invoke.mock.calls[0] as [string, Record<string, unknown> | undefined]
    expect(rust.has(command), `${command} is not a command of rating.rs`).toBe(true)
    expect(Object.keys(sent ?? {}).sort()).toEqual([...(rust.get(command) ?? [])].sort())
  })
})

// The multi-site package calls against src-tauri/src/commands/package.rs, checked the same way.
const packageCalls: [keyof typeof backend, unknown[]][] = [
  ['importRaterPackage', ['/tmp/dr-remote.nrpkg.tar']],
  ['exportResultsPackage', ['/tmp/results.tar', null]],
  ['mergeResultsPackage', ['/tmp/results.tar']],
  ['cancelPackageAction', []],
  ['exportRaterPackage', ['site-a-study', 3, 'Site C', '/tmp/dr-remote.nrpkg.tar']],
  ['importedRaterPackages', []],
]

describe('rater package commands', () => {
  const rust = commandsOf('package')

  beforeEach(() => invoke.mockReset().mockResolvedValue(null))

  it('finds every command of package.rs', () => {
    expect([...rust.keys()].sort()).toEqual(
      packageCalls.map(([fn]) => fn.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).sort(),
    )
  })

  it.each(packageCalls)('%s sends the parameters the command declares', async (fn, args) => {
    await (backend[fn] as (...a: unknown[]) => Promise<unknown>)(...args)
    const [command, sent] = invoke.mock.calls[0] as [string, Record<string, unknown> | undefined]
    expect(rust.has(command), `${command} is not a command of package.rs`).toBe(true)
    expect(Object.keys(sent ?? {}).sort()).toEqual([...(rust.get(command) ?? [])].sort())
  })
})

// The pixel calls against src-tauri/src/commands/imaging.rs, checked the same way.
const imagingCalls: [keyof typeof backend, unknown[]][] = [
  ['seriesVolume', [3]],
  ['seriesOpeningSlice', [3, 'axial', null]],
  ['seriesMeasure', [3, { series_id: 'ct', kind: 'arrow', plane: 'axial', points_lps_mm: [[0, 0, 0], [1, 0, 0]] }]],
]

describe('imaging commands', () => {
  const rust = commandsOf('imaging')

  beforeEach(() => invoke.mockReset().mockResolvedValue(new ArrayBuffer(0)))

  it('finds every command of imaging.rs', () => {
    expect([...rust.keys()].sort()).toEqual(['series_measure', 'series_opening_slice', 'series_volume'])
  })

  it.each(imagingCalls)('%s sends the parameters the command declares', async (fn, args) => {
    await (backend[fn] as (...a: unknown[]) => Promise<unknown>)(...args)
    const [command, sent] = invoke.mock.calls[0] as [string, Record<string, unknown> | undefined]
    expect(rust.has(command), `${command} is not a command of imaging.rs`).toBe(true)
    expect(Object.keys(sent ?? {}).sort()).toEqual([...(rust.get(command) ?? [])].sort())
  })
})

describe('errors', () => {
  it('reads an argument the Rust types refused before the command ran as an invalid argument', () => {
    const refused = 'invalid args `studyId` for command `reading_queue`: must be 1–64 characters'
    expect(backend.toBackendError(refused)).toEqual({ code: 'invalid_argument', message: refused })
    expect(backend.toBackendError({ code: 'not_found', message: 'no such case' })).toEqual({
      code: 'not_found',
      message: 'no such case',
    })
    expect(backend.toBackendError(new Error('the window closed'))).toEqual({ code: 'ipc', message: 'the window closed' })
  })
})
