//! Curation on the team server: the versions of a case's ground truth kept in PostgreSQL, decided
//! by the rules the local store obeys (`curation::rules`, `curation::truth_problems`). Pure: the
//! server reads the case and its versions under a lock on the case, asks here, and writes what
//! comes back with its audit entry, as `decide_edit` does for ratings.

use super::TeamCuratorSession;
use crate::curation::rules::{self, BranchHead};
use crate::curation::{
    truth_problems, CaseShape, CuratedTruth, Decision, Source, Status, Version, MAIN_BRANCH,
};
use crate::model::{GroundTruth, TaskFamily};
use crate::{Error, Result};
use imaging::SeriesGeometry;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A case as the server holds it for checking a version against.
#[derive(Debug, Clone, PartialEq)]
pub struct CurationCase {
    pub case_id: String,
    /// Series id → its geometry; `None` for a series imported before the server kept geometry.
    pub series: BTreeMap<String, Option<SeriesGeometry>>,
    pub tasks: BTreeMap<String, TaskFamily>,
}

impl CaseShape for CurationCase {
    fn case_id(&self) -> &str {
        &self.case_id
    }

    fn has_series(&self, series_id: &str) -> bool {
        self.series.contains_key(series_id)
    }

    fn task_family(&self, task_id: &str) -> Option<TaskFamily> {
        self.tasks.get(task_id).copied()
    }

    fn geometry(&self, series_id: &str) -> Result<SeriesGeometry> {
        self.series
            .get(series_id)
            .copied()
            .flatten()
            .ok_or_else(|| {
                Error::CurationRefused(format!(
                "the team server holds no geometry of series {series_id:?} of case {}: the study \
                 lead imports the study again (neurorater-server import) to copy it",
                self.case_id
            ))
            })
    }
}

/// A version as the server stores it, with the account that wrote it (none for a version
/// imported from the lead's database, whose author is a name only).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerVersion {
    pub version: Version,
    pub author_account: Option<i64>,
}

/// `POST …/curation/versions`: a new draft on `branch`, started from `based_on`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurationSave {
    /// The client's id of this save (as a rating edit's): a resend is stored once.
    pub edit_id: String,
    pub branch: String,
    /// The version the curator started from; `null` for a new branch started from nothing.
    pub based_on: Option<i64>,
    pub truth: CuratedTruth,
    /// A merge of two independent curations (`curation::merge`), stored as source `consensus`.
    #[serde(default)]
    pub consensus: bool,
}

/// `POST …/curation/versions/{version}/submit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurationSubmit {
    pub edit_id: String,
}

/// `POST …/curation/versions/{version}/review`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurationReview {
    pub edit_id: String,
    pub decision: Decision,
    /// Required for `changes_requested`.
    #[serde(default)]
    pub comment: String,
}

/// The answer to a save: the new version's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedVersion {
    pub version: i64,
}

/// One case of `GET /api/studies/{study}/curation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CurationCaseSummary {
    pub case_id: String,
    /// Versions of every branch.
    pub versions: u32,
    /// The latest version of `main` and its status.
    pub latest_main: Option<i64>,
    pub latest_main_status: Option<Status>,
    /// The final version of `main` that is the case's ground truth now.
    pub current: Option<i64>,
}

/// A case's versions summed up for the curators' list.
pub fn summarise(case_id: &str, versions: &[Version]) -> CurationCaseSummary {
    let latest_main = versions.iter().rfind(|v| v.branch == MAIN_BRANCH);
    CurationCaseSummary {
        case_id: case_id.to_owned(),
        versions: versions.len() as u32,
        latest_main: latest_main.map(|v| v.version),
        latest_main_status: latest_main.map(|v| v.status),
        current: versions
            .iter()
            .rfind(|v| v.branch == MAIN_BRANCH && v.status == Status::Final)
            .map(|v| v.version),
    }
}

/// A problem of a refused version: the field (`lesions[0].marks[1].points_lps_mm`) and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldProblem {
    pub field: String,
    pub message: String,
}

/// Why a curation step is not stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum CurationRefusal {
    /// The branch moved on since the version the step started from: names who saved which
    /// version when; nothing was overwritten.
    Conflict { latest: i64, message: String },
    /// The ground truth contradicts the case; every field is named, `field` is the first.
    Invalid {
        field: String,
        message: String,
        problems: Vec<FieldProblem>,
    },
    /// The rules forbid the step (not a draft, the author reviewing, …).
    Refused { message: String },
    /// No such version of the case.
    NotFound { message: String },
}

impl CurationRefusal {
    pub fn message(&self) -> &str {
        match self {
            CurationRefusal::Conflict { message, .. }
            | CurationRefusal::Invalid { message, .. }
            | CurationRefusal::Refused { message }
            | CurationRefusal::NotFound { message } => message,
        }
    }
}

impl From<Error> for CurationRefusal {
    fn from(error: Error) -> CurationRefusal {
        let message = error.to_string();
        match error {
            Error::StaleGroundTruth { latest, .. } => CurationRefusal::Conflict { latest, message },
            Error::NotFound { .. } => CurationRefusal::NotFound { message },
            _ => CurationRefusal::Refused { message },
        }
    }
}

/// A version to store: numbered after the case's last.
#[derive(Debug, Clone, PartialEq)]
pub struct NewVersion {
    pub version: i64,
    pub branch: String,
    pub based_on: Option<i64>,
    pub status: Status,
    pub source: Source,
    pub truth: CuratedTruth,
}

/// A version's new status after a submit or a review, recorded as a review entry.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    pub version: i64,
    pub before: Status,
    pub status: Status,
    /// `submitted`, `comment`, `changes_requested` or `finalised`.
    pub decision: &'static str,
    pub comment: String,
    /// A version of `main` made final: the case's ground truth from now on, in the bundle's
    /// form (what `ground-truth` and a rater's reveal return).
    pub ground_truth: Option<GroundTruth>,
}

fn head(versions: &[ServerVersion], branch: &str) -> Option<BranchHead> {
    versions
        .iter()
        .map(|v| &v.version)
        .filter(|v| v.branch == branch)
        .max_by_key(|v| v.version)
        .map(|v| BranchHead {
            version: v.version,
            by: v
                .author
                .clone()
                .unwrap_or_else(|| format!("the {}", crate::store::enum_text(&v.source))),
            at: v.created_at.clone().unwrap_or_default(),
        })
}

/// Decides a save: the version against the case (every problem named), then where the branch is.
pub fn decide_save(
    _curator: &TeamCuratorSession,
    case: &CurationCase,
    versions: &[ServerVersion],
    save: &CurationSave,
) -> std::result::Result<NewVersion, CurationRefusal> {
    rules::check_branch_name(&save.branch)?;
    let problems = truth_problems(case, &save.truth)?;
    if let Some((first, _)) = problems.first() {
        let listed: Vec<String> = problems
            .iter()
            .map(|(field, message)| format!("{field}: {message}"))
            .collect();
        return Err(CurationRefusal::Invalid {
            field: first.clone(),
            message: format!(
                "the ground truth of case {} was not saved: {}",
                case.case_id,
                listed.join("; ")
            ),
            problems: problems
                .into_iter()
                .map(|(field, message)| FieldProblem { field, message })
                .collect(),
        });
    }
    rules::check_save_base(
        &case.case_id,
        &save.branch,
        save.based_on,
        head(versions, &save.branch).as_ref(),
        head(versions, MAIN_BRANCH).as_ref(),
    )?;
    Ok(NewVersion {
        version: versions
            .iter()
            .map(|v| v.version.version)
            .max()
            .unwrap_or(0)
            + 1,
        branch: save.branch.clone(),
        based_on: save.based_on,
        status: Status::Draft,
        source: if save.consensus {
            Source::Consensus
        } else {
            Source::Curator
        },
        truth: save.truth.clone(),
    })
}

/// The stored version `version`, which must be the latest of its branch.
fn latest<'v>(
    case_id: &str,
    versions: &'v [ServerVersion],
    version: i64,
) -> std::result::Result<&'v ServerVersion, CurationRefusal> {
    let found = versions
        .iter()
        .find(|v| v.version.version == version)
        .ok_or_else(|| CurationRefusal::NotFound {
            message: format!(
                "version {version} of the ground truth of case {case_id} was not found"
            ),
        })?;
    rules::check_latest(
        case_id,
        version,
        head(versions, &found.version.branch).as_ref(),
    )?;
    Ok(found)
}

/// The author (or another curator) hands the latest draft of `main` to review.
pub fn decide_submit(
    _curator: &TeamCuratorSession,
    case_id: &str,
    versions: &[ServerVersion],
    version: i64,
) -> std::result::Result<StatusChange, CurationRefusal> {
    let found = &latest(case_id, versions, version)?.version;
    rules::check_submit(case_id, version, &found.branch, found.status)?;
    Ok(StatusChange {
        version,
        before: found.status,
        status: Status::InReview,
        decision: "submitted",
        comment: String::new(),
        ground_truth: None,
    })
}

/// A second curator reviews the version in review; finalising a version of `main` makes it the
/// case's ground truth.
pub fn decide_review(
    reviewer: &TeamCuratorSession,
    case_id: &str,
    versions: &[ServerVersion],
    version: i64,
    review: &CurationReview,
) -> std::result::Result<StatusChange, CurationRefusal> {
    let found = latest(case_id, versions, version)?;
    let member = reviewer.member();
    let is_author = match found.author_account {
        Some(account) => account == member.account,
        None => found.version.author.as_deref() == Some(member.username.as_str()),
    };
    let rules::Reviewed { status, label } = rules::review_outcome(
        case_id,
        version,
        found.version.status,
        is_author,
        &member.username,
        review.decision,
        &review.comment,
    )?;
    let makes_current = status == Status::Final && found.version.branch == MAIN_BRANCH;
    Ok(StatusChange {
        version,
        before: found.version.status,
        status,
        decision: label,
        comment: review.comment.clone(),
        ground_truth: makes_current.then(|| found.version.truth.to_bundle_form()),
    })
}
