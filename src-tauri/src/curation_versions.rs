//! Where a study's curation versions live, decided once for every curation command: in the open
//! database, or on the team server the study was downloaded from (a curator's copy,
//! `commands/team.rs`). A server-linked study's history is read from the server each time, and
//! its saves, submits and reviews go there with the version they started from, after the same
//! local checks a local save makes (the account database holds the case and its geometry). The
//! server decides again under its own lock: a save from a version someone else moved on from is
//! its 409, shown as the local stale refusal is, and nothing is written here either way.
//!
//! No outbox, unlike a rater's edits: a curation save is an explicit click whose answer the
//! curator waits for (a conflict has to be seen then, not later), and the unsaved form is kept
//! by the window until a save succeeds (`ui/src/lib/curation/unsaved.ts`).

use crate::commands::team::TeamState;
use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::app::curation::{self as app_curation, CaseRef};
use cases::app::team::{CurationReview, CurationSave};
use cases::app::{LeadSession, Session};
use cases::curation::{CuratedTruth, Decision, Version};
use cases::store::Store;
use teamclient::{ClientError, TeamClient};

/// Curation shows and changes ground truth: only a lead's session may (`cases::app`).
pub fn lead(store: &Store) -> Result<LeadSession, CommandError> {
    Ok(Session::current(store)?.unblinded("Curation")?)
}

/// A save: a draft of `branch`, or a merged consensus of `main`.
pub struct Save<'a> {
    pub branch: &'a str,
    pub based_on: Option<i64>,
    pub truth: &'a CuratedTruth,
    pub consensus: bool,
}

/// The versions of one study's cases: here, or on the server this copy came from.
pub enum CurationVersions<'a> {
    Local(&'a AppState),
    Server {
        state: &'a AppState,
        client: TeamClient,
    },
}

impl<'a> CurationVersions<'a> {
    /// The open database's, unless it is a curator's copy of `study_id` from the team server
    /// (then a session with it is needed: "log in" otherwise).
    pub fn of(
        state: &'a AppState,
        team: &TeamState,
        study_id: &str,
    ) -> Result<CurationVersions<'a>, CommandError> {
        let database = state.with_store(|store| Ok(store.path().to_path_buf()))?;
        Ok(match team.curation_client(&database, study_id)? {
            Some(client) => CurationVersions::Server { state, client },
            None => CurationVersions::Local(state),
        })
    }

    fn state(&self) -> &'a AppState {
        match self {
            CurationVersions::Local(state) | CurationVersions::Server { state, .. } => state,
        }
    }

    /// Every version of every branch of the case, oldest first.
    pub async fn history(&self, case: CaseRef<'_>) -> Result<Vec<Version>, CommandError> {
        match self {
            CurationVersions::Local(state) => {
                state.with_store(|store| Ok(app_curation::history(store, &lead(store)?, case)?))
            }
            CurationVersions::Server { state, client } => {
                state.with_store(|store| lead(store).map(drop))?;
                Ok(client.curation_history(case.study_id, case.case_id).await?)
            }
        }
    }

    /// Saves a new version; its number.
    pub async fn save(&self, case: CaseRef<'_>, save: Save<'_>) -> Result<i64, CommandError> {
        let Save {
            branch,
            based_on,
            truth,
            consensus,
        } = save;
        match self {
            CurationVersions::Local(state) => state.with_store_mut(|store| {
                let lead = lead(store)?;
                Ok(if consensus {
                    app_curation::save_consensus(store, &lead, case, based_on, truth)?
                } else {
                    app_curation::save_draft(store, &lead, case, branch, based_on, truth)?
                })
            }),
            CurationVersions::Server { state, client } => {
                state.with_store(|store| {
                    Ok(app_curation::check_draft(
                        store,
                        &lead(store)?,
                        case,
                        branch,
                        truth,
                    )?)
                })?;
                let request = CurationSave {
                    edit_id: new_edit_id(),
                    branch: branch.to_owned(),
                    based_on,
                    truth: truth.clone(),
                    consensus,
                };
                Ok(client
                    .curation_save(case.study_id, case.case_id, &request)
                    .await
                    .map_err(not_saved)?
                    .version)
            }
        }
    }

    pub async fn submit(&self, case: CaseRef<'_>, version: i64) -> Result<(), CommandError> {
        match self {
            CurationVersions::Local(state) => state.with_store_mut(|store| {
                let lead = lead(store)?;
                Ok(app_curation::submit_for_review(
                    store, &lead, case, version,
                )?)
            }),
            CurationVersions::Server { state, client } => {
                state.with_store(|store| lead(store).map(drop))?;
                client
                    .curation_submit(case.study_id, case.case_id, version, &new_edit_id())
                    .await
                    .map(drop)
                    .map_err(not_saved)
            }
        }
    }

    pub async fn review(
        &self,
        case: CaseRef<'_>,
        version: i64,
        decision: Decision,
        comment: &str,
    ) -> Result<(), CommandError> {
        match self {
            CurationVersions::Local(state) => state.with_store_mut(|store| {
                let lead = lead(store)?;
                Ok(app_curation::review(
                    store, &lead, case, version, decision, comment,
                )?)
            }),
            CurationVersions::Server { state, client } => {
                state.with_store(|store| lead(store).map(drop))?;
                let review = CurationReview {
                    edit_id: new_edit_id(),
                    decision,
                    comment: comment.to_owned(),
                };
                client
                    .curation_review(case.study_id, case.case_id, version, &review)
                    .await
                    .map(drop)
                    .map_err(not_saved)
            }
        }
    }

    /// A lead's session in the open database, for the pure steps over a history (diff,
    /// compare, merge).
    pub fn lead(&self) -> Result<LeadSession, CommandError> {
        self.state().with_store(lead)
    }
}

/// Each click is one change on the server; a resend of the same click is not made (the curator
/// sees the answer and decides), so each request gets an id of its own.
fn new_edit_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A failed change on the server: nothing was saved there, and the window keeps the form.
fn not_saved(error: ClientError) -> CommandError {
    match error {
        ClientError::Unreachable { .. } => CommandError::new(
            ErrorCode::ServerUnreachable,
            format!(
                "{error}. Nothing was saved; your changes stay in the form: save again once the \
                 server answers"
            ),
        ),
        other => other.into(),
    }
}
