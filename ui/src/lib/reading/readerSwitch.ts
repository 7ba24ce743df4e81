// Before another reader (or nobody) takes over the workstation, the edits made as the reader
// leaving must be written: the backend writes an edit only as the reader it was made as, so an
// edit still queued after the switch would be refused (`reader_changed`) and could be written
// only once that reader came back. The app therefore waits for the queue to empty and, if it
// cannot within a bound (the database keeps failing), refuses the switch and says why: the
// reader stays, the edits stay queued and keep retrying, nothing is dropped.

import type { SaveQueue } from './saveQueue'

/** Long enough for a debounced edit and a retry or two; short enough not to look frozen. */
export const SWITCH_WAIT_MS = 5000

/** Null once every edit is written (the switch may go ahead), else why the switch is refused. */
export async function settleBeforeSwitch(saves: SaveQueue, reader: string, waitMs = SWITCH_WAIT_MS): Promise<string | null> {
  if (!saves.dirty) return null
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))
  await Promise.race([saves.flush(), timedOut])
  clearTimeout(timer)
  if (!saves.dirty) return null
  const why = saves.state.kind === 'retrying' ? ` (${saves.state.message})` : ''
  return `${reader}'s last edits are not saved yet${why}. They are kept and still being written; ${reader} stays the reader until they are. Try again in a moment.`
}

/** Whether a failed write's error `code` is final: the backend refused the edit itself, and no
 *  retry can change its answer. Anything else is retried, `reader_changed` included: an edit made
 *  as a reader who is no longer the one reading is kept and written once they are chosen again. */
export function isPermanentRefusal(code: string): boolean {
  return ['refused', 'invalid_argument', 'not_found', 'incomplete'].includes(code)
}
