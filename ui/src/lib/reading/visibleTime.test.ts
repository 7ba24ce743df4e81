import { describe, expect, it } from 'vitest'
import { VisibleTime, clockLabel } from './visibleTime'

describe('VisibleTime', () => {
  it('counts only the time between resume and pause, on top of earlier sessions', () => {
    let now = 1000
    const t = new VisibleTime(() => now, 30)
    expect(t.seconds).toBe(30)
    t.resume()
    now += 5000
    expect(t.seconds).toBe(35)
    t.pause()
    now += 60_000 // hidden: not counted
    t.resume()
    t.resume() // a second resume does not restart the interval
    now += 2500
    expect(t.seconds).toBe(37.5)
    t.pause()
    t.pause()
    expect(t.seconds).toBe(37.5)
    expect(t.running).toBe(false)
  })
})

describe('clockLabel', () => {
  it('formats minutes and seconds, and hours when needed', () => {
    expect(clockLabel(0)).toBe('0:00')
    expect(clockLabel(247.9)).toBe('4:07')
    expect(clockLabel(3729)).toBe('1:02:09')
  })
})
