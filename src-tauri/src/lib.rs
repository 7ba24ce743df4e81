//! NeuroRater's desktop app: a Tauri shell over the `cases` crate. `run()` is what the binary
//! calls; `build_app` takes any runtime so tests can drive the app with a mock runtime.

pub mod commands;
pub mod error;
pub mod long_work;
pub mod startup;
pub mod state;
pub mod validate;

use std::ffi::OsString;
use std::path::PathBuf;

use state::AppState;
use tauri::{App, Builder, Context, Runtime};

/// Registers state, commands and the first-start work on `builder`. `database` is the file named
/// by `--db`, or `None` for `Store::default_path` (`$NEURORATER_DB`, else the user's data folder).
pub fn build_app<R: Runtime>(
    builder: Builder<R>,
    context: Context<R>,
    database: Option<PathBuf>,
) -> tauri::Result<App<R>> {
    builder
        .manage(AppState::default())
        .manage(cases::app::series::VolumeCache::default())
        .manage(commands::calibration::CalibrationState::default())
        .manage(commands::workbench::ActiveRun::default())
        .manage(commands::package::PackageWork::default())
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
            commands::imaging::series_opening_slice,
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
            commands::calibration::cancel_calibration_report,
            commands::package::import_rater_package,
            commands::package::export_results_package,
            commands::package::merge_results_package,
            commands::package::cancel_package_action,
            commands::workbench::workbench_versions,
            commands::workbench::workbench_add_spec,
            commands::workbench::workbench_new_version,
            commands::workbench::workbench_prompt_diff,
            commands::workbench::workbench_split,
            commands::workbench::workbench_confirm,
            commands::workbench::workbench_disagreements,
            commands::workbench::workbench_item,
            commands::workbench::workbench_drift,
            commands::workbench::workbench_run,
            commands::workbench::workbench_cancel_run,
        ])
        .setup(|app| {
            let handle = app.handle().clone();
            std::thread::Builder::new()
                .name("prepare-library".into())
                .spawn(move || startup::prepare_library(handle, database))?;
            Ok(())
        })
        .build(context)
}

pub fn run() {
    let database = match launch_arguments(std::env::args_os().skip(1)) {
        Ok(Launch::Open { database }) => database,
        Ok(Launch::Version) => {
            // What an installed package is checked by, and what a clinician quotes in a report.
            println!("NeuroRater {}", env!("CARGO_PKG_VERSION"));
            return;
        }
        Err(message) => {
            eprintln!("NeuroRater could not start: {message}");
            std::process::exit(2);
        }
    };
    let app = build_app(
        tauri::Builder::default(),
        tauri::generate_context!(),
        database,
    )
    .unwrap_or_else(|e| {
        eprintln!("NeuroRater could not start: {e}");
        std::process::exit(1);
    });
    app.run(|_, _| {});
}

/// What the command line asks of the app.
#[derive(Debug, PartialEq)]
enum Launch {
    Open { database: Option<PathBuf> },
    Version,
}

/// `--db PATH`, as the CLI takes it (a study lead keeps a database per study; the end-to-end tests
/// give each scenario its own), and `--version`.
fn launch_arguments(mut args: impl Iterator<Item = OsString>) -> Result<Launch, String> {
    let mut database = None;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--version") => return Ok(Launch::Version),
            Some("--db") => match args.next() {
                Some(path) if !path.is_empty() => database = Some(PathBuf::from(path)),
                _ => return Err("--db needs the path of a database file".into()),
            },
            // Launchers (a desktop file, a WebDriver host) may add arguments of their own.
            _ => eprintln!(
                "ignoring the argument {:?}; the app takes only --db PATH and --version",
                arg.to_string_lossy()
            ),
        }
    }
    Ok(Launch::Open { database })
}

#[cfg(test)]
mod tests {
    use super::{launch_arguments, Launch};
    use std::ffi::OsString;
    use std::path::PathBuf;

    fn parse(args: &[&str]) -> Result<Option<PathBuf>, String> {
        match launch_arguments(args.iter().map(OsString::from))? {
            Launch::Open { database } => Ok(database),
            Launch::Version => Err("asked for the version".into()),
        }
    }

    #[test]
    fn the_database_argument_is_optional_and_needs_a_path() {
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(
            parse(&["--db", "/data/study.sqlite"]),
            Ok(Some(PathBuf::from("/data/study.sqlite")))
        );
        assert!(parse(&["--db"]).unwrap_err().contains("needs the path"));
        assert!(parse(&["--db", ""]).unwrap_err().contains("needs the path"));
        assert_eq!(
            parse(&["--automation", "--db", "a.sqlite"]),
            Ok(Some(PathBuf::from("a.sqlite")))
        );
        assert_eq!(
            launch_arguments(["--db", "a.sqlite", "--version"].iter().map(OsString::from)),
            Ok(Launch::Version)
        );
    }
}
