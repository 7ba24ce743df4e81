//! The result of a statistic that may not be computable on the data at hand.

use serde::Serialize;

/// A statistic's value, or the reason it could not be computed.
///
/// Reports never show a NaN as a number: whatever cannot be computed (too few items, zero
/// variance, no overlap between raters) says so in words. In JSON a value serialises as its own
/// fields; a missing one as `{"n": …, "not_estimable": "reason"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum Estimate<T> {
    Value(T),
    NotEstimable { n: usize, not_estimable: String },
}

impl<T> Estimate<T> {
    pub fn not_estimable(n: usize, reason: impl Into<String>) -> Self {
        Estimate::NotEstimable {
            n,
            not_estimable: reason.into(),
        }
    }

    pub fn value(&self) -> Option<&T> {
        match self {
            Estimate::Value(v) => Some(v),
            Estimate::NotEstimable { .. } => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Estimate<U> {
        match self {
            Estimate::Value(v) => Estimate::Value(f(v)),
            Estimate::NotEstimable { n, not_estimable } => {
                Estimate::NotEstimable { n, not_estimable }
            }
        }
    }

    /// The reason the statistic is missing, if it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Estimate::Value(_) => None,
            Estimate::NotEstimable { not_estimable, .. } => Some(not_estimable),
        }
    }
}
