//! Proportions: Wilson intervals and the unbiased pass@k estimator.

use crate::dist;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proportion {
    pub count: usize,
    pub n: usize,
    pub share: f64,
    /// Wilson score interval, 95 %.
    pub ci_low: f64,
    pub ci_high: f64,
}

/// `count` of `n` with its 95 % Wilson score interval; `None` when n is 0.
pub fn wilson(count: usize, n: usize) -> Option<Proportion> {
    if n == 0 || count > n {
        return None;
    }
    let p = count as f64 / n as f64;
    let (ci_low, ci_high) = wilson_interval(p, n as f64);
    Some(Proportion {
        count,
        n,
        share: p,
        ci_low,
        ci_high,
    })
}

/// The 95 % Wilson score interval of a share `p` over `n` independent units (n may be an
/// effective, fractional number). It uses the variance p(1 − p)/n, the largest a mean of values
/// in [0, 1] can have, and never has zero width.
pub fn wilson_interval(p: f64, n: f64) -> (f64, f64) {
    let z = dist::z_975();
    let denominator = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The unbiased pass@k of Chen et al. (2021): 1 − C(n−c, k)/C(n, k) for n samples of which c are
/// correct; `None` when n < k or c > n.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    // C(n−c, k)/C(n, k) = Π_{i=n−c+1..=n} (1 − k/i), the numerically stable product form.
    let ratio: f64 = ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product();
    Some(1.0 - ratio)
}
