// What the reading screen says about the team server's sync (docs/team-server.md, "The desktop
// app against a server"): calm words for where the rater's work is, from the sync worker's status.

import type { StoppedItem, SyncStatus_Serialize as SyncStatus } from '../../bindings'

const changes = (n: number) => (n === 1 ? '1 change' : `${n} changes`)

/** The one line beside "All changes saved": where the saved work is. */
export function syncLine(status: SyncStatus): string {
  const waiting = status.waiting
  switch (status.state) {
    case 'synced':
      return waiting === 0 ? 'All changes are on the server' : `Saved on this computer · ${changes(waiting)} to send`
    case 'sending':
      return `Sending ${changes(waiting)} to the server…`
    case 'offline':
      return waiting === 0
        ? 'The server is not reachable; new changes are kept on this computer'
        : `Saved on this computer · ${changes(waiting)} will be sent when the server is reachable`
    case 'logged_out':
      return `Saved on this computer · log in again to send ${changes(waiting)}`
    case 'failed':
      return `Saved on this computer · ${changes(waiting)} not sent yet`
  }
}

/** The sentence for an item the server refused an edit of: the work stays here, nothing is overwritten. */
export function stoppedLine(s: StoppedItem): string {
  return `Response ${s.position}: ${s.reason} (${changes(s.kept)} kept on this computer).`
}

/** One sentence per stopped item. */
export function stoppedLines(status: SyncStatus): string[] {
  return status.stopped.map(stoppedLine)
}

/** The two ways out of a stopped item, as the buttons say them and what each does. */
export const RESOLUTIONS = {
  keep_server: {
    label: 'Keep the server’s version',
    detail:
      'Your rating of this response here becomes the one on the server; the changes kept on this computer are set aside (recorded, not sent).',
  },
  send_mine: {
    label: 'Send mine over it',
    detail: 'Your rating of this response here replaces the one on the server.',
  },
} as const
