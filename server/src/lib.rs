//! The team server (docs/team-server.md, docs/formats.md §8): one study on PostgreSQL, raters at
//! many sites, accounts and roles. An edge like the CLI and the app: who may do what and what a
//! rater may see are decided in `cases::app::team`; this crate stores and transports.
//!
//! Stateless: everything lives in PostgreSQL (sessions included), so two processes on one
//! database behave as one, and a process killed at any moment loses nothing it acknowledged.

mod api;
mod auth;
mod curation;
mod curation_package;
mod error;
mod schema;
mod store;
mod wire;

pub use api::ApiDoc;
pub use error::ServerError;
pub use wire::ImportReport;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Instant;

/// Connections per server process: enough for a site's raters saving at once, few enough that
/// several processes stay under PostgreSQL's default `max_connections` of 100.
const POOL_SIZE: usize = 16;

#[derive(Clone)]
pub(crate) struct AppState {
    pub pool: Pool,
    /// The site's reverse proxy, whose `X-Forwarded-For` names the client (`--trusted-proxy`).
    pub trusted_proxy: Option<std::net::IpAddr>,
}

pub struct ServeOptions {
    /// `postgres://USER[:PASSWORD]@HOST:PORT/DB` (libpq URL or key=value form).
    pub database: String,
    pub listen: SocketAddr,
    /// The reverse proxy in front of the server, if any: the login throttle and the session list
    /// then count the address its `X-Forwarded-For` names, not the proxy's.
    pub trusted_proxy: Option<std::net::IpAddr>,
}

/// A pool on `database`, with the schema migrated to this build's.
pub async fn connect(database: &str) -> Result<Pool, ServerError> {
    let config = tokio_postgres::Config::from_str(database).map_err(|e| {
        // The URL may hold a password: the message names the problem, never the URL.
        ServerError::Config(format!("--database is not a PostgreSQL URL: {e}"))
    })?;
    // TLS is for the reverse proxy in front of the server and the database's own network
    // (docs/team-server.md); the server talks to PostgreSQL in the clear.
    let manager = Manager::from_config(
        config,
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(POOL_SIZE)
        .build()
        .map_err(|e| ServerError::Config(format!("connection pool: {e}")))?;
    schema::migrate(&pool).await?;
    Ok(pool)
}

/// Runs the server until SIGINT or SIGTERM. Prints `listening on http://ADDR` once the port is
/// bound (with port 0, the one the system chose).
pub async fn serve(options: ServeOptions) -> Result<(), ServerError> {
    return_large_blocks();
    let pool = connect(&options.database).await?;
    let listener = tokio::net::TcpListener::bind(options.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let app = api::router(AppState {
        pool,
        trusted_proxy: options.trusted_proxy,
    })
    .layer(axum::middleware::from_fn(log_request));
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown_signal())
    .await?;
    Ok(())
}

/// Makes glibc's malloc give every block of 128 KiB or more its own mapping, returned to the
/// system when freed. By default glibc raises that threshold to the largest block freed so far,
/// so after the first password hash argon2's 19 MiB blocks came from heap arenas that were never
/// trimmed: enrolling 50 raters left the server at 636 MB resident, 8.7 MB with this
/// (docs/performance.md "Team server under load").
fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's allocator; it takes the allocator's own
    // locks and is safe to call while other threads allocate.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Copies study `study_id` of the local database `local` onto the server at `database`; with
/// `lead` = (username, site), invites the study's lead. What leaves the local database is decided
/// by `cases::app::team::study_for_server`, which also freezes the rubric versions it sends
/// (the lead's next change of them is a new version). Blocks: for the command-line front ends.
pub fn import_local_study(
    database: &str,
    local: &std::path::Path,
    study_id: &str,
    lead: Option<(&str, &str)>,
) -> Result<ImportReport, ServerError> {
    let study = {
        let mut store = cases::store::Store::open_existing(local)?;
        let lead = cases::app::Session::command_line();
        cases::app::team::study_for_server(&mut store, &lead, study_id)?
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let pool = connect(database).await?;
        store::import_study(&pool, &study, lead).await
    })
}

/// One line per request: method, path, status, milliseconds. Never headers or bodies, which
/// carry passwords, tokens and invitation codes; no path carries one.
async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    eprintln!(
        "{method} {path} {} {:.1}ms",
        response.status().as_u16(),
        started.elapsed().as_secs_f64() * 1e3
    );
    response
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("a SIGTERM handler installs");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
