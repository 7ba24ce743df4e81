// The grader workbench's data as the backend sends it (src-tauri/src/commands/workbench.rs).
import type { SliceRef } from '../../types'

export interface GraderSpec {
  name: string
  endpoint: string
  model: string
  api_key_env?: string
  temperature: number
  seed: number
  max_tokens: number
  concurrency: number
  prompt?: string
  requests_per_minute?: number
  price_per_input_token?: number
  price_per_output_token?: number
}

export interface StoredSpec {
  spec: GraderSpec
  spec_sha256: string
  bound_at: string
  /** Results runs stored under this name: a grader's scores, a model's responses. */
  stored: number
}

export interface DiffLine {
  change: 'same' | 'removed' | 'added'
  text: string
}

/** A statistic, or why it could not be computed. */
export type Estimate<T> = T | { n: number; not_estimable: string }

export interface Pearson {
  r: number
  ci_low: number
  ci_high: number
  p: number
  n: number
}

export interface Agreement {
  n_items: number
  n_cases: number
  pearson: Estimate<Pearson>
  mean_difference: number | null
  mean_absolute_difference: number | null
}

export interface GraderOnSplit {
  grader: string
  seed: number
  development_items: number
  test_items: number
  development_graded: number
  development: Agreement
  test: Agreement | null
  confirmed: { by: string; at: string } | null
}

export interface Disagreement {
  response: number
  item: string
  clinician_mean: number
  grader_score: number
  gap: number
}

export interface ItemSideBySide {
  response: number
  case_id: string
  task_id: string
  model: string
  sample: number
  task_prompt: string
  key_images: SliceRef[]
  answer: string
  rationale: string | null
  turns: { role: string; content: string }[] | null
  clinicians: { rater: string; overall: number; errors: { category: string; severity: number; comment: string }[] }[]
  grader_score: number | null
  grader_rationale: string | null
  grader_errors: { category: string; quote?: string }[]
}

export interface VersionDrift {
  n_common: number
  mean_shift: number | null
  pass_at_or_above: number
  flips_to_pass: string[]
  flips_to_fail: string[]
  models: { model: string; n_items: number; mean_before: number; mean_after: number }[]
  ranking_tau: Estimate<{ tau: number; p: number; n: number }>
}

export interface RunProgress {
  name: string
  total: number
  done: number
  tokens: number
  cost: number | null
  failed: [string, string][]
  elapsedMs: number
}

export interface RunOutcome {
  total: number
  stored: number
  failed: [string, string][]
  cancelled: boolean
  prompt_tokens: number
  completion_tokens: number
  cost: number | null
}

export function estimated<T extends object>(e: Estimate<T>): T | null {
  return 'not_estimable' in e ? null : e
}

/** "r = 0.91 (0.83–0.95), n = 40", or why there is no r. */
export function describeAgreement(a: Agreement): string {
  const r = estimated(a.pearson)
  const shift =
    a.mean_difference === null ? '' : `; grader ${a.mean_difference >= 0 ? '+' : '−'}${Math.abs(a.mean_difference).toFixed(2)} vs clinicians`
  if (!r) return `no r: ${(a.pearson as { not_estimable: string }).not_estimable}${shift}`
  return `r = ${r.r.toFixed(2)} (${r.ci_low.toFixed(2)}–${r.ci_high.toFixed(2)}), ${a.n_items} items, ${a.n_cases} cases${shift}`
}

/** The automatic metrics' computation as it goes (src-tauri/src/commands/metrics.rs). */
export interface MetricsProgress {
  done: number
  total: number
  elapsedMs: number
}

export interface MetricsOutcome {
  model: string
  computed: number
  left: number
  cancelled: boolean
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
