//! The clinicians' variance components against lme4 (REML on every score of an unbalanced study
//! with missing ratings, REML profile-likelihood intervals; `data/reml_reference.json`, made by
//! `scripts/reference/calibration/make_reml_reference.R`) and statsmodels' linear mixed model
//! (a balanced study; `data/variance_reference.json`, made by
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

/// lme4 was run to tolerances of ~1e-14 on its criterion, and so is this crate's Nelder–Mead:
/// both sit at the same REML optimum to well within this.
const LME4_OPTIMUM: f64 = 1e-6;
/// The REML profile limits: lme4's criterion minimised by minqa's bobyqa and solved by R's
/// uniroot, against this crate's Nelder–Mead and false position, each to ~1e-9.
const REML_PROFILE: f64 = 1e-6;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/variance_reference.json"))
        .expect("variance_reference.json is valid JSON")
}

fn lme4_reference() -> Value {
    serde_json::from_str(include_str!("data/reml_reference.json"))
        .expect("reml_reference.json is valid JSON")
}

/// Every component, its interval and the REML criterion against lme4's.
fn assert_matches_lme4(study: &Value, names: &[&str]) -> VarianceComponents {
    let v = components_of(study);
    let n_scores = study["scores"].as_array().expect("scores").len();
    assert_eq!(v.n_scores, n_scores, "every score is used");
    let items: std::collections::BTreeSet<&str> = study["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .map(|s| s["item"].as_str().expect("item"))
        .collect();
    assert_eq!(
        v.n_items,
        items.len(),
        "every item is used, complete or not"
    );
    close_relative(
        v.reml_criterion,
        study["reml_criterion"].as_f64().expect("criterion"),
        1e-9,
        "REML criterion",
    );
    for &name in names {
        let got = match name {
            "case" => v.case.expect("case level"),
            "item" => v.item,
            "rater" => v.rater,
            "case_by_rater" => v.case_by_rater.expect("case × rater"),
            _ => v.residual,
        };
        close_relative(
            got,
            study["expected"][name].as_f64().expect(name),
            LME4_OPTIMUM,
            name,
        );
        let interval = v
            .intervals
            .iter()
            .find(|i| i.component == name)
            .unwrap_or_else(|| panic!("an interval for {name}"));
        let expected = &study["intervals"][name];
        for (got, expected, side) in [
            (interval.low, expected[0].as_f64().expect("low"), "low"),
            (interval.high, expected[1].as_f64().expect("high"), "high"),
        ] {
            if expected == 0.0 {
                assert_eq!(got, 0.0, "{name} {side}: lme4's limit is 0");
            } else {
                close_relative(got, expected, REML_PROFILE, &format!("{name} {side}"));
            }
        }
    }
    let listed: Vec<&str> = v.intervals.iter().map(|i| i.component.as_str()).collect();
    assert_eq!(listed, names, "one interval per component, in order");
    v
}

/// Fails on the ANOVA of the complete panel (before 2026-11-29): it read only the items every
/// clinician scored, so its `n_scores`/components differ from REML on all of them, and it gave
/// no intervals.
#[test]
fn unbalanced_cases_with_missing_ratings_match_lme4() {
    let reference = lme4_reference();
    let study = &reference["studies"][0];
    assert_eq!(study["name"], "cases");
    let v = assert_matches_lme4(
        study,
        &["case", "item", "rater", "case_by_rater", "residual"],
    );
    assert_eq!(v.design, "cases, items within cases, raters");
    assert_eq!((v.n_cases, v.n_raters), (15, 4));
    assert!(v.truncated_at_zero.is_empty());
}

#[test]
fn items_only_with_missing_ratings_match_lme4() {
    let reference = lme4_reference();
    let study = &reference["studies"][1];
    assert_eq!(study["name"], "items only");
    let v = assert_matches_lme4(study, &["item", "rater", "residual"]);
    assert!(v.design.starts_with("items, raters"), "{}", v.design);
    assert_eq!((v.case, v.case_by_rater), (None, None));
    assert_eq!((v.n_items, v.n_raters), (60, 5));
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
