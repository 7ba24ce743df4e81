//! Agreement statistics between clinicians and an LLM grader, and the calibration report.
//!
//! **Architecture invariant:** this crate does no I/O and never panics on user data; whatever
//! cannot be computed is an [`Estimate::NotEstimable`] with its reason.
//!
//! The report (what the CLI and the app call):
//! - [`csv_input::parse_long_csv`]`(text, file_name) -> Result<LongTable, csv_input::Error>`:
//!   the long CSV of docs/formats.md §3, every bad line reported as `FILE:LINE: field: message`;
//! - [`report::build_report`]`(&CalibrationInput, &ReportOptions, &dyn Progress)
//!   -> Result<Report, ReportError>`: inputs in [`input`], progress through
//!   [`progress::Progress`];
//! - [`tables::to_json`], [`tables::to_csv_tables`] (`Vec<(file_name, text)>`),
//!   [`html::to_html`]: pure renderings; the caller writes the files.
//! - [`manifest::Manifest`] (the report's `manifest`): what a report was built from; a caller
//!   that read a database completes it with [`manifest::StudyProvenance`].
//!
//! Statistics (each module documents its method and interval):
//! - [`correlation`]: [`correlation::pearson`], [`correlation::spearman`],
//!   [`correlation::kendall_tau_b`];
//! - [`bland_altman::bland_altman`]; [`icc::icc`] (six Shrout & Fleiss forms);
//! - [`calibration_line`] (grader = a + b · clinicians' mean; proportional bias);
//! - [`kappa::cohen_kappa`], [`kappa::fleiss_kappa`];
//!   [`krippendorff::krippendorff_alpha`];
//! - [`bootstrap::cluster_bootstrap`] (seeded, percentile and BCa);
//!   [`jackknife::case_jackknife_fisher`] (the verdict's interval of r);
//! - [`mrmc`]: Obuchowski–Rockette with Hillis's df, generic over the figure of merit
//!   ([`mrmc::obuchowski_rockette`], [`mrmc::fixed_reader_vs_random_readers`]);
//! - [`attainable`]: √ICC(A,k), the r the clinicians' mean allows, and the disattenuated r;
//! - [`readers_random`]: the grader against a clinician with clinicians and cases random;
//! - [`precision`] (CI width at n, n needed for a lower bound); [`alt_test::alt_test`];
//!   [`proportions`] (Wilson, pass@k); [`ppi`] (PPI++ estimates: the grader on every answer,
//!   clinicians on a random subset, intervals by case);
//! - [`variance`] (REML variance components of the clinicians' scores, profile intervals);
//! - [`intra_rater`] (test-retest: ICC(A,1), weighted κ, mean absolute difference);
//!   [`missed_findings`] (lesions a response did not mention, per model);
//! - [`truth_match`]: the `answer_accuracy` section, answers matched against the curated
//!   diagnosis (top-1/top-3 accuracy,
//!   pass@k, macro-F1 over disease groups, agreement with the clinicians and the grader);
//! - the grader workbench: [`dev_test_split`] (seeded, stratified by case, placements never
//!   move), [`grader_items`] (agreement with the clinicians' mean, items by disagreement),
//!   [`version_drift`] (score shift, verdict flips, Kendall τ-b of the model ranking).

pub mod alt_test;
pub mod attainable;
pub mod automatic_metrics;
mod automatic_metrics_render;
pub mod bland_altman;
pub mod bootstrap;
pub mod calibration_line;
pub mod correlation;
pub mod coverage;
pub mod csv_input;
pub mod dev_test_split;
mod dist;
pub mod error_rates;
pub mod estimate;
pub mod grader_items;
pub mod html;
pub mod icc;
pub mod input;
pub mod intra_rater;
pub mod jackknife;
pub mod kappa;
pub mod krippendorff;
pub mod manifest;
pub mod missed_findings;
pub mod mrmc;
mod optimise;
pub mod panel;
pub mod ppi;
pub mod precision;
pub mod progress;
pub mod proportions;
pub mod ratings;
pub mod readers_random;
pub mod reliability;
pub mod report;
pub mod scales;
pub mod tables;
pub mod truth_match;
pub mod variance;
pub mod version_drift;

pub use estimate::Estimate;
pub use ratings::RatingMatrix;
