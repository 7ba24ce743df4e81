//! "Automatic metrics against the clinicians" against scipy, numpy and scikit-learn on a
//! synthetic study (`scripts/reference/metrics/make_automatic_metrics_reference.py`, data in
//! `tests/data/automatic_metrics_reference.json`).

mod common;

use calibration::automatic_metrics::{
    automatic_metrics_report, model_family, AutomaticMetricsInput,
};
use calibration::input::{
    CalibrationInput, CorrectnessJudgement, ItemInfo, LongTable, ReportOptions, ScaleSpec, ScoreRow,
};
use common::{close, SCIPY_EXACT};
use serde_json::Value;
use std::collections::BTreeMap;

fn setup() -> (
    Value,
    CalibrationInput,
    AutomaticMetricsInput,
    ReportOptions,
) {
    let reference: Value =
        serde_json::from_str(include_str!("data/automatic_metrics_reference.json")).unwrap();
    let str_of = |v: &Value| v.as_str().unwrap().to_owned();
    let mut items = BTreeMap::new();
    let mut response_model = BTreeMap::new();
    for it in reference["items"].as_array().unwrap() {
        items.insert(
            str_of(&it["item"]),
            ItemInfo {
                case: Some(str_of(&it["case"])),
                groups: BTreeMap::new(),
            },
        );
        response_model.insert(str_of(&it["item"]), str_of(&it["model"]));
    }
    let scores = reference["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| ScoreRow {
            item: str_of(&s["item"]),
            rater: str_of(&s["rater"]),
            dimension: "overall".into(),
            score: s["score"].as_f64().unwrap(),
        })
        .collect();
    let correctness = reference["judgements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| CorrectnessJudgement {
            case: str_of(&j["case"]),
            model: str_of(&j["model"]),
            task_family: str_of(&j["task_family"]),
            level: str_of(&j["level"]),
            task: str_of(&j["task"]),
            sample: j["sample"].as_u64().unwrap() as u32,
            rater: str_of(&j["rater"]),
            correct: j["correct"].as_bool().unwrap(),
        })
        .collect();
    let input = CalibrationInput {
        table: LongTable {
            scores,
            grouping_columns: Vec::new(),
            items,
            scales: Vec::new(),
        },
        correctness,
        ..CalibrationInput::default()
    };
    let metrics = reference["metrics"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(item, m)| {
            let values = m
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                .collect();
            (item.clone(), values)
        })
        .collect();
    let answer_words = reference["words"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(item, w)| (item.clone(), w.as_u64().unwrap() as usize))
        .collect();
    let grader = str_of(&reference["grader"]);
    let auto = AutomaticMetricsInput {
        metrics,
        metrics_missing: None,
        answer_words,
        response_model,
        grader_models: BTreeMap::from([(grader.clone(), str_of(&reference["grader_model"]))]),
        grader_repeats: Vec::new(),
    };
    let options = ReportOptions {
        grader: Some(grader),
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        pass_at: reference["pass_at"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_u64().unwrap() as usize)
            .collect(),
        bootstrap_resamples: 300,
        ..ReportOptions::default()
    };
    (reference, input, auto, options)
}

#[test]
fn the_section_matches_scipy_numpy_and_sklearn() {
    let (reference, input, auto, options) = setup();
    let expected = &reference["expected"];
    let section = automatic_metrics_report(&auto, &input, &options).unwrap();

    for row in &section.against_clinicians {
        let want = &expected["correlations"][&row.metric];
        let r = row.pearson.value().unwrap().r;
        close(
            r,
            want["r"].as_f64().unwrap(),
            SCIPY_EXACT,
            &format!("{} r", row.metric),
        );
        let rho = row.spearman.value().unwrap().rho;
        close(
            rho,
            want["rho"].as_f64().unwrap(),
            SCIPY_EXACT,
            &format!("{} rho", row.metric),
        );
        assert_eq!(row.n_items, 84);
        assert_eq!(row.n_cases, 14);
        let interval = row.pearson_case_interval.as_ref().unwrap();
        assert!(
            interval.low <= r && r <= interval.high,
            "{}: {interval:?}",
            row.metric
        );
    }
    assert_eq!(section.against_clinicians.len(), 4);
    assert_eq!(section.grader_pass_score, Some(3.0));

    let length = section.length_bias.value().unwrap();
    close(
        length.score_per_100_words,
        expected["score_per_100_words"].as_f64().unwrap(),
        SCIPY_EXACT,
        "length coefficient",
    );
    close(
        length.slope_on_clinicians,
        expected["slope_on_clinicians"].as_f64().unwrap(),
        SCIPY_EXACT,
        "slope on the clinicians' mean",
    );
    // The synthetic grader adds 0.4 points per 100 words: the interval must see it.
    assert!(length.interval.as_ref().unwrap().low > 0.0, "{length:?}");

    let own = section.self_preference.value().unwrap();
    assert_eq!(own.grader_family, "openai");
    close(
        own.difference,
        expected["self_preference"].as_f64().unwrap(),
        SCIPY_EXACT,
        "self-preference",
    );
    assert_eq!(
        own.own_family_items as u64,
        expected["own_family_items"].as_u64().unwrap()
    );

    let agreement = section.verdict_agreement.value().unwrap();
    close(
        agreement.share_agreeing,
        expected["share_agreeing"].as_f64().unwrap(),
        SCIPY_EXACT,
        "verdict agreement",
    );
    close(
        agreement.cohen_kappa.value().unwrap().value,
        expected["cohen_kappa"].as_f64().unwrap(),
        SCIPY_EXACT,
        "verdict kappa",
    );
    let want_rows = expected["pass_at_k"].as_array().unwrap();
    assert_eq!(section.pass_at_k.len(), want_rows.len());
    for (got, want) in section.pass_at_k.iter().zip(want_rows) {
        assert_eq!(got.model, want["model"].as_str().unwrap());
        assert_eq!(got.k as u64, want["k"].as_u64().unwrap());
        close(
            got.clinicians.unwrap(),
            want["clinicians"].as_f64().unwrap(),
            SCIPY_EXACT,
            "clinicians' pass@k",
        );
        close(
            got.grader.unwrap(),
            want["grader"].as_f64().unwrap(),
            SCIPY_EXACT,
            "grader's pass@k",
        );
    }
    assert!(section.grader_test_retest.is_none());
}

#[test]
fn model_families_are_read_from_ids() {
    for (id, family) in [
        ("gpt-4o-2024-08-06", "openai"),
        ("o3-mini", "openai"),
        ("claude-3-5-sonnet", "anthropic"),
        ("Qwen/Qwen2-VL-7B-Instruct", "qwen"),
        ("meta-llama/Llama-3.2-11B-Vision", "meta"),
        ("llava-med-7b", "llava"),
        ("medgemma-4b-it", "google"),
        ("vlm-a", "vlm"),
    ] {
        assert_eq!(model_family(id), family, "{id}");
    }
}
