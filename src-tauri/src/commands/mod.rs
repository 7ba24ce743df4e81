//! The IPC surface: thin adapters that validate arguments, lock the store once and call `cases`.
//! Each command is listed in `build.rs` and granted in `capabilities/default.json`.

pub mod baseline;
pub mod calibration;
pub mod catalog;
pub mod curation;
pub mod imaging;
pub mod metrics;
pub mod new_study;
pub mod package;
pub mod rating;
pub mod rubric;
pub mod startup;
pub mod team;
pub mod workbench;
