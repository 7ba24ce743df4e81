// The shapes of "New study…" (src-tauri/src/commands/new_study.rs, cases::app::new_study): the
// types generated into ../../bindings under the UI's names (a received type is its `_Serialize`
// shape); the scan's progress event is the UI's own.
import type {
  CaseEdit,
  DraftCase_Serialize,
  DraftSeries_Serialize,
  DraftTask,
  DraftView_Serialize,
  ImportReply_Serialize,
  ImportSummary_Serialize,
  ProblemRow_Serialize,
  ResponsesArg_Serialize,
  ScanReply_Serialize,
  TaskFamily,
} from '../../bindings'

export type { CaseEdit, DraftTask, TaskFamily }

export type DraftSeries = DraftSeries_Serialize
export type DraftCase = DraftCase_Serialize
export type DraftView = DraftView_Serialize
/** One `FILE:LINE: field: message` of the problems table. */
export type ProblemRow = ProblemRow_Serialize
export type ScanReply = ScanReply_Serialize
export type ImportSummary = ImportSummary_Serialize
export type ImportReply = ImportReply_Serialize
export type ResponsesArg = ResponsesArg_Serialize

export interface NewStudyProgress {
  phase: string
  done: number
  total: number
}
