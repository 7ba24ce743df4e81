//! The study lead's rubric editor: the current rubric with its version, and saving an edit (in
//! place before the first rating under it, a new version after). The study lead's: refused while
//! a rater reads blinded here. Thin adapters over `cases::app::rubric`.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::app::permissions::Action;
use cases::app::rubric::{self, RubricSave};
use cases::app::{LeadSession, Session};
use cases::ids::Id;
use cases::model::{Rubric, Scale};
use cases::rubric::StudyRubric;
use cases::store::Store;
use tauri::State;

/// More dimensions than a rater can score on one screen is a mistake, not a rubric.
const MAX_DIMENSIONS: usize = 50;
/// Levels of one scale: a score button each.
const MAX_LEVELS: usize = 101;
/// An id, name, description or level descriptor.
const MAX_TEXT_BYTES: usize = 2_000;

fn lead(store: &Store) -> Result<LeadSession, CommandError> {
    Ok(Session::current(store)?.study_lead(Action::EditRubric)?)
}

fn too_long(field: &str) -> CommandError {
    CommandError::new(
        ErrorCode::InvalidArgument,
        format!("{field}: longer than {MAX_TEXT_BYTES} bytes"),
    )
}

fn text(field: &str, value: &str) -> Result<(), CommandError> {
    if value.len() > MAX_TEXT_BYTES {
        return Err(too_long(field));
    }
    Ok(())
}

fn scale(field: &str, scale: &Scale) -> Result<(), CommandError> {
    if scale.levels.len() > MAX_LEVELS {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}.levels: more than {MAX_LEVELS} levels"),
        ));
    }
    if let Some(label) = &scale.label {
        text(&format!("{field}.label"), label)?;
    }
    for (index, level) in scale.levels.iter().enumerate() {
        text(
            &format!("{field}.levels[{index}].descriptor"),
            &level.descriptor,
        )?;
    }
    Ok(())
}

/// Bounds the size of what the webview sends; the rubric's own rules (scales, ids) are the
/// domain's, which reports them beside their fields.
fn bounded(rubric: &Rubric) -> Result<(), CommandError> {
    if rubric.dimensions.len() > MAX_DIMENSIONS {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("rubric.dimensions: more than {MAX_DIMENSIONS} dimensions"),
        ));
    }
    scale("rubric.overall", &rubric.overall)?;
    for (index, dimension) in rubric.dimensions.iter().enumerate() {
        let field = format!("rubric.dimensions[{index}]");
        text(&format!("{field}.id"), &dimension.id)?;
        text(&format!("{field}.label"), &dimension.label)?;
        if let Some(description) = &dimension.description {
            text(&format!("{field}.description"), description)?;
        }
        scale(&field, &dimension.scale)?;
    }
    Ok(())
}

/// The study's current rubric, its version, the ratings saved under it and its task families.
#[tauri::command]
#[specta::specta]
pub fn rubric_current(
    state: State<'_, AppState>,
    study_id: Id,
) -> Result<StudyRubric, CommandError> {
    state.with_store(|store| Ok(rubric::current(store, &lead(store)?, &study_id)?))
}

/// Saves the lead's edit: saved (in place or as a new version), unchanged, or its problems.
#[tauri::command]
#[specta::specta]
pub fn rubric_save(
    state: State<'_, AppState>,
    study_id: Id,
    rubric: Rubric,
) -> Result<RubricSave, CommandError> {
    bounded(&rubric)?;
    state.with_store_mut(|store| {
        let lead = lead(store)?;
        Ok(rubric::save(store, &lead, &study_id, &rubric)?)
    })
}
