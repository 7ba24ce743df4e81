import { describe, expect, it } from 'vitest'
import type { SyncStatus_Serialize as SyncStatus } from '../../bindings'
import { stoppedLines, syncLine } from './syncText'

const status = (state: SyncStatus['state'], waiting: number, stopped: SyncStatus['stopped'] = []): SyncStatus => ({
  state,
  waiting,
  stopped,
  problem: null,
})

describe('the sync line', () => {
  it('says everything is on the server only when nothing waits', () => {
    expect(syncLine(status('synced', 0))).toBe('All changes are on the server')
    expect(syncLine(status('synced', 2))).toBe('Saved on this computer · 2 changes to send')
  })

  it('counts what waits while the server is unreachable, in singular and plural', () => {
    expect(syncLine(status('offline', 1))).toBe('Saved on this computer · 1 change will be sent when the server is reachable')
    expect(syncLine(status('offline', 3))).toBe('Saved on this computer · 3 changes will be sent when the server is reachable')
    expect(syncLine(status('offline', 0))).toContain('kept on this computer')
  })

  it('asks for a new login when the session ended', () => {
    expect(syncLine(status('logged_out', 2))).toBe('Saved on this computer · log in again to send 2 changes')
  })

  it('names each item the server refused, and that its work is kept', () => {
    const lines = stoppedLines(
      status('synced', 0, [{ assignment: 7, position: 3, kept: 2, reason: 'this item was changed on the server' }]),
    )
    expect(lines).toEqual(['Response 3: this item was changed on the server (2 changes kept on this computer).'])
  })
})
