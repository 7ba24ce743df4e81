//! Cohen's κ (unweighted, linear and quadratic weights) for two raters and Fleiss' κ for many.

use crate::dist;
use crate::estimate::Estimate;
use crate::ratings::RatingMatrix;
use serde::Serialize;

/// The ordered categories scores fall into: the levels of the rubric scale when known
/// (min, min+step, …, max), else the distinct observed values.
#[derive(Debug, Clone, PartialEq)]
pub struct Categories {
    levels: Vec<f64>,
}

impl Categories {
    /// The levels of a scale; `None` when the scale is malformed or has over 1,000 levels.
    pub fn from_scale(min: f64, max: f64, step: f64) -> Option<Categories> {
        if !(min.is_finite() && max.is_finite() && step.is_finite()) || step <= 0.0 || max < min {
            return None;
        }
        let count = ((max - min) / step).round() as usize + 1;
        if count > 1000 {
            return None;
        }
        Some(Categories {
            levels: (0..count).map(|i| min + step * i as f64).collect(),
        })
    }

    pub fn from_values(values: impl IntoIterator<Item = f64>) -> Categories {
        let mut levels: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        Categories { levels }
    }

    pub fn levels(&self) -> &[f64] {
        &self.levels
    }

    /// The index of the level `value` equals (within 1e-6 of a step), if any.
    pub fn index_of(&self, value: f64) -> Option<usize> {
        let position = self
            .levels
            .partition_point(|&level| level < value - 1e-6 * (1.0 + value.abs()));
        (position < self.levels.len()
            && (self.levels[position] - value).abs() <= 1e-6 * (1.0 + value.abs()))
        .then_some(position)
    }
}

/// One κ with its large-sample standard error (Fleiss, Cohen & Everitt 1969) and 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KappaValue {
    pub value: f64,
    pub se: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CohenKappa {
    pub unweighted: Estimate<KappaValue>,
    pub linear: Estimate<KappaValue>,
    pub quadratic: Estimate<KappaValue>,
    pub n: usize,
    /// Number of categories of the table.
    pub categories: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weighting {
    Unweighted,
    Linear,
    Quadratic,
}

/// Cohen's κ of two raters' scores on `categories`. Pairs whose score is not one of the
/// categories make the whole statistic not estimable (they would otherwise vanish silently).
pub fn cohen_kappa(a: &[f64], b: &[f64], categories: &Categories) -> CohenKappa {
    let n = a.len().min(b.len());
    let k = categories.levels().len();
    let missing = |reason: String| CohenKappa {
        unweighted: Estimate::not_estimable(n, reason.clone()),
        linear: Estimate::not_estimable(n, reason.clone()),
        quadratic: Estimate::not_estimable(n, reason),
        n,
        categories: k,
    };
    if a.len() != b.len() {
        return missing("paired series differ in length".into());
    }
    if n < 2 {
        return missing(format!("needs at least 2 paired items, has {n}"));
    }
    if k < 2 {
        return missing("needs at least 2 categories".into());
    }
    let mut table = vec![0.0f64; k * k];
    for (&x, &y) in a.iter().zip(b) {
        match (categories.index_of(x), categories.index_of(y)) {
            (Some(i), Some(j)) => table[i * k + j] += 1.0,
            _ => {
                return missing(format!(
                    "score pair ({x}, {y}) is not on the scale's categories"
                ))
            }
        }
    }
    let levels = categories.levels();
    CohenKappa {
        unweighted: kappa_from_table(&table, levels, Weighting::Unweighted),
        linear: kappa_from_table(&table, levels, Weighting::Linear),
        quadratic: kappa_from_table(&table, levels, Weighting::Quadratic),
        n,
        categories: k,
    }
}

/// Cohen's κ of a k × k contingency table of counts (rows: rater A, columns: rater B) over k
/// equally spaced categories, with agreement weights w_ij = 1 − |i−j|/(k−1) (linear) or
/// 1 − (i−j)²/(k−1)² (quadratic).
pub fn cohen_kappa_from_table(table: &[f64], k: usize) -> CohenKappa {
    let n = table.iter().sum::<f64>() as usize;
    let levels: Vec<f64> = (0..k).map(|i| i as f64).collect();
    CohenKappa {
        unweighted: kappa_from_table(table, &levels, Weighting::Unweighted),
        linear: kappa_from_table(table, &levels, Weighting::Linear),
        quadratic: kappa_from_table(table, &levels, Weighting::Quadratic),
        n,
        categories: k,
    }
}

/// Weights go by the categories' values, not their positions: when the categories are the
/// observed values 5, 6, 8 and 10, 6→8 is twice as far as 5→6 (w_ij = 1 − |v_i − v_j| / (v_max −
/// v_min), squared for quadratic). On a scale's equally spaced levels the two are the same.
fn kappa_from_table(table: &[f64], levels: &[f64], weighting: Weighting) -> Estimate<KappaValue> {
    let k = levels.len();
    let total: f64 = table.iter().sum();
    let n = total as usize;
    if table.len() != k * k || k < 2 || total <= 0.0 {
        return Estimate::not_estimable(n, "empty or malformed contingency table");
    }
    let span = levels[k - 1] - levels[0];
    let weight = |i: usize, j: usize| -> f64 {
        let d = (levels[i] - levels[j]).abs();
        match weighting {
            Weighting::Unweighted => f64::from(u8::from(i == j)),
            Weighting::Linear => 1.0 - d / span,
            Weighting::Quadratic => 1.0 - (d / span).powi(2),
        }
    };
    let p = |i: usize, j: usize| table[i * k + j] / total;
    let row: Vec<f64> = (0..k).map(|i| (0..k).map(|j| p(i, j)).sum()).collect();
    let column: Vec<f64> = (0..k).map(|j| (0..k).map(|i| p(i, j)).sum()).collect();
    let mut observed = 0.0;
    let mut expected = 0.0;
    for (i, row_share) in row.iter().enumerate() {
        for (j, column_share) in column.iter().enumerate() {
            observed += weight(i, j) * p(i, j);
            expected += weight(i, j) * row_share * column_share;
        }
    }
    if (1.0 - expected).abs() < 1e-12 {
        return Estimate::not_estimable(
            n,
            "chance agreement is 1 (both raters used a single category)",
        );
    }
    let kappa = (observed - expected) / (1.0 - expected);
    // Fleiss, Cohen & Everitt (1969), eq. for the non-null variance of weighted κ.
    let row_weight: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|j| column[j] * weight(i, j)).sum())
        .collect();
    let column_weight: Vec<f64> = (0..k)
        .map(|j| (0..k).map(|i| row[i] * weight(i, j)).sum())
        .collect();
    let mut sum = 0.0;
    for (i, row_w) in row_weight.iter().enumerate() {
        for (j, column_w) in column_weight.iter().enumerate() {
            let term = weight(i, j) - (row_w + column_w) * (1.0 - kappa);
            sum += p(i, j) * term * term;
        }
    }
    let variance =
        (sum - (kappa - expected * (1.0 - kappa)).powi(2)) / (total * (1.0 - expected).powi(2));
    let se = variance.max(0.0).sqrt();
    let half = dist::z_975() * se;
    // The Wald interval can leave κ's range on few items (0.40, −0.37 to 1.17 was seen); an
    // interval of a bounded statistic stays inside its bounds (issue 33).
    Estimate::Value(KappaValue {
        value: kappa,
        se,
        ci_low: (kappa - half).max(-1.0),
        ci_high: (kappa + half).min(1.0),
    })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleissKappa {
    pub value: f64,
    pub n: usize,
    pub raters: usize,
    pub items_dropped: usize,
}

/// Fleiss' κ (1971) over the items every rater scored (the statistic assumes the same number of
/// ratings per item); the number dropped is reported.
pub fn fleiss_kappa(ratings: &RatingMatrix, categories: &Categories) -> Estimate<FleissKappa> {
    let rows: Vec<Vec<f64>> = ratings.complete_rows().collect();
    let n = rows.len();
    let m = ratings.n_raters();
    let k = categories.levels().len();
    if m < 2 {
        return Estimate::not_estimable(n, format!("needs at least 2 raters, has {m}"));
    }
    if n < 2 {
        return Estimate::not_estimable(n, "needs at least 2 items scored by every rater");
    }
    let mut category_totals = vec![0.0f64; k];
    let mut agreement_sum = 0.0;
    let mf = m as f64;
    for row in &rows {
        let mut counts = vec![0.0f64; k];
        for &v in row {
            match categories.index_of(v) {
                Some(c) => counts[c] += 1.0,
                None => {
                    return Estimate::not_estimable(
                        n,
                        format!("score {v} is not one of the scale's categories"),
                    )
                }
            }
        }
        agreement_sum += (counts.iter().map(|c| c * c).sum::<f64>() - mf) / (mf * (mf - 1.0));
        for (total, c) in category_totals.iter_mut().zip(&counts) {
            *total += c;
        }
    }
    let nf = n as f64;
    let observed = agreement_sum / nf;
    let expected: f64 = category_totals
        .iter()
        .map(|t| (t / (nf * mf)).powi(2))
        .sum();
    if (1.0 - expected).abs() < 1e-12 {
        return Estimate::not_estimable(n, "every rating falls in one category");
    }
    Estimate::Value(FleissKappa {
        value: (observed - expected) / (1.0 - expected),
        n,
        raters: m,
        items_dropped: ratings.n_items() - n,
    })
}
