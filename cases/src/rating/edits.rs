//! A rater's edits: the draft rating, error labels, submit and reopen. Each is one transaction
//! with an audit entry holding the state before and after, and returns once committed (the store
//! runs WAL with `synchronous = FULL`, so an acknowledged edit survives a crash or power loss).

use super::outbox::{self, Outgoing};
use super::reading::{rating_view, RatingView};
use super::rules::{self, Violation};
use super::table::{self, ReadKey};
use super::{
    assignment_not_found, invalid, own_assignment, refused, response_context, Assignment,
    Correctness, RatingError, RatingStatus, ResponseContext,
};
use crate::marks::Mark;
use crate::store::audit::Entry;
use crate::store::{Store, Write};
use crate::{Error, Result};
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The whole editable state of a rating; a save replaces the draft with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct RatingEdit {
    #[serde(default)]
    #[cfg_attr(feature = "specta", specta(type = Option<crate::finite::Finite>))]
    pub overall: Option<f64>,
    #[serde(default)]
    #[cfg_attr(feature = "specta", specta(type = BTreeMap<String, crate::finite::Finite>))]
    pub dimensions: BTreeMap<String, f64>,
    /// Dimensions the rater marked "not applicable" (where the rubric allows it): a state of
    /// its own, never a score.
    #[serde(default)]
    pub not_applicable: BTreeSet<String>,
    #[serde(default)]
    pub correctness: Option<Correctness>,
    #[serde(default)]
    pub confidence: Option<u8>,
    #[serde(default)]
    pub comment: String,
    /// Total time on task so far (not an increment), seconds.
    #[serde(default)]
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub seconds_on_task: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct LabelEdit {
    pub category: String,
    /// 1 minor, 2 moderate, 3 major.
    pub severity: u8,
    /// [start, end) in UTF-16 code units (JavaScript string indices) of the text `text` names.
    #[serde(default)]
    pub span: Option<[u32; 2]>,
    /// The text the span lies in; a span sent without it lies in the rationale, as every span
    /// did before answers and turns could be labelled.
    #[serde(default)]
    pub text: SpanText,
    /// With `text: turn`, the turn's index in the response's `turns` (0-based).
    #[serde(default)]
    pub turn: Option<u32>,
    #[serde(default)]
    pub mark: Option<Mark>,
    #[serde(default)]
    pub comment: String,
}

/// Which of the texts a rater reads a label's span lies in: the answer, the rationale, or one
/// turn of a consultation (the label then names the turn).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SpanText {
    Answer,
    #[default]
    Rationale,
    Turn,
}

impl SpanText {
    /// Whether this is the default, so a rationale label travels as it did before (a package
    /// field left out).
    pub(crate) fn is_rationale(&self) -> bool {
        *self == SpanText::Rationale
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EditAck {
    pub saved_at: String,
    pub status: RatingStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LabelAck {
    pub label_id: i64,
    pub saved_at: String,
    pub status: RatingStatus,
}

/// The acting rater, their assignment and what validating needs, resolved before a write.
struct Target {
    actor: String,
    rater: i64,
    /// The assignment's key.
    id: i64,
    assignment: Assignment,
    context: ResponseContext,
}

impl Store {
    fn target(&self, rater: i64, assignment_id: i64) -> Result<Target> {
        let actor = self.rater(rater)?.name;
        let assignment = own_assignment(self.read(), rater, assignment_id)
            .map_err(self.fail("reading an assignment"))?
            .ok_or_else(|| assignment_not_found(assignment_id))?;
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
            id: assignment_id,
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
        first_violation(rules::rating_violations(
            &target.context.rubric,
            target.context.family,
            edit,
        ))?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            let rating = ensure_rating(w, &target)?;
            table::set_scores(w.tx(), rating, edit).map_err(|e| w.fail("saving the rating", e))?;
            finish(w, &target, rating, "save rating", before, Outgoing::State)
        })
    }

    pub fn add_error_label(
        &mut self,
        rater: i64,
        assignment: i64,
        label: &LabelEdit,
    ) -> Result<LabelAck> {
        let target = self.target(rater, assignment)?;
        first_violation(rules::label_violations(&target.context.labels(), label))?;
        self.check_mark_inside(&target.context, label)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            let rating = ensure_rating(w, &target)?;
            let label_id = table::insert_label(w.tx(), rating, label)
                .map_err(|e| w.fail("adding an error label", e))?;
            let ack = finish(
                w,
                &target,
                rating,
                "add error label",
                before,
                Outgoing::State,
            )?;
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
        first_violation(rules::label_violations(&target.context.labels(), label))?;
        self.check_mark_inside(&target.context, label)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            table::update_label(w.tx(), label_id, label)
                .map_err(|e| w.fail("changing an error label", e))?;
            finish(
                w,
                &target,
                rating,
                "update error label",
                before,
                Outgoing::State,
            )
        })
    }

    pub fn delete_error_label(&mut self, rater: i64, label_id: i64) -> Result<EditAck> {
        let (target, rating) = self.label_target(rater, label_id)?;
        self.write(|w| {
            let before = current(w, &target)?;
            refuse_if_submitted(before.as_ref())?;
            table::delete_label(w.tx(), label_id)
                .map_err(|e| w.fail("deleting an error label", e))?;
            finish(
                w,
                &target,
                rating,
                "delete error label",
                before,
                Outgoing::State,
            )
        })
    }

    /// Submits once every rubric dimension, the overall score, correctness and confidence are set
    /// (otherwise [`RatingError::Incomplete`] names what is missing) and the scores are what the
    /// current rubric admits (a rubric changed since they were saved may not).
    pub fn submit_rating(&mut self, rater: i64, assignment: i64) -> Result<EditAck> {
        let target = self.target(rater, assignment)?;
        self.write(|w| {
            let before = current(w, &target)?;
            let scores = before.as_ref().map(RatingView::scores);
            // Scores saved under a rubric that has since moved on are checked again: a rating is
            // submitted under the current version, so it must hold what that version admits.
            if let Some(scores) = &scores {
                first_violation(rules::rating_violations(
                    &target.context.rubric,
                    target.context.family,
                    scores,
                ))?;
            }
            let missing = rules::missing_for_submit(
                &target.context.rubric,
                target.context.family,
                scores.as_ref(),
            );
            if !missing.is_empty() {
                return Err(Error::Rating(RatingError::Incomplete { missing }));
            }
            if before.as_ref().map(|b| b.status) == Some(RatingStatus::Submitted) {
                return Err(refused("this rating is already submitted"));
            }
            let rating = ensure_rating(w, &target)?;
            table::set_status(w.tx(), rating, RatingStatus::Submitted)
                .map_err(|e| w.fail("submitting the rating", e))?;
            finish(
                w,
                &target,
                rating,
                "submit rating",
                before,
                Outgoing::Submit,
            )
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
            table::set_status(w.tx(), rating, RatingStatus::Draft)
                .map_err(|e| w.fail("reopening the rating", e))?;
            finish(
                w,
                &target,
                rating,
                "reopen rating",
                before,
                Outgoing::Reopen,
            )
        })
    }

    /// Refused once the rater has seen the ground truth of the target's case (every reveal is
    /// audited) or while the study lead's lock holds (`curation::reveal::CaseLocks`).
    fn refuse_after_reveal(&self, target: &Target) -> Result<()> {
        let locks = crate::curation::reveal::CaseLocks::read(
            self.read(),
            target.context.case_key,
            target.rater,
        )
        .map_err(self.fail("checking for a ground-truth reveal"))?;
        match locks.reopen_refusal() {
            Some(lock) => Err(refused(lock.to_string())),
            None => Ok(()),
        }
    }

    /// A label's mark must lie inside its series' volume (`super::mark_outside_volume`).
    fn check_mark_inside(&self, context: &ResponseContext, label: &LabelEdit) -> Result<()> {
        let Some(mark) = &label.mark else {
            return Ok(());
        };
        let case = crate::curation::CaseContext::load_key(self, context.case_key)?;
        match super::mark_outside_volume(self, &case, mark)? {
            Some(message) => Err(invalid(super::MARK_POINTS_FIELD, message)),
            None => Ok(()),
        }
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
    let key = ReadKey {
        response: target.assignment.response,
        rater: target.rater,
        read_no: target.assignment.read_no,
    };
    table::ensure_draft(w.tx(), key).map_err(|e| w.fail("starting the rating", e))
}

/// Stamps the rating, audits before → after, queues the edit for the team server when the
/// assignment is the server's (`outbox::enqueue`, in this same transaction) and acknowledges.
fn finish(
    w: &Write<'_>,
    target: &Target,
    rating: i64,
    action: &str,
    before: Option<RatingView>,
    outgoing: Outgoing,
) -> Result<EditAck> {
    table::touch(w.tx(), rating).map_err(|e| w.fail("stamping the rating", e))?;
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
    outbox::enqueue(w, target.id, &after, outgoing)?;
    Ok(EditAck {
        saved_at: after.updated_at,
        status: after.status,
    })
}

/// The first rule the edit breaks, as the error the rater sees.
fn first_violation(found: Vec<Violation>) -> Result<()> {
    match found.into_iter().next() {
        Some(Violation { field, message }) => Err(invalid(&field, message)),
        None => Ok(()),
    }
}
