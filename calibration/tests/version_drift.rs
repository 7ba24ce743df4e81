//! Drift between grader versions against numpy and scipy.stats.kendalltau (see
//! tests/data/README.md for how `version_drift_reference.json` was made).

mod common;

use calibration::version_drift::{version_drift, VersionScore};
use common::*;
use serde_json::Value;

fn scores(v: &Value) -> Vec<VersionScore> {
    v.as_array()
        .expect("scores")
        .iter()
        .map(|s| VersionScore {
            item: s["item"].as_str().expect("item").into(),
            model: s["model"].as_str().expect("model").into(),
            score: s["score"].as_f64().expect("score"),
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("items")
        .iter()
        .map(|s| s.as_str().expect("item").to_owned())
        .collect()
}

#[test]
fn shift_flips_and_ranking_tau_match_numpy_and_scipy() {
    let reference: Value =
        serde_json::from_str(include_str!("data/version_drift_reference.json")).expect("JSON");
    for study in reference["studies"].as_array().expect("studies") {
        let what = |s: &str| format!("seed {}: {s}", study["seed"]);
        let expected = &study["expected"];
        let drift = version_drift(
            &scores(&study["before"]),
            &scores(&study["after"]),
            study["pass_at_or_above"].as_f64().expect("threshold"),
        );
        assert_eq!(
            drift.n_common as u64,
            expected["n_common"].as_u64().unwrap(),
            "{}",
            what("n_common")
        );
        close(
            drift.mean_shift.expect("common items"),
            expected["mean_shift"].as_f64().unwrap(),
            SCIPY_EXACT,
            &what("mean shift"),
        );
        assert_eq!(drift.flips_to_pass, strings(&expected["flips_to_pass"]));
        assert_eq!(drift.flips_to_fail, strings(&expected["flips_to_fail"]));
        let models = expected["models"].as_array().unwrap();
        assert_eq!(drift.models.len(), models.len());
        for (got, want) in drift.models.iter().zip(models) {
            assert_eq!(got.model, want["model"].as_str().unwrap());
            assert_eq!(got.n_items as u64, want["n_items"].as_u64().unwrap());
            close(
                got.mean_before,
                want["mean_before"].as_f64().unwrap(),
                SCIPY_EXACT,
                &what("mean before"),
            );
            close(
                got.mean_after,
                want["mean_after"].as_f64().unwrap(),
                SCIPY_EXACT,
                &what("mean after"),
            );
        }
        let tau = drift.ranking_tau.value().expect("six models");
        close(
            tau.tau,
            expected["tau"].as_f64().unwrap(),
            SCIPY_EXACT,
            &what("tau-b"),
        );
        close(
            tau.p,
            expected["tau_p"].as_f64().unwrap(),
            DISTRIBUTION,
            &what("tau-b p"),
        );
    }
}
