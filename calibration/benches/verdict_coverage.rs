//! Coverage of the verdict's interval on clustered data (issue 13): how often the 95 % interval
//! of r (grader vs the clinicians' mean) holds the true r, for the Fisher interval (items taken as
//! independent) and for the verdict's case bootstrap, when the grader's error is partly shared by
//! the tasks of a case. A simulation, run by hand (`cargo bench -p neurorater-calibration --bench
//! verdict_coverage`), not a test: it takes minutes and its result is a rate.
//!
//! Two parts. The first runs the whole report (the verdict as a reader gets it) on 300 studies per
//! design. The second bootstraps r alone from the same model, so it affords 2,000 studies per
//! design (simulation error ± 1 point at 95 %), and sets the two case-bootstrap intervals (BCa, the
//! verdict's, and percentile) beside a delete-one-case jackknife interval on Fisher's z with
//! t(cases − 1), against the analytic true r.

use calibration::bootstrap::{cluster_bootstrap, BootstrapConfig, NoProgress};
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::report::build_report;
use statrs::distribution::{ContinuousCDF, StudentsT};

struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

const CLINICIANS: [&str; 3] = ["dr_a", "dr_b", "dr_c"];
/// Grader error: this much shared by the case's tasks, this much per task.
const SHARED_SD: f64 = 0.5;
const OWN_SD: f64 = 0.3;
const CLINICIAN_SD: f64 = 0.5;

/// Scores on a 0.1 grid (so κ's categories stay few), as (grader, clinicians) per item.
fn study(rng: &mut Lcg, cases: usize, per_case: usize) -> CalibrationInput {
    let mut table = LongTable::default();
    for c in 0..cases {
        let shared = SHARED_SD * rng.normal();
        for t in 0..per_case {
            let item = format!("c{c:03}/t{t}");
            table.items.insert(
                item.clone(),
                ItemInfo {
                    case: Some(format!("c{c:03}")),
                    ..ItemInfo::default()
                },
            );
            let truth = rng.normal();
            let mut push = |rater: &str, score: f64| {
                table.scores.push(ScoreRow {
                    item: item.clone(),
                    rater: rater.into(),
                    dimension: "overall".into(),
                    score: (score * 10.0).round() / 10.0,
                })
            };
            for rater in CLINICIANS {
                push(rater, truth + CLINICIAN_SD * rng.normal());
            }
            push("grader", truth + shared + OWN_SD * rng.normal());
        }
    }
    CalibrationInput {
        table,
        ..CalibrationInput::default()
    }
}

/// The population r, from one very large study (pairs drawn the same way, without resampling).
fn true_r(rng: &mut Lcg) -> f64 {
    let input = study(rng, 20_000, 10);
    let options = ReportOptions {
        grader: Some("grader".into()),
        bootstrap_resamples: 2,
        ..ReportOptions::default()
    };
    let report = build_report(&input, &options, &NoProgress).expect("report");
    report
        .verdict
        .expect("verdict")
        .pearson
        .value()
        .expect("r")
        .r
}

/// The population r of grader and clinicians' mean under [`study`]'s model (before the 0.1 grid):
/// cov = var(truth) = 1; var(grader) = 1 + shared² + own²; var(mean of three) = 1 + clinician² / 3.
fn analytic_r() -> f64 {
    1.0 / ((1.0 + SHARED_SD.powi(2) + OWN_SD.powi(2)) * (1.0 + CLINICIAN_SD.powi(2) / 3.0)).sqrt()
}

/// Per case: n, Σg, Σm, Σg², Σm², Σgm of grader g and clinicians' mean m, drawn as [`study`] draws.
fn case_sums(rng: &mut Lcg, cases: usize, per_case: usize) -> Vec<Vec<f64>> {
    (0..cases)
        .map(|_| {
            let shared = SHARED_SD * rng.normal();
            let mut sums = vec![0.0; 6];
            for _ in 0..per_case {
                let truth = rng.normal();
                let mean = (0..CLINICIANS.len())
                    .map(|_| truth + CLINICIAN_SD * rng.normal())
                    .sum::<f64>()
                    / CLINICIANS.len() as f64;
                let grader = truth + shared + OWN_SD * rng.normal();
                for (s, v) in sums.iter_mut().zip([
                    1.0,
                    grader,
                    mean,
                    grader * grader,
                    mean * mean,
                    grader * mean,
                ]) {
                    *s += v;
                }
            }
            sums
        })
        .collect()
}

fn pearson_of_sums(s: &[f64]) -> Option<f64> {
    let n = s[0];
    let (gg, mm) = (s[3] - s[1] * s[1] / n, s[4] - s[2] * s[2] / n);
    let gm = s[5] - s[1] * s[2] / n;
    (gg > 0.0 && mm > 0.0).then(|| gm / (gg * mm).sqrt())
}

/// Delete-one-case jackknife on Fisher's z, t(cases − 1): the cluster-robust analytic interval.
fn jackknife_fisher(cases: &[Vec<f64>]) -> Option<(f64, f64)> {
    let full: Vec<f64> = (0..6).map(|k| cases.iter().map(|c| c[k]).sum()).collect();
    let without: Vec<f64> = cases
        .iter()
        .map(|c| {
            let rest: Vec<f64> = full.iter().zip(c).map(|(f, v)| f - v).collect();
            pearson_of_sums(&rest).map(f64::atanh)
        })
        .collect::<Option<_>>()?;
    let g = cases.len() as f64;
    let mean = without.iter().sum::<f64>() / g;
    let variance = (g - 1.0) / g * without.iter().map(|z| (z - mean).powi(2)).sum::<f64>();
    let z = pearson_of_sums(&full)?.atanh();
    let t = StudentsT::new(0.0, 1.0, g - 1.0).ok()?.inverse_cdf(0.975);
    let half = t * variance.sqrt();
    Some(((z - half).tanh(), (z + half).tanh()))
}

fn interval_methods(truth: f64) {
    let studies = 2000;
    for (cases, per_case) in [(40, 4), (40, 10), (100, 4), (100, 10)] {
        let mut rng = Lcg(99 + 7 * cases as u64 + per_case as u64);
        let (mut bca, mut percentile, mut below, mut jackknife) = (0, 0, 0, 0);
        for s in 0..studies {
            let sums = case_sums(&mut rng, cases, per_case);
            let config = BootstrapConfig {
                resamples: 1000,
                seed: s as u64,
            };
            let interval =
                cluster_bootstrap(&sums, |s| vec![pearson_of_sums(s)], 1, config, &NoProgress)
                    .remove(0)
                    .expect("r is defined");
            let holds = |low: f64, high: f64| usize::from(low <= truth && truth <= high);
            percentile += holds(interval.percentile_low, interval.percentile_high);
            below += usize::from(truth < interval.percentile_low);
            if let (Some(low), Some(high)) = (interval.bca_low, interval.bca_high) {
                bca += holds(low, high);
            }
            if let Some((low, high)) = jackknife_fisher(&sums) {
                jackknife += holds(low, high);
            }
        }
        let share = |k: usize| 100.0 * k as f64 / studies as f64;
        println!(
            "{cases} cases × {per_case} tasks, analytic r {truth:.4}, {studies} studies: BCa {:.1} %, percentile {:.1} % (true r below it {:.1} %), Fisher z with case jackknife {:.1} %",
            share(bca),
            share(percentile),
            share(below),
            share(jackknife)
        );
    }
}

fn main() {
    interval_methods(analytic_r());
    let mut rng = Lcg(13);
    let truth = true_r(&mut rng);
    let studies = 300;
    for (cases, per_case) in [(40, 4), (40, 10), (100, 4), (100, 10)] {
        let (mut fisher, mut bootstrap) = (0, 0);
        for s in 0..studies {
            let input = study(&mut rng, cases, per_case);
            let options = ReportOptions {
                grader: Some("grader".into()),
                bootstrap_resamples: 1000,
                seed: s as u64,
                ..ReportOptions::default()
            };
            let verdict = build_report(&input, &options, &NoProgress)
                .expect("report")
                .verdict
                .expect("verdict");
            let p = verdict.pearson.value().expect("r");
            fisher += usize::from(p.ci_low <= truth && truth <= p.ci_high);
            let (low, high) = (verdict.low.expect("low"), verdict.high.expect("high"));
            bootstrap += usize::from(low <= truth && truth <= high);
        }
        println!(
            "{cases} cases × {per_case} tasks, true r {truth:.4}, {studies} studies: Fisher interval covers {:.1} %, case bootstrap (the verdict's) {:.1} %",
            100.0 * fisher as f64 / studies as f64,
            100.0 * bootstrap as f64 / studies as f64
        );
    }
}
