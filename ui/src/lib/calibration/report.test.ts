import { describe, expect, it } from 'vitest'
import { describeItems, errorRateText, fmt, interval, ppiFigures, ppiTarget, progressText, pValue, reasonOf, reliabilityCells, shareText, modelRowLabel, sectionRows, summaryAfterDecision, subgroupColumns, valueOf, verdictStanding, versusRest } from './report'
import type { DimensionReport, ErrorRate, GroupSection, Report, Section, Verdict } from './report'

const section = (n: number) => ({ n_items: n }) as Section

describe('not-estimable figures never become numbers', () => {
  it('reads a value, and null for a missing one, keeping the reason', () => {
    const missing = { n: 2, not_estimable: 'fewer than 3 items' }
    expect(valueOf({ r: 0.5 })).toEqual({ r: 0.5 })
    expect(valueOf(missing)).toBeNull()
    expect(valueOf(null)).toBeNull()
    expect(reasonOf(missing)).toBe('fewer than 3 items')
    expect(reasonOf({ r: 0.5 })).toBe('')
  })

  it('formats with a true minus and a dash for nothing, never NaN', () => {
    expect(fmt(-0.12345)).toBe('−0.123')
    expect(fmt(0.9, 2)).toBe('0.90')
    expect(fmt(NaN)).toBe('—')
    expect(fmt(null)).toBe('—')
    expect(interval(0.81, 0.93, 2)).toBe('0.81 to 0.93')
    expect(interval(undefined, 0.93)).toBe('—')
    expect(pValue(0.0004)).toBe('< 0.001')
    expect(pValue(0.0312)).toBe('0.031')
  })
})

describe('the verdict and the subgroup filter', () => {
  it('passes only on the lower bound', () => {
    const r = { r: 0.8, ci_low: 0.6, ci_high: 0.9, p: 0.001, n: 40 }
    const v = (meets: boolean, lower: boolean) => ({ meets_bar: meets, lower_bound_meets_bar: lower, pearson: r }) as Verdict
    expect(verdictStanding(v(true, true))).toBe('pass')
    expect(verdictStanding(v(true, false))).toBe('partial')
    expect(verdictStanding(v(false, false))).toBe('fail')
  })

  it('counts items as rated and unrated', () => {
    const summary = { items: 336, cases: 24, rated_items: 288, unrated_items: 48, rated_cases: 24 } as Report['summary']
    expect(describeItems(summary)).toBe('288 rated items in 24 cases (48 unrated)')
    expect(describeItems({ ...summary, unrated_items: 0 })).toBe('288 rated items in 24 cases')
    // A report from before the split.
    expect(describeItems({ items: 336, cases: 24 } as Report['summary'])).toBe('336 items in 24 cases')
  })

  it('is not estimable, not failed, when there is no r', () => {
    const none = { n: 2, not_estimable: 'needs at least 4 paired items, has 2' }
    const v = { meets_bar: false, lower_bound_meets_bar: false, pearson: none, standing: 'not_estimable' } as Verdict
    expect(verdictStanding(v)).toBe('not-estimable')
    // A report from before `standing` says it by its r alone.
    expect(verdictStanding({ ...v, standing: undefined })).toBe('not-estimable')
  })

  it('lists all items first, then the chosen column’s subgroups', () => {
    const dimension = {
      dimension: 'overall',
      overall: section(10),
      groups: [
        { column: 'model', value: 'a', section: section(4) },
        { column: 'modality', value: 'MR', section: section(7) },
        { column: 'model', value: 'b', section: section(6) },
      ],
    } as DimensionReport
    expect(subgroupColumns(dimension)).toEqual(['model', 'modality'])
    expect(sectionRows(dimension, 'model').map((r) => [r.label, r.section.n_items])).toEqual([
      ['all items', 10],
      ['model = a', 4],
      ['model = b', 6],
    ])
    expect(sectionRows(dimension, null)).toHaveLength(4)
    expect(sectionRows(dimension, null)[0].group).toBeNull()
  })

  it('words a subgroup against the rest with its sign, and says when it was not tested', () => {
    const tested = {
      r_vs_rest: { estimate: 0.05, low: -0.021, high: 0.114, method: 'case bootstrap', resamples: 2000, cases: 12 },
      compared_with_rest: 'no difference shown',
    } as GroupSection
    expect(versusRest(tested)).toBe('+0.05 (−0.02 to 0.11): no difference shown')
    const worse = { ...tested, r_vs_rest: { ...tested.r_vs_rest!, estimate: -0.2, low: -0.3, high: -0.1 }, compared_with_rest: 'worse' }
    expect(versusRest(worse)).toBe('−0.20 (−0.30 to −0.10): worse')
    expect(versusRest({ r_vs_rest: null, compared_with_rest: 'not tested' } as GroupSection)).toBe('not tested')
  })
})

describe('progress', () => {
  it('says what it is doing before the first event, then resamples with a percentage', () => {
    expect(progressText(null)).toBe('reading the study…')
    expect(progressText({ done: 1500, total: 44000 })).toBe('1,500 of 44,000 resamples (3 %)')
    expect(progressText({ done: 44000, total: 44000 })).toBe('44,000 of 44,000 resamples (100 %)')
  })
})

describe('the decision is read first, once', () => {
  it('takes the decision off the summary it begins, and leaves an older report whole', () => {
    const v = { decision: 'Decision: not yet.', summary: 'Decision: not yet. On overall, r is 0.8.' } as Verdict
    expect(summaryAfterDecision(v)).toBe('On overall, r is 0.8.')
    expect(summaryAfterDecision({ summary: 'On overall, r is 0.8.' } as Verdict)).toBe('On overall, r is 0.8.')
  })
})

describe('error rates at the design', () => {
  it('gives the simulated rate with its simulation error, and never a number for a rate not simulated', () => {
    const rate = { nominal: 0.025, estimated: 0.031, simulation_se: 0.0123, simulations: 200, resamples: 199, note: null, test: null } as ErrorRate
    expect(errorRateText(rate)).toBe('3.1 % (± 1.2; nominal 2.5 %)')
    expect(errorRateText({ ...rate, estimated: null, simulation_se: null, note: 'not simulated at this size' })).toBe('not estimated')
    expect(errorRateText(undefined)).toBe('not estimated')
  })
})

describe('ppi rows', () => {
  it('gives the figures of an estimable row and null for a not-estimable one', () => {
    const figures = {
      estimate: 3.1, low: 2.9, high: 3.3, n_labelled: 40, n_unlabelled: 960, n_cases: 200, lambda: 0.6,
      clinicians_only: { estimate: 3.0, low: 2.7, high: 3.3 }, grader_only: { estimate: 3.4, low: 3.35, high: 3.45 }, effective_n: 70,
    }
    const row = { model: 'm1', target: 'mean_score' as const, method: 'PPI++', ...figures }
    expect(ppiFigures(row)?.effective_n).toBe(70)
    expect(ppiFigures({ model: 'm1', target: 'correct', method: 'PPI++', n: 1, not_estimable: 'too few reads' })).toBeNull()
    expect(ppiTarget('correct')).toBe('share judged correct')
    expect(ppiTarget('mean_score')).toBe('mean score')
    expect(ppiTarget('pass@5')).toBe('pass@5 (tasks)')
  })
})

describe('reliabilityCells', () => {
  const row = {
    name: 'judge-v1', kind: 'grader' as const, items: 5, requests: 6, prompt_tokens: 12345, completion_tokens: 678,
    mean_tokens_per_item: 2604.6, latency_ms_p50: 1234.4, latency_ms_p95: 2500.6, malformed_output_rate: 1 / 6, cost: 0.01506,
  }
  it('shows tokens, latency in whole ms, the malformed share in per cent and the cost', () => {
    expect(reliabilityCells(row)).toEqual({
      tokens: '12,345 / 678', perItem: '2605', p50: '1,234 ms', p95: '2,501 ms', malformed: '16.7 %', cost: '0.0151',
    })
  })
  it('shows a dash for a model\'s malformed share and for a cost without prices', () => {
    const cells = reliabilityCells({ ...row, kind: 'model', malformed_output_rate: null, cost: null })
    expect([cells.malformed, cells.cost]).toEqual(['—', '—'])
    expect(reliabilityCells({ ...row, cost: undefined }).cost).toBe('—')
  })
})

describe('shareText', () => {
  it('gives the share and its interval in whole per cent, or a dash when not estimable', () => {
    expect(shareText({ value: 2 / 3, low: 0.3, high: 0.904, n: 6, n_cases: 2, effective_cases: 1.8 })).toBe('67 % (30–90 %)')
    expect(shareText({ n: 0, not_estimable: 'no decided answer' })).toBe('—')
  })
})

describe('modelRowLabel', () => {
  it('names the model, and on a family row its family and level with spaces around each dot', () => {
    expect(modelRowLabel({ model: 'm' })).toBe('m')
    expect(modelRowLabel({ model: 'm', task_family: 'differential_diagnosis', level: '2' })).toBe('m · differential_diagnosis · level 2')
  })
})
