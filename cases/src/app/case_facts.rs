//! What the study lead knows of a case and the scan could not read: its disease group and clinical
//! note, edited after import (issue 41 finding 3: after "New study…" no screen edited them, so
//! finishing a study meant editing `case.json` and importing again from a terminal). The lead's,
//! never a blinded reader's (the group is what they are asked to recognise); each change is one
//! audited transaction naming what it was before.

use super::LeadSession;
use crate::model::DiseaseGroup;
use crate::store::audit::Entry;
use crate::store::{enum_text, CaseView, Store};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde_json::json;

/// A clinical note longer than this is not a note.
pub const MAX_NOTE_CHARS: usize = 4000;

/// The lead's disease group and clinical note for a case.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct CaseFacts {
    pub disease_group: DiseaseGroup,
    pub clinical_note: String,
}

/// Sets `case_id`'s disease group and clinical note (the note trimmed); the case as it is now.
/// Writes nothing, and records nothing, when both are as stored.
pub fn edit(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    case_id: &str,
    facts: &CaseFacts,
) -> Result<CaseView> {
    let note = facts.clinical_note.trim();
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(super::refused(format!(
            "the clinical note of {case_id} is longer than {MAX_NOTE_CHARS} characters"
        )));
    }
    let group = enum_text(&facts.disease_group);
    let stored: Option<(i64, String, String)> = store
        .read()
        .query_row(
            "SELECT c.id, c.disease_group, c.clinical_note FROM cases c
             JOIN studies s ON c.study = s.id WHERE s.study_id = ?1 AND c.case_id = ?2",
            params![study_id, case_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "reading a case", e))?;
    let (key, before_group, before_note) = stored.ok_or_else(|| Error::NotFound {
        what: format!("case {case_id:?} in study {study_id:?}"),
    })?;
    if before_group != group || before_note != note {
        store.write(|w| {
            w.tx()
                .execute(
                    "UPDATE cases SET disease_group = ?1, clinical_note = ?2 WHERE id = ?3",
                    params![group, note, key],
                )
                .map_err(|e| w.fail("editing a case", e))?;
            w.audit(&Entry {
                actor: lead.audit_name(),
                action: "edit case",
                entity: &format!("study:{study_id}/case:{case_id}"),
                before: Some(&json!({"disease_group": before_group, "clinical_note": before_note})),
                after: Some(&json!({"disease_group": group, "clinical_note": note})),
            })
        })?;
    }
    store.case(study_id, case_id)
}
