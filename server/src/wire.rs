//! The JSON bodies of the HTTP API, as published in `/openapi.json`. Values that are the
//! application layer's types (`cases::app::team`) appear as objects; docs/team-server.md lists
//! their fields.

/// The bodies the team client reads too, defined once beside the application layer.
pub use cases::app::team::wire::{
    AccountSession, EditAck, EditRequest, Invitation, InvitationSummary, InviteRequest, Me,
    Membership, Progress, QueueEntry, RaterProgress, SiteProgress, TopUpAdded, TopUpReport,
    TopUpRequest,
};
use cases::app::team::{
    CurationCaseSummary, CurationReview, CurationSave, CurationSubmit, RaterItem, SavedVersion,
    TeamStudyRating,
};
use cases::curation::Version;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LoginReply {
    /// Send as `Authorization: Bearer TOKEN`; shown once, stored only as its SHA-256.
    pub token: String,
    pub expires_at: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    pub current_password: String,
    /// 12 to 1,024 characters. Every other session of the account ends.
    pub new_password: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptPasswordReset {
    /// The one-time code the study lead passed on.
    pub code: String,
    /// The account's new password, 12 to 1,024 characters.
    pub password: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptInvitation {
    /// The one-time code the study lead passed on.
    pub code: String,
    /// The new account's password; for an existing account, its current password.
    pub password: String,
}

/// One blinded item: `cases::app::team::RaterItem`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct Item(pub RaterItem);

/// Every rating of the study, for the lead's own database: `cases::app::team::TeamStudyRating`
/// each (the server's assignment, the rater's username and site, the response's case, task,
/// model and sample, status, version, the whole state, times).
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Vec<Object>)]
pub struct StudyRatings(pub Vec<TeamStudyRating>);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RevealLock {
    /// Locked: the rater sees no ground truth and cannot reopen a submitted rating.
    pub locked: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GroundTruth {
    pub case_id: String,
    #[schema(value_type = Object)]
    pub ground_truth: Option<serde_json::Value>,
}

/// What `neurorater-server import` did.
#[derive(Debug, Serialize)]
pub struct ImportReport {
    pub study_id: String,
    pub cases_added: u64,
    pub responses_added: u64,
    pub grader_scores_added: u64,
    /// Image files de-identified and copied (a re-import copies only new ones).
    pub images_added: u64,
    /// Curation versions copied from the lead's database (a re-import copies only versions the
    /// server does not number yet).
    pub curation_versions_added: u64,
    /// Rubric versions copied from the lead's database (a re-import copies only versions the
    /// server does not number yet), and the version raters score on now.
    pub rubric_versions_added: u64,
    pub rubric_version: u32,
    /// The lead's one-time code, when the import invited them.
    pub lead_invitation: Option<Invitation>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct PackageQuery {
    /// The lead only: the rater whose queue to package (for a site with no connection).
    pub rater: Option<String>,
}

/// What an uploaded results package did, item by item.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResultsReport {
    /// The rater package the results answer.
    pub package_id: String,
    pub rater: String,
    /// Ratings stored (saved, submitted, reopened) by this upload.
    pub applied: u32,
    /// Ratings the server already held as the package says (a second upload of the same
    /// results, for one).
    pub unchanged: u32,
    /// Ratings whose server version moved on since the rater's package: kept as they are.
    pub conflicts: Vec<ResultsItem>,
    /// Ratings the study's rules refused, or items the package did not hold.
    pub refused: Vec<ResultsItem>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResultsItem {
    pub item: u32,
    /// Its line in `ratings.jsonl`.
    pub line: usize,
    pub assignment: Option<i64>,
    /// `conflict`, `unknown_item`, or the refused edit's code (`invalid`, `incomplete`,
    /// `refused`).
    pub code: String,
    pub message: String,
}

/// `POST …/curation/versions`: `cases::app::team::CurationSave`, `{edit_id, branch, based_on,
/// truth, consensus?}`: `based_on` the version the curator started from (`null` for a new branch
/// started from nothing), `truth` a `cases::curation::CuratedTruth` (diagnosis, diagnosis_code,
/// differential, lesions with marks in patient LPS mm, expected_reasoning, difficulty, tasks).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(value_type = Object)]
pub struct CurationSaveBody(pub CurationSave);

/// `POST …/curation/versions/{version}/submit`: `{edit_id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(value_type = Object)]
pub struct CurationSubmitBody(pub CurationSubmit);

/// `POST …/curation/versions/{version}/review`: `{edit_id, decision, comment}`, `decision` one of
/// `comment`, `changes_requested` (a comment required) or `finalised`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(value_type = Object)]
pub struct CurationReviewBody(pub CurationReview);

/// The new version's number.
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct SavedVersionBody(pub SavedVersion);

/// One version of a case's ground truth: `cases::curation::Version` (version, branch, based_on,
/// status, source, author, created_at, reviews, imported_final, truth).
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct VersionBody(pub Version);

/// Every version of a case, oldest first.
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Vec<Object>)]
pub struct CurationHistory(pub Vec<Version>);

/// Per case: `cases::app::team::CurationCaseSummary` (case_id, versions, latest_main,
/// latest_main_status, current).
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Vec<Object>)]
pub struct CurationCases(pub Vec<CurationCaseSummary>);
