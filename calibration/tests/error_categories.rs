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

/// Per-model error counts (`error_distribution.by_model`) against
/// `data/errors_by_model_reference.json` (made by
/// `scripts/reference/calibration/make_errors_by_model_reference.py`: the counts written out in
/// Python, the intervals from statsmodels' Wilson interval). One model anchors (R4) on most of its
/// responses; responses nobody reviewed must not count.
#[test]
fn errors_per_model_count_each_category_over_the_models_reviewed_responses() {
    let reference: Value =
        serde_json::from_str(include_str!("data/errors_by_model_reference.json"))
            .expect("errors_by_model_reference.json is valid JSON");
    let mut table = LongTable::default();
    let mut errors = Vec::new();
    for item in reference["items"].as_array().expect("items") {
        let id = text(&item["item"]);
        table.items.insert(
            id.clone(),
            ItemInfo {
                case: Some(text(&item["case"])),
                groups: BTreeMap::from([("model".to_string(), text(&item["model"]))]),
            },
        );
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
            grader_claims: Default::default(),
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
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    let report = build_report(&input, &options, &NoProgress).expect("report");
    // The HTML and the CSV tables carry the same counts as the JSON.
    let html = calibration::html::to_html(&report);
    assert!(
        html.contains("<h3>Errors per model</h3>"),
        "no per-model table"
    );
    let tables: BTreeMap<String, String> = calibration::tables::to_csv_tables(&report)
        .into_iter()
        .collect();
    let csv = &tables["error_distribution_by_model.csv"];
    let by_model = &report.error_distribution.expect("distribution").by_model;
    let cells: usize = by_model.iter().map(|m| m.by_category.len()).sum();
    assert_eq!(csv.lines().count(), 1 + cells, "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("gamma,R4,0,")), "{csv}");
    let expected = reference["by_model"].as_array().expect("by_model");
    assert_eq!(by_model.len(), expected.len());
    for (got, want) in by_model.iter().zip(expected) {
        assert_eq!(got.model, text(&want["model"]));
        assert_eq!(got.reviewed as u64, want["reviewed"].as_u64().expect("n"));
        let want = want["by_category"].as_array().expect("categories");
        assert_eq!(got.by_category.len(), want.len(), "{}", got.model);
        for (cell, w) in got.by_category.iter().zip(want) {
            let what = format!("{}/{}", got.model, cell.name);
            assert_eq!(cell.name, text(&w["name"]), "{what}");
            assert_eq!(
                cell.share.count as u64,
                w["count"].as_u64().expect("count"),
                "{what}"
            );
            close(cell.share.share, f(&w["share"]), SCIPY_EXACT, &what);
            close(cell.share.ci_low, f(&w["ci_low"]), DISTRIBUTION, &what);
            close(cell.share.ci_high, f(&w["ci_high"]), DISTRIBUTION, &what);
        }
    }
}
