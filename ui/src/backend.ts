// The only module the UI talks to Tauri through. Components call these functions; every failure
// arrives as a `BackendError` with a stable `code` to branch on. The commands themselves, their
// argument names and types, are generated from the Rust commands into `./bindings` (never edited
// by hand); this module gives them the UI's names and defaults.

import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import { open, save } from '@tauri-apps/plugin-dialog'
import {
  commands,
  type CaseFacts,
  type CodeKind,
  type InviteRequest,
  type TopUpRequest,
  type Resolution,
  type Rubric_Deserialize,
  type SyncStatus_Serialize as SyncStatus,
  type TeamNews_Serialize as TeamNews,
} from './bindings'
import type { CalibrationHeadline, CalibrationProgress, CalibrationView, ExportFormat } from './lib/calibration/report'
import type {
  CuratedTruth,
  Decision,
  HumanRole,
  Side,
} from './lib/curation/types'
import type {
  BackendError,
  ErrorCode,
  Mark,
  Plane,
  StartupProgress,
  WorkProgress,
} from './types'
import type { LabelEdit, PlanSpec, TopUpSpec, RaterRole, RatingEdit } from './ratingTypes'
import type { MetricsProgress, RunProgress } from './lib/workbench/types'
import type {
  CaseEdit,
  NewStudyProgress,
  ResponsesArg,
} from './lib/newStudy/types'

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
  'reader_changed',
  'server_unreachable',
  'logged_out',
]

/** Normalises whatever `invoke` rejected with into a `BackendError`. */
export function toBackendError(raw: unknown): BackendError {
  if (typeof raw === 'object' && raw !== null && 'code' in raw && 'message' in raw) {
    const { code, message } = raw as { code: unknown; message: unknown }
    if (typeof code === 'string' && (KNOWN_CODES as readonly string[]).includes(code)) {
      return { code: code as ErrorCode, message: String(message) }
    }
  }
  const message = raw instanceof Error ? raw.message : String(raw)
  // An argument the command's Rust types refuse (an id outside the rule, a key below 1) is turned
  // away by Tauri before the command runs, as a bare string naming the argument and the rule.
  if (message.startsWith('invalid args `')) return { code: 'invalid_argument', message }
  return { code: 'ipc', message }
}

/** Awaits a generated command (`./bindings`): its value, typed as the command's generated result,
 * or its failure as a `BackendError`. */
async function call<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending
  } catch (raw) {
    throw toBackendError(raw)
  }
}

/** `call` for the one command whose result the UI still types by hand (`T`, not checked against
 * the generated result): the calibration report, whose statistics the generated types give as
 * `number | null` throughout (docs/app.md, "Payload types"). */
const callAs = <T>(pending: Promise<unknown>): Promise<T> => call(pending) as Promise<T>

export const startupStatus = () => call(commands.startupStatus())

export function onStartupProgress(handler: (progress: StartupProgress) => void): Promise<UnlistenFn> {
  return listen<StartupProgress>('startup-progress', (event) => handler(event.payload))
}

export const listStudies = () => call(commands.listStudies())
export const listCases = (studyId: string) => call(commands.listCases(studyId))
/** The study lead's disease group and clinical note for a case after import (commands/case_facts.rs). */
export const editCaseFacts = (studyId: string, caseId: string, facts: CaseFacts) =>
  call(commands.editCaseFacts(studyId, caseId, facts))
export const openCase = (studyId: string, caseId: string) =>
  call(commands.openCase(studyId, caseId))
export const listResponses = (taskKey: number) => call(commands.listResponses(taskKey))

// Curation (docs/curation.md). Every step acts as the current rater. A save carries the version
// it started from; 'refused' means the case moved on (the message names who saved, and when) or
// a rule forbids the step (e.g. reviewing one's own version).
/** Unsaved curation edits kept beside the database (commands/drafts.rs): they outlive the window. */
export const curationDraftFile = {
  load: () => call(commands.windowDraftLoad('curation')),
  keep: async (text: string | null) => void (await call(commands.windowDraftKeep('curation', text))),
}
export const curationHistory = (studyId: string, caseId: string) =>
  call(commands.curationHistory(studyId, caseId))
/** `branch` null: main; any other name: the curator's own, independent curation. */
export const curationSaveDraft = (
  studyId: string,
  caseId: string,
  branch: string | null,
  basedOn: number | null,
  truth: CuratedTruth,
) => call(commands.curationSaveDraft(studyId, caseId, branch, basedOn, truth))
export const curationSubmit = (studyId: string, caseId: string, version: number) =>
  call(commands.curationSubmit(studyId, caseId, version))
export const curationReview = (studyId: string, caseId: string, version: number, decision: Decision, comment: string) =>
  call(commands.curationReview(studyId, caseId, version, decision, comment))
export const curationDiff = (studyId: string, caseId: string, from: number, to: number) =>
  call(commands.curationDiff(studyId, caseId, from, to))
/** The units on which versions `a` and `b` (two independent curations) disagree. */
export const curationCompare = (studyId: string, caseId: string, a: number, b: number) =>
  call(commands.curationCompare(studyId, caseId, a, b))
/** Their consensus with the side chosen per disagreement; nothing is saved. 'invalid_argument'
 * names the units still without a side. */
export const curationMerge = (studyId: string, caseId: string, a: number, b: number, choices: Record<string, Side>) =>
  call(commands.curationMerge(studyId, caseId, a, b, choices))
/** Saves a consensus as a draft of main (source 'consensus'), based on main's latest version. */
export const curationSaveConsensus = (studyId: string, caseId: string, basedOn: number | null, truth: CuratedTruth) =>
  call(commands.curationSaveConsensus(studyId, caseId, basedOn, truth))

// Human-baseline reader mode (docs/curation.md): the current rater answers a task blind.
// 'refused' for a curator, for a rater who has seen the case's model answers, and for a second
// answer to the same task.
export const baselineTasks = (studyId: string) => call(commands.baselineTasks(studyId))
export const baselineBlindTask = (studyId: string, caseId: string, taskId: string) =>
  call(commands.baselineBlindTask(studyId, caseId, taskId))
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
  call(commands.baselineSubmit(studyId, caseId, taskId, answer.role, answer.yearsExperience, answer.diagnosis, answer.differential, answer.reasoning, answer.secondsOnTask))
/** The case's ground truth for the current rater, once they have submitted every rating they
 * hold on that case ('refused' before: it would anchor the ratings still to come). Audited. */
export const revealGroundTruth = (assignmentId: number) =>
  call(commands.revealGroundTruth(assignmentId))

/** The series as a NIfTI-1 file in memory, sent as raw bytes (no JSON, no base64). */
export const seriesVolume = (seriesKey: number) => call(commands.seriesVolume(seriesKey))
/** The slice a viewport in `plane` opens on, alone, as a one-slice NIfTI-1: native slice `slice`,
 * or the middle NiiVue shows when null. Empty when the viewport does not show the series' own
 * slices, or the series has one slice: then only the whole series will do. */
export const seriesOpeningSlice = (seriesKey: number, plane: Plane, slice: number | null) =>
  call(commands.seriesOpeningSlice(seriesKey, plane, slice))

/** What a mark measures on the series' voxels: an arrow's length, an ellipse's or outline's ROI
 * statistics (HU for CT) and bidimensional diameters. Refused ('invalid_argument') for an ROI that does
 * not lie on one native slice, naming why. */
export const seriesMeasure = (seriesKey: number, mark: Mark) => call(commands.seriesMeasure(seriesKey, mark))

// Rating (docs/rating.md). Every edit resolves only after it is committed to disk; a rejection is
// a `BackendError` ('refused': the item is submitted or not open yet; 'incomplete': submit lacks
// the fields the message names; 'reader_changed': the edit was made as a reader who is no longer
// the one reading here, so it was not written). Reading and editing are the current reader's
// (the backend's session): an edit names only the reader it was made as (`madeAs`).
export const listRaters = () => call(commands.listRaters())
export const createRater = (name: string, role: RaterRole, yearsExperience: number | null) =>
  call(commands.createRater(name, role, yearsExperience))
export const currentRater = () => call(commands.currentRater())
export const setCurrentRater = (raterId: number) => call(commands.setCurrentRater(raterId))
export const leaveReading = () => call(commands.leaveReading())
/** The study lead's: the study's plans with each rater's counts. */
export const listAssignmentPlans = (studyId: string) => call(commands.listAssignmentPlans(studyId))
/** The study lead's: a new plan, recorded as the study lead's (or the acting curator's). */
export const createLeadPlan = (spec: PlanSpec) => call(commands.createLeadPlan(spec))
/** The study lead's: seats new raters and deals responses added since; no queue is reordered. */
export const topUpAssignmentPlan = (spec: TopUpSpec) => call(commands.topUpAssignmentPlan(spec))
/** On the demo study: gives the current reader a queue (plan "demo:<name>", seed 1) unless they have one. */
export const ensureDemoQueue = () => call(commands.ensureDemoQueue())
export const readingQueue = (studyId: string) => call(commands.readingQueue(studyId))
export const readingItem = (assignment: number) => call(commands.readingItem(assignment))
export const saveRating = (madeAs: number, assignment: number, edit: RatingEdit) =>
  call(commands.saveRating(madeAs, assignment, edit))
export const addErrorLabel = (madeAs: number, assignment: number, label: LabelEdit) =>
  call(commands.addErrorLabel(madeAs, assignment, label))
export const updateErrorLabel = (madeAs: number, labelId: number, label: LabelEdit) =>
  call(commands.updateErrorLabel(madeAs, labelId, label))
export const deleteErrorLabel = (madeAs: number, labelId: number) =>
  call(commands.deleteErrorLabel(madeAs, labelId))
export const submitRating = (madeAs: number, assignment: number) =>
  call(commands.submitRating(madeAs, assignment))
export const reopenRating = (madeAs: number, assignment: number) =>
  call(commands.reopenRating(madeAs, assignment))
export const setPosition = (assignment: number) => call(commands.setPosition(assignment))
export const resumePosition = () => call(commands.resumePosition())

// Calibration (docs/calibration.md, "In the app").
export const listGraders = (studyId: string) => call(commands.listGraders(studyId))
/** Builds the report off the UI thread: `onCalibrationHeadline` receives the verdict's dimension
 * first, `onCalibrationProgress` follows the bootstrap of the rest, and the promise gives the whole
 * report (at once when it was kept from an earlier build on the same data). `request` is the
 * caller's number for this build, echoed in its events; a newer build cancels this one, which then
 * rejects with `cancelled`. */
export const calibrationReport = (
  studyId: string,
  grader: string,
  request: number,
  options: { seed?: string; resamples?: number; bar?: number; margin?: number; excludedRaters?: string[] } = {},
) =>
  callAs<CalibrationView>(commands.calibrationReport(studyId, grader, request, options))
/** Stops the report being built; whether one was. */
export const cancelCalibrationReport = () => call(commands.cancelCalibrationReport())
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
  call(commands.exportCalibrationReport(format, path))

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
/** Asks where to save a rater's package (the native save dialog); null when the user cancels. */
export async function chooseRaterPackagePath(raterName: string): Promise<string | null> {
  const chosen = await save({
    title: `Build ${raterName}'s rater package`,
    defaultPath: `${raterName.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-|-$/g, '').toLowerCase() || 'rater'}.nrpkg.tar`,
    filters: [{ name: 'Rater package', extensions: ['tar'] }],
  })
  return chosen ?? null
}
// Each package action reports `package-progress` events with the caller's `request` number and
// can be cancelled until it writes (`cancelPackageAction`; the action then rejects with `cancelled`).
export const importRaterPackage = (path: string, request = 0) =>
  call(commands.importRaterPackage(path, request))
/** The study lead's side: refused ('refused') while a rater reads blinded here. */
export const mergeResultsPackage = (path: string, request = 0) =>
  call(commands.mergeResultsPackage(path, request))
/** The file written; `packageId` only when the database holds several rater packages. */
/** The study lead's: refused ('refused') while a rater reads blinded here. */
export const exportRaterPackage = (studyId: string, raterId: number, site: string, path: string, request = 0) =>
  call(commands.exportRaterPackage(studyId, raterId, site, path, request))
/** The rater packages imported here: with several, the rater names the one to answer. */
export const importedRaterPackages = () => call(commands.importedRaterPackages())
export const exportResultsPackage = (path: string, packageId: string | null = null, request = 0) =>
  call(commands.exportResultsPackage(path, packageId, request))
/** Stops the package action under way before it writes; whether one was running. */
export const cancelPackageAction = () => call(commands.cancelPackageAction())
export function onPackageProgress(handler: (progress: WorkProgress) => void): Promise<UnlistenFn> {
  return listen<WorkProgress>('package-progress', (event) => handler(event.payload))
}

// The team server (docs/team-server.md, "The desktop app against a server"). Every request is
// the app's, in Rust; the webview talks to no server.
/** The server named by `--server`, and the account of a saved session still valid there. */
export const teamStart = () => call(commands.teamStart())
/** Fails with 'refused' (wrong username or password), 'server_unreachable' or 'invalid_argument'. */
export const teamLogin = (server: string, username: string, password: string) =>
  call(commands.teamLogin(server, username, password))
export const teamLogout = () => call(commands.teamLogout())
/** A rater's queue downloaded and imported (progress as `onTeamDownload` events carrying
 * `request`; `teamCancelDownload` stops it), or the lead's study to show the dashboard of. */
export const teamOpenStudy = (studyId: string, request = 0) => call(commands.teamOpenStudy(studyId, request))
export const teamCancelDownload = () => call(commands.teamCancelDownload())
export const teamProgress = (studyId: string) => call(commands.teamProgress(studyId))
export const teamPull = (studyId: string) => call(commands.teamPull(studyId))
/** The sync worker's last status; null when none runs. */
export const teamSyncStatus = () => call(commands.teamSyncStatus())
/** Settles an item whose edits the server refused as a conflict: its rating becomes the server's,
 * or this computer's is sent over it. */
export const teamResolveConflict = (assignment: number, resolution: Resolution) =>
  call(commands.teamResolveConflict(assignment, resolution))
export function onTeamSync(handler: (status: SyncStatus) => void): Promise<UnlistenFn> {
  return listen<SyncStatus>('team-sync', (event) => handler(event.payload))
}
/** What the sync worker's refresh brought while a rater reads: the lead's lock, reveals made
 * elsewhere, a rubric taken from the server, items added to the queue. */
export function onTeamNews(handler: (news: TeamNews) => void): Promise<UnlistenFn> {
  return listen<TeamNews>('team-news', (event) => handler(event.payload))
}
export function onTeamDownload(handler: (progress: WorkProgress) => void): Promise<UnlistenFn> {
  return listen<WorkProgress>('team-download', (event) => handler(event.payload))
}
// Accounts on the team server (docs/team-server.md, "Accounts"): the server decides who may.
/** Sets the password with a lead's code (an invitation's or a reset's), then logs in. */
export const teamAcceptCode = (server: string, username: string, code: string, kind: CodeKind, password: string) =>
  call(commands.teamAcceptCode(server, username, code, kind, password))
/** The logged-in account's password; its other sessions end. */
export const teamChangePassword = (current: string, next: string) => call(commands.teamChangePassword(current, next))
export const teamSessions = () => call(commands.teamSessions())
export const teamEndSession = (id: number) => call(commands.teamEndSession(id))
/** The lead's: the one-time code to pass on. */
export const teamInvite = (studyId: string, invitation: InviteRequest) => call(commands.teamInvite(studyId, invitation))
export const teamInvitations = (studyId: string) => call(commands.teamInvitations(studyId))
export const teamRevokeInvitation = (studyId: string, id: number) => call(commands.teamRevokeInvitation(studyId, id))
/** The lead's: the member's sessions end; the code with which they set a new password. */
export const teamResetPassword = (studyId: string, username: string) =>
  call(commands.teamResetPassword(studyId, username))
export const teamTopUp = (studyId: string, request: TopUpRequest) => call(commands.teamTopUp(studyId, request))
export const teamSetRevealLock = (studyId: string, username: string, locked: boolean) =>
  call(commands.teamSetRevealLock(studyId, username, locked))

// The grader workbench (docs/runs.md, "In the app"): refused ('refused') while a rater reads blinded.
export const workbenchVersions = () => call(commands.workbenchVersions(null))
/** Every model spec stored (added in the workbench or run by `neurorater respond`). */
export const workbenchModels = () => call(commands.workbenchVersions(true))
/** Adds a spec from its TOML text (the spec file of `neurorater grade`); `model` for `respond`. */
export const workbenchAddSpec = (toml: string, model = false) => call(commands.workbenchAddSpec(toml, model))
/** A new version: `base` with `prompt`, under a new `name` (a used name is refused). */
export const workbenchNewVersion = (base: string, name: string, prompt: string) =>
  call(commands.workbenchNewVersion(base, name, prompt))
export const workbenchPromptDiff = (before: string, after: string) =>
  call(commands.workbenchPromptDiff(before, after))
/** Development agreement; test agreement only once the version is confirmed. */
export const workbenchSplit = (studyId: string, grader: string) =>
  call(commands.workbenchSplit(studyId, grader))
/** Confirms the version (audited); its test agreement opens. */
export const workbenchConfirm = (studyId: string, grader: string) =>
  call(commands.workbenchConfirm(studyId, grader))
export const workbenchDisagreements = (studyId: string, grader: string) =>
  call(commands.workbenchDisagreements(studyId, grader))
export const workbenchItem = (grader: string, response: number) =>
  call(commands.workbenchItem(grader, response))
export const workbenchDrift = (studyId: string, before: string, after: string) =>
  call(commands.workbenchDrift(studyId, before, after))
/** Runs the stored grader (or with `samples` the model) over the study to the end;
 * `onRunProgress` follows it. */
export const workbenchRun = (studyId: string, name: string, samples: number | null = null) =>
  call(commands.workbenchRun(studyId, name, samples))
export const workbenchCancelRun = () => call(commands.workbenchCancelRun())
export function onRunProgress(handler: (progress: RunProgress) => void): Promise<UnlistenFn> {
  return listen<RunProgress>('run-progress', (event) => handler(event.payload))
}

// The automatic text metrics (docs/metrics.md), computed from the app by the study lead.
export const metricsCompute = (studyId: string) => call(commands.metricsCompute(studyId))
export const metricsCancel = () => call(commands.metricsCancel())
export function onMetricsProgress(handler: (progress: MetricsProgress) => void): Promise<UnlistenFn> {
  return listen<MetricsProgress>('metrics-progress', (event) => handler(event.payload))
}

// "New study…" (docs/app.md): the study lead scans a PACS export into a draft, corrects it and
// imports it. Refused ('refused') while a rater reads blinded here.
/** Asks for folders holding the export (the native open dialog); empty when the user cancels. */
export async function chooseExportFolders(): Promise<string[]> {
  const chosen = await open({ title: 'Folders of the image export', multiple: true, directory: true })
  if (chosen === null) return []
  return Array.isArray(chosen) ? chosen : [chosen]
}
/** Asks for the folder the study's bundle goes into; null when the user cancels. */
export async function chooseStudyFolder(): Promise<string | null> {
  const chosen = await open({ title: 'Folder to put the new study in', multiple: false, directory: true })
  return typeof chosen === 'string' ? chosen : null
}
/** Asks for a harness's responses file (CSV or JSONL); null when the user cancels. */
export async function chooseResponsesFile(): Promise<string | null> {
  const chosen = await open({
    title: "The models' responses",
    multiple: false,
    directory: false,
    filters: [{ name: 'Responses', extensions: ['csv', 'jsonl', 'json'] }],
  })
  return typeof chosen === 'string' ? chosen : null
}
/** Scans the folders into a draft; `onNewStudyProgress` follows it, `newStudyCancel` stops it. */
export const newStudyScan = (
  sources: string[],
  folder: string,
  studyId: string,
  shiftDates: boolean,
  responses: ResponsesArg | null,
) => call(commands.newStudyScan(sources, folder, studyId, shiftDates, responses))
/** Stops the scan, or discards the draft; nothing is left behind either way. */
export const newStudyCancel = () => call(commands.newStudyCancel())
export const newStudyLabel = (caseId: string, seriesId: string, label: string) =>
  call(commands.newStudyLabel(caseId, seriesId, label))
export const newStudyEditCase = (caseId: string, edit: CaseEdit) =>
  call(commands.newStudyEditCase(caseId, edit))
/** A series' thumbnails side by side, one PNG. */
export const newStudyThumbnails = (caseId: string, seriesId: string) =>
  call(commands.newStudyThumbnails(caseId, seriesId))
export const newStudyImport = () => call(commands.newStudyImport())
export function onNewStudyProgress(handler: (progress: NewStudyProgress) => void): Promise<UnlistenFn> {
  return listen<NewStudyProgress>('new-study-progress', (event) => handler(event.payload))
}

// The study lead's rubric editor: edited in place before the first rating under the current
// version, a new version after. Refused ('refused') while a rater reads blinded here.
export const rubricCurrent = (studyId: string) => call(commands.rubricCurrent(studyId))
/** Saved (its version, whether new), unchanged, or invalid with each problem at its field. */
export const rubricSave = (studyId: string, rubric: Rubric_Deserialize) => call(commands.rubricSave(studyId, rubric))
