import { describe, expect, it } from 'vitest'
import { ellipseOutline, markFocusRas, markFromGesture, pointsNeeded, thinStroke } from './marks'
import type { Vec3 } from './viewer/geometry'

const AXIAL_SCREEN = { right: [1, 0, 0] as Vec3, up: [0, 1, 0] as Vec3 }

describe('marks from drawing gestures', () => {
  it('stores a point in LPS: x and y negated', () => {
    const mark = markFromGesture('flair', 'point', 'axial', [[10, -20, 30]], AXIAL_SCREEN)
    expect(mark).toEqual({ series_id: 'flair', kind: 'point', plane: 'axial', points_lps_mm: [[-10, 20, 30]] })
  })

  it('keeps an arrow as tail then head, and refuses a zero-length one', () => {
    const stroke: Vec3[] = [[0, 0, 5], [3, 3, 5], [10, 0, 5]]
    expect(markFromGesture('s', 'arrow', 'axial', stroke, AXIAL_SCREEN)?.points_lps_mm).toEqual([
      [-0, -0, 5],
      [-10, -0, 5],
    ])
    expect(markFromGesture('s', 'arrow', 'axial', [[1, 1, 1], [1.1, 1, 1]], AXIAL_SCREEN)).toBeNull()
  })

  it('makes an ellipse from centre to corner: centre and the ends of both semi-axes', () => {
    const mark = markFromGesture('s', 'ellipse', 'axial', [[10, 10, 2], [14, 7, 2]], AXIAL_SCREEN)
    // Semi-axes: +4 along screen-right (x), −3 along screen-up (y).
    expect(mark?.points_lps_mm).toEqual([
      [-10, -10, 2],
      [-14, -10, 2],
      [-10, -7, 2],
    ])
    expect(pointsNeeded('ellipse')).toEqual({ min: 3, max: 3 })
  })

  it('thins a freehand stroke to ≥ 1 mm steps and ends where the pen was lifted', () => {
    const stroke: Vec3[] = [[0, 0, 0], [0.3, 0, 0], [1, 0, 0], [1.5, 0, 0], [2, 0, 0], [2, 1, 0], [2.2, 1, 0]]
    expect(thinStroke(stroke)).toEqual([[0, 0, 0], [1, 0, 0], [2, 0, 0], [2.2, 1, 0]])
    expect(markFromGesture('s', 'freehand', 'axial', stroke, AXIAL_SCREEN)?.points_lps_mm).toHaveLength(4)
    expect(markFromGesture('s', 'freehand', 'axial', [[0, 0, 0], [0.2, 0, 0]], AXIAL_SCREEN)).toBeNull()
  })
})

describe('mark shapes', () => {
  it('samples an ellipse through the ends of its semi-axes', () => {
    const pts = ellipseOutline([0, 0, 0], [4, 0, 0], [0, 2, 0], 4)
    const rounded = pts.map((p) => p.map((v) => Math.round(v * 1e9) / 1e9 + 0))
    expect(rounded).toEqual([[4, 0, 0], [0, 2, 0], [-4, 0, 0], [0, -2, 0]])
  })

  it('focuses on the arrow head and the outline mean', () => {
    expect(markFocusRas({ series_id: 's', kind: 'arrow', plane: 'axial', points_lps_mm: [[0, 0, 0], [5, 6, 7]] })).toEqual([-5, -6, 7])
    expect(
      markFocusRas({ series_id: 's', kind: 'freehand', plane: 'axial', points_lps_mm: [[0, 0, 3], [3, 0, 3], [0, 3, 3]] }),
    ).toEqual([-1, -1, 3])
  })
})
