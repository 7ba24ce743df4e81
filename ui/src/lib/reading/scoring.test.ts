import { describe, expect, it } from 'vitest'
import { EMPTY_DRAFT, type Draft } from './draft'
import {
  descriptorFor,
  isNotApplicable,
  rowAfterScoring,
  rowAnswered,
  rowValue,
  rubricRows,
  scaleValues,
  valueForDigit,
  withNotApplicable,
  withRowValue,
} from './scoring'

describe('scaleValues', () => {
  it('lists every level from min to max', () => {
    expect(scaleValues({ min: 1, max: 5, step: 1, levels: [] })).toEqual([1, 2, 3, 4, 5])
    expect(scaleValues({ min: 0, max: 1, step: 0.1, levels: [] })).toHaveLength(11)
    expect(scaleValues({ min: 0, max: 1, step: 0.1, levels: [] })[3]).toBe(0.3)
  })
  it('is empty for a scale that cannot be stepped', () => {
    expect(scaleValues({ min: 1, max: 5, step: 0, levels: [] })).toEqual([])
  })
})

describe('valueForDigit', () => {
  it('uses the digit itself on an integer scale', () => {
    expect(valueForDigit([1, 2, 3, 4, 5], 4)).toBe(4)
    expect(valueForDigit([0, 1, 2], 0)).toBe(0)
    expect(valueForDigit([1, 2, 3, 4, 5], 0)).toBeNull()
    expect(valueForDigit([1, 2, 3, 4, 5], 7)).toBeNull()
  })
  it('counts levels from 1 on a scale without that value', () => {
    expect(valueForDigit([0, 0.5, 1], 2)).toBe(0.5)
    expect(valueForDigit([0, 0.5, 1], 3)).toBe(1)
  })
})

describe('descriptorFor', () => {
  it('finds the level descriptor of a value', () => {
    const scale = { min: 1, max: 3, step: 1, levels: [{ value: 2, descriptor: 'partly' }] }
    expect(descriptorFor(scale, 2)).toBe('partly')
    expect(descriptorFor(scale, 3)).toBeNull()
  })
})

describe('rubric rows', () => {
  const rubric = {
    overall: { label: 'Overall quality', min: 1, max: 5, step: 1, levels: [] },
    dimensions: [{ id: 'accuracy', label: 'Accuracy', min: 0, max: 2, step: 1, levels: [] }],
  }
  const rows = rubricRows(rubric, 'differential_diagnosis')
  const empty: Draft = EMPTY_DRAFT

  it('leaves out a dimension of another task family and offers N/A where allowed', () => {
    const limited = {
      ...rubric,
      dimensions: [
        ...rubric.dimensions,
        { id: 'where', label: 'Localisation', min: 1, max: 5, step: 1, levels: [], families: ['lesion_identification' as const] },
        { id: 'follow_up', label: 'Follow-up', min: 1, max: 5, step: 1, levels: [], allow_not_applicable: true },
      ],
    }
    const dimensionIds = (family: 'differential_diagnosis' | 'lesion_identification') =>
      rubricRows(limited, family).flatMap((r) => (r.kind === 'dimension' ? [r.id] : []))
    expect(dimensionIds('differential_diagnosis')).toEqual(['accuracy', 'follow_up'])
    expect(dimensionIds('lesion_identification')).toEqual(['accuracy', 'where', 'follow_up'])
    const [, followUp] = rubricRows(limited, 'differential_diagnosis')
    expect(followUp).toMatchObject({ id: 'follow_up', allowNotApplicable: true })

    let d = withRowValue(empty, followUp, 3)
    d = withNotApplicable(d, 'follow_up')
    expect(d.dimensions).toEqual({})
    expect(d.notApplicable).toEqual(['follow_up'])
    expect(isNotApplicable(d, followUp)).toBe(true)
    expect(rowValue(d, followUp)).toBeNull()
    expect(rowAnswered(d, followUp)).toBe(true)
    d = withRowValue(d, followUp, 4)
    expect(d.notApplicable).toEqual([])
    expect(rowValue(d, followUp)).toBe(4)
  })

  it('lists dimensions, then overall, correctness and confidence', () => {
    expect(rows.map((r) => r.label)).toEqual(['Accuracy', 'Overall quality', 'Final answer', 'Your confidence'])
    expect(rows[0].values).toEqual([0, 1, 2])
  })

  it('writes and reads back every row of a draft', () => {
    let d = empty
    d = withRowValue(d, rows[0], 2)
    d = withRowValue(d, rows[1], 4)
    d = withRowValue(d, rows[2], 2)
    d = withRowValue(d, rows[3], 5)
    expect(d).toMatchObject({ dimensions: { accuracy: 2 }, overall: 4, correctness: 'partly', confidence: 5 })
    expect(rows.map((r) => rowValue(d, r))).toEqual([2, 4, 2, 5])
    expect(rows.map((r) => rowValue(empty, r))).toEqual([null, null, null, null])
  })
})

describe('rowAfterScoring', () => {
  it('moves to the next row after a score, by key or click', () => {
    expect(rowAfterScoring(0, 7)).toBe(1)
    expect(rowAfterScoring(3, 7)).toBe(4)
  })
  it('keeps the last row current', () => {
    expect(rowAfterScoring(6, 7)).toBe(6)
    expect(rowAfterScoring(0, 1)).toBe(0)
  })
})
