//! Human-baseline reader mode: the current rater answers a task as the models did, blind to the
//! ground truth and to the models' answers. Thin adapters: the arguments are checked here, the
//! blinding rules (no curator, nobody who has seen the case's model answers, one answer per
//! clinician and task) in `cases::curation::baseline`.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use crate::validate;
use cases::app::Session;
use cases::curation::{self, BaselineTask, BlindTask, HumanAnswer, HumanRole};
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
fn acting_rater(store: &Store) -> Result<i64, CommandError> {
    Ok(Session::current(store)?.reader()?.rater().id)
}

fn invalid(message: String) -> CommandError {
    CommandError::new(ErrorCode::InvalidArgument, message)
}

/// The study's tasks with whether the current rater may answer each blind.
#[tauri::command]
#[specta::specta]
pub async fn baseline_tasks(
    state: State<'_, AppState>,
    study_id: String,
) -> Result<Vec<BaselineTask>, CommandError> {
    let study_id = validate::id("study_id", &study_id)?;
    state.with_store(|store| {
        let rater = acting_rater(store)?;
        Ok(curation::baseline_tasks(store, rater, study_id)?)
    })
}

/// What the model was given for the task, for the current rater to answer.
#[tauri::command]
#[specta::specta]
pub async fn baseline_blind_task(
    state: State<'_, AppState>,
    study_id: String,
    case_id: String,
    task_id: String,
) -> Result<BlindTask, CommandError> {
    let study_id = validate::id("study_id", &study_id)?;
    let case_id = validate::id("case_id", &case_id)?;
    let task_id = validate::id("task_id", &task_id)?;
    state.with_store(|store| {
        let rater = acting_rater(store)?;
        Ok(curation::blind_task(
            store, rater, study_id, case_id, task_id,
        )?)
    })
}

/// Stores the current rater's blind answer as a response of kind `human`; returns its key.
#[allow(clippy::too_many_arguments)]
#[tauri::command]
#[specta::specta]
pub async fn baseline_submit(
    state: State<'_, AppState>,
    study_id: String,
    case_id: String,
    task_id: String,
    role: HumanRole,
    years_experience: Option<u32>,
    diagnosis: String,
    differential: Vec<String>,
    reasoning: String,
    seconds_on_task: f64,
) -> Result<i64, CommandError> {
    let study_id = validate::id("study_id", &study_id)?;
    let case_id = validate::id("case_id", &case_id)?;
    let task_id = validate::id("task_id", &task_id)?;
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
    state.with_store_mut(|store| {
        let rater = acting_rater(store)?;
        Ok(curation::submit_human_answer(
            store,
            &HumanAnswer {
                study_id: study_id.to_owned(),
                case_id: case_id.to_owned(),
                task_id: task_id.to_owned(),
                rater,
                role,
                years_experience,
                diagnosis,
                differential,
                reasoning,
                seconds_on_task,
            },
        )?)
    })
}
