// Scales of the study's rubric as score buttons, and what a digit key means on each.

import type { Correctness, Rubric, RubricDimension } from '../../ratingTypes'
import type { TaskFamily } from '../../types'
import type { Draft } from './draft'

export interface ScaleLike {
  min: number
  max: number
  step: number
  levels: readonly { value: number; descriptor: string }[]
}

/** Every value of a scale: min, min + step, …, max (rounded so 0.1 steps stay exact). */
export function scaleValues(scale: ScaleLike): number[] {
  if (!(scale.step > 0) || scale.max < scale.min) return []
  const n = Math.floor((scale.max - scale.min) / scale.step + 1e-9)
  return Array.from({ length: n + 1 }, (_, i) => Number((scale.min + i * scale.step).toFixed(6)))
}

/**
 * The value a digit key picks: the digit itself when the scale has that value (a 1–5 scale),
 * otherwise the digit-th value counting from 1 (a 0–1 scale in halves: 1 → 0, 2 → 0.5, 3 → 1).
 */
export function valueForDigit(values: readonly number[], digit: number): number | null {
  if (values.includes(digit)) return digit
  if (digit >= 1 && digit <= values.length) return values[digit - 1]
  return null
}

/**
 * The row digit keys score after row `scored` was given a value, by a key or by a click alike: the
 * next row (the last stays current). One rule, so a key after a click never overwrites the row
 * just clicked.
 */
export function rowAfterScoring(scored: number, rowCount: number): number {
  return Math.max(0, Math.min(rowCount - 1, scored + 1))
}

export function descriptorFor(scale: ScaleLike, value: number): string | null {
  return scale.levels.find((l) => Math.abs(l.value - value) < 1e-9)?.descriptor ?? null
}

/** One line of the rubric panel, in the order digits walk through them. */
export type RubricRow =
  | {
      kind: 'dimension'
      id: string
      label: string
      /** What the dimension asks the rater to judge, from the rubric; null without one. */
      description: string | null
      scale: ScaleLike
      values: number[]
      allowNotApplicable: boolean
    }
  | { kind: 'overall'; label: string; scale: ScaleLike; values: number[] }
  | { kind: 'correctness'; label: string; values: number[] }
  | { kind: 'confidence'; label: string; values: number[] }

export const CORRECTNESS: readonly Correctness[] = ['correct', 'partly', 'incorrect']
export const CORRECTNESS_LABELS: Record<Correctness, string> = {
  correct: 'Correct',
  partly: 'Partly correct',
  incorrect: 'Incorrect',
}
/** The backend stores confidence 1–5. */
export const CONFIDENCE_VALUES = [1, 2, 3, 4, 5] as const

/** Whether a task of `family` is scored on the dimension (the backend's `RubricDimension::applies_to`). */
export function appliesTo(dimension: RubricDimension, family: TaskFamily): boolean {
  return !dimension.families || dimension.families.includes(family)
}

/** The rows of a task of `family`: a dimension the rubric does not apply to it is not shown. */
export function rubricRows(rubric: Rubric, family: TaskFamily): RubricRow[] {
  return [
    ...rubric.dimensions
      .filter((d) => appliesTo(d, family))
      .map((d): RubricRow => ({
        kind: 'dimension',
        id: d.id,
        label: d.label,
        description: d.description ?? null,
        scale: d,
        values: scaleValues(d),
        allowNotApplicable: d.allow_not_applicable ?? false,
      })),
    { kind: 'overall', label: rubric.overall.label ?? 'Overall', scale: rubric.overall, values: scaleValues(rubric.overall) },
    // Correctness is a choice, not a number; 1, 2, 3 pick it in the order listed.
    { kind: 'correctness', label: 'Final answer', values: [1, 2, 3] },
    { kind: 'confidence', label: 'Your confidence', values: [...CONFIDENCE_VALUES] },
  ]
}

/** The row's value in a draft (correctness as its 1-based place in `CORRECTNESS`). */
export function rowValue(draft: Draft, row: RubricRow): number | null {
  switch (row.kind) {
    case 'dimension':
      return draft.dimensions[row.id] ?? null
    case 'overall':
      return draft.overall
    case 'correctness':
      return draft.correctness === null ? null : CORRECTNESS.indexOf(draft.correctness) + 1
    case 'confidence':
      return draft.confidence
  }
}

/** Whether the row is a dimension marked "not applicable" in the draft. */
export function isNotApplicable(draft: Draft, row: RubricRow): boolean {
  return row.kind === 'dimension' && draft.notApplicable.includes(row.id)
}

/** Whether the row has its answer: a value, or "not applicable". */
export function rowAnswered(draft: Draft, row: RubricRow): boolean {
  return rowValue(draft, row) !== null || isNotApplicable(draft, row)
}

/** A new draft with the dimension marked "not applicable" (its score, if any, taken back). */
export function withNotApplicable(draft: Draft, id: string): Draft {
  const dimensions = { ...draft.dimensions }
  delete dimensions[id]
  return { ...draft, dimensions, notApplicable: [...new Set([...draft.notApplicable, id])].sort() }
}

/** A new draft with the row set to `value` (one of `row.values`). */
export function withRowValue(draft: Draft, row: RubricRow, value: number): Draft {
  switch (row.kind) {
    case 'dimension':
      return {
        ...draft,
        dimensions: { ...draft.dimensions, [row.id]: value },
        notApplicable: draft.notApplicable.filter((id) => id !== row.id),
      }
    case 'overall':
      return { ...draft, overall: value }
    case 'correctness':
      return { ...draft, correctness: CORRECTNESS[value - 1] ?? draft.correctness }
    case 'confidence':
      return { ...draft, confidence: value }
  }
}
