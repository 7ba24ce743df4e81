import { describe, expect, it } from 'vitest'
import { measurementLines, measures } from './measure'
import type { Measurement } from '../types'

const roi = (over: Partial<NonNullable<Measurement['roi']>> = {}): Measurement => ({
  distance_mm: null,
  roi: {
    unit: 'HU',
    slice: 17,
    pixels: 3459,
    mean: 20.30008,
    sd: 3.7181,
    min: 10,
    max: 37,
    area_mm2: 699.0986,
    pixel_area_mm2: 698.02,
    longest_mm: 37.4,
    perpendicular_mm: 23.8,
    product_mm2: 890.12,
    longest_lps_mm: [
      [0, 0, 0],
      [1, 0, 0],
    ],
    perpendicular_lps_mm: [
      [0, 0, 0],
      [0, 1, 0],
    ],
    ...over,
  },
})

describe('measurement text', () => {
  it('gives a distance in mm to a tenth', () => {
    expect(measurementLines({ distance_mm: 112.2166, roi: null })).toEqual(['112.2 mm'])
  })

  it('gives an ROI in HU with its pixels, area and RANO diameters', () => {
    expect(measurementLines(roi())).toEqual([
      'mean 20.3 HU · SD 3.7',
      'min 10 · max 37 HU',
      '3459 px · 699.1 mm²',
      '37.4 × 23.8 mm (890 mm²)',
    ])
  })

  it('says signal has no unit, and an ROI with no pixel inside has only its area', () => {
    expect(measurementLines(roi({ unit: '' }))[0]).toBe('mean 20.3 · SD 3.7')
    expect(measurementLines(roi({ pixels: 0, mean: null, sd: null }))).toEqual(['no pixel centre inside', 'area 699.1 mm²'])
  })

  it('measures every kind of mark but a point', () => {
    expect(measures('point')).toBe(false)
    expect(['arrow', 'ellipse', 'freehand'].every((k) => measures(k as 'arrow'))).toBe(true)
  })
})
