//! The server's JSON bodies as this client reads and sends them (docs/team-server.md lists them;
//! the server's `/openapi.json` is their schema). Where the body is an application-layer type
//! (`cases::app::team`: roles, edits, a rater's item) that type is used; the rest are small
//! structs mirroring the server's `wire.rs`, which the client cannot depend on (it links axum
//! and PostgreSQL).

use crate::token::Token;
use cases::app::team::{TeamEdit, TeamRole};
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
pub(crate) struct LoginReply {
    pub token: Token,
    pub expires_at: String,
}

/// One study the account has a role in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Membership {
    pub study_id: String,
    pub title: String,
    pub role: TeamRole,
}

/// `GET /api/me`: who the session is, and their studies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Me {
    pub username: String,
    pub site: String,
    pub studies: Vec<Membership>,
}

/// One assignment of a rater's queue on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueEntry {
    pub assignment: i64,
    pub position: i32,
    pub total: i64,
    /// `not_started`, `draft` or `submitted`.
    pub status: String,
    /// The rating's version: the `base_version` of the next edit.
    pub version: i64,
    /// YYYY-MM-DD the lead set as due, if any.
    pub due_on: Option<String>,
}

/// `POST …/edits`: `edit_id` is the client's id of the edit, made once; a resend with it is
/// stored once. `base_version` is the server's version the edit started from (0 before the
/// first save).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditRequest {
    pub edit_id: String,
    pub base_version: i64,
    pub edit: TeamEdit,
}

/// The server's acknowledgement of an edit: committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditAck {
    pub assignment: i64,
    /// The rating's version after this edit: the `base_version` of the next.
    pub version: i64,
    /// `draft` or `submitted`.
    pub status: String,
    pub saved_at: String,
}

/// `GET /api/studies/{study}/progress`, the lead's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Progress {
    pub raters: Vec<RaterProgress>,
    pub sites: Vec<SiteProgress>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RaterProgress {
    pub username: String,
    pub site: String,
    // Counts are i32 on the IPC (JavaScript numbers); a study has far fewer assignments.
    pub assigned: i32,
    pub submitted: i32,
    pub drafts: i32,
    /// Past their due date and not submitted.
    pub overdue: i32,
    pub seconds_on_task: f64,
    pub reveal_locked: bool,
    pub last_saved_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SiteProgress {
    pub site: String,
    pub raters: i32,
    pub assigned: i32,
    pub submitted: i32,
    pub overdue: i32,
    pub seconds_on_task: f64,
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
