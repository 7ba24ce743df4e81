// Scales of the study's rubric as score buttons, and what a digit key means on each.

export interface ScaleLike {
  min: number
  max: number
  step: number
  levels: readonly { value: number; descriptor: string }[]
}

/** Every value of a scale: min, min + step, …, max (rounded so 0.1 steps stay exact). */
export function scaleValues(scale: ScaleLike): number[] {
  if (!(scale.step > 0) || scale.max < scale.min) return []
  const n = Math.floor((scale.max - scale.min) / scale.step + 1e-9)
  return Array.from({ length: n + 1 }, (_, i) => Number((scale.min + i * scale.step).toFixed(6)))
}

/**
 * The value a digit key picks: the digit itself when the scale has that value (a 1–5 scale),
 * otherwise the digit-th value counting from 1 (a 0–1 scale in halves: 1 → 0, 2 → 0.5, 3 → 1).
 */
export function valueForDigit(values: readonly number[], digit: number): number | null {
  if (values.includes(digit)) return digit
  if (digit >= 1 && digit <= values.length) return values[digit - 1]
  return null
}

export function descriptorFor(scale: ScaleLike, value: number): string | null {
  return scale.levels.find((l) => Math.abs(l.value - value) < 1e-9)?.descriptor ?? null
}
