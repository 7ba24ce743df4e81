//! The full report on 10,000 items scored by 4 clinicians and a grader (5 raters), in 5,000 cases,
//! with two grouping columns (7 subgroups) and 2,000 cluster-bootstrap resamples per section.
//! Goal: ≤ 1 s on 2 cores (docs/calibration.md, "Performance").

use calibration::bootstrap::NoProgress;
use calibration::input::{
    CalibrationInput, ItemInfo, LongTable, ReportOptions, ScaleSpec, ScoreRow,
};
use calibration::report::build_report;
use criterion::{criterion_group, criterion_main, Criterion};

/// Deterministic normal draws (LCG + Box–Muller) so every run benchmarks the same data.
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

fn study(items: usize) -> CalibrationInput {
    let mut rng = Lcg(2026);
    let groups = ["stroke", "multiple_sclerosis", "tumour", "other", "normal"];
    let mut table = LongTable {
        grouping_columns: vec!["disease_group".into(), "modality".into()],
        ..LongTable::default()
    };
    for i in 0..items {
        let item = format!("t{i:05}");
        let group = groups[(i / 2) % groups.len()];
        let truth = 3.0 + 1.1 * rng.normal();
        let mut info = ItemInfo {
            case: Some(format!("case{:05}", i / 2)),
            ..ItemInfo::default()
        };
        info.groups.insert("disease_group".into(), group.into());
        info.groups.insert(
            "modality".into(),
            if (i / 2) % 3 == 0 { "CT" } else { "MR" }.into(),
        );
        table.items.insert(item.clone(), info);
        for rater in ["dr_a", "dr_b", "dr_c", "dr_d"] {
            let score = (truth + 0.55 * rng.normal()).round().clamp(1.0, 5.0);
            table.scores.push(ScoreRow {
                item: item.clone(),
                rater: rater.into(),
                dimension: "overall".into(),
                score,
            });
        }
        let score = (truth + 0.4 + 0.5 * rng.normal()).round().clamp(1.0, 5.0);
        table.scores.push(ScoreRow {
            item,
            rater: "grader".into(),
            dimension: "overall".into(),
            score,
        });
    }
    CalibrationInput {
        table,
        ..CalibrationInput::default()
    }
}

fn full_report(c: &mut Criterion) {
    let input = study(10_000);
    let options = ReportOptions {
        grader: Some("grader".into()),
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        bootstrap_resamples: 2000,
        ..ReportOptions::default()
    };
    let mut group = c.benchmark_group("calibration");
    group.sample_size(10);
    group.bench_function("full_report_10k_items_5_raters_2000_resamples", |b| {
        b.iter(|| build_report(&input, &options, &NoProgress).expect("report"))
    });
    group.finish();
}

criterion_group!(benches, full_report);
criterion_main!(benches);
