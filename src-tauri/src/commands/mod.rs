//! The IPC surface: thin adapters that validate arguments, lock the store once and call `cases`.
//! Every `pub` fn marked `#[tauri::command]` and `#[specta::specta]` in these files is a command:
//! `build.rs` finds them and makes them the invoke handler, the bindings and the permission set the
//! capability grants (`app-commands`); there is no list to add a command to.

pub mod baseline;
pub mod calibration;
pub mod case_facts;
pub mod catalog;
pub mod curation;
pub mod drafts;
pub mod imaging;
pub mod metrics;
pub mod new_study;
pub mod package;
pub mod rating;
pub mod rubric;
pub mod startup;
pub mod team;
pub mod team_accounts;
pub mod workbench;
