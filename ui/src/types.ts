// The payloads of the app's commands, written by hand to mirror the Rust types they come from
// (`cases::store::*`, `neurorater_app::state::StartupStatus`, `neurorater_app::error::CommandError`).
// `src/payloads.test.ts` checks these shapes against JSON the Rust side actually produced.

export type DiseaseGroup =
  | 'multiple_sclerosis'
  | 'stroke'
  | 'tumour'
  | 'other_abnormality'
  | 'normal'
export type Modality = 'MR' | 'CT'
export type Sex = 'F' | 'M' | 'O'
export type SeriesKind = 'dicom' | 'nifti' | 'key_images'
export type TaskFamily = 'differential_diagnosis' | 'lesion_identification' | 'rationale_generation'

export interface StudySummary {
  id: string
  title: string
  description: string
  n_cases: number
  n_tasks: number
  n_responses: number
}

export interface CaseSummary {
  /** The case id; for a blinded reader a pseudonymous code (`case-…`) instead. */
  id: string
  /** null for a blinded reader: the group is what they are asked to recognise. */
  disease_group: DiseaseGroup | null
  modality: Modality
  age: number
  sex: Sex
  series_labels: string[]
  n_tasks: number
  n_responses: number
  /** What a curator still has to complete (a scaffolded case); empty when finished. */
  to_complete: ToComplete[]
}

export type ToComplete =
  | 'disease_group'
  | 'tasks'
  | 'clinical_note'
  | 'age'
  | 'series_labels'
  | 'burned_in_annotation'

export interface SeriesView {
  key: number
  id: string
  label: string
  kind: SeriesKind
  n_images: number
}

export interface SliceRef {
  series: string
  slice: number
}

export interface TaskView {
  key: number
  id: string
  family: TaskFamily
  level: number
  prompt: string
  key_images: SliceRef[]
}

export interface CaseView extends CaseSummary {
  ehr: Record<string, unknown>
  clinical_note: string
  series: SeriesView[]
  tasks: TaskView[]
}

export interface Turn {
  role: string
  content: string
  /** Slices shown with this turn (a follow-up that brings another series or a new scan). */
  key_images?: SliceRef[]
}

/** A response as a rater sees it: blinded, no model name. */
export interface ResponseView {
  key: number
  answer: string
  rationale: string | null
  turns: Turn[] | null
}

export type StartupStatus =
  | { state: 'preparing'; phase: string; done: number; total: number }
  | { state: 'ready' }
  | { state: 'failed'; error: BackendError }

export interface StartupProgress {
  phase: string
  done: number
  total: number
}

export type ErrorCode =
  | 'invalid_argument'
  | 'not_found'
  | 'not_ready'
  | 'startup_failed'
  | 'image_unavailable'
  | 'database'
  /** A rating edit the item's state forbids (submitted, not open yet, assigned elsewhere). */
  | 'refused'
  /** Submit without every required field; the message names the missing ones. */
  | 'incomplete'
  /** An exported file could not be written where the user chose; the message names it. */
  | 'export_failed'
  /** Long work the user cancelled, or replaced with newer work, stopped; nothing was written. */
  | 'cancelled'
  /** An edit made as a reader who is no longer the one reading here: not written; kept by the
   *  save queue until that reader is chosen again. */
  | 'reader_changed'
  /** The team server cannot be reached (network, server down): try again later. */
  | 'server_unreachable'
  /** No session with the team server, or it ended: log in again. */
  | 'logged_out'
  /** Not from the backend: the IPC call itself failed (e.g. a denied permission). */
  | 'ipc'

export interface BackendError {
  code: ErrorCode
  message: string
}

/** A mark on the images, in patient coordinates (DICOM LPS, mm); see `cases/src/marks.rs`. */
export type MarkKind = "point" | "arrow" | "ellipse" | "freehand";
export type Plane = "axial" | "coronal" | "sagittal";
export interface Mark {
  series_id: string;
  kind: MarkKind;
  plane: Plane;
  /** point: 1; arrow: tail, head; ellipse: centre and the ends of its two semi-axes; freehand: ≥ 3. */
  points_lps_mm: [number, number, number][];
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
}

/** Progress of long work the window started (a package read or written): `request` is the
 * window's number for the work, `phase` what it is doing, `done` of `total` steps. */
export interface WorkProgress {
  request: number
  phase: string
  done: number
  total: number
}
