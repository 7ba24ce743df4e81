//! Where the clinicians' disagreement comes from: variance components of their scores, and what
//! a different panel of clinicians would likely give.
//!
//! **Model.** On the clinicians' largest complete panel ([`crate::panel`]), a score is
//! μ + case + item within case + rater + case × rater + residual (the residual holds item ×
//! rater and error, which one score per item and rater cannot separate). Cases and raters are
//! random: the panel is one draw of clinicians, and another would differ.
//!
//! **Estimator.** The ANOVA (expected mean squares) estimators of the balanced design, every
//! case with the same number of items on the panel; negative estimates are set to 0 (and
//! flagged). For a balanced design with every estimate positive they equal the REML estimates
//! (checked against statsmodels' `MixedLM` with crossed variance components). When cases hold
//! different numbers of items, or an item is its own case, the case level is not separated:
//! items, raters and the residual only (the two-way ANOVA of the ICC, always balanced on a
//! complete panel), and the report says so.
//!
//! **Another panel.** The clinicians' absolute agreement a new panel of `k` clinicians from the
//! same population would likely reach: (case + item) / (case + item + (rater + case × rater +
//! residual) / k), for one clinician (k = 1) and for the mean of k.

use crate::estimate::Estimate;
use crate::ratings::RatingMatrix;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarianceComponents {
    /// `cases, items within cases, raters` or `items, raters` (cases not separated).
    pub design: String,
    /// Between cases; `None` when the case level is not separated.
    pub case: Option<f64>,
    /// Between items (within cases when the case level is separated).
    pub item: f64,
    /// Between clinicians: one scores higher than another on everything.
    pub rater: f64,
    /// Clinicians disagreeing on some cases more than others; `None` when not separated.
    pub case_by_rater: Option<f64>,
    /// Item × rater and error.
    pub residual: f64,
    /// Components the estimator gave below zero, reported as 0.
    pub truncated_at_zero: Vec<String>,
    /// The share of the total variance that is the panel's (rater + case × rater + residual):
    /// what would change with other clinicians.
    pub panel_share: f64,
    pub n_items: usize,
    pub n_cases: usize,
    pub n_raters: usize,
    /// Absolute agreement a new panel would likely reach: one clinician, and the mean of the
    /// panel's size and of 3 and 5 clinicians.
    pub another_panel: Vec<PanelProjection>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PanelProjection {
    pub clinicians: usize,
    pub icc: f64,
}

/// Variance components of the complete panel `ratings` (every row complete), `cases` per row.
pub fn variance_components(ratings: &RatingMatrix, cases: &[&str]) -> Estimate<VarianceComponents> {
    let rows: Vec<(usize, Vec<f64>)> = (0..ratings.n_items())
        .filter_map(|i| {
            Some((
                i,
                ratings
                    .row(i)
                    .iter()
                    .copied()
                    .collect::<Option<Vec<f64>>>()?,
            ))
        })
        .collect();
    let n = rows.len();
    let k = ratings.n_raters();
    if k < 2 || n < 3 {
        return Estimate::not_estimable(
            n,
            format!("needs at least 3 items scored by at least 2 clinicians, has {n} items and {k} clinicians"),
        );
    }
    if rows.iter().flat_map(|(_, r)| r).any(|v| !v.is_finite()) {
        return Estimate::not_estimable(n, "a score is not a finite number");
    }
    let mut by_case: BTreeMap<&str, Vec<&[f64]>> = BTreeMap::new();
    for (i, row) in &rows {
        by_case.entry(cases[*i]).or_default().push(row);
    }
    let per_case = by_case.values().next().map_or(0, Vec::len);
    let balanced =
        per_case >= 2 && by_case.len() >= 2 && by_case.values().all(|c| c.len() == per_case);
    let grand = rows.iter().flat_map(|(_, r)| r).sum::<f64>() / (n * k) as f64;
    let rater_means: Vec<f64> = (0..k)
        .map(|r| rows.iter().map(|(_, row)| row[r]).sum::<f64>() / n as f64)
        .collect();
    let ss_total: f64 = rows
        .iter()
        .flat_map(|(_, r)| r)
        .map(|v| (v - grand).powi(2))
        .sum();
    let ss_rater = n as f64 * rater_means.iter().map(|m| (m - grand).powi(2)).sum::<f64>();
    let kf = k as f64;
    let mut truncated = Vec::new();
    let mut floor = |name: &str, v: f64| {
        if v < 0.0 {
            truncated.push(name.to_string());
            0.0
        } else {
            v
        }
    };
    let (design, case, item, rater, case_by_rater, residual) = if balanced {
        let (c, m) = (by_case.len() as f64, per_case as f64);
        let mut ss_case = 0.0;
        let mut ss_item = 0.0;
        let mut ss_case_rater = 0.0;
        for items in by_case.values() {
            let case_rater: Vec<f64> = (0..k)
                .map(|r| items.iter().map(|row| row[r]).sum::<f64>() / m)
                .collect();
            let case_mean = case_rater.iter().sum::<f64>() / kf;
            ss_case += m * kf * (case_mean - grand).powi(2);
            for row in items {
                ss_item += kf * (row.iter().sum::<f64>() / kf - case_mean).powi(2);
            }
            ss_case_rater += m * case_rater
                .iter()
                .zip(&rater_means)
                .map(|(cr, rm)| (cr - case_mean - rm + grand).powi(2))
                .sum::<f64>();
        }
        let ss_residual = ss_total - ss_case - ss_item - ss_rater - ss_case_rater;
        let ms_case = ss_case / (c - 1.0);
        let ms_item = ss_item / (c * (m - 1.0));
        let ms_rater = ss_rater / (kf - 1.0);
        let ms_case_rater = ss_case_rater / ((c - 1.0) * (kf - 1.0));
        let ms_residual = ss_residual / (c * (m - 1.0) * (kf - 1.0));
        (
            "cases, items within cases, raters",
            Some(floor(
                "case",
                (ms_case - ms_case_rater - ms_item + ms_residual) / (m * kf),
            )),
            floor("item", (ms_item - ms_residual) / kf),
            floor("rater", (ms_rater - ms_case_rater) / (c * m)),
            Some(floor("case_by_rater", (ms_case_rater - ms_residual) / m)),
            ms_residual,
        )
    } else {
        let nf = n as f64;
        let ss_item = kf
            * rows
                .iter()
                .map(|(_, r)| (r.iter().sum::<f64>() / kf - grand).powi(2))
                .sum::<f64>();
        let ms_item = ss_item / (nf - 1.0);
        let ms_rater = ss_rater / (kf - 1.0);
        let ms_residual = (ss_total - ss_item - ss_rater) / ((nf - 1.0) * (kf - 1.0));
        (
            "items, raters (cases hold different numbers of items: the case level is not separated)",
            None,
            floor("item", (ms_item - ms_residual) / kf),
            floor("rater", (ms_rater - ms_residual) / nf),
            None,
            ms_residual,
        )
    };
    let target = case.unwrap_or(0.0) + item;
    let panel = rater + case_by_rater.unwrap_or(0.0) + residual;
    if target + panel <= 0.0 || !(target + panel).is_finite() {
        return Estimate::not_estimable(n, "the scores have no variance");
    }
    let projection = |clinicians: usize| PanelProjection {
        clinicians,
        icc: target / (target + panel / clinicians as f64),
    };
    let mut sizes = vec![1, k, 3, 5];
    sizes.sort_unstable();
    sizes.dedup();
    Estimate::Value(VarianceComponents {
        design: design.to_string(),
        case,
        item,
        rater,
        case_by_rater,
        residual,
        truncated_at_zero: truncated,
        panel_share: panel / (target + panel),
        n_items: n,
        n_cases: by_case.len(),
        n_raters: k,
        another_panel: sizes.into_iter().map(projection).collect(),
    })
}
