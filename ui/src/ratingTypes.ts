// The payloads of the rating commands, written by hand to mirror `cases::rating` (Rust). Every
// payload a rater receives is blinded in the backend: no model name, no sample number, no
// response id, no grader output, no other rater's work. See docs/rating.md.

import type { Mark, SeriesKind, SliceRef, TaskFamily, Turn, Modality, Sex } from './types'

export type RaterRole = 'neuroradiologist' | 'neurologist' | 'resident' | 'curator'

export interface Rater {
  id: number
  name: string
  role: RaterRole
  years_experience: number | null
}

/** What `create_assignment_plan` takes. Shares are in [0, 1]. */
export interface PlanSpec {
  study_id: string
  name: string
  /** The queues are reproducible from it; at most Number.MAX_SAFE_INTEGER. */
  seed: number
  /** Rater ids; at least one. */
  raters: number[]
  /** Share of the study's responses read by every rater (inter-rater agreement). */
  overlap_share: number
  /** First reads per rater, overlap included; null: every response is assigned. */
  responses_per_rater: number | null
  /** Share of each rater's first reads read a second time, at the end of the queue. */
  repeat_share: number
  /** A repeat read opens this many days after the plan was created. */
  repeat_after_days: number
  /** Each rater's reads balanced across these strata; the overlap is drawn per stratum. */
  stratify_by: StratifyBy[]
}

export type StratifyBy = 'model' | 'sample' | 'task_family'

/** What `top_up_assignment_plan` takes: raters joining the plan; responses added since are dealt. */
export interface TopUpSpec {
  study_id: string
  plan: string
  new_raters: number[]
}

export interface PlanRaterSummary {
  rater_id: number
  rater: string
  first_reads: number
  overlap: number
  repeats: number
}

export interface PlanSummary {
  plan_id: number
  study_id: string
  name: string
  seed: number
  created_at: string
  n_responses: number
  n_overlap: number
  /** Responses no rater reads (only when responses_per_rater caps the queues). */
  n_unassigned: number
  raters: PlanRaterSummary[]
  responses_per_rater: number | null
  stratify_by: StratifyBy[]
  /** How many times the plan was topped up. */
  top_ups: number
}

export interface TopUpSummary {
  plan: PlanSummary
  /** Responses the plan had not dealt before this top-up. */
  n_new_responses: number
  /** Per rater, the reads this top-up appended to their queue. */
  added: PlanRaterSummary[]
}

export type RatingStatus = 'draft' | 'submitted'
export type ItemStatus = 'not_started' | RatingStatus

export interface QueueItem {
  assignment: number
  /** 1-based place in this rater's queue for the study. */
  position: number
  total: number
  status: ItemStatus
  available: boolean
  /** YYYY-MM-DD the item opens on (repeat reads), else null. */
  opens_on: string | null
}

export interface ReadingCase {
  /** A pseudonym from the bundle. */
  case_id: string
  age: number
  sex: Sex
  modality: Modality
  ehr: Record<string, unknown>
  clinical_note: string
}

export interface ReadingTask {
  prompt: string
  family: TaskFamily
  level: number
  key_images: SliceRef[]
}

export interface ReadingSeries {
  /** The store's key, for `series_volume`. */
  key: number
  series_id: string
  label: string
  kind: SeriesKind
  n_images: number
}

export interface ReadingResponse {
  answer: string
  rationale: string | null
  /** A multi-turn consultation, shown as a dialogue. */
  turns: Turn[] | null
}

export interface ScaleLevel {
  value: number
  descriptor: string
}

export interface Scale {
  label?: string
  min: number
  max: number
  step: number
  levels: ScaleLevel[]
}

export interface RubricDimension extends Scale {
  id: string
  label: string
  /** What the dimension asks the rater to judge, shown beside its name. */
  description?: string | null
  /** The task families the dimension is scored on; absent or null: every family. */
  families?: TaskFamily[] | null
  /** A rater may mark it "not applicable" instead of scoring it. */
  allow_not_applicable?: boolean
}

export interface Rubric {
  overall: Scale
  dimensions: RubricDimension[]
}

/** Where an error of a category is pointed at; `image` categories need a mark. */
export type Anchor = 'image' | 'text' | 'text_image' | 'text_series'

export interface TaxonomyCategory {
  code: string
  name: string
  definition: string
  anchor: Anchor
}

export type Correctness = 'correct' | 'partly' | 'incorrect'

/** Which text a label's span lies in: the answer, the rationale, or one turn of a consultation. */
export type SpanText = 'answer' | 'rationale' | 'turn'

export interface ErrorLabelView {
  id: number
  category: string
  /** 1 minor, 2 moderate, 3 major. */
  severity: number
  /** [start, end) in UTF-16 code units of the text `text` names (what JS string indices are). */
  span: [number, number] | null
  /** The text the span lies in ('rationale' for a label without a span). */
  text: SpanText
  /** With text 'turn', the turn's index in the response's turns. */
  turn: number | null
  mark: Mark | null
  comment: string
}

export interface RatingView {
  status: RatingStatus
  overall: number | null
  dimensions: Record<string, number>
  /** Dimensions marked "not applicable" (a state of their own, never a score). */
  not_applicable: string[]
  correctness: Correctness | null
  /** 1–5. */
  confidence: number | null
  comment: string
  seconds_on_task: number
  updated_at: string
  submitted_at: string | null
  labels: ErrorLabelView[]
}

/** Everything the reading screen shows for one assignment, and nothing that unblinds. A repeat
 * read that is not open yet is refused ('refused'), so an item is always readable. */
export interface ReadingItem {
  assignment: number
  position: number
  total: number
  case: ReadingCase
  task: ReadingTask
  series: ReadingSeries[]
  response: ReadingResponse
  rubric: Rubric
  taxonomy: TaxonomyCategory[]
  /** This rater's own rating of this read, null before the first edit. */
  rating: RatingView | null
  /** When this rater saw the case's ground truth; the rating is locked from then on (no reopen). */
  ground_truth_seen_at: string | null
}

/** The whole editable state of a rating; each save replaces the draft. */
export interface RatingEdit {
  overall: number | null
  dimensions: Record<string, number>
  not_applicable: string[]
  correctness: Correctness | null
  confidence: number | null
  comment: string
  /** Total time on task so far, seconds (not an increment). */
  seconds_on_task: number
}

export interface LabelEdit {
  category: string
  severity: number
  span: [number, number] | null
  text: SpanText
  turn: number | null
  mark: Mark | null
  comment: string
}

/** Sent back once an edit is committed to disk (WAL, synchronous=FULL). */
export interface EditAck {
  saved_at: string
  status: RatingStatus
}

export interface LabelAck extends EditAck {
  label_id: number
}

export interface ResumePoint {
  study_id: string
  assignment: number
}

/** A rater package imported into this database (`import_rater_package`). */
/** What merging a results package did (`merge_results_package`). */
export interface MergedResults {
  package_id: string
  rater: string
  site: string
  added: number
  updated: number
  unchanged: number
  /** Each as `file:line: field: why`; what they name was kept as it is. */
  conflicts: string[]
}

export interface ImportedPackage {
  package_id: string
  study_id: string
  rater: string
  site: string
  items: number
  /** The same package was imported before; nothing changed. */
  already_imported: boolean
  /** The study was read here already: the package (the team server's) added `items` to its queue. */
  top_up: boolean
}
