//! PPI++ against the authors' package `ppi-python` (and, for intervals by case, an independent
//! numpy implementation of the same formulas); see tests/data/README.md for how
//! `ppi_reference.json` was made.

use calibration::ppi::{ppi_mean, Answer, PpiMean};
use calibration::Estimate;
use serde_json::Value;

const TOLERANCE: f64 = 1e-9;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn indices(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("case index") as usize)
        .collect()
}

fn close(name: &str, what: &str, got: f64, expected: &Value) {
    let expected = expected.as_f64().expect("number");
    assert!(
        (got - expected).abs() <= TOLERANCE,
        "{name}: {what} is {got}, the reference {expected}"
    );
}

fn check(case: &Value, answers: &[Answer]) {
    let name = case["name"].as_str().expect("name");
    let Estimate::Value(PpiMean {
        estimate,
        low,
        high,
        lambda,
        clinicians_only,
        grader_only,
        ..
    }) = ppi_mean(answers)
    else {
        panic!("{name}: not estimable")
    };
    close(name, "estimate", estimate, &case["estimate"]);
    close(name, "lambda", lambda, &case["lambda"]);
    close(name, "low", low, &case["low"]);
    close(name, "high", high, &case["high"]);
    for (what, interval, expected) in [
        ("clinicians only", clinicians_only, &case["clinicians_only"]),
        ("grader only", grader_only, &case["grader_only"]),
    ] {
        close(name, what, interval.estimate, &expected["estimate"]);
        close(name, what, interval.low, &expected["low"]);
        close(name, what, interval.high, &expected["high"]);
    }
}

fn reference() -> Value {
    serde_json::from_str(include_str!("data/ppi_reference.json")).expect("valid JSON")
}

/// With every answer its own case, the by-case interval is ppi_py's iid one.
#[test]
fn one_answer_per_case_matches_ppi_py() {
    let reference = reference();
    let cases = reference["cases"].as_array().expect("cases");
    assert!(cases.len() >= 7);
    for case in cases {
        let labelled = floats(&case["y"]).into_iter().zip(floats(&case["yhat"]));
        let unlabelled = floats(&case["yhat_unlabelled"]);
        let answers: Vec<Answer> = labelled
            .map(|(y, grader)| (Some(y), grader))
            .chain(unlabelled.into_iter().map(|grader| (None, grader)))
            .enumerate()
            .map(|(case, (clinicians, grader))| Answer {
                case,
                grader,
                clinicians,
            })
            .collect();
        check(case, &answers);
    }
}

/// The order of answers does not matter, and a case may mix read and unread answers.
#[test]
fn clustered_matches_independent_implementation() {
    let reference = reference();
    for case in reference["clustered"].as_array().expect("clustered") {
        let labelled = floats(&case["y"])
            .into_iter()
            .zip(floats(&case["yhat"]))
            .zip(indices(&case["case_labelled"]))
            .map(|((y, grader), case)| Answer {
                case,
                grader,
                clinicians: Some(y),
            });
        let unlabelled = floats(&case["yhat_unlabelled"])
            .into_iter()
            .zip(indices(&case["case_unlabelled"]))
            .map(|(grader, case)| Answer {
                case,
                grader,
                clinicians: None,
            });
        let mut answers: Vec<Answer> = labelled.chain(unlabelled).collect();
        check(case, &answers);
        answers.reverse();
        check(case, &answers);
    }
}

#[test]
fn too_few_reads_or_nothing_unread_is_not_estimable() {
    let answer = |clinicians| Answer {
        case: 0,
        grader: 3.0,
        clinicians,
    };
    assert!(ppi_mean(&[answer(Some(3.0)), answer(None)])
        .reason()
        .is_some_and(|r| r.contains("at least 2")));
    assert!(ppi_mean(&[answer(Some(3.0)), answer(Some(4.0))])
        .reason()
        .is_some_and(|r| r.contains("nothing to add")));
}
