// The curation types as the backend sends them (`cases/src/curation`): the types generated into
// ../../bindings under the UI's names (a received type is its `_Serialize` shape); and the small pure
// helpers the curator view builds on.
import type {
  Change,
  CuratedLesion_Serialize,
  CuratedTruth_Serialize,
  Decision,
  Disagreement_Serialize,
  DifferentialItem_Serialize,
  BaselineState,
  BaselineTask,
  BlindTask,
  HumanRole,
  Side,
  ReviewEntry,
  RevealedTruth_Serialize,
  TaskTruth_Serialize,
  Version_Serialize,
  VersionSource,
  VersionStatus,
} from '../../bindings'

export type {
  BaselineState,
  BaselineTask,
  BlindTask,
  Change,
  Decision,
  HumanRole,
  ReviewEntry,
  Side,
  VersionSource,
  VersionStatus,
}

export type DifferentialItem = DifferentialItem_Serialize
export type CuratedLesion = CuratedLesion_Serialize
export type TaskTruth = TaskTruth_Serialize
export type CuratedTruth = CuratedTruth_Serialize
export type Version = Version_Serialize
export type RevealedTruth = RevealedTruth_Serialize
/** A unit (`diagnosis`, `differential`, `lesions[L2]`, `tasks[t1]` …) on which two curations
 * differ; `null` on a side means it lacks the unit. */
export type Disagreement = Disagreement_Serialize

export const STATUS_LABELS: Record<VersionStatus, string> = {
  draft: 'Draft',
  in_review: 'In review',
  final: 'Final',
}

/** A version's status as shown: a final that no second curator reviewed here says so. */
export function statusLabel(version: Pick<Version, 'status' | 'imported_final'>): string {
  return version.imported_final ? 'Final (imported, not reviewed here)' : STATUS_LABELS[version.status]
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

// Two independent curations: `cases/src/curation/diff.rs`.


/** The latest version of each branch other than main: the independent curations to compare. */
export function latestOfOtherBranches(history: Version[]): Version[] {
  const latest = new Map<string, Version>()
  for (const v of history) if (v.branch !== 'main') latest.set(v.branch, v)
  return [...latest.values()].sort((x, y) => x.version - y.version)
}

/** A branch name for a curator's own curation: their name as a lower-case slug. */
export function branchFor(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return slug === '' || slug === 'main' ? 'curation' : slug.slice(0, 60)
}

/** The latest version saved on `branch` itself (null for a curation not saved yet): what the
 * form's heading names while that branch is worked on. */
export function latestSavedOn(history: Version[], branch: string): Version | null {
  return history.filter((v) => v.branch === branch).at(-1) ?? null
}

/** The number the next saved version of a case takes (versions count across every branch). */
export function nextVersionNumber(history: Version[]): number {
  return history.reduce((highest, v) => Math.max(highest, v.version), 0) + 1
}

/** The version an edit of `branch` starts from: its latest, or for a new branch main's latest. */
export function latestOn(history: Version[], branch: string): Version | null {
  const on = history.filter((v) => v.branch === branch)
  return on.length > 0 ? on[on.length - 1] : latestMain(history)
}

/** One side of a disagreement in a line: a lesion by its description and mark count, the
 * differential by its ranked names, a task by family and key images, absent as "(none)". */
export function showSide(unit: string, value: unknown): string {
  if (value === null || value === undefined) return '(none)'
  if (unit.startsWith('lesions[')) {
    const lesion = value as CuratedLesion
    return `${lesion.description} · ${lesion.marks.length} mark(s)`
  }
  if (unit === 'differential') {
    const items = value as DifferentialItem[]
    return items.length === 0 ? '(empty)' : items.map((d, i) => `${i + 1}. ${d.diagnosis}`).join('  ')
  }
  if (unit.startsWith('tasks[')) {
    const task = value as TaskTruth
    return `${task.family.replaceAll('_', ' ')} · key images ${task.key_images.map((k) => `${k.series} ${k.slice + 1}`).join(', ')}`
  }
  return showValue(value)
}

// Human-baseline reader mode: `cases/src/curation/baseline.rs`.

export const HUMAN_ROLE_LABELS: Record<HumanRole, string> = {
  medical_student: 'Medical student',
  resident: 'Resident',
  neurologist: 'Neurologist',
  neuroradiologist: 'Neuroradiologist',
}

/** The baseline role a rater answers in by default: their own, a curator's none. */
export function defaultHumanRole(raterRole: string): HumanRole {
  return raterRole === 'neurologist' || raterRole === 'neuroradiologist' || raterRole === 'resident'
    ? raterRole
    : 'medical_student'
}
