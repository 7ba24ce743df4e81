import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SaveQueue } from './saveQueue'
import { isPermanentRefusal, settleBeforeSwitch } from './readerSwitch'

beforeEach(() => vi.useFakeTimers())
afterEach(() => vi.useRealTimers())

/** The backend as the rating commands behave: an edit is written only as the session's reader. */
function workstation(reader: string) {
  const session = { reader: reader as string | null }
  const stored: { by: string; value: string }[] = []
  const save = (madeAs: string, value: string) => async () => {
    if (session.reader !== madeAs) {
      throw { code: 'reader_changed', message: `this edit was made as ${madeAs}, and ${session.reader ?? 'nobody'} is the reader here now` }
    }
    stored.push({ by: madeAs, value })
  }
  return { session, stored, save }
}

const code = (e: unknown) => (e as { code: string }).code

function queue() {
  return new SaveQueue({
    debounceMs: 250,
    retryDelaysMs: [500, 1000],
    describeError: (e) => (e as { message: string }).message,
    isPermanent: (e) => isPermanentRefusal(code(e)),
  })
}

describe('switching reader', () => {
  it('waits for the leaving reader’s queued edit, which is written as them before the switch', async () => {
    const ws = workstation('Dr Ada')
    const saves = queue()
    saves.enqueue({ key: 'rating:1', run: ws.save('Dr Ada', 'comment by Ada') })
    const settled = settleBeforeSwitch(saves, 'Dr Ada')
    await vi.advanceTimersByTimeAsync(0)
    expect(await settled).toBeNull()
    ws.session.reader = 'Dr Bo'
    expect(ws.stored).toEqual([{ by: 'Dr Ada', value: 'comment by Ada' }])
  })

  it('refuses the switch, keeping the edit, while it cannot be written', async () => {
    const ws = workstation('Dr Ada')
    const saves = queue()
    let databaseDown = true
    saves.enqueue({
      key: 'rating:1',
      run: async () => {
        if (databaseDown) throw { code: 'database', message: 'database is locked' }
        await ws.save('Dr Ada', 'kept')()
      },
    })
    const settled = settleBeforeSwitch(saves, 'Dr Ada', 2000)
    await vi.advanceTimersByTimeAsync(2000)
    const refusal = await settled
    expect(refusal).toContain("Dr Ada's last edits are not saved yet (database is locked)")
    expect(refusal).toContain('Dr Ada stays the reader')
    expect(saves.dirty).toBe(true)
    // The reader stayed; the edit is written once the database answers again.
    databaseDown = false
    await vi.advanceTimersByTimeAsync(1000)
    expect(ws.stored).toEqual([{ by: 'Dr Ada', value: 'kept' }])
    expect(saves.dirty).toBe(false)
  })

  it('keeps an edit refused because another reader took over, and writes it as its reader once they are back', async () => {
    // Bo took the workstation past the window (another window, the command line) while Ada's
    // edit was still queued: the backend refuses it, and the queue must neither drop it nor ever
    // have it written as Bo.
    const ws = workstation('Dr Bo')
    const saves = queue()
    saves.enqueue({ key: 'rating:1', run: ws.save('Dr Ada', 'Ada, queued') })
    await vi.advanceTimersByTimeAsync(250)
    expect(saves.state).toMatchObject({ kind: 'retrying', message: expect.stringContaining('made as Dr Ada') })
    await vi.advanceTimersByTimeAsync(5000)
    expect(ws.stored).toEqual([])
    expect(saves.dirty).toBe(true)
    ws.session.reader = 'Dr Ada'
    await vi.advanceTimersByTimeAsync(1000)
    expect(ws.stored).toEqual([{ by: 'Dr Ada', value: 'Ada, queued' }])
    expect(saves.state.kind).toBe('saved')
  })

  it('lets the switch go at once when nothing is queued', async () => {
    expect(await settleBeforeSwitch(queue(), 'Dr Ada')).toBeNull()
  })

  it('treats only the backend refusing the edit itself as final', () => {
    for (const final of ['refused', 'invalid_argument', 'not_found', 'incomplete']) expect(isPermanentRefusal(final)).toBe(true)
    for (const passing of ['reader_changed', 'database', 'not_ready', 'ipc']) expect(isPermanentRefusal(passing)).toBe(false)
  })
})
