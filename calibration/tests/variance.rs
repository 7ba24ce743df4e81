//! The clinicians' variance components against statsmodels' linear mixed model (REML, crossed
//! random effects; `data/variance_reference.json`, made by
//! `scripts/reference/calibration/make_variance_reference.py`), and how the report carries them.

mod common;

use calibration::bootstrap::NoProgress;
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::report::build_report;
use calibration::variance::VarianceComponents;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// REML is fitted by an optimiser (statsmodels' L-BFGS, default tolerance): its estimates agree
/// with the exact ANOVA solution to about 10⁻⁵ relative.
const REML_OPTIMISER: f64 = 2e-4;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/variance_reference.json"))
        .expect("variance_reference.json is valid JSON")
}

fn components_of(study: &Value) -> VarianceComponents {
    let mut table = LongTable::default();
    for s in study["scores"].as_array().expect("scores") {
        let item = s["item"].as_str().expect("item").to_string();
        table.items.insert(
            item.clone(),
            ItemInfo {
                case: Some(s["case"].as_str().expect("case").into()),
                groups: BTreeMap::new(),
            },
        );
        table.scores.push(ScoreRow {
            item,
            rater: s["rater"].as_str().expect("rater").into(),
            dimension: "overall".into(),
            score: s["score"].as_f64().expect("score"),
        });
    }
    let input = CalibrationInput {
        table,
        ..CalibrationInput::default()
    };
    let report = build_report(&input, &ReportOptions::default(), &NoProgress).expect("report");
    report.dimensions[0]
        .overall
        .human_human
        .variance_components
        .value()
        .expect("estimable")
        .clone()
}

#[test]
fn balanced_cases_match_statsmodels_mixed_model() {
    let reference = reference();
    let study = &reference["studies"][0];
    let expected = &study["expected"];
    let v = components_of(study);
    assert_eq!(v.design, "cases, items within cases, raters");
    assert_eq!((v.n_cases, v.n_items, v.n_raters), (14, 56, 4));
    for (name, got) in [
        ("case", v.case.expect("case level")),
        ("item", v.item),
        ("rater", v.rater),
        ("case_rater", v.case_by_rater.expect("case × rater")),
        ("residual", v.residual),
    ] {
        close_relative(
            got,
            expected[name].as_f64().expect(name),
            REML_OPTIMISER,
            name,
        );
    }
    assert!(v.truncated_at_zero.is_empty());
    // Another panel: (case + item) / (case + item + (rater + case × rater + residual) / k).
    let target = v.case.unwrap() + v.item;
    let panel = v.rater + v.case_by_rater.unwrap() + v.residual;
    let sizes: Vec<usize> = v.another_panel.iter().map(|p| p.clinicians).collect();
    assert_eq!(sizes, [1, 3, 4, 5]);
    for p in &v.another_panel {
        close(
            p.icc,
            target / (target + panel / p.clinicians as f64),
            1e-12,
            "projection",
        );
    }
    close(
        v.panel_share,
        panel / (target + panel),
        1e-12,
        "panel share",
    );
}

#[test]
fn without_case_structure_items_raters_and_residual_match_statsmodels() {
    let reference = reference();
    let study = &reference["studies"][1];
    let expected = &study["expected"];
    let v = components_of(study);
    assert!(v.design.starts_with("items, raters"), "{}", v.design);
    assert_eq!(v.case, None);
    assert_eq!(v.case_by_rater, None);
    for (name, got) in [
        ("item", v.item),
        ("rater", v.rater),
        ("residual", v.residual),
    ] {
        close_relative(
            got,
            expected[name].as_f64().expect(name),
            REML_OPTIMISER,
            name,
        );
    }
}
