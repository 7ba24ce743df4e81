import { describe, expect, it } from 'vitest'
import { fmt, interval, pValue, reasonOf, sectionRows, subgroupColumns, valueOf, verdictStanding } from './report'
import type { DimensionReport, Section, Verdict } from './report'

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
    const v = (meets: boolean, lower: boolean) => ({ meets_bar: meets, lower_bound_meets_bar: lower }) as Verdict
    expect(verdictStanding(v(true, true))).toBe('pass')
    expect(verdictStanding(v(true, false))).toBe('partial')
    expect(verdictStanding(v(false, false))).toBe('fail')
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
  })
})
