// What the lead's dashboard says after taking the team server's ratings into this database
// (`team_pull`): one summary line, then each rating or curation version left alone and why.

import type { PulledConflict, PullReport } from '../../bindings'

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

function conflictLine(c: PulledConflict): string {
  const read = `${c.rater}, ${c.case_id}/${c.task_id}`
  switch (c.kind) {
    case 'edited_at_lead':
      return `Assignment ${c.assignment} (${read}): this database holds another rating of that read that did not come from the server; it was kept.`
    case 'older_than_pulled':
      return `Assignment ${c.assignment} (${read}): older than the rating taken in before; that one was kept.`
  }
}

export function pulledText(report: PullReport): { summary: string; leftAlone: string[] } {
  const ratings = [
    count(report.added, 'rating added', 'ratings added'),
    `${report.updated} updated`,
    `${report.unchanged} already here`,
  ].join(', ')
  const parts = [ratings]
  if (report.raters_added.length > 0) {
    parts.push(`raters added with the role you gave them on the server: ${report.raters_added.join(', ')}`)
  }
  const curation = report.curation
  if (curation.versions_added > 0 || curation.reviews_added > 0) {
    parts.push(
      `${count(curation.versions_added, 'ground-truth version', 'ground-truth versions')} and ${count(curation.reviews_added, 'review', 'reviews')} added`,
    )
  }
  const leftAlone = [...report.conflicts.map(conflictLine), ...curation.conflicts]
  if (leftAlone.length > 0) parts.push(`${leftAlone.length} left alone (below)`)
  return { summary: `${parts.join('; ')}. Calibration now counts them.`, leftAlone }
}
