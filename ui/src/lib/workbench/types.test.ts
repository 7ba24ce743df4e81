import { describe, expect, it } from 'vitest'
import { describeAgreement } from './types'

describe('describeAgreement', () => {
  it('gives r with its interval, items, cases and the signed shift', () => {
    expect(
      describeAgreement({
        n_items: 40,
        n_cases: 12,
        pearson: { r: 0.912, ci_low: 0.834, ci_high: 0.953, p: 0.0001, n: 40 },
        mean_difference: -0.25,
        mean_absolute_difference: 0.6,
      }),
    ).toBe('r = 0.91 (0.83–0.95), 40 items, 12 cases; grader −0.25 vs clinicians')
  })

  it('says why there is no r', () => {
    expect(
      describeAgreement({
        n_items: 2,
        n_cases: 1,
        pearson: { n: 2, not_estimable: 'needs at least 4 paired items, has 2' },
        mean_difference: 0.5,
        mean_absolute_difference: 0.5,
      }),
    ).toBe('no r: needs at least 4 paired items, has 2; grader +0.50 vs clinicians')
  })
})
