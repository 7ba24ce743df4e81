//! Whether a subgroup differs from the rest before it is called better or worse: the subgroup's
//! r minus the other items' r with a case-bootstrap interval, against
//! `data/subgroup_reference.json` (made by
//! `scripts/reference/calibration/make_subgroup_reference.py`: scipy's r recomputed on the
//! resampled items, the report's resample indices mirrored).

mod common;

use calibration::bootstrap::NoProgress;
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::report::{build_report, Report, Section};
use common::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/subgroup_reference.json"))
        .expect("subgroup_reference.json is valid JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

/// The report on the study of `subgroup_reference.json`, with its bootstrap settings.
fn study_report(reference: &Value) -> Report {
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
    build_report(&input, &options, &NoProgress).expect("report")
}

#[test]
fn a_subgroup_is_called_better_or_worse_only_when_its_difference_from_the_rest_excludes_zero() {
    let reference = reference();
    let report = study_report(&reference);
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

fn optional(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Leave one rater out and the degradation table with their intervals, in every subgroup and the
/// dimension as a whole, against `data/subgroup_degradation_reference.json` (made by
/// `scripts/reference/calibration/make_subgroup_degradation_reference.py`: scipy's r, numpy's
/// mean absolute differences and scikit-learn's quadratic κ on each section's items, the case
/// bootstrap recomputed on the resampled items with the report's resample indices mirrored).
#[test]
fn every_subgroups_degradation_rows_and_intervals_match_the_reference() {
    let study = reference();
    let expected: Value =
        serde_json::from_str(include_str!("data/subgroup_degradation_reference.json"))
            .expect("subgroup_degradation_reference.json is valid JSON");
    assert_eq!(
        expected["bootstrap"], study["bootstrap"],
        "same bootstrap settings"
    );
    let report = study_report(&study);
    let dimension = &report.dimensions[0];
    let sections: Vec<(String, &Section)> = std::iter::once((String::new(), &dimension.overall))
        .chain(
            dimension
                .groups
                .iter()
                .map(|g| (format!("{}={}", g.column, g.value), &g.section)),
        )
        .collect();
    assert_eq!(sections.len(), 6);
    for (key, section) in sections {
        let e = &expected["sections"][&key];
        let what = if key.is_empty() {
            "whole dimension"
        } else {
            key.as_str()
        };
        assert_eq!(
            section.n_items as u64,
            e["n_items"].as_u64().unwrap(),
            "{what}"
        );
        assert_eq!(
            section.n_cases as u64,
            e["n_cases"].as_u64().unwrap(),
            "{what}"
        );
        let grader = section.grader.as_ref().expect("grader");
        for loo in &grader.leave_one_rater_out {
            let x = &e["leave_one_rater_out"][&loo.held_out];
            let at = format!("{what}, held out {}", loo.held_out);
            assert_eq!(
                loo.grader_vs_rest.n as u64,
                x["n"].as_u64().unwrap(),
                "{at}"
            );
            for (actual, key) in [
                (
                    loo.grader_vs_rest.pearson.value().map(|p| p.r),
                    "grader_vs_rest_r",
                ),
                (
                    loo.held_out_vs_rest.pearson.value().map(|p| p.r),
                    "held_out_vs_rest_r",
                ),
                (
                    loo.grader_vs_rest.mean_absolute_difference.value().copied(),
                    "grader_vs_rest_mad",
                ),
                (
                    loo.held_out_vs_rest
                        .mean_absolute_difference
                        .value()
                        .copied(),
                    "held_out_vs_rest_mad",
                ),
            ] {
                match (actual, optional(&x[key])) {
                    (Some(a), Some(b)) => close(a, b, SCIPY_EXACT, &format!("{at}: {key}")),
                    (a, b) => assert_eq!(a, b, "{at}: {key}"),
                }
            }
        }
        let d = &e["degradation"];
        for (row, name) in grader.degradation.iter().zip(["r", "mad", "kappa"]) {
            let at = format!("{what}: {}", row.statistic);
            for (actual, side) in [
                (row.grader_human.value(), "grader"),
                (row.human_human.value(), "human"),
                (row.difference.value(), "difference"),
            ] {
                match (actual, optional(&d[format!("{name}_{side}")])) {
                    (Some(a), Some(b)) => close(*a, b, SCIPY_EXACT, &format!("{at} {side}")),
                    (a, b) => assert_eq!(a.copied(), b, "{at} {side}"),
                }
            }
            if name == "kappa" {
                assert_eq!(
                    row.comparisons as u64,
                    d["kappa_comparisons"].as_u64().unwrap()
                );
                assert!(
                    row.difference_interval.is_none(),
                    "pairwise κ is not resampled"
                );
                continue;
            }
            for (interval, side) in [
                (&row.grader_human_interval, "grader"),
                (&row.human_human_interval, "human"),
                (&row.difference_interval, "difference"),
            ] {
                // The r row's sides are correlations: quoted with the jackknife on Fisher's z.
                // The differences and the mean absolute differences: the case bootstrap.
                let correlation_side = name == "r" && side != "difference";
                let reference = if correlation_side {
                    &e["jackknife_fisher"][format!("r_{side}")]
                } else {
                    &e["intervals"][format!("{name}_{side}")]
                };
                match interval {
                    None => assert!(reference.is_null(), "{at} {side}: interval missing"),
                    Some(got) => {
                        close(got.estimate, f(&reference["estimate"]), 1e-12, &at);
                        let (low, high) = if correlation_side {
                            assert!(
                                got.method.starts_with("delete-one-case jackknife"),
                                "{at} {side}: {}",
                                got.method
                            );
                            ("low", "high")
                        } else if got.method.ends_with("BCa") {
                            ("bca_low", "bca_high")
                        } else {
                            ("percentile_low", "percentile_high")
                        };
                        close(
                            got.low,
                            f(&reference[low]),
                            1e-9,
                            &format!("{at} {side} low"),
                        );
                        close(
                            got.high,
                            f(&reference[high]),
                            1e-9,
                            &format!("{at} {side} high"),
                        );
                    }
                }
            }
        }
    }
}
