import { describe, expect, it } from 'vitest'
import type { PullReport } from '../../bindings'
import { pulledText } from './pulledText'

const report = (over: Partial<PullReport> = {}): PullReport => ({
  study_id: 'demo',
  added: 0,
  updated: 0,
  unchanged: 0,
  conflicts: [],
  raters_added: [],
  curation: { versions_added: 0, reviews_added: 0, curators_added: [], conflicts: [] },
  ...over,
})

describe('pulledText', () => {
  it('counts what was taken in and names the raters added', () => {
    const text = pulledText(report({ added: 1, unchanged: 3, raters_added: ['rater-a', 'rater-b'] }))
    expect(text.summary).toBe(
      '1 rating added, 0 updated, 3 already here; raters added with the role you gave them on the server: rater-a, rater-b. Calibration now counts them.',
    )
    expect(text.leftAlone).toEqual([])
  })

  it('lists every rating and version left alone, saying why', () => {
    const text = pulledText(
      report({
        added: 2,
        conflicts: [
          { kind: 'edited_at_lead', assignment: 7, rater: 'rater-a', case_id: 'ms-01', task_id: 'dx' },
          { kind: 'older_than_pulled', assignment: 9, rater: 'rater-b', case_id: 'ms-02', task_id: 'loc' },
        ],
        curation: { versions_added: 1, reviews_added: 2, curators_added: [], conflicts: ['case ms-03: kept'] },
      }),
    )
    expect(text.summary).toBe(
      '2 ratings added, 0 updated, 0 already here; 1 ground-truth version and 2 reviews added; 3 left alone (below). Calibration now counts them.',
    )
    expect(text.leftAlone).toEqual([
      'Assignment 7 (rater-a, ms-01/dx): this database holds another rating of that read that did not come from the server; it was kept.',
      'Assignment 9 (rater-b, ms-02/loc): older than the rating taken in before; that one was kept.',
      'case ms-03: kept',
    ])
  })
})
