// Curation edits not yet saved as a version. Saving adds a version (reviewed, diffed, audited), so
// the form is not saved on every keystroke; instead what is typed is kept here, per curator, case
// and branch, from the first change until it is saved or discarded. Leaving a case, switching to
// another screen or another branch and coming back brings the edits back with the version they
// started from (a save is still refused if the case moved on meanwhile), and the case list marks
// every case that holds some. Kept in a file beside the database too (`keepIn`), rewritten whole
// after every change, so that closing the window, quitting or a crash loses nothing: the next
// start brings the edits back (issue 41 finding 2).
import type { CuratedTruth } from './types'

export interface UnsavedEdit {
  truth: CuratedTruth
  /** The version the edit started from, as a save must name it. */
  basedOn: number | null
  /** Set when the form holds a merge of two versions, to be saved as a consensus. */
  consensusOf: { a: number; b: number } | null
}

export interface Where {
  curator: string
  studyId: string
  caseId: string
  branch: string
}

const key = (w: Where) => JSON.stringify([w.curator, w.studyId, w.caseId, w.branch])

/** Where the edits outlive the window: the backend's draft file of this database. */
export interface DraftFile {
  load(): Promise<string | null>
  /** Replaces the file with `text` (every edit, as JSON); null removes it. */
  keep(text: string | null): Promise<void>
}

export class UnsavedEdits {
  private edits = new Map<string, UnsavedEdit>()
  private file: DraftFile | null = null
  private restoring: Promise<void> | null = null
  private writing: Promise<void> | null = null
  private pending = false
  /** Told when a write to the file failed (the edits stay here and the next change writes again). */
  onKeepFailed: (error: unknown) => void = () => {}

  /** From now on every change is written to `file` too, and the edits it kept when the window last
   * closed are brought back (an edit made here since wins). Once per app lifetime: a later call
   * waits for the first; a failed load is tried again by the next call. */
  keepIn(file: DraftFile): Promise<void> {
    this.restoring ??= (async () => {
      const text = await file.load()
      if (text) {
        for (const [k, edit] of JSON.parse(text) as [string, UnsavedEdit][]) {
          if (!this.edits.has(k)) this.edits.set(k, edit)
        }
      }
      this.file = file
      // Edits made before the file was read are in it from now on too.
      if (this.edits.size > 0) this.changed()
    })().catch((error) => {
      this.restoring = null
      throw error
    })
    return this.restoring
  }

  /** Resolves once every change so far is in the file. */
  async written(): Promise<void> {
    while (this.writing) await this.writing
  }

  /** Keeps the form as it is now if it differs from the version it started from, else forgets it. */
  record(where: Where, edit: UnsavedEdit, start: CuratedTruth) {
    const k = key(where)
    const before = JSON.stringify(this.edits.get(k) ?? null)
    if (edit.consensusOf === null && sameTruth(edit.truth, start)) this.edits.delete(k)
    else this.edits.set(k, structuredClone(edit))
    if (JSON.stringify(this.edits.get(k) ?? null) !== before) this.changed()
  }

  find(where: Where): UnsavedEdit | null {
    const found = this.edits.get(key(where))
    return found ? structuredClone(found) : null
  }

  forget(where: Where) {
    if (this.edits.delete(key(where))) this.changed()
  }

  /** Writes the edits as they are now, one write at a time, the latest last: a burst of changes
   * while a write is under way becomes one more write. */
  private changed() {
    if (!this.file) return
    this.pending = true
    if (this.writing) return
    const file = this.file
    this.writing = (async () => {
      while (this.pending) {
        this.pending = false
        const text = this.edits.size === 0 ? null : JSON.stringify([...this.edits])
        try {
          await file.keep(text)
        } catch (error) {
          this.onKeepFailed(error)
        }
      }
      this.writing = null
    })()
  }

  /** The cases of a study on which this curator has unsaved edits (on any branch). */
  casesWithEdits(curator: string, studyId: string): Set<string> {
    const cases = new Set<string>()
    for (const k of this.edits.keys()) {
      const [c, s, caseId] = JSON.parse(k) as string[]
      if (c === curator && s === studyId) cases.add(caseId)
    }
    return cases
  }
}

/** Equal as a save would store them: an emptied optional field is the same as an absent one. */
export function sameTruth(a: CuratedTruth, b: CuratedTruth): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** One for the app's lifetime: the curator's screen is rebuilt when it is opened again. */
export const unsavedEdits = new UnsavedEdits()
