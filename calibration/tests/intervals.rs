//! Intervals the report quotes, unrounded, against independent code
//! (`data/interval_reference.json`, made by
//! `scripts/reference/calibration/make_interval_reference.py`): the ICC forms against irr's
//! formulas, Spearman's ρ against Bonett & Wright's interval, Bland–Altman against Bland &
//! Altman (1999), and Cohen's κ weighted by value against statsmodels.

mod common;

use calibration::bland_altman::{bland_altman, bland_altman_by_case};
use calibration::correlation::spearman;
use calibration::icc::icc;
use calibration::kappa::{cohen_kappa, Categories};
use calibration::RatingMatrix;
use common::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/interval_reference.json"))
        .expect("interval_reference.json is valid JSON")
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

#[test]
fn icc_intervals_match_irr_unrounded() {
    for (case, expected) in reference()["icc"]
        .as_array()
        .expect("icc")
        .iter()
        .enumerate()
    {
        let rows: Vec<Vec<f64>> = expected["scores"]
            .as_array()
            .expect("scores")
            .iter()
            .map(numbers)
            .collect();
        let result = icc(&RatingMatrix::from_complete_rows(&rows));
        for (name, form) in [
            ("ICC1", &result.icc1),
            ("ICC2", &result.icc2),
            ("ICC3", &result.icc3),
        ] {
            let e = &expected["icc"][name];
            let v = form
                .value()
                .unwrap_or_else(|| panic!("case {case} {name}: {form:?}"));
            let what = format!("case {case} {name}");
            close(v.value, f(&e["value"]), SCIPY_EXACT, &what);
            close(v.value, f(&e["pingouin_value"]), SCIPY_EXACT, &what);
            close(
                v.ci_low,
                f(&e["ci_low"]),
                DISTRIBUTION,
                &format!("{what} low"),
            );
            close(
                v.ci_high,
                f(&e["ci_high"]),
                DISTRIBUTION,
                &format!("{what} high"),
            );
        }
    }
}

#[test]
fn spearman_and_bland_altman_intervals_match_their_papers() {
    for (case, expected) in reference()["paired"]
        .as_array()
        .expect("paired")
        .iter()
        .enumerate()
    {
        let (a, b) = (numbers(&expected["a"]), numbers(&expected["b"]));
        let rho = spearman(&a, &b);
        let rho = rho.value().expect("ρ");
        let e = &expected["spearman"];
        close(
            rho.rho,
            f(&e["rho"]),
            SCIPY_EXACT,
            &format!("case {case} ρ"),
        );
        close(rho.ci_low, f(&e["ci_low"]), DISTRIBUTION, "ρ low");
        close(rho.ci_high, f(&e["ci_high"]), DISTRIBUTION, "ρ high");
        let ba = bland_altman(&a, &b);
        let ba = ba.value().expect("Bland–Altman");
        let e = &expected["bland_altman"];
        for (name, got, tolerance) in [
            ("bias", ba.bias, SCIPY_EXACT),
            ("sd", ba.sd, SCIPY_EXACT),
            ("loa_low", ba.loa_low, DISTRIBUTION),
            ("loa_high", ba.loa_high, DISTRIBUTION),
            ("bias_ci_low", ba.bias_ci_low, DISTRIBUTION),
            ("bias_ci_high", ba.bias_ci_high, DISTRIBUTION),
            ("loa_low_ci_low", ba.loa_low_ci_low, DISTRIBUTION),
            ("loa_low_ci_high", ba.loa_low_ci_high, DISTRIBUTION),
            ("loa_high_ci_low", ba.loa_high_ci_low, DISTRIBUTION),
            ("loa_high_ci_high", ba.loa_high_ci_high, DISTRIBUTION),
        ] {
            close(got, f(&e[name]), tolerance, &format!("case {case} {name}"));
        }
    }
}

#[test]
fn weighted_kappa_weighs_by_value_not_by_position() {
    for (case, expected) in reference()["kappa_by_value"]
        .as_array()
        .expect("kappa cases")
        .iter()
        .enumerate()
    {
        let (a, b) = (numbers(&expected["a"]), numbers(&expected["b"]));
        // The categories are the observed values 5, 6, 8, 10 (no scale given).
        let categories = Categories::from_values(a.iter().chain(&b).copied());
        assert_eq!(categories.levels(), numbers(&expected["levels"]));
        let kappa = cohen_kappa(&a, &b, &categories);
        for (name, got) in [("linear", &kappa.linear), ("quadratic", &kappa.quadratic)] {
            let got = got.value().expect("κ");
            let e = &expected["kappa"][name];
            let what = format!("case {case} {name}");
            close(got.value, f(&e["value"]), SCIPY_EXACT, &what);
            close(got.se, f(&e["se"]), SCIPY_EXACT, &format!("{what} SE"));
        }
        // By position the figure differs: the reference would catch a return to it.
        assert!(
            (kappa.linear.value().expect("κ").value - f(&expected["linear_by_position"])).abs()
                > 1e-3,
            "case {case}"
        );
    }
}

/// The mean-of-k forms (`data/icc_k_reference.json`, made by
/// `scripts/reference/calibration/make_icc_k_reference.py`): McGraw & Wong's closed forms as irr
/// computes them, unrounded, and pingouin's values and two-decimal intervals.
#[test]
fn icc_mean_of_k_intervals_match_mcgraw_and_wong_closed_forms() {
    let reference: Value = serde_json::from_str(include_str!("data/icc_k_reference.json"))
        .expect("icc_k_reference.json is valid JSON");
    for (case, expected) in reference["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let rows: Vec<Vec<f64>> = expected["scores"]
            .as_array()
            .expect("scores")
            .iter()
            .map(numbers)
            .collect();
        let result = icc(&RatingMatrix::from_complete_rows(&rows));
        for (name, form) in [
            ("ICC1k", &result.icc1k),
            ("ICC2k", &result.icc2k),
            ("ICC3k", &result.icc3k),
        ] {
            let e = &expected["icc"][name];
            let what = format!("case {case} {name}");
            let v = form.value().unwrap_or_else(|| panic!("{what}: {form:?}"));
            close(v.value, f(&e["value"]), SCIPY_EXACT, &what);
            close(v.value, f(&e["pingouin_value"]), SCIPY_EXACT, &what);
            close(
                v.ci_low,
                f(&e["ci_low"]),
                DISTRIBUTION,
                &format!("{what} low"),
            );
            close(
                v.ci_high,
                f(&e["ci_high"]),
                DISTRIBUTION,
                &format!("{what} high"),
            );
            let rounded = numbers(&e["pingouin_ci_rounded"]);
            close(
                v.ci_low,
                rounded[0],
                HALF_OF_2_DECIMALS,
                &format!("{what} low, pingouin"),
            );
            close(
                v.ci_high,
                rounded[1],
                HALF_OF_2_DECIMALS,
                &format!("{what} high, pingouin"),
            );
        }
    }
}

/// The consensus the grader's κ is measured against is a level the clinicians can give, never
/// one only the grader used (`data/consensus_reference.json`, made by
/// `scripts/reference/calibration/make_consensus_reference.py`: numpy's rounding and
/// scikit-learn's κ).
#[test]
fn the_consensus_rounds_to_levels_the_clinicians_gave() {
    use calibration::bootstrap::NoProgress;
    use calibration::input::{CalibrationInput, ReportOptions, ScoreRow};
    let reference: Value = serde_json::from_str(include_str!("data/consensus_reference.json"))
        .expect("consensus_reference.json is valid JSON");
    let mut input = CalibrationInput::default();
    for item in reference["items"].as_array().expect("items") {
        for (rater, score) in item["scores"].as_object().expect("scores") {
            input.table.scores.push(ScoreRow {
                item: item["item"].as_str().expect("item").into(),
                rater: rater.clone(),
                dimension: "overall".into(),
                score: f(score),
            });
        }
    }
    let options = ReportOptions {
        grader: Some("grader".into()),
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    let report = calibration::report::build_report(&input, &options, &NoProgress).unwrap();
    let mean = &report.dimensions[0]
        .overall
        .grader
        .as_ref()
        .unwrap()
        .vs_human_mean;
    let expected = &reference["expected"]["clinician_levels"]["kappa"];
    let kappa = &mean.cohen_kappa;
    for (name, actual) in [
        ("unweighted", &kappa.unweighted),
        ("linear", &kappa.linear),
        ("quadratic", &kappa.quadratic),
    ] {
        let value = actual
            .value()
            .unwrap_or_else(|| panic!("{name}: {actual:?}"))
            .value;
        close(value, f(&expected[name]), SCIPY_EXACT, name);
        let all_levels = f(&reference["expected"]["all_levels"]["kappa"][name]);
        assert!(
            (value - all_levels).abs() > 0.01,
            "{name}: the reference tells the two rules apart"
        );
    }
    assert_eq!(kappa.categories, 9, "κ's table spans every value observed");
}

#[test]
fn a_kappa_interval_stays_inside_kappas_range() {
    // Five items, 2 × 2: κ = (0.8 − 0.48) / 0.52; its Wald interval's upper end passes 1 on so
    // few items, and the report quotes it clipped (issue 33 saw "0.400 (−0.37 to 1.17)").
    let kappa = calibration::kappa::cohen_kappa_from_table(&[2.0, 0.0, 1.0, 2.0], 2);
    let unweighted = kappa.unweighted.value().expect("κ");
    close(unweighted.value, 0.32 / 0.52, 1e-12, "κ");
    assert!(
        unweighted.value + 1.959_963_984_540_054 * unweighted.se > 1.0,
        "the unclipped interval would leave the range"
    );
    assert_eq!(unweighted.ci_high, 1.0);
    assert!(unweighted.ci_low >= -1.0 && unweighted.ci_low < unweighted.value);
}

/// Several items per case: Zou's (2013) limits and MOVER intervals, against the formulas written
/// out in R (`data/zou_reference.json`, `scripts/reference/calibration/make_zou_reference.R`).
/// Fails on the code before 2026-11-29, which counted the 46 pairs of 14 cases as independent:
/// its intervals of the limits are narrower than the clustered ones.
#[test]
fn bland_altman_with_several_items_per_case_matches_zou() {
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("data/zou_reference.json")).expect("valid JSON");
    let (grader, clinician) = (
        numbers(&reference["grader"]),
        numbers(&reference["clinician"]),
    );
    let cases: Vec<&str> = reference["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c.as_str().expect("case"))
        .collect();
    let ba = bland_altman_by_case(&grader, &clinician, &cases);
    let ba = ba.value().expect("Bland–Altman");
    let e = &reference["expected"];
    for (name, got, tolerance) in [
        ("bias", ba.bias, SCIPY_EXACT),
        ("sd", ba.sd, SCIPY_EXACT),
        ("loa_low", ba.loa_low, SCIPY_EXACT),
        ("loa_high", ba.loa_high, SCIPY_EXACT),
        ("bias_ci_low", ba.bias_ci_low, DISTRIBUTION),
        ("bias_ci_high", ba.bias_ci_high, DISTRIBUTION),
        ("loa_low_ci_low", ba.loa_low_ci_low, DISTRIBUTION),
        ("loa_low_ci_high", ba.loa_low_ci_high, DISTRIBUTION),
        ("loa_high_ci_low", ba.loa_high_ci_low, DISTRIBUTION),
        ("loa_high_ci_high", ba.loa_high_ci_high, DISTRIBUTION),
    ] {
        close(got, f(&e[name]), tolerance, name);
    }
    assert_eq!((ba.n, ba.n_cases), (46, 14));
    assert!(ba.method.starts_with("Zou (2013)"), "{}", ba.method);
    let independent = bland_altman(&grader, &clinician);
    let independent = independent.value().expect("independent pairs");
    let width = |low: f64, high: f64| high - low;
    assert!(
        width(ba.loa_high_ci_low, ba.loa_high_ci_high)
            > 1.3 * width(independent.loa_high_ci_low, independent.loa_high_ci_high),
        "clustered items widen the upper limit's interval"
    );
    // One pair per case is the independent-pairs method, unchanged.
    let own_case: Vec<String> = (0..grader.len()).map(|i| format!("c{i}")).collect();
    let own_case: Vec<&str> = own_case.iter().map(String::as_str).collect();
    assert_eq!(
        bland_altman_by_case(&grader, &clinician, &own_case).value(),
        Some(independent)
    );
}
