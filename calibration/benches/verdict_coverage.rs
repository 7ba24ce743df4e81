//! Coverage of the verdict's interval on clustered data (issue 13): how often the 95 % interval
//! of r (grader vs the clinicians' mean) holds the true r, for the Fisher interval (items taken as
//! independent) and for the verdict's case bootstrap, when the grader's error is partly shared by
//! the tasks of a case. A simulation, run by hand (`cargo bench -p neurorater-calibration --bench
//! verdict_coverage`), not a test: it takes tens of seconds and its result is a rate.

use calibration::bootstrap::NoProgress;
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
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

fn main() {
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
