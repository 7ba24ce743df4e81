//! Agreement statistics between clinicians and an LLM grader, and the calibration report.
//!
//! **Architecture invariant:** this crate does no I/O and never panics on user data; whatever
//! cannot be computed is an [`Estimate::NotEstimable`] with its reason.
//!
//! Statistics (each module documents its method and interval):
//! - [`correlation`]: [`correlation::pearson`], [`correlation::spearman`],
//!   [`correlation::kendall_tau_b`];
//! - [`bland_altman::bland_altman`]; [`icc::icc`] (six Shrout & Fleiss forms);
//! - [`kappa::cohen_kappa`], [`kappa::fleiss_kappa`];
//!   [`krippendorff::krippendorff_alpha`];
//! - [`bootstrap::cluster_bootstrap`] (seeded, percentile and BCa);
//! - [`precision`] (CI width at n, n needed for a lower bound); [`alt_test::alt_test`];
//!   [`proportions`] (Wilson, pass@k).

pub mod alt_test;
pub mod bland_altman;
pub mod bootstrap;
pub mod correlation;
pub mod csv_input;
mod dist;
pub mod estimate;
pub mod html;
pub mod icc;
pub mod input;
pub mod kappa;
pub mod krippendorff;
pub mod precision;
pub mod proportions;
pub mod ratings;
pub mod report;
pub mod tables;

pub use estimate::Estimate;
pub use ratings::RatingMatrix;
