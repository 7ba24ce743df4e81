//! "New study…" (the study lead's): scan folders a PACS exported into a draft, look at each
//! series' thumbnails, correct labels, fill disease groups and tasks, import. The draft and its
//! rules are `cases::app::new_study`'s; this module checks arguments, keeps the one draft of the
//! window, runs the scan off the UI thread with progress events and a cancel flag.

use crate::commands::imaging::RawBytes;
use crate::error::{CommandError, ErrorCode};
use crate::long_work::{EventProgress, LongWork, Overlap};
use crate::state::AppState;
use crate::validate;
use cases::app::new_study::{
    self, CaseEdit, Draft, DraftCase, DraftView, ImportOutcome, NewStudyRequest, ScanOutcome,
};
use cases::app::permissions::Action;
use cases::app::{LeadSession, Session};
use cases::bundle::Problem;
use cases::harness::{ColumnMap, Defaults};
use cases::ids::Id;
use cases::import::ImportSummary;
use cases::scaffold::{Dates, ResponsesInput};
use cases::store::Store;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use tauri::{AppHandle, Runtime, State};

/// The event scan and import report through.
pub const PROGRESS_EVENT: &str = "new-study-progress";
/// More source folders than anyone picks by hand is a page gone wrong.
const MAX_SOURCES: usize = 64;
const MAX_TASKS: usize = 64;
const MAX_TEXT_BYTES: usize = 100_000;
const MAX_NAME: usize = 200;

/// The window's one new study: the scan running or the draft it made.
pub struct NewStudyState {
    scanning: LongWork,
    draft: Mutex<Option<Draft>>,
}

impl Default for NewStudyState {
    fn default() -> Self {
        NewStudyState {
            // A scan writes its draft folder as it goes, and the window holds one draft.
            scanning: LongWork::new(Overlap::Refuse(
                "a scan is already going; wait for it or cancel it first",
            )),
            draft: Mutex::default(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data behind the lock: a panic elsewhere leaves nothing half-changed to guard.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn lead(store: &Store) -> Result<LeadSession, CommandError> {
    Ok(Session::current(store)?.study_lead(Action::BuildStudy)?)
}

/// A `file:line: field: message` row of the problems table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ProblemRow {
    pub file: String,
    pub line: Option<usize>,
    pub field: String,
    pub message: String,
}

fn rows(problems: Vec<Problem>) -> Vec<ProblemRow> {
    problems
        .into_iter()
        .map(|p| ProblemRow {
            file: p.file,
            line: p.line,
            field: p.field,
            message: p.message,
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ScanReply {
    Drafted { draft: DraftView },
    Cancelled,
    Refused { problems: Vec<ProblemRow> },
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ImportReply {
    Imported { summary: ImportSummary },
    Refused { problems: Vec<ProblemRow> },
}

/// A harness's answers as the form gives them: the file, its column map, and the model's name
/// when the file has no model column.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct ResponsesArg {
    pub path: String,
    pub map: String,
    pub model: Option<String>,
}

fn refuse(field: &str, path: &Path, why: &str) -> CommandError {
    CommandError::new(
        ErrorCode::InvalidArgument,
        format!("{field}: {}: {why}", path.display()),
    )
}

/// An absolute path to something that exists, resolved through symbolic links.
fn existing(field: &str, path: &str) -> Result<PathBuf, CommandError> {
    let path = Path::new(path);
    if !path.is_absolute() {
        return Err(refuse(field, path, "must be an absolute path"));
    }
    path.canonicalize()
        .map_err(|_| refuse(field, path, "does not exist"))
}

fn text(field: &str, value: &str, max: usize) -> Result<(), CommandError> {
    if value.len() > max {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: at most {max} bytes, got {}", value.len()),
        ));
    }
    Ok(())
}

fn request(
    sources: &[String],
    folder: &str,
    study_id: &str,
    shift_dates: bool,
    responses: Option<ResponsesArg>,
) -> Result<NewStudyRequest, CommandError> {
    if sources.is_empty() || sources.len() > MAX_SOURCES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("sources: choose 1 to {MAX_SOURCES} folders"),
        ));
    }
    let sources = sources
        .iter()
        .map(|s| existing("sources", s))
        .collect::<Result<Vec<_>, _>>()?;
    let folder = existing("folder", folder)?;
    if !folder.is_dir() {
        return Err(refuse("folder", &folder, "is not a folder"));
    }
    let study_id = validate::id("study_id", study_id)?.to_owned();
    let responses = match responses {
        None => None,
        Some(ResponsesArg { path, map, model }) => {
            let path = existing("responses", &path)?;
            if !path.is_file() {
                return Err(refuse("responses", &path, "is not a file"));
            }
            text("map", &map, MAX_TEXT_BYTES)?;
            let map: ColumnMap = map.parse().map_err(|e: String| {
                CommandError::new(ErrorCode::InvalidArgument, format!("map: {e}"))
            })?;
            let model = model.filter(|m| !m.trim().is_empty());
            if let Some(model) = &model {
                text("model", model, MAX_NAME)?;
            }
            Some(ResponsesInput {
                path,
                map,
                defaults: Defaults {
                    model,
                    task_id: None,
                },
            })
        }
    };
    Ok(NewStudyRequest {
        sources,
        folder,
        study_id,
        responses,
        dates: if shift_dates {
            Dates::ShiftPerPatient
        } else {
            Dates::Remove
        },
    })
}

/// Scans `sources` into a new draft of study `study_id` (to live in `folder/study_id`), dates
/// shifted by one offset per patient or removed,
/// reporting through [`PROGRESS_EVENT`] until done or cancelled. A draft made before is
/// discarded first: the window holds one.
// Tauri passes a command's managed state and arguments as its parameters: the form's five fields
// and three injected handles.
#[allow(clippy::too_many_arguments)]
#[tauri::command]
#[specta::specta]
pub async fn new_study_scan<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    new_study: State<'_, NewStudyState>,
    sources: Vec<String>,
    folder: String,
    study_id: String,
    shift_dates: bool,
    responses: Option<ResponsesArg>,
) -> Result<ScanReply, CommandError> {
    let request = request(&sources, &folder, &study_id, shift_dates, responses)?;
    let lead = state.with_store(lead)?;
    let scanning = new_study.scanning.start()?;
    // Dropping the previous draft removes its folder.
    lock(&new_study.draft).take();
    let progress = EventProgress::new(app, PROGRESS_EVENT, 0, &scanning);
    let stop = scanning.stop();
    let scanned = tauri::async_runtime::spawn_blocking(move || {
        new_study::scan(&lead, &request, &progress, stop.flag())
    })
    .await;
    drop(scanning);
    let scanned = scanned.map_err(|e| {
        CommandError::new(
            ErrorCode::Database,
            format!("the scan stopped unexpectedly: {e}"),
        )
    })??;
    Ok(match scanned {
        ScanOutcome::Drafted(draft) => {
            let view = draft.view();
            *lock(&new_study.draft) = Some(*draft);
            ScanReply::Drafted { draft: view }
        }
        ScanOutcome::Cancelled => ScanReply::Cancelled,
        ScanOutcome::Refused(problems) => ScanReply::Refused {
            problems: rows(problems),
        },
    })
}

/// Cancels the new study: stops a scan in progress (which then removes what it wrote), or
/// discards the draft and its folder. False when there was nothing to cancel.
#[tauri::command]
#[specta::specta]
pub async fn new_study_cancel(new_study: State<'_, NewStudyState>) -> Result<bool, CommandError> {
    if new_study.scanning.cancel() {
        return Ok(true);
    }
    Ok(lock(&new_study.draft).take().is_some())
}

fn with_draft<T>(
    state: &AppState,
    new_study: &NewStudyState,
    act: impl FnOnce(&mut Draft) -> Result<T, CommandError>,
) -> Result<T, CommandError> {
    state.with_store(lead)?;
    match &mut *lock(&new_study.draft) {
        Some(draft) => act(draft),
        None => Err(CommandError::new(
            ErrorCode::NotFound,
            "no new study is open: scan its folders first",
        )),
    }
}

/// The lead's label for a series (no longer a guess).
#[tauri::command]
#[specta::specta]
pub async fn new_study_label(
    state: State<'_, AppState>,
    new_study: State<'_, NewStudyState>,
    case_id: Id,
    series_id: Id,
    label: String,
) -> Result<DraftCase, CommandError> {
    text("label", &label, MAX_NAME)?;
    with_draft(&state, &new_study, |draft| {
        Ok(draft.set_label(&case_id, &series_id, &label)?)
    })
}

/// The lead's disease group, clinical note and tasks for a case.
#[tauri::command]
#[specta::specta]
pub async fn new_study_edit_case(
    state: State<'_, AppState>,
    new_study: State<'_, NewStudyState>,
    case_id: Id,
    edit: CaseEdit,
) -> Result<DraftCase, CommandError> {
    text("clinical_note", &edit.clinical_note, MAX_TEXT_BYTES)?;
    if edit.tasks.len() > MAX_TASKS {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("tasks: at most {MAX_TASKS} per case"),
        ));
    }
    for task in &edit.tasks {
        validate::id("task id", task.id.trim())?;
        text("prompt", &task.prompt, MAX_TEXT_BYTES)?;
    }
    with_draft(&state, &new_study, |draft| {
        Ok(draft.edit_case(&case_id, edit)?)
    })
}

/// A series' thumbnails side by side, as one PNG.
#[tauri::command]
#[specta::specta]
pub async fn new_study_thumbnails(
    state: State<'_, AppState>,
    new_study: State<'_, NewStudyState>,
    case_id: Id,
    series_id: Id,
) -> Result<RawBytes, CommandError> {
    with_draft(&state, &new_study, |draft| {
        Ok(RawBytes::new(draft.thumbnail_strip(&case_id, &series_id)?))
    })
}

/// Imports the draft as corrected: the bundle moves into place and the study is stored in one
/// transaction. Refused (with the problems) leaves the draft open for corrections.
#[tauri::command]
#[specta::specta]
pub async fn new_study_import<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    new_study: State<'_, NewStudyState>,
) -> Result<ImportReply, CommandError> {
    let progress = EventProgress::unstoppable(app, PROGRESS_EVENT);
    let mut slot = lock(&new_study.draft);
    let Some(draft) = slot.as_mut() else {
        return Err(CommandError::new(
            ErrorCode::NotFound,
            "no new study is open: scan its folders first",
        ));
    };
    let outcome = state.with_store_mut(|store| {
        let lead = lead(store)?;
        Ok(draft.import(store, &lead, &progress)?)
    })?;
    Ok(match outcome {
        ImportOutcome::Imported(summary) => {
            // Imported: the bundle is the study's now, and the window's draft is done.
            slot.take();
            ImportReply::Imported { summary }
        }
        ImportOutcome::Refused(problems) => ImportReply::Refused {
            problems: rows(problems),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary directory, resolved.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "neurorater-new-study-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    fn refused(result: Result<NewStudyRequest, CommandError>) -> String {
        let error = result.expect_err("refused");
        assert_eq!(error.code, ErrorCode::InvalidArgument);
        error.message
    }

    #[test]
    fn what_the_form_sends_is_checked_before_any_scan() {
        let dir = temp_dir("request");
        let export = dir.join("export");
        std::fs::create_dir(&export).unwrap();
        let responses = dir.join("answers.csv");
        std::fs::write(&responses, "study,prediction\n").unwrap();
        let folder = dir.display().to_string();
        let source = vec![export.display().to_string()];
        let arg = |path: &Path, map: &str| {
            Some(ResponsesArg {
                path: path.display().to_string(),
                map: map.into(),
                model: Some("vlm-a".into()),
            })
        };

        let ok = request(
            &source,
            &folder,
            "pacs-study",
            true,
            arg(&responses, "case_id=study,answer=prediction"),
        )
        .unwrap();
        assert_eq!(ok.sources, std::slice::from_ref(&export));
        assert_eq!(ok.dates, Dates::ShiftPerPatient);
        assert_eq!(
            ok.responses.unwrap().defaults.model.as_deref(),
            Some("vlm-a")
        );

        assert!(refused(request(&[], &folder, "s", false, None)).starts_with("sources:"));
        let relative = vec!["export".to_owned()];
        assert!(refused(request(&relative, &folder, "s", false, None)).contains("absolute"));
        let missing = vec![dir.join("nope").display().to_string()];
        assert!(refused(request(&missing, &folder, "s", false, None)).contains("does not exist"));
        let file_as_folder = responses.display().to_string();
        assert!(
            refused(request(&source, &file_as_folder, "s", false, None)).contains("not a folder")
        );
        assert!(refused(request(&source, &folder, "../up", false, None)).starts_with("study_id:"));
        assert!(refused(request(
            &source,
            &folder,
            "s",
            false,
            arg(&responses, "answer=prediction")
        ))
        .starts_with("map:"));
        assert!(refused(request(
            &source,
            &folder,
            "s",
            false,
            arg(&export, "case_id=study,answer=prediction")
        ))
        .contains("not a file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
