//! Whether a subgroup differs from the rest before it is called better or worse: the subgroup's
//! r minus the other items' r with a case-bootstrap interval, against
//! `data/subgroup_reference.json` (made by
//! `scripts/reference/calibration/make_subgroup_reference.py`: scipy's r recomputed on the
//! resampled items, the report's resample indices mirrored).

mod common;

use calibration::bootstrap::NoProgress;
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::report::build_report;
use common::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/subgroup_reference.json"))
        .expect("subgroup_reference.json is valid JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

#[test]
fn a_subgroup_is_called_better_or_worse_only_when_its_difference_from_the_rest_excludes_zero() {
    let reference = reference();
    let mut table = LongTable {
        grouping_columns: vec!["model".into(), "site".into()],
        ..LongTable::default()
    };
    for item in reference["items"].as_array().expect("items") {
        let id = item["item"].as_str().expect("item").to_string();
        table.items.insert(
            id.clone(),
            ItemInfo {
                case: Some(item["case"].as_str().expect("case").into()),
                groups: item["groups"]
                    .as_object()
                    .expect("groups")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().expect("value").to_string()))
                    .collect(),
            },
        );
        for (rater, score) in item["scores"].as_object().expect("scores") {
            table.scores.push(ScoreRow {
                item: id.clone(),
                rater: rater.clone(),
                dimension: "overall".into(),
                score: f(score),
            });
        }
    }
    let options = ReportOptions {
        grader: Some("grader".into()),
        seed: reference["bootstrap"]["seed"].as_u64().expect("seed"),
        bootstrap_resamples: reference["bootstrap"]["resamples"].as_u64().expect("n") as usize,
        ..ReportOptions::default()
    };
    let input = CalibrationInput {
        table,
        ..CalibrationInput::default()
    };
    let report = build_report(&input, &options, &NoProgress).expect("report");
    let groups = &report.dimensions[0].groups;
    assert_eq!(groups.len(), 5, "two models and three sites");
    let mut verdicts = Vec::new();
    for group in groups {
        let expected = &reference["expected"][&group.column];
        let what = format!("{} = {}", group.column, group.value);
        let r = group
            .section
            .grader
            .as_ref()
            .expect("grader")
            .vs_human_mean
            .pearson
            .value();
        close(
            r.expect("r").r,
            f(&expected["r"][&group.value]),
            SCIPY_EXACT,
            &what,
        );
        let got = group.r_vs_rest.as_ref().expect("an interval");
        let e = &expected["intervals"][&group.value];
        close(
            got.estimate,
            f(&expected["difference"][&group.value]),
            1e-12,
            &what,
        );
        assert!(got.method.ends_with("BCa"), "{what}: {}", got.method);
        close(got.low, f(&e["bca_low"]), 1e-9, &format!("{what} low"));
        close(got.high, f(&e["bca_high"]), 1e-9, &format!("{what} high"));
        verdicts.push((what, group.compared_with_rest.clone()));
    }
    // The grader is noisier on model-b by construction; of the sites (no built-in difference)
    // the reference's intervals decide.
    let expected_call = |column: &str, value: &str| {
        let e = &reference["expected"][column]["intervals"][value];
        if f(&e["bca_low"]) > 0.0 {
            "better"
        } else if f(&e["bca_high"]) < 0.0 {
            "worse"
        } else {
            "no difference shown"
        }
    };
    for (group, (what, call)) in groups.iter().zip(&verdicts) {
        assert_eq!(call, expected_call(&group.column, &group.value), "{what}");
    }
    assert_eq!(
        verdicts[1],
        ("model = model-b".to_string(), "worse".to_string())
    );
}
