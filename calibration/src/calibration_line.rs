//! Calibration, not only association: the line grader = a + b · reference, and proportional bias.
//!
//! A grader scoring 2 × human − 3 correlates perfectly (r = 1) yet is not calibrated: the
//! calibration slope b = 2 and intercept a = −3 say so. Ordinary least squares of the grader on
//! the reference (the clinicians' mean), with Student-t intervals on n − 2 degrees of freedom
//! (as `scipy.stats.linregress` reports them).
//!
//! Proportional bias, Bland–Altman style: the difference (grader − reference) regressed on the
//! pair's mean; a slope different from 0 (t test, n − 2 df) means the grader's disagreement grows
//! or shrinks along the scale, which a single bias figure hides.

use crate::dist;
use crate::estimate::Estimate;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationLine {
    /// b in grader = a + b · reference (1 for a calibrated grader).
    pub slope: f64,
    pub slope_se: f64,
    pub slope_ci_low: f64,
    pub slope_ci_high: f64,
    /// a in grader = a + b · reference (0 for a calibrated grader).
    pub intercept: f64,
    pub intercept_se: f64,
    pub intercept_ci_low: f64,
    pub intercept_ci_high: f64,
    pub n: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProportionalBias {
    /// Slope of (grader − reference) on (grader + reference) / 2.
    pub slope: f64,
    pub intercept: f64,
    /// Two-sided p of slope = 0.
    pub p: f64,
    pub n: usize,
}

/// Least squares of y on x: (slope, intercept, residual sum of squares, Sxx, mean x).
fn least_squares(x: &[f64], y: &[f64]) -> Option<(f64, f64, f64, f64, f64)> {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let residual = (syy - slope * sxy).max(0.0);
    Some((slope, my - slope * mx, residual, sxx, mx))
}

fn check(grader: &[f64], reference: &[f64]) -> Result<usize, String> {
    let n = grader.len();
    if n != reference.len() {
        return Err("the two series differ in length".into());
    }
    if n < 3 {
        return Err(format!("needs at least 3 paired items, has {n}"));
    }
    if grader.iter().chain(reference).any(|v| !v.is_finite()) {
        return Err("a score is not a finite number".into());
    }
    Ok(n)
}

/// grader = a + b · reference by least squares. Needs n ≥ 3 and a reference that varies.
pub fn calibration_line(grader: &[f64], reference: &[f64]) -> Estimate<CalibrationLine> {
    let n = match check(grader, reference) {
        Ok(n) => n,
        Err(reason) => return Estimate::not_estimable(grader.len(), reason),
    };
    let Some((slope, intercept, residual, sxx, mean_x)) = least_squares(reference, grader) else {
        return Estimate::not_estimable(n, "the clinicians' mean does not vary");
    };
    let df = (n - 2) as f64;
    let s2 = residual / df;
    let slope_se = (s2 / sxx).sqrt();
    let intercept_se = (s2 * (1.0 / n as f64 + mean_x * mean_x / sxx)).sqrt();
    let t = dist::t_quantile(0.975, df).unwrap_or(f64::NAN);
    Estimate::Value(CalibrationLine {
        slope,
        slope_se,
        slope_ci_low: slope - t * slope_se,
        slope_ci_high: slope + t * slope_se,
        intercept,
        intercept_se,
        intercept_ci_low: intercept - t * intercept_se,
        intercept_ci_high: intercept + t * intercept_se,
        n,
    })
}

/// (grader − reference) on their mean by least squares, with the t test of the slope.
pub fn proportional_bias(grader: &[f64], reference: &[f64]) -> Estimate<ProportionalBias> {
    let n = match check(grader, reference) {
        Ok(n) => n,
        Err(reason) => return Estimate::not_estimable(grader.len(), reason),
    };
    let difference: Vec<f64> = grader.iter().zip(reference).map(|(g, r)| g - r).collect();
    let average: Vec<f64> = grader
        .iter()
        .zip(reference)
        .map(|(g, r)| (g + r) / 2.0)
        .collect();
    let Some((slope, intercept, residual, sxx, _)) = least_squares(&average, &difference) else {
        return Estimate::not_estimable(n, "the pairs' means do not vary");
    };
    let df = (n - 2) as f64;
    let se = (residual / df / sxx).sqrt();
    let p = if se > 0.0 {
        dist::t_two_sided_p(slope / se, df).unwrap_or(f64::NAN)
    } else if slope == 0.0 {
        1.0
    } else {
        0.0
    };
    Estimate::Value(ProportionalBias {
        slope,
        intercept,
        p,
        n,
    })
}

/// The same two slopes and the intercept from centred pair sums (n, Σx, Σy, Σx², Σy², Σxy with
/// x the grader, y the reference, both centred by `shift` = (x̄₀, ȳ₀)), for the case bootstrap:
/// (calibration slope, calibration intercept, proportional-bias slope).
pub fn from_sums(s: &[f64], shift: (f64, f64)) -> [Option<f64>; 3] {
    let n = s[0];
    if n < 3.0 {
        return [None; 3];
    }
    let (mx, my) = (s[1] / n, s[2] / n);
    let sxx = s[3] - n * mx * mx;
    let syy = s[4] - n * my * my;
    let sxy = s[5] - n * mx * my;
    let line = (syy > 0.0).then(|| {
        let slope = sxy / syy;
        (slope, (mx + shift.0) - slope * (my + shift.1))
    });
    // cov(x − y, (x + y)/2) = (Sxx − Syy)/2; var((x + y)/2) = (Sxx + Syy + 2 Sxy)/4.
    let spread = sxx + syy + 2.0 * sxy;
    let proportional = (spread > 0.0).then(|| 2.0 * (sxx - syy) / spread);
    [line.map(|l| l.0), line.map(|l| l.1), proportional]
}
