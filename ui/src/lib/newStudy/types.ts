// The shapes of "New study…" (src-tauri/src/commands/new_study.rs, cases::app::new_study).
import type { DiseaseGroup, Modality, Sex, ToComplete } from '../../types'

export type TaskFamily = 'differential_diagnosis' | 'lesion_identification' | 'rationale_generation'

export interface DraftSeries {
  id: string
  label: string
  /** The label is the scan's guess, not yet the lead's. */
  guessed: boolean
  /** What the guess was read from (SeriesDescription, DiffusionBValue …). */
  basis: string | null
  slices: number
}

export interface DraftTask {
  id: string
  family: TaskFamily
  prompt: string
}

export interface DraftCase {
  id: string
  modality: Modality
  age: number
  sex: Sex
  disease_group: DiseaseGroup
  clinical_note: string
  series: DraftSeries[]
  tasks: DraftTask[]
  to_complete: ToComplete[]
}

export interface DraftView {
  study_id: string
  /** Where the bundle will be once imported. */
  bundle: string
  files_found: number
  skipped: { path: string; reason: string }[]
  notes: string[]
  responses: number
  cases: DraftCase[]
}

/** One `FILE:LINE: field: message` of the problems table. */
export interface ProblemRow {
  file: string
  line: number | null
  field: string
  message: string
}

export type ScanReply =
  | { outcome: 'drafted'; draft: DraftView }
  | { outcome: 'cancelled' }
  | { outcome: 'refused'; problems: ProblemRow[] }

export interface ImportSummary {
  study_id: string
  cases: number
  series: number
  images: number
  tasks: number
  responses_added: number
}

export type ImportReply = { outcome: 'imported'; summary: ImportSummary } | { outcome: 'refused'; problems: ProblemRow[] }

export interface NewStudyProgress {
  phase: string
  done: number
  total: number
}

export interface CaseEdit {
  disease_group: DiseaseGroup
  clinical_note: string
  tasks: DraftTask[]
}

export interface ResponsesArg {
  path: string
  map: string
  model: string | null
}
