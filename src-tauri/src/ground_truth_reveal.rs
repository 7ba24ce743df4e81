//! Where a rater's reveal of an item's ground truth is answered, decided once for the reveal
//! command: by the open database, or — for an item read from the team server — by the server,
//! as the account's database holds no ground truth (the server-built package carries none).
//!
//! A server item's reveal needs the server to hold the rater's submit first: the command waits a
//! little for the outbox to deliver it, and says plainly when it cannot (offline: the submit is
//! kept here and sent by itself). Then it sends the item's `reveal` edit (its id derived from
//! the item and version, so a resend is stored once), reads the item back and shows its ground
//! truth in the shape a local reveal has. The reveal is recorded here as a local one is
//! (`cases::app::curation::reveal_from_server`), so reopening the rating is refused alike.

use crate::commands::team::TeamState;
use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::app::curation;
use cases::app::Session;
use cases::curation::RevealedTruth;
use cases::rating::outbox::{self, RevealDelivery, RevealEdit};
use std::time::{Duration, Instant};
use teamclient::sync::SyncState;
use teamclient::{ClientError, EditRequest, TeamClient};

/// How long a reveal waits for the outbox to deliver the item's submit while the server answers:
/// the sync worker sends within a second or two of being woken.
const DELIVERY_WAIT: Duration = Duration::from_secs(15);
const DELIVERY_POLL: Duration = Duration::from_millis(200);

/// Who answers the reveal of one assignment.
pub enum GroundTruthReveal<'a> {
    Local(&'a AppState),
    Server {
        state: &'a AppState,
        team: &'a TeamState,
        client: TeamClient,
    },
}

impl<'a> GroundTruthReveal<'a> {
    /// The open database's, unless `assignment` came from a package the team server built (then
    /// a session with the server is needed: "log in" otherwise).
    pub fn of(
        state: &'a AppState,
        team: &'a TeamState,
        assignment: i64,
    ) -> Result<GroundTruthReveal<'a>, CommandError> {
        let linked =
            state.with_store(|store| Ok(cases::package::server_link(store, assignment)?))?;
        Ok(match linked {
            None => GroundTruthReveal::Local(state),
            Some(_) => GroundTruthReveal::Server {
                state,
                team,
                client: team.client().map_err(|_| {
                    CommandError::new(
                        ErrorCode::LoggedOut,
                        "the ground truth of this study is kept on the team server: log in to \
                         it to see it",
                    )
                })?,
            },
        })
    }

    /// The ground truth of `assignment`'s case for the reader, once they submitted.
    pub async fn reveal(&self, assignment: i64) -> Result<RevealedTruth, CommandError> {
        match self {
            GroundTruthReveal::Local(state) => state.with_store_mut(|store| {
                let reader = Session::current(store)?.reader()?;
                Ok(curation::reveal_ground_truth(store, &reader, assignment)?)
            }),
            GroundTruthReveal::Server {
                state,
                team,
                client,
            } => {
                state.with_store(|store| {
                    let reader = Session::current(store)?.reader()?;
                    Ok(curation::check_reveal(store, &reader, assignment)?)
                })?;
                let edit = delivered(state, team, assignment).await?;
                // An item already revealed on the server (from another computer) is shown as
                // it is; otherwise the reveal is sent and the item read again for its truth.
                let before = client.item(&edit.study_id, edit.server_assignment).await?;
                let revealed_before = before.rating.as_ref().and_then(|r| r.revealed_at.as_ref());
                let item = if revealed_before.is_some() {
                    before
                } else {
                    let request = EditRequest {
                        edit_id: edit.edit_id.clone(),
                        base_version: edit.base_version,
                        edit: cases::app::team::TeamEdit::Reveal,
                    };
                    let ack = client
                        .edit(&edit.study_id, edit.server_assignment, &request)
                        .await
                        .map_err(not_revealed)?;
                    state.with_store_mut(|store| {
                        Ok(outbox::record_reveal(
                            store,
                            assignment,
                            &edit,
                            ack.version,
                        )?)
                    })?;
                    client.item(&edit.study_id, edit.server_assignment).await?
                };
                let (Some(truth), Some(number)) = (item.ground_truth, item.ground_truth_version)
                else {
                    return Err(CommandError::new(
                        ErrorCode::NotFound,
                        "the team server shows no ground truth for this case: it has none yet, \
                         or the study lead has closed the ground truth to you",
                    ));
                };
                let truth = serde_json::from_value(truth).map_err(|e| {
                    CommandError::from(ClientError::Unexpected {
                        what: "the ground truth".to_owned(),
                        reason: e.to_string(),
                    })
                })?;
                state.with_store_mut(|store| {
                    let reader = Session::current(store)?.reader()?;
                    Ok(curation::reveal_from_server(
                        store, &reader, assignment, &truth, number,
                    )?)
                })
            }
        }
    }
}

/// The item's reveal edit once every edit of it is on the server, waking the sync worker and
/// waiting a little while it sends; refused, saying why, while the server does not hold them.
async fn delivered(
    state: &AppState,
    team: &TeamState,
    assignment: i64,
) -> Result<RevealEdit, CommandError> {
    let deadline = Instant::now() + DELIVERY_WAIT;
    loop {
        let delivery = state.with_store(|store| Ok(outbox::reveal_delivery(store, assignment)?))?;
        let waiting = match delivery {
            Some(RevealDelivery::Ready(edit)) => return Ok(edit),
            Some(RevealDelivery::Stopped { reason }) => {
                return Err(CommandError::new(
                    ErrorCode::Refused,
                    format!(
                        "the ground truth is shown by the team server once it holds your submit, \
                         and it did not accept your changes to this item: {reason}. Resolve that \
                         first (beside the save status)"
                    ),
                ))
            }
            Some(RevealDelivery::Waiting { waiting }) => waiting,
            None => {
                return Err(CommandError::new(
                    ErrorCode::NotFound,
                    format!("assignment {assignment} on the team server"),
                ))
            }
        };
        let sync = team.wake_sync();
        let cannot_send = matches!(
            sync,
            None | Some(SyncState::Offline | SyncState::LoggedOut | SyncState::Failed)
        );
        if cannot_send || Instant::now() >= deadline {
            return Err(CommandError::new(
                ErrorCode::ServerUnreachable,
                format!(
                    "the ground truth is shown by the team server, and your submit has not \
                     reached it yet ({} waiting on this computer{}). Nothing is lost: it is \
                     saved here and sent by itself once the server answers; show the ground \
                     truth again then",
                    if waiting == 1 {
                        "1 change".to_owned()
                    } else {
                        format!("{waiting} changes")
                    },
                    match sync {
                        Some(SyncState::LoggedOut) => "; log in again to send it",
                        None => "; open the study from the team server to send it",
                        _ => "",
                    }
                ),
            ));
        }
        tokio::time::sleep(DELIVERY_POLL).await;
    }
}

/// A refused reveal in the rater's words: the server's lock, or the item moved on elsewhere.
fn not_revealed(error: ClientError) -> CommandError {
    match error {
        ClientError::Conflict { .. } => CommandError::new(
            ErrorCode::Refused,
            "this item was changed on the server since this computer last sent it (by you on \
             another computer?): resolve that first (beside the save status), then show the \
             ground truth again",
        ),
        ClientError::Refused { code, message, .. } if code == "refused" => CommandError::new(
            ErrorCode::Refused,
            format!("the team server did not show the ground truth: {message}"),
        ),
        other => other.into(),
    }
}
