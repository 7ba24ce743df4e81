// The only module that talks to Tauri. Components call these functions; every failure arrives as
// a `BackendError` with a stable `code` to branch on.

import { invoke } from '@tauri-apps/api/core'
import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import { open, save } from '@tauri-apps/plugin-dialog'
import type { CalibrationHeadline, CalibrationProgress, CalibrationView, ExportFormat } from './lib/calibration/report'
import type {
  BaselineTask,
  BlindTask,
  Change,
  CuratedTruth,
  Decision,
  Disagreement,
  HumanRole,
  RevealedTruth,
  Side,
  Version,
} from './lib/curation/types'
import type {
  BackendError,
  CaseSummary,
  CaseView,
  ErrorCode,
  Plane,
  ResponseView,
  StartupProgress,
  StartupStatus,
  StudySummary,
  WorkProgress,
} from './types'
import type {
  EditAck,
  ImportedPackage,
  LabelAck,
  MergedResults,
  LabelEdit,
  PlanSpec,
  PlanSummary,
  QueueItem,
  Rater,
  RaterRole,
  RatingEdit,
  ReadingItem,
  ResumePoint,
} from './ratingTypes'
import type {
  DiffLine,
  Disagreement as WorkbenchDisagreement,
  GraderOnSplit,
  GraderSpec,
  ItemSideBySide,
  RunOutcome,
  RunProgress,
  StoredSpec,
  VersionDrift,
} from './lib/workbench/types'

const KNOWN_CODES: readonly ErrorCode[] = [
  'invalid_argument',
  'not_found',
  'not_ready',
  'startup_failed',
  'image_unavailable',
  'database',
  'refused',
  'incomplete',
  'export_failed',
  'cancelled',
]

/** Normalises whatever `invoke` rejected with into a `BackendError`. */
export function toBackendError(raw: unknown): BackendError {
  if (typeof raw === 'object' && raw !== null && 'code' in raw && 'message' in raw) {
    const { code, message } = raw as { code: unknown; message: unknown }
    if (typeof code === 'string' && (KNOWN_CODES as readonly string[]).includes(code)) {
      return { code: code as ErrorCode, message: String(message) }
    }
  }
  return { code: 'ipc', message: raw instanceof Error ? raw.message : String(raw) }
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args)
  } catch (raw) {
    throw toBackendError(raw)
  }
}

export const startupStatus = () => call<StartupStatus>('startup_status')

export function onStartupProgress(handler: (progress: StartupProgress) => void): Promise<UnlistenFn> {
  return listen<StartupProgress>('startup-progress', (event) => handler(event.payload))
}

export const listStudies = () => call<StudySummary[]>('list_studies')
export const listCases = (studyId: string) => call<CaseSummary[]>('list_cases', { studyId })
export const openCase = (studyId: string, caseId: string) =>
  call<CaseView>('open_case', { studyId, caseId })
export const listResponses = (taskKey: number) => call<ResponseView[]>('list_responses', { taskKey })

// Curation (docs/curation.md). Every step acts as the current rater. A save carries the version
// it started from; 'refused' means the case moved on (the message names who saved, and when) or
// a rule forbids the step (e.g. reviewing one's own version).
export const curationHistory = (studyId: string, caseId: string) =>
  call<Version[]>('curation_history', { studyId, caseId })
/** `branch` null: main; any other name: the curator's own, independent curation. */
export const curationSaveDraft = (
  studyId: string,
  caseId: string,
  branch: string | null,
  basedOn: number | null,
  truth: CuratedTruth,
) => call<number>('curation_save_draft', { studyId, caseId, branch, basedOn, truth })
export const curationSubmit = (studyId: string, caseId: string, version: number) =>
  call<void>('curation_submit', { studyId, caseId, version })
export const curationReview = (studyId: string, caseId: string, version: number, decision: Decision, comment: string) =>
  call<void>('curation_review', { studyId, caseId, version, decision, comment })
export const curationDiff = (studyId: string, caseId: string, from: number, to: number) =>
  call<Change[]>('curation_diff', { studyId, caseId, from, to })
/** The units on which versions `a` and `b` (two independent curations) disagree. */
export const curationCompare = (studyId: string, caseId: string, a: number, b: number) =>
  call<Disagreement[]>('curation_compare', { studyId, caseId, a, b })
/** Their consensus with the side chosen per disagreement; nothing is saved. 'invalid_argument'
 * names the units still without a side. */
export const curationMerge = (studyId: string, caseId: string, a: number, b: number, choices: Record<string, Side>) =>
  call<CuratedTruth>('curation_merge', { studyId, caseId, a, b, choices })
/** Saves a consensus as a draft of main (source 'consensus'), based on main's latest version. */
export const curationSaveConsensus = (studyId: string, caseId: string, basedOn: number | null, truth: CuratedTruth) =>
  call<number>('curation_save_consensus', { studyId, caseId, basedOn, truth })

// Human-baseline reader mode (docs/curation.md): the current rater answers a task blind.
// 'refused' for a curator, for a rater who has seen the case's model answers, and for a second
// answer to the same task.
export const baselineTasks = (studyId: string) => call<BaselineTask[]>('baseline_tasks', { studyId })
export const baselineBlindTask = (studyId: string, caseId: string, taskId: string) =>
  call<BlindTask>('baseline_blind_task', { studyId, caseId, taskId })
export interface BaselineAnswer {
  role: HumanRole
  yearsExperience: number | null
  diagnosis: string
  /** Ranked, most likely first. */
  differential: string[]
  reasoning: string
  secondsOnTask: number
}
export const baselineSubmit = (studyId: string, caseId: string, taskId: string, answer: BaselineAnswer) =>
  call<number>('baseline_submit', { studyId, caseId, taskId, ...answer })
/** The case's ground truth for the current rater, once they have submitted every rating they
 * hold on that case ('refused' before: it would anchor the ratings still to come). Audited. */
export const revealGroundTruth = (assignmentId: number) =>
  call<RevealedTruth>('reveal_ground_truth', { assignmentId })

/** The series as a NIfTI-1 file in memory, sent as raw bytes (no JSON, no base64). */
export const seriesVolume = (seriesKey: number) => call<ArrayBuffer>('series_volume', { seriesKey })
/** The slice a viewport in `plane` opens on, alone, as a one-slice NIfTI-1: native slice `slice`,
 * or the middle NiiVue shows when null. Empty when the viewport does not show the series' own
 * slices, or the series has one slice: then only the whole series will do. */
export const seriesOpeningSlice = (seriesKey: number, plane: Plane, slice: number | null) =>
  call<ArrayBuffer>('series_opening_slice', { seriesKey, plane, slice })

// Rating (docs/rating.md). Every edit resolves only after it is committed to disk; a rejection is
// a `BackendError` ('refused': the item is submitted or not open yet; 'incomplete': submit lacks
// the fields the message names).
export const listRaters = () => call<Rater[]>('list_raters')
export const createRater = (name: string, role: RaterRole, yearsExperience: number | null) =>
  call<Rater>('create_rater', { name, role, yearsExperience })
export const currentRater = () => call<Rater | null>('current_rater')
export const setCurrentRater = (raterId: number) => call<Rater>('set_current_rater', { raterId })
export const leaveReading = () => call<void>('leave_reading')
export const createAssignmentPlan = (raterId: number, spec: PlanSpec) =>
  call<PlanSummary>('create_assignment_plan', { raterId, spec })
/** On the demo study: gives the rater a queue (plan "demo:<name>", seed 1) unless they have one. */
export const ensureDemoQueue = (raterId: number) =>
  call<PlanSummary | null>('ensure_demo_queue', { raterId })
export const readingQueue = (raterId: number, studyId: string) =>
  call<QueueItem[]>('reading_queue', { raterId, studyId })
export const readingItem = (raterId: number, assignment: number) =>
  call<ReadingItem>('reading_item', { raterId, assignment })
export const saveRating = (raterId: number, assignment: number, edit: RatingEdit) =>
  call<EditAck>('save_rating', { raterId, assignment, edit })
export const addErrorLabel = (raterId: number, assignment: number, label: LabelEdit) =>
  call<LabelAck>('add_error_label', { raterId, assignment, label })
export const updateErrorLabel = (raterId: number, labelId: number, label: LabelEdit) =>
  call<EditAck>('update_error_label', { raterId, labelId, label })
export const deleteErrorLabel = (raterId: number, labelId: number) =>
  call<EditAck>('delete_error_label', { raterId, labelId })
export const submitRating = (raterId: number, assignment: number) =>
  call<EditAck>('submit_rating', { raterId, assignment })
export const reopenRating = (raterId: number, assignment: number) =>
  call<EditAck>('reopen_rating', { raterId, assignment })
export const setPosition = (raterId: number, assignment: number) =>
  call<void>('set_position', { raterId, assignment })
export const resumePosition = (raterId: number) => call<ResumePoint | null>('resume_position', { raterId })

// Calibration (docs/calibration.md, "In the app").
export const listGraders = (studyId: string) => call<string[]>('list_graders', { studyId })
/** Builds the report off the UI thread: `onCalibrationHeadline` receives the verdict's dimension
 * first, `onCalibrationProgress` follows the bootstrap of the rest, and the promise gives the whole
 * report (at once when it was kept from an earlier build on the same data). `request` is the
 * caller's number for this build, echoed in its events; a newer build cancels this one, which then
 * rejects with `cancelled`. */
export const calibrationReport = (
  studyId: string,
  grader: string,
  request: number,
  options: { seed?: number; resamples?: number; bar?: number; margin?: number; excludedRaters?: string[] } = {},
) =>
  call<CalibrationView>('calibration_report', { studyId, grader, request, options })
/** Stops the report being built; whether one was. */
export const cancelCalibrationReport = () => call<boolean>('cancel_calibration_report')
export function onCalibrationProgress(handler: (progress: CalibrationProgress) => void): Promise<UnlistenFn> {
  return listen<CalibrationProgress>('calibration-progress', (event) => handler(event.payload))
}
export function onCalibrationHeadline(handler: (headline: CalibrationHeadline) => void): Promise<UnlistenFn> {
  return listen<CalibrationHeadline>('calibration-headline', (event) => handler(event.payload))
}
/** Asks where to save (the native dialog); null when the user cancels. */
export async function chooseExportPath(format: ExportFormat): Promise<string | null> {
  const filters =
    format === 'csv' ? [] : [{ name: format === 'html' ? 'HTML report' : 'JSON report', extensions: [format] }]
  const chosen = await save({
    title: format === 'csv' ? 'Folder to create for the CSV tables' : 'Save the calibration report',
    defaultPath: format === 'csv' ? 'calibration-tables' : `calibration-report.${format}`,
    filters,
  })
  return chosen ?? null
}
/** Writes the report on screen to `path` (a CSV export creates a folder there); the files written. */
export const exportCalibrationReport = (format: ExportFormat, path: string) =>
  call<string[]>('export_calibration_report', { format, path })

// Multi-site studies (docs/multisite.md): the remote rater's import and export, the lead's merge.
/** Asks for one existing package file (the native open dialog); null when the user cancels. */
async function chooseTarToOpen(title: string, kind: string): Promise<string | null> {
  const chosen = await open({ title, multiple: false, directory: false, filters: [{ name: kind, extensions: ['tar'] }] })
  return typeof chosen === 'string' ? chosen : null
}
/** Asks which rater package to import; null when the user cancels. */
export const choosePackageToImport = () => chooseTarToOpen('Import a rater package', 'Rater package')
/** Asks for a site's results package to merge; null when the user cancels. */
export const chooseResultsToMerge = () => chooseTarToOpen('Merge a results package', 'Results package')
/** Asks where to save the results package (the native save dialog); null when the user cancels. */
export async function chooseResultsPath(): Promise<string | null> {
  const chosen = await save({
    title: 'Export my results',
    defaultPath: 'my-results.tar',
    filters: [{ name: 'Results package', extensions: ['tar'] }],
  })
  return chosen ?? null
}
// Each package action reports `package-progress` events with the caller's `request` number and
// can be cancelled until it writes (`cancelPackageAction`; the action then rejects with `cancelled`).
export const importRaterPackage = (path: string, request = 0) =>
  call<ImportedPackage>('import_rater_package', { path, request })
/** The study lead's side: refused ('refused') while a rater reads blinded here. */
export const mergeResultsPackage = (path: string, request = 0) =>
  call<MergedResults>('merge_results_package', { path, request })
/** The file written; `packageId` only when the database holds several rater packages. */
export const exportResultsPackage = (path: string, packageId: string | null = null, request = 0) =>
  call<string>('export_results_package', { path, package: packageId, request })
/** Stops the package action under way before it writes; whether one was running. */
export const cancelPackageAction = () => call<boolean>('cancel_package_action')
export function onPackageProgress(handler: (progress: WorkProgress) => void): Promise<UnlistenFn> {
  return listen<WorkProgress>('package-progress', (event) => handler(event.payload))
}

// The grader workbench (docs/runs.md, "In the app"): refused ('refused') while a rater reads blinded.
export const workbenchVersions = () => call<StoredSpec[]>('workbench_versions')
/** Adds a spec from its TOML text (the spec file of `neurorater grade`); `model` for `respond`. */
export const workbenchAddSpec = (toml: string, model = false) => call<GraderSpec>('workbench_add_spec', { toml, model })
/** A new version: `base` with `prompt`, under a new `name` (a used name is refused). */
export const workbenchNewVersion = (base: string, name: string, prompt: string) =>
  call<GraderSpec>('workbench_new_version', { base, name, prompt })
export const workbenchPromptDiff = (before: string, after: string) =>
  call<DiffLine[]>('workbench_prompt_diff', { before, after })
/** Development agreement; test agreement only once the version is confirmed. */
export const workbenchSplit = (studyId: string, grader: string) =>
  call<GraderOnSplit>('workbench_split', { studyId, grader })
/** Confirms the version (audited); its test agreement opens. */
export const workbenchConfirm = (studyId: string, grader: string) =>
  call<GraderOnSplit>('workbench_confirm', { studyId, grader })
export const workbenchDisagreements = (studyId: string, grader: string) =>
  call<WorkbenchDisagreement[]>('workbench_disagreements', { studyId, grader })
export const workbenchItem = (grader: string, response: number) =>
  call<ItemSideBySide>('workbench_item', { grader, response })
export const workbenchDrift = (studyId: string, before: string, after: string) =>
  call<VersionDrift>('workbench_drift', { studyId, before, after })
/** Runs the stored grader (or with `samples` the model) to the end; `onRunProgress` follows it. */
export const workbenchRun = (name: string, samples: number | null = null) =>
  call<RunOutcome>('workbench_run', { name, samples })
export const workbenchCancelRun = () => call<boolean>('workbench_cancel_run')
export function onRunProgress(handler: (progress: RunProgress) => void): Promise<UnlistenFn> {
  return listen<RunProgress>('run-progress', (event) => handler(event.payload))
}
