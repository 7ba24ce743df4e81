//! What a rater reads: their queue, one blinded item, and where they left off.
//!
//! **Blinding.** [`ReadingItem`] is built field by field from columns that cannot unblind: no
//! model name, sample number, response key, grader output, `extra_json` (the demo's planted
//! errors live there) or other raters' ratings, and the case by its pseudonymous code, not its
//! id (`case_codes`). Tests check the serialised JSON.

use super::{
    assignment_not_found, own_assignment, refused, Correctness, LabelEdit, RatingStatus, SpanText,
};
use crate::model::{Anchor, Modality, Rubric, SeriesKind, Sex, SliceRef, TaskFamily, Turn};
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    NotStarted,
    Draft,
    Submitted,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QueueItem {
    pub assignment: i64,
    pub position: u32,
    pub total: u32,
    pub status: ItemStatus,
    pub available: bool,
    /// YYYY-MM-DD a repeat read opens on.
    pub opens_on: Option<String>,
    /// Seconds the rater's rating of it has recorded so far; `None` before it is started. The
    /// queue's "about N minutes left" is the rater's own pace on what they submitted.
    pub seconds_on_task: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReadingCase {
    /// The case's pseudonymous code (`case_codes`), never its id: an id may name the diagnosis.
    pub case_code: String,
    pub age: u32,
    pub sex: Sex,
    pub modality: Modality,
    pub ehr: BTreeMap<String, serde_json::Value>,
    pub clinical_note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReadingTask {
    pub prompt: String,
    pub family: TaskFamily,
    pub level: u8,
    pub key_images: Vec<SliceRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReadingSeries {
    pub key: i64,
    pub series_id: String,
    pub label: String,
    pub kind: SeriesKind,
    pub n_images: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReadingResponse {
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Option<Vec<Turn>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TaxonomyCategory {
    pub code: String,
    pub name: String,
    pub definition: String,
    pub anchor: Anchor,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ErrorLabelView {
    pub id: i64,
    pub category: String,
    pub severity: u8,
    /// [start, end) in UTF-16 code units of the text `text` names.
    pub span: Option<[u32; 2]>,
    /// The text the span lies in (the rationale for a label without a span).
    pub text: SpanText,
    /// With `text: turn`, the turn's index in the response's turns.
    pub turn: Option<u32>,
    pub mark: Option<crate::marks::Mark>,
    pub comment: String,
}

impl ErrorLabelView {
    /// The label as an edit sets it: every field but its row id. Every field is named, so a
    /// field added to labels fails to compile here until edits carry it too.
    pub(crate) fn edit(&self) -> LabelEdit {
        let ErrorLabelView {
            id: _,
            category,
            severity,
            span,
            text,
            turn,
            mark,
            comment,
        } = self;
        LabelEdit {
            category: category.clone(),
            severity: *severity,
            span: *span,
            text: *text,
            turn: *turn,
            mark: mark.clone(),
            comment: comment.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RatingView {
    pub status: RatingStatus,
    #[cfg_attr(feature = "specta", specta(type = Option<crate::finite::Finite>))]
    pub overall: Option<f64>,
    #[cfg_attr(feature = "specta", specta(type = BTreeMap<String, crate::finite::Finite>))]
    pub dimensions: BTreeMap<String, f64>,
    /// Dimensions marked "not applicable".
    pub not_applicable: BTreeSet<String>,
    pub correctness: Option<Correctness>,
    pub confidence: Option<u8>,
    pub comment: String,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub seconds_on_task: f64,
    pub updated_at: String,
    pub submitted_at: Option<String>,
    pub labels: Vec<ErrorLabelView>,
}

impl RatingView {
    /// The part a rater edits, as the rules check it.
    pub fn scores(&self) -> super::RatingEdit {
        super::RatingEdit {
            overall: self.overall,
            dimensions: self.dimensions.clone(),
            not_applicable: self.not_applicable.clone(),
            correctness: self.correctness,
            confidence: self.confidence,
            comment: self.comment.clone(),
            seconds_on_task: self.seconds_on_task,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReadingItem {
    pub assignment: i64,
    pub position: u32,
    pub total: u32,
    pub case: ReadingCase,
    pub task: ReadingTask,
    pub series: Vec<ReadingSeries>,
    pub response: ReadingResponse,
    pub rubric: Rubric,
    pub taxonomy: Vec<TaxonomyCategory>,
    pub rating: Option<RatingView>,
    /// When this rater saw the case's ground truth (after submitting); from then on the rating
    /// is locked (`reopen_rating` refuses), and the screen says so instead of offering Reopen.
    pub ground_truth_seen_at: Option<String>,
    /// Why this rating may not be reopened once submitted, if it may not: decided by the rule
    /// `reopen_rating` applies (`rules::reopen_refusal`), so the screen shows the reason instead
    /// of offering what would be refused.
    pub reopen_refused: Option<super::rules::ReopenLock>,
    /// The scores of a draft the study's current rubric no longer admits (it moved on since they
    /// were saved): the screen takes them out of the draft and says so. Empty for a submitted
    /// rating, which keeps the rubric version it was submitted under.
    pub outdated_scores: Vec<super::rules::OutdatedScore>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ResumePoint {
    pub study_id: String,
    pub assignment: i64,
}

/// The rater's whole queue for a study: plans in creation order, positions within each.
/// A row of [`QUEUE_SQL`]: assignment, not before, open now, rating status, seconds on task.
type QueueColumns = (i64, Option<String>, bool, Option<String>, Option<f64>);

const QUEUE_SQL: &str = "SELECT a.id, a.not_before,
        a.not_before IS NULL OR a.not_before <= date('now'), g.status, g.seconds_on_task
     FROM assignments a JOIN assignment_plans p ON a.plan = p.id
     LEFT JOIN ratings g ON g.response = a.response AND g.rater = a.rater AND g.read_no = a.read_no
     WHERE a.rater = ?1 AND p.study = ?2 ORDER BY p.id, a.position";

/// The model answers `?1` (a rater's key) has been shown, with when, as rows `(response, at)`:
/// items handed over in Reading (`show item`; `open item`, the position recorded on opening,
/// covers databases from before `show item` was recorded) and responses they have a rating of
/// (imported ratings included). An assignment alone shows nothing. Blinding rules use this one
/// definition.
pub(crate) const SHOWN_TO_RATER_SQL: &str = "
    SELECT a.response AS response, l.at AS at FROM audit_log l
      JOIN assignments a ON a.id = CAST(substr(l.entity, 12) AS INTEGER)
     WHERE l.action = 'show item' AND l.entity LIKE 'assignment:%' AND a.rater = ?1
    UNION ALL
    SELECT a.response, l.at FROM audit_log l
      JOIN assignments a ON a.id = json_extract(l.after_json, '$.assignment')
     WHERE l.action = 'open item' AND a.rater = ?1
    UNION ALL
    SELECT g.response, g.updated_at FROM ratings g WHERE g.rater = ?1";

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt {
        what: format!("{what}: {e}"),
    })
}

impl Store {
    pub fn reading_queue(&self, rater: i64, study_id: &str) -> Result<Vec<QueueItem>> {
        self.rater(rater)?;
        let study = self.study_key_for_rating(study_id)?;
        let rows: Vec<QueueColumns> = self
            .read()
            .prepare(QUEUE_SQL)
            .and_then(|mut stmt| {
                stmt.query_map(params![rater, study], |r| r.try_into())?
                    .collect()
            })
            .map_err(self.fail("reading the queue"))?;
        let total = rows.len() as u32;
        Ok(rows
            .into_iter()
            .enumerate()
            .map(
                |(index, (assignment, not_before, available, status, seconds_on_task))| QueueItem {
                    assignment,
                    position: index as u32 + 1,
                    total,
                    status: match status.as_deref() {
                        None => ItemStatus::NotStarted,
                        Some("submitted") => ItemStatus::Submitted,
                        Some(_) => ItemStatus::Draft,
                    },
                    available,
                    opens_on: not_before.filter(|_| !available),
                    seconds_on_task,
                },
            )
            .collect())
    }

    /// The blinded payload of one of the rater's own assignments. Handing it over shows the rater
    /// the model's answer: the first time is recorded (`show item` in the audit log), so that
    /// blinding elsewhere (a human-baseline answer, [`SHOWN_TO_RATER_SQL`]) follows what the rater
    /// has actually been shown, not what is merely in their queue.
    pub fn reading_item(&mut self, rater: i64, assignment: i64) -> Result<ReadingItem> {
        let item = self.blinded_item(rater, assignment)?;
        self.record_shown(rater, assignment)?;
        Ok(item)
    }

    fn record_shown(&mut self, rater: i64, assignment: i64) -> Result<()> {
        let who = self.rater(rater)?;
        let entity = format!("assignment:{assignment}");
        self.write(|w| {
            let shown_before: bool = w
                .tx()
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM audit_log WHERE action = 'show item' AND entity = ?1)",
                    [&entity],
                    |r| r.get(0),
                )
                .map_err(|e| w.fail("reading what the rater was shown", e))?;
            if shown_before {
                return Ok(());
            }
            let response: i64 = w
                .tx()
                .query_row(
                    "SELECT response FROM assignments WHERE id = ?1",
                    [assignment],
                    |r| r.get(0),
                )
                .map_err(|e| w.fail("reading an assignment", e))?;
            w.audit(&Entry {
                actor: &who.name,
                action: "show item",
                entity: &entity,
                before: None,
                after: Some(&serde_json::json!({ "response": response })),
            })
        })
    }

    fn blinded_item(&self, rater: i64, assignment: i64) -> Result<ReadingItem> {
        self.rater(rater)?;
        let conn = self.read();
        let found = own_assignment(conn, rater, assignment)
            .map_err(self.fail("reading an assignment"))?
            .ok_or_else(|| assignment_not_found(assignment))?;
        if !found.available {
            return Err(refused(format!(
                "this repeat read opens on {}",
                found.not_before.as_deref().unwrap_or("a later date")
            )));
        }
        let queue: Vec<i64> = conn
            .prepare(QUEUE_SQL)
            .and_then(|mut stmt| {
                stmt.query_map(params![rater, found.study], |r| r.get(0))?
                    .collect()
            })
            .map_err(self.fail("reading the queue"))?;
        let position = queue.iter().position(|&a| a == assignment).unwrap_or(0) as u32 + 1;

        let fail = self.fail("reading the item");
        type Row = (
            String,
            u32,
            String,
            String,
            String,
            String,
            i64,
            String,
            String,
            i64,
            String,
        );
        type Row2 = (
            String,
            Option<String>,
            Option<String>,
            String,
            String,
            String,
        );
        let (case_id, age, sex, modality, ehr, note, case_ref, prompt, family, level, key_images): Row =
            conn.query_row(
                "SELECT c.case_id, c.age, c.sex, c.modality, c.ehr_json, c.clinical_note, c.id,
                        t.prompt, t.family, t.level, t.key_images_json
                 FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
                 WHERE r.id = ?1",
                [found.response],
                |r| {
                    Ok((
                        r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?,
                        r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?,
                    ))
                },
            )
            .map_err(&fail)?;
        let (answer, rationale, turns, rubric, taxonomy, study_id): Row2 = conn
            .query_row(
                "SELECT r.answer, r.rationale, r.turns_json, st.rubric_json, st.taxonomy_json,
                        st.study_id
                 FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
                 JOIN studies st ON c.study = st.id WHERE r.id = ?1",
                [found.response],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                },
            )
            .map_err(&fail)?;
        let series = conn
            .prepare(
                "SELECT s.id, s.series_id, s.label, s.kind,
                        (SELECT count(*) FROM images i WHERE i.series = s.id)
                 FROM series s WHERE s.case_ref = ?1 ORDER BY s.id",
            )
            .and_then(|mut stmt| {
                stmt.query_map([case_ref], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get::<_, String>(3)?,
                        r.get(4)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<(i64, String, String, String, u32)>>>()
            })
            .map_err(&fail)?
            .into_iter()
            .map(|(key, series_id, label, kind, n_images)| {
                Ok(ReadingSeries {
                    key,
                    series_id,
                    label,
                    kind: enum_value(&kind, "a series kind")?,
                    n_images,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let taxonomy = crate::store::stored_taxonomy(&study_id, &taxonomy)?;
        let locks = crate::curation::reveal::CaseLocks::read(conn, case_ref, rater)
            .map_err(self.fail("checking for a ground-truth reveal"))?;
        let rubric = crate::store::stored_rubric(&study_id, &rubric)?;
        let family: TaskFamily = enum_value(&family, "a task family")?;
        let rating = rating_view(conn, rater, found.response, found.read_no)
            .map_err(self.fail("reading your rating"))?;
        Ok(ReadingItem {
            assignment,
            position,
            total: queue.len() as u32,
            case: ReadingCase {
                case_code: self.case_codes(&study_id)?.code(&case_id),
                age,
                sex: enum_value(&sex, "a case's sex")?,
                modality: enum_value(&modality, "a case's modality")?,
                ehr: json(&ehr, "a case's EHR fields")?,
                clinical_note: note,
            },
            task: ReadingTask {
                prompt,
                family,
                level: level as u8,
                key_images: json(&key_images, "a task's key images")?,
            },
            series,
            response: ReadingResponse {
                answer,
                rationale,
                turns: turns.map(|t| json(&t, "a response's turns")).transpose()?,
            },
            outdated_scores: match &rating {
                Some(rating) if rating.status == RatingStatus::Draft => {
                    super::rules::outdated_scores(&rubric, family, &rating.scores())
                }
                _ => Vec::new(),
            },
            rubric,
            taxonomy: taxonomy
                .categories
                .into_iter()
                .map(|c| TaxonomyCategory {
                    code: c.code,
                    name: c.name,
                    definition: c.definition,
                    anchor: c.anchor,
                })
                .collect(),
            rating,
            reopen_refused: locks.reopen_refusal(),
            ground_truth_seen_at: locks.ground_truth_seen_at,
        })
    }

    /// Remembers the item the rater has open, so a restart returns to it.
    pub fn set_position(&mut self, rater: i64, assignment: i64) -> Result<()> {
        let who = self.rater(rater)?;
        own_assignment(self.read(), rater, assignment)
            .map_err(self.fail("reading an assignment"))?
            .ok_or_else(|| assignment_not_found(assignment))?;
        self.write(|w| {
            let before: Option<i64> = w
                .tx()
                .query_row(
                    "SELECT assignment FROM rater_positions WHERE rater = ?1",
                    [rater],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| w.fail("reading the position", e))?
                .flatten();
            if before == Some(assignment) {
                return Ok(());
            }
            w.tx()
                .execute(
                    &format!(
                        "INSERT INTO rater_positions (rater, assignment, updated_at)
                         VALUES (?1, ?2, {})
                         ON CONFLICT (rater) DO UPDATE SET assignment = excluded.assignment,
                             updated_at = excluded.updated_at",
                        super::NOW_SQL
                    ),
                    params![rater, assignment],
                )
                .map_err(|e| w.fail("recording the position", e))?;
            w.audit(&Entry {
                actor: &who.name,
                action: "open item",
                entity: &format!("rater_position:{rater}"),
                before: before
                    .map(|a| serde_json::json!({ "assignment": a }))
                    .as_ref(),
                after: Some(&serde_json::json!({ "assignment": assignment })),
            })
        })
    }

    /// Where the rater left off, if anywhere.
    pub fn resume(&self, rater: i64) -> Result<Option<ResumePoint>> {
        self.rater(rater)?;
        self.read()
            .query_row(
                "SELECT s.study_id, a.id FROM rater_positions rp
                 JOIN assignments a ON rp.assignment = a.id AND a.rater = rp.rater
                 JOIN assignment_plans p ON a.plan = p.id JOIN studies s ON p.study = s.id
                 WHERE rp.rater = ?1",
                [rater],
                |r| {
                    Ok(ResumePoint {
                        study_id: r.get(0)?,
                        assignment: r.get(1)?,
                    })
                },
            )
            .optional()
            .map_err(self.fail("reading where you left off"))
    }

    fn study_key_for_rating(&self, study_id: &str) -> Result<i64> {
        self.read()
            .query_row(
                "SELECT id FROM studies WHERE study_id = ?1",
                [study_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.fail("finding a study"))?
            .ok_or_else(|| Error::NotFound {
                what: format!("study {study_id:?}"),
            })
    }
}

pub(super) fn enum_value<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| Error::Corrupt {
        what: format!("{what} is {text:?}"),
    })
}

/// The rater's own rating of one read, with its labels; `None` before the first edit.
pub(crate) fn rating_view(
    conn: &Connection,
    rater: i64,
    response: i64,
    read_no: i64,
) -> rusqlite::Result<Option<RatingView>> {
    Ok(stored_rating(conn, rater, response, read_no)?.map(|(_, view)| view))
}

/// [`rating_view`] with the rating's row id: the one reader of a stored rating, which the
/// app's reading screen and the multi-site results package both use.
pub(crate) fn stored_rating(
    conn: &Connection,
    rater: i64,
    response: i64,
    read_no: i64,
) -> rusqlite::Result<Option<(i64, RatingView)>> {
    let Some((id, mut view)) = conn
        .query_row(
            "SELECT id, status, overall, dimensions_json, correctness, confidence, comment,
                    seconds_on_task, updated_at, submitted_at, not_applicable_json
             FROM ratings WHERE response = ?1 AND rater = ?2 AND read_no = ?3",
            params![response, rater, read_no],
            |r| {
                let status: String = r.get(1)?;
                let dimensions: String = r.get(3)?;
                let correctness: Option<String> = r.get(4)?;
                let not_applicable: String = r.get(10)?;
                Ok((
                    r.get::<_, i64>(0)?,
                    RatingView {
                        status: if status == "submitted" {
                            RatingStatus::Submitted
                        } else {
                            RatingStatus::Draft
                        },
                        overall: r.get(2)?,
                        dimensions: serde_json::from_str(&dimensions).map_err(|e| {
                            rusqlite::Error::FromSqlConversionFailure(
                                3,
                                rusqlite::types::Type::Text,
                                Box::new(e),
                            )
                        })?,
                        not_applicable: serde_json::from_str(&not_applicable).map_err(|e| {
                            rusqlite::Error::FromSqlConversionFailure(
                                10,
                                rusqlite::types::Type::Text,
                                Box::new(e),
                            )
                        })?,
                        correctness: correctness
                            .map(|c| serde_json::from_value(serde_json::Value::String(c)))
                            .transpose()
                            .map_err(|e| {
                                rusqlite::Error::FromSqlConversionFailure(
                                    4,
                                    rusqlite::types::Type::Text,
                                    Box::new(e),
                                )
                            })?,
                        confidence: r.get(5)?,
                        comment: r.get(6)?,
                        seconds_on_task: r.get(7)?,
                        updated_at: r.get(8)?,
                        submitted_at: r.get(9)?,
                        labels: Vec::new(),
                    },
                ))
            },
        )
        .optional()?
    else {
        return Ok(None);
    };
    view.labels = labels_of(conn, id)?;
    Ok(Some((id, view)))
}

fn labels_of(conn: &Connection, rating: i64) -> rusqlite::Result<Vec<ErrorLabelView>> {
    conn.prepare(
        "SELECT id, category, severity, span_start, span_end, mark_json, comment, span_text,
                span_turn
         FROM error_labels WHERE rating = ?1 ORDER BY id",
    )?
    .query_map([rating], label_from_row)?
    .collect()
}

fn label_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ErrorLabelView> {
    let start: Option<u32> = r.get(3)?;
    let end: Option<u32> = r.get(4)?;
    let mark: Option<String> = r.get(5)?;
    Ok(ErrorLabelView {
        id: r.get(0)?,
        category: r.get(1)?,
        severity: r.get(2)?,
        span: start.zip(end).map(|(s, e)| [s, e]),
        text: r
            .get::<_, Option<String>>(7)?
            .map(|t| serde_json::from_value(serde_json::Value::String(t)))
            .transpose()
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    7,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })?
            .unwrap_or_default(),
        turn: r.get(8)?,
        mark: mark
            .map(|m| serde_json::from_str(&m))
            .transpose()
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    5,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })?,
        comment: r.get(6)?,
    })
}
