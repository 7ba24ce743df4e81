//! The calibration view: the report of `neurorater calibrate`, built from the open database off
//! the UI thread, its plots (the HTML report's own SVG), and export to the file the user picked in
//! the save dialog. The view gets the headline first (an event: the verdict's dimension alone,
//! a small part of the work), then the whole report with progress events; a build can be
//! cancelled, and a new one cancels the one before. Built reports are kept per study, options
//! and data version (`cases::app::calibration::ReportCache`).

use crate::error::{CommandError, ErrorCode};
use crate::long_work::{EventProgress, LongWork, Overlap, Started};
use crate::state::AppState;
use calibration::html::Plots;
use calibration::input::ReportOptions;
use calibration::report::{Report, ReportError};
use cases::app::calibration::ReportCache;
use cases::app::{LeadSession, Session};
use cases::ids::Id;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tauri::{AppHandle, Emitter, Runtime, State};

/// The report shows grader scores and every model's answer: only a lead's session opens it.
fn lead(store: &cases::store::Store) -> Result<LeadSession, CommandError> {
    Ok(Session::current(store)?.unblinded("The calibration report")?)
}

/// The event the calibration view follows while the bootstrap runs.
pub const PROGRESS_EVENT: &str = "calibration-progress";
/// The event carrying the headline while the rest of the report is built.
pub const HEADLINE_EVENT: &str = "calibration-headline";
/// Resamples the view may ask for: fewer gives unstable intervals, more only costs time.
const RESAMPLES: std::ops::RangeInclusive<usize> = 200..=20_000;
/// Grader and rater names come from the study; this bounds what the webview may send.
const MAX_RATER_NAME: usize = 200;
/// More clinicians than a study has: this bounds the list the webview may send.
const MAX_EXCLUDED_RATERS: usize = 1000;

/// The calibration view's state: the last report built, which export writes out (the exported
/// file holds exactly the numbers on screen, without bootstrapping again), the reports kept for
/// showing again, and the build under way, which a cancel or a newer build stops.
pub struct CalibrationState {
    last: Mutex<Option<Arc<Report>>>,
    cache: Arc<ReportCache>,
    building: LongWork,
}

impl Default for CalibrationState {
    fn default() -> Self {
        CalibrationState {
            last: Mutex::default(),
            cache: Arc::default(),
            // A report for options since changed is no longer wanted, and a build writes
            // nothing (it only fills the cache once done): the newer build replaces it.
            building: LongWork::new(Overlap::Replace),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CalibrationOptions {
    /// A string, as every seed crossing IPC (`cases::wide`).
    #[serde(default, with = "cases::wide::option_u64_string")]
    #[specta(type = Option<String>)]
    pub seed: Option<u64>,
    pub resamples: Option<usize>,
    /// The verdict's bar on Pearson r.
    pub bar: Option<f64>,
    /// The non-inferiority margin on r against one more clinician (`calibrate --margin`).
    pub margin: Option<f64>,
    /// Clinicians the analyst leaves out (`calibrate --exclude-rater`): a pilot, a trainee.
    pub excluded_raters: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationView {
    /// The report in the documented JSON schema (docs/report-schema.md).
    pub report: serde_json::Value,
    pub plots: Plots,
    /// False for the headline: the verdict's dimension alone, its alternative annotator test
    /// not yet corrected over the whole report.
    pub complete: bool,
    /// Whether the report was kept from an earlier build on the same data.
    pub cached: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct HeadlinePayload {
    /// The view's number for the build, so it ignores a headline of one it replaced.
    request: u32,
    view: CalibrationView,
}

/// Every grader that scored a response of the study, for the grader picker.
#[tauri::command]
#[specta::specta]
pub async fn list_graders(
    state: State<'_, AppState>,
    study_id: Id,
) -> Result<Vec<String>, CommandError> {
    state.with_store(|store| {
        Ok(cases::app::calibration::graders(
            store,
            &lead(store)?,
            &study_id,
        )?)
    })
}

/// The calibration report of `grader` against the study's clinicians; every other grader that
/// scored the study is compared with it as another version (drift), never counted as a clinician.
/// Unless kept from an earlier build on the same data, the headline is sent first as a
/// [`HEADLINE_EVENT`], then the whole report is built with [`PROGRESS_EVENT`]s and returned.
/// `request` is the view's number for this build, echoed in the events.
#[tauri::command]
#[specta::specta]
pub async fn calibration_report<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    reports: State<'_, CalibrationState>,
    study_id: Id,
    grader: String,
    request: Option<u32>,
    options: Option<CalibrationOptions>,
) -> Result<CalibrationView, CommandError> {
    let grader = grader_name(&grader)?;
    let options = report_options(options.unwrap_or_default())?;
    let options = ReportOptions {
        grader: Some(grader.to_owned()),
        ..options
    };
    let building = reports.building.start()?;
    build_or_reuse(
        app,
        &state,
        &reports,
        &study_id,
        options,
        request.unwrap_or_default(),
        &building,
    )
    .await
}

/// The report kept for this study, options and data, else the headline as an event and the whole
/// report built and kept.
async fn build_or_reuse<R: Runtime>(
    app: AppHandle<R>,
    state: &AppState,
    reports: &CalibrationState,
    study_id: &str,
    options: ReportOptions,
    request: u32,
    building: &Started<'_>,
) -> Result<CalibrationView, CommandError> {
    let kept = state.with_store(|store| {
        Ok(reports
            .cache
            .get(store, &lead(store)?, study_id, &options)?)
    })?;
    if let Some(report) = kept {
        return show(reports, report, true);
    }
    // The headline is built as soon as the scores are read, in the same snapshot, and sent while
    // the ground truth and the answers the missed findings need are read and the rest is built. It is a small part of the
    // work and is not cancelled; a cancel or a newer build stops the whole report at its next
    // section. A headline that cannot be built (the whole report may still be: a rater who
    // scored only other dimensions, left out by name) is not sent.
    let study = state.with_store(|store| {
        Ok(cases::app::calibration::study_report_with_headline(
            store,
            &lead(store)?,
            study_id,
            options,
            |headline| {
                if let Ok(view) = headline
                    .map_err(report_failed)
                    .and_then(|h| view_of(&h, false, false))
                {
                    // A closed window cannot listen; the whole report still follows.
                    let _ = app.emit(HEADLINE_EVENT, HeadlinePayload { request, view });
                }
            },
        )?)
    })?;
    let progress = EventProgress::new(app, PROGRESS_EVENT, request, building);
    let cache = Arc::clone(&reports.cache);
    let built = tauri::async_runtime::spawn_blocking(move || {
        study.build_into(&cache, &progress).map_err(report_failed)
    })
    .await
    .map_err(|e| {
        CommandError::new(
            ErrorCode::Database,
            format!("the calibration report stopped unexpectedly: {e}"),
        )
    })??;
    show(reports, built, false)
}

/// Removes every `pairs` member, wherever it sits.
fn without_pairs(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("pairs");
            map.values_mut().for_each(without_pairs);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(without_pairs),
        _ => {}
    }
}

/// Stops the report being built, if any; whether one was. Its `calibration_report` call fails
/// with `cancelled`, and the view keeps what it showed.
#[tauri::command]
#[specta::specta]
pub async fn cancel_calibration_report(
    reports: State<'_, CalibrationState>,
) -> Result<bool, CommandError> {
    Ok(reports.building.cancel())
}

fn report_failed(error: ReportError) -> CommandError {
    match error {
        ReportError::Cancelled => CommandError::new(ErrorCode::Cancelled, error.to_string()),
        other => CommandError::new(ErrorCode::InvalidArgument, other.to_string()),
    }
}

/// `report` as the view shows it; the whole report also becomes the one export writes out.
fn show(
    reports: &CalibrationState,
    report: Arc<Report>,
    cached: bool,
) -> Result<CalibrationView, CommandError> {
    let view = view_of(&report, true, cached)?;
    *reports.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
    Ok(view)
}

/// The report as the view receives it: the JSON of docs/report-schema.md without the per-item
/// score pairs (`pairs`, what the plots are drawn from; the plots come drawn), which are half the
/// report at 2,304 items and grow with the study. Exports keep them.
fn view_of(report: &Report, complete: bool, cached: bool) -> Result<CalibrationView, CommandError> {
    let mut json = serde_json::to_value(report)
        .map_err(|e| CommandError::new(ErrorCode::Database, format!("report to JSON: {e}")))?;
    without_pairs(&mut json);
    Ok(CalibrationView {
        report: json,
        plots: calibration::html::plots(report),
        complete,
        cached,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Html,
    Json,
    Csv,
}

/// Writes the report on screen to `path`, the file the user chose in the save dialog: HTML or
/// JSON as that file, CSV as a new folder of that name holding one file per table. Returns what
/// was written.
#[tauri::command]
#[specta::specta]
pub async fn export_calibration_report(
    state: State<'_, AppState>,
    reports: State<'_, CalibrationState>,
    format: ExportFormat,
    path: String,
) -> Result<Vec<String>, CommandError> {
    state.with_store(|store| lead(store).map(drop))?;
    let target = export_target(Path::new(&path), format)?;
    let report = reports
        .last
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .ok_or_else(|| {
            CommandError::new(
                ErrorCode::NotReady,
                "no calibration report yet: open the calibration view and let it finish",
            )
        })?;
    let files: Vec<(PathBuf, String)> = match format {
        ExportFormat::Html => vec![(target, calibration::html::to_html(&report))],
        ExportFormat::Json => vec![(target, calibration::tables::to_json(&report))],
        ExportFormat::Csv => {
            std::fs::create_dir(&target).map_err(|e| export_failed(&target, e))?;
            calibration::tables::to_csv_tables(&report)
                .into_iter()
                .map(|(name, text)| (target.join(name), text))
                .collect()
        }
    };
    let mut written = Vec::new();
    for (file, text) in files {
        std::fs::write(&file, text).map_err(|e| export_failed(&file, e))?;
        written.push(file.display().to_string());
    }
    Ok(written)
}

fn export_failed(path: &Path, error: std::io::Error) -> CommandError {
    CommandError::new(
        ErrorCode::ExportFailed,
        format!("{}: could not be written: {error}", path.display()),
    )
}

fn grader_name(name: &str) -> Result<&str, CommandError> {
    rater_name("grader", name)
}

/// A rater name the webview sends: whether it is in the study, the report itself says.
fn rater_name<'a>(field: &str, name: &'a str) -> Result<&'a str, CommandError> {
    if name.is_empty() || name.len() > MAX_RATER_NAME || name.chars().any(char::is_control) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: must be 1 to {MAX_RATER_NAME} printable characters"),
        ));
    }
    Ok(name)
}

fn report_options(options: CalibrationOptions) -> Result<ReportOptions, CommandError> {
    let defaults = ReportOptions::default();
    let invalid = |message: String| Err(CommandError::new(ErrorCode::InvalidArgument, message));
    let resamples = options.resamples.unwrap_or(defaults.bootstrap_resamples);
    if !RESAMPLES.contains(&resamples) {
        return invalid(format!(
            "options.resamples: {resamples} is outside {} to {}",
            RESAMPLES.start(),
            RESAMPLES.end()
        ));
    }
    let bar = options.bar.unwrap_or(defaults.bar_pearson_r);
    if !(bar > -1.0 && bar < 1.0) {
        return invalid(format!(
            "options.bar: {bar} is not a correlation between -1 and 1"
        ));
    }
    let margin = options.margin.unwrap_or(defaults.non_inferiority_margin);
    if !(margin > 0.0 && margin < 2.0) {
        return invalid(format!(
            "options.margin: {margin} is not a margin on r (need 0 < margin < 2)"
        ));
    }
    let excluded_raters = options.excluded_raters.unwrap_or_default();
    if excluded_raters.len() > MAX_EXCLUDED_RATERS {
        return invalid(format!(
            "options.excludedRaters: {} names, at most {MAX_EXCLUDED_RATERS}",
            excluded_raters.len()
        ));
    }
    for name in &excluded_raters {
        rater_name("options.excludedRaters", name)?;
    }
    Ok(ReportOptions {
        seed: options.seed.unwrap_or(defaults.seed),
        bootstrap_resamples: resamples,
        bar_pearson_r: bar,
        non_inferiority_margin: margin,
        excluded_raters,
        ..defaults
    })
}

/// The exact file the save dialog returned, checked: absolute, in an existing folder (resolved
/// through symbolic links), with the format's extension, and not an existing folder. Anything
/// else is refused rather than adjusted, so the file written is the one the user saw.
fn export_target(path: &Path, format: ExportFormat) -> Result<PathBuf, CommandError> {
    let refuse = |why: &str| {
        Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("path: {}: {why}", path.display()),
        ))
    };
    if !path.is_absolute() {
        return refuse("must be an absolute path from the save dialog");
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return refuse("names no file");
    };
    if name == ".." || name == "." {
        return refuse("names no file");
    }
    let Ok(parent) = parent.canonicalize() else {
        return refuse("its folder does not exist");
    };
    if !parent.is_dir() {
        return refuse("its folder does not exist");
    }
    let target = parent.join(name);
    let extension = target
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match (format, extension.as_deref()) {
        (ExportFormat::Html, Some("html" | "htm")) | (ExportFormat::Json, Some("json")) => {
            if target.is_dir() {
                return refuse("is a folder");
            }
        }
        (ExportFormat::Csv, _) => {
            if target.exists() {
                return refuse("already exists; the CSV tables go into a new folder of this name");
            }
        }
        (ExportFormat::Html, _) => return refuse("an HTML report must end in .html"),
        (ExportFormat::Json, _) => return refuse("a JSON report must end in .json"),
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_goes_to_the_chosen_file_in_its_resolved_folder() {
        let dir = tempfile_dir();
        let real = dir.join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let chosen = link.join("Report.HTML");
        assert_eq!(
            export_target(&chosen, ExportFormat::Html).unwrap(),
            real.canonicalize().unwrap().join("Report.HTML")
        );
        assert_eq!(
            export_target(&real.join("tables"), ExportFormat::Csv).unwrap(),
            real.canonicalize().unwrap().join("tables")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn export_refuses_what_the_dialog_cannot_have_returned() {
        let dir = tempfile_dir();
        std::fs::create_dir(dir.join("existing")).unwrap();
        let cases = [
            (
                PathBuf::from("report.html"),
                ExportFormat::Html,
                "must be an absolute path",
            ),
            (
                dir.join("missing/report.html"),
                ExportFormat::Html,
                "its folder does not exist",
            ),
            (
                dir.join("report.json"),
                ExportFormat::Html,
                "must end in .html",
            ),
            (
                dir.join("report.html"),
                ExportFormat::Json,
                "must end in .json",
            ),
            (dir.join("existing"), ExportFormat::Csv, "already exists"),
            (PathBuf::from("/"), ExportFormat::Json, "names no file"),
        ];
        for (path, format, why) in cases {
            let error = export_target(&path, format).expect_err(why);
            assert_eq!(error.code, ErrorCode::InvalidArgument);
            assert!(
                error.message.contains(why),
                "{}: {}",
                path.display(),
                error.message
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn options_outside_their_range_are_refused_by_name() {
        let bad = [
            (
                CalibrationOptions {
                    resamples: Some(10),
                    ..Default::default()
                },
                "options.resamples",
            ),
            (
                CalibrationOptions {
                    bar: Some(1.5),
                    ..Default::default()
                },
                "options.bar",
            ),
            (
                CalibrationOptions {
                    bar: Some(f64::NAN),
                    ..Default::default()
                },
                "options.bar",
            ),
            (
                CalibrationOptions {
                    margin: Some(0.0),
                    ..Default::default()
                },
                "options.margin",
            ),
            (
                CalibrationOptions {
                    excluded_raters: Some(vec!["trainee\u{7}".into()]),
                    ..Default::default()
                },
                "options.excludedRaters",
            ),
        ];
        for (options, field) in bad {
            let error = report_options(options).expect_err(field);
            assert!(error.message.starts_with(field), "{}", error.message);
        }
        let defaults = report_options(CalibrationOptions::default()).unwrap();
        assert_eq!(defaults, ReportOptions::default());
        let chosen = report_options(CalibrationOptions {
            margin: Some(0.1),
            excluded_raters: Some(vec!["pilot-reader".into()]),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(chosen.non_inferiority_margin, 0.1);
        assert_eq!(chosen.excluded_raters, ["pilot-reader"]);
        assert!(grader_name("demo-grader-v1").is_ok());
        assert!(grader_name("").is_err());
        assert!(grader_name("a\nb").is_err());
    }

    /// A fresh folder under the system's temporary directory.
    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "neurorater-export-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
