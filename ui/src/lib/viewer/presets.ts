// Window presets for neuro reading, and the conversions between a window (centre/level and
// width, as readers say it) and NiiVue's display range (cal_min..cal_max).

import type { Modality } from '../../types'

export interface WindowPreset {
  name: string
  /** Window level (centre). */
  level: number
  width: number
}

/** CT presets every neuroradiologist knows (level/width in HU). */
export const CT_PRESETS: readonly WindowPreset[] = [
  { name: 'Brain', level: 40, width: 80 },
  { name: 'Stroke', level: 32, width: 8 },
  { name: 'Subdural', level: 75, width: 215 },
  { name: 'Bone', level: 600, width: 2800 },
]

/**
 * The display range (black at `min`, white at `max`) of a DICOM linear window, PS3.3
 * C.11.2.1.2.1: black at or below c − 0.5 − (w − 1)/2, white above c − 0.5 + (w − 1)/2. The
 * backend builds the opening range from the file's own window by the same rule, so a preset of
 * 40/80 and a file whose window is 40/80 show the same picture and read the same numbers.
 */
export function windowToRange(level: number, width: number): { min: number; max: number } {
  return { min: level - 0.5 - (width - 1) / 2, max: level - 0.5 + (width - 1) / 2 }
}

/** The inverse of {@link windowToRange}. */
export function rangeToWindow(min: number, max: number): { level: number; width: number } {
  return { level: (min + max) / 2 + 0.5, width: max - min + 1 }
}

/**
 * Presets offered for a series, in the order of their number keys (1, 2, …): for CT the four
 * neuro windows; for every series the window it opened with (the file's own window, or for MR
 * without one the backend's 1st–99.5th percentile range), NiiVue's robust range when it differs
 * (its 2nd–98th percentile of the non-zero voxels: a second opinion for MR) and the full range.
 */
export function presetsFor(
  modality: Modality | null,
  opening: { min: number; max: number },
  full: { min: number; max: number },
  robust?: { min: number; max: number },
): WindowPreset[] {
  const own: WindowPreset[] = [{ name: 'Default', ...rangeToWindow(opening.min, opening.max) }]
  if (robust && robust.max > robust.min && (robust.min !== opening.min || robust.max !== opening.max)) {
    own.push({ name: 'Robust', ...rangeToWindow(robust.min, robust.max) })
  }
  own.push({ name: 'Full range', ...rangeToWindow(full.min, full.max) })
  return modality === 'CT' ? [...CT_PRESETS, ...own] : own
}

/**
 * The window after a drag of (dx, dy) pixels, as on a PACS workstation: dragging right widens the
 * window (less contrast), dragging down raises the level (darker). Each 100 pixels change it by
 * `sensitivity` × the current width, so the feel is the same for CT HU and arbitrary MR units.
 * The width never drops below `minWidth`.
 */
export function dragWindow(
  start: { level: number; width: number },
  dx: number,
  dy: number,
  sensitivity = 0.5,
  minWidth = 1,
): { level: number; width: number } {
  const unit = (Math.max(start.width, minWidth) * sensitivity) / 100
  return {
    level: start.level + dy * unit,
    width: Math.max(minWidth, start.width + dx * unit),
  }
}
