//! Rating: raters, assignment plans, the blinded reading item and every edit. Thin adapters: the
//! arguments are checked here; who reads and writes is the session's (`cases::app::reading`), the
//! rules (scales, taxonomy, spans, blinding) `cases::rating`'s. An edit's command returns only
//! after the change is committed to disk.

use crate::commands::team::TeamState;
use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use crate::validate;
use cases::app::permissions::Action;
use cases::app::{plans, reading, ReaderSession, Session};
use cases::ids::{Id, Key};
use cases::rating::{
    EditAck, LabelAck, LabelEdit, PlanSpec, PlanSummary, QueueItem, Rater, RaterRole, RatingEdit,
    ReadingItem, ResumePoint, TopUpSpec, TopUpSummary,
};
use cases::store::Store;
use tauri::State;

/// Rater and plan names; the store applies its own, stricter rules on top.
const MAX_NAME_BYTES: usize = 400;

fn bounded_text<'a>(
    field: &str,
    value: &'a str,
    max_bytes: usize,
) -> Result<&'a str, CommandError> {
    if value.len() > max_bytes {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: at most {max_bytes} bytes, got {}", value.len()),
        ));
    }
    Ok(value)
}

fn check_plan_spec(spec: &PlanSpec) -> Result<(), CommandError> {
    validate::id("spec.study_id", &spec.study_id)?;
    bounded_text("spec.name", &spec.name, MAX_NAME_BYTES)?;
    for &rater in &spec.raters {
        validate::key("spec.raters", rater)?;
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn list_raters(state: State<'_, AppState>) -> Result<Vec<Rater>, CommandError> {
    state.with_store(|store| Ok(store.raters()?))
}

#[tauri::command]
#[specta::specta]
pub async fn create_rater(
    state: State<'_, AppState>,
    name: String,
    role: RaterRole,
    years_experience: Option<u32>,
) -> Result<Rater, CommandError> {
    let name = bounded_text("name", &name, MAX_NAME_BYTES)?;
    state.with_store_mut(|store| Ok(store.create_rater(name, role, years_experience)?))
}

#[tauri::command]
#[specta::specta]
pub async fn current_rater(state: State<'_, AppState>) -> Result<Option<Rater>, CommandError> {
    state.with_store(|store| Ok(store.current_rater()?))
}

#[tauri::command]
#[specta::specta]
pub async fn set_current_rater(
    state: State<'_, AppState>,
    rater_id: Key,
) -> Result<Rater, CommandError> {
    state.with_store_mut(|store| Ok(store.set_current_rater(rater_id.get())?))
}

/// Ends the current rater's blinded session, so a study lead can open the calibration report.
#[tauri::command]
#[specta::specta]
pub async fn leave_reading(state: State<'_, AppState>) -> Result<(), CommandError> {
    state.with_store_mut(|store| Ok(store.leave_reading()?))
}

/// The study's assignment plans with each rater's counts: the study lead's Plans screen.
#[tauri::command]
#[specta::specta]
pub async fn list_assignment_plans(
    state: State<'_, AppState>,
    study_id: Id,
) -> Result<Vec<PlanSummary>, CommandError> {
    state.with_store(|store| {
        let lead = Session::current(store)?.study_lead(Action::PlanAssignments)?;
        Ok(plans::list(store, &lead, &study_id)?)
    })
}

/// A plan the study lead makes, recorded as theirs (or the acting curator's): refused while a
/// blinded reader is chosen here.
#[tauri::command]
#[specta::specta]
pub async fn create_lead_plan(
    state: State<'_, AppState>,
    spec: PlanSpec,
) -> Result<PlanSummary, CommandError> {
    check_plan_spec(&spec)?;
    state.with_store_mut(|store| {
        let lead = Session::current(store)?.study_lead(Action::PlanAssignments)?;
        Ok(plans::create(store, &lead, &spec)?)
    })
}

/// A top-up of one of the study's plans: raters joining it and responses added since.
#[tauri::command]
#[specta::specta]
pub async fn top_up_assignment_plan(
    state: State<'_, AppState>,
    spec: TopUpSpec,
) -> Result<TopUpSummary, CommandError> {
    validate::id("spec.study_id", &spec.study_id)?;
    bounded_text("spec.plan", &spec.plan, MAX_NAME_BYTES)?;
    for &rater in &spec.new_raters {
        validate::key("spec.new_raters", rater)?;
    }
    state.with_store_mut(|store| {
        let lead = Session::current(store)?.study_lead(Action::TopUp)?;
        Ok(plans::top_up(store, &lead, &spec)?)
    })
}

/// Gives the reader a queue on the demo study (see `Store::ensure_demo_queue`).
#[tauri::command]
#[specta::specta]
pub async fn ensure_demo_queue(
    state: State<'_, AppState>,
) -> Result<Option<PlanSummary>, CommandError> {
    state.with_store_mut(|store| {
        let reader = Session::current(store)?.reader()?;
        Ok(reading::ensure_demo_queue(store, &reader)?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn reading_queue(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
) -> Result<Vec<QueueItem>, CommandError> {
    // A rater looking at their queue asks what the lead changed (new items, a lock) now, not
    // at the worker's next turn; the queue shown is this database's, the news follow as events.
    team.refresh_sync();
    state.with_store(|store| {
        let reader = Session::current(store)?.reader()?;
        Ok(reading::queue(store, &reader, &study_id)?)
    })
}

/// The reader's item. For an item read from the team server, what the server said of it (the
/// study lead's lock, a reveal made from another computer) is what the sync worker last learned
/// and kept in the study's database: the item is read here alone, with no request on the way.
#[tauri::command]
#[specta::specta]
pub async fn reading_item(
    state: State<'_, AppState>,
    assignment: Key,
) -> Result<ReadingItem, CommandError> {
    state.with_store_mut(|store| {
        let reader = Session::current(store)?.reader()?;
        Ok(reading::item(store, &reader, assignment.get())?)
    })
}

// Every edit names the rater it was made as (`made_as`): the reader the screen showed when the
// edit was made. It is written as the session's reader, and refused with `reader_changed` when
// that is no longer `made_as` (`cases::app::Session::reader_as`).

/// The session's reader for an edit made as `made_as`.
fn editor(store: &Store, made_as: Key) -> Result<ReaderSession, CommandError> {
    Ok(Session::current(store)?.reader_as(store, made_as.get())?)
}

#[tauri::command]
#[specta::specta]
pub async fn save_rating(
    state: State<'_, AppState>,
    made_as: Key,
    assignment: Key,
    edit: RatingEdit,
) -> Result<EditAck, CommandError> {
    state.with_store_mut(|store| {
        let reader = editor(store, made_as)?;
        Ok(reading::save_rating(
            store,
            &reader,
            assignment.get(),
            &edit,
        )?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn add_error_label(
    state: State<'_, AppState>,
    made_as: Key,
    assignment: Key,
    label: LabelEdit,
) -> Result<LabelAck, CommandError> {
    validate::id("label.category", &label.category)?;
    state.with_store_mut(|store| {
        let reader = editor(store, made_as)?;
        Ok(reading::add_error_label(
            store,
            &reader,
            assignment.get(),
            &label,
        )?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn update_error_label(
    state: State<'_, AppState>,
    made_as: Key,
    label_id: Key,
    label: LabelEdit,
) -> Result<EditAck, CommandError> {
    validate::id("label.category", &label.category)?;
    state.with_store_mut(|store| {
        let reader = editor(store, made_as)?;
        Ok(reading::update_error_label(
            store,
            &reader,
            label_id.get(),
            &label,
        )?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn delete_error_label(
    state: State<'_, AppState>,
    made_as: Key,
    label_id: Key,
) -> Result<EditAck, CommandError> {
    state.with_store_mut(|store| {
        let reader = editor(store, made_as)?;
        Ok(reading::delete_error_label(store, &reader, label_id.get())?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn submit_rating(
    state: State<'_, AppState>,
    made_as: Key,
    assignment: Key,
) -> Result<EditAck, CommandError> {
    state.with_store_mut(|store| {
        let reader = editor(store, made_as)?;
        Ok(reading::submit_rating(store, &reader, assignment.get())?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn reopen_rating(
    state: State<'_, AppState>,
    made_as: Key,
    assignment: Key,
) -> Result<EditAck, CommandError> {
    state.with_store_mut(|store| {
        let reader = editor(store, made_as)?;
        Ok(reading::reopen_rating(store, &reader, assignment.get())?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn set_position(state: State<'_, AppState>, assignment: Key) -> Result<(), CommandError> {
    state.with_store_mut(|store| {
        let reader = Session::current(store)?.reader()?;
        Ok(reading::set_position(store, &reader, assignment.get())?)
    })
}

#[tauri::command]
#[specta::specta]
pub async fn resume_position(
    state: State<'_, AppState>,
) -> Result<Option<ResumePoint>, CommandError> {
    state.with_store(|store| {
        let reader = Session::current(store)?.reader()?;
        Ok(reading::resume(store, &reader)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_seed_of_2_pow_63_minus_1_crosses_ipc_exactly_as_a_string() {
        let page = r#"{"study_id":"neurorater-demo","name":"wide","seed":"9223372036854775807",
                       "raters":[1],"overlap_share":0.5}"#;
        let spec: PlanSpec = serde_json::from_str(page).unwrap();
        assert_eq!(spec.seed, (1 << 63) - 1);
        assert_eq!(check_plan_spec(&spec), Ok(()));
        let back = serde_json::to_value(&spec).unwrap();
        assert_eq!(back["seed"], "9223372036854775807");
        // A number was rounded by the page before it got here: refused, never trusted.
        let rounded = page.replace(r#""9223372036854775807""#, "9223372036854775807");
        assert!(serde_json::from_str::<PlanSpec>(&rounded).is_err());
    }

    #[test]
    fn overlong_names_are_refused_before_reaching_the_store() {
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        assert_eq!(bounded_text("name", "Dr Ada", MAX_NAME_BYTES), Ok("Dr Ada"));
        let error = bounded_text("name", &long, MAX_NAME_BYTES).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArgument);
        assert!(
            error.message.starts_with("name: at most 400 bytes"),
            "{}",
            error.message
        );
    }

    #[test]
    fn rating_errors_reach_the_ui_with_their_own_codes() {
        use cases::rating::RatingError;
        let incomplete = CommandError::from(cases::Error::Rating(RatingError::Incomplete {
            missing: vec!["overall".into(), "confidence".into()],
        }));
        assert_eq!(incomplete.code, ErrorCode::Incomplete);
        assert_eq!(
            incomplete.message,
            "the rating cannot be submitted yet: overall, confidence still empty"
        );
        let refused = CommandError::from(cases::Error::Rating(RatingError::Refused(
            "this rating is submitted".into(),
        )));
        assert_eq!(refused.code, ErrorCode::Refused);
        let invalid = CommandError::from(cases::Error::Rating(RatingError::Invalid {
            field: "span".into(),
            message: "outside the rationale".into(),
        }));
        assert_eq!(
            (invalid.code, invalid.message.as_str()),
            (ErrorCode::InvalidArgument, "span: outside the rationale")
        );
        let changed = CommandError::from(cases::Error::Rating(RatingError::ReaderChanged(
            "this edit was made as Dr Ada, and Dr Bo is the reader here now".into(),
        )));
        assert_eq!(changed.code, ErrorCode::ReaderChanged);
    }
}
