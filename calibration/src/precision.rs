//! How precise a correlation is at a given n, and the sample the next study needs: as power
//! (80 % chance that its 95 % lower bound clears the bar if r is truly as observed), counted in
//! cases when items of a case share their errors.

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
    /// Items at which the 95 % Fisher-z lower bound reaches the target if r stays exactly as
    /// observed: only about a 50 % chance of clearing it in a new study (see `n_for_power`);
    /// absent when r does not exceed the target (no n suffices).
    pub n_needed: Option<usize>,
    /// The power `n_for_power` and `cases_for_power` aim at (0.80).
    pub power: f64,
    /// Independent items for an 80 % chance that the 95 % lower bound clears the target if r is
    /// truly as observed: 3 + ((z₀.₉₇₅ + z₀.₈₀) / (atanh r − atanh target))².
    pub n_for_power: Option<usize>,
    /// Variance of atanh r under the case bootstrap over its independent-items value 1/(n − 3),
    /// at least 1 (what clustering costs); `None` without a case-bootstrap interval.
    pub design_effect: Option<f64>,
    pub items_per_case: Option<f64>,
    /// Cases (at this study's items per case) for 80 % power:
    /// ⌈n_for_power × design_effect / items_per_case⌉.
    pub cases_for_power: Option<usize>,
}

/// The power sample sizes aim at.
pub const TARGET_POWER: f64 = 0.80;

/// How items cluster in cases, as the case bootstrap saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clustering {
    /// The case bootstrap's 95 % percentile interval of r.
    pub bootstrap_low: f64,
    pub bootstrap_high: f64,
    pub cases: usize,
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

/// Smallest n of independent items with probability `power` that the 95 % Fisher-z lower bound
/// exceeds `target` when the true correlation is `r`:
/// n = 3 + ((z₀.₉₇₅ + z_power) / (atanh r − atanh target))², rounded up.
pub fn n_for_power(r: f64, target: f64, power: f64) -> Option<usize> {
    if !(r.is_finite() && target.is_finite()) || r.abs() >= 1.0 || target.abs() >= 1.0 {
        return None;
    }
    let gap = r.atanh() - target.atanh();
    if gap <= 0.0 || !(power > 0.0 && power < 1.0) {
        return None;
    }
    let z = dist::z_975() + dist::normal_quantile(power);
    Some((3.0 + (z / gap).powi(2)).ceil() as usize)
}

/// Variance of atanh r under the case bootstrap (from its 95 % interval, as a normal one) over
/// 1/(n − 3), floored at 1.
pub fn design_effect(n: usize, clustering: &Clustering) -> Option<f64> {
    let clamp = |v: f64| v.clamp(-1.0 + 1e-12, 1.0 - 1e-12).atanh();
    let se = (clamp(clustering.bootstrap_high) - clamp(clustering.bootstrap_low))
        / (2.0 * dist::z_975());
    (n > 3 && se.is_finite() && se > 0.0).then(|| (se * se * (n - 3) as f64).max(1.0))
}

pub fn precision_guidance(
    r: f64,
    n: usize,
    target_lower_bound: f64,
    clustering: Option<&Clustering>,
) -> Option<PrecisionGuidance> {
    let (ci_low, ci_high) = fisher_interval_at(r, n)?;
    let n_for_power = n_for_power(r, target_lower_bound, TARGET_POWER);
    let design_effect = clustering.and_then(|c| design_effect(n, c));
    let items_per_case = clustering
        .filter(|c| c.cases > 0)
        .map(|c| n as f64 / c.cases as f64);
    let cases_for_power = match (n_for_power, design_effect, items_per_case) {
        (Some(items), Some(effect), Some(per_case)) => {
            Some((items as f64 * effect / per_case).ceil() as usize)
        }
        _ => None,
    };
    Some(PrecisionGuidance {
        r,
        n,
        ci_low,
        ci_high,
        ci_width: ci_high - ci_low,
        target_lower_bound,
        n_needed: n_for_lower_bound(r, target_lower_bound),
        power: TARGET_POWER,
        n_for_power,
        design_effect,
        items_per_case,
        cases_for_power,
    })
}
