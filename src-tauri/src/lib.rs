//! NeuroRater's desktop app: a Tauri shell over the `cases` crate. `run()` is what the binary
//! calls; `build_app` takes any runtime so tests can drive the app with a mock runtime.

pub mod commands;
pub mod error;
pub mod startup;
pub mod state;
pub mod validate;

use state::AppState;
use tauri::{App, Builder, Context, Runtime};

/// Registers state, commands and the first-start work on `builder`.
pub fn build_app<R: Runtime>(builder: Builder<R>, context: Context<R>) -> tauri::Result<App<R>> {
    builder
        .manage(AppState::default())
        .manage(commands::imaging::VolumeCache::default())
        .manage(commands::calibration::LastReport::default())
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(tauri::generate_handler![
            commands::startup::startup_status,
            commands::catalog::list_studies,
            commands::catalog::list_cases,
            commands::catalog::open_case,
            commands::catalog::list_responses,
            commands::curation::curation_history,
            commands::curation::curation_save_draft,
            commands::curation::curation_submit,
            commands::curation::curation_review,
            commands::curation::curation_diff,
            commands::curation::curation_compare,
            commands::curation::curation_merge,
            commands::curation::curation_save_consensus,
            commands::baseline::baseline_tasks,
            commands::baseline::baseline_blind_task,
            commands::baseline::baseline_submit,
            commands::curation::reveal_ground_truth,
            commands::imaging::series_volume,
            commands::rating::list_raters,
            commands::rating::create_rater,
            commands::rating::current_rater,
            commands::rating::set_current_rater,
            commands::rating::leave_reading,
            commands::rating::create_assignment_plan,
            commands::rating::ensure_demo_queue,
            commands::rating::reading_queue,
            commands::rating::reading_item,
            commands::rating::save_rating,
            commands::rating::add_error_label,
            commands::rating::update_error_label,
            commands::rating::delete_error_label,
            commands::rating::submit_rating,
            commands::rating::reopen_rating,
            commands::rating::set_position,
            commands::rating::resume_position,
            commands::calibration::list_graders,
            commands::calibration::calibration_report,
            commands::calibration::export_calibration_report,
        ])
        .setup(|app| {
            let handle = app.handle().clone();
            std::thread::Builder::new()
                .name("prepare-library".into())
                .spawn(move || startup::prepare_library(handle))?;
            Ok(())
        })
        .build(context)
}

pub fn run() {
    let app =
        build_app(tauri::Builder::default(), tauri::generate_context!()).unwrap_or_else(|e| {
            eprintln!("NeuroRater could not start: {e}");
            std::process::exit(1);
        });
    app.run(|_, _| {});
}
