import { describe, expect, it } from 'vitest'
import {
  axialSideMarkers,
  casesNeedingCuration,
  groupCases,
  levelLabel,
  sliceIndexFromFraction,
  sliceLabel,
  windowLevelLabel,
} from './labels'
import type { CaseSummary } from '../types'

function aCase(id: string, disease_group: CaseSummary['disease_group']): CaseSummary {
  return { id, disease_group, modality: 'MR', age: 50, sex: 'F', series_labels: [], n_tasks: 1, n_responses: 2, to_complete: [] }
}

describe('sliceIndexFromFraction', () => {
  it('maps voxel spans [i/n, (i+1)/n) to i, and the far edge to the last slice', () => {
    expect(sliceIndexFromFraction(0, 24)).toBe(0)
    expect(sliceIndexFromFraction(0.5 / 24, 24)).toBe(0)
    expect(sliceIndexFromFraction(1 / 24, 24)).toBe(1)
    expect(sliceIndexFromFraction(12.5 / 24, 24)).toBe(12)
    expect(sliceIndexFromFraction(1, 24)).toBe(23)
  })
  it('clamps nonsense instead of showing slice 0/0 or 25/24', () => {
    expect(sliceIndexFromFraction(-0.2, 24)).toBe(0)
    expect(sliceIndexFromFraction(1.7, 24)).toBe(23)
    expect(sliceIndexFromFraction(Number.NaN, 24)).toBe(0)
    expect(sliceIndexFromFraction(0.5, 0)).toBe(0)
  })
})

describe('overlay text', () => {
  it('counts slices from 1 as readers do', () => {
    expect(sliceLabel(0, 24)).toBe('1/24')
    expect(sliceLabel(23, 24)).toBe('24/24')
  })
  it('reads the range a CT brain window maps to (black at 0 HU, white above 79 HU) as W 80 L 40', () => {
    expect(windowLevelLabel(0, 79)).toBe('W 80  L 40')
  })
  it('keeps three significant digits for small ranges', () => {
    // The linear window of the range −0.4…0.4: width 0.8 + 1, centre 0 + 0.5.
    expect(windowLevelLabel(-0.4, 0.4)).toBe('W 1.80  L 0.500')
  })
  it('reads a range of continuous values as its width and centre', () => {
    // A float NIfTI shown from 0.1 to 0.9; the integer rule would say W 1.80 L 1.00.
    expect(windowLevelLabel(0.1, 0.9, true)).toBe('W 0.800  L 0.500')
    expect(windowLevelLabel(-1000, 3000, true)).toBe('W 4000  L 1000')
  })
  it('puts the patient right on screen left in radiological convention', () => {
    expect(axialSideMarkers(true)).toEqual({ left: 'R', right: 'L' })
    expect(axialSideMarkers(false)).toEqual({ left: 'L', right: 'R' })
  })
  it('names task levels', () => {
    expect(levelLabel(3)).toBe('Level 3 · multi-turn')
    expect(levelLabel(7)).toBe('Level 7')
  })
})

describe('groupCases', () => {
  it('orders groups clinically, drops empty ones and sorts ids naturally', () => {
    const grouped = groupCases([
      aCase('normal-01', 'normal'),
      aCase('ms-10', 'multiple_sclerosis'),
      aCase('ms-2', 'multiple_sclerosis'),
      aCase('tumour-01', 'tumour'),
    ])
    expect(grouped.map((g) => g.group)).toEqual(['multiple_sclerosis', 'tumour', 'normal'])
    expect(grouped[0].cases.map((c) => c.id)).toEqual(['ms-2', 'ms-10'])
  })
})

describe('casesNeedingCuration', () => {
  it('lists scaffolded cases by id with what is missing, and leaves finished cases out', () => {
    const cases = [
      { ...aCase('case-010', 'other_abnormality'), to_complete: ['tasks' as const] },
      aCase('ms-01', 'multiple_sclerosis'),
      { ...aCase('case-002', 'other_abnormality'), to_complete: ['disease_group' as const, 'burned_in_annotation' as const] },
    ]
    expect(casesNeedingCuration(cases)).toEqual([
      { id: 'case-002', missing: 'disease group, check images for burned-in text' },
      { id: 'case-010', missing: 'tasks' },
    ])
  })
})
