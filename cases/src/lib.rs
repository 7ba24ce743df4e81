//! NeuroRater's domain: the study model, study bundles (format, validation, import) and the
//! SQLite store; image decoding is the `imaging` crate below it.
//!
//! Nothing here knows about Tauri or a terminal: long work reports through [`progress::Progress`],
//! and every failure is a [`Error`] whose message a user can act on.

pub mod analysis;
pub mod app;
pub mod automatic_metrics;
pub mod bundle;
pub mod case_codes;
pub mod curation;
pub mod dicom_sr;
mod digest;
pub mod error;
pub mod export;
#[cfg(feature = "specta")]
pub mod finite;
pub mod grader_workbench;
pub mod harness;
pub mod ids;
pub mod import;
pub mod marks;
pub mod model;
pub mod package;
pub mod progress;
pub mod rating;
pub mod ratings_import;
pub mod rubric;
pub mod scaffold;
pub mod store;
pub mod text_metrics;
pub mod wide;

pub use error::{Error, ImportError, Result};
