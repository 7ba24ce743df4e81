//! Multi-site studies: a study lead exports a **rater package** for one rater elsewhere (their
//! queue, the images it needs, the blinded responses and the rubric); the rater imports it into
//! their own database, reads offline, and exports a **results package** (ratings, error labels,
//! marks and the audit trail of each rating); the lead merges it back. `docs/multisite.md`
//! describes the workflow and the format.
//!
//! **Invariants.** A package is one tar file whose `manifest.json` lists every member's SHA-256;
//! a damaged, incomplete or foreign package is refused whole, naming the member, and nothing is
//! written. Packages are named by random UUIDs and their items by number within the package, so
//! no local row id crosses sites. A rater package carries only what the blinded reading item
//! shows (no model name, grader output, planted error, ground truth, disease group or other
//! rater's work) and images rewritten under the PS3.15 basic profile. A merge never overwrites a
//! rating someone edited at the lead's site: it lists a conflict instead; merging the same
//! package again changes nothing.

mod archive;
mod carried;
mod curation;
pub(crate) mod date_shift;
pub(crate) mod deid;
pub(crate) mod incoming;
mod rater;
mod rater_import;
pub(crate) mod results;
mod server_link;
mod unpack;

pub use archive::Member;
pub use curation::{
    import_curation_package, write_curation_package, CurationCase, CurationPackageContents,
    CurationPackageImport,
};
pub use rater::{
    blinded_samples, deidentified_image, export_rater_package, package_extension,
    write_rater_package, ImageSource, PackageCase, PackageImage, PackageItem, PackagePlan,
    PackageSeries, RaterPackageContents, RaterPackageExport, WrittenPackage, BLINDED_MODEL,
};
pub use rater_import::{import_rater_package, RaterPackageImport};
pub use results::{
    export_results_package, imported_rater_packages, merge_results_package, read_uploaded_results,
    ImportedRaterPackage, ResultsPackageExport, UploadedRating,
};
pub use server_link::{server_link, server_links, AssignmentLink, ServerLink};

use crate::{Error, Result};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// The last member of every package.
pub const MANIFEST: &str = "manifest.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PackageKind {
    /// Lead → remote rater: queue, images, blinded responses, rubric.
    RaterPackage,
    /// Remote rater → lead: ratings, labels, marks and their audit trail.
    ResultsPackage,
    /// Team server → curator: every case with its images and current ground truth, no model
    /// answer (`package/curation.rs`).
    CurationPackage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageRater {
    pub name: String,
    pub role: crate::rating::RaterRole,
    pub years_experience: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: PackageKind,
    pub format_version: u32,
    /// A random UUID: names this package on every site.
    pub package_id: String,
    /// For a results package: the rater package it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers_package: Option<String>,
    pub study_id: String,
    /// The lead's study content (rubric, taxonomy, every response) when the rater package was
    /// built; a results package carries its rater package's value.
    pub study_sha256: String,
    pub rater: PackageRater,
    pub site: String,
    pub created_at: String,
    pub members: Vec<Member>,
}

/// What a merge did. Every rating of the package is counted once: added, updated (a rating a
/// previous merge wrote and nobody changed at the lead's site since), unchanged, or a conflict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergeReport {
    pub package_id: String,
    pub rater: String,
    pub site: String,
    pub added: u32,
    pub updated: u32,
    pub unchanged: u32,
    pub conflicts: Vec<Conflict>,
}

/// Something a merge did not write, and why; the lead decides what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Conflict {
    /// The results answer a rater package this database never exported.
    UnknownPackage { package_id: String },
    /// The package names another rater than the one it was exported for.
    UnknownRater {
        package_id: String,
        expected: String,
        found: String,
    },
    /// The results name another study content than the export recorded, or (a rater package
    /// exported before what it carried was recorded, `package/carried.rs`) the study's
    /// responses, rubric or taxonomy changed since the rater package was built.
    StudyChanged { study_id: String },
    /// A rating for an item (assignment) the rater package did not contain.
    UnknownAssignment { item: u32, line: usize },
    /// The lead's database holds a different rating for this item that the merge did not write
    /// (edited at the lead's site, or edited there after an earlier merge).
    EditedAtLead {
        item: u32,
        line: usize,
        case_id: String,
        task_id: String,
    },
    /// The package's rating is older than the one an earlier merge wrote.
    OlderThanMerged {
        item: u32,
        line: usize,
        case_id: String,
        task_id: String,
    },
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Conflict::UnknownPackage { package_id } => write!(
                f,
                "{MANIFEST}: answers_package: this database never exported rater package \
                 {package_id}; merge it into the study lead's database it came from"
            ),
            Conflict::UnknownRater {
                package_id,
                expected,
                found,
            } => write!(
                f,
                "{MANIFEST}: rater.name: rater package {package_id} was exported for {expected:?}, \
                 the results name {found:?}"
            ),
            Conflict::StudyChanged { study_id } => write!(
                f,
                "{MANIFEST}: study_sha256: study {study_id:?} changed since the rater package was \
                 built (responses, rubric or taxonomy); nothing was merged. Export a new rater \
                 package, or merge into a copy of the database as it was"
            ),
            Conflict::UnknownAssignment { item, line } => write!(
                f,
                "ratings.jsonl:{line}: item: item {item} is not in the rater package"
            ),
            Conflict::EditedAtLead {
                item,
                line,
                case_id,
                task_id,
            } => write!(
                f,
                "ratings.jsonl:{line}: item {item} ({case_id}/{task_id}): the rating here differs \
                 and was not written by a merge (or was edited after one); kept as it is"
            ),
            Conflict::OlderThanMerged {
                item,
                line,
                case_id,
                task_id,
            } => write!(
                f,
                "ratings.jsonl:{line}: item {item} ({case_id}/{task_id}): an earlier merge wrote a \
                 newer rating; kept as it is"
            ),
        }
    }
}

/// SHA-256 over what ratings refer to: the study's rubric and taxonomy and every response's key
/// and text, in a fixed order. Stored responses never change, so this moves only when responses
/// are added or the rubric or taxonomy is changed by a re-import.
pub(crate) fn study_sha256(conn: &Connection, path: &Path, study: i64) -> Result<String> {
    let fail = |e| Error::database(path, "hashing the study's content", e);
    let mut hasher = Sha256::new();
    let (rubric, taxonomy): (String, String) = conn
        .query_row(
            "SELECT rubric_json, taxonomy_json FROM studies WHERE id = ?1",
            [study],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(fail)?;
    let mut field = |text: &str| {
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    };
    field(&rubric);
    field(&taxonomy);
    let mut stmt = conn
        .prepare(
            "SELECT c.case_id, t.task_id, r.model, r.sample, r.answer,
                    coalesce(r.rationale, ''), coalesce(r.turns_json, '')
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 ORDER BY c.case_id, t.task_id, r.model, r.sample",
        )
        .map_err(fail)?;
    let mut rows = stmt.query([study]).map_err(fail)?;
    while let Some(row) = rows.next().map_err(fail)? {
        for index in [0, 1, 2, 4, 5, 6] {
            let text: String = row.get(index).map_err(fail)?;
            field(&text);
        }
        let sample: i64 = row.get(3).map_err(fail)?;
        field(&sample.to_string());
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Wraps a failed statement with what was being done (for `map_err`).
fn db_fail<'a>(path: &'a Path, doing: &'static str) -> impl Fn(rusqlite::Error) -> Error + 'a {
    move |e| Error::database(path, doing, e)
}

/// A new package id.
pub(crate) fn new_package_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn refuse(
    package: &Path,
    member: &str,
    line: Option<usize>,
    field: &str,
    message: String,
) -> Error {
    Error::Package {
        package: package.to_path_buf(),
        problems: vec![crate::bundle::Problem {
            file: member.to_owned(),
            line,
            field: field.to_owned(),
            message,
        }],
    }
}

/// Site names and rater names travel in manifests and file names: one line of printable text.
fn check_label(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() || value.chars().count() > 100 || value.chars().any(char::is_control)
    {
        return Err(crate::rating::RatingError::Invalid {
            field: field.to_owned(),
            message: "1 to 100 characters on one line".to_owned(),
        }
        .into());
    }
    Ok(())
}
