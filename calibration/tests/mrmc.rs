//! The MRMC machinery (`calibration::mrmc`) against RJafroc's stored output on two published
//! data sets (`data/mrmc_reference.json`, made by `scripts/reference/calibration/rjafroc_to_json.R`;
//! provenance in `data/README.md`): the Obuchowski–Rockette analysis with Hillis's ddf of the
//! Van Dyke 1993 data, and the single-treatment CAD-vs-radiologists analysis (1T-RRRC) of the
//! Hupse 2013 data. The figure of merit, the Wilcoxon (trapezoidal) AUC, and its delete-one-case
//! jackknife are computed here, independently of the crate.

mod common;

use calibration::mrmc::{fixed_reader_vs_random_readers, obuchowski_rockette};
use common::*;
use serde_json::Value;

/// RJafroc's values are stored in double precision; the arithmetic differs in summation order.
const RJAFROC_STORED: f64 = 1e-10;

fn reference() -> Value {
    serde_json::from_str(include_str!("data/mrmc_reference.json"))
        .expect("mrmc_reference.json is valid JSON")
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

/// The Wilcoxon AUC of one reader's ratings over the cases `keep` allows: P(abnormal rated
/// higher than normal), ties counting one half.
fn wilcoxon(ratings: &[f64], truth: &[bool], keep: impl Fn(usize) -> bool) -> f64 {
    let normal: Vec<f64> = (0..ratings.len())
        .filter(|&k| keep(k) && !truth[k])
        .map(|k| ratings[k])
        .collect();
    let abnormal: Vec<f64> = (0..ratings.len())
        .filter(|&k| keep(k) && truth[k])
        .map(|k| ratings[k])
        .collect();
    let mut wins = 0.0;
    for a in &abnormal {
        for n in &normal {
            wins += if a > n {
                1.0
            } else if a == n {
                0.5
            } else {
                0.0
            };
        }
    }
    wins / (normal.len() * abnormal.len()) as f64
}

/// The AUC on all cases and with each case left out in turn.
fn auc_and_jackknife(ratings: &[f64], truth: &[bool]) -> (f64, Vec<f64>) {
    let full = wilcoxon(ratings, truth, |_| true);
    let jackknife = (0..ratings.len())
        .map(|left_out| wilcoxon(ratings, truth, |k| k != left_out))
        .collect();
    (full, jackknife)
}

fn truth(v: &Value) -> Vec<bool> {
    numbers(v).iter().map(|&t| t == 1.0).collect()
}

#[test]
fn van_dyke_obuchowski_rockette_matches_rjafroc() {
    let data = &reference()["van_dyke"];
    let truth = truth(&data["truth"]);
    let mut foms = Vec::new();
    let mut jackknife = Vec::new();
    for treatment in data["ratings"].as_array().expect("treatments") {
        let (t_foms, t_jack): (Vec<f64>, Vec<Vec<f64>>) = treatment
            .as_array()
            .expect("readers")
            .iter()
            .map(|reader| auc_and_jackknife(&numbers(reader), &truth))
            .unzip();
        foms.push(t_foms);
        jackknife.push(t_jack);
    }
    let expected = &data["expected"];
    for (i, row) in expected["foms"]
        .as_array()
        .expect("foms")
        .iter()
        .enumerate()
    {
        for (j, e) in numbers(row).iter().enumerate() {
            close(foms[i][j], *e, RJAFROC_STORED, &format!("AUC[{i}][{j}]"));
        }
    }

    let or = obuchowski_rockette(&foms, &jackknife).expect("estimable");
    for (got, key) in [
        (or.var, "var"),
        (or.cov1, "cov1"),
        (or.cov2, "cov2"),
        (or.cov3, "cov3"),
        (or.var_r, "var_r"),
        (or.var_tr, "var_tr"),
        (or.ms_t, "ms_t"),
        (or.ms_tr, "ms_tr"),
        (or.f, "f"),
        (or.ddf, "ddf"),
    ] {
        close_relative(got, f(&expected[key]), 1e-9, key);
    }
    close(or.ndf, 1.0, 0.0, "ndf");
    close(or.p, f(&expected["p"]), DISTRIBUTION, "p");
    let [d] = or.differences.as_slice() else {
        panic!("two treatments make one difference")
    };
    close(
        d.estimate,
        f(&expected["difference"]),
        RJAFROC_STORED,
        "difference",
    );
    close(
        d.std_err,
        f(&expected["std_err"]),
        RJAFROC_STORED,
        "std_err",
    );
    close(d.low, f(&expected["ci_low"]), DISTRIBUTION, "ci_low");
    close(d.high, f(&expected["ci_high"]), DISTRIBUTION, "ci_high");
    close(d.p, f(&expected["p"]), DISTRIBUTION, "t test p = F test p");
}

#[test]
fn cad_vs_radiologists_single_treatment_matches_rjafroc() {
    let data = &reference()["cad_vs_radiologists"];
    let truth = truth(&data["truth"]);
    let (cad, cad_jack) = auc_and_jackknife(&numbers(&data["cad"]), &truth);
    let expected = &data["expected"];
    close(cad, f(&expected["fom_cad"]), RJAFROC_STORED, "CAD AUC");

    // RJafroc's ψ is radiologist − CAD.
    let mut psi = Vec::new();
    let mut psi_jack = Vec::new();
    let fom_rad = numbers(&expected["fom_rad"]);
    for (j, reader) in data["radiologists"]
        .as_array()
        .expect("readers")
        .iter()
        .enumerate()
    {
        let (rad, rad_jack) = auc_and_jackknife(&numbers(reader), &truth);
        close(
            rad,
            fom_rad[j],
            RJAFROC_STORED,
            &format!("radiologist {j} AUC"),
        );
        psi.push(rad - cad);
        psi_jack.push(rad_jack.iter().zip(&cad_jack).map(|(r, c)| r - c).collect());
    }

    let single = fixed_reader_vs_random_readers(&psi, &psi_jack).expect("estimable");
    assert_eq!((single.n_readers, single.n_cases), (9, 200));
    close(
        single.estimate,
        f(&expected["avg_diff_rad_minus_cad"]),
        RJAFROC_STORED,
        "mean ψ",
    );
    close_relative(single.var, f(&expected["var_error"]), 1e-9, "var");
    close_relative(single.cov2, f(&expected["cov2"]), 1e-9, "cov2");
    close_relative(single.df, f(&expected["df"]), 1e-9, "df");
    close_relative(single.t, f(&expected["t"]), 1e-9, "t");
    close(single.p, f(&expected["p"]), DISTRIBUTION, "p");
    close(single.low, f(&expected["ci_low"]), DISTRIBUTION, "ci_low");
    close(
        single.high,
        f(&expected["ci_high"]),
        DISTRIBUTION,
        "ci_high",
    );
    let var_r = fom_rad
        .iter()
        .map(|x| (x - single.estimate - cad).powi(2))
        .sum::<f64>()
        / 8.0;
    close_relative(
        var_r,
        f(&expected["var_r"]),
        1e-9,
        "the radiologists' FOM variance (input check)",
    );
}
