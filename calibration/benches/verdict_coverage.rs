//! Coverage of the verdict's interval on clustered data (issue 13): how often the 95 % interval
//! of r (grader vs the clinicians' mean) holds the true r, and how often the true r lies below it
//! (the verdict's claim is the lower end: 2.5 % is nominal), for the Fisher interval (items taken
//! as independent), the case bootstrap and the verdict's delete-one-case jackknife on Fisher's z,
//! when the grader's error is partly shared by the tasks of a case. A simulation, run by hand
//! (`cargo bench -p neurorater-calibration --bench verdict_coverage`), not a test: it takes
//! minutes and its result is a rate.
//!
//! Two parts. The first runs the whole report (the verdict as a reader gets it) on 300 studies per
//! design. The second resamples r alone from the same model, so it affords 2,000 studies per
//! design (simulation error ± 1 point at 95 %), and sets the two case-bootstrap intervals (BCa and
//! percentile) beside the jackknife (`calibration::jackknife`, the verdict's), against the
//! analytic true r.

use calibration::bootstrap::{cluster_bootstrap, BootstrapConfig, NoProgress};
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::jackknife::case_jackknife_fisher;
use calibration::report::build_report;

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

/// How often intervals hold the truth, and how often the truth lies below them.
#[derive(Default)]
struct Tally {
    holds: usize,
    below: usize,
}

impl Tally {
    fn add(&mut self, (low, high): (f64, f64), truth: f64) {
        self.holds += usize::from(low <= truth && truth <= high);
        self.below += usize::from(truth < low);
    }

    fn describe(&self, studies: usize) -> String {
        let share = |k: usize| 100.0 * k as f64 / studies as f64;
        format!(
            "{:.1} % (true r below {:.1} %)",
            share(self.holds),
            share(self.below)
        )
    }
}

fn interval_methods(truth: f64) {
    let studies = 2000;
    for (cases, per_case) in [(40, 4), (40, 10), (100, 4), (100, 10)] {
        let mut rng = Lcg(99 + 7 * cases as u64 + per_case as u64);
        let (mut bca, mut percentile, mut jackknife) =
            (Tally::default(), Tally::default(), Tally::default());
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
            percentile.add((interval.percentile_low, interval.percentile_high), truth);
            if let (Some(low), Some(high)) = (interval.bca_low, interval.bca_high) {
                bca.add((low, high), truth);
            }
            if let Ok(j) = case_jackknife_fisher(&sums, pearson_of_sums) {
                jackknife.add((j.low, j.high), truth);
            }
        }
        println!(
            "{cases} cases × {per_case} tasks, analytic r {truth:.4}, {studies} studies: BCa {}, percentile {}, jackknife on Fisher's z (the verdict's) {}",
            bca.describe(studies),
            percentile.describe(studies),
            jackknife.describe(studies)
        );
    }
}

fn main() {
    interval_methods(analytic_r());
    let mut rng = Lcg(13);
    let truth = true_r(&mut rng);
    let studies = 300;
    for (cases, per_case) in [(40, 4), (40, 10), (100, 4), (100, 10)] {
        let (mut fisher, mut bootstrap, mut verdict_interval) =
            (Tally::default(), Tally::default(), Tally::default());
        for s in 0..studies {
            let input = study(&mut rng, cases, per_case);
            let options = ReportOptions {
                grader: Some("grader".into()),
                bootstrap_resamples: 1000,
                seed: s as u64,
                ..ReportOptions::default()
            };
            let report = build_report(&input, &options, &NoProgress).expect("report");
            let verdict = report.verdict.as_ref().expect("verdict");
            let p = verdict.pearson.value().expect("r");
            fisher.add((p.ci_low, p.ci_high), truth);
            let grader = report.dimensions[0]
                .overall
                .grader
                .as_ref()
                .expect("grader");
            let b = grader
                .vs_human_mean
                .bootstrap
                .pearson_r
                .value()
                .expect("bootstrap");
            bootstrap.add((b.bca_low.expect("BCa"), b.bca_high.expect("BCa")), truth);
            assert!(verdict.method.starts_with("delete-one-case jackknife"));
            verdict_interval.add(
                (verdict.low.expect("low"), verdict.high.expect("high")),
                truth,
            );
        }
        println!(
            "{cases} cases × {per_case} tasks, true r {truth:.4}, {studies} studies: Fisher interval {}, case bootstrap BCa {}, the verdict's (jackknife on Fisher's z) {}",
            fisher.describe(studies),
            bootstrap.describe(studies),
            verdict_interval.describe(studies)
        );
    }
}
