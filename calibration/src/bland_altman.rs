//! Bland–Altman agreement: mean difference and 95 % limits of agreement, with their intervals.
//!
//! One pair per case: Bland & Altman 1986; 1999 §4 (SE of a limit ≈ sqrt(3 s²/n), t quantile
//! with n − 1 df). Several pairs per case (the items of a case share images and difficulty, so
//! their differences are correlated): Zou (2013, Stat. Methods Med. Res. 22(6):630–642), the
//! one-way random-effects model of the differences with unequal numbers per case; the limits
//! are d̄ ± z·√(s²_B + (1 − 1/m_h)·s²_W), d̄ the mean of the case means, s²_B their variance,
//! s²_W the pooled within-case variance, m_h the harmonic mean of the pairs per case; the
//! limits' intervals by MOVER, from the t interval of d̄ (n_cases − 1 df) and the MOVER
//! interval of the total variance (χ² limits of each mean square). Until 2026-11-29 the pairs
//! of a case were counted as independent, and the limits' intervals were too narrow.

use crate::dist;
use crate::estimate::Estimate;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlandAltman {
    /// Mean of `a − b` (positive: `a` scores higher, e.g. a lenient grader).
    pub bias: f64,
    /// Standard deviation of the differences (n − 1 denominator).
    pub sd: f64,
    pub loa_low: f64,
    pub loa_high: f64,
    pub bias_ci_low: f64,
    pub bias_ci_high: f64,
    pub loa_low_ci_low: f64,
    pub loa_low_ci_high: f64,
    pub loa_high_ci_low: f64,
    pub loa_high_ci_high: f64,
    pub n: usize,
    /// Cases the pairs come from (`n` when each case holds one pair or cases are not given).
    pub n_cases: usize,
    /// How the limits and intervals were computed, in words.
    pub method: String,
}

const INDEPENDENT_PAIRS: &str = "Bland & Altman (1999): pairs independent, t intervals";

/// Limits of agreement of `a − b`. Needs n ≥ 3.
pub fn bland_altman(a: &[f64], b: &[f64]) -> Estimate<BlandAltman> {
    let n = a.len().min(b.len());
    if a.len() != b.len() {
        return Estimate::not_estimable(n, "paired series differ in length");
    }
    if n < 3 {
        return Estimate::not_estimable(n, format!("needs at least 3 paired items, has {n}"));
    }
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    if differences.iter().any(|d| !d.is_finite()) {
        return Estimate::not_estimable(n, "a score is not a finite number");
    }
    let nf = n as f64;
    let bias = differences.iter().sum::<f64>() / nf;
    let variance = differences.iter().map(|d| (d - bias).powi(2)).sum::<f64>() / (nf - 1.0);
    Estimate::Value(from_moments(n, bias, variance))
}

/// The limits and intervals from the mean and variance of the differences; the bootstrap and
/// the direct computation share it.
pub(crate) fn from_moments(n: usize, bias: f64, variance: f64) -> BlandAltman {
    let nf = n as f64;
    let sd = variance.max(0.0).sqrt();
    let z = dist::z_975();
    let t = dist::t_quantile(0.975, nf - 1.0).unwrap_or(z);
    let bias_half = t * sd / nf.sqrt();
    let loa_half = t * (3.0 * sd * sd / nf).sqrt();
    limits(
        bias,
        sd,
        HalfWidths {
            bias: bias_half,
            outward: loa_half,
            inward: loa_half,
        },
        (n, n),
        INDEPENDENT_PAIRS.into(),
    )
}

/// How far the intervals reach: the bias's either side, and each limit's away from the bias
/// (`outward`) and towards it (`inward`; the two differ in Zou's MOVER intervals).
struct HalfWidths {
    bias: f64,
    outward: f64,
    inward: f64,
}

/// The limits `bias ± 1.96 sd` and their intervals; `(n, n_cases)` are the pairs and the cases.
fn limits(
    bias: f64,
    sd: f64,
    half: HalfWidths,
    (n, n_cases): (usize, usize),
    method: String,
) -> BlandAltman {
    let z = dist::z_975();
    let (loa_low, loa_high) = (bias - z * sd, bias + z * sd);
    BlandAltman {
        bias,
        sd,
        loa_low,
        loa_high,
        bias_ci_low: bias - half.bias,
        bias_ci_high: bias + half.bias,
        loa_low_ci_low: loa_low - half.outward,
        loa_low_ci_high: loa_low + half.inward,
        loa_high_ci_low: loa_high - half.inward,
        loa_high_ci_high: loa_high + half.outward,
        n,
        n_cases,
        method,
    }
}

/// Limits of agreement of `a − b` whose pairs come from `cases` (one entry per pair): Zou's
/// method when some case holds several pairs, else [`bland_altman`]. Needs 3 cases.
pub fn bland_altman_by_case(a: &[f64], b: &[f64], cases: &[&str]) -> Estimate<BlandAltman> {
    let n = a.len().min(b.len());
    if a.len() != b.len() || cases.len() != n {
        return Estimate::not_estimable(n, "paired series differ in length");
    }
    let mut by_case: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for ((x, y), case) in a.iter().zip(b).zip(cases) {
        by_case.entry(case).or_default().push(x - y);
    }
    if by_case.values().all(|d| d.len() == 1) {
        return bland_altman(a, b);
    }
    let n_cases = by_case.len();
    if n_cases < 3 {
        return Estimate::not_estimable(
            n,
            format!("needs pairs from at least 3 cases, has {n_cases}"),
        );
    }
    if by_case.values().flatten().any(|d| !d.is_finite()) {
        return Estimate::not_estimable(n, "a score is not a finite number");
    }
    let (cases_f, pairs_f) = (n_cases as f64, n as f64);
    let means: Vec<f64> = by_case
        .values()
        .map(|d| d.iter().sum::<f64>() / d.len() as f64)
        .collect();
    let bias = means.iter().sum::<f64>() / cases_f;
    let between = means.iter().map(|m| (m - bias).powi(2)).sum::<f64>() / (cases_f - 1.0);
    let within = by_case
        .values()
        .zip(&means)
        .map(|(d, m)| d.iter().map(|x| (x - m).powi(2)).sum::<f64>())
        .sum::<f64>()
        / (pairs_f - cases_f);
    let harmonic = cases_f / by_case.values().map(|d| 1.0 / d.len() as f64).sum::<f64>();
    let within_share = (1.0 - 1.0 / harmonic) * within;
    let total = between + within_share;
    let (df_between, df_within) = (cases_f - 1.0, pairs_f - cases_f);
    let quantiles = (
        dist::t_quantile(0.975, df_between),
        dist::chi_squared_quantile(0.975, df_between),
        dist::chi_squared_quantile(0.025, df_between),
        dist::chi_squared_quantile(0.975, df_within),
        dist::chi_squared_quantile(0.025, df_within),
    );
    let (Some(t), Some(b_hi), Some(b_lo), Some(w_hi), Some(w_lo)) = quantiles else {
        return Estimate::not_estimable(n, "no χ² or t quantile for these degrees of freedom");
    };
    // MOVER interval of the total variance, from each mean square's χ² interval.
    let total_low = total
        - ((between * (1.0 - df_between / b_hi)).powi(2)
            + (within_share * (1.0 - df_within / w_hi)).powi(2))
        .sqrt();
    let total_high = total
        + ((between * (df_between / b_lo - 1.0)).powi(2)
            + (within_share * (df_within / w_lo - 1.0)).powi(2))
        .sqrt();
    let z = dist::z_975();
    let sd = total.max(0.0).sqrt();
    let bias_half = t * (between / cases_f).sqrt();
    // MOVER for bias ± z·sd: the bias's half-width beside z times the sd's distance to its
    // limit on the side that moves the limit outward (wider) or inward (narrower).
    let outward = (bias_half.powi(2) + (z * (total_high.sqrt() - sd)).powi(2)).sqrt();
    let inward = (bias_half.powi(2) + (z * (sd - total_low.max(0.0).sqrt())).powi(2)).sqrt();
    Estimate::Value(limits(
        bias,
        sd,
        HalfWidths {
            bias: bias_half,
            outward,
            inward,
        },
        (n, n_cases),
        format!("Zou (2013): {n} pairs in {n_cases} cases, MOVER intervals"),
    ))
}
