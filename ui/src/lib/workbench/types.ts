// The grader workbench's data as the backend sends it (src-tauri/src/commands/workbench.rs): the
// types generated into ../../bindings under the UI's names (a received type is its `_Serialize`
// shape); and the small pure helpers the workbench view builds on.
import type {
  Agreement_Serialize,
  DiffLine,
  Estimate,
  GraderOnSplit_Serialize,
  ItemSideBySide_Serialize,
  MetricsOutcome,
  Pearson,
  RunSummary_Serialize,
  WindowSpec_Serialize,
  WindowStoredSpec_Serialize,
  VersionDrift_Serialize,
  WorkbenchDisagreement,
} from '../../bindings'

export type { DiffLine, Estimate, MetricsOutcome, Pearson }
export type GraderSpec = WindowSpec_Serialize
export type StoredSpec = WindowStoredSpec_Serialize
export type Agreement = Agreement_Serialize
export type GraderOnSplit = GraderOnSplit_Serialize
export type Disagreement = WorkbenchDisagreement
export type ItemSideBySide = ItemSideBySide_Serialize
export type VersionDrift = VersionDrift_Serialize
export type RunOutcome = RunSummary_Serialize

export interface RunProgress {
  name: string
  total: number
  done: number
  tokens: number
  cost: number | null
  failed: [string, string][]
  /** Tasks the run leaves out, listed before its first request: `case/task`, why. */
  skipped: [string, string][]
  elapsedMs: number
}

export function estimated<T extends object>(e: Estimate<T>): T | null {
  return 'not_estimable' in e ? null : e
}

/** A statistic computed at run time with `digits` decimals; "—" where it came out undefined
 * (the backend sends NaN as null). */
export function fixed(value: number | null, digits: number): string {
  return value === null ? '—' : value.toFixed(digits)
}

/** "r = 0.91 (95 % 0.83–0.95, delete-one-case jackknife on Fisher's z, t(11)), 40 items, 12
 * cases", or why there is no r. The interval resamples whole cases, as the calibration report's
 * verdict does (`pearson_case_interval`); the items-as-independent Fisher-z interval is not
 * quoted. */
export function describeAgreement(a: Agreement): string {
  const r = estimated(a.pearson)
  const shift =
    a.mean_difference === null ? '' : `; grader ${a.mean_difference >= 0 ? '+' : '−'}${Math.abs(a.mean_difference).toFixed(2)} vs clinicians`
  if (!r) return `no r: ${(a.pearson as { not_estimable: string }).not_estimable}${shift}`
  const interval = estimated(a.pearson_case_interval)
  const within = interval
    ? `95 % ${fixed(interval.low, 2)}–${fixed(interval.high, 2)}, ${interval.method}`
    : (a.pearson_case_interval as { not_estimable: string }).not_estimable
  return `r = ${fixed(r.r, 2)} (${within}), ${a.n_items} items, ${a.n_cases} cases${shift}`
}

/** The automatic metrics' computation as it goes (src-tauri/src/commands/metrics.rs). */
export interface MetricsProgress {
  done: number
  total: number
  elapsedMs: number
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`
  return `${(seconds / 3600).toFixed(1)} h`
}

/** "2.5/s · about 40 s left" from the rate so far; empty before the first item is done. */
export function describePace(done: number, total: number, elapsedMs: number): string {
  if (done <= 0 || elapsedMs <= 0) return ''
  const perSecond = done / (elapsedMs / 1000)
  const rate = perSecond >= 1 ? `${perSecond.toFixed(1)}/s` : `${(perSecond * 60).toFixed(1)}/min`
  const left = total - done
  return left > 0 ? `${rate} · about ${duration(left / perSecond)} left` : rate
}

/** "12 / 96 stored · 1440 tokens · cost 0.0020 · 2.5/s · about 34 s left". */
export function describeRun(p: RunProgress): string {
  const cost = p.cost === null ? '' : ` · cost ${p.cost.toFixed(4)}`
  const pace = describePace(p.done, p.total, p.elapsedMs)
  return `${p.done} / ${p.total} stored · ${p.tokens} tokens${cost}${pace ? ` · ${pace}` : ''}`
}
