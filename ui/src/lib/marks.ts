// Building and showing marks: what the viewer's drawing tools produce, in the stored form
// (`Mark`, DICOM LPS mm; see cases/src/marks.rs), and the shapes drawn back from it.

import type { Mark, MarkKind, Plane } from '../types'
import { lpsToRas, rasToLps, type Vec3 } from './viewer/geometry'

/** The outline stored for a freehand mark is resampled to points at least this far apart (mm). */
export const FREEHAND_MIN_STEP_MM = 1
/** cases::marks::MAX_POINTS */
export const MAX_MARK_POINTS = 2048

/** Points each kind needs: as cases/src/marks.rs checks them. */
export function pointsNeeded(kind: MarkKind): { min: number; max: number } {
  switch (kind) {
    case 'point':
      return { min: 1, max: 1 }
    case 'arrow':
      return { min: 2, max: 2 }
    case 'ellipse':
      return { min: 3, max: 3 }
    case 'freehand':
      return { min: 3, max: MAX_MARK_POINTS }
  }
}

/** Drops stroke points closer than `minStep` mm to the last kept one (the last point is kept). */
export function thinStroke(pointsRas: readonly Vec3[], minStep = FREEHAND_MIN_STEP_MM): Vec3[] {
  const kept: Vec3[] = []
  for (const p of pointsRas) {
    const last = kept[kept.length - 1]
    if (!last || Math.hypot(p[0] - last[0], p[1] - last[1], p[2] - last[2]) >= minStep) kept.push(p)
  }
  // The stroke ends where the pen was lifted: the end replaces the last kept point near it.
  const end = pointsRas[pointsRas.length - 1]
  if (end && kept[kept.length - 1] !== end) kept[kept.length - 1] = end
  return kept.slice(0, MAX_MARK_POINTS)
}

/**
 * The mark a drawing gesture made, or null when it is too small to mean anything (a freehand
 * stroke under 3 distinct points, an arrow or ellipse of zero size).
 * - point: the press; arrow: press (tail) → release (head);
 * - ellipse: centre at the press, axes aligned with the screen to the release corner: the stored
 *   points are the centre and the ends of its two semi-axes, in the plane;
 * - freehand: the stroke, thinned to ≥ 1 mm steps.
 */
export function markFromGesture(
  seriesId: string,
  kind: MarkKind,
  plane: Plane,
  strokeRas: readonly Vec3[],
  screenAxesRas: { right: Vec3; up: Vec3 },
): Mark | null {
  const first = strokeRas[0]
  const last = strokeRas[strokeRas.length - 1]
  if (!first || !last) return null
  let ras: Vec3[]
  switch (kind) {
    case 'point':
      ras = [first]
      break
    case 'arrow':
      if (distance(first, last) < 0.5) return null
      ras = [first, last]
      break
    case 'ellipse': {
      const d: Vec3 = [last[0] - first[0], last[1] - first[1], last[2] - first[2]]
      const along = (axis: Vec3) => d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2]
      const a = along(screenAxesRas.right)
      const b = along(screenAxesRas.up)
      if (Math.abs(a) < 0.5 || Math.abs(b) < 0.5) return null
      const end = (axis: Vec3, len: number): Vec3 => [
        first[0] + axis[0] * len,
        first[1] + axis[1] * len,
        first[2] + axis[2] * len,
      ]
      ras = [first, end(screenAxesRas.right, a), end(screenAxesRas.up, b)]
      break
    }
    case 'freehand':
      ras = thinStroke(strokeRas)
      if (ras.length < 3) return null
      break
  }
  return { series_id: seriesId, kind, plane, points_lps_mm: ras.map(rasToLps) }
}

function distance(a: readonly number[], b: readonly number[]): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2])
}

/** A mark's points in the viewer's RAS world. */
export function markPointsRas(mark: Mark): Vec3[] {
  return mark.points_lps_mm.map(lpsToRas)
}

/** The ellipse's outline (RAS) sampled at `n` points: centre c, semi-axis ends p and q. */
export function ellipseOutline(c: Vec3, p: Vec3, q: Vec3, n = 48): Vec3[] {
  const u = [p[0] - c[0], p[1] - c[1], p[2] - c[2]]
  const v = [q[0] - c[0], q[1] - c[1], q[2] - c[2]]
  return Array.from({ length: n }, (_, k) => {
    const t = (2 * Math.PI * k) / n
    return [0, 1, 2].map((i) => c[i] + Math.cos(t) * u[i] + Math.sin(t) * v[i]) as Vec3
  })
}

/** Where "go to this mark" goes (RAS): the point, the arrow's head, the ellipse's centre, the
 * mean of a freehand outline. */
export function markFocusRas(mark: Mark): Vec3 {
  const pts = markPointsRas(mark)
  if (mark.kind === 'ellipse' || mark.kind === 'point') return pts[0]
  if (mark.kind === 'arrow') return pts[1]
  const n = pts.length
  return [0, 1, 2].map((i) => pts.reduce((s, p) => s + p[i], 0) / n) as Vec3
}
