//! A rater's edits: the draft rating, error labels, submit and reopen. Each is one transaction
//! with an audit entry holding the state before and after, and returns once committed (the store
//! runs WAL with `synchronous = FULL`, so an acknowledged edit survives a crash or power loss).

use super::reading::{rating_view, RatingView};
use super::{
    assignment_not_found, invalid, own_assignment, refused, response_context, Assignment,
    Correctness, RatingError, RatingStatus, ResponseContext, NOW_SQL,
};
use crate::marks::Mark;
use crate::model::Anchor;
use crate::store::audit::Entry;
use crate::store::{enum_text, Store, Write};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole editable state of a rating; a save replaces the draft with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingEdit {
    #[serde(default)]
    pub overall: Option<f64>,
    #[serde(default)]
    pub dimensions: BTreeMap<String, f64>,
    #[serde(default)]
    pub correctness: Option<Correctness>,
    #[serde(default)]
    pub confidence: Option<u8>,
    #[serde(default)]
    pub comment: String,
    /// Total time on task so far (not an increment), seconds.
    #[serde(default)]
    pub seconds_on_task: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelEdit {
    pub category: String,
    /// 1 minor, 2 moderate, 3 major.
    pub severity: u8,
    /// [start, end) in UTF-16 code units of the rationale (JavaScript string indices).
    #[serde(default)]
    pub span: Option<[u32; 2]>,
    #[serde(default)]
    pub mark: Option<Mark>,
    #[serde(default)]
    pub comment: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EditAck {
    pub saved_at: String,
    pub status: RatingStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelAck {
    pub label_id: i64,
    pub saved_at: String,
    pub status: RatingStatus,
}

const MAX_COMMENT_CHARS: usize = 20_000;
/// A week on one response is a clock error, not reading time.
const MAX_SECONDS_ON_TASK: f64 = 7.0 * 24.0 * 3600.0;

/// The acting rater, their assignment and what validating needs, resolved before a write.
struct Target {
    actor: String,
    rater: i64,
    assignment: Assignment,
    context: ResponseContext,
}

impl Store {
    fn target(&self, rater: i64, assignment: i64) -> Result<Target> {
        let actor = self.rater(rater)?.name;
        let assignment = own_assignment(self.read(), rater, assignment)
            .map_err(self.fail("reading an assignment"))?
            .ok_or_else(|| assignment_not_found(assignment))?;
        if !assignment.available {
            return Err(refused(format!(
                "this repeat read opens on {}",
                assignment.not_before.as_deref().unwrap_or("a later date")
            )));
        }
        let context = response_context(self.read(), self.path(), assignment.response)?;
        Ok(Target {
            actor,
            rater,
            assignment,
            context,
        })
    }

    /// Saves the draft (creating it on the first edit). Refused once submitted until reopened.
    pub fn save_rating(
        &mut self,
        rater: i64,
        assignment: i64,
        edit: &RatingEdit,
    ) -> Result<EditAck> {
        let target = self.target(rater, assignment)?;
        check_rating(&target.context, edit)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            let rating = ensure_rating(w, &target)?;
            w.tx()
                .execute(
                    &format!(
                        "UPDATE ratings SET overall = ?1, dimensions_json = ?2, correctness = ?3,
                             confidence = ?4, comment = ?5, seconds_on_task = ?6,
                             updated_at = {NOW_SQL}
                         WHERE id = ?7"
                    ),
                    params![
                        edit.overall,
                        serde_json::to_string(&edit.dimensions)
                            .expect("a map of numbers serialises"),
                        edit.correctness.as_ref().map(enum_text),
                        edit.confidence,
                        edit.comment,
                        edit.seconds_on_task,
                        rating
                    ],
                )
                .map_err(|e| w.fail("saving the rating", e))?;
            finish(w, &target, rating, "save rating", before)
        })
    }

    pub fn add_error_label(
        &mut self,
        rater: i64,
        assignment: i64,
        label: &LabelEdit,
    ) -> Result<LabelAck> {
        let target = self.target(rater, assignment)?;
        let mark = check_label(&target.context, label)?;
        self.check_mark_inside(&target.context, label)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            let rating = ensure_rating(w, &target)?;
            w.tx()
                .execute(
                    "INSERT INTO error_labels (rating, category, severity, span_start, span_end,
                         mark_json, comment) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        rating,
                        label.category,
                        label.severity,
                        label.span.map(|s| s[0]),
                        label.span.map(|s| s[1]),
                        mark,
                        label.comment
                    ],
                )
                .map_err(|e| w.fail("adding an error label", e))?;
            let label_id = w.tx().last_insert_rowid();
            let ack = finish(w, &target, rating, "add error label", before)?;
            Ok(LabelAck {
                label_id,
                saved_at: ack.saved_at,
                status: ack.status,
            })
        })
    }

    pub fn update_error_label(
        &mut self,
        rater: i64,
        label_id: i64,
        label: &LabelEdit,
    ) -> Result<EditAck> {
        let (target, rating) = self.label_target(rater, label_id)?;
        let mark = check_label(&target.context, label)?;
        self.check_mark_inside(&target.context, label)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            w.tx()
                .execute(
                    "UPDATE error_labels SET category = ?1, severity = ?2, span_start = ?3,
                         span_end = ?4, mark_json = ?5, comment = ?6 WHERE id = ?7",
                    params![
                        label.category,
                        label.severity,
                        label.span.map(|s| s[0]),
                        label.span.map(|s| s[1]),
                        mark,
                        label.comment,
                        label_id
                    ],
                )
                .map_err(|e| w.fail("changing an error label", e))?;
            finish(w, &target, rating, "update error label", before)
        })
    }

    pub fn delete_error_label(&mut self, rater: i64, label_id: i64) -> Result<EditAck> {
        let (target, rating) = self.label_target(rater, label_id)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            w.tx()
                .execute("DELETE FROM error_labels WHERE id = ?1", [label_id])
                .map_err(|e| w.fail("deleting an error label", e))?;
            finish(w, &target, rating, "delete error label", before)
        })
    }

    /// Submits once every rubric dimension, the overall score, correctness and confidence are set;
    /// otherwise [`RatingError::Incomplete`] names what is missing.
    pub fn submit_rating(&mut self, rater: i64, assignment: i64) -> Result<EditAck> {
        let target = self.target(rater, assignment)?;
        self.write(|w| {
            let before = current(w, &target)?;
            let missing = missing_fields(&target.context, before.as_ref());
            if !missing.is_empty() {
                return Err(Error::Rating(RatingError::Incomplete { missing }));
            }
            if before.as_ref().map(|b| b.status) == Some(RatingStatus::Submitted) {
                return Err(refused("this rating is already submitted"));
            }
            let rating = ensure_rating(w, &target)?;
            w.tx()
                .execute(
                    &format!(
                        "UPDATE ratings SET status = 'submitted', submitted_at = {NOW_SQL},
                             updated_at = {NOW_SQL} WHERE id = ?1"
                    ),
                    [rating],
                )
                .map_err(|e| w.fail("submitting the rating", e))?;
            finish(w, &target, rating, "submit rating", before)
        })
    }

    /// Back to draft; the submission time stays in the audit entry's `before`. Refused once the
    /// rater has seen the case's ground truth: a rating changed after that is no longer
    /// independent of it, and the report could not tell.
    pub fn reopen_rating(&mut self, rater: i64, assignment: i64) -> Result<EditAck> {
        let target = self.target(rater, assignment)?;
        self.refuse_after_reveal(&target)?;
        self.write(|w| {
            let before = current(w, &target)?;
            if before.as_ref().map(|b| b.status) != Some(RatingStatus::Submitted) {
                return Err(refused("only a submitted rating can be reopened"));
            }
            let rating = ensure_rating(w, &target)?;
            w.tx()
                .execute(
                    &format!(
                        "UPDATE ratings SET status = 'draft', submitted_at = NULL,
                             updated_at = {NOW_SQL} WHERE id = ?1"
                    ),
                    [rating],
                )
                .map_err(|e| w.fail("reopening the rating", e))?;
            finish(w, &target, rating, "reopen rating", before)
        })
    }

    /// Whether the rater revealed the ground truth of the target's case: every reveal is audited
    /// (`ground_truth.revealed` on `ground_truth:STUDY/CASE`, the rater as actor).
    fn refuse_after_reveal(&self, target: &Target) -> Result<()> {
        let revealed_at: Option<String> = self
            .read()
            .query_row(
                "SELECT a.at FROM cases c JOIN studies st ON c.study = st.id
                 JOIN audit_log a ON a.entity = 'ground_truth:' || st.study_id || '/' || c.case_id
                 WHERE c.id = ?1 AND a.action = 'ground_truth.revealed' AND a.actor = ?2
                 ORDER BY a.id LIMIT 1",
                params![target.context.case_key, target.actor],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.fail("checking for a ground-truth reveal"))?;
        match revealed_at {
            Some(at) => Err(refused(format!(
                "this rating is locked: you saw the case's ground truth at {at}, and a rating \
                 changed after that would no longer be independent of it"
            ))),
            None => Ok(()),
        }
    }

    /// A label's mark must lie inside its series' volume, checked as a curator's lesion marks
    /// are (`CaseContext::check`): a point off the images would be shown nowhere.
    fn check_mark_inside(&self, context: &ResponseContext, label: &LabelEdit) -> Result<()> {
        let Some(mark) = &label.mark else {
            return Ok(());
        };
        let case = crate::curation::CaseContext::load_key(self, context.case_key)?;
        let geometry = case.geometry(self, &mark.series_id)?;
        mark.check_inside(geometry.dims, &geometry.voxel_to_patient)
            .map_err(|message| {
                invalid(
                    "mark.points_lps_mm",
                    format!("{message} (series {:?})", mark.series_id),
                )
            })
    }

    /// The label's rating must be the rater's own; anyone else's label is "not found".
    fn label_target(&self, rater: i64, label_id: i64) -> Result<(Target, i64)> {
        let found: Option<(i64, i64)> = self
            .read()
            .query_row(
                "SELECT g.id, a.id FROM error_labels e JOIN ratings g ON e.rating = g.id
                 JOIN assignments a ON a.rater = g.rater AND a.response = g.response
                     AND a.read_no = g.read_no
                 WHERE e.id = ?1 AND g.rater = ?2",
                [label_id, rater],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.fail("finding an error label"))?;
        let (rating, assignment) = found.ok_or_else(|| Error::NotFound {
            what: format!("error label {label_id} in your ratings"),
        })?;
        Ok((self.target(rater, assignment)?, rating))
    }
}

fn current(w: &Write<'_>, target: &Target) -> Result<Option<RatingView>> {
    rating_view(
        w.tx(),
        target.rater,
        target.assignment.response,
        target.assignment.read_no,
    )
    .map_err(|e| w.fail("reading the rating", e))
}

fn refuse_if_submitted(rating: Option<&RatingView>) -> Result<()> {
    if rating.map(|r| r.status) == Some(RatingStatus::Submitted) {
        return Err(refused(
            "this rating is submitted; reopen it to change it (reopening is recorded)",
        ));
    }
    Ok(())
}

/// The rating's key, inserting an empty draft on the first edit.
fn ensure_rating(w: &Write<'_>, target: &Target) -> Result<i64> {
    let a = &target.assignment;
    w.tx()
        .execute(
            &format!(
                "INSERT INTO ratings (response, rater, read_no, updated_at)
                 VALUES (?1, ?2, ?3, {NOW_SQL}) ON CONFLICT DO NOTHING"
            ),
            params![a.response, target.rater, a.read_no],
        )
        .map_err(|e| w.fail("starting the rating", e))?;
    w.tx()
        .query_row(
            "SELECT id FROM ratings WHERE response = ?1 AND rater = ?2 AND read_no = ?3",
            params![a.response, target.rater, a.read_no],
            |r| r.get(0),
        )
        .map_err(|e| w.fail("starting the rating", e))
}

/// Stamps the rating, audits before → after and acknowledges.
fn finish(
    w: &Write<'_>,
    target: &Target,
    rating: i64,
    action: &str,
    before: Option<RatingView>,
) -> Result<EditAck> {
    w.tx()
        .execute(
            &format!("UPDATE ratings SET updated_at = {NOW_SQL} WHERE id = ?1"),
            [rating],
        )
        .map_err(|e| w.fail("stamping the rating", e))?;
    let after = current(w, target)?.ok_or_else(|| Error::Corrupt {
        what: format!("rating {rating} vanished while being saved"),
    })?;
    let before_json = before.map(|b| serde_json::to_value(b).expect("a rating serialises"));
    let after_json = serde_json::to_value(&after).expect("a rating serialises");
    w.audit(&Entry {
        actor: &target.actor,
        action,
        entity: &format!("rating:{rating}"),
        before: before_json.as_ref(),
        after: Some(&after_json),
    })?;
    Ok(EditAck {
        saved_at: after.updated_at,
        status: after.status,
    })
}

fn check_rating(context: &ResponseContext, edit: &RatingEdit) -> Result<()> {
    let rubric = &context.rubric;
    if let Some(overall) = edit.overall {
        if !rubric.overall.admits(overall) {
            return Err(invalid(
                "overall",
                format!(
                    "{overall} is not on the scale {} to {} in steps of {}",
                    rubric.overall.min, rubric.overall.max, rubric.overall.step
                ),
            ));
        }
    }
    for (id, value) in &edit.dimensions {
        let dimension = rubric
            .dimensions
            .iter()
            .find(|d| &d.id == id)
            .ok_or_else(|| {
                invalid(
                    &format!("dimensions.{id}"),
                    format!(
                        "the rubric has no dimension {id:?} (it has {})",
                        rubric
                            .dimensions
                            .iter()
                            .map(|d| d.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
        if !dimension.scale.admits(*value) {
            return Err(invalid(
                &format!("dimensions.{id}"),
                format!(
                    "{value} is not on the scale {} to {} in steps of {}",
                    dimension.scale.min, dimension.scale.max, dimension.scale.step
                ),
            ));
        }
    }
    if let Some(confidence) = edit.confidence.filter(|c| !(1..=5).contains(c)) {
        return Err(invalid("confidence", format!("1 to 5, got {confidence}")));
    }
    check_comment(&edit.comment)?;
    if !edit.seconds_on_task.is_finite()
        || edit.seconds_on_task < 0.0
        || edit.seconds_on_task > MAX_SECONDS_ON_TASK
    {
        return Err(invalid(
            "seconds_on_task",
            format!(
                "0 to {MAX_SECONDS_ON_TASK} seconds, got {}",
                edit.seconds_on_task
            ),
        ));
    }
    Ok(())
}

fn check_comment(comment: &str) -> Result<()> {
    let chars = comment.chars().count();
    if chars > MAX_COMMENT_CHARS {
        return Err(invalid(
            "comment",
            format!("at most {MAX_COMMENT_CHARS} characters, got {chars}"),
        ));
    }
    Ok(())
}

/// Validates a label against the taxonomy, the rationale and the case's series; returns the
/// mark as stored (JSON).
fn check_label(context: &ResponseContext, label: &LabelEdit) -> Result<Option<String>> {
    let category = context
        .taxonomy
        .categories
        .iter()
        .find(|c| c.code == label.category)
        .ok_or_else(|| {
            invalid(
                "category",
                format!(
                    "{:?} is not a category of the study's taxonomy",
                    label.category
                ),
            )
        })?;
    if !(1..=3).contains(&label.severity) {
        return Err(invalid(
            "severity",
            format!("1 (minor) to 3 (major), got {}", label.severity),
        ));
    }
    check_comment(&label.comment)?;
    if let Some([start, end]) = label.span {
        let rationale = context
            .rationale
            .as_deref()
            .ok_or_else(|| invalid("span", "this response has no rationale to select a span in"))?;
        let units: Vec<u16> = rationale.encode_utf16().collect();
        let (start, end) = (start as usize, end as usize);
        if start >= end || end > units.len() {
            return Err(invalid(
                "span",
                format!(
                    "[{start}, {end}) is not a non-empty range within the rationale's {} UTF-16 \
                     code units",
                    units.len()
                ),
            ));
        }
        // A boundary between the two halves of a surrogate pair would cut a character in two.
        let splits = |at: usize| at < units.len() && (0xDC00..0xE000).contains(&units[at]);
        if splits(start) || splits(end) {
            return Err(invalid("span", "a span boundary falls inside a character"));
        }
    }
    if let Some(mark) = &label.mark {
        mark.check_shape()
            .map_err(|message| invalid("mark", message))?;
        if !context.series_ids.contains(&mark.series_id) {
            return Err(invalid(
                "mark.series_id",
                format!(
                    "{:?} is not a series of this case (it has {})",
                    mark.series_id,
                    context.series_ids.join(", ")
                ),
            ));
        }
    }
    match category.anchor {
        Anchor::Image if label.mark.is_none() => Err(invalid(
            "mark",
            format!(
                "{} ({}) is pointed at on the image: draw a mark",
                category.code, category.name
            ),
        )),
        Anchor::Text if label.span.is_none() => Err(invalid(
            "span",
            format!(
                "{} ({}) is pointed at in the text: select a span of the rationale",
                category.code, category.name
            ),
        )),
        _ if label.span.is_none() && label.mark.is_none() => Err(invalid(
            "span",
            format!(
                "{} ({}) needs a span of the rationale or a mark on the image",
                category.code, category.name
            ),
        )),
        _ => Ok(label
            .mark
            .as_ref()
            .map(|m| serde_json::to_string(m).expect("a mark serialises"))),
    }
}

fn missing_fields(context: &ResponseContext, rating: Option<&RatingView>) -> Vec<String> {
    let mut missing = Vec::new();
    if rating.and_then(|r| r.overall).is_none() {
        missing.push("overall".to_owned());
    }
    for dimension in &context.rubric.dimensions {
        if !rating.is_some_and(|r| r.dimensions.contains_key(&dimension.id)) {
            missing.push(format!("dimensions.{}", dimension.id));
        }
    }
    if rating.and_then(|r| r.correctness).is_none() {
        missing.push("correctness".to_owned());
    }
    if rating.and_then(|r| r.confidence).is_none() {
        missing.push("confidence".to_owned());
    }
    missing
}
