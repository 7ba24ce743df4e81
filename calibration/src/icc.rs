//! Intraclass correlation in the six forms of Shrout & Fleiss (1979), with F-based 95 % intervals
//! (McGraw & Wong 1996; the same formulas as pingouin.intraclass_corr).
//!
//! Missing-data policy: the ANOVA needs a complete items × raters table, so only items scored by
//! every rater enter; the number of items dropped is reported beside the coefficients.

use crate::dist;
use crate::estimate::Estimate;
use crate::ratings::RatingMatrix;
use serde::Serialize;

/// One ICC form with its interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IccValue {
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The McGraw & Wong description, e.g. "two-way random effects, absolute agreement, single
    /// rater".
    pub description: &'static str,
}

/// All six forms, keyed as in docs/formats.md §5.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Icc {
    #[serde(rename = "ICC1")]
    pub icc1: Estimate<IccValue>,
    #[serde(rename = "ICC2")]
    pub icc2: Estimate<IccValue>,
    #[serde(rename = "ICC3")]
    pub icc3: Estimate<IccValue>,
    #[serde(rename = "ICC1k")]
    pub icc1k: Estimate<IccValue>,
    #[serde(rename = "ICC2k")]
    pub icc2k: Estimate<IccValue>,
    #[serde(rename = "ICC3k")]
    pub icc3k: Estimate<IccValue>,
    /// Items scored by every rater (the n of every form).
    pub n: usize,
    pub raters: usize,
    /// Items left out because at least one rater did not score them.
    pub items_dropped: usize,
}

pub const ICC1_DESCRIPTION: &str = "one-way random effects, absolute agreement, single rater";
pub const ICC2_DESCRIPTION: &str = "two-way random effects, absolute agreement, single rater";
pub const ICC3_DESCRIPTION: &str = "two-way mixed effects, consistency, single rater";
pub const ICC1K_DESCRIPTION: &str = "one-way random effects, absolute agreement, mean of k raters";
pub const ICC2K_DESCRIPTION: &str = "two-way random effects, absolute agreement, mean of k raters";
pub const ICC3K_DESCRIPTION: &str = "two-way mixed effects, consistency, mean of k raters";

/// Mean squares of the two-way ANOVA without replication.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanSquares {
    pub n: usize,
    pub k: usize,
    /// Degrees of freedom between items: n − 1, or n − g when the items fall into g groups whose
    /// differences are removed first (test-retest pooled over clinicians, whose differences are
    /// not variance between items).
    pub df_items: f64,
    /// Between items (rows).
    pub msb: f64,
    /// Within items (one-way residual).
    pub msw: f64,
    /// Between raters (columns).
    pub msj: f64,
    /// Two-way residual.
    pub mse: f64,
}

impl MeanSquares {
    /// From additive sums over complete items: n, grand total, Σx², Σ(row total)², and the
    /// column totals. The bootstrap resamples these sums, so they are the single definition.
    pub fn from_sums(
        n: usize,
        total: f64,
        sum_squares: f64,
        sum_row_total_squares: f64,
        column_totals: &[f64],
    ) -> Option<MeanSquares> {
        let k = column_totals.len();
        if n < 2 || k < 2 {
            return None;
        }
        let (nf, kf) = (n as f64, k as f64);
        let correction = total * total / (nf * kf);
        Some(Self::from_sums_of_squares(
            n,
            k,
            1,
            sum_squares - correction,
            sum_row_total_squares / kf - correction,
            column_totals.iter().map(|c| c * c).sum::<f64>() / nf - correction,
        ))
    }

    /// From the sums of squares of n items in `groups` groups (1: the plain two-way ANOVA), each
    /// taken about its group's mean: total, between items, between raters. The groups' own
    /// differences are left out of every term and cost `groups − 1` degrees of freedom between
    /// items; the residual keeps (n − 1)(k − 1).
    pub fn from_sums_of_squares(
        n: usize,
        k: usize,
        groups: usize,
        ss_total: f64,
        ss_rows: f64,
        ss_columns: f64,
    ) -> MeanSquares {
        let (nf, kf) = (n as f64, k as f64);
        let df_items = nf - groups as f64;
        MeanSquares {
            n,
            k,
            df_items,
            msb: ss_rows / df_items,
            msw: (ss_total - ss_rows) / (nf * (kf - 1.0)),
            msj: ss_columns / (kf - 1.0),
            mse: (ss_total - ss_rows - ss_columns) / ((nf - 1.0) * (kf - 1.0)),
        }
    }

    pub fn from_rows(rows: &[Vec<f64>]) -> Option<MeanSquares> {
        let k = rows.first()?.len();
        // Centre on the grand mean first: the sums of squares then lose no precision to
        // cancellation when scores sit far from zero.
        let grand = rows.iter().flatten().sum::<f64>() / (rows.len() as f64 * k.max(1) as f64);
        let mut columns = vec![0.0; k];
        let (mut total, mut squares, mut row_squares) = (0.0, 0.0, 0.0);
        for row in rows {
            let mut row_total = 0.0;
            for (j, v) in row.iter().enumerate() {
                let c = v - grand;
                columns[j] += c;
                row_total += c;
                squares += c * c;
            }
            total += row_total;
            row_squares += row_total * row_total;
        }
        Self::from_sums(rows.len(), total, squares, row_squares, &columns)
    }

    pub fn icc1(&self) -> f64 {
        (self.msb - self.msw) / (self.msb + (self.k as f64 - 1.0) * self.msw)
    }

    pub fn icc2(&self) -> f64 {
        let (n, k) = (self.n as f64, self.k as f64);
        (self.msb - self.mse) / (self.msb + (k - 1.0) * self.mse + k * (self.msj - self.mse) / n)
    }

    pub fn icc3(&self) -> f64 {
        (self.msb - self.mse) / (self.msb + (self.k as f64 - 1.0) * self.mse)
    }
}

/// All six ICC forms over the items every rater scored.
pub fn icc(ratings: &RatingMatrix) -> Icc {
    let rows: Vec<Vec<f64>> = ratings.complete_rows().collect();
    let dropped = ratings.n_items() - rows.len();
    let k = ratings.n_raters();
    let n = rows.len();
    let missing = |reason: String| Icc {
        icc1: Estimate::not_estimable(n, reason.clone()),
        icc2: Estimate::not_estimable(n, reason.clone()),
        icc3: Estimate::not_estimable(n, reason.clone()),
        icc1k: Estimate::not_estimable(n, reason.clone()),
        icc2k: Estimate::not_estimable(n, reason.clone()),
        icc3k: Estimate::not_estimable(n, reason),
        n,
        raters: k,
        items_dropped: dropped,
    };
    if k < 2 {
        return missing(format!("needs at least 2 raters, has {k}"));
    }
    if n < 2 {
        return missing(format!(
            "needs at least 2 items scored by all {k} raters, has {n}"
        ));
    }
    if rows.iter().flatten().any(|v| !v.is_finite()) {
        return missing("a score is not a finite number".into());
    }
    let Some(ms) = MeanSquares::from_rows(&rows) else {
        return missing("the ANOVA could not be formed".into());
    };
    let mut result = icc_from_mean_squares(&ms);
    result.items_dropped = dropped;
    result
}

/// The six forms and their F-based intervals from the ANOVA mean squares.
pub fn icc_from_mean_squares(ms: &MeanSquares) -> Icc {
    let (n, k) = (ms.n, ms.k);
    let (nf, kf) = (n as f64, k as f64);
    let alpha = 0.05;
    let upper = 1.0 - alpha / 2.0;
    // The F statistics' numerator: items; the Satterthwaite denominator below uses the residual's
    // (n − 1)(k − 1) over k − 1.
    let df1 = ms.df_items;
    let df1kd = nf * (kf - 1.0);
    let df2kd = (nf - 1.0) * (kf - 1.0);
    let value = |v: f64, lo: Option<f64>, hi: Option<f64>, description: &'static str| match (
        v.is_finite(),
        lo,
        hi,
    ) {
        (true, Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() => {
            Estimate::Value(IccValue {
                value: v,
                ci_low: lo,
                ci_high: hi,
                description,
            })
        }
        (true, _, _) => Estimate::not_estimable(
            n,
            "the F-based interval is undefined (a mean square is zero)",
        ),
        _ => Estimate::not_estimable(n, "the scores have no variance between items"),
    };

    // ICC1 and ICC1k: one-way model.
    let f1 = ms.msb / ms.msw;
    let f1l = dist::f_quantile(upper, df1, df1kd).map(|q| f1 / q);
    let f1u = dist::f_quantile(upper, df1kd, df1).map(|q| f1 * q);
    let icc1 = value(
        ms.icc1(),
        f1l.map(|f| (f - 1.0) / (f + kf - 1.0)),
        f1u.map(|f| (f - 1.0) / (f + kf - 1.0)),
        ICC1_DESCRIPTION,
    );
    let icc1k = value(
        (ms.msb - ms.msw) / ms.msb,
        f1l.map(|f| 1.0 - 1.0 / f),
        f1u.map(|f| 1.0 - 1.0 / f),
        ICC1K_DESCRIPTION,
    );

    // ICC3 and ICC3k: two-way, consistency.
    let f3 = ms.msb / ms.mse;
    let f3l = dist::f_quantile(upper, df1, df2kd).map(|q| f3 / q);
    let f3u = dist::f_quantile(upper, df2kd, df1).map(|q| f3 * q);
    let icc3 = value(
        ms.icc3(),
        f3l.map(|f| (f - 1.0) / (f + kf - 1.0)),
        f3u.map(|f| (f - 1.0) / (f + kf - 1.0)),
        ICC3_DESCRIPTION,
    );
    let icc3k = value(
        (ms.msb - ms.mse) / ms.msb,
        f3l.map(|f| 1.0 - 1.0 / f),
        f3u.map(|f| 1.0 - 1.0 / f),
        ICC3K_DESCRIPTION,
    );

    // ICC2 and ICC2k: two-way random, absolute agreement; Satterthwaite df for the interval.
    let icc2 = ms.icc2();
    let fj = ms.msj / ms.mse;
    let a = kf * icc2 * fj + nf * (1.0 + (kf - 1.0) * icc2) - kf * icc2;
    let vn = df2kd * a * a;
    let b = nf * (1.0 + (kf - 1.0) * icc2) - kf * icc2;
    let vd = (nf - 1.0) * kf * kf * icc2 * icc2 * fj * fj + b * b;
    let v = vn / vd;
    let (l2, u2) = if v.is_finite() && v > 0.0 {
        let f2u = dist::f_quantile(upper, df1, v);
        let f2l = dist::f_quantile(upper, v, df1);
        let spread = kf * ms.msj + (kf * nf - kf - nf) * ms.mse;
        (
            f2u.map(|f| nf * (ms.msb - f * ms.mse) / (f * spread + nf * ms.msb)),
            f2l.map(|f| nf * (f * ms.msb - ms.mse) / (spread + nf * f * ms.msb)),
        )
    } else {
        (None, None)
    };
    let to_k = |x: f64| x * kf / (1.0 + x * (kf - 1.0));
    let icc2_estimate = value(icc2, l2, u2, ICC2_DESCRIPTION);
    let icc2k = value(
        (ms.msb - ms.mse) / (ms.msb + (ms.msj - ms.mse) / nf),
        l2.map(to_k),
        u2.map(to_k),
        ICC2K_DESCRIPTION,
    );

    Icc {
        icc1,
        icc2: icc2_estimate,
        icc3,
        icc1k,
        icc2k,
        icc3k,
        n,
        raters: k,
        items_dropped: 0,
    }
}
