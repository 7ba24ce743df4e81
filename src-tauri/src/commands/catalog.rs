//! The study catalogue as raters see it: blinded (no model names, no grader output), which the
//! `cases` store guarantees for these types; a blinded reader's cases carry a pseudonymous code
//! and no disease group (`cases::app::catalog` decides).

use crate::error::CommandError;
use crate::state::AppState;
use cases::app::Session;
use cases::ids::{Id, Key};
use cases::store::{CaseSummary, CaseView, ResponseView, StudySummary};
use tauri::State;

#[tauri::command]
#[specta::specta]
pub async fn list_studies(state: State<'_, AppState>) -> Result<Vec<StudySummary>, CommandError> {
    state.with_store(|store| Ok(store.studies()?))
}

#[tauri::command]
#[specta::specta]
pub async fn list_cases(
    state: State<'_, AppState>,
    study_id: Id,
) -> Result<Vec<CaseSummary>, CommandError> {
    state.with_store(|store| {
        let session = Session::current(store)?;
        Ok(cases::app::catalog::cases(store, &session, &study_id)?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn open_case(
    state: State<'_, AppState>,
    study_id: Id,
    case_id: Id,
) -> Result<CaseView, CommandError> {
    state.with_store(|store| {
        let session = Session::current(store)?;
        Ok(cases::app::catalog::case(
            store, &session, &study_id, &case_id,
        )?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn list_responses(
    state: State<'_, AppState>,
    task_key: Key,
) -> Result<Vec<ResponseView>, CommandError> {
    // Every answer to a task side by side, outside the queue: a clinician who saw them would
    // rate, or answer as a human baseline, already knowing what the models said.
    state.with_store(|store| {
        let lead = Session::current(store)?.unblinded("The case view's answers")?;
        Ok(cases::app::responses(store, &lead, task_key.get())?)
    })
}
