// The only module that talks to Tauri. Components call these functions; every failure arrives as
// a `BackendError` with a stable `code` to branch on.

import { invoke } from '@tauri-apps/api/core'
import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import type {
  BackendError,
  CaseSummary,
  CaseView,
  ErrorCode,
  ResponseView,
  StartupProgress,
  StartupStatus,
  StudySummary,
} from './types'

const KNOWN_CODES: readonly ErrorCode[] = [
  'invalid_argument',
  'not_found',
  'not_ready',
  'startup_failed',
  'image_unavailable',
  'database',
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

/** The series as a NIfTI-1 file in memory, sent as raw bytes (no JSON, no base64). */
export const seriesVolume = (seriesKey: number) => call<ArrayBuffer>('series_volume', { seriesKey })
