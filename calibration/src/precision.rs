//! How precise a correlation is at a given n, and the n needed for a target lower bound.

use crate::dist;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrecisionGuidance {
    pub r: f64,
    pub n: usize,
    pub ci_low: f64,
    pub ci_high: f64,
    pub ci_width: f64,
    /// The lower bound the study wants to be able to claim (the bar).
    pub target_lower_bound: f64,
    /// Items needed for the 95 % Fisher-z lower bound to reach the target if r stays as observed;
    /// absent when r does not exceed the target (no n suffices).
    pub n_needed: Option<usize>,
}

/// The 95 % Fisher-z interval of r at n items (n ≥ 4).
pub fn fisher_interval_at(r: f64, n: usize) -> Option<(f64, f64)> {
    if n < 4 || !r.is_finite() || r.abs() >= 1.0 {
        return None;
    }
    let half = dist::z_975() / ((n - 3) as f64).sqrt();
    Some(((r.atanh() - half).tanh(), (r.atanh() + half).tanh()))
}

/// Smallest n whose 95 % Fisher-z lower bound of `r` reaches `target`:
/// n = 3 + (z₀.₉₇₅ / (atanh r − atanh target))², rounded up.
pub fn n_for_lower_bound(r: f64, target: f64) -> Option<usize> {
    if !(r.is_finite() && target.is_finite()) || r.abs() >= 1.0 || target.abs() >= 1.0 {
        return None;
    }
    let gap = r.atanh() - target.atanh();
    if gap <= 0.0 {
        return None;
    }
    Some((3.0 + (dist::z_975() / gap).powi(2)).ceil() as usize)
}

pub fn precision_guidance(r: f64, n: usize, target_lower_bound: f64) -> Option<PrecisionGuidance> {
    let (ci_low, ci_high) = fisher_interval_at(r, n)?;
    Some(PrecisionGuidance {
        r,
        n,
        ci_low,
        ci_high,
        ci_width: ci_high - ci_low,
        target_lower_bound,
        n_needed: n_for_lower_bound(r, target_lower_bound),
    })
}
