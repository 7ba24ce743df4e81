import { describe, expect, it } from 'vitest'
import { EMPTY_DRAFT, draftFromRating, labelEdit, ratingEdit, sameLabel, sameRatingFields, withoutOutdated, type Draft } from './draft'
import type { RatingView } from '../../ratingTypes'

const stored: RatingView = {
  status: 'draft',
  overall: 3,
  dimensions: { accuracy: 4, safety: 2 },
  not_applicable: ['follow_up'],
  correctness: 'partly',
  confidence: 4,
  comment: 'ok',
  seconds_on_task: 42.5,
  updated_at: '2026-11-21T03:00:00Z',
  submitted_at: null,
  labels: [
    { id: 9, category: 'P4', severity: 2, span: [3, 10], text: 'turn', turn: 3, mark: null, comment: '' },
  ],
}

describe('draftFromRating', () => {
  it('is empty before the first edit', () => {
    const { draft, labelIds } = draftFromRating(null)
    expect(draft).toEqual({ overall: null, dimensions: {}, notApplicable: [], correctness: null, confidence: null, comment: '', labels: [] })
    expect(labelIds.size).toBe(0)
  })

  it('keeps every stored field and maps each label uid to its stored id', () => {
    const { draft, labelIds } = draftFromRating(stored)
    expect(ratingEdit(draft, 42.5)).toEqual({
      overall: 3,
      dimensions: { accuracy: 4, safety: 2 },
      not_applicable: ['follow_up'],
      correctness: 'partly',
      confidence: 4,
      comment: 'ok',
      seconds_on_task: 42.5,
    })
    expect(draft.labels).toHaveLength(1)
    expect(labelIds.get(draft.labels[0].uid)).toBe(9)
    expect(labelEdit(draft.labels[0])).toEqual({ category: 'P4', severity: 2, span: [3, 10], text: 'turn', turn: 3, mark: null, comment: '' })
  })
})

describe('comparisons', () => {
  const base: Draft = draftFromRating(stored).draft
  it('sees a changed dimension but not a reordered record', () => {
    expect(sameRatingFields(base, { ...base, dimensions: { safety: 2, accuracy: 4 } })).toBe(true)
    expect(sameRatingFields(base, { ...base, dimensions: { accuracy: 4, safety: 3 } })).toBe(false)
    expect(sameRatingFields(base, { ...base, comment: 'ok.' })).toBe(false)
    expect(sameRatingFields(base, { ...base, notApplicable: [] })).toBe(false)
  })
  it('compares labels by content, not by uid', () => {
    const l = base.labels[0]
    expect(sameLabel(l, { ...l, uid: 'other' })).toBe(true)
    expect(sameLabel(l, { ...l, severity: 3 })).toBe(false)
  })
  it('rounds time on task to tenths of a second', () => {
    expect(ratingEdit(base, 12.345).seconds_on_task).toBe(12.3)
  })
})

describe('withoutOutdated', () => {
  const draft: Draft = {
    ...EMPTY_DRAFT,
    overall: 4,
    dimensions: { accuracy: 3, dropped: 2, narrowed: 5 },
    notApplicable: ['gone', 'kept'],
  }

  it('takes out the scores and N/A marks the rubric no longer admits, and nothing else', () => {
    expect(withoutOutdated(draft, ['dimensions.dropped', 'dimensions.narrowed', 'dimensions.gone'])).toEqual({
      ...draft,
      dimensions: { accuracy: 3 },
      notApplicable: ['kept'],
    })
    expect(withoutOutdated(draft, ['overall'])).toEqual({ ...draft, overall: null })
  })

  it('leaves a draft the rubric admits as it is', () => {
    expect(withoutOutdated(draft, [])).toBe(draft)
  })
})
