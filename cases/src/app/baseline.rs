//! The human baseline as a front end offers it: the session's reader answers a task blind, as a
//! model did. The blinding rules (no curator, nobody shown a model answer of the case, one answer
//! per clinician and task) are `curation::baseline`'s; what this layer adds is that a blinded
//! reader sees and names each case by the pseudonymous code of the rest of their view
//! (`catalog`), never by its id, which may name the diagnosis (the demo's `ms-01`).

use super::catalog::{coded_case_id, codes_for};
use super::ReaderSession;
use crate::case_codes::CaseCodes;
use crate::curation::{self, BaselineTask, BlindTask, HumanAnswer, HumanRole};
use crate::store::Store;
use crate::Result;

/// A blind answer as the reader gives it; who gave it is the session's.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub role: HumanRole,
    pub years_experience: Option<u32>,
    pub diagnosis: String,
    /// Ranked, most likely first.
    pub differential: Vec<String>,
    pub reasoning: String,
    pub seconds_on_task: f64,
}

/// A task of a study, named as the reader sees it.
#[derive(Debug, Clone, Copy)]
pub struct TaskRef<'a> {
    pub study_id: &'a str,
    /// The case's code (or, from a front end that has it, its id).
    pub case: &'a str,
    pub task_id: &'a str,
}

fn codes(store: &Store, reader: &ReaderSession, study_id: &str) -> Result<Option<CaseCodes>> {
    codes_for(store, study_id, reader.role().reads_blinded())
}

/// The study's tasks with whether the reader may answer each blind. A blinded reader's are
/// listed by case code, since the order of the ids would group the cases by diagnosis again.
pub fn tasks(store: &Store, reader: &ReaderSession, study_id: &str) -> Result<Vec<BaselineTask>> {
    let mut tasks = curation::baseline_tasks(store, reader.rater().id, study_id)?;
    if let Some(codes) = codes(store, reader, study_id)? {
        for task in &mut tasks {
            task.case_id = codes.code(&task.case_id);
        }
        // Stable: a case's tasks keep their order.
        tasks.sort_by(|a, b| a.case_id.cmp(&b.case_id));
    }
    Ok(tasks)
}

/// What the model was given for the task, for the reader to answer.
pub fn blind_task(store: &Store, reader: &ReaderSession, task: TaskRef<'_>) -> Result<BlindTask> {
    let codes = codes(store, reader, task.study_id)?;
    let case_id = case_id(store, codes.as_ref(), task)?;
    let mut blind = curation::blind_task(
        store,
        reader.rater().id,
        task.study_id,
        &case_id,
        task.task_id,
    )?;
    if let Some(codes) = &codes {
        blind.case_id = codes.code(&case_id);
    }
    Ok(blind)
}

/// Stores the reader's blind answer as a response of kind `human`; returns its key.
pub fn submit(
    store: &mut Store,
    reader: &ReaderSession,
    task: TaskRef<'_>,
    answer: Answer,
) -> Result<i64> {
    let codes = codes(store, reader, task.study_id)?;
    let case_id = case_id(store, codes.as_ref(), task)?;
    let Answer {
        role,
        years_experience,
        diagnosis,
        differential,
        reasoning,
        seconds_on_task,
    } = answer;
    curation::submit_human_answer(
        store,
        &HumanAnswer {
            study_id: task.study_id.to_owned(),
            case_id,
            task_id: task.task_id.to_owned(),
            rater: reader.rater().id,
            role,
            years_experience,
            diagnosis,
            differential,
            reasoning,
            seconds_on_task,
        },
    )
}

fn case_id(store: &Store, codes: Option<&CaseCodes>, task: TaskRef<'_>) -> Result<String> {
    match codes {
        Some(codes) => coded_case_id(store, codes, task.study_id, task.case),
        None => Ok(task.case.to_owned()),
    }
}
