//! The team server (docs/team-server.md, "The desktop app against a server"). A rater logs in,
//! picks a study, and the app downloads their queue as a rater package the server builds,
//! imports it with the package import, and reads it exactly as an imported package: offline
//! capable, blinded, the reading room unchanged. Every local edit of it is queued in the store's
//! outbox in its own transaction (`cases::rating::outbox`), and the sync worker
//! (`teamclient::sync`) sends the queue while a session exists, reporting [`SYNC_EVENT`]s the
//! reading screen shows. A lead gets the dashboard: the server's progress per rater and site.
//!
//! All HTTP is here, in Rust: the webview talks to no server. The server decides who may do
//! what (its roles); the token stays in a 0600 file (`teamclient::SessionFiles`), never in the
//! webview.

use crate::error::{CommandError, ErrorCode};
use crate::long_work::{EventProgress, LongWork, Overlap};
use crate::state::AppState;
use cases::app::permissions::{Action, StudyRole};
use cases::app::team::{PullReport, ServerNews};
use cases::ids::Key;
use cases::rating::outbox::{self, OutboxEdit, OutboxStatus, Resolution};
use cases::rating::{Rater, RaterRole};
use cases::store::Store;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use tauri::{AppHandle, Emitter, Manager, Runtime, State};
use teamclient::sync::{on_store, LocalCopy, SyncControl, SyncState, SyncStatus};
use teamclient::{
    check_segment, ClientError, Me, Membership, Progress, QueueEntry, ServerUrl, Session,
    SessionFiles, TeamClient,
};

/// The sync worker's status, each time it changes.
pub const SYNC_EVENT: &str = "team-sync";
/// The package download and import.
pub const DOWNLOAD_EVENT: &str = "team-download";
/// What the sync worker's refresh brought while a rater reads ([`TeamNews`]).
pub const NEWS_EVENT: &str = "team-news";

/// What the server changed for a study being read here, once it is taken in: the study lead's
/// lock, reveals made elsewhere, a new rubric, items added to the queue (`added`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct TeamNews {
    pub study_id: String,
    pub news: ServerNews,
    pub added: u32,
}
/// The server's own limit; a longer one is refused before it is sent.
const MAX_PASSWORD_BYTES: usize = 1024;

/// The server named by `--server URL` at launch, checked then.
pub struct LaunchServer(pub Option<ServerUrl>);

/// The session with a team server, if any, and what runs for it.
pub struct TeamState {
    connection: Mutex<Option<Connection>>,
    download: LongWork,
    last_status: Mutex<Option<SyncStatus>>,
    curation: Mutex<Option<CurationCopy>>,
}

/// A curator's copy of a study, opened from the server: its versions are the server's
/// (`crate::curation_versions`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct CurationCopy {
    study_id: String,
    database: PathBuf,
    /// The curator whose copy it is: their session sends its changes.
    username: String,
}

impl Default for TeamState {
    fn default() -> Self {
        TeamState {
            connection: Mutex::new(None),
            // A newer download replaces the one under way; the import writes in one transaction
            // at its end, so a stopped one leaves nothing behind.
            download: LongWork::new(Overlap::Replace),
            last_status: Mutex::new(None),
            curation: Mutex::new(None),
        }
    }
}

struct Connection {
    client: TeamClient,
    session: Session,
    sync: Option<Arc<SyncControl>>,
}

impl TeamState {
    fn connection(&self) -> MutexGuard<'_, Option<Connection>> {
        self.connection.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn client(&self) -> Result<TeamClient, CommandError> {
        Ok(self.client_and_session()?.0)
    }

    /// The client while the sync worker last found the server answering (or has not tried yet):
    /// for a question the window can do without, not worth a wait on a server known unreachable.
    pub fn client_if_online(&self) -> Option<TeamClient> {
        let last = self
            .last_status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|s| s.state);
        match last {
            Some(SyncState::Offline | SyncState::LoggedOut) => None,
            _ => self.client().ok(),
        }
    }

    fn client_and_session(&self) -> Result<(TeamClient, Session), CommandError> {
        self.connection()
            .as_ref()
            .map(|c| (c.client.clone(), c.session.clone()))
            .ok_or_else(|| CommandError::new(ErrorCode::LoggedOut, "log in to a team server first"))
    }

    /// The client to curate `study_id` through when `database` (the open one) is the curator's
    /// copy of it opened from the server; `None` when its versions are the database's own. A
    /// copy whose session ended needs a new login: its versions are on the server.
    pub fn curation_client(
        &self,
        database: &Path,
        study_id: &str,
    ) -> Result<Option<TeamClient>, CommandError> {
        let copy = self
            .curation
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match copy {
            Some(copy) if copy.database == database && copy.study_id == study_id => {
                let (client, session) = self.client_and_session()?;
                if session.username != copy.username {
                    return Err(CommandError::new(
                        ErrorCode::LoggedOut,
                        format!(
                            "this is {}'s copy of study {study_id}: log in to the team server as \
                             {} to curate it",
                            copy.username, copy.username
                        ),
                    ));
                }
                Ok(Some(client))
            }
            _ => Ok(None),
        }
    }

    /// Wakes the sync worker (an edit is waited for); where it last stood, `None` when none
    /// runs.
    pub fn wake_sync(&self) -> Option<SyncState> {
        let running = self.connection().as_ref().and_then(|c| c.sync.clone())?;
        running.wake();
        let last = self.last_status.lock().unwrap_or_else(|p| p.into_inner());
        Some(
            last.as_ref()
                .map_or(SyncState::Sending, |status| status.state),
        )
    }

    /// Asks the sync worker to read what the server changed (the lead's lock, new items, a new
    /// rubric) as soon as it can, not only on its own schedule; nothing when none runs.
    pub fn refresh_sync(&self) {
        if let Some(running) = self.connection().as_ref().and_then(|c| c.sync.clone()) {
            running.refresh();
        }
    }

    fn set_curation(&self, copy: Option<CurationCopy>) {
        *self.curation.lock().unwrap_or_else(|p| p.into_inner()) = copy;
    }

    /// Replaces the connection, stopping the previous one's sync worker.
    fn connect(&self, connection: Option<Connection>) {
        let previous = std::mem::replace(&mut *self.connection(), connection);
        if let Some(sync) = previous.and_then(|c| c.sync) {
            sync.stop();
        }
        *self.last_status.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl From<ClientError> for CommandError {
    fn from(error: ClientError) -> CommandError {
        let code = match &error {
            ClientError::Unreachable { .. } | ClientError::Unexpected { .. } => {
                ErrorCode::ServerUnreachable
            }
            ClientError::Unauthorised => ErrorCode::LoggedOut,
            ClientError::Conflict { .. } => ErrorCode::Refused,
            ClientError::Refused { code, .. } => match code.as_str() {
                "not_found" => ErrorCode::NotFound,
                "invalid" => ErrorCode::InvalidArgument,
                "incomplete" => ErrorCode::Incomplete,
                _ => ErrorCode::Refused,
            },
            ClientError::Invalid { .. } | ClientError::InvalidUrl { .. } => {
                ErrorCode::InvalidArgument
            }
            ClientError::SessionFile { .. } | ClientError::Download { .. } => ErrorCode::Database,
            ClientError::Cancelled => ErrorCode::Cancelled,
        };
        CommandError::new(code, error.to_string())
    }
}

/// Who is logged in, where, and their studies there with their role in each.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TeamAccount {
    pub server: String,
    pub username: String,
    pub site: String,
    pub studies: Vec<Membership>,
}

fn account(session: &Session, me: Me) -> TeamAccount {
    TeamAccount {
        server: session.server.to_string(),
        username: me.username,
        site: me.site,
        studies: me.studies,
    }
}

/// What the window starts with: the server named at launch, and the account of a saved session
/// on it that the server still honours.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TeamStart {
    pub server: Option<String>,
    pub account: Option<TeamAccount>,
}

fn session_files() -> Result<SessionFiles, CommandError> {
    Ok(SessionFiles::in_config_dir()?)
}

/// The studies an account already has on this computer (in its databases), for a start while
/// the server cannot be reached: a rater's queue (its items link to server assignments) or a
/// curator's copy (none do).
fn studies_held(state: &AppState, session: &Session) -> Result<Vec<Membership>, CommandError> {
    let beside = state.with_store(|store| Ok(store.path().to_path_buf()))?;
    let mut held = Vec::new();
    for path in account_databases(&beside, session)? {
        let store = Store::open_existing(&path)?;
        for study in store.studies()? {
            let role = if cases::package::server_links(&store, &study.id)?.is_empty() {
                StudyRole::Curator
            } else {
                StudyRole::Rater
            };
            held.push(Membership {
                study_id: study.id,
                title: study.title,
                role,
                // What the server last said is kept in the study's database and read there.
                reveal_locked: false,
                rubric_version: None,
            });
        }
    }
    Ok(held)
}

/// The server named by `--server` and, when a saved session on it is still valid, its account
/// (the client acts in it from now on). While the server cannot be reached, a saved session is
/// resumed as it is, with the studies its account already reads here: reading goes on offline,
/// and the sync worker sends once the server answers.
#[tauri::command]
#[specta::specta]
pub async fn team_start(
    launch: State<'_, LaunchServer>,
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
) -> Result<TeamStart, CommandError> {
    let Some(server) = launch.0.clone() else {
        return Ok(TeamStart {
            server: None,
            account: None,
        });
    };
    let files = session_files()?;
    for session in files.for_server(&server)? {
        let client = TeamClient::resume(&session)?;
        match client.me().await {
            Ok(me) => {
                let account = account(&session, me);
                team.connect(Some(Connection {
                    client,
                    session,
                    sync: None,
                }));
                return Ok(TeamStart {
                    server: Some(server.to_string()),
                    account: Some(account),
                });
            }
            // Ended or expired on the server: a new login replaces it.
            Err(ClientError::Unauthorised) => files.delete(&server, &session.username)?,
            Err(e) if e.is_retryable() => {
                let account = TeamAccount {
                    server: session.server.to_string(),
                    username: session.username.clone(),
                    site: String::new(),
                    studies: studies_held(&state, &session)?,
                };
                team.connect(Some(Connection {
                    client,
                    session,
                    sync: None,
                }));
                return Ok(TeamStart {
                    server: Some(server.to_string()),
                    account: Some(account),
                });
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(TeamStart {
        server: Some(server.to_string()),
        account: None,
    })
}

/// Logs in to `server` (http or https, no credentials in it) as `username`. The password is sent
/// once and kept nowhere; the session's token is saved in a file only this user can read.
#[tauri::command]
#[specta::specta]
pub async fn team_login(
    team: State<'_, TeamState>,
    server: String,
    username: String,
    password: String,
) -> Result<TeamAccount, CommandError> {
    log_in(&team, &server, &username, &password).await
}

/// Logs in and keeps the session (its token in a 0600 file), for `team_login` and for a person
/// who has just set their password with a lead's code.
pub(crate) async fn log_in(
    team: &TeamState,
    server: &str,
    username: &str,
    password: &str,
) -> Result<TeamAccount, CommandError> {
    let server = ServerUrl::parse(server)?;
    check_segment("username", username)?;
    check_password("password", password)?;
    let mut client = TeamClient::new(server)?;
    let session = client.login(username, password).await?;
    session_files()?.save(&session)?;
    let me = client.me().await?;
    let account = account(&session, me);
    team.connect(Some(Connection {
        client,
        session,
        sync: None,
    }));
    Ok(account)
}

/// A password the server could take: 1 to its own limit of bytes (it asks for 12 characters or
/// more of a new one, and says so).
pub(crate) fn check_password(field: &str, password: &str) -> Result<(), CommandError> {
    if password.is_empty() || password.len() > MAX_PASSWORD_BYTES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: 1 to {MAX_PASSWORD_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Ends the session: the sync worker stops (what is queued stays, sent at the next login), the
/// server forgets the token and its file is deleted. Reachable or not, the file goes. The window
/// then reads the database it started on again (a study opened from the server was read in the
/// account's own database): whether it changed database, so the page reloads its study.
#[tauri::command]
#[specta::specta]
pub async fn team_logout(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
) -> Result<bool, CommandError> {
    let connection = team.connection().take();
    team.set_curation(None);
    let ended = match connection {
        Some(Connection {
            mut client,
            session,
            sync,
        }) => {
            if let Some(sync) = sync {
                sync.stop();
            }
            let ended = client.logout().await;
            session_files()?.delete(&session.server, &session.username)?;
            ended
        }
        None => Ok(()),
    };
    let returned = state.return_home()?;
    match ended {
        Ok(()) | Err(ClientError::Unreachable { .. }) => Ok(returned),
        Err(e) => Err(e.into()),
    }
}

/// A study opened from the server: a rater's queue imported here (they read as the package's
/// rater from now on), a curator's copy of its cases (they curate it, versions on the server),
/// or the lead's dashboard to show.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TeamOpened {
    pub study_id: String,
    pub role: StudyRole,
    /// The rater reading the imported queue (a curator: the curator), now the one acting here.
    pub rater: Option<Rater>,
    /// A rater's items; a curator's cases.
    pub items: u32,
    /// Items the server added to a queue already read here, or cases to a curator's copy held
    /// here (downloaded on this opening).
    pub added: u32,
}

/// The database an account reads a server's study in: one per server, account and study, beside
/// the one the app opened (a package is read in a database of its own; two people reading at one
/// workstation must not share one, nor one account's roles in two studies: a rater in one and a
/// curator in another), named by digests so no URL or name becomes a path. A database of the
/// earlier naming, one per server and account, keeps being used for the studies it holds: a
/// rater's unsent edits may live there.
fn team_database(
    beside: &Path,
    session: &Session,
    study_id: &str,
) -> Result<PathBuf, CommandError> {
    let account = account_database(beside, session);
    if account.exists() {
        let store = Store::open_existing(&account)?;
        if store.studies()?.iter().any(|s| s.id == study_id) {
            return Ok(account);
        }
    }
    let prefix = account_prefix(session);
    Ok(folder(beside).join(format!("{prefix}-{}.sqlite", short_digest(study_id))))
}

/// Every database of the account beside `beside`: the earlier one per account, then one per study.
fn account_databases(beside: &Path, session: &Session) -> Result<Vec<PathBuf>, CommandError> {
    let prefix = format!("{}-", account_prefix(session));
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder(beside))
        .map_err(|e| {
            CommandError::new(
                ErrorCode::Database,
                format!("{}: {e}", folder(beside).display()),
            )
        })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                .and_then(|rest| rest.strip_suffix(".sqlite"))
                .is_some_and(|digest| digest.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .collect();
    found.sort();
    let account = account_database(beside, session);
    if account.exists() {
        found.insert(0, account);
    }
    Ok(found)
}

/// The earlier name, one database per server and account.
fn account_database(beside: &Path, session: &Session) -> PathBuf {
    folder(beside).join(format!("{}.sqlite", account_prefix(session)))
}

fn account_prefix(session: &Session) -> String {
    format!(
        "team-{}",
        short_digest(&format!("{}\n{}", session.server, session.username))
    )
}

fn short_digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn folder(beside: &Path) -> &Path {
    beside.parent().unwrap_or(Path::new("."))
}

/// Opens `study_id` of the logged-in account. A rater reads it in the database of their account
/// on this server ([`team_database`]), which the app opens instead of the current one: the first
/// time, their queue is downloaded as the rater package the server builds and imported
/// (progress as [`DOWNLOAD_EVENT`]s carrying `request`; `team_cancel_download` stops it before it
/// writes); after that, the queue already there is read, with or without the network, and when
/// the server's queue holds assignments it lacks (a top-up), the package is downloaded again and
/// adds them after the existing items. What the server says of the study (the lead's lock,
/// reveals made elsewhere, its rubric version) is taken in (`cases::app::team::learn_from_server`)
/// and, when the lead moved the rubric on, the server's current rubric is taken here
/// ([`follow_rubric`]). They become the reader, and the sync worker starts, which keeps all of
/// this up while they read (`teamclient::sync`, its refresh). A lead: nothing to download; the
/// window shows the dashboard.
#[tauri::command]
#[specta::specta]
pub async fn team_open_study<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: String,
    request: Option<u32>,
) -> Result<TeamOpened, CommandError> {
    check_segment("study_id", &study_id)?;
    let (client, session) = team.client_and_session()?;
    let membership = match client.me().await {
        Ok(me) => me.studies.into_iter().find(|m| m.study_id == study_id),
        // Offline: a study already read here opens as it is.
        Err(e) if e.is_retryable() => Some(
            studies_held(&state, &session)?
                .into_iter()
                .find(|m| m.study_id == study_id)
                .ok_or(e)?,
        ),
        Err(e) => return Err(e.into()),
    }
    .ok_or_else(|| {
        CommandError::new(
            ErrorCode::NotFound,
            format!("study {study_id} on the team server (not one of yours)"),
        )
    })?;
    let role = membership.role;
    match role {
        StudyRole::Lead => {
            return Ok(TeamOpened {
                study_id,
                role,
                rater: None,
                items: 0,
                added: 0,
            })
        }
        StudyRole::Curator => {
            return open_curation_copy(&app, &state, &team, client, &session, study_id, request)
                .await
        }
        StudyRole::Rater => {}
    }
    let beside = state.with_store(|store| Ok(store.path().to_path_buf()))?;
    let path = team_database(&beside, &session, &study_id)?;
    let mut store = Store::open(&path)?;
    let held: bool = store.studies()?.iter().any(|s| s.id == study_id);
    let queue = if held {
        server_queue(&client, &study_id).await?
    } else {
        None
    };
    let download = !held || {
        // The lead topped the queue up since the last download.
        let missing = match &queue {
            Some(queue) => cases::app::team::items_missing(&store, &study_id, queue)?,
            None => 0,
        };
        missing > 0
    };
    let (rater_name, added) = if !download {
        (None, 0)
    } else {
        let file = path.with_extension("download.tar");
        let started = team.download.start()?;
        let progress = EventProgress::new(
            app.clone(),
            DOWNLOAD_EVENT,
            request.unwrap_or_default(),
            &started,
        );
        client
            .download_package(&study_id, None, &file, &progress)
            .await?;
        let imported = cases::package::import_rater_package(&mut store, &file, &progress);
        let _ = std::fs::remove_file(&file);
        let imported = imported?;
        (Some(imported.rater), if held { imported.items } else { 0 })
    };
    // The account's own database holds this rater alone (the package's).
    let rater = store
        .raters()?
        .into_iter()
        .find(|r| rater_name.as_ref().is_none_or(|name| &r.name == name))
        .ok_or_else(|| {
            CommandError::new(ErrorCode::Database, "the rater package named no rater")
        })?;
    let rater = store.set_current_rater(rater.id)?;
    if let Some(queue) = &queue {
        let news = on_store::learn(&mut store, &study_id, &membership, queue)?;
        if let (Some(version), Some(first)) = (news.rubric_behind, queue.first()) {
            follow_rubric(&client, &mut store, &study_id, first.assignment, version).await?;
        }
    }
    let items = store.reading_queue(rater.id, &study_id)?.len() as u32;
    state.open_instead(store);
    start_sync(&app, &team, client);
    Ok(TeamOpened {
        study_id,
        role,
        rater: Some(rater),
        items,
        added,
    })
}

/// The rater's queue on the server; `None` offline, when the queue here is read as it is.
async fn server_queue(
    client: &TeamClient,
    study_id: &str,
) -> Result<Option<Vec<teamclient::QueueEntry>>, CommandError> {
    match client.queue(study_id).await {
        Ok(queue) => Ok(Some(queue)),
        Err(e) if e.is_retryable() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Takes the rubric the server checks edits against now (version `version`, sent with every
/// item; here read with `assignment`'s) into the account's database, the lead having moved it on
/// since this computer last took it (`cases::app::team::follow_server_rubric`), so the rules
/// applied here before sending are the server's. Offline, the rubric here stays.
async fn follow_rubric(
    client: &TeamClient,
    store: &mut Store,
    study_id: &str,
    assignment: i64,
    version: u32,
) -> Result<(), CommandError> {
    let item = match client.item(study_id, assignment).await {
        Ok(item) => item,
        Err(e) if e.is_retryable() => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    on_store::follow_rubric(
        store,
        study_id,
        &item.rubric,
        item.rubric_version.max(version),
    )?;
    Ok(())
}

/// A curator's study: the copy the server builds (every case with its images and current ground
/// truth, no model answer) downloaded and imported into the account's own database the first
/// time; after that, opened as it is unless the server lists cases the copy lacks (the lead
/// added them since), when the copy is downloaded again, whole, and keeps the copy here up
/// (`cases::package::import_curation_package`: the missing cases added, nothing held lost).
/// Offline, the copy opens as it is. The curator becomes the one acting, and the study's
/// curation versions are the server's from now on ([`TeamState::curation_client`]).
async fn open_curation_copy<R: Runtime>(
    app: &AppHandle<R>,
    state: &AppState,
    team: &TeamState,
    client: TeamClient,
    session: &Session,
    study_id: String,
    request: Option<u32>,
) -> Result<TeamOpened, CommandError> {
    let beside = state.with_store(|store| Ok(store.path().to_path_buf()))?;
    let path = team_database(&beside, session, &study_id)?;
    let mut store = Store::open(&path)?;
    let held = store.studies()?.iter().any(|s| s.id == study_id);
    let download = !held || {
        let here: BTreeSet<String> = store
            .cases(&study_id)?
            .into_iter()
            .map(|case| case.id)
            .collect();
        match client.curation_cases(&study_id).await {
            Ok(listed) => listed.iter().any(|case| !here.contains(&case.case_id)),
            Err(e) if e.is_retryable() => false,
            Err(e) => return Err(e.into()),
        }
    };
    let mut added = 0;
    if download {
        let file = path.with_extension("download.tar");
        let started = team.download.start()?;
        let progress = EventProgress::new(
            app.clone(),
            DOWNLOAD_EVENT,
            request.unwrap_or_default(),
            &started,
        );
        client
            .download_curation_package(&study_id, &file, &progress)
            .await?;
        let imported = cases::package::import_curation_package(&mut store, &file, &progress);
        let _ = std::fs::remove_file(&file);
        let imported = imported?;
        if held {
            added = imported.cases_added;
        }
    }
    let curator = store
        .raters()?
        .into_iter()
        .find(|r| r.name == session.username && r.role == RaterRole::Curator)
        .ok_or_else(|| {
            CommandError::new(
                ErrorCode::Database,
                format!(
                    "this account's database holds study {study_id} but no curator {}",
                    session.username
                ),
            )
        })?;
    let curator = store.set_current_rater(curator.id)?;
    let items = store.cases(&study_id)?.len() as u32;
    state.open_instead(store);
    team.set_curation(Some(CurationCopy {
        study_id: study_id.clone(),
        database: path,
        username: session.username.clone(),
    }));
    Ok(TeamOpened {
        study_id,
        role: StudyRole::Curator,
        rater: Some(curator),
        items,
        added,
    })
}

/// Stops the download or import under way; whether there was one.
#[tauri::command]
#[specta::specta]
pub async fn team_cancel_download(team: State<'_, TeamState>) -> Result<bool, CommandError> {
    Ok(team.download.cancel())
}

/// The lead's dashboard: progress per rater and per site, from the server (which refuses anyone
/// but the study's lead).
#[tauri::command]
#[specta::specta]
pub async fn team_progress(
    team: State<'_, TeamState>,
    study_id: String,
) -> Result<Progress, CommandError> {
    check_segment("study_id", &study_id)?;
    Ok(team.client()?.progress(&study_id).await?)
}

/// The lead's pull: every rating and curation version of `study_id` on the server, taken into
/// the database open in this window (the lead's own, which the study was copied onto the server
/// from), so Calibration and every export read them as they read a local study's
/// (`cases::app::team::pull`). Raters this database lacks come with the clinical role the lead
/// gave them on the server. Refused while a rater reads blinded at this workstation.
#[tauri::command]
#[specta::specta]
pub async fn team_pull(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    study_id: String,
) -> Result<PullReport, CommandError> {
    check_segment("study_id", &study_id)?;
    let results = team.client()?.study_results(&study_id).await?;
    state.with_store_mut(|store| {
        let lead = cases::app::Session::current(store)?.study_lead(Action::TakeInResults)?;
        Ok(cases::app::team::pull(store, &lead, &study_id, &results)?)
    })
}

/// The sync worker's last status; `None` when no worker runs (no session, or a lead).
#[tauri::command]
#[specta::specta]
pub async fn team_sync_status(
    team: State<'_, TeamState>,
) -> Result<Option<SyncStatus>, CommandError> {
    Ok(team
        .last_status
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone())
}

/// Settles an item of the rater's queue whose edits the server refused as a conflict (its queue
/// stopped): its rating becomes the server's current one, the edits kept here set aside and
/// recorded, or the rating here is sent over the server's (`cases::rating::outbox::resolve`).
/// The sync worker then goes on with it.
#[tauri::command]
#[specta::specta]
pub async fn team_resolve_conflict(
    state: State<'_, AppState>,
    team: State<'_, TeamState>,
    assignment: Key,
    resolution: Resolution,
) -> Result<(), CommandError> {
    let link =
        state.with_store(|store| Ok(cases::package::server_link(store, assignment.get())?))?;
    let link = link.ok_or_else(|| {
        CommandError::new(
            ErrorCode::NotFound,
            format!("assignment {assignment} of a study read from the team server"),
        )
    })?;
    let client = team.client()?;
    let item = client.item(&link.study_id, link.server_assignment).await?;
    let ground_truth_version = item.ground_truth_version;
    let server = item.rating.ok_or_else(|| {
        CommandError::new(
            ErrorCode::Refused,
            "the team server holds no rating of this item: there is no conflict to settle",
        )
    })?;
    state.with_store_mut(|store| {
        let reader = cases::app::Session::current(store)?.reader()?;
        Ok(cases::app::reading::resolve_conflict(
            store,
            &reader,
            assignment.get(),
            resolution,
            &server,
            ground_truth_version,
        )?)
    })?;
    team.wake_sync();
    Ok(())
}

/// The app's open store as the sync worker's local copy: each call takes the store's lock for
/// one step; news are told to the window as [`NEWS_EVENT`]s.
struct OpenStore<R: Runtime>(AppHandle<R>);

impl<R: Runtime> OpenStore<R> {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut cases::store::Store) -> cases::Result<T>,
    ) -> Result<T, String> {
        self.0
            .state::<AppState>()
            .with_store_mut(|store| Ok(f(store)?))
            .map_err(|e| e.message)
    }
}

impl<R: Runtime> LocalCopy for OpenStore<R> {
    fn next_to_send(&self) -> Result<Option<OutboxEdit>, String> {
        self.with(|store| outbox::next_to_send(store))
    }
    fn mark_sent(&self, row: i64, server_version: i64) -> Result<(), String> {
        self.with(|store| outbox::mark_sent(store, row, server_version))
    }
    fn mark_stopped(&self, row: i64, reason: &str) -> Result<(), String> {
        self.with(|store| outbox::mark_stopped(store, row, reason))
    }
    fn status(&self) -> Result<OutboxStatus, String> {
        self.with(|store| outbox::status(store))
    }
    fn studies(&self) -> Result<Vec<String>, String> {
        self.with(|store| on_store::studies(store))
    }
    fn learn(
        &self,
        study: &str,
        membership: &Membership,
        queue: &[QueueEntry],
    ) -> Result<ServerNews, String> {
        self.with(|store| on_store::learn(store, study, membership, queue))
    }
    fn follow_rubric(
        &self,
        study: &str,
        rubric: &cases::model::Rubric,
        version: u32,
    ) -> Result<bool, String> {
        self.with(|store| on_store::follow_rubric(store, study, rubric, version))
    }
    fn top_up_file(&self, _study: &str) -> Result<PathBuf, String> {
        self.with(|store| Ok(store.path().with_extension("top-up.tar")))
    }
    fn import_top_up(&self, _study: &str, package: &Path) -> Result<u32, String> {
        let database = self.with(|store| Ok(store.path().to_path_buf()))?;
        on_store::import_top_up(&database, package).map_err(|e| e.to_string())
    }
    fn announce_news(&self, study: &str, news: &ServerNews, added: u32) {
        let news = TeamNews {
            study_id: study.to_owned(),
            news: news.clone(),
            added,
        };
        // A closed window cannot listen; what was learned is kept in the study's database.
        let _ = self.0.emit(NEWS_EVENT, &news);
    }
}

/// Starts the sync worker for the connection (once; a running one is kept).
fn start_sync<R: Runtime>(app: &AppHandle<R>, team: &TeamState, client: TeamClient) {
    let control = {
        let mut connection = team.connection();
        let Some(connection) = connection.as_mut() else {
            return;
        };
        if connection.sync.is_some() {
            return;
        }
        let control = Arc::new(SyncControl::default());
        connection.sync = Some(Arc::clone(&control));
        control
    };
    let reporter = app.clone();
    let report = move |status: SyncStatus| {
        let team = reporter.state::<TeamState>();
        let mut last = team.last_status.lock().unwrap_or_else(|p| p.into_inner());
        if last.as_ref() != Some(&status) {
            // A closed window cannot listen; the worker carries on.
            let _ = reporter.emit(SYNC_EVENT, &status);
            *last = Some(status);
        }
    };
    let outbox: Arc<dyn LocalCopy> = Arc::new(OpenStore(app.clone()));
    tauri::async_runtime::spawn(teamclient::sync::run(client, outbox, control, report));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(username: &str) -> Session {
        serde_json::from_value(serde_json::json!({
            "server": "https://team.example.org/",
            "username": username,
            "token": "not a real token",
            "expires_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    fn holding(path: &Path, study_id: &str) {
        let mut store = Store::open(path).unwrap();
        store
            .write(|w| {
                w.tx()
                    .execute(
                        "INSERT INTO studies (study_id, title, description, rubric_json,
                             taxonomy_json, bundle_dir) VALUES (?1, 't', '', '{}', '{}', '.')",
                        [study_id],
                    )
                    .unwrap();
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn each_study_of_an_account_has_a_database_of_its_own_and_an_earlier_one_holding_it_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let beside = dir.path().join("neurorater.sqlite");
        let ann = session("ann");
        let a = team_database(&beside, &ann, "study-a").unwrap();
        let b = team_database(&beside, &ann, "study-b").unwrap();
        assert_ne!(
            a, b,
            "a rater in one study and a curator in another read apart"
        );
        assert_ne!(
            a,
            team_database(&beside, &session("bob"), "study-a").unwrap()
        );
        assert_eq!(a.parent(), beside.parent());
        for path in [&a, &b] {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(!name.contains("ann") && !name.contains("study"), "{name}");
        }

        // The earlier database of the account, one per server and account, holds study-a with a
        // rater's unsent edits: it keeps being read for study-a, and only for it.
        let earlier = account_database(&beside, &ann);
        holding(&earlier, "study-a");
        assert_eq!(team_database(&beside, &ann, "study-a").unwrap(), earlier);
        assert_eq!(team_database(&beside, &ann, "study-b").unwrap(), b);

        // Offline, every database of the account is found, the earlier one first.
        holding(&b, "study-b");
        holding(
            &team_database(&beside, &session("bob"), "study-c").unwrap(),
            "study-c",
        );
        assert_eq!(account_databases(&beside, &ann).unwrap(), vec![earlier, b]);
    }
}
