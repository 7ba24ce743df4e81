//! The report's test-retest and missed-findings sections: statistics against pingouin,
//! scikit-learn, statsmodels and numpy (`data/intra_rater_reference.json`, made by
//! `scripts/reference/calibration/make_intra_rater_reference.py`), and how both sections reach
//! the JSON, the CSV tables and the HTML.

mod common;

use calibration::bootstrap::NoProgress;
use calibration::input::{
    CalibrationInput, CheckedResponse, ItemInfo, LongTable, MissedFindingsInput, MissedLesion,
    RepeatRead, ReportOptions, ScaleSpec, ScoreRow,
};
use calibration::intra_rater::{IntraRaterEntry, TestRetest, MIN_REPEAT_PAIRS};
use calibration::report::{build_report, Report};
use calibration::Estimate;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/intra_rater_reference.json"))
        .expect("intra_rater_reference.json is valid JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

/// The reference's reads as a report input: the first reads are the table (as in the database,
/// where only first reads enter the inter-rater analyses), each item in its case.
fn input_of(reference: &Value) -> CalibrationInput {
    let reads = reference["reads"].as_array().expect("reads");
    let mut table = LongTable::default();
    let mut repeat_reads = Vec::new();
    for read in reads {
        let (rater, item, case) = (
            read["rater"].as_str().expect("rater"),
            read["item"].as_str().expect("item"),
            read["case"].as_str().expect("case"),
        );
        table.scores.push(ScoreRow {
            item: item.into(),
            rater: rater.into(),
            dimension: "overall".into(),
            score: f(&read["first"]),
        });
        table.items.insert(
            item.into(),
            ItemInfo {
                case: Some(case.into()),
                groups: BTreeMap::new(),
            },
        );
        repeat_reads.push(RepeatRead {
            rater: rater.into(),
            item: item.into(),
            first: f(&read["first"]),
            repeat: f(&read["repeat"]),
        });
    }
    CalibrationInput {
        table,
        repeat_reads,
        ..CalibrationInput::default()
    }
}

fn options() -> ReportOptions {
    ReportOptions {
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        bootstrap_resamples: 400,
        ..ReportOptions::default()
    }
}

fn report_of(input: &CalibrationInput) -> Report {
    build_report(input, &options(), &NoProgress).expect("report builds")
}

fn value<T: std::fmt::Debug>(e: &Estimate<T>) -> &T {
    e.value()
        .unwrap_or_else(|| panic!("expected a value, got {e:?}"))
}

fn check(entry: &IntraRaterEntry, expected: &Value, what: &str) {
    assert_eq!(
        entry.n_pairs as u64,
        expected["n_pairs"].as_u64().expect("n"),
        "{what}: n"
    );
    let t: &TestRetest = value(&entry.reliability);
    let icc = value(&t.icc);
    close(
        icc.value,
        f(&expected["icc"]["value"]),
        SCIPY_EXACT,
        &format!("{what}: ICC(A,1)"),
    );
    // Unrounded, from irr's formulas (pingouin rounds its interval to 2 decimals).
    close(
        icc.ci_low,
        f(&expected["icc"]["ci_low"]),
        DISTRIBUTION,
        &format!("{what}: ICC low"),
    );
    close(
        icc.ci_high,
        f(&expected["icc"]["ci_high"]),
        DISTRIBUTION,
        &format!("{what}: ICC high"),
    );
    if let Some(rounded) = expected["icc"]["pingouin_ci"].as_array() {
        close(icc.ci_low, f(&rounded[0]), HALF_OF_2_DECIMALS, what);
        close(icc.ci_high, f(&rounded[1]), HALF_OF_2_DECIMALS, what);
    }
    for (name, kappa) in [
        ("unweighted", &t.cohen_kappa.unweighted),
        ("linear", &t.cohen_kappa.linear),
        ("quadratic", &t.cohen_kappa.quadratic),
    ] {
        let k = value(kappa);
        let e = &expected["cohen_kappa"][name];
        close(
            k.value,
            f(&e["value"]),
            SCIPY_EXACT,
            &format!("{what}: {name} κ"),
        );
        close(
            k.se,
            f(&e["se"]),
            SCIPY_EXACT,
            &format!("{what}: {name} κ SE"),
        );
    }
    close(
        t.mean_absolute_difference,
        f(&expected["mean_absolute_difference"]),
        SCIPY_EXACT,
        &format!("{what}: mean absolute difference"),
    );
    close(
        t.mean_difference,
        f(&expected["mean_difference"]),
        SCIPY_EXACT,
        &format!("{what}: mean difference"),
    );
}

#[test]
fn test_retest_matches_pingouin_sklearn_and_statsmodels() {
    let reference = reference();
    let report = report_of(&input_of(&reference));
    let section = report
        .intra_rater
        .as_ref()
        .expect("repeat reads give a section");
    check(&section.pooled, &reference["pooled"], "pooled");
    assert_eq!(section.pooled.rater, None);
    let expected_raters = reference["raters"].as_object().expect("raters");
    for entry in &section.raters {
        let name = entry.rater.as_deref().expect("a named rater");
        match expected_raters.get(name) {
            Some(expected) => check(entry, expected, name),
            None => {
                // rater-c: 3 pairs, below the minimum.
                assert!(entry.n_pairs < MIN_REPEAT_PAIRS, "{name}");
                let reason = entry.reliability.reason().expect("not estimable");
                assert!(reason.contains("at least 5"), "{reason}");
            }
        }
    }
    assert_eq!(
        section.raters.len(),
        3,
        "every rater with a repeat read has a row"
    );
}

#[test]
fn the_bootstrap_estimates_are_the_analytic_values_and_its_intervals_contain_them() {
    let report = report_of(&input_of(&reference()));
    let section = report.intra_rater.expect("section");
    let t = value(&section.pooled.reliability);
    let b = &t.bootstrap;
    for (what, interval, analytic) in [
        ("ICC", value(&b.icc), value(&t.icc).value),
        (
            "quadratic κ",
            value(&b.quadratic_kappa),
            value(&t.cohen_kappa.quadratic).value,
        ),
        (
            "mean absolute difference",
            value(&b.mean_absolute_difference),
            t.mean_absolute_difference,
        ),
    ] {
        // The bootstrap's sums formula and the table formula are separate code paths.
        close(interval.estimate, analytic, 1e-12, what);
        assert!(
            interval.percentile_low <= analytic && analytic <= interval.percentile_high,
            "{what}: {interval:?}"
        );
        assert_eq!(interval.clusters, section.pooled.n_cases, "{what}");
    }
    // The same seed gives the same intervals.
    let again = report_of(&input_of(&reference()))
        .intra_rater
        .expect("section");
    assert_eq!(value(&again.pooled.reliability).bootstrap, *b);
}

#[test]
fn a_clinician_who_scores_everything_higher_does_not_raise_the_pooled_icc() {
    // Pooled over clinicians, one clinician scoring every response 3 points higher in both
    // sessions adds spread between the (clinician, response) targets that is no property of the
    // responses; counted as target variance it would push the ICC towards 1.
    let reference = reference();
    let input = input_of(&reference);
    let pooled_icc = |input: &CalibrationInput| {
        let options = ReportOptions {
            scale: None,
            ..options()
        };
        let report = build_report(input, &options, &NoProgress).expect("report builds");
        let section = report.intra_rater.expect("section");
        let t = value(&section.pooled.reliability).clone();
        (value(&t.icc).clone(), value(&t.bootstrap.icc).estimate)
    };
    let (before, before_bootstrap) = pooled_icc(&input);
    let mut shifted = input.clone();
    for read in shifted
        .repeat_reads
        .iter_mut()
        .filter(|r| r.rater == "rater-b")
    {
        read.first += 3.0;
        read.repeat += 3.0;
    }
    let (after, after_bootstrap) = pooled_icc(&shifted);
    close(after.value, before.value, 1e-12, "pooled ICC");
    close(after.ci_low, before.ci_low, 1e-9, "pooled ICC low");
    close(after.ci_high, before.ci_high, 1e-9, "pooled ICC high");
    close(after_bootstrap, before_bootstrap, 1e-12, "bootstrap ICC");
}

#[test]
fn without_repeat_reads_there_is_no_section_and_one_case_leaves_the_bootstrap_not_estimable() {
    let mut input = input_of(&reference());
    let all = std::mem::take(&mut input.repeat_reads);
    assert!(report_of(&input).intra_rater.is_none());

    // Six pairs of one case: the statistics exist, the cluster bootstrap does not.
    input.repeat_reads = all
        .into_iter()
        .filter(|r| r.rater == "rater-a")
        .take(3)
        .collect();
    let same_case: Vec<RepeatRead> = input
        .repeat_reads
        .iter()
        .flat_map(|r| {
            [
                r.clone(),
                RepeatRead {
                    item: format!("{}/b", r.item),
                    ..r.clone()
                },
            ]
        })
        .collect();
    for r in &same_case {
        input.table.items.insert(
            r.item.clone(),
            ItemInfo {
                case: Some("case-00".into()),
                groups: BTreeMap::new(),
            },
        );
    }
    input.repeat_reads = same_case;
    let section = report_of(&input).intra_rater.expect("section");
    let t = value(&section.pooled.reliability);
    assert_eq!(section.pooled.n_cases, 1);
    assert!(t
        .bootstrap
        .icc
        .reason()
        .expect("not estimable")
        .contains("≥ 2 cases"));
}

fn missed_input() -> MissedFindingsInput {
    let checked = |item: &str, case: &str, model: &str, lesions| CheckedResponse {
        item: item.into(),
        case: case.into(),
        model: model.into(),
        lesions,
    };
    let missed = |item: &str, lesion: &str| MissedLesion {
        item: item.into(),
        lesion_id: lesion.into(),
        description: format!("lesion {lesion}"),
        location: "FLAIR slice 12".into(),
    };
    MissedFindingsInput {
        checked: vec![
            checked("c2/t1/m-a/0", "c2", "m-a", 2),
            checked("c1/t1/m-a/0", "c1", "m-a", 1),
            checked("c1/t1/m-b/0", "c1", "m-b", 1),
            checked("c3/t1/m-b/0", "c3", "m-b", 0),
        ],
        missed: vec![
            missed("c2/t1/m-a/0", "L2"),
            missed("c2/t1/m-a/0", "L1"),
            missed("c1/t1/m-a/0", "L1"),
        ],
        not_checked: None,
    }
}

#[test]
fn missed_findings_are_listed_and_counted_per_model() {
    let mut input = input_of(&reference());
    input.missed_findings = missed_input();
    let section = report_of(&input).missed_findings.expect("section");
    assert_eq!(section.responses_checked, 4);
    assert_eq!(section.lesions_checked, 4);
    assert_eq!(section.missed, 3);
    let listed: Vec<(&str, &str)> = section
        .findings
        .iter()
        .map(|f| (f.item.as_str(), f.lesion_id.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("c1/t1/m-a/0", "L1"),
            ("c2/t1/m-a/0", "L1"),
            ("c2/t1/m-a/0", "L2")
        ]
    );
    assert_eq!(section.findings[0].case, "c1");
    assert_eq!(section.findings[0].model, "m-a");
    assert_eq!(section.findings[0].location, "FLAIR slice 12");
    let a = &section.by_model[0];
    assert_eq!(
        (
            a.model.as_str(),
            a.responses,
            a.lesions,
            a.missed,
            a.responses_with_miss
        ),
        ("m-a", 2, 3, 3, 2)
    );
    let share = a.share_missed.as_ref().expect("share");
    assert_eq!((share.count, share.n), (3, 3));
    let b = &section.by_model[1];
    assert_eq!(
        (
            b.model.as_str(),
            b.responses,
            b.lesions,
            b.missed,
            b.responses_with_miss
        ),
        ("m-b", 2, 1, 0, 0)
    );
    assert_eq!(b.share_missed.as_ref().map(|s| s.share), Some(0.0));

    input.missed_findings = MissedFindingsInput::default();
    assert!(report_of(&input).missed_findings.is_none());

    input.missed_findings.not_checked = Some("the ground truth could not be read".into());
    let report = report_of(&input);
    let section = report
        .missed_findings
        .as_ref()
        .expect("a section saying why");
    assert_eq!((section.responses_checked, section.missed), (0, 0));
    assert!(calibration::html::to_html(&report)
        .contains("Not checked: the ground truth could not be read"));
}

#[test]
fn both_sections_reach_the_json_the_csv_tables_and_the_html() {
    let reference = reference();
    let mut input = input_of(&reference);
    input.missed_findings = missed_input();
    let report = report_of(&input);

    let json: Value = serde_json::from_str(&calibration::tables::to_json(&report)).expect("JSON");
    let pooled = &json["intra_rater"]["pooled"]["reliability"];
    close(
        f(&pooled["icc"]["value"]),
        f(&reference["pooled"]["icc"]["value"]),
        SCIPY_EXACT,
        "JSON ICC",
    );
    assert!(pooled["bootstrap"]["quadratic_kappa"]["percentile_low"].is_number());
    let rater_c = &json["intra_rater"]["raters"][2];
    assert_eq!(rater_c["rater"], "rater-c");
    assert!(rater_c["reliability"]["not_estimable"].is_string());
    assert_eq!(json["missed_findings"]["findings"][0]["lesion_id"], "L1");
    assert_eq!(json["missed_findings"]["by_model"][0]["missed"], 3);

    let tables: BTreeMap<String, String> = calibration::tables::to_csv_tables(&report)
        .into_iter()
        .collect();
    let intra = &tables["intra_rater.csv"];
    let lines: Vec<&str> = intra.lines().collect();
    assert_eq!(
        lines.len(),
        1 + 1 + 3,
        "header, pooled, three raters: {intra}"
    );
    assert!(lines[1].starts_with("pooled,45,"), "{}", lines[1]);
    assert!(lines[4].starts_with("rater-c,3,"), "{}", lines[4]);
    assert!(lines[4].contains("at least 5"), "{}", lines[4]);
    let missed = &tables["missed_findings.csv"];
    assert_eq!(missed.lines().count(), 1 + 3, "{missed}");
    assert!(
        missed.contains("c2/t1/m-a/0,c2,m-a,L2,lesion L2,FLAIR slice 12"),
        "{missed}"
    );
    assert_eq!(
        tables["missed_findings_by_model.csv"].lines().count(),
        1 + 2
    );

    let html = calibration::html::to_html(&report);
    assert!(html.contains("id=\"intra-rater\""));
    assert!(html.contains("id=\"missed-findings\""));
    assert!(html.contains("lesion L2"));
    assert!(html.contains("ICC(A,1)"));
    // Rows under 30 pairs are shown with their figures and marked, in the table itself, as not
    // interpreted (before 2026-11-29 only the caption said so); the pooled 45 pairs are not.
    let section = report.intra_rater.as_ref().expect("intra-rater section");
    let under: usize = std::iter::once(&section.pooled)
        .chain(&section.raters)
        .filter(|e| e.n_pairs < 30)
        .count();
    assert_eq!(section.min_interpreted_pairs, 30);
    assert!(under >= 2 && section.pooled.n_pairs >= 30);
    assert_eq!(html.matches(">too few</span>").count(), under, "{html}");
}
