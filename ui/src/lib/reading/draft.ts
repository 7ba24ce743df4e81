// The rater's editable state of one rating as the screen holds it, and its translation to and
// from the backend's payloads. Labels carry a client id (`uid`) that survives undo and redo; the
// backend's id arrives later, when the label's first write is acknowledged.

import type { Correctness, ErrorLabelView, LabelEdit, RatingEdit, RatingView, SpanText } from '../../ratingTypes'
import type { Mark } from '../../types'

export interface DraftLabel {
  uid: string
  category: string
  severity: number
  span: [number, number] | null
  /** The text the span lies in, and with 'turn' which turn. */
  text: SpanText
  turn: number | null
  mark: Mark | null
  comment: string
}

/** What the label editor hands back; the span is the parent's (it opened the editor on it). */
export interface LabelFields {
  category: string
  severity: number
  comment: string
  mark: Mark | null
}

export interface Draft {
  overall: number | null
  dimensions: Record<string, number>
  /** Dimensions marked "not applicable", sorted. */
  notApplicable: string[]
  correctness: Correctness | null
  confidence: number | null
  comment: string
  labels: DraftLabel[]
}

export const EMPTY_DRAFT: Draft = {
  overall: null,
  dimensions: {},
  notApplicable: [],
  correctness: null,
  confidence: null,
  comment: '',
  labels: [],
}

/** The draft of a stored rating, and which backend id each label's uid stands for. */
export function draftFromRating(rating: RatingView | null): { draft: Draft; labelIds: Map<string, number> } {
  if (!rating) return { draft: structuredClone(EMPTY_DRAFT), labelIds: new Map() }
  const labelIds = new Map<string, number>()
  const labels = rating.labels.map((l: ErrorLabelView) => {
    const uid = `stored-${l.id}`
    labelIds.set(uid, l.id)
    return { uid, category: l.category, severity: l.severity, span: l.span, text: l.text, turn: l.turn, mark: l.mark, comment: l.comment }
  })
  return {
    draft: {
      overall: rating.overall,
      dimensions: { ...rating.dimensions },
      notApplicable: [...rating.not_applicable].sort(),
      correctness: rating.correctness,
      confidence: rating.confidence,
      comment: rating.comment,
      labels,
    },
    labelIds,
  }
}

/** The draft without the scores the study's current rubric no longer admits (the backend's
 * `outdated_scores`, each named `overall` or `dimensions.<id>` by the rating rules): a score
 * or N/A of a dimension the rubric dropped, narrowed or no longer allows N/A on, or an overall
 * off its new scale. The draft it returns is what the screen saves under the current version. */
export function withoutOutdated(draft: Draft, fields: readonly string[]): Draft {
  if (fields.length === 0) return draft
  const gone = new Set(fields.flatMap((field) => (field.startsWith('dimensions.') ? [field.slice('dimensions.'.length)] : [])))
  return {
    ...draft,
    overall: fields.includes('overall') ? null : draft.overall,
    dimensions: Object.fromEntries(Object.entries(draft.dimensions).filter(([id]) => !gone.has(id))),
    notApplicable: draft.notApplicable.filter((id) => !gone.has(id)),
  }
}

export function ratingEdit(draft: Draft, secondsOnTask: number): RatingEdit {
  return {
    overall: draft.overall,
    dimensions: { ...draft.dimensions },
    not_applicable: [...draft.notApplicable],
    correctness: draft.correctness,
    confidence: draft.confidence,
    comment: draft.comment,
    seconds_on_task: Math.round(secondsOnTask * 10) / 10,
  }
}

export function labelEdit(label: DraftLabel): LabelEdit {
  return {
    category: label.category,
    severity: label.severity,
    span: label.span,
    text: label.text,
    turn: label.turn,
    mark: label.mark,
    comment: label.comment,
  }
}

export function sameRatingFields(a: Draft, b: Draft): boolean {
  return (
    a.overall === b.overall &&
    a.correctness === b.correctness &&
    a.confidence === b.confidence &&
    a.comment === b.comment &&
    a.notApplicable.join('\n') === b.notApplicable.join('\n') &&
    JSON.stringify(sortedEntries(a.dimensions)) === JSON.stringify(sortedEntries(b.dimensions))
  )
}

export function sameLabel(a: DraftLabel, b: DraftLabel): boolean {
  return JSON.stringify(labelEdit(a)) === JSON.stringify(labelEdit(b))
}

function sortedEntries(record: Record<string, number>): [string, number][] {
  return Object.entries(record).sort(([x], [y]) => x.localeCompare(y))
}
