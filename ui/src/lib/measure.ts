// Measurements as the viewer shows them: the tools, and the text drawn beside a measured mark.
// The numbers come from the backend (`series_measure`, computed on the series' own voxels in
// imaging/src/measure.rs); nothing here computes a value, it only words one.

import type { MarkKind, Measurement } from '../types'

/** The measuring tools and the mark kind each draws: a distance is a two-point mark (the arrow's
 * shape, drawn as a ruler), an ROI an ellipse or a freehand outline. */
export type MeasureTool = 'distance' | 'ellipse' | 'freehand'
export const MEASURE_TOOLS: { tool: MeasureTool; kind: MarkKind; label: string }[] = [
  { tool: 'distance', kind: 'arrow', label: 'Distance' },
  { tool: 'ellipse', kind: 'ellipse', label: 'Ellipse ROI' },
  { tool: 'freehand', kind: 'freehand', label: 'Freehand ROI' },
]

/** Kinds of mark that measure something (a point does not). */
export function measures(kind: MarkKind): boolean {
  return kind !== 'point'
}

function fixed(value: number | null, digits: number): string {
  return value === null || !Number.isFinite(value) ? '–' : value.toFixed(digits)
}

/** The lines drawn beside a measured mark: a distance in mm; an ROI's mean ± SD, range, pixels
 * and area, then its bidimensional diameters (RANO: longest × perpendicular, and their product). */
export function measurementLines(m: Measurement): string[] {
  if (m.distance_mm !== null) return [`${fixed(m.distance_mm, 1)} mm`]
  const roi = m.roi
  if (!roi) return []
  const unit = roi.unit ? ` ${roi.unit}` : ''
  if (roi.pixels === 0) return ['no pixel centre inside', `area ${fixed(roi.area_mm2, 1)} mm²`]
  return [
    `mean ${fixed(roi.mean, 1)}${unit} · SD ${fixed(roi.sd, 1)}`,
    `min ${fixed(roi.min, 0)} · max ${fixed(roi.max, 0)}${unit}`,
    `${roi.pixels} px · ${fixed(roi.area_mm2, 1)} mm²`,
    `${fixed(roi.longest_mm, 1)} × ${fixed(roi.perpendicular_mm, 1)} mm (${fixed(roi.product_mm2, 0)} mm²)`,
  ]
}
