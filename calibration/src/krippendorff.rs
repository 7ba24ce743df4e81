//! Krippendorff's α (nominal, ordinal, interval) with missing data.
//!
//! Only pairable values enter (items with at least two scores), as Krippendorff (2011,
//! "Computing Krippendorff's Alpha-Reliability") prescribes. Each form is computed in
//! O(N log N) rather than through the V × V coincidence matrix, so continuous grader scores with
//! thousands of distinct values stay cheap:
//! - interval: Σ over pairs of (x−y)² within an item of m scores equals 2·m·SS_item, and over all
//!   pairable values 2·n·SS_total;
//! - ordinal: Krippendorff's ordinal δ²(c,k) = (Σ_{g=c..k} n_g − (n_c+n_k)/2)² equals
//!   (M_k − M_c)² with M_c = N_{<c} + n_c/2 (the mid-cumulative frequency of value c), so it is the
//!   interval form applied to the values mapped to M_c;
//! - nominal: disagreeing pairs within an item are m² − Σ_c n_uc², overall n² − Σ_c n_c².

use crate::estimate::Estimate;
use crate::ratings::RatingMatrix;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KrippendorffAlpha {
    pub nominal: Estimate<f64>,
    pub ordinal: Estimate<f64>,
    pub interval: Estimate<f64>,
    /// Pairable values (scores of items with at least two scores).
    pub n_values: usize,
    /// Items with at least two scores.
    pub n: usize,
}

pub fn krippendorff_alpha(ratings: &RatingMatrix) -> KrippendorffAlpha {
    let units: Vec<Vec<f64>> = (0..ratings.n_items())
        .map(|i| {
            ratings
                .present_values(i)
                .filter(|v| v.is_finite())
                .collect::<Vec<f64>>()
        })
        .filter(|u| u.len() >= 2)
        .collect();
    let n_items = units.len();
    let n_values: usize = units.iter().map(Vec::len).sum();
    let too_few = || {
        Estimate::not_estimable(
            n_items,
            format!("needs at least 2 items with 2 or more scores, has {n_items}"),
        )
    };
    if n_items < 2 {
        return KrippendorffAlpha {
            nominal: too_few(),
            ordinal: too_few(),
            interval: too_few(),
            n_values,
            n: n_items,
        };
    }
    let ordinal_units = to_mid_cumulative(&units);
    KrippendorffAlpha {
        nominal: nominal_alpha(&units, n_items),
        ordinal: interval_alpha(&ordinal_units, n_items),
        interval: interval_alpha(&units, n_items),
        n_values,
        n: n_items,
    }
}

fn interval_alpha(units: &[Vec<f64>], n_items: usize) -> Estimate<f64> {
    let n: f64 = units.iter().map(|u| u.len() as f64).sum();
    let grand = units.iter().flatten().sum::<f64>() / n;
    let ss_total: f64 = units.iter().flatten().map(|v| (v - grand).powi(2)).sum();
    if ss_total <= 0.0 {
        return Estimate::not_estimable(n_items, "all pairable scores are equal");
    }
    let within: f64 = units
        .iter()
        .map(|u| {
            let m = u.len() as f64;
            let mean = u.iter().sum::<f64>() / m;
            let ss: f64 = u.iter().map(|v| (v - mean).powi(2)).sum();
            2.0 * m * ss / (m - 1.0)
        })
        .sum();
    Estimate::Value(1.0 - (n - 1.0) * within / (2.0 * n * ss_total))
}

fn nominal_alpha(units: &[Vec<f64>], n_items: usize) -> Estimate<f64> {
    let mut within = 0.0;
    let mut scratch = Vec::new();
    for unit in units {
        scratch.clear();
        scratch.extend_from_slice(unit);
        let m = unit.len() as f64;
        within += (m * m - sum_of_squared_run_lengths(&mut scratch)) / (m - 1.0);
    }
    let mut all: Vec<f64> = units.iter().flatten().copied().collect();
    let n = all.len() as f64;
    let expected = n * n - sum_of_squared_run_lengths(&mut all);
    if expected <= 0.0 {
        return Estimate::not_estimable(n_items, "all pairable scores are equal");
    }
    Estimate::Value(1.0 - (n - 1.0) * within / expected)
}

/// Σ over distinct values of (count)², by sorting `values` in place.
fn sum_of_squared_run_lengths(values: &mut [f64]) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    let mut sum = 0.0;
    let mut start = 0;
    while start < values.len() {
        let mut end = start + 1;
        // `==` also equates −0.0 and 0.0, which total_cmp sorts next to each other.
        while end < values.len() && values[end] == values[start] {
            end += 1;
        }
        sum += ((end - start) as f64).powi(2);
        start = end;
    }
    sum
}

/// Replaces each value by its mid-cumulative frequency among all pairable values.
fn to_mid_cumulative(units: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut values: Vec<f64> = units.iter().flatten().copied().collect();
    values.sort_unstable_by(f64::total_cmp);
    // Distinct values and their mid-cumulative frequencies, in ascending order.
    let mut distinct: Vec<(f64, f64)> = Vec::new();
    let mut start = 0;
    while start < values.len() {
        let mut end = start + 1;
        while end < values.len() && values[end] == values[start] {
            end += 1;
        }
        distinct.push((values[start], start as f64 + (end - start) as f64 / 2.0));
        start = end;
    }
    units
        .iter()
        .map(|u| {
            u.iter()
                .map(|v| {
                    let at = distinct.partition_point(|d| d.0 < *v);
                    distinct.get(at).map_or(0.0, |d| d.1)
                })
                .collect()
        })
        .collect()
}
