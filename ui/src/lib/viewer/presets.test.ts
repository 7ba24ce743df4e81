import { describe, expect, it } from 'vitest'
import { CT_PRESETS, dragWindow, presetsFor, rangeToWindow, windowToRange } from './presets'

describe('window presets', () => {
  it('are the neuro CT windows', () => {
    expect(CT_PRESETS.map((p) => [p.name, p.level, p.width])).toEqual([
      ['Brain', 40, 80],
      ['Stroke', 32, 8],
      ['Subdural', 75, 215],
      ['Bone', 600, 2800],
    ])
  })

  it('convert between level/width and the display range as the DICOM linear window does', () => {
    // PS3.3 C.11.2.1.2.1: c = 40, w = 80 → black at or below 40 − 0.5 − 39.5 = 0, white above 79.
    expect(windowToRange(40, 80)).toEqual({ min: 0, max: 79 })
    // c = 75, w = 215: 74.5 ∓ 107.
    expect(windowToRange(75, 215)).toEqual({ min: -32.5, max: 181.5 })
    expect(rangeToWindow(-32.5, 181.5)).toEqual({ level: 75, width: 215 })
    // The range the backend writes for a file's own 40/80 window reads back as 40/80.
    expect(rangeToWindow(0, 79)).toEqual({ level: 40, width: 80 })
  })

  it('offer the CT windows before the volume\'s own for CT, only its own for MR', () => {
    const ct = presetsFor('CT', { min: 0, max: 80 }, { min: -1024, max: 3071 })
    expect(ct.map((p) => p.name)).toEqual(['Brain', 'Stroke', 'Subdural', 'Bone', 'Default', 'Full range'])
    // The 12-bit range −1024…3071 is the window 1024/4096.
    expect(ct[5]).toEqual({ name: 'Full range', level: 1024, width: 4096 })
    const mr = presetsFor('MR', { min: 100, max: 900 }, { min: 0, max: 1300 })
    expect(mr).toEqual([
      { name: 'Default', level: 500.5, width: 801 },
      { name: 'Full range', level: 650.5, width: 1301 },
    ])
  })

  it('add the robust range only when it differs from the opening window', () => {
    const withRobust = presetsFor('MR', { min: 0, max: 1300 }, { min: 0, max: 1275 }, { min: 40, max: 760 })
    expect(withRobust.map((p) => p.name)).toEqual(['Default', 'Robust', 'Full range'])
    expect(withRobust[1]).toEqual({ name: 'Robust', level: 400.5, width: 721 })
    const same = presetsFor('MR', { min: 40, max: 760 }, { min: 0, max: 1275 }, { min: 40, max: 760 })
    expect(same.map((p) => p.name)).toEqual(['Default', 'Full range'])
  })
})

describe('window drag', () => {
  it('widens to the right and darkens downwards in proportion to the width', () => {
    // width 80, sensitivity 0.5 → 0.4 units per pixel.
    expect(dragWindow({ level: 40, width: 80 }, 100, 0)).toEqual({ level: 40, width: 120 })
    expect(dragWindow({ level: 40, width: 80 }, 0, 50)).toEqual({ level: 60, width: 80 })
  })
  it('never narrows below the minimum width', () => {
    expect(dragWindow({ level: 40, width: 8 }, -1000, 0, 0.5, 1).width).toBe(1)
  })
})
