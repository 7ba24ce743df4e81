// The payloads of the app's commands: the types generated from the Rust types they come from
// (`cases::store::*`, `neurorater_app::state::StartupStatus`, `neurorater_app::error::CommandError`)
// into ./bindings, under the UI's names (a received type is its `_Serialize` shape); and the few
// types that are the UI's own (event payloads, the viewer's marks, `BackendError`'s `ipc` code).

import type {
  CaseSummary_Serialize,
  CaseView_Serialize,
  DiseaseGroup,
  ErrorCode as CommandErrorCode,
  Mark,
  MarkKind,
  Measurement_Serialize,
  Modality,
  Plane,
  ResponseView_Serialize,
  SeriesKind,
  SeriesView,
  Sex,
  SliceRef,
  StartupStatus,
  StudySummary,
  TaskFamily,
  TaskView,
  ToComplete,
  Turn_Serialize,
} from './bindings'

export type {
  DiseaseGroup,
  Mark,
  MarkKind,
  Modality,
  Plane,
  SeriesKind,
  SeriesView,
  Sex,
  SliceRef,
  StartupStatus,
  StudySummary,
  TaskFamily,
  TaskView,
  ToComplete,
}

export type CaseSummary = CaseSummary_Serialize
export type CaseView = CaseView_Serialize
export type Turn = Turn_Serialize
/** What a mark measures (`series_measure`). */
export type Measurement = Measurement_Serialize
/** A response as a rater sees it: blinded, no model name. */
export type ResponseView = ResponseView_Serialize

export interface StartupProgress {
  phase: string
  done: number
  total: number
}

/** A failure's code: one of the backend's (`CommandError`), or the UI's own `ipc`: the IPC call
 * itself failed (e.g. a denied permission). */
export type ErrorCode = CommandErrorCode | 'ipc'

export interface BackendError {
  code: ErrorCode
  message: string
}

/** A slice the model was shown (a task's or a turn's key image): series id, 0-based slice, and
 * optionally where it was shown, for the key-image bar's tooltip. */
export type KeyImageRef = SliceRef & { caption?: string }

/** A mark as the Viewer shows it: `id` is the caller's, `colour` any CSS colour. */
export interface DisplayMark {
  id: string
  mark: Mark
  colour?: string
  label?: string
  selected?: boolean
  /** Show what it measures (distance, ROI statistics) beside it, as a selected mark does; a
   * two-point mark is then drawn as a ruler, not an arrow. */
  measure?: boolean
}

/** Progress of long work the window started (a package read or written): `request` is the
 * window's number for the work, `phase` what it is doing, `done` of `total` steps. */
export interface WorkProgress {
  request: number
  phase: string
  done: number
  total: number
}
