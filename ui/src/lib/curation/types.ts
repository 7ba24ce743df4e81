// The curation types as the backend sends them (`cases/src/curation`), and the small pure helpers
// the curator view builds on.
import type { Mark, SliceRef, TaskFamily } from '../../types'

export interface DifferentialItem {
  diagnosis: string
  supporting: string[]
  opposing: string[]
}

export interface CuratedLesion {
  id: string
  description: string
  /** Patient coordinates (DICOM LPS, mm). */
  marks: Mark[]
  /** The series and slices that show it. */
  shown_on: SliceRef[]
}

export interface TaskTruth {
  task_id: string
  family: TaskFamily
  key_images: SliceRef[]
}

export interface CuratedTruth {
  diagnosis: string
  diagnosis_code?: string
  differential: DifferentialItem[]
  lesions: CuratedLesion[]
  expected_reasoning: string
  difficulty?: number
  tasks: TaskTruth[]
}

export type VersionStatus = 'draft' | 'in_review' | 'final'
export type VersionSource = 'bundle' | 'curator' | 'consensus' | 'import'
export type Decision = 'comment' | 'changes_requested' | 'finalised'

export interface ReviewEntry {
  by: string
  decision: 'submitted' | Decision
  comment: string
  at: string
}

export interface Version {
  version: number
  branch: string
  based_on: number | null
  status: VersionStatus
  source: VersionSource
  author: string | null
  /** null: the bundle's version, not stored until the first curation write. */
  created_at: string | null
  reviews: ReviewEntry[]
  truth: CuratedTruth
}

export interface RevealedTruth {
  study_id: string
  case_id: string
  version: Version
}

export interface Change {
  field: string
  before: unknown
  after: unknown
}

export const STATUS_LABELS: Record<VersionStatus, string> = {
  draft: 'Draft',
  in_review: 'In review',
  final: 'Final',
}

/** Evidence typed one item per line; blank lines dropped. */
export function parseLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
}

/** The next free lesion id: L1, L2, … after the highest used. */
export function nextLesionId(lesions: CuratedLesion[]): string {
  const used = lesions
    .map((l) => /^L(\d+)$/.exec(l.id))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
  return `L${used.length === 0 ? 1 : Math.max(...used) + 1}`
}

/** A diff value as one readable line: text as is, absent as an em dash, anything else as JSON. */
export function showValue(value: unknown): string {
  if (value === null || value === undefined) return '—'
  if (typeof value === 'string') return value
  return JSON.stringify(value)
}

/** The version a new edit starts from: the latest of the main branch (null when there is none). */
export function latestMain(history: Version[]): Version | null {
  const main = history.filter((v) => v.branch === 'main')
  return main.length === 0 ? null : main[main.length - 1]
}
