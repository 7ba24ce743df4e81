//! `verdict.error_rates` (issue 33, item 2): the bar as a case bootstrap-t test, checked against
//! an independent computation (`data/error_rates_reference.json`, made by
//! `scripts/reference/calibration/make_error_rates_reference.py`) on a study where the old rule,
//! the jackknife interval's lower end, claims the bar and the test does not; non-inferiority's
//! test against the readers-random interval; the variance components the error rates are
//! simulated from; and what the summary says with few cases.

mod common;

use calibration::bootstrap::NoProgress;
use calibration::error_rates::{ClaimTest, Components, StudySums};
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::report::{build_report, Report, Standing};
use common::*;
use seeded::SplitMix64;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/error_rates_reference.json"))
        .expect("error_rates_reference.json is valid JSON")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn input_of(rows: impl Iterator<Item = (String, String, String, f64)>) -> CalibrationInput {
    let mut table = LongTable::default();
    for (item, case, rater, score) in rows {
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

fn reference_input(reference: &Value) -> CalibrationInput {
    input_of(
        reference["scores"]
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
            }),
    )
}

fn report(input: &CalibrationInput, bar: f64, margin: f64) -> Report {
    let options = ReportOptions {
        grader: Some("grader".into()),
        bar_pearson_r: bar,
        non_inferiority_margin: margin,
        bootstrap_resamples: 999,
        seed: 1,
        ..ReportOptions::default()
    };
    build_report(input, &options, &NoProgress).expect("report")
}

#[test]
fn the_bar_test_matches_the_reference_and_withholds_a_claim_the_jackknife_interval_made() {
    let reference = reference();
    let expected = &reference["expected"];
    let bar = f(&reference["bar"]);
    assert_eq!(reference["resamples"], 999);
    assert_eq!(reference["seed"], 1);
    let report = report(&reference_input(&reference), bar, 0.05);
    let verdict = report.verdict.as_ref().expect("verdict");
    close(
        verdict.pearson.value().expect("r").r,
        f(&expected["r"]),
        SCIPY_EXACT,
        "r",
    );
    // The old rule: the jackknife interval's lower end clears the bar on these data …
    let low = verdict.low.expect("jackknife interval");
    close(
        low,
        f(&expected["jackknife_low"]),
        SCIPY_EXACT,
        "jackknife low",
    );
    assert!(low >= bar, "the interval alone would claim the bar");
    // … the bootstrap-t test, computed independently, does not reject r ≤ bar …
    let rates = verdict.error_rates.as_ref().expect("error rates");
    let Some(ClaimTest::Bar(test)) = &rates.bar.test else {
        panic!("no bar test: {:?}", rates.bar.note);
    };
    close(test.statistic, f(&expected["statistic"]), SCIPY_EXACT, "t");
    close(test.p, f(&expected["p"]), 1e-12, "p");
    close(
        test.low,
        f(&expected["low"]),
        SCIPY_EXACT,
        "bootstrap-t low",
    );
    close(
        test.high,
        f(&expected["high"]),
        SCIPY_EXACT,
        "bootstrap-t high",
    );
    assert!(test.p > 0.025 && !test.claimed);
    assert_eq!((test.resamples, test.cases), (999, 14));
    // … so the verdict does not claim it, and says why.
    assert!(!verdict.lower_bound_meets_bar);
    assert_eq!(verdict.standing, Standing::EstimateMeetsBar);
    assert!(
        verdict
            .summary
            .contains("but the case bootstrap-t test of r ≤ 0.71 does not reject it"),
        "{}",
        verdict.summary
    );
    assert!(verdict.decision.starts_with("Decision: not yet"));
}

#[test]
fn non_inferiority_is_claimed_only_when_the_readers_random_interval_and_the_null_imposed_test_agree(
) {
    let reference = reference();
    let input = reference_input(&reference);
    let mut seen = [false; 2];
    let mut interval_only = false;
    for margin in [0.01, 0.05, 0.1, 0.13, 0.2, 0.4] {
        let report = report(&input, 0.99, margin);
        let verdict = report.verdict.as_ref().expect("verdict");
        let rr = verdict.readers_random.value().expect("readers random");
        let Some(ClaimTest::NonInferior(test)) = &verdict
            .error_rates
            .as_ref()
            .expect("error rates")
            .non_inferiority
            .test
        else {
            panic!("no non-inferiority test");
        };
        // The t part is the readers-random interval's own test at −margin.
        assert_eq!(test.p_t <= 0.025, rr.low > -margin, "margin {margin}");
        assert!((test.df - rr.df).abs() < 1e-9 * rr.df.max(1.0));
        let p_null = test.p_null.expect("components fitted");
        // Hillis's df capped at cases − 1: never an easier claim than the interval's.
        if test.statistic > 0.0 {
            assert!(test.p_t_cases >= test.p_t - 1e-15, "margin {margin}");
        }
        assert_eq!(test.claimed, test.p_t_cases <= 0.025 && p_null <= 0.025);
        seen[usize::from(test.claimed)] = true;
        // Where the interval alone would have claimed it (the rule before issue 33, item 2).
        interval_only |= rr.non_inferior && !test.claimed;
        let claims_a_clinician = verdict.decision.contains("as well as a clinician would");
        assert_eq!(
            claims_a_clinician, test.claimed,
            "margin {margin}: {}",
            verdict.decision
        );
    }
    assert_eq!(seen, [true, true], "both outcomes across the margins");
    assert!(
        interval_only,
        "some margin where the interval claims and the test does not: the old rule fails here"
    );
}

/// A study drawn from known components, complete panel: the per-case sums [`Components::fit`]
/// reads.
fn simulated(c: &Components, cases: usize, per_case: usize, seed: u64) -> StudySums {
    let mut rng = SplitMix64::new(seed);
    let mut normal = || {
        let u = rng.unit().max(1e-300);
        let v = rng.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let mut sums = StudySums::new(cases, c.clinicians.len());
    let mut scores = vec![0.0; c.clinicians.len()];
    for case in 0..cases {
        let truth_case = c.case.sqrt() * normal();
        let grader_case = c.grader_case.sqrt() * normal();
        for _ in 0..per_case {
            let truth = truth_case + c.item.sqrt() * normal();
            for (s, e) in scores.iter_mut().zip(&c.clinicians) {
                *s = 3.0 + truth + e.sqrt() * normal();
            }
            let grader =
                1.0 + c.grader_slope * truth + grader_case + c.grader_item.sqrt() * normal();
            sums.add(case, grader, &scores);
        }
    }
    sums
}

#[test]
fn the_variance_components_are_recovered_from_a_large_study() {
    let truth = Components {
        case: 0.6,
        item: 0.3,
        clinicians: vec![0.05, 0.1, 0.2, 0.3],
        grader_slope: 0.8,
        grader_case: 0.05,
        grader_case_upper: 0.05,
        grader_item: 0.12,
    };
    let fitted = Components::fit(&simulated(&truth, 4000, 5, 7)).expect("fitted");
    close(fitted.case, truth.case, 0.04, "case");
    close(fitted.item, truth.item, 0.02, "item");
    for (got, want) in fitted.clinicians.iter().zip(&truth.clinicians) {
        close(*got, *want, 0.015, "clinician error");
    }
    close(fitted.grader_slope, truth.grader_slope, 0.03, "slope");
    close(
        fitted.grader_case,
        truth.grader_case,
        0.015,
        "grader case error",
    );
    close(
        fitted.grader_item,
        truth.grader_item,
        0.015,
        "grader item error",
    );
}

/// `cases` cases of 3 items, three clinicians, a grader close to them.
fn study(cases: usize) -> CalibrationInput {
    let mut rng = SplitMix64::new(cases as u64);
    let mut normal = move || {
        let u = rng.unit().max(1e-300);
        let v = rng.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let mut rows = Vec::new();
    for c in 0..cases {
        let case = normal();
        for t in 0..3 {
            let truth = case + 0.6 * normal();
            let item = format!("c{c:03}/t{t}");
            for (j, sd) in [0.3, 0.35, 0.4].iter().enumerate() {
                rows.push((
                    item.clone(),
                    format!("c{c:03}"),
                    format!("dr_{j}"),
                    truth + sd * normal(),
                ));
            }
            rows.push((
                item.clone(),
                format!("c{c:03}"),
                "grader".into(),
                truth + 0.3 * normal(),
            ));
        }
    }
    input_of(rows.into_iter())
}

#[test]
fn with_few_cases_the_summary_says_how_sure_it_can_be_and_the_rates_are_reproducible() {
    let few = report(&study(12), 0.9, 0.05);
    let verdict = few.verdict.as_ref().expect("verdict");
    let rates = verdict.error_rates.as_ref().expect("error rates");
    assert!(rates.few_cases);
    assert_eq!((rates.cases, rates.clinicians), (12, 3));
    assert!(
        verdict
            .summary
            .contains("With only 12 cases, read every claim here as provisional"),
        "{}",
        verdict.summary
    );
    for rate in [&rates.bar, &rates.non_inferiority] {
        let p = rate.estimated.expect("estimated");
        assert!((0.0..=1.0).contains(&p));
        assert_eq!(rate.nominal, 0.025);
        assert!(rate.simulations >= 100);
    }
    assert!(verdict
        .summary
        .contains("How often these claims would be made wrongly"));
    // Seeded by the report's seed: the same on a second run.
    let again = report(&study(12), 0.9, 0.05);
    assert_eq!(
        again.verdict.expect("verdict").error_rates,
        verdict.error_rates
    );

    let many = report(&study(40), 0.9, 0.05);
    let verdict = many.verdict.as_ref().expect("verdict");
    assert!(!verdict.error_rates.as_ref().expect("error rates").few_cases);
    assert!(
        !verdict.summary.contains("provisional"),
        "{}",
        verdict.summary
    );
}
