// The calibration report as the app receives it: the JSON of docs/report-schema.md (schema
// version 1), plus the plots the HTML report draws. Only the fields the view reads are typed.
// Any statistic may be "not estimable" ({n, not_estimable}); these helpers never turn one into a
// number, and never show NaN.

export interface NotEstimable {
  n: number
  not_estimable: string
}
export type Est<T> = T | NotEstimable

export interface Pearson { r: number; ci_low: number; ci_high: number; p: number; n: number }
export interface Spearman { rho: number; ci_low: number; ci_high: number; p: number; n: number }
export interface KendallTauB { tau: number; p: number; n: number }
export interface BlandAltman {
  bias: number; sd: number; loa_low: number; loa_high: number
  bias_ci_low: number; bias_ci_high: number; n: number
}
export interface IccForm { value: number; ci_low: number; ci_high: number; description: string }
export interface Icc {
  ICC1: Est<IccForm>; ICC2: Est<IccForm>; ICC3: Est<IccForm>
  ICC1k: Est<IccForm>; ICC2k: Est<IccForm>; ICC3k: Est<IccForm>
  n: number
}
export interface Kappa { value: number; se: number; ci_low: number; ci_high: number }
export interface CohenKappa { unweighted: Est<Kappa>; linear: Est<Kappa>; quadratic: Est<Kappa>; n: number }
export interface BootstrapInterval {
  estimate: number; percentile_low: number; percentile_high: number
  bca_low: number | null; bca_high: number | null; resamples: number; clusters: number
}
export interface Precision {
  r: number; n: number; ci_low: number; ci_high: number; ci_width: number
  target_lower_bound: number; n_needed: number | null
  power: number; n_for_power: number | null; design_effect: number | null
  items_per_case: number | null; cases_for_power: number | null
}
export interface PairSummary { n: number; pearson: Est<Pearson>; mean_absolute_difference: Est<number> }
export interface AltTest {
  epsilon: number; q: number; winning_rate: number; average_advantage_probability: number
  passed: boolean; fewer_annotators_than_recommended: boolean
  annotators: { rater: string; n: number; p: number; grader_wins: boolean }[]
}
export interface GraderAgreement {
  vs_human_mean: {
    n: number; pearson: Est<Pearson>; spearman: Est<Spearman>; kendall_tau_b: Est<KendallTauB>
    bland_altman: Est<BlandAltman>; cohen_kappa: CohenKappa; icc: Icc
    bootstrap: { pearson_r: Est<BootstrapInterval>; bias: Est<BootstrapInterval>; ICC2: Est<BootstrapInterval> }
    /** r's delete-one-case jackknife interval on Fisher's z: the verdict's interval. */
    pearson_case_jackknife: Est<FisherJackknife>
    precision: Precision | null
  }
  vs_each_rater: { rater: string; n: number; pearson: Est<Pearson>; bland_altman: Est<BlandAltman>; cohen_kappa: CohenKappa }[]
  leave_one_rater_out: { held_out: string; grader_vs_rest: PairSummary; held_out_vs_rest: PairSummary }[]
  degradation: { statistic: string; grader_human: Est<number>; human_human: Est<number>; difference: Est<number>; comparisons: number }[]
  alt_test: Est<AltTest>
}
export interface Section {
  n_items: number
  n_cases: number
  human_human: {
    raters: string[]
    /** The clinicians ICC and Fleiss κ use: the largest complete panel. */
    panel: Panel
    icc: Icc
    krippendorff_alpha: { nominal: Est<number>; ordinal: Est<number>; interval: Est<number>; n: number }
    fleiss_kappa: Est<{ value: number; n: number }>
    variance_components: Est<VarianceComponents>
  }
  grader: GraderAgreement | null
}
/** Where the clinicians' score variance lies (docs/calibration.md, "Variance components"). */
export interface VarianceComponents {
  design: string
  case: number | null
  item: number
  rater: number
  case_by_rater: number | null
  residual: number
  truncated_at_zero: string[]
  panel_share: number
  n_items: number
  n_cases: number
  n_raters: number
  another_panel: { clinicians: number; icc: number }[]
}
export interface Panel {
  raters: string[]
  left_out: { rater: string; items_scored: number }[]
  n_items: number
  note: string
}
export interface DimensionReport {
  dimension: string
  overall: Section
  groups: GroupSection[]
}
export interface GroupSection {
  column: string
  value: string
  section: Section
  /** The subgroup's r minus the rest's, case bootstrap; null when not tested. */
  r_vs_rest: CaseInterval | null
  /** `better`, `worse`, `no difference shown` or `not tested`. */
  compared_with_rest: string
}
export interface FisherJackknife { estimate: number; bias_corrected: number; low: number; high: number; standard_error_z: number; degrees_of_freedom: number; cases: number }
export interface CaseInterval { estimate: number; low: number; high: number; method: string; resamples: number; cases: number }
export interface Ceiling {
  statistic: string; value: number; low: number; high: number; method: string
  n_items: number; n_cases: number; held_out_clinicians: number
  grader: CaseInterval; difference: CaseInterval
  margin: number; non_inferior: boolean; equivalent: boolean
}
/** The grader against a clinician with clinicians and cases random (issue 33): mean over clinicians of r(grader, others' mean) − r(clinician, others' mean). */
export interface ReadersRandom {
  estimate: number; low: number; high: number; df: number | null
  n_readers: number; n_cases: number; method: string; non_inferior: boolean
}
/** √ICC(A,k) of the clinicians' panel: the highest r any grader can reach with their mean. */
export interface AttainableR { value: number; low: number; high: number; icc_ak: number; raters: number; n_items: number }
/** One claim's one-sided error at the study's design (issue 33, item 2; docs/report-schema.md). */
export interface ErrorRate {
  nominal: number; estimated: number | null; simulation_se: number | null
  simulations: number; resamples: number; note: string | null
  /** The claim's test on the study itself; its `claimed` says whether the test rejects. */
  test: ({ p?: number; p_null?: number | null; claimed: boolean } & Record<string, unknown>) | null
}
export interface ErrorRates {
  bar: ErrorRate; non_inferiority: ErrorRate; simulations: number; method: string
  cases: number; items_per_case: number; clinicians: number; few_cases: boolean
}
export interface Verdict {
  dimension: string; bar_pearson_r: number; statistic: string; pearson: Est<Pearson>
  meets_bar: boolean; lower_bound_meets_bar: boolean
  /** The verdict in one word (additive, issue 41); absent from a report built before it. */
  standing?: 'meets_bar' | 'estimate_meets_bar' | 'below_bar' | 'not_estimable'
  low: number | null; high: number | null; method: string; n_items: number; n_cases: number
  ceiling: Est<Ceiling>
  /** Additive (issue 33); absent from a report built before it. */
  readers_random?: Est<ReadersRandom>
  attainable_r?: Est<AttainableR>
  disattenuated_r?: number | null
  human_icc2: number | null; bias: number | null; alt_test_passed: boolean | null
  precision: Precision | null
  /** One line first: whether the grader may be used, for what, and why (additive, issue 33). */
  decision?: string
  /** Each claim's test and its one-sided error at this design (additive, issue 33 item 2). */
  error_rates?: ErrorRates | null
  summary: string
}
export interface LeftOutScores { dimension: string; scores: number; reason: string }
/** Every rubric version's scores the report leaves out, oldest version first. */
export function leftOutScores(report: Report): (LeftOutScores & { version: number })[] {
  return (report.rubric_versions ?? []).flatMap((v) => (v.left_out ?? []).map((l) => ({ ...l, version: v.version })))
}
export interface Proportion { share: number; ci_low: number; ci_high: number }
/** A model's or grader's spec as the database knows it (`null`s for imported results). */
export interface ManifestSpec {
  kind: 'grader' | 'model'; name: string; sha256: string | null; model: string | null
  endpoint_host: string | null; seed: string | null; temperature: string | null
}
/** What the report was built from (calibration/src/manifest.rs; additive, issue 40). */
export interface Manifest {
  neurorater_version: string
  specs: ManifestSpec[]
  text_metric_model: { id: string; sha256: string | null } | null
  rubric_version: number | null
  taxonomy_sha256: string | null
  /** The report's options, `seed` as a decimal string. */
  options: Record<string, unknown>
  audit_head: string | null
}
export interface Report {
  schema_version: number
  options: {
    grader: string | null; other_grader_versions: string[]; excluded_raters: string[]
    seed: number; bootstrap_resamples: number; bar_pearson_r: number; non_inferiority_margin: number
  }
  /** Absent from a report built before issue 40. */
  manifest?: Manifest
  summary: {
    items: number; cases: number; scores: number; human_raters: string[]; excluded_raters: string[]
    /** Items a clinician scored, those none did, and the rated items' cases (additive, issue 41). */
    rated_items?: number; unrated_items?: number; rated_cases?: number
    grader: string | null; dimensions: string[]; grouping_columns: string[]
  }
  verdict: Verdict | null
  dimensions: DimensionReport[]
  /** Per rubric version, its submitted first reads and the scores of them left out, with why
   * (with the whole report, from a database; `left_out` additive, issue 41). */
  rubric_versions?: { version: number; ratings: number; current: boolean; left_out?: LeftOutScores[] }[]
  grader_drift: { dimension: string; version: string; vs_primary: PairSummary & { bland_altman: Est<BlandAltman> }; vs_human_mean: Est<Pearson> }[]
  error_categories: {
    items: number
    high_score_threshold: number | null
    categories: { category: string; n: number; grader_claimed: number; clinicians_labelled: number; cohen_kappa: Est<Kappa>; precision: Proportion | null; recall: Proportion | null
      precision_by_case: CaseInterval | null; recall_by_case: CaseInterval | null }[]
    dangerous_cases: { item: string; case: string | null; grader_score: number; human_mean: number | null; errors: { category: string; severity: number; rater: string; grader_claimed: boolean }[] }[]
  } | null
  error_distribution: { total: number; by_category: ({ name: string; count: number } & Proportion)[]; by_bucket: ({ name: string; count: number } & Proportion)[] } | null
  pass_at_k: { model: string; task_family: string; level: string; k: number; pass_at_k: Est<{ value: number; ci_low: number; ci_high: number; n: number; tasks_skipped: number }> }[]
  /** Prediction-powered estimates per model × target (additive, issue 35; empty without a grader). */
  ppi?: PpiRow[]
  intra_rater: IntraRater | null
  missed_findings: MissedFindings | null
  /** Only in a report from a database. */
  automatic_metrics?: AutomaticMetrics | null
  /** From a database: what running each model and grader took (additive, issue 39). */
  model_reliability?: ModelReliability[] | null
  /** From a database: each answer matched against its case's curated diagnosis (additive, issue 39). */
  answer_accuracy?: AnswerAccuracyRow[] | null
}

/** A top-1 or top-3 share with its 95 % Wilson interval by case (calibration/src/truth_match.rs). */
export interface MatchShare { value: number; low: number; high: number; n: number; n_cases: number; effective_cases: number }
/** One model's row of the matcher's section, or its task family × level row. */
export interface AnswerAccuracyRow {
  model: string
  task_family?: string
  level?: string
  n: number
  unmatched: number
  exact: number
  contradicted_findings: number
  top1: Est<MatchShare>
  top3: Est<MatchShare>
  /** pass@k per k (keys are the k's in decimal). */
  pass_at: Record<string, Est<{ value: number; ci_low: number; ci_high: number; n: number }>>
  group_accuracy: Est<number>
  macro_f1: Est<number>
  agreement: { against: 'clinicians' | 'grader'; n: number; percent_agreement: Est<number>; kappa: Est<{ value: number; ci_low: number; ci_high: number }> }[]
  /** On the model's own row: what the matcher could not decide, for the curator. */
  undecided?: { item: string; span: string }[]
}

/** A model's row, or its task family × level row: "m", "m · differential_diagnosis · level 2". */
export function modelRowLabel(row: { model: string; task_family?: string; level?: string }): string {
  return row.task_family === undefined ? row.model : `${row.model} · ${row.task_family} · level ${row.level}`
}

/** A matcher share as the table shows it: "67 % (40–88 %)", or the reason it is not estimable. */
export function shareText(share: Est<MatchShare>): string {
  const v = valueOf(share)
  return v ? `${fmt(100 * v.value, 0)} % (${fmt(100 * v.low, 0)}–${fmt(100 * v.high, 0)} %)` : '—'
}

/** One model or grader spec's run records summed (calibration/src/reliability.rs). */
export interface ModelReliability {
  name: string
  kind: 'model' | 'grader'
  items: number
  requests: number
  prompt_tokens: number
  completion_tokens: number
  mean_tokens_per_item: number
  latency_ms_p50: number
  latency_ms_p95: number
  /** Graders only. */
  malformed_output_rate: number | null
  /** Only when every item was run with prices (additive, issue 39). */
  cost?: number | null
}

/** A point estimate with its 95 % interval. */
export interface PpiInterval { estimate: number; low: number; high: number }

/** PPI++ figures of one model and target (calibration/src/ppi.rs). */
export interface PpiFigures extends PpiInterval {
  n_labelled: number
  n_unlabelled: number
  n_cases: number
  lambda: number
  clinicians_only: PpiInterval
  grader_only: PpiInterval
  effective_n: number
}

/** One row of the report's `ppi` list: the figures are flattened into the row, or not estimable. */
export type PpiRow = {
  model: string
  /** Present on a row within the model for one task family and level (`calibrate --ppi-by-task`). */
  task_family?: string
  level?: string
  target: 'mean_score' | 'correct' | `pass@${number}`
  method: string
} & Est<PpiFigures>

/** A PPI row's figures, or null when not estimable. */
export function ppiFigures(row: PpiRow): PpiFigures | null {
  return isNotEstimable(row) ? null : row
}

/** What a PPI row's target means, in words. */
export function ppiTarget(target: PpiRow['target']): string {
  if (target === 'correct') return 'share judged correct'
  if (target === 'mean_score') return 'mean score'
  // pass@k's unit is a task: its counts are of tasks, read when every sample was judged.
  return `${target} (tasks)`
}

/** The "automatic metrics against the clinicians" section (calibration/src/automatic_metrics.rs). */
export interface AutomaticMetrics {
  dimension: string
  metrics_missing: string | null
  against_clinicians: { metric: string; pearson: Est<Pearson>; spearman: Est<Spearman>; pearson_case_interval: CaseInterval | null; n_items: number; n_cases: number }[]
  grader_pass_score: number | null
  pass_at_k: { model: string; task_family: string; level: string; k: number; n_tasks: number; clinicians: number | null; grader: number | null }[]
  verdict_agreement: Est<{ n: number; share_agreeing: number; cohen_kappa: Est<Kappa>; grader_only_pass: number; clinicians_only_pass: number }>
  length_bias: Est<{ summary: string; n_items: number; n_cases: number; interval: CaseInterval | null }>
  self_preference: Est<{ summary: string; own_family_items: number; other_items: number; interval: CaseInterval | null }>
  grader_test_retest: IntraRater | null
}

export interface TestRetest {
  icc: Est<IccForm>
  cohen_kappa: CohenKappa
  mean_absolute_difference: number
  mean_difference: number
  bootstrap: { icc: Est<BootstrapInterval>; quadratic_kappa: Est<BootstrapInterval>; mean_absolute_difference: Est<BootstrapInterval> }
}
/** One clinician's first reads against their repeat reads; `rater` null for the pooled row. */
export interface IntraRaterEntry { rater: string | null; n_pairs: number; n_cases: number; reliability: Est<TestRetest> }
export interface IntraRater { dimension: string; min_pairs: number; min_interpreted_pairs?: number; pooled: IntraRaterEntry; raters: IntraRaterEntry[] }
export interface MissedFindings {
  responses_checked: number
  lesions_checked: number
  missed: number
  by_model: { model: string; responses: number; lesions: number; missed: number; responses_with_miss: number; share_missed: Proportion | null }[]
  findings: { item: string; case: string; model: string; lesion_id: string; description: string; location: string }[]
  not_checked: string | null
}

export interface DimensionPlots { dimension: string; scatter: string; bland_altman: string; confusion: string; forest: string }
export interface Plots {
  dimensions: DimensionPlots[]
  captions: { scatter: string; bland_altman: string; confusion: string; forest: string }
  error_distribution: { svg: string; caption: string }[]
  intra_rater: { svg: string; caption: string } | null
  missed_findings: { svg: string; caption: string } | null
}
export interface CalibrationView {
  report: Report
  plots: Plots
  /** False for the headline: the verdict's dimension alone, sent while the rest is built. */
  complete: boolean
  /** The report was kept from an earlier build on the same data. */
  cached: boolean
}
/** `request` is the view's number for the build the event belongs to. */
export interface CalibrationProgress { request: number; phase: string; done: number; total: number }
export interface CalibrationHeadline { request: number; view: CalibrationView }
export type ExportFormat = 'html' | 'json' | 'csv'

export const NOT_ESTIMABLE = 'not estimable'

export function isNotEstimable(value: unknown): value is NotEstimable {
  return typeof value === 'object' && value !== null && 'not_estimable' in value
}

/** The value of an estimate, or null when it is not estimable or absent. */
export function valueOf<T>(estimate: Est<T> | null | undefined): T | null {
  if (estimate === null || estimate === undefined || isNotEstimable(estimate)) return null
  return estimate
}

/** The reason a statistic is missing, for a tooltip; empty when it is there. */
export function reasonOf(estimate: unknown): string {
  return isNotEstimable(estimate) ? estimate.not_estimable : ''
}

/** A number for a table cell: fixed decimals, a true minus sign; "—" for nothing. */
export function fmt(value: number | null | undefined, decimals = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—'
  return value.toFixed(decimals).replace('-', '−')
}

/** A model reliability row's figures as the table shows them. */
export function reliabilityCells(row: ModelReliability): { tokens: string; perItem: string; p50: string; p95: string; malformed: string; cost: string } {
  const ms = (value: number) => `${Math.round(value).toLocaleString('en-GB')} ms`
  return {
    tokens: `${row.prompt_tokens.toLocaleString('en-GB')} / ${row.completion_tokens.toLocaleString('en-GB')}`,
    perItem: fmt(row.mean_tokens_per_item, 0),
    p50: ms(row.latency_ms_p50),
    p95: ms(row.latency_ms_p95),
    malformed: row.malformed_output_rate === null ? '—' : `${fmt(100 * row.malformed_output_rate, 1)} %`,
    cost: fmt(row.cost ?? null, 4),
  }
}

export function interval(low: number | null | undefined, high: number | null | undefined, decimals = 3): string {
  if (!Number.isFinite(low ?? NaN) || !Number.isFinite(high ?? NaN)) return '—'
  return `${fmt(low, decimals)} to ${fmt(high, decimals)}`
}

export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '—'
  return p < 0.001 ? '< 0.001' : fmt(p, 3)
}

/** How the headline reads: the lower bound clears the bar, only r does, neither, or there is
 * no r to judge (not estimable: its own state, never a failure). */
export function verdictStanding(verdict: Verdict): 'pass' | 'partial' | 'fail' | 'not-estimable' {
  if (verdict.standing === 'not_estimable' || 'not_estimable' in verdict.pearson) return 'not-estimable'
  if (verdict.lower_bound_meets_bar) return 'pass'
  return verdict.meets_bar ? 'partial' : 'fail'
}

/** "288 rated items in 24 cases (48 unrated)": what agreement rests on, and what no clinician
 * scored yet; a report from before the split says "N items in M cases". */
export function describeItems(summary: Report['summary']): string {
  if (summary.rated_items === undefined || summary.unrated_items === undefined) {
    return `${summary.items} items in ${summary.cases} cases`
  }
  const unrated = summary.unrated_items ? ` (${summary.unrated_items} unrated)` : ''
  return `${summary.rated_items} rated items in ${summary.rated_cases ?? summary.cases} cases${unrated}`
}

/** The subgroup columns a dimension breaks down by, in the report's order. */
export function subgroupColumns(dimension: DimensionReport): string[] {
  return [...new Set(dimension.groups.map((g) => g.column))]
}

/** "all items" first, then the subgroups of `column` (every column when `column` is null). */
export function sectionRows(
  dimension: DimensionReport,
  column: string | null,
): { label: string; section: Section; group: GroupSection | null }[] {
  const groups = dimension.groups
    .filter((g) => column === null || g.column === column)
    .map((g) => ({ label: `${g.column} = ${g.value}`, section: g.section, group: g }))
  return [{ label: 'all items', section: dimension.overall, group: null }, ...groups]
}

/** A subgroup's r against the rest's, as the HTML report words it: "+0.05 (−0.02 to 0.11): no
 * difference shown"; the reason alone when it was not tested. */
export function versusRest(group: GroupSection): string {
  const d = group.r_vs_rest
  if (!d) return group.compared_with_rest
  const signed = (v: number) => (v > 0 ? `+${fmt(v, 2)}` : fmt(v, 2))
  return `${signed(d.estimate)} (${interval(d.low, d.high, 2)}): ${group.compared_with_rest}`
}

/** Progress as the view words it: resamples done of the whole report's, with its percentage. */
export function progressText(progress: { done: number; total: number } | null): string {
  if (!progress || progress.total <= 0) return 'reading the study…'
  const percent = Math.min(100, Math.floor((100 * progress.done) / progress.total))
  return `${progress.done.toLocaleString('en')} of ${progress.total.toLocaleString('en')} resamples (${percent} %)`
}

export const DEGRADATION_LABELS: Record<string, string> = {
  pearson_r_vs_mean_of_others: 'Pearson r vs the mean of the others',
  mean_absolute_difference_vs_mean_of_others: 'mean |difference| vs the mean of the others',
  quadratic_kappa_pairwise: 'quadratic κ, pairwise',
}

export const ICC_FORMS = ['ICC1', 'ICC2', 'ICC3', 'ICC1k', 'ICC2k', 'ICC3k'] as const

/** A claim's one-sided error at this design in words: `3.1 % (± 1.2; nominal 2.5 %)`, or why it is missing. */
export function errorRateText(rate: ErrorRate | null | undefined): string {
  if (!rate) return 'not estimated'
  if (rate.estimated === null || rate.simulation_se === null) return 'not estimated'
  return `${fmt(100 * rate.estimated, 1)} % (± ${fmt(100 * rate.simulation_se, 1)}; nominal ${fmt(100 * rate.nominal, 1)} %)`
}

/** The summary without the decision it begins with, for a view that shows the decision above it. */
export function summaryAfterDecision(verdict: Verdict): string {
  const decision = verdict.decision
  return decision && verdict.summary.startsWith(decision) ? verdict.summary.slice(decision.length).trimStart() : verdict.summary
}
