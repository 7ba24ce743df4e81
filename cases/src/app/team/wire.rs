//! The team server's small JSON bodies that both ends read: the server writes them (its
//! `/openapi.json` publishes their schema, through the `utoipa` feature), the team client reads
//! them and the desktop app shows some (the `specta` feature). One definition, so a field added
//! on the server is a field the client reads. docs/team-server.md lists them.

use super::TeamEdit;
use crate::app::permissions::StudyRole;
use crate::rating::RaterRole;
use serde::{Deserialize, Serialize};

/// One study the account has a role in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct Membership {
    pub study_id: String,
    pub title: String,
    #[cfg_attr(feature = "utoipa", schema(value_type = String, example = "rater"))]
    pub role: StudyRole,
    /// The study lead closed the ground truth to this account, and with it reopening what it
    /// submitted (a rater's; `false` for other roles). Absent from an older server: `false`.
    #[serde(default)]
    pub reveal_locked: bool,
    /// The study's current rubric version, so a rater's app can tell whether it must take the
    /// server's rubric before reading. Absent from an older server and from an invitation's
    /// answer.
    #[serde(default)]
    pub rubric_version: Option<u32>,
}

/// `GET /api/me`: who the session is, and their studies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct Me {
    pub username: String,
    pub site: String,
    pub studies: Vec<Membership>,
}

/// One assignment of a rater's queue on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
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
    /// When the rater was shown this item's ground truth, from whichever computer: the rating
    /// may no longer be reopened. Absent from an older server.
    #[serde(default)]
    pub revealed_at: Option<String>,
}

/// `POST …/edits`: one edit of one rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct EditRequest {
    /// The client's id of this edit (1–64 of letters, digits, `-`, `_`): a resend with the same
    /// id is answered with the first acknowledgement and stored once.
    pub edit_id: String,
    /// The rating's version the edit started from (0 before the first save); any other version
    /// is refused with 409 and nothing is overwritten.
    pub base_version: i64,
    /// `{"kind": "save", "rating": {"scores": {...}, "labels": [...]}}`, or `{"kind": "submit"}`,
    /// `{"kind": "reopen"}`, `{"kind": "reveal"}`.
    #[cfg_attr(feature = "utoipa", schema(value_type = Object))]
    pub edit: TeamEdit,
}

/// The server's acknowledgement of an edit: committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct Progress {
    pub raters: Vec<RaterProgress>,
    pub sites: Vec<SiteProgress>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct RaterProgress {
    pub username: String,
    pub site: String,
    pub assigned: i64,
    pub submitted: i64,
    pub drafts: i64,
    /// Past their due date and not submitted.
    pub overdue: i64,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub seconds_on_task: f64,
    pub reveal_locked: bool,
    pub last_saved_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct SiteProgress {
    pub site: String,
    pub raters: i64,
    pub assigned: i64,
    pub submitted: i64,
    pub overdue: i64,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub seconds_on_task: f64,
}

/// `POST /api/studies/{study}/invitations`: whom the lead invites, with what role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct InviteRequest {
    pub username: String,
    #[cfg_attr(feature = "utoipa", schema(value_type = String, example = "rater"))]
    pub role: StudyRole,
    /// The hospital or reading site, for progress per site.
    #[serde(default)]
    pub site: String,
    /// How a rater reads: `neuroradiologist`, `neurologist` or `resident`. Required for a rater,
    /// absent for a lead or a curator; the packages the server builds for the rater say it.
    #[serde(default)]
    #[cfg_attr(
        feature = "utoipa",
        schema(value_type = Option<String>, example = "neurologist")
    )]
    pub clinical_role: Option<RaterRole>,
    /// A rater's years of clinical experience (0–70), if the lead records it.
    #[serde(default)]
    #[cfg_attr(feature = "utoipa", schema(maximum = 70))]
    pub years_experience: Option<u32>,
}

/// A one-time code for the lead to pass on: an invitation's or a password reset's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct Invitation {
    /// Pass it to the invitee by a channel of your own; shown once, stored only as its SHA-256.
    pub code: String,
    pub expires_at: String,
}

/// One invitation of a study, as its lead sees it (`GET /api/studies/{study}/invitations`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct InvitationSummary {
    pub id: i64,
    pub username: String,
    #[cfg_attr(feature = "utoipa", schema(value_type = String, example = "rater"))]
    pub role: StudyRole,
    pub site: String,
    #[cfg_attr(feature = "utoipa", schema(value_type = Option<String>))]
    pub clinical_role: Option<RaterRole>,
    pub years_experience: Option<u32>,
    pub invited_by: String,
    pub created_at: String,
    pub expires_at: String,
    /// `open`, `accepted`, `expired` or `revoked`.
    pub state: String,
    /// When it was accepted or revoked, if it was.
    pub closed_at: Option<String>,
}

/// `POST /api/studies/{study}/top-up`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct TopUpRequest {
    /// Raters of the study to give more work; each gets responses they do not have yet, after
    /// the end of their queue.
    pub raters: Vec<String>,
    /// At most this many new assignments per rater (default: every response they lack).
    #[serde(default)]
    pub per_rater: Option<u32>,
    /// YYYY-MM-DD by which the new assignments are due.
    #[serde(default)]
    pub due_on: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct TopUpAdded {
    pub username: String,
    pub added: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct TopUpReport {
    pub raters: Vec<TopUpAdded>,
}

/// One of the caller's own sessions (`GET /api/sessions`): where and when they logged in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
pub struct AccountSession {
    /// The session's number, for `DELETE /api/sessions/{id}`; not its token.
    pub id: i64,
    pub created_at: String,
    pub expires_at: String,
    /// The client's `User-Agent`, as it said it (at most 200 characters).
    pub client: String,
    /// The address it connected from, as the server saw it.
    pub address: String,
    /// The session this request was made in.
    pub current: bool,
}
