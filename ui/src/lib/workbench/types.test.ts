import { describe, expect, it } from 'vitest'
import { describeAgreement, describePace, describeRun } from './types'

describe('describeAgreement', () => {
  it('gives r with its case-resampled interval (not the Fisher-z one), items, cases and the signed shift', () => {
    expect(
      describeAgreement({
        n_items: 40,
        n_cases: 12,
        pearson: { r: 0.912, ci_low: 0.834, ci_high: 0.953, p: 0.0001, n: 40 },
        pearson_case_interval: {
          estimate: 0.912,
          low: 0.71,
          high: 0.97,
          method: "delete-one-case jackknife on Fisher's z, t(11)",
          resamples: 12,
          cases: 12,
        },
        mean_difference: -0.25,
        mean_absolute_difference: 0.6,
      }),
    ).toBe("r = 0.91 (95 % 0.71–0.97, delete-one-case jackknife on Fisher's z, t(11)), 40 items, 12 cases; grader −0.25 vs clinicians")
  })

  it('says why there is no case interval rather than quoting the items-as-independent one', () => {
    expect(
      describeAgreement({
        n_items: 6,
        n_cases: 2,
        pearson: { r: 0.9, ci_low: 0.3, ci_high: 0.99, p: 0.01, n: 6 },
        pearson_case_interval: { n: 2, not_estimable: 'no interval from resampling cases: needs at least 3 cases to leave one out (has 2)' },
        mean_difference: 0,
        mean_absolute_difference: 0.5,
      }),
    ).toBe('r = 0.90 (no interval from resampling cases: needs at least 3 cases to leave one out (has 2)), 6 items, 2 cases; grader +0.00 vs clinicians')
  })

  it('says why there is no r', () => {
    expect(
      describeAgreement({
        n_items: 2,
        n_cases: 1,
        pearson: { n: 2, not_estimable: 'needs at least 4 paired items, has 2' },
        pearson_case_interval: { n: 1, not_estimable: 'no interval from resampling cases: needs at least 3 cases to leave one out (has 1)' },
        mean_difference: 0.5,
        mean_absolute_difference: 0.5,
      }),
    ).toBe('no r: needs at least 4 paired items, has 2; grader +0.50 vs clinicians')
  })
})

describe('describePace', () => {
  it('is empty before anything is done', () => {
    expect(describePace(0, 10, 5000)).toBe('')
  })

  it('gives the rate so far and the time the rest takes at it', () => {
    // 12 in 4 s: 3/s; 84 left take 28 s.
    expect(describePace(12, 96, 4000)).toBe('3.0/s · about 28 s left')
    // 3 in 60 s: 3/min; 57 left take 19 min.
    expect(describePace(3, 60, 60_000)).toBe('3.0/min · about 19 min left')
  })

  it('drops the time left once everything is done', () => {
    expect(describePace(96, 96, 32_000)).toBe('3.0/s')
  })
})

describe('describeRun', () => {
  it('puts stored, tokens, cost and pace in one line', () => {
    expect(
      describeRun({ name: 'm', total: 96, done: 12, tokens: 1440, cost: 0.002, failed: [], skipped: [], elapsedMs: 4000 }),
    ).toBe('12 / 96 stored · 1440 tokens · cost 0.0020 · 3.0/s · about 28 s left')
    expect(describeRun({ name: 'm', total: 4, done: 0, tokens: 0, cost: null, failed: [], skipped: [], elapsedMs: 0 })).toBe(
      '0 / 4 stored · 0 tokens',
    )
  })
})
