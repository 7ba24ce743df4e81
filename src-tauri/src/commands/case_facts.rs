//! A case's disease group and clinical note edited by the study lead after import (issue 41
//! finding 3). Thin adapter over `cases::app::case_facts`; refused while a clinician reads blinded
//! here, since the group is what they are asked to recognise.

use crate::error::CommandError;
use crate::state::AppState;
use cases::app::case_facts::{self, CaseFacts};
use cases::app::permissions::Action;
use cases::app::Session;
use cases::ids::Id;
use cases::store::CaseView;
use tauri::State;

/// Sets the case's disease group and clinical note; the case as it is now.
#[tauri::command]
#[specta::specta]
pub async fn edit_case_facts(
    state: State<'_, AppState>,
    study_id: Id,
    case_id: Id,
    facts: CaseFacts,
) -> Result<CaseView, CommandError> {
    state.with_store_mut(|store| {
        let lead = Session::current(store)?.study_lead(Action::EditCaseFacts)?;
        Ok(case_facts::edit(store, &lead, &study_id, &case_id, &facts)?)
    })
}
