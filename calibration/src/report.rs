//! The calibration report: what it compares, as a serialisable model.
//!
//! [`build_report`] turns a [`CalibrationInput`] into a [`Report`]; `json`, `tables` and `html`
//! render it. The JSON schema is documented in `docs/report-schema.md`.

use crate::alt_test::{alt_test, AltTest};
use crate::bland_altman::{bland_altman, BlandAltman};
use crate::bootstrap::{cluster_bootstrap, BootstrapConfig, BootstrapInterval, Progress};
use crate::correlation::{kendall_tau_b, pearson, spearman, KendallTauB, Pearson, Spearman};
use crate::estimate::Estimate;
use crate::icc::{icc, Icc, MeanSquares};
use crate::input::{default_bucket, CalibrationInput, ReportOptions};
use crate::intra_rater::{intra_rater_report, IntraRaterReport};
use crate::kappa::{cohen_kappa, fleiss_kappa, Categories, CohenKappa, FleissKappa, KappaValue};
use crate::krippendorff::{krippendorff_alpha, KrippendorffAlpha};
use crate::missed_findings::{missed_findings_report, MissedFindingsReport};
use crate::precision::{precision_guidance, PrecisionGuidance};
use crate::proportions::{pass_at_k, wilson, Proportion};
use crate::ratings::RatingMatrix;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Bumped when a field changes meaning or disappears (additions keep the version).
pub const SCHEMA_VERSION: u32 = 1;

/// Why a report cannot be built at all (as opposed to a statistic that is not estimable).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportError {
    #[error("grader: rater '{name}' does not appear in the ratings (raters: {known})")]
    GraderNotFound { name: String, known: String },
    #[error("other grader version: rater '{name}' does not appear in the ratings")]
    GraderVersionNotFound { name: String },
    #[error("ratings: the table holds no scores")]
    Empty,
    #[error("ratings: no human raters besides the grader")]
    NoHumanRaters,
    #[error("scale: min {min}, max {max}, step {step} do not describe a scale (need step > 0, max ≥ min, at most 1000 levels)")]
    BadScale { min: f64, max: f64, step: f64 },
    #[error("score: {rater} scored item '{item}' {score} on '{dimension}', outside the scale {min} to {max}")]
    ScoreOutsideScale {
        item: String,
        rater: String,
        dimension: String,
        score: f64,
        min: f64,
        max: f64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// The audit head of the database the input was read from (`N:HASH`); `None` from a CSV.
    pub audit_head: Option<String>,
    pub options: ReportOptions,
    pub summary: InputSummary,
    pub verdict: Option<Verdict>,
    pub dimensions: Vec<DimensionReport>,
    pub grader_drift: Vec<DriftEntry>,
    pub error_categories: Option<ErrorCategoryReport>,
    pub error_distribution: Option<ErrorDistribution>,
    pub pass_at_k: Vec<PassAtKRow>,
    /// Test-retest of clinicians who read responses twice; `None` without repeat reads.
    pub intra_rater: Option<IntraRaterReport>,
    /// Ground-truth lesions responses did not mention; `None` when not checked.
    pub missed_findings: Option<MissedFindingsReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputSummary {
    pub items: usize,
    pub cases: usize,
    pub scores: usize,
    pub human_raters: Vec<String>,
    pub grader: Option<String>,
    pub dimensions: Vec<String>,
    pub grouping_columns: Vec<String>,
}

/// The answer up top: does the grader clear the bar?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub dimension: String,
    pub bar_pearson_r: f64,
    pub pearson: Estimate<Pearson>,
    /// r ≥ bar.
    pub meets_bar: bool,
    /// The 95 % lower bound ≥ bar (the claim a reviewer would sign).
    pub lower_bound_meets_bar: bool,
    /// Clinicians' agreement with each other (ICC2), the ceiling to compare with.
    pub human_icc2: Option<f64>,
    pub bias: Option<f64>,
    pub alt_test_passed: Option<bool>,
    pub precision: Option<PrecisionGuidance>,
    /// The verdict in plain words.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionReport {
    pub dimension: String,
    pub overall: Section,
    pub groups: Vec<GroupSection>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSection {
    pub column: String,
    pub value: String,
    pub section: Section,
}

/// All agreement figures for one set of items (a dimension, or a subgroup of it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub n_items: usize,
    pub n_cases: usize,
    pub human_human: HumanAgreement,
    pub grader: Option<GraderAgreement>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HumanAgreement {
    pub raters: Vec<String>,
    pub icc: Icc,
    pub krippendorff_alpha: KrippendorffAlpha,
    pub fleiss_kappa: Estimate<FleissKappa>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraderAgreement {
    pub vs_human_mean: VsHumanMean,
    pub vs_each_rater: Vec<VsRater>,
    pub leave_one_rater_out: Vec<LeaveOneOut>,
    pub degradation: Vec<DegradationRow>,
    pub alt_test: Estimate<AltTest>,
}

/// The grader against the per-item mean of the clinicians who scored the item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VsHumanMean {
    pub n: usize,
    pub pearson: Estimate<Pearson>,
    pub spearman: Estimate<Spearman>,
    pub kendall_tau_b: Estimate<KendallTauB>,
    /// grader − clinicians' mean.
    pub bland_altman: Estimate<BlandAltman>,
    /// Against the clinicians' consensus: their mean rounded to the nearest scale level.
    pub cohen_kappa: CohenKappa,
    /// ICC with the grader as one more rater (items scored by everyone).
    pub icc: Icc,
    pub bootstrap: BootstrapBlock,
    pub precision: Option<PrecisionGuidance>,
    /// The paired scores, for plots: (grader, clinicians' mean).
    pub pairs: Vec<[f64; 2]>,
}

/// Cluster-bootstrap intervals (cases resampled) beside the analytic ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapBlock {
    pub pearson_r: Estimate<BootstrapInterval>,
    pub bias: Estimate<BootstrapInterval>,
    #[serde(rename = "ICC2")]
    pub icc2: Estimate<BootstrapInterval>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VsRater {
    pub rater: String,
    pub n: usize,
    pub pearson: Estimate<Pearson>,
    pub spearman: Estimate<Spearman>,
    pub kendall_tau_b: Estimate<KendallTauB>,
    /// grader − this clinician.
    pub bland_altman: Estimate<BlandAltman>,
    pub cohen_kappa: CohenKappa,
}

/// Held-out clinician j: the grader vs the mean of the other clinicians, beside j vs that mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeaveOneOut {
    pub held_out: String,
    pub grader_vs_rest: PairSummary,
    pub held_out_vs_rest: PairSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairSummary {
    pub n: usize,
    pub pearson: Estimate<Pearson>,
    pub mean_absolute_difference: Estimate<f64>,
    pub bland_altman: Estimate<BlandAltman>,
}

/// grader–human minus human–human for one statistic (negative: the grader agrees less).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DegradationRow {
    pub statistic: String,
    pub grader_human: Estimate<f64>,
    pub human_human: Estimate<f64>,
    pub difference: Estimate<f64>,
    /// How many comparisons each side averages.
    pub comparisons: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftEntry {
    pub dimension: String,
    pub version: String,
    pub vs_primary: PairSummary,
    pub vs_human_mean: Estimate<Pearson>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorCategoryReport {
    pub items: usize,
    pub high_score_threshold: Option<f64>,
    pub categories: Vec<CategoryAgreement>,
    pub dangerous_cases: Vec<DangerousCase>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryAgreement {
    pub category: String,
    pub n: usize,
    pub grader_claimed: usize,
    pub clinicians_labelled: usize,
    pub cohen_kappa: Estimate<KappaValue>,
    /// Of the items where the grader claimed the error, the share clinicians confirmed.
    pub precision: Option<Proportion>,
    /// Of the items where clinicians found the error, the share the grader claimed.
    pub recall: Option<Proportion>,
}

/// The grader scored high, and a clinician found an error of severity ≥ 2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DangerousCase {
    pub item: String,
    pub case: Option<String>,
    pub grader_score: f64,
    pub human_mean: Option<f64>,
    pub errors: Vec<FoundError>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FoundError {
    pub category: String,
    pub severity: u8,
    pub rater: String,
    pub grader_claimed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorDistribution {
    /// Distinct (item, category) errors found by clinicians.
    pub total: usize,
    pub by_category: Vec<NamedShare>,
    pub by_bucket: Vec<NamedShare>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedShare {
    pub name: String,
    #[serde(flatten)]
    pub share: Proportion,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassAtKRow {
    pub model: String,
    pub task_family: String,
    pub level: String,
    pub k: usize,
    pub pass_at_k: Estimate<PassAtK>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassAtK {
    pub value: f64,
    /// 95 % t interval over tasks, clipped to [0, 1].
    pub ci_low: f64,
    pub ci_high: f64,
    /// Tasks with at least k samples.
    pub n: usize,
    /// Tasks with fewer than k samples, left out.
    pub tasks_skipped: usize,
}

/// One dimension's scores arranged for the statistics.
struct Scores<'a> {
    items: Vec<&'a str>,
    humans: RatingMatrix,
    grader: Vec<Option<f64>>,
    cases: Vec<String>,
}

/// Builds the report. Fails only when the input cannot be interpreted (unknown grader, empty
/// table); everything else becomes a not-estimable figure.
pub fn build_report(
    input: &CalibrationInput,
    options: &ReportOptions,
    progress: &dyn Progress,
) -> Result<Report, ReportError> {
    let table = &input.table;
    if table.scores.is_empty() {
        return Err(ReportError::Empty);
    }
    let raters: BTreeSet<&str> = table.scores.iter().map(|s| s.rater.as_str()).collect();
    if let Some(name) = &options.grader {
        if !raters.contains(name.as_str()) {
            return Err(ReportError::GraderNotFound {
                name: name.clone(),
                known: raters.iter().copied().collect::<Vec<_>>().join(", "),
            });
        }
    }
    for version in &options.other_grader_versions {
        if !raters.contains(version.as_str()) {
            return Err(ReportError::GraderVersionNotFound {
                name: version.clone(),
            });
        }
    }
    let categories = match options.scale {
        Some(s) => Some(Categories::from_scale(s.min, s.max, s.step).ok_or(
            ReportError::BadScale {
                min: s.min,
                max: s.max,
                step: s.step,
            },
        )?),
        None => None,
    };
    if let Some(scale) = options.scale {
        // A score off the scale is a data error (a typo, a 0–10 file read as 1–5), never a
        // figure to average silently.
        let tolerance = 1e-9 * (scale.max - scale.min).abs().max(1.0);
        if let Some(off) = table
            .scores
            .iter()
            .find(|s| s.score < scale.min - tolerance || s.score > scale.max + tolerance)
        {
            return Err(ReportError::ScoreOutsideScale {
                item: off.item.clone(),
                rater: off.rater.clone(),
                dimension: off.dimension.clone(),
                score: off.score,
                min: scale.min,
                max: scale.max,
            });
        }
    }
    let is_grader = |r: &str| {
        options.grader.as_deref() == Some(r) || options.other_grader_versions.iter().any(|v| v == r)
    };
    let humans: Vec<String> = raters
        .iter()
        .filter(|r| !is_grader(r))
        .map(|r| r.to_string())
        .collect();
    if humans.is_empty() {
        return Err(ReportError::NoHumanRaters);
    }
    let mut dimensions: Vec<String> = table
        .scores
        .iter()
        .map(|s| s.dimension.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // "overall" first: it is the dimension the verdict speaks about.
    if let Some(position) = dimensions.iter().position(|d| d == "overall") {
        let overall = dimensions.remove(position);
        dimensions.insert(0, overall);
    }

    let all_items: BTreeSet<&str> = table.scores.iter().map(|s| s.item.as_str()).collect();
    let case_of = |item: &str| -> String {
        table
            .items
            .get(item)
            .and_then(|i| i.case.clone())
            .unwrap_or_else(|| item.to_string())
    };
    let cases: BTreeSet<String> = all_items.iter().map(|i| case_of(i)).collect();

    // Every bootstrap reports into one bar: offsets by the resamples already done.
    let groups_per_dimension: usize = table
        .grouping_columns
        .iter()
        .map(|c| {
            table
                .items
                .values()
                .filter_map(|i| i.groups.get(c))
                .collect::<BTreeSet<_>>()
                .len()
        })
        .sum();
    let sections_total = dimensions.len() * (1 + groups_per_dimension);
    let mut sections_done = 0usize;

    let mut dimension_reports = Vec::new();
    let mut drift = Vec::new();
    for dimension in &dimensions {
        let scores = arrange(
            input,
            dimension,
            &humans,
            options.grader.as_deref(),
            &case_of,
        );
        let section_categories = categories.clone().unwrap_or_else(|| {
            Categories::from_values(
                table
                    .scores
                    .iter()
                    .filter(|s| &s.dimension == dimension)
                    .map(|s| s.score),
            )
        });
        let overall = {
            let offset = OffsetProgress::new(progress, sections_done, sections_total);
            sections_done += 1;
            section(
                &scores,
                None,
                &humans,
                &section_categories,
                options,
                &offset,
            )
        };
        let mut groups = Vec::new();
        for column in &table.grouping_columns {
            let values: BTreeSet<&String> = scores
                .items
                .iter()
                .filter_map(|i| table.items.get(*i).and_then(|info| info.groups.get(column)))
                .collect();
            for value in values {
                let keep: Vec<bool> = scores
                    .items
                    .iter()
                    .map(|i| {
                        table.items.get(*i).and_then(|info| info.groups.get(column)) == Some(value)
                    })
                    .collect();
                let offset = OffsetProgress::new(progress, sections_done, sections_total);
                sections_done += 1;
                groups.push(GroupSection {
                    column: column.clone(),
                    value: value.clone(),
                    section: section(
                        &scores,
                        Some(&keep),
                        &humans,
                        &section_categories,
                        options,
                        &offset,
                    ),
                });
            }
        }
        for version in &options.other_grader_versions {
            drift.push(drift_entry(input, dimension, version, &scores, &case_of));
        }
        dimension_reports.push(DimensionReport {
            dimension: dimension.clone(),
            overall,
            groups,
        });
    }

    let verdict = options
        .grader
        .as_ref()
        .and_then(|_| dimension_reports.first())
        .map(|d| verdict(d, options));
    let grader_scores: BTreeMap<&str, f64> = options
        .grader
        .as_deref()
        .map(|g| {
            let dimension = dimensions.first().map(String::as_str).unwrap_or("overall");
            table
                .scores
                .iter()
                .filter(|s| s.rater == g && s.dimension == dimension)
                .map(|s| (s.item.as_str(), s.score))
                .collect()
        })
        .unwrap_or_default();
    let human_means = dimension_reports
        .first()
        .map(|_| {
            let dimension = dimensions.first().map(String::as_str).unwrap_or("overall");
            let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
            for s in table
                .scores
                .iter()
                .filter(|s| s.dimension == dimension && !is_grader(&s.rater))
            {
                let e = sums.entry(s.item.as_str()).or_default();
                e.0 += s.score;
                e.1 += 1;
            }
            sums.into_iter()
                .map(|(k, (sum, n))| (k, sum / n as f64))
                .collect::<BTreeMap<&str, f64>>()
        })
        .unwrap_or_default();

    Ok(Report {
        schema_version: SCHEMA_VERSION,
        audit_head: input.audit_head.clone(),
        options: options.clone(),
        summary: InputSummary {
            items: all_items.len(),
            cases: cases.len(),
            scores: table.scores.len(),
            human_raters: humans.clone(),
            grader: options.grader.clone(),
            dimensions: dimensions.clone(),
            grouping_columns: table.grouping_columns.clone(),
        },
        verdict,
        dimensions: dimension_reports,
        grader_drift: drift,
        error_categories: error_categories(input, options, &grader_scores, &human_means, &case_of),
        error_distribution: error_distribution(input),
        pass_at_k: pass_at_k_table(input, options),
        intra_rater: intra_rater_report(
            &input.repeat_reads,
            &case_of,
            categories.as_ref(),
            options,
        ),
        missed_findings: missed_findings_report(&input.missed_findings),
    })
}

fn arrange<'a>(
    input: &'a CalibrationInput,
    dimension: &str,
    humans: &[String],
    grader: Option<&str>,
    case_of: &dyn Fn(&str) -> String,
) -> Scores<'a> {
    let column: BTreeMap<&str, usize> = humans
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    let mut by_item: BTreeMap<&'a str, (Vec<Option<f64>>, Option<f64>)> = BTreeMap::new();
    for s in input
        .table
        .scores
        .iter()
        .filter(|s| s.dimension == dimension)
    {
        let entry = by_item
            .entry(s.item.as_str())
            .or_insert_with(|| (vec![None; humans.len()], None));
        if Some(s.rater.as_str()) == grader {
            entry.1 = Some(s.score);
        } else if let Some(&c) = column.get(s.rater.as_str()) {
            entry.0[c] = Some(s.score);
        }
    }
    let items: Vec<&str> = by_item.keys().copied().collect();
    let rows: Vec<Vec<Option<f64>>> = by_item.values().map(|v| v.0.clone()).collect();
    Scores {
        cases: items.iter().map(|i| case_of(i)).collect(),
        grader: by_item.values().map(|v| v.1).collect(),
        humans: RatingMatrix::from_rows(&rows),
        items,
    }
}

/// Adapts one bootstrap's progress to its share of the whole report.
struct OffsetProgress<'a> {
    inner: &'a dyn Progress,
    index: usize,
    sections: usize,
}

impl<'a> OffsetProgress<'a> {
    fn new(inner: &'a dyn Progress, index: usize, sections: usize) -> Self {
        OffsetProgress {
            inner,
            index,
            sections,
        }
    }
}

impl Progress for OffsetProgress<'_> {
    fn advance(&self, done: usize, total: usize) {
        self.inner
            .advance(self.index * total + done, self.sections * total);
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn section(
    all: &Scores,
    keep: Option<&[bool]>,
    humans: &[String],
    categories: &Categories,
    options: &ReportOptions,
    progress: &dyn Progress,
) -> Section {
    let kept: Vec<usize> = (0..all.items.len())
        .filter(|&i| keep.is_none_or(|k| k[i]))
        .collect();
    let rows: Vec<Vec<Option<f64>>> = kept.iter().map(|&i| all.humans.row(i).to_vec()).collect();
    let human_matrix = RatingMatrix::from_rows(&rows);
    let grader: Vec<Option<f64>> = kept.iter().map(|&i| all.grader[i]).collect();
    let cases: Vec<&str> = kept.iter().map(|&i| all.cases[i].as_str()).collect();
    let n_cases = cases.iter().collect::<BTreeSet<_>>().len();

    let human_human = HumanAgreement {
        raters: humans.to_vec(),
        icc: icc(&human_matrix),
        krippendorff_alpha: krippendorff_alpha(&human_matrix),
        fleiss_kappa: fleiss_kappa(&human_matrix, categories),
    };
    let grader_agreement = options
        .grader
        .as_ref()
        .filter(|_| grader.iter().any(Option::is_some))
        .map(|_| {
            grader_agreement(
                &human_matrix,
                &grader,
                &cases,
                humans,
                categories,
                options,
                progress,
            )
        });
    Section {
        n_items: kept.len(),
        n_cases,
        human_human,
        grader: grader_agreement,
    }
}

/// Items where the grader and at least one of `columns` scored: (row, grader, mean of columns).
fn grader_vs_mean_of(
    humans: &RatingMatrix,
    grader: &[Option<f64>],
    columns: &[usize],
) -> Vec<(usize, f64, f64)> {
    (0..humans.n_items())
        .filter_map(|i| {
            let g = grader[i]?;
            let row = humans.row(i);
            let present: Vec<f64> = columns.iter().filter_map(|&c| row[c]).collect();
            Some((i, g, mean(&present)?))
        })
        .collect()
}

fn pair_summary(a: &[f64], b: &[f64]) -> PairSummary {
    let n = a.len();
    PairSummary {
        n,
        pearson: pearson(a, b),
        mean_absolute_difference: match n {
            0 => Estimate::not_estimable(0, "no paired items"),
            _ => {
                Estimate::Value(a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>() / n as f64)
            }
        },
        bland_altman: bland_altman(a, b),
    }
}

fn nearest_level(value: f64, categories: &Categories) -> f64 {
    categories
        .levels()
        .iter()
        .copied()
        // Ties go to the higher level: a mean of 3.5 between 3 and 4 becomes 4.
        .min_by(|a, b| {
            (a - value)
                .abs()
                .total_cmp(&(b - value).abs())
                .then(b.total_cmp(a))
        })
        .unwrap_or(value)
}

fn grader_agreement(
    humans: &RatingMatrix,
    grader: &[Option<f64>],
    cases: &[&str],
    names: &[String],
    categories: &Categories,
    options: &ReportOptions,
    progress: &dyn Progress,
) -> GraderAgreement {
    let k = humans.n_raters();
    let all_columns: Vec<usize> = (0..k).collect();
    let paired = grader_vs_mean_of(humans, grader, &all_columns);
    let g: Vec<f64> = paired.iter().map(|p| p.1).collect();
    let h: Vec<f64> = paired.iter().map(|p| p.2).collect();
    let consensus: Vec<f64> = h.iter().map(|&v| nearest_level(v, categories)).collect();

    let with_grader: Vec<Vec<Option<f64>>> = (0..humans.n_items())
        .map(|i| {
            let mut row = humans.row(i).to_vec();
            row.push(grader[i]);
            row
        })
        .collect();
    let with_grader = RatingMatrix::from_rows(&with_grader);

    let pearson_estimate = pearson(&g, &h);
    let precision = pearson_estimate
        .value()
        .and_then(|p| precision_guidance(p.r, p.n, options.bar_pearson_r));
    let vs_human_mean = VsHumanMean {
        n: paired.len(),
        spearman: spearman(&g, &h),
        kendall_tau_b: kendall_tau_b(&g, &h),
        bland_altman: bland_altman(&g, &h),
        cohen_kappa: cohen_kappa(&g, &consensus, categories),
        icc: icc(&with_grader),
        bootstrap: bootstrap_block(&paired, &with_grader, cases, options, progress),
        precision,
        pearson: pearson_estimate,
        pairs: g.iter().zip(&h).map(|(a, b)| [*a, *b]).collect(),
    };

    let vs_each_rater = (0..k)
        .map(|j| {
            let (a, b): (Vec<f64>, Vec<f64>) = (0..humans.n_items())
                .filter_map(|i| Some((grader[i]?, humans.row(i)[j]?)))
                .unzip();
            VsRater {
                rater: names[j].clone(),
                n: a.len(),
                pearson: pearson(&a, &b),
                spearman: spearman(&a, &b),
                kendall_tau_b: kendall_tau_b(&a, &b),
                bland_altman: bland_altman(&a, &b),
                cohen_kappa: cohen_kappa(&a, &b, categories),
            }
        })
        .collect::<Vec<_>>();

    let leave_one_rater_out: Vec<LeaveOneOut> = if k >= 2 {
        (0..k)
            .map(|j| {
                let rest: Vec<usize> = (0..k).filter(|&c| c != j).collect();
                // The same items on both sides: scored by the grader, by j and by someone else.
                let rows: Vec<(f64, f64, f64)> = grader_vs_mean_of(humans, grader, &rest)
                    .into_iter()
                    .filter_map(|(i, g, m)| Some((g, humans.row(i)[j]?, m)))
                    .collect();
                let g: Vec<f64> = rows.iter().map(|r| r.0).collect();
                let held: Vec<f64> = rows.iter().map(|r| r.1).collect();
                let rest_mean: Vec<f64> = rows.iter().map(|r| r.2).collect();
                LeaveOneOut {
                    held_out: names[j].clone(),
                    grader_vs_rest: pair_summary(&g, &rest_mean),
                    held_out_vs_rest: pair_summary(&held, &rest_mean),
                }
            })
            .collect()
    } else {
        Vec::new()
    };

    let degradation = degradation(humans, &leave_one_rater_out, &vs_each_rater, categories);
    GraderAgreement {
        vs_human_mean,
        vs_each_rater,
        degradation,
        leave_one_rater_out,
        alt_test: alt_test(
            humans,
            names,
            grader,
            options.alt_test_epsilon,
            options.alt_test_q,
        ),
    }
}

fn average(values: impl Iterator<Item = Option<f64>>, what: &str) -> (Estimate<f64>, usize) {
    let values: Vec<f64> = values.flatten().collect();
    match mean(&values) {
        Some(m) => (Estimate::Value(m), values.len()),
        None => (
            Estimate::not_estimable(0, format!("no estimable {what}")),
            0,
        ),
    }
}

fn degradation(
    humans: &RatingMatrix,
    loo: &[LeaveOneOut],
    vs_each: &[VsRater],
    categories: &Categories,
) -> Vec<DegradationRow> {
    let row =
        |statistic: &str, (gh, n1): (Estimate<f64>, usize), (hh, n2): (Estimate<f64>, usize)| {
            let difference = match (gh.value(), hh.value()) {
                (Some(a), Some(b)) => Estimate::Value(a - b),
                _ => Estimate::not_estimable(n1.min(n2), "one side is not estimable"),
            };
            DegradationRow {
                statistic: statistic.to_string(),
                grader_human: gh,
                human_human: hh,
                difference,
                comparisons: n1.min(n2),
            }
        };
    let k = humans.n_raters();
    let mut human_pairs_kappa = Vec::new();
    for a in 0..k {
        for b in (a + 1)..k {
            let (x, y): (Vec<f64>, Vec<f64>) = (0..humans.n_items())
                .filter_map(|i| Some((humans.row(i)[a]?, humans.row(i)[b]?)))
                .unzip();
            human_pairs_kappa.push(
                cohen_kappa(&x, &y, categories)
                    .quadratic
                    .value()
                    .map(|v| v.value),
            );
        }
    }
    vec![
        row(
            "pearson_r_vs_mean_of_others",
            average(
                loo.iter()
                    .map(|l| l.grader_vs_rest.pearson.value().map(|p| p.r)),
                "r",
            ),
            average(
                loo.iter()
                    .map(|l| l.held_out_vs_rest.pearson.value().map(|p| p.r)),
                "r",
            ),
        ),
        row(
            "mean_absolute_difference_vs_mean_of_others",
            average(
                loo.iter()
                    .map(|l| l.grader_vs_rest.mean_absolute_difference.value().copied()),
                "difference",
            ),
            average(
                loo.iter()
                    .map(|l| l.held_out_vs_rest.mean_absolute_difference.value().copied()),
                "difference",
            ),
        ),
        row(
            "quadratic_kappa_pairwise",
            average(
                vs_each
                    .iter()
                    .map(|v| v.cohen_kappa.quadratic.value().map(|q| q.value)),
                "kappa",
            ),
            average(human_pairs_kappa.into_iter(), "kappa"),
        ),
    ]
}

/// Per-cluster additive sums: 6 for the grader–mean pairs, 4 + k for the ICC of grader + humans.
fn bootstrap_block(
    paired: &[(usize, f64, f64)],
    with_grader: &RatingMatrix,
    cases: &[&str],
    options: &ReportOptions,
    progress: &dyn Progress,
) -> BootstrapBlock {
    let k = with_grader.n_raters();
    let width = 6 + 4 + k;
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for c in cases {
        let next = index.len();
        index.entry(c).or_insert(next);
    }
    let mut sums = vec![vec![0.0; width]; index.len()];
    // Centring keeps the sums of squares well conditioned.
    let gx = mean(&paired.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap_or(0.0);
    let gy = mean(&paired.iter().map(|p| p.2).collect::<Vec<_>>()).unwrap_or(0.0);
    for &(i, x, y) in paired {
        let s = &mut sums[index[cases[i]]];
        let (x, y) = (x - gx, y - gy);
        s[0] += 1.0;
        s[1] += x;
        s[2] += y;
        s[3] += x * x;
        s[4] += y * y;
        s[5] += x * y;
    }
    let complete: Vec<(usize, Vec<f64>)> = (0..with_grader.n_items())
        .filter_map(|i| {
            Some((
                i,
                with_grader
                    .row(i)
                    .iter()
                    .copied()
                    .collect::<Option<Vec<f64>>>()?,
            ))
        })
        .collect();
    let grand = mean(
        &complete
            .iter()
            .flat_map(|(_, r)| r.iter().copied())
            .collect::<Vec<_>>(),
    )
    .unwrap_or(0.0);
    for (i, row) in &complete {
        let s = &mut sums[index[cases[*i]]];
        let centred: Vec<f64> = row.iter().map(|v| v - grand).collect();
        let row_total: f64 = centred.iter().sum();
        s[6] += 1.0;
        s[7] += row_total;
        s[8] += centred.iter().map(|v| v * v).sum::<f64>();
        s[9] += row_total * row_total;
        for (j, v) in centred.iter().enumerate() {
            s[10 + j] += v;
        }
    }
    let statistics = |s: &[f64]| -> Vec<Option<f64>> {
        let n = s[0];
        let pair = (n >= 4.0).then(|| {
            let (mx, my) = (s[1] / n, s[2] / n);
            let sxx = s[3] - n * mx * mx;
            let syy = s[4] - n * my * my;
            let sxy = s[5] - n * mx * my;
            let r = (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0));
            // Bias of the uncentred differences: the centring shifts it by gx − gy.
            (r, mx - my + gx - gy)
        });
        let icc2 = MeanSquares::from_sums(s[6] as usize, s[7], s[8], s[9], &s[10..])
            .map(|ms| ms.icc2())
            .filter(|v| v.is_finite());
        vec![pair.and_then(|p| p.0), pair.map(|p| p.1), icc2]
    };
    let config = BootstrapConfig {
        resamples: options.bootstrap_resamples,
        seed: options.seed,
    };
    let mut intervals = cluster_bootstrap(&sums, statistics, 3, config, progress).into_iter();
    let clusters = index.len();
    let mut next = |what: &str| {
        match intervals.next().flatten() {
        Some(interval) => Estimate::Value(interval),
        None => Estimate::not_estimable(
            clusters,
            format!("{what}: undefined on the data or on every resample (needs ≥ 2 cases and ≥ 2 resamples)"),
        ),
    }
    };
    BootstrapBlock {
        pearson_r: next("pearson r"),
        bias: next("bias"),
        icc2: next("ICC2"),
    }
}

fn drift_entry(
    input: &CalibrationInput,
    dimension: &str,
    version: &str,
    scores: &Scores,
    _case_of: &dyn Fn(&str) -> String,
) -> DriftEntry {
    let version_scores: BTreeMap<&str, f64> = input
        .table
        .scores
        .iter()
        .filter(|s| s.dimension == dimension && s.rater == version)
        .map(|s| (s.item.as_str(), s.score))
        .collect();
    let (mut v, mut primary, mut v_h, mut h) = (vec![], vec![], vec![], vec![]);
    for (i, item) in scores.items.iter().enumerate() {
        let Some(&score) = version_scores.get(item) else {
            continue;
        };
        if let Some(p) = scores.grader[i] {
            v.push(score);
            primary.push(p);
        }
        let present: Vec<f64> = scores.humans.present_values(i).collect();
        if let Some(m) = mean(&present) {
            v_h.push(score);
            h.push(m);
        }
    }
    DriftEntry {
        dimension: dimension.to_string(),
        version: version.to_string(),
        vs_primary: pair_summary(&v, &primary),
        vs_human_mean: pearson(&v_h, &h),
    }
}

fn verdict(dimension: &DimensionReport, options: &ReportOptions) -> Verdict {
    let bar = options.bar_pearson_r;
    let grader = dimension.overall.grader.as_ref();
    let pearson_estimate = grader
        .map(|g| g.vs_human_mean.pearson.clone())
        .unwrap_or_else(|| {
            Estimate::not_estimable(0, "the grader scored no item of this dimension")
        });
    let human_icc2 = dimension
        .overall
        .human_human
        .icc
        .icc2
        .value()
        .map(|v| v.value);
    let bias = grader.and_then(|g| g.vs_human_mean.bland_altman.value().map(|b| b.bias));
    let alt_test_passed = grader.and_then(|g| g.alt_test.value().map(|a| a.passed));
    let precision = grader.and_then(|g| g.vs_human_mean.precision.clone());
    let (meets_bar, lower_bound_meets_bar, summary) = match pearson_estimate.value() {
        Some(p) => {
            let meets = p.r >= bar;
            let lower = p.ci_low >= bar;
            let mut words = format!(
                "On {} ({} items), the grader's Pearson r with the clinicians' mean is {:.2} (95 % CI {:.2}–{:.2}). ",
                dimension.dimension, p.n, p.r, p.ci_low, p.ci_high
            );
            words.push_str(&if lower {
                format!("It clears the bar of r ≥ {bar:.2} even at the lower end of the interval.")
            } else if meets {
                format!("The estimate reaches the bar of r ≥ {bar:.2}, but the interval's lower end does not: more items are needed to claim it.")
            } else {
                format!("It does not reach the bar of r ≥ {bar:.2}.")
            });
            if let Some(b) = bias {
                words.push_str(&format!(
                    " On average it scores {:.2} points {} than the clinicians.",
                    b.abs(),
                    if b >= 0.0 { "higher" } else { "lower" }
                ));
            }
            if let Some(icc2) = human_icc2 {
                words.push_str(&format!(
                    " Clinicians agree with each other at ICC2 = {icc2:.2} (two-way random effects, absolute agreement, single rater)."
                ));
            }
            match alt_test_passed {
                Some(true) => words.push_str(" It passes the alternative annotator test: it can stand in for one more clinician."),
                Some(false) => words.push_str(" It does not pass the alternative annotator test: it cannot yet stand in for a clinician."),
                None => {}
            }
            (meets, lower, words)
        }
        None => (
            false,
            false,
            format!(
                "The grader's agreement on {} could not be estimated: {}.",
                dimension.dimension,
                pearson_estimate.reason().unwrap_or("unknown reason")
            ),
        ),
    };
    Verdict {
        dimension: dimension.dimension.clone(),
        bar_pearson_r: bar,
        pearson: pearson_estimate,
        meets_bar,
        lower_bound_meets_bar,
        human_icc2,
        bias,
        alt_test_passed,
        precision,
        summary,
    }
}

/// A clinician-side label counts for an item when at least half of the item's reviewers gave it.
fn error_categories(
    input: &CalibrationInput,
    options: &ReportOptions,
    grader_scores: &BTreeMap<&str, f64>,
    human_means: &BTreeMap<&str, f64>,
    case_of: &dyn Fn(&str) -> String,
) -> Option<ErrorCategoryReport> {
    if input.errors.is_empty() {
        return None;
    }
    let threshold = options
        .high_score_threshold
        .or_else(|| match options.scale {
            Some(s) => Some(s.min + 0.75 * (s.max - s.min)),
            None => {
                let mut values: Vec<f64> = grader_scores.values().copied().collect();
                values.sort_by(f64::total_cmp);
                (!values.is_empty()).then(|| crate::bootstrap::quantile(&values, 0.75))
            }
        });
    let categories: BTreeSet<&str> = input
        .errors
        .iter()
        .flat_map(|e| {
            e.grader_claims
                .iter()
                .map(String::as_str)
                .chain(e.clinician_labels.iter().map(|l| l.category.as_str()))
        })
        .collect();
    let mut rows = Vec::new();
    for category in categories {
        let mut table = [0.0f64; 4];
        let (mut claimed, mut labelled) = (0usize, 0usize);
        for e in &input.errors {
            let reviewers: BTreeSet<&str> = if e.reviewers.is_empty() {
                e.clinician_labels
                    .iter()
                    .map(|l| l.rater.as_str())
                    .collect()
            } else {
                e.reviewers.iter().map(String::as_str).collect()
            };
            let givers: BTreeSet<&str> = e
                .clinician_labels
                .iter()
                .filter(|l| l.category == category)
                .map(|l| l.rater.as_str())
                .collect();
            let human =
                !reviewers.is_empty() && 2 * givers.len() >= reviewers.len() && !givers.is_empty();
            let grader = e.grader_claims.contains(category);
            claimed += usize::from(grader);
            labelled += usize::from(human);
            table[usize::from(!grader) * 2 + usize::from(!human)] += 1.0;
        }
        let kappa = crate::kappa::cohen_kappa_from_table(&table, 2).unweighted;
        let both = table[0] as usize;
        rows.push(CategoryAgreement {
            category: category.to_string(),
            n: input.errors.len(),
            grader_claimed: claimed,
            clinicians_labelled: labelled,
            cohen_kappa: kappa,
            precision: wilson(both, claimed),
            recall: wilson(both, labelled),
        });
    }
    let mut dangerous = Vec::new();
    if let Some(threshold) = threshold {
        for e in &input.errors {
            let Some(&score) = grader_scores.get(e.item.as_str()) else {
                continue;
            };
            let serious: Vec<FoundError> = e
                .clinician_labels
                .iter()
                .filter(|l| l.severity >= 2)
                .map(|l| FoundError {
                    category: l.category.clone(),
                    severity: l.severity,
                    rater: l.rater.clone(),
                    grader_claimed: e.grader_claims.contains(&l.category),
                })
                .collect();
            if score >= threshold && !serious.is_empty() {
                dangerous.push(DangerousCase {
                    item: e.item.clone(),
                    case: Some(case_of(&e.item)),
                    grader_score: score,
                    human_mean: human_means.get(e.item.as_str()).copied(),
                    errors: serious,
                });
            }
        }
    }
    Some(ErrorCategoryReport {
        items: input.errors.len(),
        high_score_threshold: threshold,
        categories: rows,
        dangerous_cases: dangerous,
    })
}

fn error_distribution(input: &CalibrationInput) -> Option<ErrorDistribution> {
    let found: BTreeSet<(&str, &str)> = input
        .errors
        .iter()
        .flat_map(|e| {
            e.clinician_labels
                .iter()
                .map(move |l| (e.item.as_str(), l.category.as_str()))
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let total = found.len();
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_bucket: BTreeMap<String, usize> = BTreeMap::new();
    for (_, category) in &found {
        *by_category.entry(category).or_default() += 1;
        let bucket = input
            .category_buckets
            .get(*category)
            .cloned()
            .unwrap_or_else(|| default_bucket(category).to_string());
        *by_bucket.entry(bucket).or_default() += 1;
    }
    let shares = |counts: Vec<(String, usize)>| -> Vec<NamedShare> {
        let mut shares: Vec<NamedShare> = counts
            .into_iter()
            .filter_map(|(name, count)| {
                Some(NamedShare {
                    name,
                    share: wilson(count, total)?,
                })
            })
            .collect();
        shares.sort_by(|a, b| b.share.count.cmp(&a.share.count).then(a.name.cmp(&b.name)));
        shares
    };
    Some(ErrorDistribution {
        total,
        by_category: shares(
            by_category
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        ),
        by_bucket: shares(by_bucket.into_iter().collect()),
    })
}

/// A sample counts as correct when most of its judgements say so (a tie counts as incorrect).
fn pass_at_k_table(input: &CalibrationInput, options: &ReportOptions) -> Vec<PassAtKRow> {
    type Key<'a> = (&'a str, &'a str, &'a str);
    let mut votes: BTreeMap<(Key, &str, u32), (usize, usize)> = BTreeMap::new();
    for j in &input.correctness {
        let entry = votes
            .entry((
                (&j.model, &j.task_family, &j.level),
                j.task.as_str(),
                j.sample,
            ))
            .or_default();
        entry.0 += usize::from(j.correct);
        entry.1 += 1;
    }
    let mut tasks: BTreeMap<Key, BTreeMap<&str, (usize, usize)>> = BTreeMap::new();
    for ((key, task, _), (yes, total)) in votes {
        let t = tasks.entry(key).or_default().entry(task).or_default();
        t.0 += 1;
        t.1 += usize::from(2 * yes > total);
    }
    let mut rows = Vec::new();
    for (key, per_task) in &tasks {
        for &k in &options.pass_at {
            let values: Vec<f64> = per_task
                .values()
                .filter_map(|&(n, c)| pass_at_k(n, c, k))
                .collect();
            let skipped = per_task.len() - values.len();
            let estimate = match mean(&values) {
                None => Estimate::not_estimable(0, format!("no task has {k} or more samples")),
                Some(value) => {
                    let n = values.len();
                    let (lo, hi) = if n >= 2 {
                        let sd = (values.iter().map(|v| (v - value).powi(2)).sum::<f64>()
                            / (n - 1) as f64)
                            .sqrt();
                        let t = crate::dist::t_quantile(0.975, (n - 1) as f64).unwrap_or(f64::NAN);
                        let half = t * sd / (n as f64).sqrt();
                        ((value - half).max(0.0), (value + half).min(1.0))
                    } else {
                        (0.0, 1.0)
                    };
                    Estimate::Value(PassAtK {
                        value,
                        ci_low: lo,
                        ci_high: hi,
                        n,
                        tasks_skipped: skipped,
                    })
                }
            };
            rows.push(PassAtKRow {
                model: key.0.to_string(),
                task_family: key.1.to_string(),
                level: key.2.to_string(),
                k,
                pass_at_k: estimate,
            });
        }
    }
    rows
}
