//! The sync worker: sends a local outbox (`cases::rating::outbox`, filled by every local edit of
//! an assignment the team server owns, in the edit's own transaction) to the server, without
//! anyone doing anything.
//!
//! One edit at a time, oldest first, so one assignment's edits arrive strictly in their order;
//! each names the server version of its link's last acknowledged edit. An acknowledged edit is
//! recorded on its row (kept for audit). A crash between sending and recording resends the same
//! `edit_id` with the same base version, which the server answers from its first
//! acknowledgement: stored once. A network failure or 5xx keeps the row and retries after 1 s,
//! doubling to 30 s, or sooner when a new local edit wakes the worker. A 409 `conflict` (someone
//! else's newer version) or any other refusal stops that assignment's queue, keeps the local
//! work and says so in plain words; nothing is ever overwritten.

use crate::client::TeamClient;
use crate::error::ClientError;
use crate::wire::EditRequest;
use cases::rating::outbox::{self, OutboxEdit, OutboxStatus, StoppedItem};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

const FIRST_RETRY: Duration = Duration::from_secs(1);
const LONGEST_RETRY: Duration = Duration::from_secs(30);
/// How soon a local edit is noticed when nobody wakes the worker: the reading screen's edits are
/// written by commands that know nothing of the server, so the worker looks for them itself.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// The local side of the outbox (`cases::rating::outbox` on a store): the app's store behind
/// its lock, or a test's. A failure is the local database's, as the words to show.
pub trait Outbox: Send + Sync {
    fn next_to_send(&self) -> Result<Option<OutboxEdit>, String>;
    fn mark_sent(&self, row: i64, server_version: i64) -> Result<(), String>;
    fn mark_stopped(&self, row: i64, reason: &str) -> Result<(), String>;
    fn status(&self) -> Result<OutboxStatus, String>;
}

/// A store of its own behind a mutex (the CLI, the tests).
impl Outbox for std::sync::Mutex<cases::store::Store> {
    fn next_to_send(&self) -> Result<Option<OutboxEdit>, String> {
        outbox::next_to_send(&lock(self)).map_err(|e| e.to_string())
    }
    fn mark_sent(&self, row: i64, server_version: i64) -> Result<(), String> {
        outbox::mark_sent(&mut lock(self), row, server_version).map_err(|e| e.to_string())
    }
    fn mark_stopped(&self, row: i64, reason: &str) -> Result<(), String> {
        outbox::mark_stopped(&mut lock(self), row, reason).map_err(|e| e.to_string())
    }
    fn status(&self) -> Result<OutboxStatus, String> {
        outbox::status(&lock(self)).map_err(|e| e.to_string())
    }
}

fn lock(
    store: &std::sync::Mutex<cases::store::Store>,
) -> std::sync::MutexGuard<'_, cases::store::Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where the sync stands, for the reading screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// Everything sendable is on the server.
    Synced,
    /// Sending now.
    Sending,
    /// The server cannot be reached; the worker retries by itself.
    Offline,
    /// The session ended or expired: the rater must log in again before anything is sent.
    LoggedOut,
    /// The local database failed; retried like a network failure.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SyncStatus {
    pub state: SyncState,
    /// Edits saved on this computer and not yet on the server (stopped items apart).
    pub waiting: u32,
    /// Items the server refused an edit of: their work is kept here, not sent.
    pub stopped: Vec<StoppedItem>,
    /// Why the last attempt failed, in plain words.
    pub problem: Option<String>,
}

/// Wakes and stops a running worker.
#[derive(Debug, Default)]
pub struct SyncControl {
    wake: Notify,
    stop: AtomicBool,
}

impl SyncControl {
    /// A new local edit: send it now (or, while offline, say how many wait).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Ends the worker after the request under way (logout, another server).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// How one pass over the outbox ended.
enum Pass {
    /// Nothing sendable is left.
    Drained,
    Unreachable(String),
    LoggedOut,
    LocalFailure(String),
}

/// Runs until `control.stop()`: drains `outbox` to the server `client` is logged in to,
/// reporting each change of status to `report`.
pub async fn run(
    client: TeamClient,
    outbox: Arc<dyn Outbox>,
    control: Arc<SyncControl>,
    report: impl Fn(SyncStatus) + Send + Sync,
) {
    let mut retry = FIRST_RETRY;
    while !control.stopped() {
        let (state, problem) = match drain(&client, outbox.as_ref(), &control, &report).await {
            Pass::Drained => {
                retry = FIRST_RETRY;
                announce(outbox.as_ref(), SyncState::Synced, None, &report);
                let _ = tokio::time::timeout(IDLE_POLL, control.wake.notified()).await;
                continue;
            }
            Pass::Unreachable(problem) => (SyncState::Offline, problem),
            Pass::LoggedOut => (
                SyncState::LoggedOut,
                "the session on the team server ended: log in again to send your changes"
                    .to_owned(),
            ),
            Pass::LocalFailure(problem) => (SyncState::Failed, problem),
        };
        announce(outbox.as_ref(), state, Some(problem.clone()), &report);
        // Wait out the back-off (until a new session replaces a logged-out worker); a local edit
        // meanwhile updates the count but does not hurry the retry: a rater saving every few
        // seconds must not turn into a request every few seconds.
        let deadline = (state != SyncState::LoggedOut).then(|| Instant::now() + retry);
        retry = (retry * 2).min(LONGEST_RETRY);
        while deadline.is_none_or(|d| Instant::now() < d) {
            let _ = tokio::time::timeout(IDLE_POLL, control.wake.notified()).await;
            if control.stopped() {
                return;
            }
            announce(outbox.as_ref(), state, Some(problem.clone()), &report);
        }
    }
}

fn announce(
    outbox: &dyn Outbox,
    state: SyncState,
    problem: Option<String>,
    report: &(impl Fn(SyncStatus) + Send + Sync),
) {
    match outbox.status() {
        Ok(OutboxStatus { waiting, stopped }) => report(SyncStatus {
            state,
            waiting,
            stopped,
            problem,
        }),
        Err(e) => report(SyncStatus {
            state: SyncState::Failed,
            waiting: 0,
            stopped: Vec::new(),
            problem: Some(e.to_string()),
        }),
    }
}

async fn drain(
    client: &TeamClient,
    outbox: &dyn Outbox,
    control: &SyncControl,
    report: &(impl Fn(SyncStatus) + Send + Sync),
) -> Pass {
    let mut announced = false;
    loop {
        if control.stopped() {
            return Pass::Drained;
        }
        let edit = match outbox.next_to_send() {
            Ok(Some(edit)) => edit,
            Ok(None) => return Pass::Drained,
            Err(e) => return Pass::LocalFailure(e.to_string()),
        };
        if !announced {
            announce(outbox, SyncState::Sending, None, report);
            announced = true;
        }
        let request = EditRequest {
            edit_id: edit.edit_id.clone(),
            base_version: edit.base_version,
            edit: edit.edit.clone(),
        };
        let recorded = match client
            .edit(&edit.study_id, edit.server_assignment, &request)
            .await
        {
            Ok(ack) => outbox.mark_sent(edit.row, ack.version),
            Err(ClientError::Conflict { .. }) => outbox.mark_stopped(
                edit.row,
                "this item was changed on the server since this computer last sent it (by you \
                 on another computer?); your work on it is kept here and was not sent",
            ),
            Err(ClientError::Unauthorised) => return Pass::LoggedOut,
            Err(e @ (ClientError::Refused { .. } | ClientError::Invalid { .. })) => outbox
                .mark_stopped(
                    edit.row,
                    &format!(
                        "the server did not accept a change to this item ({e}); your work on it \
                         is kept here"
                    ),
                ),
            // The server may have stored it and the answer was lost or unreadable: resending the
            // same edit id is safe.
            Err(e) => return Pass::Unreachable(e.to_string()),
        };
        if let Err(e) = recorded {
            return Pass::LocalFailure(e.to_string());
        }
    }
}
