//! `neurorater serve` and `neurorater server-import`: the team server (docs/team-server.md).

use crate::data::db_path;
use crate::Failure;
use clap::Args;
use server::ServerError;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Args)]
pub struct ServeArgs {
    /// The PostgreSQL database the server keeps everything in: postgres://USER@HOST:PORT/DB
    /// (its schema is created and migrated at start).
    #[arg(long)]
    database: String,
    /// Address and port to listen on; port 0 lets the system choose (printed at start).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The site's reverse proxy (an IP address): its X-Forwarded-For then names the client the
    /// login throttle counts and a session records, not the proxy.
    #[arg(long)]
    trusted_proxy: Option<std::net::IpAddr>,
}

#[derive(Args)]
pub struct ServerImportArgs {
    /// The server's PostgreSQL database, as given to `serve`.
    #[arg(long)]
    database: String,
    /// The local database holding the study (the app's own by default).
    #[arg(long)]
    db: Option<PathBuf>,
    /// The study to copy.
    #[arg(long)]
    study: String,
    /// Invite this username as the study's lead (printed: a one-time code), unless the study
    /// already has one.
    #[arg(long)]
    lead: Option<String>,
    /// The lead's site, for progress per site.
    #[arg(long, default_value = "")]
    lead_site: String,
}

impl From<ServerError> for Failure {
    fn from(error: ServerError) -> Self {
        if error.is_invalid_input() {
            Failure::Input(vec![error.to_string()])
        } else {
            Failure::Internal(error.to_string())
        }
    }
}

pub fn serve(args: &ServeArgs) -> Result<(), Failure> {
    crate::run::runtime()?.block_on(server::serve(server::ServeOptions {
        database: args.database.clone(),
        listen: args.listen,
        trusted_proxy: args.trusted_proxy,
    }))?;
    Ok(())
}

pub fn import(args: &ServerImportArgs) -> Result<(), Failure> {
    let lead = args
        .lead
        .as_deref()
        .map(|username| (username, args.lead_site.as_str()));
    let report = server::import_local_study(
        &args.database,
        &db_path(args.db.clone())?,
        &args.study,
        lead,
    )?;
    say!(
        "{}",
        serde_json::to_string_pretty(&report).expect("the report serialises")
    );
    Ok(())
}
