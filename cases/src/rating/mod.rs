//! Rating: raters, seeded reading assignments, the blinded reading payload and every edit a rater
//! makes (scores, error labels, submit, reopen). `docs/rating.md` describes the rules.
//!
//! **Invariants.** Every change runs in one [`Store::write`] transaction with an audit entry whose
//! actor is the acting rater's name and which carries the state before and after. A rater only
//! ever reaches their own assignments: another rater's id is "not found", never a refusal that
//! would confirm it exists. Nothing a rater receives names the model, the sample, the response's
//! key, a grader's output or another rater's work.

mod assignment;
mod edits;
mod fold;
mod on_server;
pub mod outbox;
mod raters;
mod reading;
pub(crate) mod rules;
pub(crate) mod table;

pub use assignment::{
    PlanMaker, PlanRaterSummary, PlanSpec, PlanSummary, StratifyBy, TopUpSpec, TopUpSummary,
    DEMO_STUDY_ID, STUDY_LEAD,
};
pub use edits::{EditAck, LabelAck, LabelEdit, RatingEdit, SpanText};
pub use fold::{ratings_against_audit, FoldCheck, Unaccounted};
pub use on_server::{edits_to_reach, TeamEdit, TeamRating, TeamRatingState};
pub(crate) use raters::insert_rater;
pub use raters::{Rater, RaterRole, MAX_YEARS_EXPERIENCE};
pub(crate) use reading::stored_rating;
pub(crate) use reading::SHOWN_TO_RATER_SQL;
pub use reading::{
    ErrorLabelView, ItemStatus, QueueItem, RatingView, ReadingCase, ReadingItem, ReadingResponse,
    ReadingSeries, ReadingTask, ResumePoint, TaxonomyCategory,
};
pub use rules::{OutdatedScore, ReopenLock};

use crate::model::{Rubric, TaskFamily, Taxonomy, Turn};
use crate::store::Store;
use crate::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Why a rating operation was not done; each message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RatingError {
    /// An argument is out of range or unknown; names the field.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The item's state forbids the change (submitted, not open yet, assigned in another plan).
    #[error("{0}")]
    Refused(String),
    /// Submit without every required field; `missing` names them (`overall`,
    /// `dimensions.<id>`, `correctness`, `confidence`).
    #[error("the rating cannot be submitted yet: {} still empty", missing.join(", "))]
    Incomplete { missing: Vec<String> },
    /// An edit made as one rater arrived while another (or nobody) reads at this workstation
    /// (`app::Session::reader_as`): not written, so the front end keeps it for its reader.
    #[error("{0}")]
    ReaderChanged(String),
}

pub(crate) fn invalid(field: &str, message: impl Into<String>) -> Error {
    Error::Rating(RatingError::Invalid {
        field: field.to_owned(),
        message: message.into(),
    })
}

pub(crate) fn refused(message: impl Into<String>) -> Error {
    Error::Rating(RatingError::Refused(message.into()))
}

/// The field a mark outside its series' volume is reported under.
pub(crate) const MARK_POINTS_FIELD: &str = "mark.points_lps_mm";

/// Why a label's mark lies outside its series' volume, if it does: checked as a curator's lesion
/// marks are (`Mark::check_inside`), for the app's label edits and a merged results package
/// alike (a point off the images would be shown nowhere), against the series' geometry stored at
/// import (`store::geometry`), which `case` keeps for the marks of every label. The mark must
/// name one of the case's series (`rules::label_violations` checks that first).
pub(crate) fn mark_outside_volume(
    store: &Store,
    case: &crate::curation::CaseContext,
    mark: &crate::marks::Mark,
) -> Result<Option<String>> {
    Ok(rules::mark_outside(
        &case.geometry(store, &mark.series_id)?,
        mark,
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RatingStatus {
    Draft,
    Submitted,
}

/// Final-answer correctness; it feeds pass@k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Correctness {
    Correct,
    Partly,
    Incorrect,
}

pub(crate) use crate::store::NOW_SQL;

/// A rater's own assignment, resolved from its id. `NotFound` for anyone else's.
#[derive(Debug, Clone)]
pub(crate) struct Assignment {
    pub response: i64,
    pub read_no: i64,
    pub not_before: Option<String>,
    pub available: bool,
    pub study: i64,
}

pub(crate) fn own_assignment(
    conn: &Connection,
    rater: i64,
    assignment: i64,
) -> rusqlite::Result<Option<Assignment>> {
    conn.query_row(
        "SELECT a.response, a.read_no, a.not_before,
                a.not_before IS NULL OR a.not_before <= date('now'), p.study
         FROM assignments a JOIN assignment_plans p ON a.plan = p.id
         WHERE a.id = ?1 AND a.rater = ?2",
        [assignment, rater],
        |row| {
            Ok(Assignment {
                response: row.get(0)?,
                read_no: row.get(1)?,
                not_before: row.get(2)?,
                available: row.get(3)?,
                study: row.get(4)?,
            })
        },
    )
    .optional()
}

pub(crate) fn assignment_not_found(assignment: i64) -> Error {
    Error::NotFound {
        what: format!("assignment {assignment} in your reading queue"),
    }
}

/// What validating an edit of a response's rating needs: the study's rubric and taxonomy, the
/// texts labels point into and the case's series marks may be drawn on.
pub(crate) struct ResponseContext {
    pub rubric: Rubric,
    /// The task's family: which of the rubric's dimensions a rating of it has.
    pub family: TaskFamily,
    pub taxonomy: Taxonomy,
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Vec<Turn>,
    pub series_ids: Vec<String>,
    /// The case's key, to load a series' geometry for a mark.
    pub case_key: i64,
}

impl ResponseContext {
    pub(crate) fn labels(&self) -> rules::LabelContext<'_> {
        rules::LabelContext {
            taxonomy: &self.taxonomy,
            answer: &self.answer,
            rationale: self.rationale.as_deref(),
            turns: &self.turns,
            series_ids: &self.series_ids,
        }
    }
}

pub(crate) fn response_context(
    conn: &Connection,
    path: &Path,
    response: i64,
) -> Result<ResponseContext> {
    let fail = |e| Error::database(path, "reading the study's rubric and taxonomy", e);
    type Row = (
        String,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        i64,
        String,
    );
    let (study_id, rubric_json, taxonomy_json, answer, rationale, turns_json, case_ref, family): Row = conn
        .query_row(
            "SELECT st.study_id, st.rubric_json, st.taxonomy_json, r.answer, r.rationale,
                    r.turns_json, c.id, t.family
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id WHERE r.id = ?1",
            [response],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                    row.get(7)?,
                ))
            },
        )
        .map_err(fail)?;
    let series_ids = conn
        .prepare("SELECT series_id FROM series WHERE case_ref = ?1 ORDER BY id")
        .and_then(|mut stmt| {
            stmt.query_map([case_ref], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .map_err(fail)?;
    Ok(ResponseContext {
        rubric: crate::store::stored_rubric(&study_id, &rubric_json)?,
        family: reading::enum_value(&family, "a task family")?,
        taxonomy: crate::store::stored_taxonomy(&study_id, &taxonomy_json)?,
        answer,
        rationale,
        turns: turns_json
            .map(|t| {
                serde_json::from_str(&t).map_err(|e| Error::Corrupt {
                    what: format!("the turns of response {response}: {e}"),
                })
            })
            .transpose()?
            .unwrap_or_default(),
        series_ids,
        case_key: case_ref,
    })
}

impl Store {
    fn fail(&self, doing: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
        let doing = doing.to_owned();
        move |e| Error::database(self.path(), &doing, e)
    }
}
