//! What the panel allows: the highest Pearson r any grader can reach with the clinicians' mean.
//!
//! Why: the clinicians' mean is itself a noisy measure of the truth, and a correlation with a
//! noisy measure is capped by its reliability (Spearman 1904, the attenuation formula): even a
//! grader that scores the truth exactly reaches r = √(reliability of the mean). The reliability of
//! the mean of k clinicians is ICC(A,k) (two-way random effects, absolute agreement, mean of k
//! raters; McGraw & Wong 1996, case 2A), computed on the largest complete panel
//! ([`crate::panel`]). At a single-clinician ICC of 0.5 and k = 3, ICC(A,3) = 0.75 and a perfect
//! grader reaches 0.87: a bar of 0.90 is out of reach by design, whatever the grader.
//!
//! The interval is √ of the ICC's F-based interval (monotone, so its coverage carries over),
//! clipped to [0, 1]. The disattenuated r, r / √ICC(A,k), is what the grader's r would be against
//! a perfectly reliable mean; it can exceed 1 by sampling error and is reported unclipped.

use crate::estimate::Estimate;
use crate::icc::Icc;
use serde::Serialize;

/// √ICC(A,k) of the clinicians' mean with its 95 % interval (`verdict.attainable_r`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttainableR {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// ICC(A,k) it comes from, on `raters` clinicians and `n_items` items they all scored.
    pub icc_ak: f64,
    pub raters: usize,
    pub n_items: usize,
}

impl AttainableR {
    /// The grader's r against a perfectly reliable clinicians' mean: r / √ICC(A,k), unclipped.
    pub fn disattenuate(&self, r: f64) -> f64 {
        r / self.value
    }

    /// The cap in plain words, for the verdict's summary; says so when the bar lies above it.
    /// Whether `bar` lies above what a perfect grader would reach against this panel's mean: the
    /// one rule the summary, the decision and the app's card use.
    pub fn puts_out_of_reach(&self, bar: f64) -> bool {
        bar > self.value
    }

    pub fn sentence(&self, r: f64, bar: f64) -> String {
        let mut words = format!(
            " The clinicians' mean is itself noisy: with ICC(A,{}) = {:.2} (panel of {}, {} items), even a perfect grader would reach at most r ≈ {:.2} (95 % interval {:.2}–{:.2}); the grader's r corrected for that is {:.2}{}.",
            self.raters,
            self.icc_ak,
            self.raters,
            self.n_items,
            self.value,
            self.low,
            self.high,
            self.disattenuate(r),
            if self.disattenuate(r) > 1.0 { " (above 1 by sampling error: read it as 1)" } else { "" }
        );
        if self.puts_out_of_reach(bar) {
            words.push_str(&format!(
                " The bar of {bar:.2} lies above what this panel allows: no grader can be shown to reach it against these clinicians' mean."
            ));
        }
        words
    }
}

/// The attainable r of the clinicians' mean from the section's ICCs; not estimable where ICC(A,k)
/// is, or where it is not positive (the mean carries no reliable signal to correlate with).
pub fn attainable_r(icc: &Icc) -> Estimate<AttainableR> {
    let v = match &icc.icc2k {
        Estimate::Value(v) => v,
        Estimate::NotEstimable { n, not_estimable } => {
            return Estimate::not_estimable(
                *n,
                format!("ICC(A,k) is not estimable: {not_estimable}"),
            )
        }
    };
    if v.value.is_nan() || v.value <= 0.0 {
        return Estimate::not_estimable(
            icc.n,
            format!(
                "ICC(A,k) = {:.3} is not positive: the clinicians' mean carries no reliable signal",
                v.value
            ),
        );
    }
    let root = |x: f64| x.clamp(0.0, 1.0).sqrt();
    Estimate::Value(AttainableR {
        value: v.value.sqrt(),
        low: root(v.ci_low),
        high: root(v.ci_high),
        icc_ak: v.value,
        raters: icc.raters,
        n_items: icc.n,
    })
}
