//! The report end to end: CSV in, model, JSON keys, determinism, and the tables.

mod common;

use calibration::bootstrap::{NoProgress, Progress};
use calibration::coverage::{LeftOutScores, RubricVersionCount};
use calibration::csv_input::parse_long_csv;
use calibration::input::{
    CalibrationInput, CorrectnessJudgement, ErrorLabel, ItemErrors, ReportOptions, ScaleSpec,
};
use calibration::report::{build_report, ReportError};
use calibration::tables::{to_csv_tables, to_json};
use common::*;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

/// A deterministic pseudo-random stream for building test data (no external crate needed).
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
        // Box–Muller.
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn clip_round(v: f64) -> f64 {
    v.round().clamp(1.0, 5.0)
}

/// 3 clinicians and a grader scoring 60 items in 20 cases on a 1–5 scale; the grader is the
/// clinicians' latent score plus `grader_shift`, with the same noise as a clinician.
fn study_csv(grader_shift: f64) -> String {
    let mut rng = Lcg(7);
    let mut csv = String::from("item,rater,score,case,disease_group\n");
    for item in 0..60 {
        let truth = 3.0 + 1.2 * rng.normal();
        let group = ["stroke", "ms", "tumour"][item % 3];
        for rater in ["dr_a", "dr_b", "dr_c"] {
            let s = clip_round(truth + 0.5 * rng.normal());
            csv.push_str(&format!("i{item},{rater},{s},c{},{group}\n", item / 3));
        }
        let g = clip_round(truth + grader_shift + 0.5 * rng.normal());
        csv.push_str(&format!("i{item},grader,{g},c{},{group}\n", item / 3));
    }
    csv
}

fn options() -> ReportOptions {
    ReportOptions {
        grader: Some("grader".into()),
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        bootstrap_resamples: 400,
        seed: 42,
        ..ReportOptions::default()
    }
}

fn input_from(csv: &str) -> CalibrationInput {
    CalibrationInput {
        table: parse_long_csv(csv, "study.csv").expect("valid CSV"),
        ..CalibrationInput::default()
    }
}

#[test]
fn csv_problems_name_file_line_and_field_and_all_are_reported() {
    let csv = "item,rater,score,model\n\
               a,r1,3,gpt\n\
               a,r1,4,gpt\n\
               b,,x,gpt\n\
               c,r2,2\n\
               a,r2,2,llama\n";
    let error = parse_long_csv(csv, "ratings.csv").expect_err("invalid");
    let text = error.to_string();
    let expected = [
        "ratings.csv:3: rater: `r1` already scored item `a` on `overall` at line 2",
        "ratings.csv:4: rater: is empty",
        "ratings.csv:4: score: `x` is not a number",
        "ratings.csv:5: (row): has 3 fields, the header has 4",
        "ratings.csv:6: model: item `a` has `gpt` at line 2, here `llama`; a grouping column holds one value per item",
    ];
    for line in expected {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
    assert_eq!(error.problems.len(), expected.len(), "{text}");
    let missing = parse_long_csv("item,score\nx,1\n", "r.csv").expect_err("no rater column");
    assert!(missing
        .to_string()
        .starts_with("r.csv:1: rater: required column missing"));
}

#[test]
fn a_dimension_marked_na_is_no_score_and_overall_cannot_be_marked() {
    let csv = "item,rater,score,dimension\n\
               a,r1,3,\n\
               a,r1,NA,localisation\n\
               a,r1,n/a,style\n\
               a,r1,2,accuracy\n";
    let table = parse_long_csv(csv, "ratings.csv").expect("NA rows read");
    let scored: Vec<(&str, f64)> = table
        .scores
        .iter()
        .map(|s| (s.dimension.as_str(), s.score))
        .collect();
    assert_eq!(scored, [("overall", 3.0), ("accuracy", 2.0)]);

    let twice = "item,rater,score,dimension\na,r1,NA,localisation\na,r1,4,localisation\n";
    let text = parse_long_csv(twice, "ratings.csv")
        .expect_err("twice")
        .to_string();
    assert!(
        text.contains(
            "ratings.csv:3: rater: `r1` already scored item `a` on `localisation` at line 2"
        ),
        "{text}"
    );
    let overall = parse_long_csv("item,rater,score\na,r1,NA\nb,r1,2\n", "ratings.csv")
        .expect_err("overall NA")
        .to_string();
    assert!(
        overall.contains(
            "ratings.csv:2: score: `NA`: the overall score cannot be marked not applicable"
        ),
        "{overall}"
    );
}

#[test]
fn csv_reads_dimension_case_grouping_and_quotes() {
    let csv = "\u{feff}item,rater,score,dimension,case,task_family\r\n\
               t1,dr_a,4,,case 1,\"differential, diagnosis\"\r\n\
               t1,dr_a,2,reasoning,case 1,\"differential, diagnosis\"\r\n\
               \r\n\
               t2,dr_b,5,overall,,lesion\r\n";
    let table = parse_long_csv(csv, "x.csv").expect("valid");
    assert_eq!(table.scores.len(), 3);
    assert_eq!(table.scores[0].dimension, "overall");
    assert_eq!(table.scores[1].dimension, "reasoning");
    assert_eq!(table.grouping_columns, vec!["task_family".to_string()]);
    assert_eq!(table.items["t1"].case.as_deref(), Some("case 1"));
    assert_eq!(
        table.items["t1"].groups["task_family"],
        "differential, diagnosis"
    );
    assert_eq!(table.items["t2"].case, None);
}

#[test]
fn grader_vs_clinicians_figures_match_a_direct_computation() {
    let csv = study_csv(0.8);
    let input = input_from(&csv);
    let report = build_report(&input, &options(), &NoProgress).expect("report");
    let overall = &report.dimensions[0].overall;
    let grader = overall.grader.as_ref().expect("grader section");

    // Recompute r and the bias straight from the CSV rows, with textbook formulas.
    let mut g = vec![0.0; 60];
    let mut h = vec![0.0; 60];
    for row in csv.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let i: usize = f[0][1..].parse().expect("item index");
        let s: f64 = f[2].parse().expect("score");
        if f[1] == "grader" {
            g[i] = s
        } else {
            h[i] += s / 3.0
        }
    }
    let (mg, mh) = (g.iter().sum::<f64>() / 60.0, h.iter().sum::<f64>() / 60.0);
    let sxy: f64 = g.iter().zip(&h).map(|(a, b)| (a - mg) * (b - mh)).sum();
    let sxx: f64 = g.iter().map(|a| (a - mg).powi(2)).sum();
    let syy: f64 = h.iter().map(|b| (b - mh).powi(2)).sum();
    let pearson = grader.vs_human_mean.pearson.value().expect("r");
    close(pearson.r, sxy / (sxx * syy).sqrt(), 1e-12, "r");
    let bias = grader
        .vs_human_mean
        .bland_altman
        .value()
        .expect("bias")
        .bias;
    close(bias, mg - mh, 1e-12, "bias");
    assert!(bias > 0.4, "the grader was built lenient, bias {bias}");

    // The bootstrap estimates are the full-data statistics, inside their intervals.
    let boot_r = grader
        .vs_human_mean
        .bootstrap
        .pearson_r
        .value()
        .expect("boot r");
    close(boot_r.estimate, pearson.r, 1e-9, "bootstrap estimate of r");
    assert!(boot_r.percentile_low < pearson.r && pearson.r < boot_r.percentile_high);
    assert_eq!(boot_r.clusters, 20);
    let boot_bias = grader
        .vs_human_mean
        .bootstrap
        .bias
        .value()
        .expect("boot bias");
    close(boot_bias.estimate, bias, 1e-9, "bootstrap estimate of bias");
    let boot_icc = grader
        .vs_human_mean
        .bootstrap
        .icc2
        .value()
        .expect("boot icc2");
    let icc2 = grader.vs_human_mean.icc.icc2.value().expect("icc2").value;
    close(boot_icc.estimate, icc2, 1e-9, "bootstrap estimate of ICC2");

    // One group section per disease group, partitioning the items.
    let groups = &report.dimensions[0].groups;
    assert_eq!(groups.len(), 3);
    assert_eq!(groups.iter().map(|g| g.section.n_items).sum::<usize>(), 60);
    assert_eq!(grader.vs_each_rater.len(), 3);
    assert_eq!(grader.leave_one_rater_out.len(), 3);
    assert_eq!(grader.degradation.len(), 3);
    let verdict = report.verdict.as_ref().expect("verdict");
    assert!(
        verdict.summary.contains("higher than the clinicians"),
        "{}",
        verdict.summary
    );
}

#[test]
fn same_seed_gives_the_same_report_whatever_the_thread_count() {
    let input = input_from(&study_csv(0.0));
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool")
            .install(|| to_json(&build_report(&input, &options(), &NoProgress).expect("report")))
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
    let other_seed = ReportOptions {
        seed: 43,
        ..options()
    };
    let different = to_json(&build_report(&input, &other_seed, &NoProgress).expect("report"));
    assert_ne!(one, different, "the seed must matter");
}

#[test]
fn json_uses_the_stable_key_names_of_formats_section_5() {
    let report =
        build_report(&input_from(&study_csv(0.3)), &options(), &NoProgress).expect("report");
    let json: serde_json::Value = serde_json::from_str(&to_json(&report)).expect("valid JSON");
    let vs_mean = &json["dimensions"][0]["overall"]["grader"]["vs_human_mean"];
    for key in ["r", "ci_low", "ci_high", "p", "n"] {
        assert!(vs_mean["pearson"][key].is_number(), "pearson.{key}");
    }
    for key in ["rho", "ci_low", "ci_high", "p", "n"] {
        assert!(vs_mean["spearman"][key].is_number(), "spearman.{key}");
    }
    for key in ["tau", "p", "n"] {
        assert!(
            vs_mean["kendall_tau_b"][key].is_number(),
            "kendall_tau_b.{key}"
        );
    }
    for key in ["bias", "loa_low", "loa_high", "n"] {
        assert!(
            vs_mean["bland_altman"][key].is_number(),
            "bland_altman.{key}"
        );
    }
    for key in ["unweighted", "linear", "quadratic"] {
        assert!(
            vs_mean["cohen_kappa"][key]["value"].is_number(),
            "cohen_kappa.{key}"
        );
    }
    let human = &json["dimensions"][0]["overall"]["human_human"];
    for key in ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"] {
        for field in ["value", "ci_low", "ci_high"] {
            assert!(human["icc"][key][field].is_number(), "icc.{key}.{field}");
        }
    }
    assert!(human["icc"]["n"].is_number());
    for key in ["nominal", "ordinal", "interval"] {
        assert!(
            human["krippendorff_alpha"][key].is_number(),
            "krippendorff_alpha.{key}"
        );
    }
    assert!(human["fleiss_kappa"]["value"].is_number());
    assert!(human["fleiss_kappa"]["n"].is_number());
    assert!(!to_json(&report).contains("NaN"));
}

#[test]
fn unknown_grader_is_an_error_that_names_the_raters() {
    let options = ReportOptions {
        grader: Some("gpt-4o".into()),
        ..options()
    };
    let error =
        build_report(&input_from(&study_csv(0.0)), &options, &NoProgress).expect_err("unknown");
    assert!(matches!(error, ReportError::GraderNotFound { .. }));
    assert!(
        error.to_string().contains("dr_a, dr_b, dr_c, grader"),
        "{error}"
    );
}

#[test]
fn a_score_outside_the_scale_is_an_error_that_names_it() {
    let csv = "item,rater,score\na,r1,3\na,r2,9\nb,r1,2\nb,r2,4\n";
    let error = build_report(&input_from(csv), &options_with_grader("r1"), &NoProgress)
        .expect_err("9 is off a 1-5 scale");
    assert_eq!(
        error.to_string(),
        "score: r2 scored item 'a' 9 on 'overall', outside the scale 1 to 5"
    );
}

#[test]
fn too_few_items_are_not_estimable_rather_than_nan() {
    let csv = "item,rater,score\na,r1,3\na,r2,3\nb,r1,3\nb,r2,3\na,g,4\nb,g,2\n";
    let report =
        build_report(&input_from(csv), &options_with_grader("g"), &NoProgress).expect("report");
    let json = to_json(&report);
    // Absent optional sections are null; a statistic is never a NaN or a null number.
    assert!(!json.contains("NaN"), "{json}");
    let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let pearson = &value["dimensions"][0]["overall"]["grader"]["vs_human_mean"]["pearson"];
    assert!(
        pearson["not_estimable"].is_string() && pearson.get("r").is_none(),
        "{pearson}"
    );
    let grader = report.dimensions[0]
        .overall
        .grader
        .as_ref()
        .expect("grader");
    assert!(grader.vs_human_mean.pearson.reason().is_some());
    assert!(report.dimensions[0]
        .overall
        .human_human
        .icc
        .icc2
        .reason()
        .is_some());
}

fn options_with_grader(name: &str) -> ReportOptions {
    ReportOptions {
        grader: Some(name.into()),
        ..options()
    }
}

#[test]
fn progress_reaches_the_total_once_every_resample_is_done() {
    struct Last(AtomicU64, AtomicU64);
    impl Progress for Last {
        fn phase(&self, _name: &str, total: u64) {
            self.1.store(total, Ordering::Relaxed);
        }
        fn advance(&self, done: u64) {
            self.0.fetch_max(done, Ordering::Relaxed);
        }
    }
    let progress = Last(AtomicU64::new(0), AtomicU64::new(0));
    build_report(&input_from(&study_csv(0.0)), &options(), &progress).expect("report");
    // 1 dimension × (overall + 3 groups + the grouping column's joint test of differences)
    // × 400 resamples.
    assert_eq!(progress.1.load(Ordering::Relaxed), 2000);
    assert_eq!(progress.0.load(Ordering::Relaxed), 2000);
}

#[test]
fn a_cancel_stops_the_report_at_the_next_section() {
    /// Asks to stop once the first section has resampled, and counts what was done after.
    struct CancelAfterFirstSection(AtomicU64);
    impl Progress for CancelAfterFirstSection {
        fn phase(&self, _name: &str, _total: u64) {}
        fn advance(&self, done: u64) {
            self.0.fetch_max(done, Ordering::Relaxed);
        }
        fn cancelled(&self) -> bool {
            self.0.load(Ordering::Relaxed) >= 400
        }
    }
    let progress = CancelAfterFirstSection(AtomicU64::new(0));
    let result = build_report(&input_from(&study_csv(0.0)), &options(), &progress);
    assert_eq!(result.err(), Some(ReportError::Cancelled));
    // A dimension's five sections (400 resamples each) run concurrently, one per core: those
    // begun when the cancel came finish, none begins after it. On these 2 cores that is two
    // sections at most; a report that ignored the cancel would reach 2,000.
    let done = progress.0.load(Ordering::Relaxed);
    let threads = rayon::current_num_threads().min(5) as u64;
    assert!(
        (400..=400 * threads).contains(&done),
        "{done} resamples done after a cancel at 400 with {threads} threads"
    );
}

#[test]
fn alt_test_passes_a_grader_that_is_the_consensus_and_fails_a_random_one() {
    let mut rng = Lcg(11);
    let mut good = String::from("item,rater,score\n");
    let mut bad = good.clone();
    for item in 0..80 {
        let truth = 3.0 + rng.normal();
        let scores: Vec<f64> = (0..4)
            .map(|_| clip_round(truth + 0.8 * rng.normal()))
            .collect();
        for (r, s) in scores.iter().enumerate() {
            good.push_str(&format!("i{item},dr{r},{s}\n"));
            bad.push_str(&format!("i{item},dr{r},{s}\n"));
        }
        let consensus = scores.iter().sum::<f64>() / 4.0;
        good.push_str(&format!("i{item},grader,{consensus}\n"));
        bad.push_str(&format!(
            "i{item},grader,{}\n",
            clip_round(1.0 + 4.0 * rng.uniform())
        ));
    }
    let unscaled = ReportOptions {
        scale: None,
        ..options()
    };
    let alt = |csv: &str| {
        let report = build_report(&input_from(csv), &unscaled, &NoProgress).expect("report");
        report.dimensions[0]
            .overall
            .grader
            .clone()
            .expect("grader")
            .alt_test
    };
    let passed = alt(&good);
    let passed = passed.value().expect("alt test");
    assert!(passed.passed, "{passed:?}");
    assert_eq!(passed.winning_rate, 1.0);
    let failed = alt(&bad);
    let failed = failed.value().expect("alt test");
    assert!(!failed.passed, "{failed:?}");
    assert_eq!(failed.winning_rate, 0.0);
    close(failed.epsilon, 0.2, 0.0, "default epsilon");
}

#[test]
fn error_categories_precision_recall_and_dangerous_cases() {
    let csv = "item,rater,score\n\
               a,dr1,2\na,dr2,2\na,g,5\n\
               b,dr1,4\nb,dr2,4\nb,g,4\n\
               c,dr1,3\nc,dr2,3\nc,g,2\n\
               d,dr1,5\nd,dr2,5\nd,g,5\n";
    let label = |rater: &str, category: &str, severity: u8| ErrorLabel {
        rater: rater.into(),
        category: category.into(),
        severity,
    };
    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let mut input = input_from(csv);
    input.errors = vec![
        // Both found a significant missed finding; the grader scored 5 and claimed nothing.
        ItemErrors {
            item: "a".into(),
            grader_claims: set(&[]),
            reviewers: set(&["dr1", "dr2"]),
            clinician_labels: vec![label("dr1", "P1", 3), label("dr2", "P1", 2)],
        },
        ItemErrors {
            item: "b".into(),
            grader_claims: set(&["P1"]),
            reviewers: set(&["dr1", "dr2"]),
            clinician_labels: vec![label("dr1", "P1", 1)],
        },
        ItemErrors {
            item: "c".into(),
            grader_claims: set(&["R1"]),
            reviewers: set(&["dr1", "dr2"]),
            clinician_labels: vec![label("dr1", "R1", 2), label("dr2", "R1", 2)],
        },
        ItemErrors {
            item: "d".into(),
            grader_claims: set(&["P1"]),
            reviewers: set(&["dr1", "dr2"]),
            clinician_labels: vec![],
        },
    ];
    input.correctness = (0..5)
        .map(|sample| CorrectnessJudgement {
            case: "c".into(),
            model: "m".into(),
            task_family: "differential".into(),
            level: "1".into(),
            task: "t".into(),
            sample,
            rater: "dr1".into(),
            correct: sample == 0,
        })
        .collect();
    let report = build_report(&input, &options_with_grader("g"), &NoProgress).expect("report");
    let errors = report.error_categories.as_ref().expect("error section");
    // Scale 1–5: "high" is ≥ 4.
    assert_eq!(errors.high_score_threshold, Some(4.0));
    let p1 = errors
        .categories
        .iter()
        .find(|c| c.category == "P1")
        .expect("P1");
    // Clinician label needs half of the reviewers: a yes (2 of 2), b yes (1 of 2), d no.
    assert_eq!((p1.grader_claimed, p1.clinicians_labelled), (2, 2));
    assert_eq!(p1.precision.as_ref().map(|p| (p.count, p.n)), Some((1, 2)));
    assert_eq!(p1.recall.as_ref().map(|p| (p.count, p.n)), Some((1, 2)));
    let dangerous: Vec<&str> = errors
        .dangerous_cases
        .iter()
        .map(|d| d.item.as_str())
        .collect();
    assert_eq!(
        dangerous,
        vec!["a"],
        "b's error is severity 1, c's grader score is low"
    );
    let distribution = report.error_distribution.as_ref().expect("distribution");
    assert_eq!(distribution.total, 3);
    let perceptual = distribution
        .by_bucket
        .iter()
        .find(|b| b.name == "perceptual")
        .expect("bucket");
    assert_eq!(perceptual.share.count, 2);
    // 5 samples, 1 correct: pass@1 = 1/5, pass@5 = 1.
    let at = |k: usize| {
        report
            .pass_at_k
            .iter()
            .find(|r| r.k == k)
            .and_then(|r| r.pass_at_k.value().map(|v| v.value))
    };
    close(at(1).expect("pass@1"), 0.2, 1e-12, "pass@1");
    close(at(5).expect("pass@5"), 1.0, 1e-12, "pass@5");
    let tables = to_csv_tables(&report);
    let names: Vec<&str> = tables.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "agreement.csv",
            "per_rater.csv",
            "degradation.csv",
            "pass_at_k.csv",
            "error_distribution.csv",
            "error_distribution_by_model.csv",
            "intra_rater.csv",
            "ppi.csv",
            "missed_findings.csv",
            "missed_findings_by_model.csv",
            "automatic_metrics.csv",
            "dimension_coverage.csv",
            "rubric_versions.csv",
            "model_reliability.csv",
            "answer_accuracy.csv",
        ]
    );
    assert!(
        tables[3].1.contains("\nm,differential,1,1,0.19999"),
        "{}",
        tables[3].1
    );
}

#[test]
fn html_is_self_contained_escapes_names_and_states_the_verdict() {
    let csv = study_csv(0.8).replace("dr_a", "dr_<a&b>");
    let report = build_report(&input_from(&csv), &options(), &NoProgress).expect("report");
    let html = calibration::html::to_html(&report);
    assert!(html.starts_with("<!DOCTYPE html>"));
    for forbidden in ["<script", "src=", "href=", "@import", "url("] {
        assert!(
            !html.contains(forbidden),
            "the page must not load anything: found {forbidden}"
        );
    }
    assert!(html.contains("dr_&lt;a&amp;b&gt;") && !html.contains("dr_<a&b>"));
    assert!(html.contains("@media print"));
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    // One scatter, Bland–Altman, heatmap and forest plot for the one dimension.
    assert_eq!(html.matches("<svg").count(), 4);
    let verdict = report.verdict.as_ref().expect("verdict");
    assert!(html.contains(&verdict.summary));
}

#[test]
fn other_grader_versions_are_not_clinicians_and_their_drift_is_reported() {
    // v2 scores every item exactly one point above v1.
    let mut csv = study_csv(0.0);
    let extra: Vec<String> = csv
        .lines()
        .filter(|l| l.contains(",grader,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let score: f64 = f[2].parse().expect("score");
            format!("{},grader_v2,{},{},{}\n", f[0], score + 1.0, f[3], f[4])
        })
        .collect();
    csv.push_str(&extra.concat());
    let options = ReportOptions {
        other_grader_versions: vec!["grader_v2".into()],
        // v2's 5 + 1 must be on the scale: a score off the scale is an error.
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 6.0,
            step: 1.0,
        }),
        ..options()
    };
    let report = build_report(&input_from(&csv), &options, &NoProgress).expect("report");
    assert_eq!(report.summary.human_raters, ["dr_a", "dr_b", "dr_c"]);
    let drift = &report.grader_drift[0];
    assert_eq!(drift.version, "grader_v2");
    let shift = drift.vs_primary.bland_altman.value().expect("shift");
    close(shift.bias, 1.0, 1e-12, "v2 − v1");
    close(
        drift.vs_primary.pearson.value().expect("r").r,
        1.0,
        1e-12,
        "r between versions",
    );
}

#[test]
fn one_reviewers_labels_are_not_a_consensus() {
    let csv = "item,rater,score\n\
               a,dr1,2\na,dr2,2\na,g,5\n\
               b,dr1,4\nb,dr2,4\nb,g,4\n\
               c,dr1,3\nc,dr2,3\nc,g,2\n";
    let label = |rater: &str| ErrorLabel {
        rater: rater.into(),
        category: "P1".into(),
        severity: 2,
    };
    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let mut input = input_from(csv);
    input.errors = vec![
        ItemErrors {
            item: "a".into(),
            grader_claims: set(&["P1"]),
            reviewers: set(&["dr1", "dr2"]),
            clinician_labels: vec![label("dr1"), label("dr2")],
        },
        // Reviewed by dr1 alone.
        ItemErrors {
            item: "b".into(),
            grader_claims: set(&[]),
            reviewers: set(&["dr1"]),
            clinician_labels: vec![label("dr1")],
        },
        // No reviewers recorded: the one clinician who labelled it.
        ItemErrors {
            item: "c".into(),
            grader_claims: set(&[]),
            reviewers: set(&[]),
            clinician_labels: vec![label("dr2")],
        },
    ];
    let report = build_report(&input, &options_with_grader("g"), &NoProgress).expect("report");
    let errors = report.error_categories.expect("error section");
    assert_eq!((errors.items, errors.items_without_consensus), (3, 2));
    let p1 = &errors.categories[0];
    assert_eq!(
        (p1.n, p1.grader_claimed, p1.clinicians_labelled),
        (1, 1, 1),
        "only item a has a consensus"
    );
    assert_eq!(p1.recall.as_ref().map(|r| (r.count, r.n)), Some((1, 1)));
    // A dangerous case needs only one clinician's serious label: a (grader 5) and b (grader 4).
    let dangerous: Vec<&str> = errors
        .dangerous_cases
        .iter()
        .map(|d| d.item.as_str())
        .collect();
    assert_eq!(dangerous, ["a", "b"]);
}

#[test]
fn rubric_versions_are_counted_in_json_html_and_csv_and_the_html_names_the_one_read() {
    let mut report =
        build_report(&input_from(&study_csv(0.8)), &options(), &NoProgress).expect("report");
    // From a CSV: no versions, no key, a header-only table, no section.
    assert!(serde_json::to_value(&report)
        .unwrap()
        .get("rubric_versions")
        .is_none());
    let table = |report: &calibration::report::Report| {
        to_csv_tables(report)
            .into_iter()
            .find(|t| t.0 == "rubric_versions.csv")
            .expect("the table")
            .1
    };
    assert_eq!(
        table(&report).trim_end(),
        "rubric_version,ratings,current,left_out"
    );
    assert!(!calibration::html::to_html(&report).contains("Rubric versions"));

    report.rubric_versions = Some(vec![
        RubricVersionCount {
            version: 1,
            ratings: 7,
            current: false,
            left_out: vec![LeftOutScores {
                dimension: "safety".into(),
                scores: 7,
                reason: "version 1 scored it 1–5 by 1, the current version 1–3 by 1".into(),
            }],
        },
        RubricVersionCount {
            version: 2,
            ratings: 3,
            current: true,
            left_out: vec![],
        },
    ]);
    assert_eq!(
        serde_json::to_value(&report).unwrap()["rubric_versions"],
        serde_json::json!([
            {"version": 1, "ratings": 7, "current": false, "left_out": [{
                "dimension": "safety", "scores": 7,
                "reason": "version 1 scored it 1–5 by 1, the current version 1–3 by 1"}]},
            {"version": 2, "ratings": 3, "current": true, "left_out": []}
        ])
    );
    assert_eq!(
        table(&report).trim_end(),
        "rubric_version,ratings,current,left_out\n\
         1,7,false,\"safety: 7 (version 1 scored it 1–5 by 1, the current version 1–3 by 1)\"\n\
         2,3,true,"
    );
    let html = calibration::html::to_html(&report);
    assert!(html.contains("<h2>Rubric versions</h2>"));
    assert!(html.contains("(version 2 is current)"));
    assert!(html.contains(
        "<td class=\"num\">7</td><td>safety: 7 scores (version 1 scored it 1–5 by 1, the current version 1–3 by 1)</td>"
    ));
}

/// Issue 41, finding 8d: a study where the grader's r is not estimable (here three items, below
/// the four Pearson needs) gets "not estimable", its own state, not "below the bar".
#[test]
fn model_reliability_is_a_csv_table_and_an_html_section_with_the_json_figures() {
    use calibration::reliability::{model_reliability, RunRecord};
    let mut report =
        build_report(&input_from(&study_csv(0.8)), &options(), &NoProgress).expect("report");
    let table = |report: &calibration::report::Report| {
        to_csv_tables(report)
            .into_iter()
            .find(|t| t.0 == "model_reliability.csv")
            .expect("the table")
            .1
    };
    let header = "name,kind,items,requests,prompt_tokens,completion_tokens,mean_tokens_per_item,\
                  latency_ms_p50,latency_ms_p95,malformed_output_rate,cost";
    // Without run records (imported results): a header-only table and no section.
    assert_eq!(table(&report).trim_end(), header);
    assert!(!calibration::html::to_html(&report).contains("Model reliability"));

    let record = |name: &str, kind: &str, latency_ms, requests, cost| RunRecord {
        name: name.into(),
        kind: kind.into(),
        prompt_tokens: 1000,
        completion_tokens: 200,
        latency_ms,
        requests,
        cost,
    };
    report.model_reliability = Some(model_reliability(&[
        record("judge <v2>", "grader", 900, 1, None),
        record("judge <v2>", "grader", 1500, 3, None),
        record("vlm-a", "model", 4000, 1, Some(0.25)),
        record("vlm-a", "model", 6000, 2, Some(0.5)),
    ]));
    // Two items each: 1,200 tokens per item; the median latency halfway between the two, the
    // 95th percentile 0.95 of the way; the grader re-asked twice in four replies.
    assert_eq!(
        table(&report),
        format!(
            "{header}\n\
             judge <v2>,grader,2,4,2000,400,1200,1200,1470,0.5,\n\
             vlm-a,model,2,3,2000,400,1200,5000,5900,,0.75\n"
        )
    );
    let html = calibration::html::to_html(&report);
    let section = &html[html.find("Model reliability").expect("the section")..];
    assert!(
        section.contains("<td>judge &lt;v2&gt;</td><td>grader</td>"),
        "{section}"
    );
    assert!(
        section.contains("<td class=\"num\">50.0%</td><td class=\"num\">—</td>"),
        "{section}"
    );
    assert!(section.contains("<td class=\"num\">5000 ms</td><td class=\"num\">5900 ms</td><td class=\"num\">—</td><td class=\"num\">0.7500</td>"), "{section}");
}

#[test]
fn answer_accuracy_csv_holds_each_rows_figures_under_its_header() {
    use calibration::truth_match::{answer_accuracy, MatchedAnswer};
    let mut report =
        build_report(&input_from(&study_csv(0.8)), &options(), &NoProgress).expect("report");
    let answer = |case: &str, sample: u32, top1: Option<bool>| MatchedAnswer {
        item: format!("{case}/t/m/{sample}"),
        case: case.into(),
        task: format!("{case}/t"),
        model: "m".into(),
        task_family: "differential_diagnosis".into(),
        level: "1".into(),
        true_group: "stroke".into(),
        top1,
        top3: top1.map(|_| true),
        predicted_group: if top1 == Some(true) {
            "stroke"
        } else {
            "tumour"
        }
        .into(),
        exact: top1 == Some(true),
        contradictions: usize::from(top1 == Some(false)),
        unmatched_span: top1.is_none().then(|| "Neurosarcoidosis".to_owned()),
    };
    let answers = [
        answer("c0", 0, Some(true)),
        answer("c0", 1, Some(false)),
        answer("c1", 0, Some(true)),
        answer("c1", 1, None),
    ];
    let rows = answer_accuracy(&answers, &CalibrationInput::default(), &options(), None);
    report.answer_accuracy = Some(rows.clone());
    let table = to_csv_tables(&report)
        .into_iter()
        .find(|t| t.0 == "answer_accuracy.csv")
        .expect("the table")
        .1;
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    // The pass@k cell is JSON with commas inside quotes: read the line as CSV.
    let cells: Vec<Vec<String>> = lines
        .map(|l| {
            let mut out = vec![String::new()];
            let mut quoted = false;
            let mut chars = l.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '"' if quoted && chars.peek() == Some(&'"') => {
                        out.last_mut().unwrap().push('"');
                        chars.next();
                    }
                    '"' => quoted = !quoted,
                    ',' if !quoted => out.push(String::new()),
                    c => out.last_mut().unwrap().push(c),
                }
            }
            out
        })
        .collect();
    assert_eq!(cells.len(), rows.len());
    for (row, cells) in rows.iter().zip(&cells) {
        assert_eq!(cells.len(), header.len());
        let cell = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()].as_str();
        assert_eq!(cell("model"), "m");
        assert_eq!(
            cell("task_family"),
            row.task_family.as_deref().unwrap_or("")
        );
        assert_eq!(
            (cell("n"), cell("unmatched"), cell("exact")),
            ("4", "1", "2")
        );
        assert_eq!(cell("contradicted_findings"), "1");
        let top1 = row.top1.value().unwrap();
        assert_eq!(cell("top1"), (2.0f64 / 3.0).to_string());
        assert_eq!(cell("top1_low"), top1.low.to_string());
        assert_eq!(cell("top3"), "1");
        assert_eq!(cell("macro_f1"), row.macro_f1.value().unwrap().to_string());
        let pass: serde_json::Value = serde_json::from_str(cell("pass_at")).unwrap();
        for (k, e) in &row.pass_at {
            assert_eq!(pass[k].as_f64(), e.value().map(|v| v.value), "pass@{k}");
        }
        // No clinician judged correctness and no grader verdicts were given: κ empty, said why.
        assert_eq!((cell("kappa_clinicians"), cell("kappa_grader")), ("", ""));
        assert_eq!(cell("not_estimable"), "");
    }
}

#[test]
fn a_verdict_with_no_r_is_not_estimable_rather_than_below_the_bar() {
    let csv = "item,rater,score,case\n\
               a,dr_a,3,c1\na,dr_b,4,c1\na,grader,3,c1\n\
               b,dr_a,2,c2\nb,dr_b,2,c2\nb,grader,2,c2\n\
               c,dr_a,5,c3\nc,dr_b,4,c3\nc,grader,5,c3\n";
    let report = build_report(&input_from(csv), &options(), &NoProgress).expect("a report");
    let verdict = report.verdict.expect("a grader was named");
    assert!(verdict.pearson.value().is_none());
    assert_eq!(
        verdict.standing,
        calibration::report::Standing::NotEstimable
    );
    assert!(!verdict.meets_bar && !verdict.lower_bound_meets_bar);
    assert!(
        verdict.summary.starts_with("Not estimable:"),
        "{}",
        verdict.summary
    );
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["standing"], "not_estimable");
    let html = calibration::html::to_html(
        &build_report(&input_from(csv), &options(), &NoProgress).unwrap(),
    );
    assert!(html.contains("<div class=\"verdict not-estimable\"><strong>Not estimable</strong>"));
    assert!(!html.contains("does not meet the bar"));

    // And the three others, on the study of 60 items: r is estimable there.
    let estimable = build_report(&input_from(&study_csv(0.0)), &options(), &NoProgress)
        .unwrap()
        .verdict
        .unwrap();
    let p = estimable.pearson.value().expect("60 items").r;
    let expected = match (estimable.low.unwrap() >= 0.9, p >= 0.9) {
        (true, _) => calibration::report::Standing::MeetsBar,
        (false, true) => calibration::report::Standing::EstimateMeetsBar,
        (false, false) => calibration::report::Standing::BelowBar,
    };
    assert_eq!(estimable.standing, expected);
}

/// Issue 41, finding 8c: items no clinician scored (a grader's score only) are counted apart
/// from the rated items, not as items the figures rest on.
#[test]
fn item_counts_say_rated_and_unrated() {
    let mut csv = study_csv(0.0);
    // Two more items in a new case, scored by the grader alone.
    csv.push_str("x1,grader,3,c99,stroke\nx2,grader,4,c99,stroke\n");
    let report = build_report(&input_from(&csv), &options(), &NoProgress).unwrap();
    let s = &report.summary;
    // By construction: 60 items in 20 cases rated by three clinicians, 2 more by the grader only.
    assert_eq!((s.items, s.cases), (62, 21));
    assert_eq!((s.rated_items, s.unrated_items, s.rated_cases), (60, 2, 20));
    assert!(calibration::html::to_html(&report).contains("60 rated items in 20 cases (2 unrated)"));
}

/// Issue 41, finding 7a: the grader workbench's agreement quotes the verdict's kind of interval
/// (cases resampled), made by the same function: on the same scores it is the verdict's, to the
/// bit, and not the Fisher-z interval that counts items as independent.
#[test]
fn the_workbench_interval_is_the_verdicts_case_interval() {
    let csv = study_csv(0.3);
    let report = build_report(&input_from(&csv), &options(), &NoProgress).unwrap();
    let verdict = report.verdict.unwrap();
    // The same items as the workbench sees them: each clinician's score and the grader's.
    let table = parse_long_csv(&csv, "study.csv").unwrap();
    let mut items: std::collections::BTreeMap<String, calibration::grader_items::ItemComparison> =
        Default::default();
    for s in &table.scores {
        let entry = items.entry(s.item.clone()).or_insert_with(|| {
            calibration::grader_items::ItemComparison {
                item: s.item.clone(),
                case: table.items[&s.item].case.clone().unwrap(),
                clinician_scores: vec![],
                grader_score: f64::NAN,
            }
        });
        if s.rater == "grader" {
            entry.grader_score = s.score;
        } else {
            entry.clinician_scores.push(s.score);
        }
    }
    let items: Vec<_> = items.into_values().collect();
    let agreement = calibration::grader_items::agreement(&items);
    let interval = agreement
        .pearson_case_interval
        .value()
        .expect("20 cases: a jackknife interval");
    assert_eq!(
        interval.method,
        "delete-one-case jackknife on Fisher's z, t(19)"
    );
    assert_eq!(interval.cases, 20);
    close(interval.low, verdict.low.unwrap(), SAME_SUMS, "low");
    close(interval.high, verdict.high.unwrap(), SAME_SUMS, "high");
    let fisher = agreement.pearson.value().unwrap();
    assert!(
        (fisher.ci_low - interval.low).abs() > 1e-6,
        "the Fisher-z interval is another interval"
    );
}
