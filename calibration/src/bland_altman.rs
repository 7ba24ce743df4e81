//! Bland–Altman agreement: mean difference and 95 % limits of agreement, with their intervals
//! (Bland & Altman 1986; 1999 §4: SE of a limit ≈ sqrt(3 s²/n), t quantile with n − 1 df).

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
}

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
    let (loa_low, loa_high) = (bias - z * sd, bias + z * sd);
    BlandAltman {
        bias,
        sd,
        loa_low,
        loa_high,
        bias_ci_low: bias - bias_half,
        bias_ci_high: bias + bias_half,
        loa_low_ci_low: loa_low - loa_half,
        loa_low_ci_high: loa_low + loa_half,
        loa_high_ci_low: loa_high - loa_half,
        loa_high_ci_high: loa_high + loa_half,
        n,
    }
}
