//! Statistics against scipy, pingouin, krippendorff, scikit-learn and statsmodels on random data
//! (see tests/data/README.md for how `reference.json` was made).

mod common;

use calibration::correlation::{kendall_tau_b, pearson, spearman};
use calibration::icc::icc;
use calibration::kappa::{cohen_kappa, fleiss_kappa, Categories};
use calibration::krippendorff::krippendorff_alpha;
use calibration::proportions::{pass_at_k, wilson};
use calibration::{Estimate, RatingMatrix};
use common::*;
use serde_json::Value;

fn reference() -> Value {
    let text = include_str!("data/reference.json");
    serde_json::from_str(text).expect("reference.json is valid JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn value<T: std::fmt::Debug>(e: &Estimate<T>) -> &T {
    e.value()
        .unwrap_or_else(|| panic!("expected a value, got {e:?}"))
}

#[test]
fn correlations_match_scipy() {
    for (i, case) in reference()["paired"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let (x, y) = (floats(&case["x"]), floats(&case["y"]));
        let what = |s: &str| format!("case {i} ({}): {s}", case["kind"]);

        let p = pearson(&x, &y);
        let p = value(&p);
        close(
            p.r,
            f(&case["pearson"]["r"]),
            SCIPY_EXACT,
            &what("pearson r"),
        );
        close(
            p.ci_low,
            f(&case["pearson"]["ci_low"]),
            DISTRIBUTION,
            &what("pearson ci_low"),
        );
        close(
            p.ci_high,
            f(&case["pearson"]["ci_high"]),
            DISTRIBUTION,
            &what("pearson ci_high"),
        );
        close_relative(
            p.p,
            f(&case["pearson"]["p"]),
            DISTRIBUTION,
            &what("pearson p"),
        );

        let s = spearman(&x, &y);
        let s = value(&s);
        close(
            s.rho,
            f(&case["spearman"]["rho"]),
            SCIPY_EXACT,
            &what("spearman rho"),
        );
        close_relative(
            s.p,
            f(&case["spearman"]["p"]),
            DISTRIBUTION,
            &what("spearman p"),
        );

        let k = kendall_tau_b(&x, &y);
        let k = value(&k);
        close(
            k.tau,
            f(&case["kendall_tau_b"]["tau"]),
            SCIPY_EXACT,
            &what("kendall tau"),
        );
        close_relative(
            k.p,
            f(&case["kendall_tau_b"]["p"]),
            DISTRIBUTION,
            &what("kendall p"),
        );
    }
}

#[test]
fn icc_matches_pingouin() {
    for (i, case) in reference()["icc"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let rows: Vec<Vec<f64>> = case["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(floats)
            .collect();
        let result = icc(&RatingMatrix::from_complete_rows(&rows));
        for (name, estimate) in [
            ("ICC1", &result.icc1),
            ("ICC2", &result.icc2),
            ("ICC3", &result.icc3),
            ("ICC1k", &result.icc1k),
            ("ICC2k", &result.icc2k),
            ("ICC3k", &result.icc3k),
        ] {
            let expected = &case["icc"][name];
            let v = value(estimate);
            close(
                v.value,
                f(&expected["value"]),
                SCIPY_EXACT,
                &format!("case {i} {name}"),
            );
            // pingouin rounds its interval to 2 decimals.
            close(
                v.ci_low,
                f(&expected["ci_low"]),
                HALF_OF_2_DECIMALS,
                &format!("case {i} {name} low"),
            );
            close(
                v.ci_high,
                f(&expected["ci_high"]),
                HALF_OF_2_DECIMALS,
                &format!("case {i} {name} high"),
            );
        }
    }
}

fn optional_rows(v: &Value) -> Vec<Vec<Option<f64>>> {
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            r.as_array()
                .expect("row")
                .iter()
                .map(Value::as_f64)
                .collect()
        })
        .collect()
}

#[test]
fn krippendorff_alpha_matches_krippendorff_package() {
    for (i, case) in reference()["krippendorff"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let alpha = krippendorff_alpha(&RatingMatrix::from_rows(&optional_rows(&case["rows"])));
        let expected = &case["krippendorff_alpha"];
        close(
            *value(&alpha.nominal),
            f(&expected["nominal"]),
            SCIPY_EXACT,
            &format!("case {i} nominal"),
        );
        close(
            *value(&alpha.ordinal),
            f(&expected["ordinal"]),
            SCIPY_EXACT,
            &format!("case {i} ordinal"),
        );
        close(
            *value(&alpha.interval),
            f(&expected["interval"]),
            SCIPY_EXACT,
            &format!("case {i} interval"),
        );
    }
}

#[test]
fn cohen_kappa_matches_sklearn_and_statsmodels() {
    let scale = Categories::from_scale(1.0, 5.0, 1.0).expect("valid scale");
    for (i, case) in reference()["cohen"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let kappa = cohen_kappa(&floats(&case["a"]), &floats(&case["b"]), &scale);
        for (name, estimate) in [
            ("unweighted", &kappa.unweighted),
            ("linear", &kappa.linear),
            ("quadratic", &kappa.quadratic),
        ] {
            let expected = &case["cohen_kappa"][name];
            let v = value(estimate);
            close(
                v.value,
                f(&expected["value"]),
                SCIPY_EXACT,
                &format!("case {i} {name}"),
            );
            close(
                v.se,
                f(&expected["se"]),
                SCIPY_EXACT,
                &format!("case {i} {name} se"),
            );
        }
    }
}

#[test]
fn fleiss_kappa_matches_statsmodels() {
    let scale = Categories::from_scale(1.0, 4.0, 1.0).expect("valid scale");
    for (i, case) in reference()["fleiss"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let rows: Vec<Vec<f64>> = case["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(floats)
            .collect();
        let kappa = fleiss_kappa(&RatingMatrix::from_complete_rows(&rows), &scale);
        close(
            value(&kappa).value,
            f(&case["fleiss_kappa"]),
            SCIPY_EXACT,
            &format!("case {i}"),
        );
    }
}

#[test]
fn wilson_and_pass_at_k_match_statsmodels_and_exact_binomials() {
    let document = reference();
    for case in document["wilson"].as_array().expect("cases") {
        let (count, n) = (
            case["count"].as_u64().expect("count") as usize,
            case["n"].as_u64().expect("n") as usize,
        );
        let w = wilson(count, n).expect("defined");
        close(
            w.ci_low,
            f(&case["ci_low"]),
            DISTRIBUTION,
            &format!("{count}/{n} low"),
        );
        close(
            w.ci_high,
            f(&case["ci_high"]),
            DISTRIBUTION,
            &format!("{count}/{n} high"),
        );
    }
    for case in document["pass_at_k"].as_array().expect("cases") {
        let get = |k: &str| case[k].as_u64().expect("integer") as usize;
        let v = pass_at_k(get("n"), get("c"), get("k")).expect("defined");
        close(v, f(&case["value"]), SCIPY_EXACT, &format!("pass@k {case}"));
    }
}
