//! Statistics against values published with their data. Each test names its source.

mod common;

use calibration::bland_altman::bland_altman;
use calibration::correlation::{kendall_tau_b, pearson, PMethod};
use calibration::icc::icc;
use calibration::kappa::{cohen_kappa_from_table, fleiss_kappa, Categories};
use calibration::krippendorff::krippendorff_alpha;
use calibration::precision::fisher_interval_at;
use calibration::{Estimate, RatingMatrix};
use common::*;

fn value<T: std::fmt::Debug>(e: &Estimate<T>) -> &T {
    e.value()
        .unwrap_or_else(|| panic!("expected a value, got {e:?}"))
}

/// R `example(cor.test)`: Hollander & Wolfe (1973) p. 187f., "Test of Association",
/// x = Hamilton depression scale factor IV, y = ...; R prints r = 0.5711816,
/// t = 1.8411, df = 7, p-value = 0.1082, 95 % CI −0.1497426 0.8955795;
/// Kendall: T = 26, p-value = 0.1194, tau 0.4444444.
const HOLLANDER_WOLFE_X: [f64; 9] = [44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1];
const HOLLANDER_WOLFE_Y: [f64; 9] = [2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8];

#[test]
fn pearson_matches_r_cor_test_example() {
    let p = pearson(&HOLLANDER_WOLFE_X, &HOLLANDER_WOLFE_Y);
    let p = value(&p);
    close(p.r, 0.5711816, R_PRINTED, "r");
    close(p.ci_low, -0.1497426, R_PRINTED, "ci_low");
    close(p.ci_high, 0.8955795, R_PRINTED, "ci_high");
    close(p.p, 0.1082, HALF_OF_4_DECIMALS, "p");
    assert_eq!(p.n, 9);
}

#[test]
fn kendall_matches_r_cor_test_example_with_exact_p() {
    let k = kendall_tau_b(&HOLLANDER_WOLFE_X, &HOLLANDER_WOLFE_Y);
    let k = value(&k);
    close(k.tau, 0.4444444, R_PRINTED, "tau");
    close(k.p, 0.1194, HALF_OF_4_DECIMALS, "p");
    assert_eq!(k.p_method, PMethod::Exact);
}

/// Shrout & Fleiss (1979), Table 2 data (6 targets × 4 judges) and Table 4 values:
/// ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71, ICC(1,4) .44, ICC(2,4) .62, ICC(3,4) .91.
#[test]
fn icc_matches_shrout_fleiss_table_4() {
    let data = RatingMatrix::from_complete_rows(&[
        vec![9.0, 2.0, 5.0, 8.0],
        vec![6.0, 1.0, 3.0, 2.0],
        vec![8.0, 4.0, 6.0, 8.0],
        vec![7.0, 1.0, 2.0, 6.0],
        vec![10.0, 5.0, 6.0, 9.0],
        vec![6.0, 2.0, 4.0, 7.0],
    ]);
    let result = icc(&data);
    for (estimate, expected, name) in [
        (&result.icc1, 0.17, "ICC1"),
        (&result.icc2, 0.29, "ICC2"),
        (&result.icc3, 0.71, "ICC3"),
        (&result.icc1k, 0.44, "ICC1k"),
        (&result.icc2k, 0.62, "ICC2k"),
        (&result.icc3k, 0.91, "ICC3k"),
    ] {
        let v = value(estimate);
        close(v.value, expected, HALF_OF_2_DECIMALS, name);
        assert!(v.ci_low < v.value && v.value < v.ci_high, "{name} interval");
    }
    assert_eq!(result.n, 6);
    assert_eq!(result.items_dropped, 0);
}

/// Fleiss (1971), psychiatric diagnoses of 30 patients by 6 raters in 5 categories
/// (κ = 0.430; R irr::kappam.fleiss prints 0.4302445). Data as tabulated in statsmodels'
/// test_inter_rater.py (`diagnoses`).
#[test]
fn fleiss_kappa_matches_fleiss_1971() {
    let diagnoses: [[u8; 6]; 30] = [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ];
    let rows: Vec<Vec<f64>> = diagnoses
        .iter()
        .map(|r| r.iter().map(|&v| f64::from(v)).collect())
        .collect();
    let categories = Categories::from_scale(1.0, 5.0, 1.0).expect("valid scale");
    let kappa = fleiss_kappa(&RatingMatrix::from_complete_rows(&rows), &categories);
    close(value(&kappa).value, 0.4302445, R_PRINTED, "Fleiss kappa");
}

/// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section E: 4 observers,
/// 12 units, missing data; α nominal 0.743, ordinal 0.815, interval 0.849.
#[test]
fn krippendorff_alpha_matches_his_worked_example() {
    let m = None;
    let s = |v: f64| Some(v);
    let observers = [
        [
            s(1.),
            s(2.),
            s(3.),
            s(3.),
            s(2.),
            s(1.),
            s(4.),
            s(1.),
            s(2.),
            m,
            m,
            m,
        ],
        [
            s(1.),
            s(2.),
            s(3.),
            s(3.),
            s(2.),
            s(2.),
            s(4.),
            s(1.),
            s(2.),
            s(5.),
            m,
            s(3.),
        ],
        [
            m,
            s(3.),
            s(3.),
            s(3.),
            s(2.),
            s(3.),
            s(4.),
            s(2.),
            s(2.),
            s(5.),
            s(1.),
            m,
        ],
        [
            s(1.),
            s(2.),
            s(3.),
            s(3.),
            s(2.),
            s(4.),
            s(4.),
            s(1.),
            s(2.),
            s(5.),
            s(1.),
            m,
        ],
    ];
    let rows: Vec<Vec<Option<f64>>> = (0..12)
        .map(|unit| observers.iter().map(|o| o[unit]).collect())
        .collect();
    let alpha = krippendorff_alpha(&RatingMatrix::from_rows(&rows));
    close(*value(&alpha.nominal), 0.743, HALF_OF_3_DECIMALS, "nominal");
    close(*value(&alpha.ordinal), 0.815, HALF_OF_3_DECIMALS, "ordinal");
    close(
        *value(&alpha.interval),
        0.849,
        HALF_OF_3_DECIMALS,
        "interval",
    );
    // Unit 12 has a single value and is not pairable.
    assert_eq!(alpha.n, 11);
}

/// SAS PROC FREQ output for the 3 × 3 table [[0,4,1],[0,8,0],[0,1,5]], reproduced in
/// statsmodels' test_inter_rater.py: simple κ 0.4842 (ASE 0.1380, CI 0.2137–0.7547);
/// weighted κ with SAS's default Cicchetti–Allison (= linear) weights 0.4701 (ASE 0.1457,
/// CI 0.1845–0.7558).
#[test]
fn cohen_kappa_matches_sas_printout() {
    let table = [0.0, 4.0, 1.0, 0.0, 8.0, 0.0, 0.0, 1.0, 5.0];
    let kappa = cohen_kappa_from_table(&table, 3);
    let unweighted = value(&kappa.unweighted);
    close(unweighted.value, 0.4842, HALF_OF_4_DECIMALS, "kappa");
    close(unweighted.se, 0.1380, HALF_OF_4_DECIMALS, "ASE");
    close(unweighted.ci_low, 0.2137, HALF_OF_4_DECIMALS, "low");
    close(unweighted.ci_high, 0.7547, HALF_OF_4_DECIMALS, "high");
    let linear = value(&kappa.linear);
    close(linear.value, 0.4701, HALF_OF_4_DECIMALS, "weighted kappa");
    close(linear.se, 0.1457, HALF_OF_4_DECIMALS, "weighted ASE");
    close(linear.ci_low, 0.1845, HALF_OF_4_DECIMALS, "weighted low");
    close(linear.ci_high, 0.7558, HALF_OF_4_DECIMALS, "weighted high");
}

/// Wikipedia, "Cohen's kappa", worked example: 50 applications, both yes 20, A yes/B no 5,
/// A no/B yes 10, both no 15: κ = 0.4.
#[test]
fn cohen_kappa_matches_wikipedia_worked_example() {
    let kappa = cohen_kappa_from_table(&[20.0, 5.0, 10.0, 15.0], 2);
    close(value(&kappa.unweighted).value, 0.4, 1e-12, "kappa");
}

/// Bland & Altman (1986), Lancet i:307–310, Table 1: first peak-flow readings of 17 subjects
/// with the Wright and the mini Wright meter. Mean difference −2.1 l/min, SD 38.8, limits of
/// agreement −79.7 to 75.5. The 1986 paper used bias ± 2 SD; we use the 1.96 of the later
/// papers (Bland & Altman 1999), so the limits are checked both ways: the paper's figures from
/// our bias and SD with its factor 2, and ours against 1.96 × the published SD.
#[test]
fn bland_altman_matches_peak_flow_study() {
    let wright = [
        494.0, 395.0, 516.0, 434.0, 476.0, 557.0, 413.0, 442.0, 650.0, 433.0, 417.0, 656.0, 267.0,
        478.0, 178.0, 423.0, 427.0,
    ];
    let mini_wright = [
        512.0, 430.0, 520.0, 428.0, 500.0, 600.0, 364.0, 380.0, 658.0, 445.0, 432.0, 626.0, 260.0,
        477.0, 259.0, 350.0, 451.0,
    ];
    let ba = bland_altman(&wright, &mini_wright);
    let ba = value(&ba);
    close(ba.bias, -2.1, 0.05, "bias");
    close(ba.sd, 38.8, 0.05, "sd");
    // The paper computed its limits from bias and SD rounded to 0.05 (−2.1 − 2 × 38.8), which
    // moves a limit by up to 0.15.
    close(ba.bias - 2.0 * ba.sd, -79.7, 0.15, "paper's lower limit");
    close(ba.bias + 2.0 * ba.sd, 75.5, 0.15, "paper's upper limit");
    close(ba.loa_low, -2.1 - 1.96 * 38.8, 0.15, "lower limit");
    close(ba.loa_high, -2.1 + 1.96 * 38.8, 0.15, "upper limit");
    assert_eq!(ba.n, 17);
}

/// docs/domain.md (from the Fisher-z interval): at r = 0.90, n = 50 gives about 0.83–0.94 and
/// n = 100 about 0.86–0.93. "About": the n = 100 lower bound is 0.8547, which docs/domain.md rounds
/// up, so these bounds are checked to within 0.01.
#[test]
fn fisher_interval_widths_match_domain_guidance() {
    let (lo, hi) = fisher_interval_at(0.90, 50).expect("defined");
    close(lo, 0.83, DOMAIN_ABOUT, "n=50 low");
    close(hi, 0.94, DOMAIN_ABOUT, "n=50 high");
    let (lo, hi) = fisher_interval_at(0.90, 100).expect("defined");
    close(lo, 0.86, DOMAIN_ABOUT, "n=100 low");
    close(hi, 0.93, DOMAIN_ABOUT, "n=100 high");
}

#[test]
fn degenerate_inputs_are_not_estimable_with_a_reason() {
    let constant = [3.0; 10];
    let varying: Vec<f64> = (0..10).map(f64::from).collect();
    assert!(pearson(&constant, &varying)
        .reason()
        .is_some_and(|r| r.contains("zero variance")));
    assert!(pearson(&[1.0, 2.0], &[1.0, 2.0])
        .reason()
        .is_some_and(|r| r.contains("at least 4")));
    assert!(pearson(&[1.0, f64::NAN, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0])
        .reason()
        .is_some());
    let json = serde_json::to_value(pearson(&constant, &varying)).expect("serialises");
    assert_eq!(json["n"], 10);
    assert!(json["not_estimable"].is_string());
    assert!(json.get("r").is_none());
}
