import { describe, expect, it } from 'vitest'
import { describeChange } from './changes'
import { EMPTY_DRAFT, type Draft, type DraftLabel } from './draft'
import type { RubricRow } from './scoring'

const scale = { min: 1, max: 5, step: 1, levels: [] }
const rows: RubricRow[] = [
  { kind: 'dimension', id: 'accuracy', label: 'Accuracy', description: null, scale, values: [1, 2, 3, 4, 5], allowNotApplicable: false },
  { kind: 'correctness', label: 'Final answer', values: [1, 2, 3] },
]
const names: Record<string, string> = { P4: 'Mislocalisation' }
const categoryName = (code: string) => names[code] ?? code
const label = (uid: string, severity = 2): DraftLabel => ({ uid, category: 'P4', severity, span: [0, 4], text: 'rationale', turn: null, mark: null, comment: '' })
const draft = (patch: Partial<Draft>): Draft => ({ ...structuredClone(EMPTY_DRAFT), ...patch })

describe('what an undo or a redo changed', () => {
  it('names each rubric row with its old and new value, correctness by its word', () => {
    const from = draft({ dimensions: { accuracy: 4 }, correctness: 'partly' })
    const to = draft({ dimensions: {}, correctness: 'incorrect' })
    expect(describeChange(from, to, rows, categoryName)).toBe('Accuracy 4 → not scored; Final answer Partly correct → Incorrect')
  })
  it('names labels by their category, and the comment', () => {
    const from = draft({ labels: [label('a'), label('b')], comment: 'x' })
    const to = draft({ labels: [label('b', 3), label('c')], comment: 'xy' })
    expect(describeChange(from, to, rows, categoryName)).toBe(
      'label “Mislocalisation” added; label “Mislocalisation” removed; label “Mislocalisation” edited; the comment',
    )
  })
  it('says so when nothing differs', () => {
    expect(describeChange(draft({}), draft({}), rows, categoryName)).toBe('nothing')
  })
})
