//! The study lead's rubric editor: the current rubric with its version, and saving an edit by the
//! rubric-version rule (`crate::rubric`). Both take a [`LeadSession`]: a reader cannot change
//! what they are rating against.

use super::LeadSession;
use crate::model::Rubric;
use crate::rubric::{SavedRubric, StudyRubric};
use crate::store::Store;
use crate::Result;
use serde::Serialize;

/// A problem of an edited rubric, at its field (`rubric.dimensions[1].id`), for the editor to
/// show beside that field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RubricProblem {
    pub field: String,
    pub message: String,
}

/// What saving an edited rubric did: stored (in place, as a new version, or unchanged), or
/// refused with every problem, nothing written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RubricSave {
    Saved(SavedRubric),
    /// The rubric already stored: nothing was written.
    Unchanged {
        version: u32,
    },
    Invalid {
        problems: Vec<RubricProblem>,
    },
}

/// The study's current rubric, its version and how many ratings were saved under it.
pub fn current(store: &Store, _lead: &LeadSession, study_id: &str) -> Result<StudyRubric> {
    crate::rubric::current(store.read(), store.path(), study_id)
}

/// Saves the lead's edit of the study's rubric: checked as a bundle's rubric is, then edited in
/// place or stored as a new version, audited under the lead's name.
pub fn save(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    edited: &Rubric,
) -> Result<RubricSave> {
    let problems = crate::rubric::problems(edited);
    if !problems.is_empty() {
        return Ok(RubricSave::Invalid {
            problems: problems
                .into_iter()
                .map(|p| RubricProblem {
                    field: p.field,
                    message: p.message,
                })
                .collect(),
        });
    }
    let actor = lead.audit_name().to_owned();
    store.write(|w| {
        Ok(match crate::rubric::save(w, &actor, study_id, edited)? {
            Some(saved) => RubricSave::Saved(saved),
            None => RubricSave::Unchanged {
                version: crate::rubric::current(w.tx(), w.path(), study_id)?.version,
            },
        })
    })
}
