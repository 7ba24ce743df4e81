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
    }
    // The grader's rate is not trivially zero, nor the percentiles equal.
    let grader = rows.iter().find(|r| r.kind == "grader").unwrap();
    assert!(grader.malformed_output_rate.unwrap() > 0.0);
    assert!(grader.latency_ms_p95 > grader.latency_ms_p50);
}

#[test]
fn no_records_no_rows() {
    assert!(model_reliability(&[]).is_empty());
}
