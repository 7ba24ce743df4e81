//! The one writer of what models, graders and human baselines produced: `responses` and
//! `grader_scores`. The bundle import, the runner's model and grader runs and the human baseline
//! all store through here, so a column either table gains is written in one place. Each row is
//! stored once (the tables' unique keys): a second arrival is reported as already stored, never
//! written over.

use super::Write;
use crate::Result;
use rusqlite::params;

/// Who answered a task: a model (imported or run here), or a clinician answering as a human
/// baseline (`curation::baseline`), whose answer is read blinded as a model's is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Respondent {
    Model,
    Human,
}

impl Respondent {
    fn column(self) -> &'static str {
        match self {
            Respondent::Model => "model",
            Respondent::Human => "human",
        }
    }
}

/// One answer to a task, as stored.
#[derive(Debug, Clone)]
pub struct NewResponse<'a> {
    pub task: i64,
    /// The model's name, or a human baseline's label.
    pub model: &'a str,
    pub sample: i64,
    pub answer: &'a str,
    pub rationale: Option<&'a str>,
    /// The whole consultation, for a task with a follow-up script.
    pub turns_json: Option<String>,
    pub extra_json: String,
    pub respondent: Respondent,
}

/// Stores `response`: its key, or `None` when the task already has that model's sample.
pub fn add_response(w: &Write<'_>, response: &NewResponse<'_>) -> Result<Option<i64>> {
    let added = w
        .tx()
        .prepare_cached(
            "INSERT INTO responses (task, model, sample, answer, rationale, turns_json,
                 extra_json, respondent_kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (task, model, sample) DO NOTHING",
        )
        .and_then(|mut insert| {
            insert.execute(params![
                response.task,
                response.model,
                response.sample,
                response.answer,
                response.rationale,
                response.turns_json,
                response.extra_json,
                response.respondent.column(),
            ])
        })
        .map_err(|e| w.fail("storing a response", e))?;
    Ok((added == 1).then(|| w.tx().last_insert_rowid()))
}

/// One grader's score of one response, as stored.
#[derive(Debug, Clone)]
pub struct NewGraderScore<'a> {
    pub response: i64,
    pub grader: &'a str,
    pub score: f64,
    pub dimensions_json: Option<String>,
    pub errors_json: Option<String>,
    pub rationale: Option<&'a str>,
    pub extra_json: String,
}

/// Stores `score`: its key, or `None` when the response already has a score from that grader
/// (another run, or an earlier import, got there first).
pub fn add_grader_score(w: &Write<'_>, score: &NewGraderScore<'_>) -> Result<Option<i64>> {
    let added = w
        .tx()
        .prepare_cached(
            "INSERT INTO grader_scores (response, grader, score, dimensions_json, errors_json,
                 rationale, extra_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (response, grader) DO NOTHING",
        )
        .and_then(|mut insert| {
            insert.execute(params![
                score.response,
                score.grader,
                score.score,
                score.dimensions_json,
                score.errors_json,
                score.rationale,
                score.extra_json,
            ])
        })
        .map_err(|e| w.fail("storing a grader score", e))?;
    Ok((added == 1).then(|| w.tx().last_insert_rowid()))
}
