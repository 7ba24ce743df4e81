//! The calibration report: what it compares, as a serialisable model.
//!
//! [`build_report`] turns a [`CalibrationInput`] into a [`Report`]; `json`, `tables` and `html`
//! render it. The JSON schema is documented in `docs/report-schema.md`.

use crate::alt_test::{alt_test, AltTest};
use crate::attainable::{attainable_r, AttainableR};
use crate::bland_altman::{bland_altman, bland_altman_by_case, BlandAltman};
use crate::bootstrap::{cluster_bootstrap, BootstrapConfig, BootstrapInterval, Progress};
use crate::calibration_line::{
    calibration_line, proportional_bias, CalibrationLine, ProportionalBias,
};
use crate::correlation::{kendall_tau_b, pearson, spearman, KendallTauB, Pearson, Spearman};
use crate::estimate::Estimate;
use crate::icc::{icc, Icc, MeanSquares};
use crate::input::{default_bucket, CalibrationInput, ItemErrors, ReportOptions};
use crate::intra_rater::{intra_rater_report, IntraRaterReport};
use crate::jackknife::{case_jackknife_fisher, FisherJackknife};
use crate::kappa::{cohen_kappa, fleiss_kappa, Categories, CohenKappa, FleissKappa, KappaValue};
use crate::krippendorff::{krippendorff_alpha, KrippendorffAlpha};
use crate::missed_findings::{missed_findings_report, MissedFindingsReport};
use crate::panel::{describe_panel, largest_complete_panel, Panel};
use crate::precision::{precision_guidance, Clustering, PrecisionGuidance};
use crate::proportions::{pass_at_k, wilson, wilson_interval, Proportion};
use crate::ratings::RatingMatrix;
use crate::readers_random::{readers_random, HeldOutItem, ReadersRandom};
use crate::scales::{self, DimensionScales};
use crate::variance::{variance_components, Intervals, VarianceComponents};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped when a field changes meaning or disappears (additions keep the version).
pub const SCHEMA_VERSION: u32 = 1;

/// Why a report cannot be built at all (as opposed to a statistic that is not estimable).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportError {
    #[error("grader: rater '{name}' does not appear in the ratings (raters: {known})")]
    GraderNotFound { name: String, known: String },
    #[error("other grader version: rater '{name}' does not appear in the ratings")]
    GraderVersionNotFound { name: String },
    #[error("margin: {0} is not a non-inferiority margin on r (need 0 < margin < 2)")]
    BadMargin(f64),
    #[error("excluded rater: '{name}' does not appear in the ratings (raters: {known})")]
    ExcludedRaterNotFound { name: String, known: String },
    #[error("excluded rater: '{name}' is the grader; a grader is never a clinician to leave out")]
    ExcludedRaterIsGrader { name: String },
    #[error("ratings: the table holds no scores")]
    Empty,
    #[error("ratings: no human raters besides the grader")]
    NoHumanRaters,
    #[error("scale: min {min}, max {max}, step {step} do not describe a scale (need step > 0, max ≥ min, at most 1000 levels)")]
    BadScale { min: f64, max: f64, step: f64 },
    #[error("scale: {rater} on '{dimension}' is declared both {first} and {second}")]
    ConflictingScales {
        rater: String,
        dimension: String,
        first: String,
        second: String,
    },
    #[error("scale mapping: rater '{name}' does not appear in the ratings (raters: {known})")]
    MappedRaterNotFound { name: String, known: String },
    #[error("scale mapping: {rater} on '{dimension}' cannot be mapped onto the clinicians' scale: {reason}")]
    ScaleMappingUndefined {
        rater: String,
        dimension: String,
        reason: String,
    },
    #[error("score: {rater} scored item '{item}' {score} on '{dimension}', outside the scale {min} to {max}")]
    ScoreOutsideScale {
        item: String,
        rater: String,
        dimension: String,
        score: f64,
        min: f64,
        max: f64,
    },
    #[error("cancelled before the report was finished")]
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// The audit head of the database the input was read from (`N:HASH`); `None` from a CSV.
    pub audit_head: Option<String>,
    pub options: ReportOptions,
    /// What the report was built from (docs/formats.md §5); a caller that read a database
    /// completes it (specs, rubric, taxonomy, text-metric model).
    pub manifest: crate::manifest::Manifest,
    pub summary: InputSummary,
    pub verdict: Option<Verdict>,
    pub dimensions: Vec<DimensionReport>,
    pub grader_drift: Vec<DriftEntry>,
    pub error_categories: Option<ErrorCategoryReport>,
    pub error_distribution: Option<ErrorDistribution>,
    pub pass_at_k: Vec<PassAtKRow>,
    /// Prediction-powered (PPI++) estimates per model and target; empty without a grader.
    pub ppi: Vec<crate::ppi::PpiRow>,
    /// Test-retest of clinicians who read responses twice; `None` without repeat reads.
    pub intra_rater: Option<IntraRaterReport>,
    /// Ground-truth lesions responses did not mention; `None` when not checked.
    pub missed_findings: Option<MissedFindingsReport>,
    /// Text metrics and grader against the clinicians, with bias probes; attached by callers that
    /// read a database (`automatic_metrics::automatic_metrics_report`), absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automatic_metrics: Option<crate::automatic_metrics::AutomaticMetricsReport>,
    /// Per rubric dimension, what the ratings hold: scores, "not applicable", not applied to
    /// the task's family, missing. Attached by callers that read a database; absent from a CSV.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimension_coverage: Option<Vec<crate::coverage::DimensionCoverage>>,
    /// Per rubric version, the submitted first reads saved under it; the analyses read the
    /// current version's only. Attached by callers that read a database; absent from a CSV.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rubric_versions: Option<Vec<crate::coverage::RubricVersionCount>>,
    /// Per model and grader spec run by NeuroRater, its reliability from the stored run records
    /// (`crate::reliability`). Attached by callers that read a database; absent from a CSV.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_reliability: Option<Vec<crate::reliability::ModelReliability>>,
    /// Answers matched against the curated diagnosis (`crate::truth_match`, issue 39), per model
    /// and per model × task family × level. Attached by callers that read a database; absent
    /// from a CSV.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_accuracy: Option<Vec<crate::truth_match::AnswerAccuracyRow>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputSummary {
    /// Items with any score, the grader's included.
    pub items: usize,
    pub cases: usize,
    /// Items at least one clinician scored (any dimension): what agreement can rest on.
    /// Additive (issue 41).
    pub rated_items: usize,
    /// Items no clinician scored, though the input knows them (a grader's score, or a response
    /// of the study): counted, never used. `rated_items + unrated_items` ≥ `items`.
    pub unrated_items: usize,
    /// Cases of the rated items.
    pub rated_cases: usize,
    pub scores: usize,
    pub human_raters: Vec<String>,
    /// Clinicians the analyst left out (`ReportOptions::excluded_raters`).
    pub excluded_raters: Vec<String>,
    pub grader: Option<String>,
    pub dimensions: Vec<String>,
    pub grouping_columns: Vec<String>,
}

/// The answer up top: does the grader clear the bar?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub dimension: String,
    pub bar_pearson_r: f64,
    /// What is compared with the bar.
    pub statistic: String,
    /// Its analytic figures (Fisher-z interval, for comparison with papers).
    pub pearson: Estimate<Pearson>,
    /// r ≥ bar.
    pub meets_bar: bool,
    /// The verdict's 95 % interval, from resampling cases (`method`): the delete-one-case
    /// jackknife on Fisher's z (see [`crate::jackknife`]), or the case bootstrap where the
    /// jackknife is undefined; `None` when fewer than two cases carry the comparison.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// How `low` and `high` were made, e.g. `delete-one-case jackknife on Fisher's z, t(11), 12
    /// cases`.
    pub method: String,
    /// Items and cases the statistic is computed on.
    pub n_items: usize,
    pub n_cases: usize,
    /// `low` ≥ bar (the claim a reviewer would sign).
    pub lower_bound_meets_bar: bool,
    /// The verdict in one word: the bar met with the interval, by the estimate only, not
    /// reached, or nothing to judge (r not estimable). Additive (issue 41).
    pub standing: Standing,
    /// The like-for-like human figure: a held-out clinician against the others' mean, beside
    /// the grader against the same mean on the same items.
    pub ceiling: Estimate<Ceiling>,
    /// The grader against a clinician, clinicians and cases random: "a clinician" where
    /// `ceiling` says "these clinicians".
    pub readers_random: Estimate<ReadersRandom>,
    /// The highest r any grader can reach with the clinicians' mean: √ICC(A,k) of the panel
    /// (see [`crate::attainable`]).
    pub attainable_r: Estimate<AttainableR>,
    /// r / √ICC(A,k): the grader's r against a perfectly reliable mean; unclipped (it can
    /// exceed 1 by sampling error). `None` where either is not estimable.
    pub disattenuated_r: Option<f64>,
    /// Clinicians' agreement with each other (ICC2, items every clinician scored). Kept for
    /// reference; it is not the ceiling the grader's r is compared with (another statistic on
    /// other items).
    pub human_icc2: Option<f64>,
    pub bias: Option<f64>,
    pub alt_test_passed: Option<bool>,
    pub precision: Option<PrecisionGuidance>,
    /// What the study's own question gets, in one line a clinician reads first: whether the
    /// grader may be used, for what, and why. Additive (issue 33); `summary` begins with it.
    pub decision: String,
    /// The verdict in plain words.
    pub summary: String,
    /// Which items the grader's figures read: all, or the held-out test cases (additive, issue 33).
    pub items_used: crate::input::ItemsUsed,
    /// Each claim as a one-sided test (the bar: case bootstrap-t on Fisher's z; non-inferiority
    /// to a clinician: null imposed at −margin) and the one-sided error it has at this study's
    /// design, by parametric bootstrap of its fitted variance components (see
    /// [`crate::error_rates`]). `None` without a grader. Additive (issue 33, item 2).
    pub error_rates: Option<crate::error_rates::ErrorRates>,
}

/// Where the grader stands against the bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// The interval's lower end clears the bar.
    MeetsBar,
    /// r reaches the bar, the interval's lower end does not: more cases are needed.
    EstimateMeetsBar,
    /// r is below the bar.
    BelowBar,
    /// No r (too few items the grader and clinicians both scored, no variance, …): not a
    /// failure of the grader, nothing to judge yet.
    NotEstimable,
}

/// A 95 % interval from resampling cases, as the report quotes it. A correlation's interval is
/// the delete-one-case jackknife on Fisher's z where defined ([`crate::jackknife`]); every other
/// figure's (differences, means) is the case bootstrap's, BCa where defined, else percentile.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CaseInterval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// `case bootstrap BCa`, `case bootstrap percentile` (BCa undefined on these data) or
    /// `delete-one-case jackknife on Fisher's z, t(G − 1)` with G the cases.
    pub method: String,
    /// Bootstrap resamples, or the jackknife's replicates (one per case left out).
    pub resamples: usize,
    /// Cases resampled.
    pub cases: usize,
    #[serde(skip)]
    #[cfg_attr(feature = "specta", specta(skip))]
    resampling: Resampling,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Resampling {
    Bootstrap,
    Jackknife,
}

impl CaseInterval {
    pub(crate) fn from_bootstrap(b: &BootstrapInterval) -> CaseInterval {
        let (low, high, method) = match (b.bca_low, b.bca_high) {
            (Some(low), Some(high)) => (low, high, "case bootstrap BCa"),
            _ => (
                b.percentile_low,
                b.percentile_high,
                "case bootstrap percentile",
            ),
        };
        CaseInterval {
            estimate: b.estimate,
            low,
            high,
            method: method.to_string(),
            resamples: b.resamples,
            cases: b.clusters,
            resampling: Resampling::Bootstrap,
        }
    }

    pub(crate) fn from_jackknife(j: &FisherJackknife) -> CaseInterval {
        CaseInterval {
            estimate: j.estimate,
            low: j.low,
            high: j.high,
            method: j.method(),
            resamples: j.cases,
            cases: j.cases,
            resampling: Resampling::Jackknife,
        }
    }

    /// A correlation's interval: the jackknife's where defined, else the bootstrap's.
    fn of_correlation(
        jackknife: Option<&FisherJackknife>,
        bootstrap: Option<&BootstrapInterval>,
    ) -> Option<CaseInterval> {
        jackknife
            .map(CaseInterval::from_jackknife)
            .or_else(|| bootstrap.map(CaseInterval::from_bootstrap))
    }

    /// E.g. `case bootstrap BCa (2000 resamples of 12 cases)` or `delete-one-case jackknife on
    /// Fisher's z, t(11), 12 cases`.
    pub fn describe(&self) -> String {
        match self.resampling {
            Resampling::Bootstrap => format!(
                "{} ({} resamples of {} cases)",
                self.method, self.resamples, self.cases
            ),
            Resampling::Jackknife => format!("{}, {} cases", self.method, self.cases),
        }
    }
}

/// Like for like: for each held-out clinician, the grader and that clinician against the mean of
/// the other clinicians on the same items (scored by the grader, the held-out clinician and at
/// least one other); each side averaged over held-out clinicians.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    /// What `value` is.
    pub statistic: String,
    /// The held-out clinicians' mean r: what one more clinician reaches.
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub method: String,
    /// Distinct items and cases in the comparisons (each held-out clinician's own items).
    pub n_items: usize,
    pub n_cases: usize,
    /// Clinicians held out in turn (those with an estimable r on both sides).
    pub held_out_clinicians: usize,
    /// The grader's mean r with the same means on the same items.
    pub grader: CaseInterval,
    /// grader − clinician, bootstrapped as a difference (the same resamples on both sides).
    pub difference: CaseInterval,
    /// The stated margin (`ReportOptions::non_inferiority_margin`), in units of r.
    pub margin: f64,
    /// The difference's 95 % lower end lies above −margin: the grader is not worse than one more
    /// clinician by more than the margin (one-sided α = 0.025).
    pub non_inferior: bool,
    /// The whole 95 % interval of the difference lies within ± margin (two one-sided tests at
    /// α = 0.025 each).
    pub equivalent: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionReport {
    pub dimension: String,
    /// Each rater's scale, the clinicians' shared scale, declared mappings, and why absolute
    /// agreement is refused when raters scored on different scales.
    pub scales: DimensionScales,
    pub overall: Section,
    pub groups: Vec<GroupSection>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSection {
    pub column: String,
    pub value: String,
    pub section: Section,
    /// This subgroup's r (grader vs the clinicians' mean) minus the r of the dimension's other
    /// items, with its 95 % case-bootstrap interval: the dimension's cases resampled, both sides
    /// from the same resamples. `None` without a grader or when undefined.
    pub r_vs_rest: Option<CaseInterval>,
    /// `better` or `worse` than the rest only when `r_vs_rest`'s interval excludes 0, else
    /// `no difference shown` (or `not tested` without an interval): a subgroup whose r merely
    /// looks lower is not called worse.
    pub compared_with_rest: String,
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
    /// The clinicians the ICC and Fleiss' κ use (the largest complete panel, see [`Panel`]).
    pub panel: Panel,
    pub icc: Icc,
    pub krippendorff_alpha: KrippendorffAlpha,
    pub fleiss_kappa: Estimate<FleissKappa>,
    /// Case, item, rater, case × rater and residual variance on the panel, and what another
    /// panel would likely reach (see [`crate::variance`]).
    pub variance_components: Estimate<VarianceComponents>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraderAgreement {
    pub vs_human_mean: VsHumanMean,
    pub vs_each_rater: Vec<VsRater>,
    pub leave_one_rater_out: Vec<LeaveOneOut>,
    pub degradation: Vec<DegradationRow>,
    /// The like-for-like ceiling of this section (see [`Ceiling`]).
    pub like_for_like: Estimate<Ceiling>,
    /// The same comparison with clinicians random as well as cases (see [`crate::readers_random`]).
    pub readers_random: Estimate<ReadersRandom>,
    pub alt_test: Estimate<AltTest>,
    /// What the verdict's error rates read (per-case sums); not in the JSON.
    #[serde(skip)]
    pub(crate) error_inputs: ErrorInputs,
}

/// Per-case sums for [`crate::error_rates`]: the verdict's pairs (grader, clinicians' mean) for
/// the bar's test, and the items the grader and the whole complete panel scored for the
/// variance components and non-inferiority's test, with their items per case.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ErrorInputs {
    pub pair: Vec<crate::error_rates::PairSums>,
    pub panel: crate::error_rates::StudySums,
    pub items_per_case: Vec<usize>,
}

fn error_inputs(
    humans: &RatingMatrix,
    grader: &[Option<f64>],
    cases: &[&str],
    panel: &[usize],
    paired: &[(usize, f64, f64)],
) -> ErrorInputs {
    let n = paired.len().max(1) as f64;
    let (gc, mc) = (
        paired.iter().map(|p| p.1).sum::<f64>() / n,
        paired.iter().map(|p| p.2).sum::<f64>() / n,
    );
    let index = |rows: &mut dyn Iterator<Item = usize>| -> BTreeMap<&str, usize> {
        let set: BTreeSet<&str> = rows.map(|i| cases[i]).collect();
        set.into_iter().enumerate().map(|(i, c)| (c, i)).collect()
    };
    let pair_cases = index(&mut paired.iter().map(|p| p.0));
    let mut pair = vec![[0.0; 6]; pair_cases.len()];
    for &(i, g, m) in paired {
        let (g, m) = (g - gc, m - mc);
        for (s, v) in pair[pair_cases[cases[i]]]
            .iter_mut()
            .zip([1.0, g, m, g * g, m * m, g * m])
        {
            *s += v;
        }
    }
    let complete: Vec<(usize, f64, Vec<f64>)> = (0..humans.n_items())
        .filter_map(|i| {
            let g = grader[i]?;
            let row = humans.row(i);
            let scores: Option<Vec<f64>> = panel.iter().map(|&j| row[j]).collect();
            Some((i, g - gc, scores?.into_iter().map(|v| v - mc).collect()))
        })
        .collect();
    let panel_cases = index(&mut complete.iter().map(|c| c.0));
    let mut study = crate::error_rates::StudySums::new(panel_cases.len(), panel.len());
    let mut items_per_case = vec![0; panel_cases.len()];
    if panel.len() >= 2 {
        for (i, g, scores) in &complete {
            let case = panel_cases[cases[*i]];
            items_per_case[case] += 1;
            study.add(case, *g, scores);
        }
    }
    ErrorInputs {
        pair,
        panel: study,
        items_per_case,
    }
}

/// The grader against the per-item mean of the clinicians who scored the item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VsHumanMean {
    pub n: usize,
    /// Cases of those items.
    pub n_cases: usize,
    pub pearson: Estimate<Pearson>,
    pub spearman: Estimate<Spearman>,
    pub kendall_tau_b: Estimate<KendallTauB>,
    /// grader − clinicians' mean.
    pub bland_altman: Estimate<BlandAltman>,
    /// grader = a + b · clinicians' mean (b = 1, a = 0 when calibrated).
    pub calibration_line: Estimate<CalibrationLine>,
    /// (grader − clinicians' mean) on the pair's mean: does the disagreement change along the
    /// scale?
    pub proportional_bias: Estimate<ProportionalBias>,
    /// Against the clinicians' consensus: their mean rounded to the nearest scale level.
    pub cohen_kappa: CohenKappa,
    /// ICC with the grader as one more rater (items scored by the grader and the whole panel).
    pub icc: Icc,
    pub bootstrap: BootstrapBlock,
    /// r's delete-one-case jackknife interval on Fisher's z: the verdict's interval.
    pub pearson_case_jackknife: Estimate<FisherJackknife>,
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
    pub calibration_slope: Estimate<BootstrapInterval>,
    pub calibration_intercept: Estimate<BootstrapInterval>,
    pub proportional_bias_slope: Estimate<BootstrapInterval>,
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
    /// Case-bootstrap intervals of the three figures; `None` for pairwise κ (not resampled) or
    /// when fewer than two cases carry the comparison.
    pub grader_human_interval: Option<CaseInterval>,
    pub human_human_interval: Option<CaseInterval>,
    pub difference_interval: Option<CaseInterval>,
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
    /// Items reviewed by fewer than two clinicians: one reviewer's labels are not a consensus, so
    /// these items stay out of the per-category agreement (they still count as dangerous cases).
    pub items_without_consensus: usize,
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
    /// 95 % case-bootstrap intervals of precision and recall (cases resampled: the items of one
    /// case share their images and often their errors, which the Wilson intervals, counting
    /// items as independent, ignore); `None` when undefined or with fewer than two cases.
    pub precision_by_case: Option<CaseInterval>,
    pub recall_by_case: Option<CaseInterval>,
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
    /// Per model (the items' `model` group), every category clinicians found in the study: the
    /// share of the model's reviewed responses labelled with it. This is where a failure one model
    /// has and another lacks shows, e.g. R4 anchoring in multi-turn consultations. Empty when no
    /// item names its model (a CSV without a `model` column).
    pub by_model: Vec<ModelErrors>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelErrors {
    pub model: String,
    /// The model's responses clinicians reviewed for errors.
    pub reviewed: usize,
    /// Of those, how many carry each category (zero counts included), in code order.
    pub by_category: Vec<NamedShare>,
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
    /// 95 % Wilson score interval at `effective_cases` (see [`pass_at_k_table`]).
    pub ci_low: f64,
    pub ci_high: f64,
    /// Tasks with at least k samples.
    pub n: usize,
    /// Cases those tasks belong to.
    pub n_cases: usize,
    /// Kish's effective number of cases, (Σ tasks per case)² / Σ (tasks per case)²: the number
    /// of independent units the interval counts.
    pub effective_cases: f64,
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
    if input.table.scores.is_empty() {
        return Err(ReportError::Empty);
    }
    if options.excluded_raters.is_empty() {
        return build(input, options, progress);
    }
    let raters: BTreeSet<&str> = input
        .table
        .scores
        .iter()
        .map(|s| s.rater.as_str())
        .collect();
    for name in &options.excluded_raters {
        if options.grader.as_ref() == Some(name) || options.other_grader_versions.contains(name) {
            return Err(ReportError::ExcludedRaterIsGrader { name: name.clone() });
        }
        if !raters.contains(name.as_str()) {
            return Err(ReportError::ExcludedRaterNotFound {
                name: name.clone(),
                known: raters.iter().copied().collect::<Vec<_>>().join(", "),
            });
        }
    }
    build(
        &input.without_raters(&options.excluded_raters),
        options,
        progress,
    )
}

fn build(
    input: &CalibrationInput,
    options: &ReportOptions,
    progress: &dyn Progress,
) -> Result<Report, ReportError> {
    let table = &input.table;
    if table.scores.is_empty() {
        return Err(ReportError::NoHumanRaters);
    }
    let margin = options.non_inferiority_margin;
    if !(margin > 0.0 && margin < 2.0) {
        return Err(ReportError::BadMargin(margin));
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

    let graders: Vec<&str> = options
        .grader
        .iter()
        .chain(&options.other_grader_versions)
        .map(String::as_str)
        .collect();
    let scale_plan = scales::plan(input, options, &humans, &graders, &dimensions)?;
    // Declared mappings apply before anything is compared.
    let mapped = scale_plan.mapped(input);
    let input = mapped.as_ref().unwrap_or(input);
    let table = &input.table;

    let all_items: BTreeSet<&str> = table.scores.iter().map(|s| s.item.as_str()).collect();
    let case_of = |item: &str| -> String {
        table
            .items
            .get(item)
            .and_then(|i| i.case.clone())
            .unwrap_or_else(|| item.to_string())
    };
    let cases: BTreeSet<String> = all_items.iter().map(|i| case_of(i)).collect();
    // Items a clinician scored, and those known (scored by a grader, or listed) that none did.
    let rated_items: BTreeSet<&str> = table
        .scores
        .iter()
        .filter(|s| !is_grader(&s.rater))
        .map(|s| s.item.as_str())
        .collect();
    let known_items = all_items
        .iter()
        .copied()
        .chain(table.items.keys().map(String::as_str))
        .collect::<BTreeSet<&str>>()
        .len();
    let rated_cases = rated_items
        .iter()
        .map(|i| case_of(i))
        .collect::<BTreeSet<_>>()
        .len();

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
    // Per dimension: its whole, each subgroup, and one joint bootstrap per grouping column (the
    // subgroups' differences from the rest).
    let sections_total =
        dimensions.len() * (1 + groups_per_dimension + table.grouping_columns.len());
    progress.phase(
        "bootstrapping",
        (sections_total * options.bootstrap_resamples) as u64,
    );
    let report_progress = ReportProgress {
        inner: progress,
        done: AtomicU64::new(0),
    };

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
        let dimension_scales = &scale_plan.dimensions[dimension];
        let section_categories = dimension_scales.categories().unwrap_or_else(|| {
            Categories::from_values(
                table
                    .scores
                    .iter()
                    .filter(|s| &s.dimension == dimension)
                    .map(|s| s.score),
            )
        });
        // Each grouping column's subgroups (sorted values) and each item's subgroup.
        let columns: Vec<(Vec<&String>, Vec<Option<usize>>)> = table
            .grouping_columns
            .iter()
            .map(|column| {
                let values: Vec<&String> = scores
                    .items
                    .iter()
                    .filter_map(|i| table.items.get(*i).and_then(|info| info.groups.get(column)))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let group_of = scores
                    .items
                    .iter()
                    .map(|i| {
                        let value = table
                            .items
                            .get(*i)
                            .and_then(|info| info.groups.get(column))?;
                        values.binary_search(&value).ok()
                    })
                    .collect();
                (values, group_of)
            })
            .collect();
        // The dimension's sections are independent of each other: they run concurrently (each
        // bootstraps on every core too), so the serial work of one section (ICC, α, κ, Kendall,
        // the alternative annotator test) overlaps another's; every figure is the same as when
        // they ran one after another.
        stop_if_cancelled(progress)?;
        let mut jobs = vec![SectionJob::Whole];
        for (c, (values, _)) in columns.iter().enumerate() {
            jobs.push(SectionJob::Differences(c));
            jobs.extend((0..values.len()).map(|v| SectionJob::Group(c, v)));
        }
        let categories_and_scales = (&section_categories, dimension_scales);
        let mut done: std::vec::IntoIter<SectionDone> = jobs
            .par_iter()
            .map(|job| {
                // Asked as each section starts: a cancel skips every section not yet begun.
                if progress.cancelled() {
                    return SectionDone::Cancelled;
                }
                let section_progress = SectionProgress::new(&report_progress);
                match *job {
                    SectionJob::Whole => SectionDone::Section(Box::new(section(
                        &scores,
                        None,
                        &humans,
                        categories_and_scales,
                        options,
                        &section_progress,
                    ))),
                    SectionJob::Differences(c) => {
                        let (values, group_of) = &columns[c];
                        SectionDone::Differences(match options.grader {
                            Some(_) => subgroup_r_differences(
                                &scores,
                                group_of,
                                values.len(),
                                options,
                                &section_progress,
                            ),
                            None => vec![None; values.len()],
                        })
                    }
                    SectionJob::Group(c, v) => {
                        let keep: Vec<bool> = columns[c].1.iter().map(|g| *g == Some(v)).collect();
                        SectionDone::Section(Box::new(section(
                            &scores,
                            Some(&keep),
                            &humans,
                            categories_and_scales,
                            options,
                            &section_progress,
                        )))
                    }
                }
            })
            .collect::<Vec<_>>()
            .into_iter();
        if done
            .as_slice()
            .iter()
            .any(|d| matches!(d, SectionDone::Cancelled))
        {
            return Err(ReportError::Cancelled);
        }
        let Some(SectionDone::Section(overall)) = done.next() else {
            unreachable!("the first job is the whole dimension")
        };
        let mut groups = Vec::new();
        for (column, (values, _)) in table.grouping_columns.iter().zip(&columns) {
            let Some(SectionDone::Differences(differences)) = done.next() else {
                unreachable!("each column's jobs start with its differences")
            };
            for (value, r_vs_rest) in values.iter().zip(differences) {
                let Some(SectionDone::Section(section)) = done.next() else {
                    unreachable!("then one section per subgroup")
                };
                groups.push(GroupSection {
                    column: column.clone(),
                    value: (*value).clone(),
                    section: *section,
                    compared_with_rest: match &r_vs_rest {
                        Some(d) if d.low > 0.0 => "better",
                        Some(d) if d.high < 0.0 => "worse",
                        Some(_) => "no difference shown",
                        None => "not tested",
                    }
                    .to_string(),
                    r_vs_rest,
                });
            }
        }
        // Drift compares versions with the primary grader; without one they are only left out.
        if let Some(primary) = &options.grader {
            for version in &options.other_grader_versions {
                let mut entry = drift_entry(input, dimension, version, &scores, &case_of);
                scales::refuse_drift(&mut entry, dimension_scales, primary);
                drift.push(entry);
            }
        }
        dimension_reports.push(DimensionReport {
            dimension: dimension.clone(),
            scales: dimension_scales.clone(),
            overall: *overall,
            groups,
        });
    }

    // One Benjamini–Yekutieli family for every alternative annotator test of the report.
    let mut alt_tests: Vec<&mut AltTest> = dimension_reports
        .iter_mut()
        .flat_map(|d| {
            std::iter::once(&mut d.overall)
                .chain(d.groups.iter_mut().map(|g| &mut g.section))
                .filter_map(|s| match s.grader.as_mut().map(|g| &mut g.alt_test) {
                    Some(Estimate::Value(test)) => Some(test),
                    _ => None,
                })
        })
        .collect();
    crate::alt_test::correct_jointly(&mut alt_tests, options.alt_test_q);

    let verdict = options
        .grader
        .as_ref()
        .and_then(|_| dimension_reports.first())
        .map(|d| verdict(d, options, &input.items_used));
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
        manifest: crate::manifest::Manifest::new(options, input.audit_head.clone()),
        summary: InputSummary {
            items: all_items.len(),
            cases: cases.len(),
            rated_items: rated_items.len(),
            unrated_items: known_items - rated_items.len(),
            rated_cases,
            scores: table.scores.len(),
            human_raters: humans.clone(),
            excluded_raters: options.excluded_raters.clone(),
            grader: options.grader.clone(),
            dimensions: dimensions.clone(),
            grouping_columns: table.grouping_columns.clone(),
        },
        verdict,
        dimensions: dimension_reports,
        grader_drift: drift,
        error_categories: error_categories(
            input,
            options,
            options
                .grader
                .as_deref()
                .and_then(|g| scale_plan.dimensions.get(dimensions.first()?)?.effective(g)),
            &grader_scores,
            &human_means,
            &case_of,
        ),
        error_distribution: error_distribution(input),
        pass_at_k: pass_at_k_table(input, options),
        ppi: crate::ppi::ppi_table(input, options, dimensions.first().map(String::as_str)),
        intra_rater: intra_rater_report(
            &input.repeat_reads,
            &case_of,
            scale_plan
                .dimensions
                .get("overall")
                .and_then(DimensionScales::categories)
                .as_ref(),
            options,
        ),
        missed_findings: missed_findings_report(&input.missed_findings),
        automatic_metrics: None,
        dimension_coverage: None,
        rubric_versions: None,
        model_reliability: None,
        answer_accuracy: None,
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

/// The report's one progress phase, which every section's bootstrap advances.
struct ReportProgress<'a> {
    inner: &'a dyn Progress,
    done: AtomicU64,
}

/// One section's share of [`ReportProgress`]: sections run concurrently, so each adds what it
/// newly finished to the report's total (its own phase is not passed on).
struct SectionProgress<'a> {
    report: &'a ReportProgress<'a>,
    seen: AtomicU64,
}

impl<'a> SectionProgress<'a> {
    fn new(report: &'a ReportProgress<'a>) -> Self {
        SectionProgress {
            report,
            seen: AtomicU64::new(0),
        }
    }
}

impl Progress for SectionProgress<'_> {
    fn phase(&self, _name: &str, _total: u64) {}

    fn advance(&self, done: u64) {
        // Reports of one bootstrap arrive from several threads in no fixed order.
        let before = self.seen.fetch_max(done, Ordering::Relaxed);
        if done > before {
            let added = done - before;
            let total = self.report.done.fetch_add(added, Ordering::Relaxed) + added;
            self.report.inner.advance(total);
        }
    }

    fn cancelled(&self) -> bool {
        self.report.inner.cancelled()
    }
}

/// Asked between sections: a section at 50,000 items takes well under a second, so a cancel is
/// honoured about that quickly without the bootstrap's inner loop asking.
fn stop_if_cancelled(progress: &dyn Progress) -> Result<(), ReportError> {
    if progress.cancelled() {
        Err(ReportError::Cancelled)
    } else {
        Ok(())
    }
}

/// One of a dimension's independent pieces of work.
enum SectionJob {
    /// The whole dimension.
    Whole,
    /// Grouping column c's joint bootstrap of its subgroups' differences from the rest.
    Differences(usize),
    /// Subgroup v of grouping column c.
    Group(usize, usize),
}

enum SectionDone {
    Section(Box<Section>),
    Differences(Vec<Option<CaseInterval>>),
    /// Not begun: the report was cancelled first.
    Cancelled,
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn section(
    all: &Scores,
    keep: Option<&[bool]>,
    humans: &[String],
    (categories, scales): (&Categories, &DimensionScales),
    options: &ReportOptions,
    progress: &dyn Progress,
) -> Section {
    let kept: Vec<usize> = (0..all.items.len())
        .filter(|&i| keep.is_none_or(|k| k[i]))
        .collect();
    let human_matrix = all.humans.select_rows(&kept);
    let grader: Vec<Option<f64>> = kept.iter().map(|&i| all.grader[i]).collect();
    let cases: Vec<&str> = kept.iter().map(|&i| all.cases[i].as_str()).collect();
    let n_cases = cases.iter().collect::<BTreeSet<_>>().len();

    let panel = largest_complete_panel(&human_matrix);
    let panel_matrix = human_matrix.select_columns(&panel);
    let human_human = HumanAgreement {
        raters: humans.to_vec(),
        panel: describe_panel(&human_matrix, humans, &panel),
        icc: icc(&panel_matrix),
        krippendorff_alpha: krippendorff_alpha(&human_matrix),
        fleiss_kappa: fleiss_kappa(&panel_matrix, categories),
        variance_components: variance_components(
            &human_matrix,
            &cases,
            match keep {
                None if options.variance_component_intervals => Intervals::Profile,
                _ => Intervals::Omitted,
            },
        ),
    };
    let grader_agreement = options
        .grader
        .as_ref()
        .filter(|_| grader.iter().any(Option::is_some))
        .map(|_| {
            grader_agreement(
                &SectionScores {
                    humans: &human_matrix,
                    grader: &grader,
                    cases: &cases,
                    panel: &panel,
                },
                humans,
                categories,
                scales.clinicians.is_some(),
                options,
                progress,
            )
        });
    let mut section = Section {
        n_items: kept.len(),
        n_cases,
        human_human,
        grader: grader_agreement,
    };
    scales::refuse_absolute(&mut section, scales);
    section
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
            let present = || columns.iter().filter_map(|&c| row[c]);
            // As `mean` computes it, without collecting the values (this runs per item, per
            // held-out clinician, per section).
            let count = present().count();
            (count > 0).then(|| (i, g, present().sum::<f64>() / count as f64))
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

/// One item of a leave-one-rater-out comparison.
struct LooRow {
    item: usize,
    grader: f64,
    held_out: f64,
    rest_mean: f64,
}

/// One section's scores: the clinicians', the grader's and each item's case; `panel` the
/// clinicians' largest complete panel (the ICC's raters).
struct SectionScores<'a> {
    humans: &'a RatingMatrix,
    grader: &'a [Option<f64>],
    cases: &'a [&'a str],
    panel: &'a [usize],
}

fn grader_agreement(
    scores: &SectionScores,
    names: &[String],
    categories: &Categories,
    categories_are_the_scale: bool,
    options: &ReportOptions,
    progress: &dyn Progress,
) -> GraderAgreement {
    let SectionScores {
        humans,
        grader,
        cases,
        panel,
    } = *scores;
    let k = humans.n_raters();
    let all_columns: Vec<usize> = (0..k).collect();
    let paired = grader_vs_mean_of(humans, grader, &all_columns);
    let g: Vec<f64> = paired.iter().map(|p| p.1).collect();
    let h: Vec<f64> = paired.iter().map(|p| p.2).collect();
    // The consensus is a level the clinicians can give: the scale's, or without a scale the
    // values they used, never a value only the grader gave.
    let consensus_levels = match categories_are_the_scale {
        true => categories.clone(),
        false => Categories::from_values(
            (0..humans.n_items()).flat_map(|i| humans.present_values(i).collect::<Vec<_>>()),
        ),
    };
    let consensus: Vec<f64> = h
        .iter()
        .map(|&v| nearest_level(v, &consensus_levels))
        .collect();

    // The ICC with the grader as one more rater: the clinicians' complete panel plus the grader.
    let with_grader = humans.select_columns(panel).with_column(grader);

    // Held-out clinician j: the same items on both sides, scored by the grader, by j and by
    // someone else.
    let loo_rows: Vec<Vec<LooRow>> = if k >= 2 {
        (0..k)
            .map(|j| {
                let rest: Vec<usize> = (0..k).filter(|&c| c != j).collect();
                grader_vs_mean_of(humans, grader, &rest)
                    .into_iter()
                    .filter_map(|(item, g, m)| {
                        Some(LooRow {
                            item,
                            grader: g,
                            held_out: humans.row(item)[j]?,
                            rest_mean: m,
                        })
                    })
                    .collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let leave_one_rater_out: Vec<LeaveOneOut> = loo_rows
        .iter()
        .enumerate()
        .map(|(j, rows)| {
            let g: Vec<f64> = rows.iter().map(|r| r.grader).collect();
            let held: Vec<f64> = rows.iter().map(|r| r.held_out).collect();
            let rest_mean: Vec<f64> = rows.iter().map(|r| r.rest_mean).collect();
            LeaveOneOut {
                held_out: names[j].clone(),
                grader_vs_rest: pair_summary(&g, &rest_mean),
                held_out_vs_rest: pair_summary(&held, &rest_mean),
            }
        })
        .collect();

    // The like-for-like sums are resampled in every section, subgroups included, so that each
    // degradation row carries its interval.
    let (bootstrap, pearson_case_jackknife, loo_intervals) = bootstrap_block(
        &paired,
        &with_grader,
        &loo_rows,
        &leave_one_rater_out,
        cases,
        options,
        progress,
    );
    let pearson_estimate = pearson(&g, &h);
    let clustering = bootstrap.pearson_r.value().map(|b| Clustering {
        bootstrap_low: b.percentile_low,
        bootstrap_high: b.percentile_high,
        cases: b.clusters,
    });
    let precision = pearson_estimate
        .value()
        .and_then(|p| precision_guidance(p.r, p.n, options.bar_pearson_r, clustering.as_ref()));
    let vs_human_mean = VsHumanMean {
        n: paired.len(),
        n_cases: paired
            .iter()
            .map(|p| cases[p.0])
            .collect::<BTreeSet<_>>()
            .len(),
        spearman: spearman(&g, &h),
        kendall_tau_b: kendall_tau_b(&g, &h),
        bland_altman: bland_altman_by_case(
            &g,
            &h,
            &paired.iter().map(|p| cases[p.0]).collect::<Vec<_>>(),
        ),
        calibration_line: calibration_line(&g, &h),
        proportional_bias: proportional_bias(&g, &h),
        cohen_kappa: cohen_kappa(&g, &consensus, categories),
        icc: icc(&with_grader),
        bootstrap,
        pearson_case_jackknife,
        precision,
        pearson: pearson_estimate,
        pairs: g.iter().zip(&h).map(|(a, b)| [*a, *b]).collect(),
    };

    let vs_each_rater = (0..k)
        .map(|j| {
            let ((a, b), pair_cases): ((Vec<f64>, Vec<f64>), Vec<&str>) = (0..humans.n_items())
                .filter_map(|i| Some(((grader[i]?, humans.row(i)[j]?), cases[i])))
                .unzip();
            VsRater {
                rater: names[j].clone(),
                n: a.len(),
                pearson: pearson(&a, &b),
                spearman: spearman(&a, &b),
                kendall_tau_b: kendall_tau_b(&a, &b),
                bland_altman: bland_altman_by_case(&a, &b, &pair_cases),
                cohen_kappa: cohen_kappa(&a, &b, categories),
            }
        })
        .collect::<Vec<_>>();

    let like_for_like = like_for_like(
        &loo_rows,
        &leave_one_rater_out,
        &loo_intervals,
        cases,
        options.non_inferiority_margin,
    );
    let degradation = degradation(
        humans,
        &leave_one_rater_out,
        &vs_each_rater,
        &loo_intervals,
        categories,
    );
    let held_out_items: Vec<Vec<HeldOutItem>> = loo_rows
        .iter()
        .map(|rows| {
            rows.iter()
                .map(|r| HeldOutItem {
                    item: r.item,
                    grader: r.grader,
                    held_out: r.held_out,
                    others_mean: r.rest_mean,
                })
                .collect()
        })
        .collect();
    GraderAgreement {
        vs_human_mean,
        vs_each_rater,
        degradation,
        leave_one_rater_out,
        like_for_like,
        readers_random: readers_random(&held_out_items, cases, options.non_inferiority_margin),
        error_inputs: error_inputs(humans, grader, cases, panel, &paired),
        alt_test: alt_test(
            humans,
            names,
            grader,
            options.alt_test_epsilon,
            options.alt_test_q,
            options.alt_test_min_items,
        ),
    }
}

/// Which held-out clinicians each like-for-like average includes: for r, those with an
/// estimable r on both sides; for the mean absolute difference, those with any item.
struct LooIncluded {
    r: Vec<usize>,
    mad: Vec<usize>,
}

impl LooIncluded {
    fn of(loo: &[LeaveOneOut]) -> LooIncluded {
        LooIncluded {
            r: (0..loo.len())
                .filter(|&j| {
                    loo[j].grader_vs_rest.pearson.value().is_some()
                        && loo[j].held_out_vs_rest.pearson.value().is_some()
                })
                .collect(),
            mad: (0..loo.len())
                .filter(|&j| loo[j].grader_vs_rest.n > 0)
                .collect(),
        }
    }
}

/// Case-bootstrap intervals of the leave-one-rater-out averages (grader side, clinician side,
/// grader − clinician), for r and for the mean absolute difference; and the jackknife intervals
/// of the two r sides, which are what the report quotes for them (a correlation's interval).
#[derive(Default)]
struct LooIntervals {
    r: [Option<BootstrapInterval>; 3],
    r_sides_jackknife: [Option<FisherJackknife>; 2],
    mad: [Option<BootstrapInterval>; 3],
}

impl LooIntervals {
    /// The quoted intervals of r: each side's correlation interval, and the difference's
    /// bootstrap interval.
    fn r_quoted(&self) -> [Option<CaseInterval>; 3] {
        let side = |i: usize| {
            CaseInterval::of_correlation(self.r_sides_jackknife[i].as_ref(), self.r[i].as_ref())
        };
        [
            side(0),
            side(1),
            self.r[2].as_ref().map(CaseInterval::from_bootstrap),
        ]
    }

    fn mad_quoted(&self) -> [Option<CaseInterval>; 3] {
        self.mad
            .each_ref()
            .map(|b| b.as_ref().map(CaseInterval::from_bootstrap))
    }
}

fn like_for_like(
    loo_rows: &[Vec<LooRow>],
    loo: &[LeaveOneOut],
    intervals: &LooIntervals,
    cases: &[&str],
    margin: f64,
) -> Estimate<Ceiling> {
    let items: BTreeSet<usize> = loo_rows.iter().flatten().map(|r| r.item).collect();
    let n_cases = items
        .iter()
        .map(|&i| cases[i])
        .collect::<BTreeSet<_>>()
        .len();
    let [Some(grader), Some(human), Some(difference)] = intervals.r_quoted() else {
        let reason = if loo_rows.len() < 2 {
            "needs at least two clinicians (one held out, one to compare with)".to_string()
        } else {
            "needs at least two cases and, for some held-out clinician, an estimable r on both sides (≥ 4 items scored by the grader, that clinician and another, not all equal)".to_string()
        };
        return Estimate::not_estimable(items.len(), reason);
    };
    Estimate::Value(Ceiling {
        statistic:
            "Pearson r with the mean of the other clinicians, averaged over held-out clinicians weighted by the items each shares with the others"
                .into(),
        value: human.estimate,
        low: human.low,
        high: human.high,
        method: human.describe(),
        n_items: items.len(),
        n_cases,
        held_out_clinicians: LooIncluded::of(loo).r.len(),
        grader,
        non_inferior: difference.low > -margin,
        equivalent: difference.low > -margin && difference.high < margin,
        margin,
        difference,
    })
}

/// The weighted mean of the defined values, with how many there were.
fn average(values: impl Iterator<Item = (Option<f64>, f64)>, what: &str) -> (Estimate<f64>, usize) {
    let values: Vec<(f64, f64)> = values.filter_map(|(v, w)| Some((v?, w))).collect();
    let weight: f64 = values.iter().map(|v| v.1).sum();
    if values.is_empty() || weight <= 0.0 {
        return (
            Estimate::not_estimable(0, format!("no estimable {what}")),
            0,
        );
    }
    let mean = values.iter().map(|(v, w)| v * w).sum::<f64>() / weight;
    (Estimate::Value(mean), values.len())
}

fn degradation(
    humans: &RatingMatrix,
    loo: &[LeaveOneOut],
    vs_each: &[VsRater],
    intervals: &LooIntervals,
    categories: &Categories,
) -> Vec<DegradationRow> {
    let row = |statistic: &str,
               (gh, n1): (Estimate<f64>, usize),
               (hh, n2): (Estimate<f64>, usize),
               intervals: Option<[Option<CaseInterval>; 3]>| {
        let difference = match (gh.value(), hh.value()) {
            (Some(a), Some(b)) => Estimate::Value(a - b),
            _ => Estimate::not_estimable(n1.min(n2), "one side is not estimable"),
        };
        let [grader_human_interval, human_human_interval, difference_interval] =
            intervals.unwrap_or_default();
        DegradationRow {
            statistic: statistic.to_string(),
            grader_human: gh,
            human_human: hh,
            difference,
            comparisons: n1.min(n2),
            grader_human_interval,
            human_human_interval,
            difference_interval,
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
    // Like for like: each side averages the same held-out clinicians, each weighted by the items
    // they share with the others (as the bootstrap's `sides` does).
    let included = LooIncluded::of(loo);
    let items = |j: usize| loo[j].grader_vs_rest.n as f64;
    vec![
        row(
            "pearson_r_vs_mean_of_others",
            average(
                included
                    .r
                    .iter()
                    .map(|&j| (loo[j].grader_vs_rest.pearson.value().map(|p| p.r), items(j))),
                "r",
            ),
            average(
                included.r.iter().map(|&j| {
                    (
                        loo[j].held_out_vs_rest.pearson.value().map(|p| p.r),
                        items(j),
                    )
                }),
                "r",
            ),
            Some(intervals.r_quoted()),
        ),
        row(
            "mean_absolute_difference_vs_mean_of_others",
            average(
                included.mad.iter().map(|&j| {
                    (
                        loo[j]
                            .grader_vs_rest
                            .mean_absolute_difference
                            .value()
                            .copied(),
                        items(j),
                    )
                }),
                "difference",
            ),
            average(
                included.mad.iter().map(|&j| {
                    (
                        loo[j]
                            .held_out_vs_rest
                            .mean_absolute_difference
                            .value()
                            .copied(),
                        items(j),
                    )
                }),
                "difference",
            ),
            Some(intervals.mad_quoted()),
        ),
        row(
            "quadratic_kappa_pairwise",
            average(
                vs_each
                    .iter()
                    .map(|v| (v.cohen_kappa.quadratic.value().map(|q| q.value), 1.0)),
                "kappa",
            ),
            average(human_pairs_kappa.into_iter().map(|k| (k, 1.0)), "kappa"),
            None,
        ),
    ]
}

/// For each of `groups` subgroups (`group_of` per item), its r (grader vs the clinicians' mean)
/// minus the r of the dimension's other items, from one bootstrap over the dimension's cases:
/// per case the six pair sums of each subgroup's items (and, when some item has no value, of
/// those); the rest is every block but the subgroup's.
fn subgroup_r_differences(
    scores: &Scores,
    group_of: &[Option<usize>],
    groups: usize,
    options: &ReportOptions,
    progress: &dyn Progress,
) -> Vec<Option<CaseInterval>> {
    let columns: Vec<usize> = (0..scores.humans.n_raters()).collect();
    let paired = grader_vs_mean_of(&scores.humans, &scores.grader, &columns);
    let gx = mean(&paired.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap_or(0.0);
    let gy = mean(&paired.iter().map(|p| p.2).collect::<Vec<_>>()).unwrap_or(0.0);
    let blocks = groups + usize::from(paired.iter().any(|p| group_of[p.0].is_none()));
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut sums: Vec<Vec<f64>> = Vec::new();
    for &(i, g, m) in &paired {
        let next = index.len();
        let cluster = *index.entry(scores.cases[i].as_str()).or_insert(next);
        if cluster == sums.len() {
            sums.push(vec![0.0; 6 * blocks]);
        }
        let (x, y) = (g - gx, m - gy);
        let pair = [1.0, x, y, x * x, y * y, x * y];
        let block = group_of[i].unwrap_or(groups);
        for (s, v) in sums[cluster][6 * block..6 * block + 6].iter_mut().zip(pair) {
            *s += v;
        }
    }
    let statistics = |s: &[f64]| -> Vec<Option<f64>> {
        let mut total = [0.0; 6];
        for block in s.chunks_exact(6) {
            for (t, v) in total.iter_mut().zip(block) {
                *t += v;
            }
        }
        (0..groups)
            .map(|g| {
                let own = &s[6 * g..6 * g + 6];
                let rest: Vec<f64> = total.iter().zip(own).map(|(a, b)| a - b).collect();
                Some(r_from_sums(own)? - r_from_sums(&rest)?)
            })
            .collect()
    };
    let config = BootstrapConfig {
        resamples: options.bootstrap_resamples,
        seed: options.seed,
    };
    cluster_bootstrap(&sums, statistics, groups, config, progress)
        .iter()
        .map(|b| b.as_ref().map(CaseInterval::from_bootstrap))
        .collect()
}

/// The 95 % interval of Pearson r between `x` and `y` from resampling whole cases (`cases[i]` is
/// pair i's case), by the rule the verdict's interval follows ([`CaseInterval::of_correlation`]):
/// the delete-one-case jackknife on Fisher's z, else the case bootstrap with `config`. The one
/// place a correlation's case-clustered interval is made for a figure outside a section (the
/// grader workbench's agreement). `Err` says why there is none.
pub fn pearson_case_interval(
    x: &[f64],
    y: &[f64],
    cases: &[&str],
    config: BootstrapConfig,
) -> Result<CaseInterval, String> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut sums: Vec<Vec<f64>> = Vec::new();
    let (mx, my) = (mean(x).unwrap_or(0.0), mean(y).unwrap_or(0.0));
    for ((&a, &b), &case) in x.iter().zip(y).zip(cases) {
        let next = index.len();
        let cluster = *index.entry(case).or_insert(next);
        if cluster == sums.len() {
            sums.push(vec![0.0; 6]);
        }
        let (a, b) = (a - mx, b - my);
        for (total, value) in sums[cluster]
            .iter_mut()
            .zip([1.0, a, b, a * a, b * b, a * b])
        {
            *total += value;
        }
    }
    let jackknife = case_jackknife_fisher(&sums, r_from_sums);
    let bootstrap = match jackknife {
        Ok(_) => None,
        Err(_) => cluster_bootstrap(
            &sums,
            |s| vec![r_from_sums(s)],
            1,
            config,
            &crate::progress::NoProgress,
        )
        .pop()
        .flatten(),
    };
    CaseInterval::of_correlation(jackknife.as_ref().ok(), bootstrap.as_ref()).ok_or_else(|| {
        format!(
            "no interval from resampling cases: {}",
            jackknife.err().unwrap_or_default()
        )
    })
}

/// Pearson r from centred sums (n, Σx, Σy, Σx², Σy², Σxy); needs n ≥ 4 and both variances > 0,
/// as [`pearson`] does.
pub(crate) fn r_from_sums(s: &[f64]) -> Option<f64> {
    let n = s[0];
    if n < 4.0 {
        return None;
    }
    let (mx, my) = (s[1] / n, s[2] / n);
    let sxx = s[3] - n * mx * mx;
    let syy = s[4] - n * my * my;
    let sxy = s[5] - n * mx * my;
    (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// The (grader, held-out clinician) figures of one held-out clinician's sums.
type LooSides = dyn Fn(&[f64]) -> Option<(f64, f64)>;

/// Sums per held-out clinician: n, Σg, Σm, Σg², Σm², Σgm, Σh, Σh², Σhm, Σ|g − m|, Σ|h − m|
/// (g grader, h held-out clinician, m the others' mean).
const LOO_SUMS: usize = 11;

/// Per-cluster additive sums: 6 for the grader–mean pairs, 4 + k for the ICC of grader + humans,
/// then [`LOO_SUMS`] per held-out clinician.
fn bootstrap_block(
    paired: &[(usize, f64, f64)],
    with_grader: &RatingMatrix,
    loo_rows: &[Vec<LooRow>],
    loo: &[LeaveOneOut],
    cases: &[&str],
    options: &ReportOptions,
    progress: &dyn Progress,
) -> (BootstrapBlock, Estimate<FisherJackknife>, LooIntervals) {
    let k = with_grader.n_raters();
    let loo_start = 6 + 4 + k;
    let width = loo_start + LOO_SUMS * loo_rows.len();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for c in cases {
        let next = index.len();
        index.entry(c).or_insert(next);
    }
    // Looked up once per item: the sums below visit each item up to k + 2 times.
    let cluster_of: Vec<usize> = cases.iter().map(|c| index[c]).collect();
    let mut sums = vec![vec![0.0; width]; index.len()];
    // Centring keeps the sums of squares well conditioned.
    let gx = mean(&paired.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap_or(0.0);
    let gy = mean(&paired.iter().map(|p| p.2).collect::<Vec<_>>()).unwrap_or(0.0);
    for &(i, x, y) in paired {
        let s = &mut sums[cluster_of[i]];
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
        let s = &mut sums[cluster_of[*i]];
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
    for (j, rows) in loo_rows.iter().enumerate() {
        let o = loo_start + LOO_SUMS * j;
        for row in rows {
            let s = &mut sums[cluster_of[row.item]];
            let (g, h, m) = (row.grader - gx, row.held_out - gy, row.rest_mean - gy);
            s[o] += 1.0;
            s[o + 1] += g;
            s[o + 2] += m;
            s[o + 3] += g * g;
            s[o + 4] += m * m;
            s[o + 5] += g * m;
            s[o + 6] += h;
            s[o + 7] += h * h;
            s[o + 8] += h * m;
            s[o + 9] += (row.grader - row.rest_mean).abs();
            s[o + 10] += (row.held_out - row.rest_mean).abs();
        }
    }
    // Only cases holding a grader–clinician pair count: every statistic below needs one, and a
    // case without (rated by no clinician, say) would add a degree of freedom and a resampling
    // unit that carry nothing (issue 33: "t(99), 100 cases" on 12 rated cases).
    sums.retain(|s| s[0] > 0.0);
    let included = LooIncluded::of(loo);
    // Each side's average over the included held-out clinicians, each weighted by the items they
    // share with the others (a reader with 3 items must not weigh as much as one with 300: issue
    // 33), then their difference; undefined on a resample where any included comparison is.
    let sides = |s: &[f64], of: &LooSides, js: &[usize]| {
        if js.is_empty() {
            return [None; 3];
        }
        let values: Option<Vec<(f64, f64, f64)>> = js
            .iter()
            .map(|&j| {
                let t = &s[loo_start + LOO_SUMS * j..loo_start + LOO_SUMS * (j + 1)];
                of(t).map(|(grader, human)| (t[0], grader, human))
            })
            .collect();
        let Some(values) = values else {
            return [None; 3];
        };
        let items = values.iter().map(|v| v.0).sum::<f64>();
        let grader = values.iter().map(|v| v.0 * v.1).sum::<f64>() / items;
        let human = values.iter().map(|v| v.0 * v.2).sum::<f64>() / items;
        [Some(grader), Some(human), Some(grader - human)]
    };
    let loo_r = |t: &[f64]| -> Option<(f64, f64)> {
        let grader = r_from_sums(&t[..6])?;
        let held_out = r_from_sums(&[t[0], t[6], t[2], t[7], t[4], t[8]])?;
        Some((grader, held_out))
    };
    let loo_mad =
        |t: &[f64]| -> Option<(f64, f64)> { (t[0] > 0.0).then(|| (t[9] / t[0], t[10] / t[0])) };
    let statistics = |s: &[f64]| -> Vec<Option<f64>> {
        let n = s[0];
        let r = r_from_sums(&s[..6]);
        // Bias of the uncentred differences: the centring shifts it by gx − gy.
        let bias = (n >= 4.0).then(|| (s[1] - s[2]) / n + gx - gy);
        let icc2 = MeanSquares::from_sums(s[6] as usize, s[7], s[8], s[9], &s[10..10 + k])
            .map(|ms| ms.icc2())
            .filter(|v| v.is_finite());
        let mut out = vec![r, bias, icc2];
        out.extend(crate::calibration_line::from_sums(&s[..6], (gx, gy)));
        out.extend(sides(s, &loo_r, &included.r));
        out.extend(sides(s, &loo_mad, &included.mad));
        out
    };
    // The intervals quoted for the correlations (see `crate::jackknife`); the bootstrap below
    // still gives every figure's, these included, beside them.
    let pearson_case_jackknife = match case_jackknife_fisher(&sums, |s| r_from_sums(&s[..6])) {
        Ok(interval) => Estimate::Value(interval),
        Err(reason) => Estimate::not_estimable(sums.len(), format!("pearson r: {reason}")),
    };
    let r_sides_jackknife = [0, 1]
        .map(|side| case_jackknife_fisher(&sums, |s| sides(s, &loo_r, &included.r)[side]).ok());
    let config = BootstrapConfig {
        resamples: options.bootstrap_resamples,
        seed: options.seed,
    };
    let mut intervals = cluster_bootstrap(&sums, statistics, 12, config, progress).into_iter();
    let clusters = sums.len();
    let mut next = |what: &str| {
        match intervals.next().flatten() {
        Some(interval) => Estimate::Value(interval),
        None => Estimate::not_estimable(
            clusters,
            format!("{what}: undefined on the data or on every resample (needs ≥ 2 cases and ≥ 2 resamples)"),
        ),
    }
    };
    let block = BootstrapBlock {
        pearson_r: next("pearson r"),
        bias: next("bias"),
        icc2: next("ICC2"),
        calibration_slope: next("calibration slope"),
        calibration_intercept: next("calibration intercept"),
        proportional_bias_slope: next("proportional bias slope"),
    };
    let rest: Vec<Option<BootstrapInterval>> = intervals.collect();
    let loo_intervals = LooIntervals {
        r: [rest[0].clone(), rest[1].clone(), rest[2].clone()],
        r_sides_jackknife,
        mad: [rest[3].clone(), rest[4].clone(), rest[5].clone()],
    };
    (block, pearson_case_jackknife, loo_intervals)
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

fn verdict(
    dimension: &DimensionReport,
    options: &ReportOptions,
    items_used: &crate::input::ItemsUsed,
) -> Verdict {
    let bar = options.bar_pearson_r;
    let grader = dimension.overall.grader.as_ref();
    let pearson_estimate = grader
        .map(|g| g.vs_human_mean.pearson.clone())
        .unwrap_or_else(|| {
            Estimate::not_estimable(0, "the grader scored no item of this dimension")
        });
    let interval = grader.and_then(|g| {
        CaseInterval::of_correlation(
            g.vs_human_mean.pearson_case_jackknife.value(),
            g.vs_human_mean.bootstrap.pearson_r.value(),
        )
    });
    let ceiling = grader.map_or_else(
        || Estimate::not_estimable(0, "the grader scored no item of this dimension"),
        |g| g.like_for_like.clone(),
    );
    let readers_random = grader.map_or_else(
        || Estimate::not_estimable(0, "the grader scored no item of this dimension"),
        |g| g.readers_random.clone(),
    );
    let attainable_r = attainable_r(&dimension.overall.human_human.icc);
    let disattenuated_r = attainable_r
        .value()
        .zip(pearson_estimate.value())
        .map(|(a, p)| a.disattenuate(p.r));
    let n_items = grader.map_or(0, |g| g.vs_human_mean.n);
    let n_cases = grader.map_or(0, |g| g.vs_human_mean.n_cases);
    let error_rates = grader.map(|g| {
        let e = &g.error_inputs;
        crate::error_rates::error_rates(
            &e.pair,
            &e.panel,
            &e.items_per_case,
            bar,
            options.non_inferiority_margin,
            options.bootstrap_resamples.clamp(39, 999),
            options.seed,
        )
    });
    // The tests on the study; where one is not available the interval alone decides.
    let bar_test = error_rates.as_ref().and_then(|e| match &e.bar.test {
        Some(crate::error_rates::ClaimTest::Bar(t)) => Some(t),
        _ => None,
    });
    let ni_test = error_rates
        .as_ref()
        .and_then(|e| match &e.non_inferiority.test {
            Some(crate::error_rates::ClaimTest::NonInferior(t)) => Some(t),
            _ => None,
        });
    let method = match (&interval, grader) {
        (Some(i), _) => i.describe(),
        (None, Some(g)) => format!(
            "no interval from resampling cases: {}",
            g.vs_human_mean
                .bootstrap
                .pearson_r
                .reason()
                .unwrap_or("not estimable")
        ),
        (None, None) => "no interval from resampling cases: the grader scored no item".to_string(),
    };
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
    let estimable = pearson_estimate.value().is_some();
    let (meets_bar, lower_bound_meets_bar, summary) = match pearson_estimate.value() {
        Some(p) => {
            let interval_clears = interval.as_ref().is_some_and(|i| i.low >= bar);
            // The claim needs the bootstrap-t test too (issue 33, item 2): the interval's lower
            // end alone claimed the bar too often with few cases.
            let lower = interval_clears && bar_test.is_none_or(|t| t.claimed);
            // The claim with confidence implies the point claim, even where the jackknife's
            // interval does not centre on r (its bias correction can move it past the bar).
            let meets = p.r >= bar || lower;
            let mut words = format!(
                "On {} ({} items in {} cases), the grader's Pearson r with the clinicians' mean is {:.2}",
                dimension.dimension, p.n, n_cases, p.r
            );
            words.push_str(&match &interval {
                Some(i) => format!(
                    " (95 % interval {:.2}–{:.2}, {}, which leaves out whole cases: tasks of one case share their errors). ",
                    i.low, i.high, i.method
                ),
                None => format!(" ({method}). "),
            });
            words.push_str(&if lower {
                format!("It clears the bar of r ≥ {bar:.2} even at the lower end of the interval.")
            } else if let (true, Some(t)) = (interval_clears, bar_test) {
                format!("The interval's lower end reaches the bar of r ≥ {bar:.2}, but the case bootstrap-t test of r ≤ {bar:.2} does not reject it (one-sided p = {:.3}): more cases are needed to claim it.", t.p)
            } else if meets {
                format!("The estimate reaches the bar of r ≥ {bar:.2}, but the interval's lower end does not: more cases are needed to claim it.")
            } else {
                format!("It does not reach the bar of r ≥ {bar:.2}.")
            });
            words.push_str(&scale_words(&dimension.scales, options));
            if let Some(b) = bias {
                words.push_str(&format!(
                    " On average it scores {:.2} points {} than the clinicians.",
                    b.abs(),
                    if b >= 0.0 { "higher" } else { "lower" }
                ));
            }
            match &ceiling {
                Estimate::Value(c) => {
                    // The grader's own like-for-like r is left to the JSON: the summary quotes one
                    // r for the grader (issue 33), and the difference says the rest.
                    words.push_str(&format!(
                    " Like for like, on the same {} items in {} cases, a held-out clinician's r with the other clinicians' mean is {:.2} (95 % interval {:.2}–{:.2}); the grader's against the same mean differs by {:+.2} ({:+.2} to {:+.2}).",
                    c.n_items,
                    c.n_cases,
                    c.value,
                    c.low,
                    c.high,
                    c.difference.estimate,
                    c.difference.low,
                    c.difference.high
                    ));
                    words.push_str(&match (c.equivalent, c.non_inferior) {
                        (true, _) => format!(" Within the margin of ±{:.2}, the grader is equivalent to one more clinician.", c.margin),
                        (false, true) => format!(" It is non-inferior to one more clinician at a margin of {:.2} (the interval's lower end is above −{:.2}), though not shown equivalent.", c.margin, c.margin),
                        (false, false) => format!(" Non-inferiority to one more clinician at a margin of {:.2} is not shown (the interval's lower end is below −{:.2}).", c.margin, c.margin),
                    });
                }
                Estimate::NotEstimable { not_estimable, .. } => words.push_str(&format!(
                    " The clinicians' like-for-like ceiling could not be estimated: it {not_estimable}."
                )),
            }
            if let Some(r) = readers_random.value() {
                words.push_str(&r.sentence(options.non_inferiority_margin));
                if let (true, Some(t)) = (r.non_inferior, ni_test) {
                    if !t.claimed {
                        words.push_str(&format!(
                            " The null-imposed test at −{:.2} does not confirm it (one-sided p = {:.3} on t, {} from studies simulated at the margin), so it is not claimed.",
                            options.non_inferiority_margin,
                            t.p_t,
                            t.p_null.map_or("none".to_string(), |p| format!("{p:.3}"))
                        ));
                    }
                }
            }
            if let Some(e) = &error_rates {
                words.push_str(&e.sentence(bar, options.non_inferiority_margin));
            }
            if let Some(a) = attainable_r.value() {
                words.push_str(&a.sentence(p.r, bar));
            }
            if let Some(p) = &precision {
                match (p.n_for_power, p.cases_for_power) {
                    (Some(items), Some(cases)) => words.push_str(&format!(
                        " For an {:.0} % chance that a new study's interval clears the bar if r is truly {:.2}, it needs about {cases} cases ({:.1} items per case as here; {items} independent items, times a design effect of {:.2} from the case bootstrap).",
                        100.0 * p.power,
                        p.r,
                        p.items_per_case.unwrap_or(1.0),
                        p.design_effect.unwrap_or(1.0)
                    )),
                    (Some(items), None) => words.push_str(&format!(
                        " For an {:.0} % chance that a new study's interval clears the bar if r is truly {:.2}, it needs about {items} independent items (more when items share a case).",
                        100.0 * p.power,
                        p.r
                    )),
                    _ => {}
                }
            }
            match grader.map(|g| &g.alt_test) {
                Some(Estimate::Value(test)) => {
                    words.push_str(if test.passed {
                        " It passes the alternative annotator test (its authors' criterion for one annotator among these clinicians)."
                    } else {
                        " It does not pass the alternative annotator test (its authors' criterion for one annotator among these clinicians)."
                    });
                    if !test.left_out.is_empty() {
                        let names: Vec<String> = test
                            .left_out
                            .iter()
                            .map(|l| format!("{} ({} items)", l.rater, l.n))
                            .collect();
                        words.push_str(&format!(
                            " Left out of that test for fewer than {} comparable items, as its authors require: {}.",
                            test.min_items,
                            names.join(", ")
                        ));
                    }
                }
                Some(Estimate::NotEstimable { not_estimable, .. }) => words.push_str(&format!(
                    " The alternative annotator test was not run: {not_estimable}."
                )),
                None => {}
            }
            (meets, lower, words)
        }
        None => (
            false,
            false,
            format!(
                "Not estimable: the grader's agreement on {} could not be estimated, so there is no verdict on the bar yet: {}.",
                dimension.dimension,
                pearson_estimate.reason().unwrap_or("unknown reason")
            ),
        ),
    };
    let decision = decision(
        dimension,
        options,
        pearson_estimate.value().map(|p| p.r),
        (meets_bar, lower_bound_meets_bar),
        (&ceiling, &readers_random, &attainable_r),
        n_cases,
        ni_test.is_none_or(|t| t.claimed),
    );
    // A verdict with nothing to judge says so first already ("Not estimable: …").
    let summary = if estimable {
        format!("{decision} {summary}")
    } else {
        summary
    };
    let summary = match &dimension.overall.human_human.variance_components {
        Estimate::Value(v) => {
            let one = v.another_panel.first().map_or(f64::NAN, |p| p.icc);
            format!(
                "{summary} Of the clinicians' score variance, {:.0} % is the panel's (rater, {}residual): another clinician would likely agree with the study's scores at ICC {:.2}.",
                100.0 * v.panel_share,
                if v.case_by_rater.is_some() { "case × rater, " } else { "" },
                one
            )
        }
        Estimate::NotEstimable { .. } => summary,
    };
    let panel = &dimension.overall.human_human.panel;
    let summary = if panel.left_out.is_empty() {
        summary
    } else {
        format!(
            "{summary} The clinicians' ICC and Fleiss' κ use {}.",
            panel.note
        )
    };
    let summary = if options.excluded_raters.is_empty() {
        summary
    } else {
        format!(
            "{summary} Left out by the analyst: {}.",
            options.excluded_raters.join(", ")
        )
    };
    let summary = match items_used {
        crate::input::ItemsUsed::All => summary,
        crate::input::ItemsUsed::TestCases {
            cases,
            items,
            versions_confirmed,
        } => format!(
            "{summary} The grader's figures read only the {items} items of the {cases} test cases the workbench held out of prompt tuning; {versions_confirmed} grader version{} {} been confirmed on them.",
            if *versions_confirmed == 1 { "" } else { "s" },
            if *versions_confirmed == 1 { "has" } else { "have" },
        ),
    };
    Verdict {
        dimension: dimension.dimension.clone(),
        bar_pearson_r: bar,
        statistic: "Pearson r, grader vs the clinicians' mean per item".into(),
        pearson: pearson_estimate,
        meets_bar,
        low: interval.as_ref().map(|i| i.low),
        high: interval.as_ref().map(|i| i.high),
        method,
        n_items,
        n_cases,
        lower_bound_meets_bar,
        standing: match (estimable, lower_bound_meets_bar, meets_bar) {
            (false, _, _) => Standing::NotEstimable,
            (true, true, _) => Standing::MeetsBar,
            (true, false, true) => Standing::EstimateMeetsBar,
            (true, false, false) => Standing::BelowBar,
        },
        ceiling,
        readers_random,
        disattenuated_r,
        attainable_r,
        human_icc2,
        bias,
        alt_test_passed,
        precision,
        decision,
        summary,
        items_used: items_used.clone(),
        error_rates,
    }
}

/// The verdict's first line: the bar answers "may it score alone"; the like-for-like ceiling
/// answers "may it replace one of the clinicians". One r for the grader, the bar's.
fn decision(
    dimension: &DimensionReport,
    options: &ReportOptions,
    r: Option<f64>,
    (meets_bar, lower_bound_meets_bar): (bool, bool),
    (ceiling, readers_random, attainable): (
        &Estimate<Ceiling>,
        &Estimate<ReadersRandom>,
        &Estimate<AttainableR>,
    ),
    n_cases: usize,
    ni_test_claims: bool,
) -> String {
    let bar = options.bar_pearson_r;
    let on = &dimension.dimension;
    let Some(r) = r else {
        return format!("No decision yet on {on}: there is nothing to judge the grader on.");
    };
    // "A clinician" (clinicians random) is the stronger claim; "these clinicians" (held fixed)
    // is said as such, so a reader knows which one holds.
    let margin = options.non_inferiority_margin;
    let one_of_k = match (readers_random.value(), ceiling.value()) {
        (Some(random), _) if random.non_inferior && ni_test_claims => Some(format!(
            "it agrees with the clinicians' mean as well as a clinician would (non-inferior at a margin of {margin:.2}, with clinicians and cases random)"
        )),
        (_, Some(fixed)) if fixed.non_inferior => Some(format!(
            "it agrees with the clinicians' mean as well as one more of these {} clinicians would (non-inferior at a margin of {margin:.2}), though not shown for clinicians in general",
            fixed.held_out_clinicians
        )),
        _ => None,
    };
    // A bar above what the panel's own mean allows is out of reach for any grader.
    let out_of_reach = attainable
        .value()
        .filter(|a| a.puts_out_of_reach(bar))
        .map(|a| format!(" No grader can be shown to reach the bar against this panel: even a perfect one would reach r ≈ {:.2} with the clinicians' mean; more clinicians per item would raise it.", a.value))
        .unwrap_or_default();
    let decided = match (lower_bound_meets_bar, meets_bar, one_of_k) {
        (true, _, _) => format!(
            "Decision: the grader may score {on} in place of clinicians: its r of {r:.2} with their mean clears the bar of {bar:.2} even at the lower end of its 95 % interval."
        ),
        (false, true, _) => format!(
            "Decision: not yet: the grader's r of {r:.2} on {on} reaches the bar of {bar:.2}, but {n_cases} cases cannot show it with confidence; rate more cases before using it in place of clinicians."
        ),
        (false, false, Some(why)) => format!(
            "Decision: the grader may replace one clinician of a panel on {on}, not score alone: {why}, but its r of {r:.2} is below the bar of {bar:.2}."
        ),
        (false, false, None) => format!(
            "Decision: do not use the grader in place of clinicians on {on}: its r of {r:.2} is below the bar of {bar:.2}, and it is not shown to agree as well as one more clinician."
        ),
    };
    if meets_bar {
        decided
    } else {
        format!("{decided}{out_of_reach}")
    }
}

/// What the verdict says about scales: a declared mapping, or why values are not compared.
fn scale_words(scales: &DimensionScales, options: &ReportOptions) -> String {
    let grader = options.grader.as_deref().unwrap_or_default();
    let mapped = scales
        .raters
        .iter()
        .find(|r| r.rater == grader && r.mapped_linearly);
    match (&scales.grader_absolute_refused, mapped, scales.clinicians) {
        (Some(reason), _, _) => format!(
            " Absolute agreement (bias, Bland–Altman, ICC1/ICC2, κ, the calibration line, the alternative annotator test) is not computed: {reason}."
        ),
        (None, Some(m), Some(to)) => format!(
            " The grader's scores were mapped linearly from {} onto the clinicians' {} before every comparison, as declared.",
            m.scale.map_or_else(String::new, |s| s.describe()),
            to.describe()
        ),
        _ => String::new(),
    }
}

/// A clinician-side label counts for an item when at least half of the item's reviewers gave it,
/// and only on items with at least two reviewers: one clinician's label is not a consensus.
fn error_categories(
    input: &CalibrationInput,
    options: &ReportOptions,
    grader_scale: Option<crate::input::ScaleSpec>,
    grader_scores: &BTreeMap<&str, f64>,
    human_means: &BTreeMap<&str, f64>,
    case_of: &dyn Fn(&str) -> String,
) -> Option<ErrorCategoryReport> {
    if input.errors.is_empty() {
        return None;
    }
    let threshold = options.high_score_threshold.or_else(|| match grader_scale {
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
    let reviewers_of = |e: &'_ ItemErrors| -> BTreeSet<String> {
        if e.reviewers.is_empty() {
            e.clinician_labels.iter().map(|l| l.rater.clone()).collect()
        } else {
            e.reviewers.clone()
        }
    };
    let with_consensus: Vec<(&ItemErrors, BTreeSet<String>)> = input
        .errors
        .iter()
        .map(|e| (e, reviewers_of(e)))
        .filter(|(_, reviewers)| reviewers.len() >= 2)
        .collect();
    let agreed = |e: &ItemErrors, reviewers: &BTreeSet<String>, category: &str| {
        let givers: BTreeSet<&str> = e
            .clinician_labels
            .iter()
            .filter(|l| l.category == category)
            .map(|l| l.rater.as_str())
            .collect();
        2 * givers.len() >= reviewers.len() && !givers.is_empty()
    };
    let by_case = precision_recall_by_case(&with_consensus, &categories, &agreed, case_of, options);
    let mut rows = Vec::new();
    for (category, [precision_by_case, recall_by_case]) in categories.iter().zip(by_case) {
        let mut table = [0.0f64; 4];
        let (mut claimed, mut labelled) = (0usize, 0usize);
        for (e, reviewers) in &with_consensus {
            let human = agreed(e, reviewers, category);
            let grader = e.grader_claims.contains(*category);
            claimed += usize::from(grader);
            labelled += usize::from(human);
            table[usize::from(!grader) * 2 + usize::from(!human)] += 1.0;
        }
        let kappa = crate::kappa::cohen_kappa_from_table(&table, 2).unweighted;
        let both = table[0] as usize;
        rows.push(CategoryAgreement {
            category: category.to_string(),
            n: with_consensus.len(),
            grader_claimed: claimed,
            clinicians_labelled: labelled,
            cohen_kappa: kappa,
            precision: wilson(both, claimed),
            recall: wilson(both, labelled),
            precision_by_case,
            recall_by_case,
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
        items_without_consensus: input.errors.len() - with_consensus.len(),
        high_score_threshold: threshold,
        categories: rows,
        dangerous_cases: dangerous,
    })
}

/// Case-bootstrap intervals of each category's [precision, recall], from per-case counts of
/// confirmed claims, claims and clinicians' labels (cases numbered in order of first appearance).
fn precision_recall_by_case(
    with_consensus: &[(&ItemErrors, BTreeSet<String>)],
    categories: &BTreeSet<&str>,
    agreed: &dyn Fn(&ItemErrors, &BTreeSet<String>, &str) -> bool,
    case_of: &dyn Fn(&str) -> String,
    options: &ReportOptions,
) -> Vec<[Option<CaseInterval>; 2]> {
    let mut cluster_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut sums: Vec<Vec<f64>> = Vec::new();
    for (e, reviewers) in with_consensus {
        let next = cluster_of.len();
        let cluster = *cluster_of.entry(case_of(&e.item)).or_insert(next);
        if cluster == sums.len() {
            sums.push(vec![0.0; 3 * categories.len()]);
        }
        for (k, category) in categories.iter().enumerate() {
            let human = agreed(e, reviewers, category);
            let grader = e.grader_claims.contains(*category);
            let s = &mut sums[cluster][3 * k..3 * k + 3];
            s[0] += f64::from(u8::from(grader && human));
            s[1] += f64::from(u8::from(grader));
            s[2] += f64::from(u8::from(human));
        }
    }
    let statistics = |s: &[f64]| -> Vec<Option<f64>> {
        s.chunks_exact(3)
            .flat_map(|t| {
                [
                    (t[1] > 0.0).then(|| t[0] / t[1]),
                    (t[2] > 0.0).then(|| t[0] / t[2]),
                ]
            })
            .collect()
    };
    let config = BootstrapConfig {
        resamples: options.bootstrap_resamples,
        seed: options.seed,
    };
    // Error labels are a few hundred items at most: this bootstrap takes milliseconds.
    let intervals = cluster_bootstrap(
        &sums,
        statistics,
        2 * categories.len(),
        config,
        &crate::bootstrap::NoProgress,
    );
    intervals
        .chunks_exact(2)
        .map(|pair| [0, 1].map(|i| pair[i].as_ref().map(CaseInterval::from_bootstrap)))
        .collect()
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
        by_model: errors_by_model(input, &found),
    })
}

/// Each model's reviewed responses and, per category in `found`, how many of them carry it.
fn errors_by_model(input: &CalibrationInput, found: &BTreeSet<(&str, &str)>) -> Vec<ModelErrors> {
    let categories: BTreeSet<&str> = found.iter().map(|(_, category)| *category).collect();
    let mut reviewed: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in &input.errors {
        // No reviewer left (all excluded) and no label: nobody looked at this item.
        if e.reviewers.is_empty() && e.clinician_labels.is_empty() {
            continue;
        }
        let model = input
            .table
            .items
            .get(&e.item)
            .and_then(|info| info.groups.get("model"));
        if let Some(model) = model {
            reviewed.entry(model).or_default().insert(&e.item);
        }
    }
    reviewed
        .into_iter()
        .map(|(model, items)| ModelErrors {
            model: model.to_owned(),
            reviewed: items.len(),
            by_category: categories
                .iter()
                .filter_map(|category| {
                    let count = items
                        .iter()
                        .filter(|item| found.contains(&(**item, *category)))
                        .count();
                    Some(NamedShare {
                        name: (*category).to_owned(),
                        share: wilson(count, items.len())?,
                    })
                })
                .collect(),
        })
        .collect()
}

/// A sample counts as correct when most of its judgements say so (a tie counts as incorrect).
///
/// The interval: pass@k is a mean of per-task values in [0, 1], and tasks of one case are not
/// independent, so it is the Wilson score interval at Kish's effective number of cases. The
/// variance p(1 − p) Wilson uses is the largest a mean of values in [0, 1] can have, so the
/// interval is conservative, never collapses to zero width when every task agrees (a t interval
/// over tasks does), and is as wide as the number of cases, not tasks, allows.
fn pass_at_k_table(input: &CalibrationInput, options: &ReportOptions) -> Vec<PassAtKRow> {
    let mut votes: BTreeMap<(PassAtKKey, PassAtKTask, u32), (usize, usize)> = BTreeMap::new();
    for j in &input.correctness {
        let entry = votes
            .entry((
                (&j.model, &j.task_family, &j.level),
                (j.case.as_str(), j.task.as_str()),
                j.sample,
            ))
            .or_default();
        entry.0 += usize::from(j.correct);
        entry.1 += 1;
    }
    let mut tasks: BTreeMap<PassAtKKey, BTreeMap<PassAtKTask, (usize, usize)>> = BTreeMap::new();
    for ((key, task, _), (yes, total)) in votes {
        let t = tasks.entry(key).or_default().entry(task).or_default();
        t.0 += 1;
        t.1 += usize::from(2 * yes > total);
    }
    pass_at_k_rows(&tasks, &options.pass_at)
}

/// Kish's effective number of cases, (Σ units per case)² / Σ (units per case)², from each case's
/// number of units (tasks, answers): the number of independent units an interval counts.
pub(crate) fn kish_effective_cases(per_case: impl Iterator<Item = usize>) -> f64 {
    let (total, squares) = per_case.fold((0usize, 0usize), |(t, s), n| (t + n, s + n * n));
    (total * total) as f64 / squares as f64
}

/// A pass@k key: (model, task family, level).
pub(crate) type PassAtKKey<'a> = (&'a str, &'a str, &'a str);
/// A task: (case, task).
pub(crate) type PassAtKTask<'a> = (&'a str, &'a str);

/// pass@k for each k of `pass_at` per key, from each task's (samples, correct samples): the mean
/// over tasks of Chen et al.'s unbiased estimator, with the Wilson interval at Kish's effective
/// number of cases (see [`pass_at_k_table`]). Shared by the clinicians' pass@k and the
/// ground-truth matcher's (`crate::truth_match`).
pub(crate) fn pass_at_k_rows(
    tasks: &BTreeMap<PassAtKKey, BTreeMap<PassAtKTask, (usize, usize)>>,
    pass_at: &[usize],
) -> Vec<PassAtKRow> {
    let mut rows = Vec::new();
    for (key, per_task) in tasks {
        for &k in pass_at {
            let mut tasks_per_case: BTreeMap<&str, usize> = BTreeMap::new();
            let values: Vec<f64> = per_task
                .iter()
                .filter_map(|(&(case, _), &(n, c))| {
                    let value = pass_at_k(n, c, k)?;
                    *tasks_per_case.entry(case).or_default() += 1;
                    Some(value)
                })
                .collect();
            let skipped = per_task.len() - values.len();
            let estimate = match mean(&values) {
                None => Estimate::not_estimable(0, format!("no task has {k} or more samples")),
                Some(value) => {
                    let effective_cases = kish_effective_cases(tasks_per_case.values().copied());
                    let (ci_low, ci_high) = wilson_interval(value, effective_cases);
                    Estimate::Value(PassAtK {
                        value,
                        ci_low,
                        ci_high,
                        n: values.len(),
                        n_cases: tasks_per_case.len(),
                        effective_cases,
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
