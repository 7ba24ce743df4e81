//! Intra-rater (test-retest) reliability: a clinician's first read of a response against their
//! own repeat read of it after the wash-out, per clinician and pooled over clinicians.
//!
//! **Which ICC.** The two reads are the second factor of a two-way model and absolute agreement
//! is what counts: a clinician who scores everything one point lower the second time is not
//! reliable, although a consistency ICC would call them perfect. That is McGraw & Wong's
//! ICC(A,1), two-way mixed effects (the two reading sessions are the only ones of interest),
//! absolute agreement, single measurement, the form Koo & Li (2016) recommend for intra-rater
//! reliability; its formula and F-based interval are those of Shrout & Fleiss's ICC(2,1)
//! (pingouin's `ICC2`). Pooled, every (clinician, response) pair is one target, and each
//! clinician's reads are taken about that clinician's own mean: that one clinician scores higher
//! than another is not variance between the responses, and counted as such it would inflate the
//! ICC. The clinicians' means cost their degrees of freedom between targets (N − C for N pairs of
//! C clinicians); a clinician's own shift between sessions stays in the error, as absolute
//! agreement asks.
//!
//! **Weighted κ.** Cohen's κ between the reads over the scale's levels, unweighted, linear and
//! quadratic (the ordinal one to read), with the large-sample SE of [`crate::kappa`].
//!
//! **Bootstrap.** Cases are resampled as clusters, as everywhere in the report; ICC(A,1), the
//! quadratic κ and the mean absolute difference are computed from additive per-case sums. The
//! quadratic κ in the bootstrap uses κ_q = 1 − mean (x−y)² / (mean x² + mean y² − 2 mean x mean
//! y), equal to the table form because quadratic weights over equally spaced levels are
//! proportional to (x − y)².

use crate::bootstrap::{cluster_bootstrap, BootstrapConfig, BootstrapInterval, NoProgress};
use crate::estimate::Estimate;
use crate::icc::{icc_from_mean_squares, IccValue, MeanSquares};
use crate::input::{RepeatRead, ReportOptions};
use crate::kappa::{cohen_kappa, Categories, CohenKappa};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Below this many pairs a rater's (or the pooled) reliability is not estimable: the ICC's F
/// interval has n − 1 degrees of freedom and κ's SE is a large-sample one.
pub const MIN_REPEAT_PAIRS: usize = 5;

/// Below this many pairs a reliability is shown but not read as poor, moderate or good: at 29
/// pairs an ICC of 0.75 still has an F interval about 0.5 wide (Koo & Li 2016 ask for 30 or more
/// targets in a reliability study).
pub const MIN_INTERPRETED_PAIRS: usize = 30;

/// How the ICC of a test-retest is named in the report.
pub const TEST_RETEST_ICC_DESCRIPTION: &str =
    "ICC(A,1): two-way mixed effects, absolute agreement, single measurement (formula of Shrout & Fleiss ICC(2,1))";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntraRaterReport {
    /// The dimension the reads are compared on.
    pub dimension: String,
    pub min_pairs: usize,
    /// Rows with fewer pairs are shown, not interpreted ([`MIN_INTERPRETED_PAIRS`]).
    pub min_interpreted_pairs: usize,
    pub pooled: IntraRaterEntry,
    /// One row per clinician with at least one repeat read, in name order.
    pub raters: Vec<IntraRaterEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntraRaterEntry {
    /// `None` for the pooled row.
    pub rater: Option<String>,
    pub n_pairs: usize,
    pub n_cases: usize,
    pub reliability: Estimate<TestRetest>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestRetest {
    pub icc: Estimate<IccValue>,
    /// First read (rows) against repeat read (columns).
    pub cohen_kappa: CohenKappa,
    pub mean_absolute_difference: f64,
    /// Mean of repeat − first: a clinician who became stricter shows a negative shift.
    pub mean_difference: f64,
    pub bootstrap: TestRetestBootstrap,
}

/// Cluster-bootstrap intervals (cases resampled).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestRetestBootstrap {
    pub icc: Estimate<BootstrapInterval>,
    pub quadratic_kappa: Estimate<BootstrapInterval>,
    pub mean_absolute_difference: Estimate<BootstrapInterval>,
}

/// The test-retest section, or `None` when the input holds no repeat reads at all.
pub fn intra_rater_report(
    reads: &[RepeatRead],
    case_of: &dyn Fn(&str) -> String,
    categories: Option<&Categories>,
    options: &ReportOptions,
) -> Option<IntraRaterReport> {
    if reads.is_empty() {
        return None;
    }
    let categories = categories
        .cloned()
        .unwrap_or_else(|| Categories::from_values(reads.iter().flat_map(|r| [r.first, r.repeat])));
    let raters: BTreeSet<&str> = reads.iter().map(|r| r.rater.as_str()).collect();
    let rows = raters
        .iter()
        .map(|&rater| {
            let own: Vec<&RepeatRead> = reads.iter().filter(|r| r.rater == rater).collect();
            entry(Some(rater), &own, case_of, &categories, options)
        })
        .collect();
    let all: Vec<&RepeatRead> = reads.iter().collect();
    Some(IntraRaterReport {
        dimension: "overall".into(),
        min_pairs: MIN_REPEAT_PAIRS,
        min_interpreted_pairs: MIN_INTERPRETED_PAIRS,
        pooled: entry(None, &all, case_of, &categories, options),
        raters: rows,
    })
}

fn entry(
    rater: Option<&str>,
    reads: &[&RepeatRead],
    case_of: &dyn Fn(&str) -> String,
    categories: &Categories,
    options: &ReportOptions,
) -> IntraRaterEntry {
    let cases: Vec<String> = reads.iter().map(|r| case_of(&r.item)).collect();
    let n_cases = cases.iter().collect::<BTreeSet<_>>().len();
    let n = reads.len();
    let reliability = if n < MIN_REPEAT_PAIRS {
        Estimate::not_estimable(
            n,
            format!(
                "{n} repeat read(s); test-retest reliability needs at least {MIN_REPEAT_PAIRS}"
            ),
        )
    } else if reads
        .iter()
        .any(|r| !(r.first.is_finite() && r.repeat.is_finite()))
    {
        Estimate::not_estimable(n, "a score is not a finite number")
    } else {
        Estimate::Value(test_retest(reads, &cases, categories, options))
    };
    IntraRaterEntry {
        rater: rater.map(str::to_owned),
        n_pairs: n,
        n_cases,
        reliability,
    }
}

fn test_retest(
    reads: &[&RepeatRead],
    cases: &[String],
    categories: &Categories,
    options: &ReportOptions,
) -> TestRetest {
    let first: Vec<f64> = reads.iter().map(|r| r.first).collect();
    let repeat: Vec<f64> = reads.iter().map(|r| r.repeat).collect();
    let n = reads.len() as f64;
    let grand = reads.iter().map(|r| r.first + r.repeat).sum::<f64>() / (2.0 * n);
    let clinicians = clinician_index(reads);
    let mut sums = vec![0.0; CLINICIAN_SUMS * clinicians.len()];
    for read in reads {
        add_clinician_sums(&mut sums, &clinicians, read, grand);
    }
    let icc = match test_retest_mean_squares(&sums) {
        Some(ms) => icc_from_mean_squares(&ms).icc2.map(|v| IccValue {
            description: TEST_RETEST_ICC_DESCRIPTION,
            ..v
        }),
        None => Estimate::not_estimable(
            reads.len(),
            "needs more response pairs than clinicians (each clinician's mean costs a degree of freedom)",
        ),
    };
    TestRetest {
        icc,
        cohen_kappa: cohen_kappa(&first, &repeat, categories),
        mean_absolute_difference: reads
            .iter()
            .map(|r| (r.repeat - r.first).abs())
            .sum::<f64>()
            / n,
        mean_difference: reads.iter().map(|r| r.repeat - r.first).sum::<f64>() / n,
        bootstrap: bootstrap(reads, cases, options),
    }
}

/// Per clinician: n, Σx, Σy, Σx², Σy², Σxy (x first read, y repeat, centred on the grand mean).
const CLINICIAN_SUMS: usize = 6;

/// The clinicians of `reads` numbered in name order.
fn clinician_index<'a>(reads: &[&'a RepeatRead]) -> BTreeMap<&'a str, usize> {
    let names: BTreeSet<&str> = reads.iter().map(|r| r.rater.as_str()).collect();
    names.into_iter().enumerate().map(|(i, n)| (n, i)).collect()
}

fn add_clinician_sums(
    sums: &mut [f64],
    clinicians: &BTreeMap<&str, usize>,
    read: &RepeatRead,
    grand: f64,
) {
    let o = CLINICIAN_SUMS * clinicians[read.rater.as_str()];
    let (x, y) = (read.first - grand, read.repeat - grand);
    sums[o] += 1.0;
    sums[o + 1] += x;
    sums[o + 2] += y;
    sums[o + 3] += x * x;
    sums[o + 4] += y * y;
    sums[o + 5] += x * y;
}

/// The two-way ANOVA of first against repeat reads with each clinician's reads taken about that
/// clinician's mean (the one rule for the estimate and every resample). `sums` holds
/// [`CLINICIAN_SUMS`] per clinician; a clinician without pairs (absent from a resample) is
/// skipped. `None` without more pairs than clinicians.
fn test_retest_mean_squares(sums: &[f64]) -> Option<MeanSquares> {
    let (mut n, mut groups) = (0.0, 0usize);
    let (mut ss_total, mut ss_rows, mut session) = (0.0, 0.0, 0.0);
    for s in sums.chunks_exact(CLINICIAN_SUMS).filter(|s| s[0] > 0.0) {
        let (m, total) = (s[0], s[1] + s[2]);
        n += m;
        groups += 1;
        ss_total += s[3] + s[4] - total * total / (2.0 * m);
        ss_rows += (s[3] + s[4] + 2.0 * s[5]) / 2.0 - total * total / (2.0 * m);
        // First-session total about the clinician's mean; the repeat's is its negative.
        session += (s[1] - s[2]) / 2.0;
    }
    let pairs = n as usize;
    (pairs > groups && pairs >= 2).then(|| {
        MeanSquares::from_sums_of_squares(
            pairs,
            2,
            groups,
            ss_total,
            ss_rows,
            2.0 * session * session / n,
        )
    })
}

/// Per-case sums, centred on the grand mean: n, Σx, Σy, Σx², Σy², Σxy, Σ|x − y| (x first read,
/// y repeat), then [`CLINICIAN_SUMS`] per clinician for the ICC.
fn bootstrap(
    reads: &[&RepeatRead],
    cases: &[String],
    options: &ReportOptions,
) -> TestRetestBootstrap {
    let grand = reads.iter().map(|r| r.first + r.repeat).sum::<f64>() / (2 * reads.len()) as f64;
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for case in cases {
        let next = index.len();
        index.entry(case).or_insert(next);
    }
    let clinicians = clinician_index(reads);
    let mut sums = vec![vec![0.0; 7 + CLINICIAN_SUMS * clinicians.len()]; index.len()];
    for (read, case) in reads.iter().zip(cases) {
        let s = &mut sums[index[case.as_str()]];
        add_clinician_sums(&mut s[7..], &clinicians, read, grand);
        let (x, y) = (read.first - grand, read.repeat - grand);
        s[0] += 1.0;
        s[1] += x;
        s[2] += y;
        s[3] += x * x;
        s[4] += y * y;
        s[5] += x * y;
        s[6] += (x - y).abs();
    }
    let statistics = |s: &[f64]| -> Vec<Option<f64>> {
        let n = s[0];
        let icc = test_retest_mean_squares(&s[7..])
            .map(|ms| ms.icc2())
            .filter(|v| v.is_finite());
        let kappa = (n > 0.0)
            .then(|| {
                let observed = (s[3] + s[4] - 2.0 * s[5]) / n;
                let expected = (s[3] + s[4]) / n - 2.0 * (s[1] / n) * (s[2] / n);
                (expected > 0.0).then(|| 1.0 - observed / expected)
            })
            .flatten();
        let mad = (n > 0.0).then(|| s[6] / n);
        vec![icc, kappa, mad]
    };
    let config = BootstrapConfig {
        resamples: options.bootstrap_resamples,
        seed: options.seed,
    };
    // Repeat reads are a small subset (tens of cases): this bootstrap takes milliseconds, so it
    // does not report into the report's progress bar.
    let mut intervals = cluster_bootstrap(&sums, statistics, 3, config, &NoProgress).into_iter();
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
    TestRetestBootstrap {
        icc: next("ICC(A,1)"),
        quadratic_kappa: next("quadratic κ"),
        mean_absolute_difference: next("mean absolute difference"),
    }
}
