import { describe, expect, it } from 'vitest'
import { OVERSCAN, WINDOW_FROM, rowWindow } from './windowing'

describe('the rows a long list puts in the page', () => {
  it('renders a short list whole, and a long one whole until its sizes are known', () => {
    expect(rowWindow(288, 30, 0, 600)).toEqual({ start: 0, end: 288, before: 0, after: 0 })
    expect(rowWindow(10_000, 0, 0, 600)).toEqual({ start: 0, end: 10_000, before: 0, after: 0 })
    expect(rowWindow(10_000, 30, 0, 0)).toEqual({ start: 0, end: 10_000, before: 0, after: 0 })
  })

  it('renders the visible rows and the overscan, keeping the height of the rest', () => {
    // 600 px of 30 px rows from the top: rows 0–20 visible, 12 more below.
    expect(rowWindow(10_000, 30, 0, 600)).toEqual({ start: 0, end: 21 + OVERSCAN, before: 0, after: (10_000 - 21 - OVERSCAN) * 30 })
    // Scrolled to row 5,000.
    const w = rowWindow(10_000, 30, 150_000, 600)
    expect(w.start).toBe(5000 - OVERSCAN)
    expect(w.end).toBe(5000 + 21 + OVERSCAN)
    expect(w.before + (w.end - w.start) * 30 + w.after).toBe(10_000 * 30)
  })

  it('stays inside the list at its end and past it', () => {
    const w = rowWindow(WINDOW_FROM + 1, 30, 1e9, 600)
    expect(w.end).toBe(WINDOW_FROM + 1)
    expect(w.after).toBe(0)
    expect(w.start).toBe(WINDOW_FROM + 1 - OVERSCAN)
  })
})
