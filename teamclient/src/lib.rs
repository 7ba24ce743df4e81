//! The team server's client (docs/team-server.md): what the desktop app and the CLI call to log
//! in, read a rater's queue, send edits, see a study's progress and move packages. Typed on the
//! server's JSON; no Tauri, no axum, no PostgreSQL.
//!
//! The session token is kept between runs in a 0600 file per server and user
//! ([`SessionFiles`]), never printed ([`Token`]'s `Debug` is redacted) and deleted at logout; the
//! password is sent once at login and kept nowhere.

mod client;
mod error;
pub mod sync;
mod token;
mod url;
mod wire;

pub use client::TeamClient;
pub use error::{ClientError, Result};
pub use token::{Session, SessionFiles, Token};
pub use url::{check_segment, ServerUrl};
pub use wire::{
    AccountSession, EditAck, EditRequest, Invitation, InvitationSummary, InviteRequest, Me,
    Membership, Progress, QueueEntry, RaterProgress, SiteProgress, TopUpAdded, TopUpReport,
    TopUpRequest,
};
