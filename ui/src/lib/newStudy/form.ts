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

/** A case's part of the form the lead edits (group, note, tasks), as text to compare: what the
 * draft holds against what the form shows. */
export function caseForm(c: { disease_group: string; clinical_note: string; tasks: unknown[] }): string {
  return JSON.stringify([c.disease_group, c.clinical_note, c.tasks])
}

/** A task's key images as its field in the draft's table shows them: `s1 19, s2 4`, each the
 * series id and the slice counted from 1, as the reading screen counts them. */
export function formatKeyImages(keys: { series: string; slice: number }[]): string {
  return keys.map((k) => `${k.series} ${k.slice + 1}`).join(', ')
}

/** The key images typed in the field (`formatKeyImages`'s form), checked against the case's
 * series: the slices stored (from 0), or what is wrong with the text. */
export function parseKeyImages(
  text: string,
  series: { id: string; slices: number }[],
): { keys: { series: string; slice: number }[] } | { problem: string } {
  const keys: { series: string; slice: number }[] = []
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const match = /^(\S+)\s+(\d+)$/.exec(part)
    if (!match) return { problem: `“${part}”: write a series and a slice, e.g. ${series[0]?.id ?? 's1'} 3` }
    const [, id, number] = match
    const found = series.find((s) => s.id === id)
    if (!found) return { problem: `“${part}”: no series ${id} (this case has ${series.map((s) => s.id).join(', ')})` }
    const slice = Number(number)
    if (slice < 1 || slice > found.slices) return { problem: `“${part}”: series ${id} has slices 1 to ${found.slices}` }
    keys.push({ series: id, slice: slice - 1 })
  }
  return { keys }
}
