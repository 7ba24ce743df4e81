//! The one writer of the `ratings` and `error_labels` tables. The app's edits, the ratings CSV
//! import and the results merge all store through these functions, so every column is written
//! in one way: dimensions as a JSON map, dimensions marked not applicable as a JSON array, enums
//! as their snake_case names, a mark as its JSON, times from [`NOW_SQL`] unless the rating
//! arrives with its own, and the rubric version it is saved under as the study's current one
//! (the rules checked it against the current rubric), unless a whole rating arrives naming the
//! version it was made under (a rating pulled from the team server).
//!
//! Each runs inside the caller's [`crate::store::Store::write`] transaction; the caller has
//! checked the rules (`rules.rs`) and writes the audit entry.

use super::edits::{LabelEdit, RatingEdit};
use super::RatingStatus;
use crate::store::{enum_text, NOW_SQL};
use rusqlite::{params, Connection};

/// Which read of which response by which rater a rating is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadKey {
    pub response: i64,
    pub rater: i64,
    pub read_no: i64,
}

/// A rating that arrives whole (a results package, a ratings file) with its status and times.
pub(crate) struct WholeRating<'a> {
    pub scores: &'a RatingEdit,
    pub status: RatingStatus,
    pub updated_at: &'a str,
    pub submitted_at: Option<&'a str>,
    /// The rubric version (this database's numbering) it was made under, checked against that
    /// version by the caller; `None`: the study's current one.
    pub rubric_version: Option<u32>,
}

/// The current rubric version of the study of the response `response` (an SQL expression).
fn rubric_version_of(response: &str) -> String {
    format!(
        "(SELECT st.rubric_version FROM responses p JOIN tasks t ON p.task = t.id
          JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
          WHERE p.id = {response})"
    )
}

fn dimensions_json(scores: &RatingEdit) -> String {
    serde_json::to_string(&scores.dimensions).expect("a map of numbers serialises")
}

fn not_applicable_json(scores: &RatingEdit) -> String {
    serde_json::to_string(&scores.not_applicable).expect("a set of names serialises")
}

/// The rating's key, inserting an empty draft on the first edit.
pub(crate) fn ensure_draft(conn: &Connection, key: ReadKey) -> rusqlite::Result<i64> {
    conn.execute(
        &format!(
            "INSERT INTO ratings (response, rater, read_no, updated_at, rubric_version)
             VALUES (?1, ?2, ?3, {NOW_SQL}, {}) ON CONFLICT DO NOTHING",
            rubric_version_of("?1")
        ),
        params![key.response, key.rater, key.read_no],
    )?;
    conn.query_row(
        "SELECT id FROM ratings WHERE response = ?1 AND rater = ?2 AND read_no = ?3",
        params![key.response, key.rater, key.read_no],
        |r| r.get(0),
    )
}

/// Replaces a draft's scores, comment and time on task.
pub(crate) fn set_scores(
    conn: &Connection,
    rating: i64,
    scores: &RatingEdit,
) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "UPDATE ratings SET overall = ?1, dimensions_json = ?2, correctness = ?3,
                 confidence = ?4, comment = ?5, seconds_on_task = ?6, not_applicable_json = ?7,
                 updated_at = {NOW_SQL}, rubric_version = {}
             WHERE id = ?8",
            rubric_version_of("ratings.response")
        ),
        params![
            scores.overall,
            dimensions_json(scores),
            scores.correctness.as_ref().map(enum_text),
            scores.confidence,
            scores.comment,
            scores.seconds_on_task,
            not_applicable_json(scores),
            rating
        ],
    )?;
    Ok(())
}

/// Submits (stamping the submission now) or reopens (clearing it) a rating.
pub(crate) fn set_status(
    conn: &Connection,
    rating: i64,
    status: RatingStatus,
) -> rusqlite::Result<()> {
    let submitted_at = match status {
        RatingStatus::Submitted => NOW_SQL,
        RatingStatus::Draft => "NULL",
    };
    conn.execute(
        &format!(
            "UPDATE ratings SET status = ?1, submitted_at = {submitted_at},
                 updated_at = {NOW_SQL}, rubric_version = {} WHERE id = ?2",
            rubric_version_of("ratings.response")
        ),
        params![enum_text(&status), rating],
    )?;
    Ok(())
}

/// Stamps a rating as changed now (a label edit changes its rating).
pub(crate) fn touch(conn: &Connection, rating: i64) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "UPDATE ratings SET updated_at = {NOW_SQL}, rubric_version = {} WHERE id = ?1",
            rubric_version_of("ratings.response")
        ),
        [rating],
    )?;
    Ok(())
}

/// Adds a whole rating (its labels separately, [`insert_label`]); returns its key.
pub(crate) fn insert_whole(
    conn: &Connection,
    key: ReadKey,
    rating: &WholeRating<'_>,
) -> rusqlite::Result<i64> {
    let scores = rating.scores;
    conn.execute(
        &format!(
            "INSERT INTO ratings (response, rater, read_no, overall, dimensions_json, correctness,
                 confidence, comment, status, seconds_on_task, updated_at, submitted_at,
                 not_applicable_json, rubric_version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, coalesce(?14, {}))",
            rubric_version_of("?1")
        ),
        params![
            key.response,
            key.rater,
            key.read_no,
            scores.overall,
            dimensions_json(scores),
            scores.correctness.as_ref().map(enum_text),
            scores.confidence,
            scores.comment,
            enum_text(&rating.status),
            scores.seconds_on_task,
            rating.updated_at,
            rating.submitted_at,
            not_applicable_json(scores),
            rating.rubric_version
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Overwrites a stored rating with a whole one and removes its labels (the caller adds the new
/// ones).
pub(crate) fn replace_whole(
    conn: &Connection,
    id: i64,
    rating: &WholeRating<'_>,
) -> rusqlite::Result<()> {
    let scores = rating.scores;
    conn.execute(
        &format!(
            "UPDATE ratings SET overall = ?1, dimensions_json = ?2, correctness = ?3,
                 confidence = ?4, comment = ?5, status = ?6, seconds_on_task = ?7,
                 updated_at = ?8, submitted_at = ?9, not_applicable_json = ?10,
                 rubric_version = coalesce(?12, {}) WHERE id = ?11",
            rubric_version_of("ratings.response")
        ),
        params![
            scores.overall,
            dimensions_json(scores),
            scores.correctness.as_ref().map(enum_text),
            scores.confidence,
            scores.comment,
            enum_text(&rating.status),
            scores.seconds_on_task,
            rating.updated_at,
            rating.submitted_at,
            not_applicable_json(scores),
            id,
            rating.rubric_version
        ],
    )?;
    conn.execute("DELETE FROM error_labels WHERE rating = ?1", [id])?;
    Ok(())
}

/// The text a label's span lies in, as stored: none without a span (the table's checks).
fn span_text(label: &LabelEdit) -> Option<String> {
    label.span.map(|_| enum_text(&label.text))
}

fn mark_json(label: &LabelEdit) -> Option<String> {
    label
        .mark
        .as_ref()
        .map(|m| serde_json::to_string(m).expect("a mark serialises"))
}

/// Adds an error label to a rating; returns the label's key.
pub(crate) fn insert_label(
    conn: &Connection,
    rating: i64,
    label: &LabelEdit,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO error_labels (rating, category, severity, span_start, span_end, span_text,
             span_turn, mark_json, comment) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            rating,
            label.category,
            label.severity,
            label.span.map(|s| s[0]),
            label.span.map(|s| s[1]),
            span_text(label),
            label.turn,
            mark_json(label),
            label.comment
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

pub(crate) fn update_label(conn: &Connection, id: i64, label: &LabelEdit) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE error_labels SET category = ?1, severity = ?2, span_start = ?3, span_end = ?4,
             span_text = ?5, span_turn = ?6, mark_json = ?7, comment = ?8 WHERE id = ?9",
        params![
            label.category,
            label.severity,
            label.span.map(|s| s[0]),
            label.span.map(|s| s[1]),
            span_text(label),
            label.turn,
            mark_json(label),
            label.comment,
            id
        ],
    )?;
    Ok(())
}

pub(crate) fn delete_label(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM error_labels WHERE id = ?1", [id])?;
    Ok(())
}
