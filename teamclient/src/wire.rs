//! The server's JSON bodies as this client reads and sends them (docs/team-server.md lists them;
//! the server's `/openapi.json` is their schema). The bodies both ends read are defined once in
//! `cases::app::team::wire` (the client cannot depend on the server, which links axum and
//! PostgreSQL); what is left here is the client's own reading of the login and error replies.

use crate::token::Token;
pub use cases::app::team::wire::{
    AccountSession, EditAck, EditRequest, Invitation, InvitationSummary, InviteRequest, Me,
    Membership, Progress, QueueEntry, RaterProgress, SiteProgress, TopUpAdded, TopUpReport,
    TopUpRequest,
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(crate) struct LoginReply {
    pub token: Token,
    pub expires_at: String,
}

/// The server's error body: `{code, message}`, `field` for `invalid`, `current_version` for a
/// rating's `conflict` (`latest` for a curation step's).
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorBody {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub field: Option<String>,
    #[serde(default, alias = "latest")]
    pub current_version: Option<i64>,
}
