// What an undo or a redo changed, in words. Ctrl+Z restores a whole snapshot; without saying what
// it took back, a rater cannot tell a score undone from a label undone.

import { diffByUid } from './history'
import { sameLabel, type Draft } from './draft'
import { CORRECTNESS, CORRECTNESS_LABELS, rowValue, type RubricRow } from './scoring'

/** A row's value as the rubric panel shows it. */
function shownValue(row: RubricRow, value: number | null): string {
  if (value === null) return 'not scored'
  if (row.kind === 'correctness') return CORRECTNESS_LABELS[CORRECTNESS[value - 1]]
  return String(value)
}

/**
 * The differences from `from` to `to`, most telling first: each rubric row that changed with its
 * old and new value, then the labels added, removed or edited (by their category's name), then
 * the comment. "nothing" when the two are the same.
 */
export function describeChange(from: Draft, to: Draft, rows: readonly RubricRow[], categoryName: (code: string) => string): string {
  const parts: string[] = []
  for (const row of rows) {
    const [before, after] = [rowValue(from, row), rowValue(to, row)]
    if (before !== after) parts.push(`${row.label} ${shownValue(row, before)} → ${shownValue(row, after)}`)
  }
  const labels = diffByUid(from.labels, to.labels, sameLabel)
  for (const l of labels.added) parts.push(`label “${categoryName(l.category)}” added`)
  for (const l of labels.removed) parts.push(`label “${categoryName(l.category)}” removed`)
  for (const l of labels.changed) parts.push(`label “${categoryName(l.category)}” edited`)
  if (from.comment !== to.comment) parts.push('the comment')
  return parts.length === 0 ? 'nothing' : parts.join('; ')
}
