//! Model reliability per spec against the Python standard library's figures on random run
//! records (tests/data/README.md: `reliability_reference.json`).

use calibration::reliability::{model_reliability, RunRecord};
use serde_json::Value;

#[test]
fn reliability_matches_the_python_reference() {
    let reference: Value =
        serde_json::from_str(include_str!("data/reliability_reference.json")).unwrap();
    let records: Vec<RunRecord> = reference["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| RunRecord {
            name: r["name"].as_str().unwrap().to_owned(),
            kind: r["kind"].as_str().unwrap().to_owned(),
            prompt_tokens: r["prompt_tokens"].as_u64().unwrap(),
            completion_tokens: r["completion_tokens"].as_u64().unwrap(),
            latency_ms: r["latency_ms"].as_u64().unwrap(),
            requests: r["requests"].as_u64().unwrap(),
            cost: r["cost"].as_f64(),
        })
        .collect();
    let rows = model_reliability(&records);
    let expected = reference["expected"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len());
    let close = |a: f64, b: &Value, what: &str| {
        let b = b.as_f64().unwrap();
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}: {a} vs {b}"
        );
    };
    for (row, want) in rows.iter().zip(expected) {
        let what = row.name.as_str();
        assert_eq!(row.name, want["name"].as_str().unwrap());
        assert_eq!(row.kind, want["kind"].as_str().unwrap(), "{what}");
        assert_eq!(row.items as u64, want["items"].as_u64().unwrap(), "{what}");
        assert_eq!(row.requests, want["requests"].as_u64().unwrap(), "{what}");
        assert_eq!(row.prompt_tokens, want["prompt_tokens"].as_u64().unwrap());
        assert_eq!(
            row.completion_tokens,
            want["completion_tokens"].as_u64().unwrap()
        );
        close(
            row.mean_tokens_per_item,
            &want["mean_tokens_per_item"],
            what,
        );
        close(row.latency_ms_p50, &want["latency_ms_p50"], what);
        close(row.latency_ms_p95, &want["latency_ms_p95"], what);
        match (row.malformed_output_rate, &want["malformed_output_rate"]) {
            (None, Value::Null) => {}
            (Some(rate), want) => close(rate, want, what),
            (None, want) => panic!("{what}: no malformed-output rate, want {want}"),
        }
        match (row.cost, &want["cost"]) {
            (None, Value::Null) => {}
            (Some(cost), want) => close(cost, want, what),
            (None, want) => panic!("{what}: no cost, want {want}"),
        }
    }
    // One spec run with prices throughout has a cost; one without prices, and one with a single
    // run without them, have none.
    let priced: Vec<&str> = rows
        .iter()
        .filter(|r| r.cost.is_some())
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(priced, ["vlm-a"]);
    // The grader's rate is not trivially zero, nor the percentiles equal.
    let grader = rows.iter().find(|r| r.kind == "grader").unwrap();
    assert!(grader.malformed_output_rate.unwrap() > 0.0);
    assert!(grader.latency_ms_p95 > grader.latency_ms_p50);
}

#[test]
fn no_records_no_rows() {
    assert!(model_reliability(&[]).is_empty());
}

#[test]
fn each_row_carries_the_keys_formats_section_5_names() {
    let record = |latency_ms, requests, cost| RunRecord {
        name: "judge".into(),
        kind: "grader".into(),
        prompt_tokens: 300,
        completion_tokens: 40,
        latency_ms,
        requests,
        cost,
    };
    let rows = model_reliability(&[record(100, 1, Some(0.5)), record(300, 2, Some(0.25))]);
    let row = serde_json::to_value(&rows[0]).unwrap();
    // The contract's names hold the same figures as the report's own.
    assert_eq!(row["tokens"], 680);
    assert_eq!(row["latency_p50_ms"], row["latency_ms_p50"]);
    assert_eq!(row["latency_p95_ms"], row["latency_ms_p95"]);
    assert_eq!(row["latency_p50_ms"], 200.0);
    assert_eq!(row["malformed_rate"], row["malformed_output_rate"]);
    assert_eq!(row["malformed_rate"].as_f64().unwrap(), 1.0 / 3.0);
    assert_eq!(row["cost"], 0.75);
    // What no run record says is null, present as the contract asks.
    for key in ["abstention_rate", "brier", "ece", "bins"] {
        assert_eq!(row.get(key), Some(&Value::Null), "{key}");
    }
}
