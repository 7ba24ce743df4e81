// Curation edits not yet saved as a version. Saving adds a version (reviewed, diffed, audited), so
// the form is not saved on every keystroke; instead what is typed is kept here, per curator, case
// and branch, from the first change until it is saved or discarded. Leaving a case, switching to
// another screen or another branch and coming back brings the edits back with the version they
// started from (a save is still refused if the case moved on meanwhile), and the case list marks
// every case that holds some.
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

export class UnsavedEdits {
  private edits = new Map<string, UnsavedEdit>()

  /** Keeps the form as it is now if it differs from the version it started from, else forgets it. */
  record(where: Where, edit: UnsavedEdit, start: CuratedTruth) {
    if (edit.consensusOf === null && sameTruth(edit.truth, start)) this.edits.delete(key(where))
    else this.edits.set(key(where), structuredClone(edit))
  }

  find(where: Where): UnsavedEdit | null {
    const found = this.edits.get(key(where))
    return found ? structuredClone(found) : null
  }

  forget(where: Where) {
    this.edits.delete(key(where))
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
