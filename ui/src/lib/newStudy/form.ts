// The plain logic of the "New study…" form, kept out of the component so it is unit-tested.
import type { ProblemRow } from './types'

/** Source folders as typed or chosen: one per line, blank lines and surrounding spaces dropped. */
export function sourceList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
}

/** Adds chosen folders to the list in the text box, each once. */
export function addSources(text: string, chosen: string[]): string {
  const list = sourceList(text)
  for (const path of chosen) if (!list.includes(path)) list.push(path)
  return list.join('\n')
}

/** A problem's place as the CLI prints it: `file:line` (the line only when there is one). */
export function problemPlace(problem: ProblemRow): string {
  return problem.line === null ? problem.file : `${problem.file}:${problem.line}`
}

/** A progress bar's fraction, 0 when the total is not known yet. */
export function fraction(done: number, total: number): number {
  return total > 0 ? Math.min(1, done / total) : 0
}

/** The labels a reader names series by (cases::scaffold::Label), offered first in the picker. */
export const KNOWN_LABELS = ['T1', 'T1+C', 'T2', 'FLAIR', 'DWI', 'ADC', 'SWI', 'CT'] as const

/** The labels to offer for a series: the known ones, and its current label if it is another. */
export function labelChoices(current: string): string[] {
  const known: string[] = [...KNOWN_LABELS]
  return known.includes(current) ? known : [current, ...known]
}
