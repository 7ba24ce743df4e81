//! Raw annotations for other tools: ratings, error labels and ground truth, as CSV or JSONL;
//! model responses and grader scores as the lines of docs/formats.md §1 and §2 they came in as (or
//! were run here as), unknown fields of an imported line included.
//!
//! Every row carries `case_id`, `task_id`, `model` and `sample`, the key of `responses.jsonl`
//! and `grader.jsonl`, so exports join with the files the pipeline produced. Ratings and labels
//! also carry their own stable ids (`rating_id`, `label_id`) and `read_no` (1 first read, 2 a
//! repeat read by the same rater). Exports are for analysts, not raters: model names are in.

use crate::model::Turn;
use crate::store::Store;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Ratings,
    Errors,
    GroundTruth,
    /// `responses.jsonl` lines (docs/formats.md §1).
    Responses,
    /// `grader.jsonl` lines (docs/formats.md §2).
    Grader,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
}

/// The export as text, rows in a stable order.
pub fn export(store: &Store, what: What, format: Format) -> Result<String> {
    let (columns, rows) = match what {
        What::Ratings => ratings(store)?,
        What::Errors => errors(store)?,
        What::GroundTruth => ground_truth(store)?,
        What::Responses => responses(store)?,
        What::Grader => grader_scores(store)?,
    };
    match format {
        Format::Jsonl => Ok(rows
            .iter()
            .map(|row| serde_json::to_string(row).unwrap_or_default() + "\n")
            .collect()),
        Format::Csv => to_csv(&columns, &rows),
    }
}

type Rows = (Vec<String>, Vec<Map<String, Value>>);

const RESPONSE_KEY_SQL: &str = "st.study_id, c.case_id, t.task_id, r.model, r.sample";

fn ratings(store: &Store) -> Result<Rows> {
    let sql = format!(
        "SELECT {RESPONSE_KEY_SQL}, ra.name, ra.role, g.overall, g.dimensions_json, g.correctness,
                g.confidence, g.status, g.seconds_on_task, g.updated_at, g.comment, g.id,
                g.read_no, g.submitted_at, g.not_applicable_json, g.rubric_version
         FROM ratings g JOIN raters ra ON g.rater = ra.id JOIN responses r ON g.response = r.id
         JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
         JOIN studies st ON c.study = st.id
         ORDER BY st.study_id, c.case_id, t.task_id, r.model, r.sample, ra.name, g.read_no"
    );
    let mut dimension_ids = BTreeSet::new();
    let mut rows = query(store, &sql, |row| {
        let mut map = response_key(row)?;
        map.insert("rating_id".into(), row.get::<_, i64>(15)?.into());
        map.insert("read_no".into(), row.get::<_, i64>(16)?.into());
        map.insert("rater".into(), row.get::<_, String>(5)?.into());
        map.insert("rater_role".into(), row.get::<_, String>(6)?.into());
        map.insert("overall".into(), number(row.get::<_, Option<f64>>(7)?));
        map.insert(
            "dimensions".into(),
            serde_json::from_str(&row.get::<_, String>(8)?).unwrap_or(Value::Null),
        );
        map.insert(
            "correctness".into(),
            row.get::<_, Option<String>>(9)?.into(),
        );
        map.insert("confidence".into(), row.get::<_, Option<i64>>(10)?.into());
        map.insert("status".into(), row.get::<_, String>(11)?.into());
        map.insert("seconds_on_task".into(), number(Some(row.get(12)?)));
        map.insert("updated_at".into(), row.get::<_, String>(13)?.into());
        map.insert(
            "submitted_at".into(),
            row.get::<_, Option<String>>(17)?.into(),
        );
        map.insert("comment".into(), row.get::<_, String>(14)?.into());
        map.insert(
            "not_applicable".into(),
            serde_json::from_str(&row.get::<_, String>(18)?).unwrap_or(Value::Null),
        );
        map.insert("rubric_version".into(), row.get::<_, i64>(19)?.into());
        Ok(map)
    })?;
    for row in &rows {
        if let Some(Value::Object(dimensions)) = row.get("dimensions") {
            dimension_ids.extend(dimensions.keys().cloned());
        }
    }
    let mut columns = key_columns();
    columns.extend(["rating_id", "read_no", "rater", "rater_role", "overall"].map(String::from));
    // In CSV each rubric dimension gets its own column; JSONL keeps the object.
    columns.extend(dimension_ids.iter().map(|id| format!("dimension:{id}")));
    columns.extend(
        [
            // The dimensions marked "not applicable", a JSON array: not a score in any column.
            "not_applicable",
            "correctness",
            "confidence",
            "status",
            "seconds_on_task",
            "updated_at",
            "submitted_at",
            "comment",
            // The version of the study's rubric the rating was last saved under (last column:
            // added after the others, so a reader by position keeps working).
            "rubric_version",
        ]
        .map(String::from),
    );
    for row in &mut rows {
        let dimensions = row.get("dimensions").cloned();
        for id in &dimension_ids {
            let value = dimensions
                .as_ref()
                .and_then(|d| d.get(id))
                .cloned()
                .unwrap_or(Value::Null);
            row.insert(format!("dimension:{id}"), value);
        }
    }
    Ok((columns, rows))
}

fn errors(store: &Store) -> Result<Rows> {
    let sql = format!(
        "SELECT {RESPONSE_KEY_SQL}, ra.name, e.id, e.category, e.severity, e.span_start,
                e.span_end, e.mark_json, e.comment, r.rationale, g.id, g.read_no, e.span_text,
                e.span_turn, r.answer, r.turns_json
         FROM error_labels e JOIN ratings g ON e.rating = g.id JOIN raters ra ON g.rater = ra.id
         JOIN responses r ON g.response = r.id JOIN tasks t ON r.task = t.id
         JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
         ORDER BY st.study_id, c.case_id, t.task_id, r.model, r.sample, ra.name, g.read_no, e.id"
    );
    let rows = query(store, &sql, |row| {
        let mut map = response_key(row)?;
        map.insert("rating_id".into(), row.get::<_, i64>(14)?.into());
        map.insert("read_no".into(), row.get::<_, i64>(15)?.into());
        map.insert("rater".into(), row.get::<_, String>(5)?.into());
        map.insert("label_id".into(), row.get::<_, i64>(6)?.into());
        map.insert("category".into(), row.get::<_, String>(7)?.into());
        map.insert("severity".into(), row.get::<_, i64>(8)?.into());
        map.insert("span_start".into(), row.get::<_, Option<i64>>(9)?.into());
        map.insert("span_end".into(), row.get::<_, Option<i64>>(10)?.into());
        let text = row.get::<_, Option<String>>(16)?;
        let turn = row.get::<_, Option<u32>>(17)?;
        map.insert("text".into(), text.clone().into());
        map.insert("turn".into(), turn.into());
        map.insert(
            "mark".into(),
            row.get::<_, Option<String>>(11)?
                .and_then(|m| serde_json::from_str(&m).ok())
                .unwrap_or(Value::Null),
        );
        map.insert("comment".into(), row.get::<_, String>(12)?.into());
        let span = row
            .get::<_, Option<u32>>(9)?
            .zip(row.get::<_, Option<u32>>(10)?);
        let quoted = match (text.as_deref(), turn) {
            (Some("answer"), _) => Some(row.get::<_, String>(18)?),
            (Some("turn"), Some(turn)) => row
                .get::<_, Option<String>>(19)?
                .and_then(|t| serde_json::from_str::<Vec<Turn>>(&t).ok())
                .and_then(|turns| turns.into_iter().nth(turn as usize))
                .map(|t| t.content),
            _ => row.get::<_, Option<String>>(13)?,
        };
        map.insert(
            "quote".into(),
            span.zip(quoted)
                .and_then(|((start, end), text)| utf16_slice(&text, start, end))
                .into(),
        );
        Ok(map)
    })?;
    let mut columns = key_columns();
    columns.extend(
        [
            "rating_id",
            "read_no",
            "rater",
            "label_id",
            "category",
            "severity",
            "span_start",
            "span_end",
            "quote",
            "mark",
            "comment",
            "text",
            "turn",
        ]
        .map(String::from),
    );
    Ok((columns, rows))
}

/// Each case's current ground truth, with `imported_final`: whether it is final only as it
/// arrived (the study bundle's, or `import-ground-truth`), not reviewed by a second curator here.
fn ground_truth(store: &Store) -> Result<Rows> {
    use crate::curation::versions::{imported_final, Source, Status, MAIN_BRANCH};
    let rows = query(
        store,
        // The current ground truth is the latest final version of main; a case without stored
        // versions still has the study bundle's.
        &format!(
            "SELECT st.study_id, c.case_id, g.body_json, g.source,
                    coalesce((SELECT v.source FROM ground_truth_versions v
                              WHERE v.case_ref = g.case_ref AND v.branch = '{MAIN_BRANCH}'
                                AND v.status = 'final'
                              ORDER BY v.version DESC LIMIT 1), 'bundle')
             FROM ground_truth g
             JOIN cases c ON g.case_ref = c.id JOIN studies st ON c.study = st.id
             ORDER BY st.study_id, c.case_id"
        ),
        |row| {
            let version_source: Source =
                serde_json::from_value(Value::String(row.get::<_, String>(4)?)).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        4,
                        rusqlite::types::Type::Text,
                        Box::new(e),
                    )
                })?;
            let mut map = Map::new();
            map.insert("study_id".into(), row.get::<_, String>(0)?.into());
            map.insert("case_id".into(), row.get::<_, String>(1)?.into());
            let body: Value =
                serde_json::from_str(&row.get::<_, String>(2)?).unwrap_or(Value::Null);
            map.insert(
                "diagnosis".into(),
                body.get("diagnosis").cloned().unwrap_or(Value::Null),
            );
            map.insert(
                "diagnosis_code".into(),
                body.get("diagnosis_code").cloned().unwrap_or(Value::Null),
            );
            map.insert(
                "difficulty".into(),
                body.get("difficulty").cloned().unwrap_or(Value::Null),
            );
            map.insert("source".into(), row.get::<_, String>(3)?.into());
            map.insert(
                "imported_final".into(),
                imported_final(Status::Final, version_source).into(),
            );
            map.insert("ground_truth".into(), body);
            Ok(map)
        },
    )?;
    let columns = [
        "study_id",
        "case_id",
        "diagnosis",
        "diagnosis_code",
        "difficulty",
        "source",
        "imported_final",
        "ground_truth",
    ]
    .map(String::from)
    .to_vec();
    Ok((columns, rows))
}

/// §1 lines. No `study_id`: the line format has none, and an added field would come back as an
/// unknown field on re-import; the lines of a database with several studies say so by their cases.
fn responses(store: &Store) -> Result<Rows> {
    let rows = query(
        store,
        "SELECT c.case_id, t.task_id, r.model, r.sample, r.answer, r.rationale, r.turns_json,
                r.extra_json
         FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
         JOIN studies st ON c.study = st.id
         ORDER BY st.study_id, c.case_id, t.task_id, r.model, r.sample",
        |row| {
            let mut map = line_key(row)?;
            map.insert("answer".into(), row.get::<_, String>(4)?.into());
            if let Some(rationale) = row.get::<_, Option<String>>(5)? {
                map.insert("rationale".into(), rationale.into());
            }
            insert_json(&mut map, "turns", row.get(6)?);
            append_extra(&mut map, &row.get::<_, String>(7)?);
            Ok(map)
        },
    )?;
    let columns = [
        "case_id",
        "task_id",
        "model",
        "sample",
        "answer",
        "rationale",
        "turns",
    ]
    .map(String::from)
    .to_vec();
    Ok((columns, rows))
}

/// §2 lines, one per stored grader score.
fn grader_scores(store: &Store) -> Result<Rows> {
    let rows = query(
        store,
        "SELECT c.case_id, t.task_id, r.model, r.sample, g.grader, g.score, g.dimensions_json,
                g.errors_json, g.rationale, g.extra_json
         FROM grader_scores g JOIN responses r ON g.response = r.id JOIN tasks t ON r.task = t.id
         JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
         ORDER BY st.study_id, c.case_id, t.task_id, r.model, r.sample, g.grader",
        |row| {
            let mut map = line_key(row)?;
            map.insert("grader".into(), row.get::<_, String>(4)?.into());
            map.insert("score".into(), number(Some(row.get(5)?)));
            insert_json(&mut map, "dimensions", row.get(6)?);
            insert_json(&mut map, "errors", row.get(7)?);
            if let Some(rationale) = row.get::<_, Option<String>>(8)? {
                map.insert("rationale".into(), rationale.into());
            }
            append_extra(&mut map, &row.get::<_, String>(9)?);
            Ok(map)
        },
    )?;
    let columns = [
        "case_id",
        "task_id",
        "model",
        "sample",
        "grader",
        "score",
        "dimensions",
        "errors",
        "rationale",
    ]
    .map(String::from)
    .to_vec();
    Ok((columns, rows))
}

fn line_key(row: &rusqlite::Row<'_>) -> rusqlite::Result<Map<String, Value>> {
    let mut map = Map::new();
    map.insert("case_id".into(), row.get::<_, String>(0)?.into());
    map.insert("task_id".into(), row.get::<_, String>(1)?.into());
    map.insert("model".into(), row.get::<_, String>(2)?.into());
    map.insert("sample".into(), row.get::<_, i64>(3)?.into());
    Ok(map)
}

/// An optional field stored as JSON text: present only when stored.
fn insert_json(map: &mut Map<String, Value>, field: &str, text: Option<String>) {
    if let Some(value) = text.and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
        map.insert(field.into(), value);
    }
}

/// An imported line's unknown fields, kept on import, leave with it.
fn append_extra(map: &mut Map<String, Value>, extra_json: &str) {
    if let Ok(Value::Object(extra)) = serde_json::from_str::<Value>(extra_json) {
        for (field, value) in extra {
            map.entry(field).or_insert(value);
        }
    }
}

/// Spans are stored in UTF-16 code units (what the reading screen's JavaScript counts).
fn utf16_slice(text: &str, start: u32, end: u32) -> Option<String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    units
        .get(start as usize..end as usize)
        .map(String::from_utf16_lossy)
}

fn key_columns() -> Vec<String> {
    ["study_id", "case_id", "task_id", "model", "sample"]
        .map(String::from)
        .to_vec()
}

fn response_key(row: &rusqlite::Row<'_>) -> rusqlite::Result<Map<String, Value>> {
    let mut map = Map::new();
    map.insert("study_id".into(), row.get::<_, String>(0)?.into());
    map.insert("case_id".into(), row.get::<_, String>(1)?.into());
    map.insert("task_id".into(), row.get::<_, String>(2)?.into());
    map.insert("model".into(), row.get::<_, String>(3)?.into());
    map.insert("sample".into(), row.get::<_, i64>(4)?.into());
    Ok(map)
}

fn number(value: Option<f64>) -> Value {
    value
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

fn query(
    store: &Store,
    sql: &str,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<Map<String, Value>>,
) -> Result<Vec<Map<String, Value>>> {
    let fail = |e| Error::database(store.path(), "reading annotations to export", e);
    let mut stmt = store.read().prepare(sql).map_err(fail)?;
    let rows = stmt.query_map([], map).map_err(fail)?;
    rows.collect::<rusqlite::Result<_>>().map_err(fail)
}

fn to_csv(columns: &[String], rows: &[Map<String, Value>]) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let write_failed = |e: csv::Error| Error::Corrupt {
        what: format!("a value could not be written as CSV: {e}"),
    };
    writer.write_record(columns).map_err(write_failed)?;
    for row in rows {
        writer
            .write_record(columns.iter().map(|c| cell(row.get(c))))
            .map_err(write_failed)?;
    }
    let bytes = writer.into_inner().map_err(|e| Error::Corrupt {
        what: format!("CSV output failed: {e}"),
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}
