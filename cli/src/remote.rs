//! The CLI against a team server (docs/team-server.md): `login` and `logout` keep a session per
//! server and user in a 0600 file (`teamclient::SessionFiles`), `pull` brings the study's ratings
//! into the lead's own database, `team-progress` prints the lead's view, and `calibrate` and
//! `export` take `--server URL` to pull before they run. The password is read at the terminal
//! (or from standard input) and never stored; no token is printed.

use crate::data::db_path;
use crate::Failure;
use cases::app::team::PullReport;
use cases::store::Store;
use clap::Args;
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use teamclient::{ClientError, ServerUrl, Session, SessionFiles, TeamClient};

#[derive(Args)]
pub struct LoginArgs {
    /// The team server: http(s)://HOST[:PORT][/PATH].
    #[arg(long)]
    server: String,
    /// Your username on that server.
    #[arg(long)]
    user: String,
}

#[derive(Args)]
pub struct LogoutArgs {
    #[arg(long)]
    server: String,
    /// Needed only when you are logged in to that server under several names.
    #[arg(long)]
    user: Option<String>,
}

#[derive(Args)]
pub struct PullArgs {
    #[command(flatten)]
    remote: Remote,
    /// The lead's database the study was copied from (`server-import`); the app's by default.
    #[arg(long)]
    db: Option<PathBuf>,
}

#[derive(Args)]
pub struct TeamProgressArgs {
    #[command(flatten)]
    remote: Remote,
}

/// A study on a team server, reached in a saved session.
#[derive(Args, Clone)]
pub struct Remote {
    /// The team server (log in first: neurorater login --server URL --user NAME).
    #[arg(long)]
    pub server: String,
    /// The study's id on the server.
    #[arg(long)]
    pub study: String,
    /// The session to use, when you are logged in to that server under several names.
    #[arg(long)]
    pub user: Option<String>,
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::Unreachable { .. }
            | ClientError::SessionFile { .. }
            | ClientError::Download { .. }
            | ClientError::Unexpected { .. } => Failure::Internal(error.to_string()),
            _ => Failure::Input(vec![error.to_string()]),
        }
    }
}

pub(crate) fn server_url(text: &str) -> Result<ServerUrl, Failure> {
    Ok(ServerUrl::parse(text)?)
}

/// One secret (a password, a one-time code) from the prompt without echo, or the next line of
/// standard input when it is not a terminal. Never an argument: others on the machine see those.
pub(crate) fn read_secret(prompt: &str) -> Result<String, Failure> {
    let secret = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(prompt)
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    }
    .map_err(|e| {
        Failure::Internal(format!(
            "reading {}: {e}",
            prompt.trim_end_matches([':', ' '])
        ))
    })?;
    let secret = secret.trim_end_matches(['\r', '\n']).to_owned();
    if secret.is_empty() {
        return Err(Failure::Input(vec![format!(
            "nothing given for \"{}\" (type it at the prompt, or send it on standard input)",
            prompt.trim_end_matches([':', ' '])
        )]));
    }
    Ok(secret)
}

pub fn login(args: &LoginArgs) -> Result<(), Failure> {
    let server = server_url(&args.server)?;
    let password = read_secret(&format!("Password for {} at {server}: ", args.user))?;
    let session = crate::run::runtime()?.block_on(async {
        TeamClient::new(server.clone())?
            .login(&args.user, &password)
            .await
    })?;
    let file = SessionFiles::in_config_dir()?.save(&session)?;
    crate::print_json(&serde_json::json!({
        "server": server.to_string(),
        "username": session.username,
        "expires_at": session.expires_at,
        "session_file": file,
    }));
    Ok(())
}

/// The saved session on `server`: the only one, or `user`'s.
pub(crate) fn session(server: &ServerUrl, user: Option<&str>) -> Result<Session, Failure> {
    let files = SessionFiles::in_config_dir()?;
    let login_hint =
        |name: &str| format!("log in first: neurorater login --server {server} --user {name}");
    match user {
        Some(user) => files.load(server, user)?.ok_or_else(|| {
            Failure::Input(vec![format!(
                "not logged in to {server} as {user}: {}",
                login_hint(user)
            )])
        }),
        None => {
            let mut sessions = files.for_server(server)?;
            match sessions.len() {
                0 => Err(Failure::Input(vec![format!(
                    "not logged in to {server}: {}",
                    login_hint("NAME")
                )])),
                1 => Ok(sessions.remove(0)),
                _ => Err(Failure::Input(vec![format!(
                    "logged in to {server} as {}: say which with --user",
                    sessions
                        .iter()
                        .map(|s| s.username.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )])),
            }
        }
    }
}

pub fn logout(args: &LogoutArgs) -> Result<(), Failure> {
    let server = server_url(&args.server)?;
    let session = session(&server, args.user.as_deref())?;
    let ended =
        crate::run::runtime()?.block_on(async { TeamClient::resume(&session)?.logout().await });
    // The file goes whatever the server said: an expired session is over either way, and a
    // server out of reach ends it when it expires.
    SessionFiles::in_config_dir()?.delete(&server, &session.username)?;
    match ended {
        Ok(()) | Err(ClientError::Unauthorised) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

impl Remote {
    pub(crate) fn client(&self) -> Result<TeamClient, Failure> {
        let server = server_url(&self.server)?;
        Ok(TeamClient::resume(&session(
            &server,
            self.user.as_deref(),
        )?)?)
    }

    /// Pulls the study's ratings, and its curation versions and reviews, from the server into
    /// `db`.
    pub fn pull_into(&self, db: Option<PathBuf>) -> Result<PullReport, Failure> {
        let client = self.client()?;
        let results =
            crate::run::runtime()?.block_on(async { client.study_results(&self.study).await })?;
        let mut store = Store::open(&db_path(db)?)?;
        let lead = cases::app::Session::command_line();
        let report = cases::app::team::pull(&mut store, &lead, &self.study, &results)?;
        for name in &report.raters_added {
            eprintln!("neurorater: added rater {name}, with the clinical role the server records");
        }
        for conflict in &report.conflicts {
            eprintln!("neurorater: left alone: {conflict}");
        }
        for conflict in &report.curation.conflicts {
            eprintln!("neurorater: left alone: {conflict}");
        }
        Ok(report)
    }
}

impl Remote {
    /// `rater`'s package built by the server, written whole to `out`; its size.
    pub fn download_package(
        &self,
        rater: &str,
        out: &std::path::Path,
        progress: &dyn cases::progress::Progress,
    ) -> Result<u64, Failure> {
        let client = self.client()?;
        Ok(crate::run::runtime()?.block_on(async {
            client
                .download_package(&self.study, Some(rater), out, progress)
                .await
        })?)
    }

    /// A results package answering a server-built package, uploaded; the server's report.
    pub fn upload_results(&self, file: &std::path::Path) -> Result<serde_json::Value, Failure> {
        let client = self.client()?;
        Ok(crate::run::runtime()?
            .block_on(async { client.upload_results(&self.study, file).await })?)
    }
}

pub fn pull(args: &PullArgs) -> Result<(), Failure> {
    let report = args.remote.pull_into(args.db.clone())?;
    crate::print_json(&report);
    Ok(())
}

pub fn team_progress(args: &TeamProgressArgs) -> Result<(), Failure> {
    let client = args.remote.client()?;
    let progress =
        crate::run::runtime()?.block_on(async { client.progress(&args.remote.study).await })?;
    crate::print_json(&progress);
    Ok(())
}
