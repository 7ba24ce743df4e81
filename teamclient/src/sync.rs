//! The sync worker: sends a local outbox (`cases::rating::outbox`, filled by every local edit of
//! an assignment the team server owns, in the edit's own transaction) to the server, without
//! anyone doing anything, and keeps the local copy up with what the server says of the study
//! (the refresh, below).
//!
//! One edit at a time, oldest first, so one assignment's edits arrive strictly in their order;
//! each names the server version of its link's last acknowledged edit. An acknowledged edit is
//! recorded on its row (kept for audit). A crash between sending and recording resends the same
//! `edit_id` with the same base version, which the server answers from its first
//! acknowledgement: stored once. A network failure or 5xx keeps the row and retries after 1 s,
//! doubling to 30 s, or sooner when a new local edit wakes the worker. A 409 `conflict` (someone
//! else's newer version) or any other refusal stops that assignment's queue, keeps the local
//! work and says so in plain words; nothing is ever overwritten.
//!
//! The refresh: once the outbox is drained, the worker reads the rater's membership and queue
//! on the server and hands them to the local copy (`cases::app::team::learn_from_server`): the
//! study lead's lock, reveals made elsewhere, a rubric the lead moved on (its item fetched and
//! taken here) and items the lead added (their package downloaded and imported). It runs when
//! the worker starts, every [`REFRESH_EVERY`], when a pass sent edits (at most every
//! [`REFRESH_AFTER_SEND`]: a rater saving every second costs no extra requests per save) and
//! when asked ([`SyncControl::refresh`]). A failed refresh is retried with the next; it never
//! holds edits back.

use crate::client::TeamClient;
use crate::error::ClientError;
use crate::wire::{EditRequest, Membership, QueueEntry};
use cases::app::team::ServerNews;
use cases::model::Rubric;
use cases::rating::outbox::{self, OutboxEdit, OutboxStatus, StoppedItem};
use serde::Serialize;
use std::path::{Path, PathBuf};
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
/// How often a rater's app asks the server what changed while nothing is sent: a lock, a reveal
/// elsewhere, a new rubric or new items reach a reading rater within this.
pub const REFRESH_EVERY: Duration = Duration::from_secs(30);
/// The least time between two refreshes that sent edits bring about.
pub const REFRESH_AFTER_SEND: Duration = Duration::from_secs(5);

/// The local copy of a team study the worker keeps in step: its outbox
/// (`cases::rating::outbox` on a store) and what it learns from the server
/// (`cases::app::team::learn_from_server`): the app's store behind its lock, or a test's. A
/// failure is the local database's, as the words to show.
pub trait LocalCopy: Send + Sync {
    fn next_to_send(&self) -> Result<Option<OutboxEdit>, String>;
    fn mark_sent(&self, row: i64, server_version: i64) -> Result<(), String>;
    fn mark_stopped(&self, row: i64, reason: &str) -> Result<(), String>;
    fn status(&self) -> Result<OutboxStatus, String>;
    /// The studies read here from the server.
    fn studies(&self) -> Result<Vec<String>, String>;
    /// Takes in the server's word on `study`: the rater's membership and queue there.
    fn learn(
        &self,
        study: &str,
        membership: &Membership,
        queue: &[QueueEntry],
    ) -> Result<ServerNews, String>;
    /// Makes the server's current rubric (version `version` there) the study's here; whether
    /// that changed the rubric held.
    fn follow_rubric(&self, study: &str, rubric: &Rubric, version: u32) -> Result<bool, String>;
    /// Where the package of a top-up is downloaded to before it is imported.
    fn top_up_file(&self, study: &str) -> Result<PathBuf, String>;
    /// Imports the rater package the server built (the whole queue: what is held is kept as it
    /// is, the items the lead added are added); the number of items added.
    fn import_top_up(&self, study: &str, package: &Path) -> Result<u32, String>;
    /// What a refresh brought, once it is all taken in (`added`: items imported), for whoever
    /// shows it. Called only when something changed.
    fn announce_news(&self, _study: &str, _news: &ServerNews, _added: u32) {}
}

/// A store of its own behind a mutex (the CLI, the tests).
impl LocalCopy for std::sync::Mutex<cases::store::Store> {
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
    fn studies(&self) -> Result<Vec<String>, String> {
        on_store::studies(&lock(self)).map_err(|e| e.to_string())
    }
    fn learn(
        &self,
        study: &str,
        membership: &Membership,
        queue: &[QueueEntry],
    ) -> Result<ServerNews, String> {
        on_store::learn(&mut lock(self), study, membership, queue).map_err(|e| e.to_string())
    }
    fn follow_rubric(&self, study: &str, rubric: &Rubric, version: u32) -> Result<bool, String> {
        on_store::follow_rubric(&mut lock(self), study, rubric, version).map_err(|e| e.to_string())
    }
    fn top_up_file(&self, _study: &str) -> Result<PathBuf, String> {
        Ok(lock(self).path().with_extension("top-up.tar"))
    }
    fn import_top_up(&self, _study: &str, package: &Path) -> Result<u32, String> {
        let path = lock(self).path().to_path_buf();
        on_store::import_top_up(&path, package).map_err(|e| e.to_string())
    }
}

/// The local copy's steps on a store, as the session's reader: what each [`LocalCopy`] calls,
/// whoever holds the store.
pub mod on_store {
    use super::{Membership, QueueEntry, ServerNews};
    use cases::model::Rubric;
    use cases::store::Store;
    use std::path::Path;

    /// The studies of `store` read from the team server (their items link to the server's).
    pub fn studies(store: &Store) -> cases::Result<Vec<String>> {
        let mut studies = Vec::new();
        for study in store.studies()? {
            if !cases::package::server_links(store, &study.id)?.is_empty() {
                studies.push(study.id);
            }
        }
        Ok(studies)
    }

    pub fn learn(
        store: &mut Store,
        study: &str,
        membership: &Membership,
        queue: &[QueueEntry],
    ) -> cases::Result<ServerNews> {
        let reader = cases::app::Session::current(store)?.reader()?;
        cases::app::team::learn_from_server(store, &reader, study, membership, queue)
    }

    pub fn follow_rubric(
        store: &mut Store,
        study: &str,
        rubric: &Rubric,
        version: u32,
    ) -> cases::Result<bool> {
        let reader = cases::app::Session::current(store)?.reader()?;
        cases::app::team::follow_server_rubric(store, &reader, study, rubric, Some(version))
            .map(|saved| saved.is_some())
    }

    /// Imports a top-up into the database at `database` on a connection of its own, not the
    /// reader's: the package's images are unpacked and checked before its one write
    /// transaction, and the rater reads and saves meanwhile (a save waits for that commit at
    /// most: SQLite's WAL and busy timeout). The number of items added.
    pub fn import_top_up(database: &Path, package: &Path) -> cases::Result<u32> {
        let mut store = Store::open(database)?;
        cases::package::import_rater_package(&mut store, package, &cases::progress::NoProgress)
            .map(|imported| imported.items)
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
    refresh: AtomicBool,
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

    /// Ask the server what changed as soon as the outbox is drained (the rater opened their
    /// queue, for instance), not only every [`REFRESH_EVERY`].
    pub fn refresh(&self) {
        self.refresh.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// How one pass over the outbox ended.
enum Pass {
    /// Nothing sendable is left; `sent`: edits this pass sent.
    Drained {
        sent: bool,
    },
    Unreachable(String),
    LoggedOut,
    LocalFailure(String),
}

/// Runs until `control.stop()`: drains `outbox` to the server `client` is logged in to,
/// reporting each change of status to `report`.
pub async fn run(
    client: TeamClient,
    outbox: Arc<dyn LocalCopy>,
    control: Arc<SyncControl>,
    report: impl Fn(SyncStatus) + Send + Sync,
) {
    let mut retry = FIRST_RETRY;
    let mut refreshed: Option<Instant> = None;
    while !control.stopped() {
        let (state, problem) = match drain(&client, outbox.as_ref(), &control, &report).await {
            Pass::Drained { sent } => {
                retry = FIRST_RETRY;
                let since = refreshed.map(|at| at.elapsed());
                let due = control.refresh.swap(false, Ordering::SeqCst)
                    || since.is_none_or(|since| {
                        since >= REFRESH_EVERY || (sent && since >= REFRESH_AFTER_SEND)
                    });
                if due {
                    match refresh(&client, outbox.as_ref(), &control).await {
                        Refresh::Done => refreshed = Some(Instant::now()),
                        Refresh::LoggedOut => {
                            announce(
                                outbox.as_ref(),
                                SyncState::LoggedOut,
                                Some(LOGGED_OUT.to_owned()),
                                &report,
                            );
                            wait_until_stopped(&control).await;
                            return;
                        }
                        // Tried again with the next pass's refresh: edits are not held back.
                        Refresh::Failed => refreshed = Some(Instant::now()),
                    }
                }
                announce(outbox.as_ref(), SyncState::Synced, None, &report);
                let _ = tokio::time::timeout(IDLE_POLL, control.wake.notified()).await;
                continue;
            }
            Pass::Unreachable(problem) => (SyncState::Offline, problem),
            Pass::LoggedOut => (SyncState::LoggedOut, LOGGED_OUT.to_owned()),
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

const LOGGED_OUT: &str = "the session on the team server ended: log in again to send your changes";

/// A logged-out worker waits for a new session to replace it.
async fn wait_until_stopped(control: &SyncControl) {
    while !control.stopped() {
        let _ = tokio::time::timeout(IDLE_POLL, control.wake.notified()).await;
    }
}

/// How one refresh ended.
enum Refresh {
    Done,
    LoggedOut,
    /// The server or the local database failed; the next refresh tries again.
    Failed,
}

/// Asks the server what changed for every study read here from it, and takes it in.
async fn refresh(client: &TeamClient, local: &dyn LocalCopy, control: &SyncControl) -> Refresh {
    let Ok(studies) = local.studies() else {
        return Refresh::Failed;
    };
    if studies.is_empty() {
        return Refresh::Done;
    }
    let me = match client.me().await {
        Ok(me) => me,
        Err(ClientError::Unauthorised) => return Refresh::LoggedOut,
        Err(_) => return Refresh::Failed,
    };
    let mut outcome = Refresh::Done;
    for study in studies {
        if control.stopped() {
            break;
        }
        // A study the account no longer has a role in is read here as it is.
        let Some(membership) = me.studies.iter().find(|m| m.study_id == study) else {
            continue;
        };
        match refresh_study(client, local, membership).await {
            Ok(()) => {}
            Err(ClientError::Unauthorised) => return Refresh::LoggedOut,
            Err(_) => outcome = Refresh::Failed,
        }
    }
    outcome
}

async fn refresh_study(
    client: &TeamClient,
    local: &dyn LocalCopy,
    membership: &Membership,
) -> Result<(), ClientError> {
    let study = membership.study_id.as_str();
    let local_failure = |reason: String| ClientError::Unexpected {
        what: "this computer's copy of the study".to_owned(),
        reason,
    };
    let queue = client.queue(study).await?;
    let mut news = local
        .learn(study, membership, &queue)
        .map_err(local_failure)?;
    if let (Some(version), Some(first)) = (news.rubric_behind, queue.first()) {
        let item = client.item(study, first.assignment).await?;
        // The item carries the server's current rubric; its number is the one the membership
        // named unless the lead moved on again in between, when the item's is newer.
        let version = item.rubric_version.max(version);
        let changed = local
            .follow_rubric(study, &item.rubric, version)
            .map_err(local_failure)?;
        // Told only when the rubric held here changed (a first refresh finds it the same).
        news.rubric_behind = changed.then_some(version);
    }
    let mut added = 0;
    if news.items_missing > 0 {
        let file = local.top_up_file(study).map_err(local_failure)?;
        client
            .download_package(study, None, &file, &cases::progress::NoProgress)
            .await?;
        let imported = local.import_top_up(study, &file);
        let _ = std::fs::remove_file(&file);
        added = imported.map_err(local_failure)?;
    }
    if news != ServerNews::default() || added > 0 {
        local.announce_news(study, &news, added);
    }
    Ok(())
}

fn announce(
    outbox: &dyn LocalCopy,
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
    outbox: &dyn LocalCopy,
    control: &SyncControl,
    report: &(impl Fn(SyncStatus) + Send + Sync),
) -> Pass {
    let mut announced = false;
    loop {
        if control.stopped() {
            return Pass::Drained { sent: announced };
        }
        let edit = match outbox.next_to_send() {
            Ok(Some(edit)) => edit,
            Ok(None) => return Pass::Drained { sent: announced },
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
