//! Quantiles and tail probabilities from statrs, with the degenerate cases made explicit.
//!
//! statrs constructors reject invalid parameters; callers here only pass degrees of freedom they
//! have already checked, and a rejected one becomes `None` rather than a panic.

use statrs::distribution::{ChiSquared, ContinuousCDF, FisherSnedecor, Normal, StudentsT};

/// The two-sided 95 % normal quantile used throughout (z_{0.975}).
pub fn z_975() -> f64 {
    normal_quantile(0.975)
}

pub fn normal_quantile(p: f64) -> f64 {
    // Standard normal parameters are always valid.
    Normal::new(0.0, 1.0)
        .map(|n| n.inverse_cdf(p))
        .unwrap_or(f64::NAN)
}

pub fn normal_cdf(x: f64) -> f64 {
    Normal::new(0.0, 1.0).map(|n| n.cdf(x)).unwrap_or(f64::NAN)
}

/// Two-sided p of a standard normal statistic.
pub fn normal_two_sided_p(z: f64) -> f64 {
    if z.is_infinite() {
        return 0.0;
    }
    2.0 * Normal::new(0.0, 1.0)
        .map(|n| n.sf(z.abs()))
        .unwrap_or(f64::NAN)
}

/// Two-sided p of a t statistic with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> Option<f64> {
    if t.is_infinite() {
        return Some(0.0);
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * dist.sf(t.abs())).min(1.0))
}

/// P(T ≤ t) for a t statistic with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> Option<f64> {
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(dist.cdf(t))
}

pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(dist.inverse_cdf(p))
}

pub fn f_quantile(p: f64, df1: f64, df2: f64) -> Option<f64> {
    let dist = FisherSnedecor::new(df1, df2).ok()?;
    let q = dist.inverse_cdf(p);
    q.is_finite().then_some(q)
}

pub fn chi_squared_quantile(p: f64, df: f64) -> Option<f64> {
    let dist = ChiSquared::new(df).ok()?;
    let q = dist.inverse_cdf(p);
    q.is_finite().then_some(q)
}
