//! Curation: ground-truth versions, review, diff, comparing and merging two independent
//! curations into a consensus, and the reveal after rating. Thin adapters: the
//! arguments are checked here, the rules (validation against the images, concurrency, who may
//! review) in `cases::curation`, who may act in `cases::app`: every step needs a lead's session
//! (the app's current rater, not reading blinded) and is recorded under its curator. Whether the
//! versions are this database's or the team server's is decided once, in
//! `crate::curation_versions`.

use crate::commands::team::TeamState;
use crate::curation_versions::{CurationVersions, Save};
use crate::error::{CommandError, ErrorCode};
use crate::ground_truth_reveal::GroundTruthReveal;
use crate::state::AppState;
use cases::app::curation::{self, CaseRef};
use cases::curation::{Change, CuratedTruth, Decision, Disagreement, RevealedTruth, Side, Version};
use cases::ids::{Id, Key};
use std::collections::BTreeMap;
use tauri::State;

/// A review comment; longer text belongs in the version itself.
const MAX_COMMENT_BYTES: usize = 4000;
/// A case's ground truth as JSON: a freehand outline of 2048 points is ~100 kB.
const MAX_TRUTH_BYTES: usize = 2_000_000;

/// A unit name is `diagnosis`…`difficulty`, `lesions[<id>]` or `tasks[<id>]`; ids are short.
const MAX_UNIT_BYTES: usize = 200;
/// More choices than a case could have units is a broken page, not a merge.
const MAX_CHOICES: usize = 1000;

fn check_truth_size(truth: &CuratedTruth) -> Result<(), CommandError> {
    let size = serde_json::to_vec(truth).map_or(usize::MAX, |bytes| bytes.len());
    if size > MAX_TRUTH_BYTES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("truth: at most {MAX_TRUTH_BYTES} bytes of JSON, got {size}"),
        ));
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn curation_history(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
) -> Result<Vec<Version>, CommandError> {
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    CurationVersions::of(&state, &team, &study_id)?
        .history(case)
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn curation_save_draft(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    branch: Option<Id>,
    based_on: Option<Key>,
    truth: CuratedTruth,
) -> Result<i64, CommandError> {
    let branch = branch.as_deref().unwrap_or(cases::curation::MAIN_BRANCH);
    let based_on = based_on.map(Key::get);
    check_truth_size(&truth)?;
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    let save = Save {
        branch,
        based_on,
        truth: &truth,
        consensus: false,
    };
    CurationVersions::of(&state, &team, &study_id)?
        .save(case, save)
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn curation_submit(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    version: Key,
) -> Result<(), CommandError> {
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    CurationVersions::of(&state, &team, &study_id)?
        .submit(case, version.get())
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn curation_review(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    version: Key,
    decision: Decision,
    comment: String,
) -> Result<(), CommandError> {
    if comment.len() > MAX_COMMENT_BYTES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!(
                "comment: at most {MAX_COMMENT_BYTES} bytes, got {}",
                comment.len()
            ),
        ));
    }
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    CurationVersions::of(&state, &team, &study_id)?
        .review(case, version.get(), decision, &comment)
        .await
}

/// The field-level changes from version `from` to version `to` of a case.
#[tauri::command]
#[specta::specta]
pub async fn curation_diff(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    from: Key,
    to: Key,
) -> Result<Vec<Change>, CommandError> {
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    let versions = CurationVersions::of(&state, &team, &study_id)?;
    let history = versions.history(case).await?;
    Ok(curation::diff(
        &history,
        &versions.lead()?,
        case,
        from.get(),
        to.get(),
    )?)
}

/// The units on which versions `a` and `b` of a case (usually the latest of two curators'
/// branches) disagree, each with both sides.
#[tauri::command]
#[specta::specta]
pub async fn curation_compare(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    a: Key,
    b: Key,
) -> Result<Vec<Disagreement>, CommandError> {
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    let versions = CurationVersions::of(&state, &team, &study_id)?;
    let history = versions.history(case).await?;
    Ok(curation::compare(
        &history,
        &versions.lead()?,
        case,
        a.get(),
        b.get(),
    )?)
}

/// The consensus of versions `a` and `b`: what they agree on and, per disagreement, the side
/// `choices` names. Nothing is saved: the curator edits it and saves it as a consensus.
#[tauri::command]
#[specta::specta]
pub async fn curation_merge(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    a: Key,
    b: Key,
    choices: BTreeMap<String, Side>,
) -> Result<CuratedTruth, CommandError> {
    if choices.len() > MAX_CHOICES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("choices: at most {MAX_CHOICES}, got {}", choices.len()),
        ));
    }
    if let Some(unit) = choices
        .keys()
        .find(|u| u.is_empty() || u.len() > MAX_UNIT_BYTES)
    {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!(
                "choices: a unit name of 1 to {MAX_UNIT_BYTES} bytes, got {} bytes",
                unit.len()
            ),
        ));
    }
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    let versions = CurationVersions::of(&state, &team, &study_id)?;
    let history = versions.history(case).await?;
    Ok(curation::merge(
        &history,
        &versions.lead()?,
        case,
        a.get(),
        b.get(),
        &choices,
    )?)
}

/// Saves a merged (and possibly edited) consensus as a draft of `main`, based on main's
/// latest version as the curator saw it; reviewed like any other draft.
#[tauri::command]
#[specta::specta]
pub async fn curation_save_consensus(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: Id,
    case_id: Id,
    based_on: Option<Key>,
    truth: CuratedTruth,
) -> Result<i64, CommandError> {
    let based_on = based_on.map(Key::get);
    check_truth_size(&truth)?;
    let case = CaseRef {
        study_id: &study_id,
        case_id: &case_id,
    };
    let save = Save {
        branch: cases::curation::MAIN_BRANCH,
        based_on,
        truth: &truth,
        consensus: true,
    };
    CurationVersions::of(&state, &team, &study_id)?
        .save(case, save)
        .await
}

/// The ground truth of an assignment's case, for the current rater after they submitted: from
/// this database, or from the team server the item was read from (`crate::ground_truth_reveal`).
#[tauri::command]
#[specta::specta]
pub async fn reveal_ground_truth(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    assignment_id: Key,
) -> Result<RevealedTruth, CommandError> {
    GroundTruthReveal::of(&state, &team, assignment_id.get())?
        .reveal(assignment_id.get())
        .await
}
