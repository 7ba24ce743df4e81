//! The verdict's interval for a correlation: the delete-one-case jackknife on Fisher's z, with
//! Student's t on (cases − 1) degrees of freedom.
//!
//! Why this and not the case bootstrap's BCa interval: with few cases the bootstrap covers less
//! than it says. Simulated on clustered data (`benches/verdict_coverage.rs`, 2,000 studies per
//! design, docs/calibration.md), BCa covered 91.6–94.5 % and the true r fell below it 3.4–5.2 %
//! of the time against 2.5 % nominal; this interval covered 94.1–95.1 %, the true r below it
//! 3.0–3.8 %. The verdict's claim is the lower end ("r ≥ 0.90 even at the lower end"), so that
//! end matters most: closer to nominal here, though still a little optimistic.
//!
//! Method, each part standard:
//! - Delete-a-group jackknife variance (Quenouille 1956; Tukey 1958; for clusters, Wolter 2007,
//!   *Introduction to Variance Estimation*, 2nd ed., §4.5; Kott 2001, "The delete-a-group
//!   jackknife", J. Official Statistics 17:521–526): leave one case out with all its items,
//!   recompute, v = (G − 1)/G · Σ (θ₍₋g₎ − θ̄)². Leaving whole cases out keeps the dependence of a
//!   case's items inside each replicate, as the case bootstrap does.
//! - On Fisher's z = atanh(r), where the jackknife works far better than on r itself (Efron &
//!   Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 11 and §12.6: the transform makes
//!   the correlation's distribution nearly normal and its variance nearly constant).
//! - Tukey's interval (1958): centred on the mean of the pseudo-values, z̃ = G·z − (G − 1)·z̄ (the
//!   jackknife's bias-corrected z; Quenouille's correction), z̃ ± t₀.₉₇₅,G−1 · √v, mapped back
//!   with tanh. t on G − 1 degrees of freedom is the reference distribution for a variance
//!   estimated from G clusters (Cameron & Miller 2015, "A practitioner's guide to cluster-robust
//!   inference", J. Human Resources 50:317–372, §VI). The bias correction matters here: z is
//!   biased upward in small samples, and centred on the uncorrected z the interval's lower end
//!   missed the true r 3.4–5.0 % of the time in the simulation above, against 3.0–3.8 % centred
//!   on z̃. The verdict still compares the uncorrected r with the bar; only the interval moves.
//!
//! Computed from the same additive per-case sums as the bootstrap (see [`crate::bootstrap`]):
//! the full sums minus one case's sums are the sums without that case, so the jackknife costs
//! one statistic per case.

use crate::dist;
use serde::Serialize;

/// A 95 % interval of a correlation from the delete-one-case jackknife on Fisher's z.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FisherJackknife {
    /// The correlation on all cases.
    pub estimate: f64,
    /// The bias-corrected correlation the interval is centred on: tanh of the pseudo-values'
    /// mean on Fisher's z.
    pub bias_corrected: f64,
    pub low: f64,
    pub high: f64,
    /// The jackknife standard error of Fisher's z.
    pub standard_error_z: f64,
    /// Cases − 1: the degrees of freedom of the t quantile.
    pub degrees_of_freedom: usize,
    /// Cases left out in turn.
    pub cases: usize,
}

impl FisherJackknife {
    /// The method as the report names it, e.g. `delete-one-case jackknife on Fisher's z, t(11)`.
    pub fn method(&self) -> String {
        format!(
            "delete-one-case jackknife on Fisher's z, t({})",
            self.degrees_of_freedom
        )
    }
}

/// The jackknife interval of `correlation` (computed from summed per-case sums, `None` where
/// undefined) over `case_sums`. `Err` says in words why there is none: fewer than three cases,
/// or a correlation undefined or of ±1 on all cases or without some case (Fisher's z is then
/// infinite or undefined).
pub fn case_jackknife_fisher<F>(
    case_sums: &[Vec<f64>],
    correlation: F,
) -> Result<FisherJackknife, String>
where
    F: Fn(&[f64]) -> Option<f64>,
{
    let cases = case_sums.len();
    if cases < 3 {
        return Err(format!(
            "needs at least 3 cases to leave one out (has {cases})"
        ));
    }
    let width = case_sums[0].len();
    let mut full = vec![0.0; width];
    for case in case_sums {
        for (total, value) in full.iter_mut().zip(case) {
            *total += value;
        }
    }
    let fisher_z = |r: Option<f64>| r.filter(|r| r.abs() < 1.0).map(f64::atanh);
    let estimate = correlation(&full)
        .filter(|r| r.is_finite())
        .ok_or("the correlation is undefined on all cases")?;
    let z = fisher_z(Some(estimate)).ok_or("the correlation is ±1 on all cases")?;
    let mut without = vec![0.0; width];
    let mut replicates = Vec::with_capacity(cases);
    for case in case_sums {
        for ((rest, total), value) in without.iter_mut().zip(&full).zip(case) {
            *rest = total - value;
        }
        replicates.push(
            fisher_z(correlation(&without))
                .ok_or("the correlation is undefined or ±1 once some case is left out")?,
        );
    }
    let g = cases as f64;
    let mean = replicates.iter().sum::<f64>() / g;
    let variance = (g - 1.0) / g * replicates.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
    let standard_error_z = variance.sqrt();
    let t = dist::t_quantile(0.975, g - 1.0)
        .filter(|t| t.is_finite())
        .ok_or("no t quantile")?;
    let centre = g * z - (g - 1.0) * mean;
    Ok(FisherJackknife {
        estimate,
        bias_corrected: centre.tanh(),
        low: (centre - t * standard_error_z).tanh(),
        high: (centre + t * standard_error_z).tanh(),
        standard_error_z,
        degrees_of_freedom: cases - 1,
        cases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per case: n, Σx, Σy, Σx², Σy², Σxy of its (x, y) pairs.
    fn sums(pairs: &[(f64, f64)]) -> Vec<f64> {
        pairs.iter().fold(vec![0.0; 6], |mut s, &(x, y)| {
            for (t, v) in s.iter_mut().zip([1.0, x, y, x * x, y * y, x * y]) {
                *t += v;
            }
            s
        })
    }

    fn r(s: &[f64]) -> Option<f64> {
        let n = s[0];
        let (xx, yy, xy) = (
            s[3] - s[1] * s[1] / n,
            s[4] - s[2] * s[2] / n,
            s[5] - s[1] * s[2] / n,
        );
        (xx > 0.0 && yy > 0.0).then(|| xy / (xx * yy).sqrt())
    }

    #[test]
    fn too_few_cases_or_a_perfect_correlation_give_a_reason_not_an_interval() {
        let two = vec![
            sums(&[(1.0, 1.0), (2.0, 3.0)]),
            sums(&[(3.0, 2.0), (4.0, 4.0)]),
        ];
        assert!(case_jackknife_fisher(&two, r)
            .unwrap_err()
            .contains("3 cases"));
        let perfect: Vec<Vec<f64>> = (0..4)
            .map(|c| {
                let x = f64::from(c);
                sums(&[(x, 2.0 * x), (x + 0.5, 2.0 * x + 1.0)])
            })
            .collect();
        assert!(case_jackknife_fisher(&perfect, r)
            .unwrap_err()
            .contains("±1"));
    }

    #[test]
    fn the_interval_is_centred_on_the_bias_corrected_z_within_minus_one_and_one() {
        let cases: Vec<Vec<f64>> = (0..6)
            .map(|c| {
                let x = f64::from(c);
                sums(&[(x, x + 0.3), (x + 0.5, x - 0.2), (x + 0.9, x + 1.4)])
            })
            .collect();
        let interval = case_jackknife_fisher(&cases, r).expect("interval");
        let centre = interval.bias_corrected.atanh();
        let (low, high) = (interval.low.atanh(), interval.high.atanh());
        assert!(
            (centre - low - (high - centre)).abs() < 1e-12,
            "symmetric on z"
        );
        assert!(interval.low > -1.0 && interval.high < 1.0);
        assert_eq!((interval.cases, interval.degrees_of_freedom), (6, 5));
    }
}
