//! The alternative annotator test as its authors run it, in every section of a report: scipy's
//! t test and Benjamini–Yekutieli over one family (`data/alt_test_reference.json`, made by
//! `scripts/reference/calibration/make_alt_test_reference.py`).

mod common;

use calibration::alt_test::benjamini_yekutieli;
use calibration::bootstrap::NoProgress;
use calibration::input::{
    CalibrationInput, ItemInfo, LongTable, ReportOptions, ScaleSpec, ScoreRow,
};
use calibration::report::{build_report, Report, Section};
use common::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/alt_test_reference.json"))
        .expect("alt_test_reference.json is valid JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn report_of(reference: &Value) -> Report {
    let mut table = LongTable {
        grouping_columns: vec!["site".into()],
        ..LongTable::default()
    };
    for s in reference["scores"].as_array().expect("scores") {
        let item = s["item"].as_str().unwrap().to_string();
        let mut info = ItemInfo::default();
        info.groups
            .insert("site".into(), s["site"].as_str().unwrap().into());
        table.items.insert(item.clone(), info);
        table.scores.push(ScoreRow {
            item,
            rater: s["rater"].as_str().unwrap().into(),
            dimension: s["dimension"].as_str().unwrap().into(),
            score: f(&s["score"]),
        });
    }
    let options = ReportOptions {
        grader: Some("grader".into()),
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        alt_test_epsilon: f(&reference["epsilon"]),
        alt_test_q: f(&reference["q"]),
        alt_test_min_items: reference["min_items"].as_u64().unwrap() as usize,
        bootstrap_resamples: 20,
        ..ReportOptions::default()
    };
    let input = CalibrationInput {
        table,
        ..CalibrationInput::default()
    };
    build_report(&input, &options, &NoProgress).expect("report")
}

fn section<'a>(report: &'a Report, dimension: &str, group: Option<&str>) -> &'a Section {
    let d = report
        .dimensions
        .iter()
        .find(|d| d.dimension == dimension)
        .expect("dimension");
    match group {
        None => &d.overall,
        Some(g) => {
            &d.groups
                .iter()
                .find(|s| s.value == g)
                .expect("group")
                .section
        }
    }
}

#[test]
fn every_section_matches_the_authors_procedure_with_one_fdr_family() {
    let reference = reference();
    let report = report_of(&reference);
    let family = reference["fdr_family"].as_u64().unwrap() as usize;
    for expected in reference["sections"].as_array().unwrap() {
        let dimension = expected["dimension"].as_str().unwrap();
        let group = expected["group"].as_str();
        let what = format!("{dimension} / {group:?}");
        let test = section(&report, dimension, group)
            .grader
            .as_ref()
            .expect("grader")
            .alt_test
            .value()
            .unwrap_or_else(|| panic!("{what}: alt test not estimable"));
        assert_eq!(test.fdr_family, family, "{what}: family");
        let annotators = expected["annotators"].as_array().unwrap();
        assert_eq!(test.annotators.len(), annotators.len(), "{what}");
        for (actual, e) in test.annotators.iter().zip(annotators) {
            let who = format!("{what} {}", actual.rater);
            assert_eq!(actual.rater, e["rater"].as_str().unwrap(), "{who}");
            assert_eq!(actual.n, e["n"].as_u64().unwrap() as usize, "{who}");
            close(
                actual.grader_advantage,
                f(&e["grader_advantage"]),
                SCIPY_EXACT,
                &who,
            );
            close(
                actual.annotator_advantage,
                f(&e["annotator_advantage"]),
                SCIPY_EXACT,
                &who,
            );
            close_relative(
                *actual.p.value().expect("p"),
                f(&e["p"]),
                DISTRIBUTION,
                &format!("{who}: p"),
            );
            assert_eq!(
                actual.grader_wins,
                e["grader_wins"].as_bool().unwrap(),
                "{who}: wins"
            );
        }
        let left_out: Vec<(String, usize)> = test
            .left_out
            .iter()
            .map(|l| (l.rater.clone(), l.n))
            .collect();
        let expected_left_out: Vec<(String, usize)> = expected["left_out"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["rater"].as_str().unwrap().to_string(),
                    l["n"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(left_out, expected_left_out, "{what}: left out");
        close(
            test.winning_rate,
            f(&expected["winning_rate"]),
            SCIPY_EXACT,
            &format!("{what}: ω"),
        );
        close(
            test.average_advantage_probability,
            f(&expected["average_advantage_probability"]),
            SCIPY_EXACT,
            &format!("{what}: ρ̄"),
        );
        assert_eq!(test.passed, expected["passed"].as_bool().unwrap(), "{what}");
    }
    let verdict = report.verdict.expect("verdict");
    assert!(
        verdict
            .summary
            .contains("Left out of that test for fewer than 30 comparable items, as its authors require: dr_d (20 items)."),
        "{}",
        verdict.summary
    );
}

#[test]
fn the_joint_family_decides_differently_from_a_section_alone_in_the_reference() {
    // Guards the point of the joint correction: in the reference, some annotator would be a win
    // with its section's p-values alone, and is not with every section's.
    let reference = reference();
    let q = f(&reference["q"]);
    let differs = reference["sections"].as_array().unwrap().iter().any(|s| {
        let annotators = s["annotators"].as_array().unwrap();
        let alone: Vec<Option<f64>> = annotators.iter().map(|a| Some(f(&a["p"]))).collect();
        benjamini_yekutieli(&alone, q)
            .iter()
            .zip(annotators)
            .any(|(alone, a)| *alone != a["grader_wins"].as_bool().unwrap())
    });
    assert!(differs);
}

#[test]
fn with_too_few_items_for_everyone_the_test_says_so_instead_of_counting_losses() {
    let reference = reference();
    let mut report_input = reference.clone();
    // Keep the first 20 items only: nobody reaches 30.
    let kept: Vec<Value> = reference["scores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["item"].as_str().unwrap() < "i020")
        .cloned()
        .collect();
    report_input["scores"] = Value::Array(kept);
    let report = report_of(&report_input);
    let alt = &report.dimensions[0]
        .overall
        .grader
        .as_ref()
        .unwrap()
        .alt_test;
    let reason = alt.reason().expect("not estimable");
    assert_eq!(
        reason,
        "no clinician has the 30 comparable items the authors require (items scored by the clinician, the grader and another clinician: dr_a 20, dr_b 20, dr_c 20, dr_d 20)"
    );
    let verdict = report.verdict.unwrap();
    assert_eq!(verdict.alt_test_passed, None);
    assert!(verdict
        .summary
        .contains("The alternative annotator test was not run: no clinician has the 30"));
}

/// Against the authors' own code: their `alt_test` from github.com/nitaytech/AltTest, run on the
/// same scores one section at a time (`data/alt_test_authors_reference.json`, made by
/// `scripts/reference/calibration/make_alt_test_authors_reference.py`). Their function corrects
/// within one call, as [`calibration::alt_test::alt_test`] does before the report joins every
/// section into one family.
#[test]
fn each_section_matches_the_authors_alt_test() {
    let study = reference();
    let authors: Value = serde_json::from_str(include_str!("data/alt_test_authors_reference.json"))
        .expect("alt_test_authors_reference.json is valid JSON");
    let clinicians = ["dr_a", "dr_b", "dr_c", "dr_d"];
    let names: Vec<String> = clinicians.iter().map(|c| c.to_string()).collect();
    for expected in authors["sections"].as_array().expect("sections") {
        let (dimension, group) = (expected["dimension"].as_str(), expected["group"].as_str());
        let what = format!("{dimension:?} / {group:?}");
        let mut by_item: std::collections::BTreeMap<&str, (Vec<Option<f64>>, Option<f64>)> =
            Default::default();
        for s in study["scores"].as_array().expect("scores") {
            if s["dimension"].as_str() != dimension
                || group.is_some_and(|g| s["site"].as_str() != Some(g))
            {
                continue;
            }
            let entry = by_item
                .entry(s["item"].as_str().expect("item"))
                .or_insert_with(|| (vec![None; clinicians.len()], None));
            match s["rater"].as_str().expect("rater") {
                "grader" => entry.1 = Some(f(&s["score"])),
                rater => {
                    let j = clinicians.iter().position(|c| *c == rater).expect("known");
                    entry.0[j] = Some(f(&s["score"]));
                }
            }
        }
        let rows: Vec<Vec<Option<f64>>> = by_item.values().map(|v| v.0.clone()).collect();
        let grader: Vec<Option<f64>> = by_item.values().map(|v| v.1).collect();
        let test = calibration::alt_test::alt_test(
            &calibration::RatingMatrix::from_rows(&rows),
            &names,
            &grader,
            f(&study["epsilon"]),
            f(&study["q"]),
            study["min_items"].as_u64().expect("min") as usize,
        );
        let test = test.value().expect("estimable");
        close(
            test.winning_rate,
            f(&expected["winning_rate"]),
            1e-12,
            &format!("{what}: ω"),
        );
        close(
            test.average_advantage_probability,
            f(&expected["average_advantage_probability"]),
            1e-12,
            &format!("{what}: ρ̄"),
        );
        let p = expected["p"].as_object().expect("p");
        assert_eq!(test.annotators.len(), p.len(), "{what}: annotators tested");
        for annotator in &test.annotators {
            close_relative(
                *annotator.p.value().expect("p"),
                f(&p[&annotator.rater]),
                DISTRIBUTION,
                &format!("{what}: p of {}", annotator.rater),
            );
        }
    }
}
