// The payloads of the rating commands: the types generated from `cases::rating` (Rust) into
// ./bindings, under the UI's names. What the UI receives is the `_Serialize` shape (as Rust writes
// it); what it sends is that same full shape, which the command's `_Deserialize` argument accepts.
// Every payload a rater receives is blinded in the backend: no model name, no sample number, no
// response id, no grader output, no other rater's work. See docs/rating.md.

import type {
  Anchor,
  Correctness,
  EditAck,
  ErrorLabelView_Serialize,
  ImportedPackage,
  ItemStatus,
  LabelAck,
  LabelEdit_Serialize,
  MergedResults,
  OutdatedScore,
  PlanRaterSummary,
  PlanSpec_Serialize,
  PlanSummary_Serialize,
  QueueItem_Serialize,
  RaterRole,
  Rater_Serialize,
  RatingEdit_Serialize,
  RatingStatus,
  RatingView_Serialize,
  ReadingCase,
  ReadingItem_Serialize,
  ReadingResponse_Serialize,
  ReadingSeries,
  ReadingTask,
  ResumePoint,
  RubricDimension_Serialize,
  Rubric_Serialize,
  ScaleLevel,
  Scale_Serialize,
  SpanText,
  StratifyBy,
  TaxonomyCategory,
  TopUpSpec_Serialize,
  TopUpSummary_Serialize,
} from './bindings'

export type {
  Anchor,
  Correctness,
  EditAck,
  ImportedPackage,
  ItemStatus,
  LabelAck,
  MergedResults,
  OutdatedScore,
  PlanRaterSummary,
  RaterRole,
  RatingStatus,
  ReadingCase,
  ReadingSeries,
  ReadingTask,
  ResumePoint,
  ScaleLevel,
  SpanText,
  StratifyBy,
  TaxonomyCategory,
}

export type Rater = Rater_Serialize
/** What `create_assignment_plan` takes. Shares are in [0, 1]. */
export type PlanSpec = PlanSpec_Serialize
/** What `top_up_assignment_plan` takes: raters joining the plan; responses added since are dealt. */
export type TopUpSpec = TopUpSpec_Serialize
export type PlanSummary = PlanSummary_Serialize
export type TopUpSummary = TopUpSummary_Serialize
export type QueueItem = QueueItem_Serialize
export type ReadingResponse = ReadingResponse_Serialize
export type Scale = Scale_Serialize
export type RubricDimension = RubricDimension_Serialize
export type Rubric = Rubric_Serialize
export type ErrorLabelView = ErrorLabelView_Serialize
export type RatingView = RatingView_Serialize
/** Everything the reading screen shows for one assignment, and nothing that unblinds. A repeat
 * read that is not open yet is refused ('refused'), so an item is always readable. */
export type ReadingItem = ReadingItem_Serialize
/** The whole editable state of a rating; each save replaces the draft. */
export type RatingEdit = RatingEdit_Serialize
export type LabelEdit = LabelEdit_Serialize
