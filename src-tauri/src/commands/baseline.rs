//! Human-baseline reader mode: the current rater answers a task as the models did, blind to the
//! ground truth and to the models' answers. Thin adapters: the arguments are checked here; the
//! reader, and the case codes a blinded reader sees, are `cases::app::baseline`'s; the blinding
//! rules (no curator, nobody who has seen the case's model answers, one answer per clinician and
//! task) `cases::curation::baseline`'s.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::app::baseline::{self, Answer, TaskRef};
use cases::app::{ReaderSession, Session};
use cases::curation::{BaselineTask, BlindTask, HumanRole};
use cases::ids::Id;
use cases::store::Store;
use tauri::State;

/// A diagnosis is a phrase; a paragraph belongs in the reasoning.
const MAX_DIAGNOSIS_CHARS: usize = 500;
/// A ranked differential longer than this is not a differential.
const MAX_DIFFERENTIAL_ITEMS: usize = 20;
const MAX_REASONING_BYTES: usize = 20_000;
/// A day: a longer timer was left running.
const MAX_SECONDS_ON_TASK: f64 = 86_400.0;

/// A human-baseline answer is given as oneself: the reader's session (`cases::app`).
fn reader(store: &Store) -> Result<ReaderSession, CommandError> {
    Ok(Session::current(store)?.reader()?)
}

fn invalid(message: String) -> CommandError {
    CommandError::new(ErrorCode::InvalidArgument, message)
}

/// The study's tasks with whether the current rater may answer each blind; a blinded reader's
/// cases by their codes.
#[tauri::command]
#[specta::specta]
pub async fn baseline_tasks(
    state: State<'_, AppState>,
    study_id: Id,
) -> Result<Vec<BaselineTask>, CommandError> {
    state.with_store(|store| Ok(baseline::tasks(store, &reader(store)?, &study_id)?))
}

/// What the model was given for the task, for the current rater to answer; `case_id` is the
/// case as the task list named it (a blinded reader's code).
#[tauri::command]
#[specta::specta]
pub async fn baseline_blind_task(
    state: State<'_, AppState>,
    study_id: Id,
    case_id: Id,
    task_id: Id,
) -> Result<BlindTask, CommandError> {
    let task = TaskRef {
        study_id: &study_id,
        case: &case_id,
        task_id: &task_id,
    };
    state.with_store(|store| Ok(baseline::blind_task(store, &reader(store)?, task)?))
}

/// Stores the current rater's blind answer as a response of kind `human`; returns its key.
#[allow(clippy::too_many_arguments)]
#[tauri::command]
#[specta::specta]
pub async fn baseline_submit(
    state: State<'_, AppState>,
    study_id: Id,
    case_id: Id,
    task_id: Id,
    role: HumanRole,
    years_experience: Option<u32>,
    diagnosis: String,
    differential: Vec<String>,
    reasoning: String,
    seconds_on_task: f64,
) -> Result<i64, CommandError> {
    let chars = diagnosis.chars().count();
    if chars > MAX_DIAGNOSIS_CHARS {
        return Err(invalid(format!(
            "diagnosis: at most {MAX_DIAGNOSIS_CHARS} characters, got {chars}"
        )));
    }
    if differential.len() > MAX_DIFFERENTIAL_ITEMS {
        return Err(invalid(format!(
            "differential: at most {MAX_DIFFERENTIAL_ITEMS} diagnoses, got {}",
            differential.len()
        )));
    }
    if let Some(rank) = differential
        .iter()
        .position(|d| d.chars().count() > MAX_DIAGNOSIS_CHARS)
    {
        return Err(invalid(format!(
            "differential[{rank}]: at most {MAX_DIAGNOSIS_CHARS} characters"
        )));
    }
    if reasoning.len() > MAX_REASONING_BYTES {
        return Err(invalid(format!(
            "reasoning: at most {MAX_REASONING_BYTES} bytes, got {}",
            reasoning.len()
        )));
    }
    if !(seconds_on_task.is_finite() && (0.0..=MAX_SECONDS_ON_TASK).contains(&seconds_on_task)) {
        return Err(invalid(format!(
            "seconds_on_task: 0 to {MAX_SECONDS_ON_TASK} seconds, got {seconds_on_task}"
        )));
    }
    let task = TaskRef {
        study_id: &study_id,
        case: &case_id,
        task_id: &task_id,
    };
    let answer = Answer {
        role,
        years_experience,
        diagnosis,
        differential,
        reasoning,
        seconds_on_task,
    };
    state.with_store_mut(|store| {
        let reader = reader(store)?;
        Ok(baseline::submit(store, &reader, task, answer)?)
    })
}
