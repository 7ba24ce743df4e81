//! `verdict.readers_random` (the grader against a clinician, clinicians and cases random) against
//! base R on a clustered study (`data/readers_random_reference.json`, made by
//! `scripts/reference/calibration/make_readers_random_reference.R`, which recomputes every
//! jackknife r on the items left after deleting a case and applies Hillis's single-treatment
//! formulas); and what must hold whatever the data.

mod common;

use calibration::bootstrap::NoProgress;
use calibration::input::{
    CalibrationInput, ItemInfo, LongTable, ReportOptions, ScaleSpec, ScoreRow,
};
use calibration::readers_random::ReadersRandom;
use calibration::report::{build_report, Report};
use common::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/readers_random_reference.json"))
        .expect("readers_random_reference.json is valid JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

/// The reference's scores, without the raters in `without`, plus `extra` (item, case, rater,
/// score) rows.
fn input(without: &[&str], extra: &[(&str, &str, &str, f64)]) -> CalibrationInput {
    let reference = reference();
    let rows = reference["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .map(|s| {
            (
                s["item"].as_str().expect("item").to_string(),
                s["case"].as_str().expect("case").to_string(),
                s["rater"].as_str().expect("rater").to_string(),
                f(&s["score"]),
            )
        });
    let extra = extra
        .iter()
        .map(|&(i, c, r, s)| (i.to_string(), c.to_string(), r.to_string(), s));
    let mut table = LongTable::default();
    for (item, case, rater, score) in rows.chain(extra) {
        if without.contains(&rater.as_str()) {
            continue;
        }
        table.items.insert(
            item.clone(),
            ItemInfo {
                case: Some(case),
                ..ItemInfo::default()
            },
        );
        table.scores.push(ScoreRow {
            item,
            rater,
            dimension: "overall".into(),
            score,
        });
    }
    CalibrationInput {
        table,
        ..CalibrationInput::default()
    }
}

fn report(input: &CalibrationInput) -> Report {
    let options = ReportOptions {
        grader: Some("grader".into()),
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    };
    build_report(input, &options, &NoProgress).expect("report")
}

fn readers_random(report: &Report) -> &calibration::Estimate<ReadersRandom> {
    &report.verdict.as_ref().expect("verdict").readers_random
}

#[test]
fn matches_base_r() {
    let reference = reference();
    let expected = &reference["expected"];
    let report = report(&input(&[], &[]));
    let rr = readers_random(&report).value().expect("estimable");
    close(rr.estimate, f(&expected["estimate"]), SCIPY_EXACT, "mean ψ");
    close(rr.low, f(&expected["low"]), DISTRIBUTION, "low");
    close(rr.high, f(&expected["high"]), DISTRIBUTION, "high");
    close_relative(rr.df, f(&expected["df"]), 1e-9, "Hillis df");
    assert_eq!(rr.n_readers, 4);
    assert_eq!(rr.n_cases, 15);
    let margin = ReportOptions::default().non_inferiority_margin;
    assert_eq!(rr.non_inferior, rr.low > -margin);
    // The section carries the same figure, and the fixed-clinician claim stays beside it.
    let section = report.dimensions[0]
        .overall
        .grader
        .as_ref()
        .expect("grader section");
    assert_eq!(section.readers_random.value(), Some(rr));
    assert!(report
        .verdict
        .as_ref()
        .expect("verdict")
        .ceiling
        .value()
        .is_some());
    assert!(report
        .verdict
        .as_ref()
        .expect("verdict")
        .summary
        .contains("a clinician, not these 4 clinicians"));
}

#[test]
fn cases_without_a_pair_do_not_count() {
    let base = report(&input(&[], &[]));
    // Two more cases only the clinicians scored: no grader–clinician pair, nothing changes.
    let extra = [
        ("case90/t1", "case90", "dr_a", 3.0),
        ("case90/t1", "case90", "dr_b", 4.0),
        ("case91/t1", "case91", "dr_a", 2.0),
        ("case91/t1", "case91", "dr_c", 2.0),
    ];
    let more = report(&input(&[], &extra));
    let (a, b) = (
        readers_random(&base).value().expect("estimable"),
        readers_random(&more).value().expect("estimable"),
    );
    assert_eq!(b.n_cases, 15);
    close(b.low, a.low, SAME_SUMS, "low");
    close(b.high, a.high, SAME_SUMS, "high");
}

#[test]
fn needs_three_clinicians() {
    let report = report(&input(&["dr_d", "dr_c"], &[]));
    let reason = readers_random(&report).reason().expect("not estimable");
    assert!(reason.contains("at least 3 clinicians"), "{reason}");
}

#[test]
fn attainable_r_is_the_root_of_icc_a_k_as_irr_computes_it() {
    let reference = reference();
    let expected = &reference["expected"];
    let report = report(&input(&[], &[]));
    let verdict = report.verdict.as_ref().expect("verdict");
    let attainable = verdict.attainable_r.value().expect("estimable");
    assert_eq!((attainable.raters, attainable.n_items), (3, 60));
    close(
        attainable.icc_ak,
        f(&expected["icc_ak"]),
        SCIPY_EXACT,
        "ICC(A,k)",
    );
    close(
        attainable.value,
        f(&expected["attainable_r"]),
        SCIPY_EXACT,
        "attainable r",
    );
    close(
        attainable.low,
        f(&expected["attainable_low"]),
        DISTRIBUTION,
        "attainable low",
    );
    close(
        attainable.high,
        f(&expected["attainable_high"]),
        DISTRIBUTION,
        "attainable high",
    );
    close(
        verdict.pearson.value().expect("r").r,
        f(&expected["verdict_r"]),
        SCIPY_EXACT,
        "the verdict's r",
    );
    close(
        verdict.disattenuated_r.expect("disattenuated"),
        f(&expected["disattenuated_r"]),
        SCIPY_EXACT,
        "disattenuated r",
    );
}

#[test]
fn a_bar_above_what_the_panel_allows_is_named() {
    let options = ReportOptions {
        grader: Some("grader".into()),
        bar_pearson_r: 0.95,
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    };
    let report = build_report(&input(&[], &[]), &options, &NoProgress).expect("report");
    let summary = &report.verdict.as_ref().expect("verdict").summary;
    assert!(
        summary.contains("lies above what this panel allows"),
        "{summary}"
    );
}

#[test]
fn the_new_verdict_keys_of_formats_section_5_are_in_the_json() {
    let report = report(&input(&[], &[]));
    let json: Value =
        serde_json::from_str(&calibration::tables::to_json(&report)).expect("valid JSON");
    let verdict = &json["verdict"];
    for key in [
        "estimate",
        "low",
        "high",
        "df",
        "n_readers",
        "n_cases",
        "method",
        "non_inferior",
    ] {
        assert!(
            verdict["readers_random"].get(key).is_some(),
            "readers_random.{key} missing"
        );
    }
    for key in ["value", "low", "high"] {
        assert!(
            verdict["attainable_r"].get(key).is_some(),
            "attainable_r.{key} missing"
        );
    }
    assert!(verdict["disattenuated_r"].is_f64());
    // Not estimable: the reason instead of the figures.
    let two = report_json_without(&["dr_c", "dr_d"]);
    assert!(two["verdict"]["readers_random"]["not_estimable"].is_string());
}

fn report_json_without(raters: &[&str]) -> Value {
    let report = report(&input(raters, &[]));
    serde_json::from_str(&calibration::tables::to_json(&report)).expect("valid JSON")
}
