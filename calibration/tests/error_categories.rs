//! Precision and recall of the grader's error claims with case-bootstrap intervals, against
//! `data/error_category_reference.json` (made by
//! `scripts/reference/calibration/make_error_category_reference.py`: the consensus rule written
//! out in Python, the report's resample indices mirrored, every figure recomputed on the
//! resampled items).

mod common;

use calibration::bootstrap::NoProgress;
use calibration::input::{
    CalibrationInput, ErrorLabel, ItemErrors, ItemInfo, LongTable, ReportOptions, ScoreRow,
};
use calibration::report::build_report;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/error_category_reference.json"))
        .expect("error_category_reference.json is valid JSON")
}

fn text(v: &Value) -> String {
    v.as_str().expect("string").to_string()
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

#[test]
fn precision_and_recall_carry_case_bootstrap_intervals_as_the_reference_computes_them() {
    let reference = reference();
    let mut table = LongTable::default();
    let mut errors = Vec::new();
    for item in reference["items"].as_array().expect("items") {
        let id = text(&item["item"]);
        table.items.insert(
            id.clone(),
            ItemInfo {
                case: Some(text(&item["case"])),
                groups: BTreeMap::new(),
            },
        );
        // Scores only so that the report has a table; the error section does not use them.
        for (rater, score) in [("grader", 3.0), ("dr_a", 3.0)] {
            table.scores.push(ScoreRow {
                item: id.clone(),
                rater: rater.into(),
                dimension: "overall".into(),
                score,
            });
        }
        errors.push(ItemErrors {
            item: id,
            grader_claims: item["claims"]
                .as_array()
                .expect("claims")
                .iter()
                .map(text)
                .collect(),
            reviewers: item["reviewers"]
                .as_array()
                .expect("reviewers")
                .iter()
                .map(text)
                .collect(),
            clinician_labels: item["labels"]
                .as_array()
                .expect("labels")
                .iter()
                .map(|l| ErrorLabel {
                    rater: text(&l["rater"]),
                    category: text(&l["category"]),
                    severity: l["severity"].as_u64().expect("severity") as u8,
                })
                .collect(),
        });
    }
    let input = CalibrationInput {
        table,
        errors,
        ..CalibrationInput::default()
    };
    let options = ReportOptions {
        grader: Some("grader".into()),
        seed: reference["bootstrap"]["seed"].as_u64().expect("seed"),
        bootstrap_resamples: reference["bootstrap"]["resamples"].as_u64().expect("n") as usize,
        ..ReportOptions::default()
    };
    let report = build_report(&input, &options, &NoProgress).expect("report");
    let section = report.error_categories.expect("error section");
    let expected = &reference["expected"];
    assert_eq!(
        section.items - section.items_without_consensus,
        expected["items_with_consensus"].as_u64().expect("n") as usize
    );
    assert_eq!(section.categories.len(), 3);
    for row in &section.categories {
        for (what, share, interval) in [
            ("precision", &row.precision, &row.precision_by_case),
            ("recall", &row.recall, &row.recall_by_case),
        ] {
            let name = format!("{}/{what}", row.category);
            let share = share.as_ref().expect("a share");
            close(share.share, f(&expected["point"][&name]), 1e-12, &name);
            let e = &expected["intervals"][&name];
            let got = interval
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: no interval"));
            close(got.estimate, f(&e["estimate"]), 1e-12, &name);
            assert_eq!(
                got.cases,
                expected["cases_with_consensus"].as_u64().expect("n") as usize
            );
            // BCa where defined (as the report quotes it), percentile otherwise.
            let (low, high) = if got.method.ends_with("BCa") {
                (f(&e["bca_low"]), f(&e["bca_high"]))
            } else {
                (f(&e["percentile_low"]), f(&e["percentile_high"]))
            };
            close(got.low, low, 1e-9, &format!("{name} low"));
            close(got.high, high, 1e-9, &format!("{name} high"));
        }
    }
}
