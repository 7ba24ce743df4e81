//! PPI++ against the authors' package `ppi-python` (and, for intervals by case, an independent
//! numpy implementation of the same formulas); see tests/data/README.md for how
//! `ppi_reference.json` was made.

use calibration::input::{
    CalibrationInput, CorrectnessJudgement, ItemInfo, LongTable, ReportOptions, ScaleSpec, ScoreRow,
};
use calibration::ppi::{ppi_mean, Answer, PpiMean, PpiRow};
use calibration::progress::NoProgress;
use calibration::report::build_report;
use calibration::Estimate;
use serde_json::Value;
use std::collections::BTreeMap;

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
    check_estimate(case, &ppi_mean(answers));
}

fn check_estimate(case: &Value, result: &Estimate<PpiMean>) {
    let name = case["name"].as_str().expect("name");
    let Estimate::Value(PpiMean {
        estimate,
        low,
        high,
        lambda,
        clinicians_only,
        grader_only,
        ..
    }) = *result
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

fn named<'a>(reference: &'a Value, name: &str) -> &'a Value {
    reference["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == name)
        .expect("reference case")
}

/// A study of one model whose answers are each their own case: a clinician read the first
/// answers (scored `y`, and judged correct when `y` is 1), the grader scored all.
fn study(case: &Value) -> CalibrationInput {
    let y = floats(&case["y"]);
    let grader = floats(&case["yhat"])
        .into_iter()
        .chain(floats(&case["yhat_unlabelled"]));
    let mut table = LongTable::default();
    let mut correctness = Vec::new();
    for (i, grader) in grader.enumerate() {
        let item = format!("c{i}/t/m1/0");
        table.items.insert(
            item.clone(),
            ItemInfo {
                case: Some(format!("c{i}")),
                groups: BTreeMap::from([("model".to_owned(), "m1".to_owned())]),
            },
        );
        let score = |rater: &str, score: f64| ScoreRow {
            item: item.clone(),
            rater: rater.into(),
            dimension: "overall".into(),
            score,
        };
        table.scores.push(score("grader", grader));
        if let Some(&y) = y.get(i) {
            table.scores.push(score("dr_a", y));
            correctness.push(CorrectnessJudgement {
                case: format!("c{i}"),
                model: "m1".into(),
                task_family: "diagnosis".into(),
                level: "1".into(),
                task: format!("c{i}/t"),
                sample: 0,
                rater: "dr_a".into(),
                correct: y == 1.0,
            });
        }
    }
    CalibrationInput {
        table,
        correctness,
        ..CalibrationInput::default()
    }
}

fn row<'a>(rows: &'a [PpiRow], target: &str) -> &'a PpiRow {
    rows.iter()
        .find(|r| r.model == "m1" && r.target == target)
        .unwrap_or_else(|| panic!("a {target} row for m1"))
}

#[test]
fn report_rows_match_ppi_py() {
    let reference = reference();
    let options = ReportOptions {
        grader: Some("grader".into()),
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    };

    let scores = named(&reference, "continuous scores, good grader");
    let report = build_report(&study(scores), &options, &NoProgress).expect("report");
    check_estimate(scores, &row(&report.ppi, "mean_score").result);
    // (Its judgements give a `correct` row too; the 0/1 study below checks that target.)
    assert!(report.ppi.iter().all(|r| r.model == "m1"));

    // 0/1 scores on a 0–1 scale: the pass score is 0.5, so the grader's verdict is its score.
    let binary = named(&reference, "binary target, binary grader");
    let options = ReportOptions {
        scale: Some(ScaleSpec {
            min: 0.0,
            max: 1.0,
            step: 1.0,
        }),
        ..options
    };
    let report = build_report(&study(binary), &options, &NoProgress).expect("report");
    check_estimate(binary, &row(&report.ppi, "mean_score").result);
    check_estimate(binary, &row(&report.ppi, "correct").result);
    let json = serde_json::to_value(&report).expect("JSON");
    let first = &json["ppi"][0];
    for key in [
        "model",
        "target",
        "estimate",
        "low",
        "high",
        "n_labelled",
        "n_unlabelled",
        "lambda",
        "clinicians_only",
        "grader_only",
        "effective_n",
        "method",
    ] {
        assert!(!first[key].is_null(), "the ppi row has {key}");
    }
    assert_eq!(first["n_labelled"], 100);
    assert_eq!(first["n_unlabelled"], 900);
    let html = calibration::html::to_html(&report);
    assert!(html.contains("<section id=\"ppi\">") && html.contains("<td>correct</td>"));

    // ppi.csv holds the same figures, one row per model × target, in the JSON's order.
    let tables: BTreeMap<String, String> = calibration::tables::to_csv_tables(&report)
        .into_iter()
        .collect();
    let mut lines = tables["ppi.csv"].lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    assert_eq!(header.len(), 20);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.splitn(20, ',').collect()).collect();
    assert_eq!(rows.len(), report.ppi.len());
    for (fields, row) in rows.iter().zip(&report.ppi) {
        let json = serde_json::to_value(row).expect("JSON");
        let cell = |name: &str| fields[header.iter().position(|h| *h == name).expect(name)];
        assert_eq!((cell("model"), cell("target")), ("m1", row.target.as_str()));
        for (column, value) in [
            ("estimate", &json["estimate"]),
            ("low", &json["low"]),
            ("lambda", &json["lambda"]),
            ("clinicians_only_high", &json["clinicians_only"]["high"]),
            ("grader_only_low", &json["grader_only"]["low"]),
            ("effective_n", &json["effective_n"]),
        ] {
            let written: f64 = cell(column).parse().expect(column);
            close(row.target.as_str(), column, written, value);
        }
        assert_eq!(cell("n_labelled"), json["n_labelled"].to_string());
        assert!(cell("method").starts_with("\"PPI++ mean"));
    }
}

#[test]
fn no_grader_no_ppi() {
    let reference = reference();
    let report = build_report(
        &study(named(&reference, "small n")),
        &ReportOptions::default(),
        &NoProgress,
    )
    .expect("report");
    assert!(report.ppi.is_empty());
}

/// A study of one model from the pass@k reference: each task its own case with several samples,
/// the grader's verdict on every sample (a 0/1 score), and a clinician's judgement (and the same
/// 0/1 score) of every sample of the first tasks.
fn pass_at_k_study(case: &Value) -> CalibrationInput {
    let mut table = LongTable::default();
    let mut correctness = Vec::new();
    let judged = case["correct"].as_array().expect("correct");
    for (i, passes) in case["grader_passes"]
        .as_array()
        .expect("grader_passes")
        .iter()
        .enumerate()
    {
        for (sample, pass) in indices(passes).into_iter().enumerate() {
            let item = format!("c{i}/t/m1/{sample}");
            // Two task families, alternating (for the rows per family and level).
            let family = if i % 2 == 0 {
                "diagnosis"
            } else {
                "localisation"
            };
            table.items.insert(
                item.clone(),
                ItemInfo {
                    case: Some(format!("c{i}")),
                    groups: BTreeMap::from([
                        ("model".to_owned(), "m1".to_owned()),
                        ("task_family".to_owned(), family.to_owned()),
                        ("level".to_owned(), "2".to_owned()),
                    ]),
                },
            );
            table.scores.push(ScoreRow {
                item: item.clone(),
                rater: "grader".into(),
                dimension: "overall".into(),
                score: pass as f64,
            });
            if let Some(correct) = judged.get(i) {
                // The clinician scores what they judge (a report needs a clinician's scores).
                table.scores.push(ScoreRow {
                    item,
                    rater: "dr_a".into(),
                    dimension: "overall".into(),
                    score: correct[sample].as_f64().expect("0 or 1"),
                });
                correctness.push(CorrectnessJudgement {
                    case: format!("c{i}"),
                    model: "m1".into(),
                    task_family: "diagnosis".into(),
                    level: "1".into(),
                    task: format!("c{i}/t"),
                    sample: sample as u32,
                    rater: "dr_a".into(),
                    correct: correct[sample] == 1,
                });
            }
        }
    }
    CalibrationInput {
        table,
        correctness,
        ..CalibrationInput::default()
    }
}

/// The report of [`pass_at_k_study`]: its grader's 0/1 scores on a 0–1 scale pass at 0.5.
fn pass_at_k_options(pass_at: Vec<usize>, by_task_family_and_level: bool) -> ReportOptions {
    ReportOptions {
        grader: Some("grader".into()),
        bootstrap_resamples: 200,
        pass_at,
        scale: Some(ScaleSpec {
            min: 0.0,
            max: 1.0,
            step: 1.0,
        }),
        ppi_by_task_family_and_level: by_task_family_and_level,
        ..ReportOptions::default()
    }
}

#[test]
fn pass_at_k_rows_match_ppi_py_on_the_tasks_pass_at_k() {
    let reference = reference();
    let case = named(&reference, "pass@2, 5 samples per task");
    let options = pass_at_k_options(vec![2, 9], false);
    let report = build_report(&pass_at_k_study(case), &options, &NoProgress).expect("report");
    let pass_at_2 = row(&report.ppi, "pass@2");
    check_estimate(case, &pass_at_2.result);
    let Estimate::Value(value) = &pass_at_2.result else {
        unreachable!("checked above")
    };
    assert_eq!((value.n_labelled, value.n_unlabelled), (60, 240));
    // No task has 9 samples: no pass@9 row rather than one of nothing.
    assert!(report.ppi.iter().all(|r| r.target != "pass@9"));
}

#[test]
fn rows_per_task_family_and_level_are_the_model_rows_of_that_family_alone() {
    let reference = reference();
    let case = named(&reference, "pass@2, 5 samples per task");
    let options = pass_at_k_options(vec![2], true);
    let study = pass_at_k_study(case);
    let report = build_report(&study, &options, &NoProgress).expect("report");
    let targets = ["mean_score", "correct", "pass@2"];
    // The model's own rows first, then each family's, in name order.
    let keys: Vec<(Option<&str>, &str)> = report
        .ppi
        .iter()
        .map(|r| (r.task_family.as_deref(), r.target.as_str()))
        .collect();
    let expected: Vec<(Option<&str>, &str)> = [None, Some("diagnosis"), Some("localisation")]
        .into_iter()
        .flat_map(|family| targets.map(|t| (family, t)))
        .collect();
    assert_eq!(keys, expected);

    // The diagnosis rows equal the model rows of a study holding only the diagnosis tasks.
    let mut alone = study.clone();
    alone
        .table
        .items
        .retain(|_, info| info.groups["task_family"] == "diagnosis");
    let kept = alone.table.items.clone();
    alone.table.scores.retain(|s| kept.contains_key(&s.item));
    alone
        .correctness
        .retain(|j| kept.contains_key(&format!("{}/m1/{}", j.task, j.sample)));
    let alone = build_report(&alone, &options, &NoProgress).expect("report");
    for target in targets {
        let family_row = report
            .ppi
            .iter()
            .find(|r| r.task_family.as_deref() == Some("diagnosis") && r.target == target)
            .expect("a diagnosis row");
        assert_eq!(family_row.level.as_deref(), Some("2"));
        let model_row = alone
            .ppi
            .iter()
            .find(|r| r.task_family.is_none() && r.target == target)
            .expect("the model row");
        assert_eq!(family_row.result, model_row.result, "{target}");
    }

    let json = serde_json::to_value(&report).expect("JSON");
    assert!(json["ppi"][0].get("task_family").is_none());
    assert_eq!(json["ppi"][3]["task_family"], "diagnosis");
    assert_eq!(json["ppi"][3]["level"], "2");
}
