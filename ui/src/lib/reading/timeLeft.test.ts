import { describe, expect, it } from 'vitest'
import { timeLeft } from './timeLeft'

const submitted = (seconds: number) => ({ status: 'submitted' as const, seconds_on_task: seconds })
const fresh = { status: 'not_started' as const, seconds_on_task: null }

describe('timeLeft', () => {
  it('says nothing before a few responses are submitted', () => {
    expect(timeLeft([submitted(60), submitted(90), fresh])).toBeNull()
  })
  it('counts the median pace for each response not started and the rest of it for a draft', () => {
    // Median of 60, 120, 600 s is 120 s: 3 not started (360 s) and a draft 30 s in (90 s) = 450 s.
    const left = timeLeft([submitted(600), submitted(60), submitted(120), fresh, fresh, fresh, { status: 'draft', seconds_on_task: 30 }])
    expect(left).toEqual({ paceSeconds: 120, seconds: 450, text: 'About 8 minutes left at your pace (about 2 minutes a response)' })
  })
  it('takes the mean of the middle two of an even count, and leaves out submissions with no time', () => {
    const left = timeLeft([submitted(60), submitted(120), submitted(180), submitted(240), submitted(0), fresh])
    expect(left?.paceSeconds).toBe(150)
  })
  it('gives hours past ninety minutes, and less than a minute when nearly done', () => {
    const items = [submitted(600), submitted(600), submitted(600), ...Array(14).fill(fresh)]
    expect(timeLeft(items)?.text).toBe('About 2 h 20 min left at your pace (about 10 minutes a response)')
    expect(timeLeft([submitted(20), submitted(20), submitted(20), { status: 'draft', seconds_on_task: 15 }])?.text).toBe(
      'Less than a minute left at your pace (less than a minute a response)',
    )
  })
  it('says nothing once every response is submitted', () => {
    expect(timeLeft([submitted(60), submitted(60), submitted(60)])).toBeNull()
  })
})
