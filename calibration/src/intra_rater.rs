//! Intra-rater (test-retest) reliability: a clinician's first read of a response against their
//! own repeat read of it after the wash-out, per clinician and pooled over clinicians.
//!
//! **Which ICC.** The two reads are the second factor of a two-way model and absolute agreement
//! is what counts: a clinician who scores everything one point lower the second time is not
//! reliable, although a consistency ICC would call them perfect. That is McGraw & Wong's
//! ICC(A,1), two-way mixed effects (the two reading sessions are the only ones of interest),
//! absolute agreement, single measurement, the form Koo & Li (2016) recommend for intra-rater
//! reliability; its formula and F-based interval are those of Shrout & Fleiss's ICC(2,1)
//! (pingouin's `ICC2`). Pooled, every (clinician, response) pair is one target.
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
use crate::icc::{icc, IccValue, MeanSquares};
use crate::input::{RepeatRead, ReportOptions};
use crate::kappa::{cohen_kappa, Categories, CohenKappa};
use crate::ratings::RatingMatrix;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Below this many pairs a rater's (or the pooled) reliability is not estimable: the ICC's F
/// interval has n − 1 degrees of freedom and κ's SE is a large-sample one.
pub const MIN_REPEAT_PAIRS: usize = 5;

/// How the ICC of a test-retest is named in the report.
pub const TEST_RETEST_ICC_DESCRIPTION: &str =
    "ICC(A,1): two-way mixed effects, absolute agreement, single measurement (formula of Shrout & Fleiss ICC(2,1))";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntraRaterReport {
    /// The dimension the reads are compared on.
    pub dimension: String,
    pub min_pairs: usize,
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
    let rows: Vec<Vec<f64>> = reads.iter().map(|r| vec![r.first, r.repeat]).collect();
    let icc = icc(&RatingMatrix::from_complete_rows(&rows))
        .icc2
        .map(|v| IccValue {
            description: TEST_RETEST_ICC_DESCRIPTION,
            ..v
        });
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

/// Per-case sums, centred on the grand mean: n, Σx, Σy, Σx², Σy², Σxy, Σ|x − y| (x first read,
/// y repeat).
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
    let mut sums = vec![vec![0.0; 7]; index.len()];
    for (read, case) in reads.iter().zip(cases) {
        let s = &mut sums[index[case.as_str()]];
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
        let icc = MeanSquares::from_sums(
            n as usize,
            s[1] + s[2],
            s[3] + s[4],
            s[3] + s[4] + 2.0 * s[5],
            &[s[1], s[2]],
        )
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
