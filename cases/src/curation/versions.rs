//! Versions of a case's ground truth: every save is a new version kept with its author and time;
//! a version goes draft → in review → final, and a curator other than its author reviews and
//! finalises it. An edit names the version it started from and is refused, naming who saved
//! what since, when the branch has moved on: two curators never silently overwrite each other.
//!
//! The bundle's ground truth (the `ground_truth` table, source `bundle`) is version 1 of `main`:
//! derived on reading, stored on the first curation write. Finalising a version of `main` makes
//! it the case's current ground truth in the `ground_truth` table (source `curator`), which a
//! re-import of the bundle then keeps.

use super::context::CaseContext;
use super::rules::{self, BranchHead};
use super::CuratedTruth;
use crate::store::audit::Entry;
use crate::store::{Store, Write};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// The branch whose final version is the case's ground truth; independent curations use other
/// branch names and are merged into it.
pub const MAIN_BRANCH: &str = "main";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
// Its name in the generated TypeScript bindings, where a bare name would be ambiguous; JSON never
// writes a container's name.
#[serde(rename = "VersionStatus")]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Draft,
    InReview,
    Final,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
// Its name in the generated TypeScript bindings, where a bare name would be ambiguous; JSON never
// writes a container's name.
#[serde(rename = "VersionSource")]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The study bundle's `ground_truth`.
    Bundle,
    Curator,
    /// A merge of two independent curations.
    Consensus,
    /// A ground-truth bundle (`neurorater import-ground-truth`).
    Import,
}

/// What a reviewer decides about a version in review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// A remark; the version stays in review.
    Comment,
    /// Back to draft for its author.
    ChangesRequested,
    /// Final: the case's ground truth.
    Finalised,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReviewEntry {
    pub by: String,
    /// `submitted`, `comment`, `changes_requested` or `finalised`.
    pub decision: String,
    pub comment: String,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Version {
    pub version: i64,
    pub branch: String,
    pub based_on: Option<i64>,
    pub status: Status,
    pub source: Source,
    /// The curator's name; `None` for a bundle's or an import's version.
    pub author: Option<String>,
    /// `None` for the bundle's version before the first curation write stores it.
    pub created_at: Option<String>,
    pub reviews: Vec<ReviewEntry>,
    /// Final as it arrived (the study bundle's, or `import-ground-truth` of a final case), not
    /// finalised by a second curator here: shown as "final (imported)", never as reviewed.
    pub imported_final: bool,
    pub truth: CuratedTruth,
}

/// Whether a version is final as it arrived (the study bundle's, or a ground-truth bundle's
/// final case) rather than finalised by a second curator here: the one definition the curator's
/// screen, the history and the ground-truth export show.
pub fn imported_final(status: Status, source: Source) -> bool {
    status == Status::Final && matches!(source, Source::Bundle | Source::Import)
}

/// One save: `based_on` is the version the curator started from (`None`: from nothing).
#[derive(Debug, Clone)]
pub struct Edit<'a> {
    pub study_id: &'a str,
    pub case_id: &'a str,
    pub branch: &'a str,
    /// The curator (a rater's key).
    pub curator: i64,
    pub based_on: Option<i64>,
    pub truth: &'a CuratedTruth,
}

/// Every version of every branch of a case, oldest first.
pub fn history(store: &Store, study_id: &str, case_id: &str) -> Result<Vec<Version>> {
    let case = CaseContext::load(store, study_id, case_id)?;
    let stored = stored_versions(store, case.case_key)?;
    if !stored.is_empty() {
        return Ok(stored);
    }
    Ok(bundle_version(store, &case)?.into_iter().collect())
}

/// The case's ground truth now: the latest final version of `main`, else none.
pub fn current(store: &Store, study_id: &str, case_id: &str) -> Result<Option<Version>> {
    Ok(history(store, study_id, case_id)?
        .into_iter()
        .rfind(|v| v.branch == MAIN_BRANCH && v.status == Status::Final))
}

/// Saves `edit.truth` as a new draft on its branch and returns its version number.
pub fn save_draft(store: &mut Store, edit: &Edit<'_>) -> Result<i64> {
    save(store, edit, Source::Curator)
}

/// Saves a merge of two independent curations (see [`super::merge`]) as a draft, usually on
/// `main`, based on the version the merging curator started from.
pub fn save_consensus(store: &mut Store, edit: &Edit<'_>) -> Result<i64> {
    save(store, edit, Source::Consensus)
}

/// What a save checks before it writes: the branch's name and `truth` against the stored case
/// (series, tasks, each mark inside its series' volume). The case, for the write.
pub fn check_edit(
    store: &Store,
    study_id: &str,
    case_id: &str,
    branch: &str,
    truth: &CuratedTruth,
) -> Result<CaseContext> {
    rules::check_branch_name(branch)?;
    let case = CaseContext::load(store, study_id, case_id)?;
    let problems = case.check(store, truth)?;
    if !problems.is_empty() {
        let listed: Vec<String> = problems
            .iter()
            .map(|(field, message)| format!("{field}: {message}"))
            .collect();
        return Err(Error::CurationRefused(format!(
            "the ground truth of case {} was not saved: {}",
            case.case_id,
            listed.join("; ")
        )));
    }
    Ok(case)
}

fn save(store: &mut Store, edit: &Edit<'_>, source: Source) -> Result<i64> {
    let case = check_edit(store, edit.study_id, edit.case_id, edit.branch, edit.truth)?;
    let bundle = bundle_version(store, &case)?;
    let curator = rater_name(store, edit.curator)?;
    store.write(|w| {
        materialise(w, &case, bundle.as_ref())?;
        let branch_head = latest_on(w, case.case_key, edit.branch)?;
        let main_head = latest_on(w, case.case_key, MAIN_BRANCH)?;
        rules::check_save_base(
            &case.case_id,
            edit.branch,
            edit.based_on,
            branch_head.as_ref(),
            main_head.as_ref(),
        )?;
        insert_version(
            w,
            &case,
            edit.branch,
            edit.based_on,
            Status::Draft,
            source,
            Some(edit.curator),
            edit.truth,
            &curator,
        )
    })
}

/// Inserts a version (numbered after the case's last) and audits it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_version(
    w: &mut Write<'_>,
    case: &CaseContext,
    branch: &str,
    based_on: Option<i64>,
    status: Status,
    source: Source,
    author: Option<i64>,
    truth: &CuratedTruth,
    actor: &str,
) -> Result<i64> {
    let fail = |e| w.fail("saving a ground-truth version", e);
    let version: i64 = w
        .tx()
        .query_row(
            "SELECT coalesce(max(version), 0) + 1 FROM ground_truth_versions WHERE case_ref = ?1",
            [case.case_key],
            |row| row.get(0),
        )
        .map_err(fail)?;
    let body = serde_json::to_string(truth).map_err(|e| Error::Corrupt {
        what: format!("ground truth of case {}: {e}", case.case_id),
    })?;
    let at = crate::store::now(w.tx()).map_err(fail)?;
    w.tx()
        .execute(
            "INSERT INTO ground_truth_versions (case_ref, version, branch, based_on, status,
                 source, author, body_json, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                case.case_key,
                version,
                branch,
                based_on,
                crate::store::enum_text(&status),
                crate::store::enum_text(&source),
                author,
                body,
                at
            ],
        )
        .map_err(fail)?;
    w.audit(&Entry {
        actor,
        action: "ground_truth.version",
        entity: &entity(case),
        before: None,
        after: Some(&serde_json::json!({
            "version": version,
            "branch": branch,
            "based_on": based_on,
            "status": status,
            "source": source,
            "truth": truth,
        })),
    })?;
    if status == Status::Final && branch == MAIN_BRANCH {
        make_current(w, case, truth)?;
    }
    Ok(version)
}

/// The author hands a draft of `main` to review.
pub fn submit_for_review(
    store: &mut Store,
    study_id: &str,
    case_id: &str,
    curator: i64,
    version: i64,
) -> Result<()> {
    let case = CaseContext::load(store, study_id, case_id)?;
    let name = rater_name(store, curator)?;
    store.write(|w| {
        let row = latest_row(w, &case, version)?;
        rules::check_submit(case_id, version, &row.branch, row.status)?;
        set_status(
            w,
            &case,
            &row,
            Status::InReview,
            curator,
            &name,
            "submitted",
            "",
        )
    })
}

/// A second curator reviews the version in review: a comment, changes requested (back to
/// draft) or final. The version's author may not review it.
pub fn review(
    store: &mut Store,
    study_id: &str,
    case_id: &str,
    reviewer: i64,
    version: i64,
    decision: Decision,
    comment: &str,
) -> Result<()> {
    let case = CaseContext::load(store, study_id, case_id)?;
    let name = rater_name(store, reviewer)?;
    store.write(|w| {
        let row = latest_row(w, &case, version)?;
        let rules::Reviewed { status, label } = rules::review_outcome(
            case_id,
            version,
            row.status,
            row.author == Some(reviewer),
            &name,
            decision,
            comment,
        )?;
        set_status(w, &case, &row, status, reviewer, &name, label, comment)?;
        if status == Status::Final {
            make_current(w, &case, &row.truth)?;
        }
        Ok(())
    })
}

struct Row {
    id: i64,
    version: i64,
    branch: String,
    status: Status,
    author: Option<i64>,
    truth: CuratedTruth,
}

/// The stored version `version`, which must be the latest of its branch.
fn latest_row(w: &Write<'_>, case: &CaseContext, version: i64) -> Result<Row> {
    let fail = |e| w.fail("reading a ground-truth version", e);
    let found = w
        .tx()
        .query_row(
            "SELECT id, branch, status, author, body_json FROM ground_truth_versions
             WHERE case_ref = ?1 AND version = ?2",
            params![case.case_key, version],
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, String>(4)?,
                ))
            },
        )
        .optional()
        .map_err(fail)?;
    let Some((id, branch, status, author, body)) = found else {
        return Err(Error::NotFound {
            what: format!(
                "version {version} of the ground truth of case {}",
                case.case_id
            ),
        });
    };
    rules::check_latest(
        &case.case_id,
        version,
        latest_on(w, case.case_key, &branch)?.as_ref(),
    )?;
    Ok(Row {
        id,
        version,
        branch,
        status: parse(&status)?,
        author,
        truth: parse_body(&body, &case.case_id)?,
    })
}

#[allow(clippy::too_many_arguments)]
fn set_status(
    w: &mut Write<'_>,
    case: &CaseContext,
    row: &Row,
    status: Status,
    by: i64,
    by_name: &str,
    decision: &str,
    comment: &str,
) -> Result<()> {
    let fail = |e| w.fail("recording a review", e);
    let at = crate::store::now(w.tx()).map_err(fail)?;
    w.tx()
        .execute(
            "UPDATE ground_truth_versions SET status = ?1, status_by = ?2, status_at = ?3
             WHERE id = ?4",
            params![crate::store::enum_text(&status), by, at, row.id],
        )
        .map_err(fail)?;
    w.tx()
        .execute(
            "INSERT INTO ground_truth_reviews (version, reviewer, decision, comment, at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![row.id, by, decision, comment, at],
        )
        .map_err(fail)?;
    w.audit(&Entry {
        actor: by_name,
        action: "ground_truth.review",
        entity: &entity(case),
        before: Some(&serde_json::json!({ "version": row.version, "status": row.status })),
        after: Some(&serde_json::json!({
            "version": row.version,
            "status": status,
            "decision": decision,
            "comment": comment,
        })),
    })
}

/// Makes `truth` the case's current ground truth for exports, re-imports and raters.
fn make_current(w: &Write<'_>, case: &CaseContext, truth: &CuratedTruth) -> Result<()> {
    let body = serde_json::to_string(&truth.to_bundle_form()).map_err(|e| Error::Corrupt {
        what: format!("ground truth of case {}: {e}", case.case_id),
    })?;
    w.tx()
        .execute(
            "INSERT INTO ground_truth (case_ref, body_json, source) VALUES (?1, ?2, 'curator')
             ON CONFLICT (case_ref) DO UPDATE SET body_json = excluded.body_json,
                 source = 'curator'",
            params![case.case_key, body],
        )
        .map_err(|e| w.fail("storing the final ground truth", e))?;
    Ok(())
}

/// Stores the bundle's version 1 before the first curation write, so versions count from it.
pub(crate) fn materialise(
    w: &mut Write<'_>,
    case: &CaseContext,
    bundle: Option<&Version>,
) -> Result<()> {
    let Some(bundle) = bundle.filter(|v| v.created_at.is_none()) else {
        return Ok(());
    };
    let stored: i64 = w
        .tx()
        .query_row(
            "SELECT count(*) FROM ground_truth_versions WHERE case_ref = ?1",
            [case.case_key],
            |row| row.get(0),
        )
        .map_err(|e| w.fail("counting ground-truth versions", e))?;
    if stored > 0 {
        return Ok(());
    }
    insert_version(
        w,
        case,
        MAIN_BRANCH,
        None,
        Status::Final,
        Source::Bundle,
        None,
        &bundle.truth,
        "import",
    )?;
    Ok(())
}

/// The bundle's ground truth as version 1, when nothing is stored yet.
pub(crate) fn bundle_version(store: &Store, case: &CaseContext) -> Result<Option<Version>> {
    let conn = store.read();
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM ground_truth_versions WHERE case_ref = ?1",
            [case.case_key],
            |row| row.get(0),
        )
        .map_err(|e| Error::database(store.path(), "counting ground-truth versions", e))?;
    if stored > 0 {
        return Ok(None);
    }
    let body: Option<String> = conn
        .query_row(
            "SELECT body_json FROM ground_truth WHERE case_ref = ?1",
            [case.case_key],
            |row| row.get(0),
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "reading the bundle's ground truth", e))?;
    let Some(body) = body else { return Ok(None) };
    let truth: crate::model::GroundTruth =
        serde_json::from_str(&body).map_err(|e| Error::Corrupt {
            what: format!("ground truth of case {}: {e}", case.case_id),
        })?;
    Ok(Some(Version {
        version: 1,
        branch: MAIN_BRANCH.to_owned(),
        based_on: None,
        status: Status::Final,
        source: Source::Bundle,
        author: None,
        created_at: None,
        reviews: Vec::new(),
        imported_final: imported_final(Status::Final, Source::Bundle),
        truth: case.curated_from_bundle(store, &truth)?,
    }))
}

fn stored_versions(store: &Store, case_key: i64) -> Result<Vec<Version>> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "reading ground-truth versions", e);
    let mut stmt = conn
        .prepare(
            "SELECT v.id, v.version, v.branch, v.based_on, v.status, v.source, r.name,
                    v.created_at, v.body_json
             FROM ground_truth_versions v LEFT JOIN raters r ON v.author = r.id
             WHERE v.case_ref = ?1 ORDER BY v.version",
        )
        .map_err(fail)?;
    let rows = stmt
        .query_map([case_key], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, Option<i64>>(3)?,
                row.get::<_, String>(4)?,
                row.get::<_, String>(5)?,
                row.get::<_, Option<String>>(6)?,
                row.get::<_, String>(7)?,
                row.get::<_, String>(8)?,
            ))
        })
        .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        .map_err(fail)?;
    let mut reviews_of = conn
        .prepare(
            "SELECT r.name, g.decision, g.comment, g.at FROM ground_truth_reviews g
             JOIN raters r ON g.reviewer = r.id WHERE g.version = ?1 ORDER BY g.id",
        )
        .map_err(fail)?;
    let mut versions = Vec::with_capacity(rows.len());
    for (id, version, branch, based_on, status, source, author, created_at, body) in rows {
        let reviews = reviews_of
            .query_map([id], |row| {
                Ok(ReviewEntry {
                    by: row.get(0)?,
                    decision: row.get(1)?,
                    comment: row.get(2)?,
                    at: row.get(3)?,
                })
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(fail)?;
        let (status, source): (Status, Source) = (parse(&status)?, parse(&source)?);
        versions.push(Version {
            version,
            branch,
            based_on,
            status,
            source,
            author,
            created_at: Some(created_at),
            reviews,
            imported_final: imported_final(status, source),
            truth: parse_body(&body, &format!("case key {case_key}"))?,
        });
    }
    Ok(versions)
}

/// The latest version of a branch.
fn latest_on(w: &Write<'_>, case_key: i64, branch: &str) -> Result<Option<BranchHead>> {
    w.tx()
        .query_row(
            "SELECT v.version, coalesce(r.name, 'the ' || v.source), v.created_at
             FROM ground_truth_versions v LEFT JOIN raters r ON v.author = r.id
             WHERE v.case_ref = ?1 AND v.branch = ?2 ORDER BY v.version DESC LIMIT 1",
            params![case_key, branch],
            |row| {
                Ok(BranchHead {
                    version: row.get(0)?,
                    by: row.get(1)?,
                    at: row.get(2)?,
                })
            },
        )
        .optional()
        .map_err(|e| w.fail("reading the latest ground-truth version", e))
}

pub(crate) fn rater_name(store: &Store, rater: i64) -> Result<String> {
    store
        .read()
        .query_row("SELECT name FROM raters WHERE id = ?1", [rater], |row| {
            row.get(0)
        })
        .optional()
        .map_err(|e| Error::database(store.path(), "reading a rater", e))?
        .ok_or_else(|| Error::NotFound {
            what: format!("rater {rater}"),
        })
}

fn entity(case: &CaseContext) -> String {
    format!("ground_truth:{}/{}", case.study_id, case.case_id)
}

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|e| Error::Corrupt {
        what: format!("{text:?}: {e}"),
    })
}

fn parse_body(body: &str, whose: &str) -> Result<CuratedTruth> {
    serde_json::from_str(body).map_err(|e| Error::Corrupt {
        what: format!("a ground-truth version of {whose}: {e}"),
    })
}

/// What bringing the team server's versions into this database did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReceivedVersions {
    pub versions_added: u32,
    /// Reviews (submitted, comments, decisions) added to versions both sides hold.
    pub reviews_added: u32,
    /// Server accounts that curated or reviewed, added here as raters with role curator.
    pub curators_added: Vec<String>,
    /// Versions left alone: this database holds another version under the number.
    pub conflicts: Vec<String>,
}

/// Brings the versions of one case that arrived from elsewhere (the team server) into this
/// database, by version number: a number not stored here is added with its reviews; one stored
/// with the same branch, base and ground truth takes the reviews it lacks and its status; one
/// stored with other content is a local-only version, listed and never overwritten, and the
/// case's later arrivals stay out (they build on what this database does not hold). A version of
/// main made final by the arrivals becomes the case's current ground truth. In the caller's
/// write, with one audit entry per case changed.
pub(crate) fn receive(
    w: &mut Write<'_>,
    case: &CaseContext,
    bundle: Option<&Version>,
    arriving: &[Version],
    curators: &mut std::collections::BTreeMap<String, i64>,
    report: &mut ReceivedVersions,
) -> Result<()> {
    // Nothing stored here and nothing arriving but the bundle's own version 1: nothing to write.
    let derived = bundle.filter(|v| v.created_at.is_none());
    let only_the_bundle = derived.is_some_and(|bundle| {
        arriving.iter().all(|v| {
            v.version == 1
                && v.source == Source::Bundle
                && v.reviews.is_empty()
                && v.truth == bundle.truth
        })
    });
    if only_the_bundle {
        return Ok(());
    }
    materialise(w, case, bundle)?;
    let fail = |e| w.fail("receiving ground-truth versions", e);
    let mut added = Vec::new();
    let mut reviews_added = 0u32;
    for version in arriving {
        let stored: Option<(i64, String, Option<i64>, String)> = w
            .tx()
            .query_row(
                "SELECT id, branch, based_on, body_json FROM ground_truth_versions
                 WHERE case_ref = ?1 AND version = ?2",
                params![case.case_key, version.version],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .optional()
            .map_err(fail)?;
        let id = match stored {
            None => {
                let author = version
                    .author
                    .as_deref()
                    .map(|name| curator_key(w, name, curators, report))
                    .transpose()?;
                let body = serde_json::to_string(&version.truth).map_err(|e| Error::Corrupt {
                    what: format!("ground truth of case {}: {e}", case.case_id),
                })?;
                let at = match &version.created_at {
                    Some(at) => at.clone(),
                    None => crate::store::now(w.tx()).map_err(fail)?,
                };
                w.tx()
                    .execute(
                        "INSERT INTO ground_truth_versions (case_ref, version, branch, based_on,
                             status, source, author, body_json, created_at)
                         VALUES (?1, ?2, ?3, ?4, 'draft', ?5, ?6, ?7, ?8)",
                        params![
                            case.case_key,
                            version.version,
                            version.branch,
                            version.based_on,
                            crate::store::enum_text(&version.source),
                            author,
                            body,
                            at
                        ],
                    )
                    .map_err(fail)?;
                added.push(version.version);
                w.tx().last_insert_rowid()
            }
            Some((id, branch, based_on, body))
                if branch == version.branch
                    && based_on == version.based_on
                    && parse_body(&body, &case.case_id)? == version.truth =>
            {
                id
            }
            Some(_) => {
                report.conflicts.push(format!(
                    "case {}: version {} here is not the team server's version {} (saved here \
                     only); kept it, and the server's versions from {} on were not brought in",
                    case.case_id, version.version, version.version, version.version
                ));
                break;
            }
        };
        let here: Vec<(String, String, String)> = w
            .tx()
            .prepare(
                "SELECT r.name, g.decision, g.comment FROM ground_truth_reviews g
                 JOIN raters r ON r.id = g.reviewer WHERE g.version = ?1 ORDER BY g.id",
            )
            .and_then(|mut stmt| {
                stmt.query_map([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                    .collect()
            })
            .map_err(fail)?;
        let shared = here.len().min(version.reviews.len());
        let same_start =
            here[..shared]
                .iter()
                .zip(&version.reviews)
                .all(|((by, decision, comment), review)| {
                    *by == review.by && *decision == review.decision && *comment == review.comment
                });
        if !same_start || here.len() > version.reviews.len() {
            report.conflicts.push(format!(
                "case {}: version {} was reviewed here in a way the team server does not know; \
                 kept the reviews here",
                case.case_id, version.version
            ));
            continue;
        }
        for review in &version.reviews[here.len()..] {
            let reviewer = curator_key(w, &review.by, curators, report)?;
            w.tx()
                .execute(
                    "INSERT INTO ground_truth_reviews (version, reviewer, decision, comment, at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, reviewer, review.decision, review.comment, review.at],
                )
                .map_err(fail)?;
            reviews_added += 1;
        }
        let last = version.reviews.last();
        let status_by = last
            .map(|review| curator_key(w, &review.by, curators, report))
            .transpose()?;
        w.tx()
            .execute(
                "UPDATE ground_truth_versions SET status = ?2,
                     status_by = coalesce(?3, status_by), status_at = coalesce(?4, status_at)
                 WHERE id = ?1",
                params![
                    id,
                    crate::store::enum_text(&version.status),
                    status_by,
                    last.map(|review| review.at.clone())
                ],
            )
            .map_err(fail)?;
    }
    if added.is_empty() && reviews_added == 0 {
        return Ok(());
    }
    report.versions_added += added.len() as u32;
    report.reviews_added += reviews_added;
    let current: Option<(String, String)> = w
        .tx()
        .query_row(
            "SELECT body_json, source FROM ground_truth_versions
             WHERE case_ref = ?1 AND branch = ?2 AND status = 'final'
             ORDER BY version DESC LIMIT 1",
            params![case.case_key, MAIN_BRANCH],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .map_err(fail)?;
    if let Some((body, source)) = current {
        if parse::<Source>(&source)? != Source::Bundle {
            make_current(w, case, &parse_body(&body, &case.case_id)?)?;
        }
    }
    w.audit(&Entry {
        actor: "team server",
        action: "ground_truth.pull",
        entity: &entity(case),
        before: None,
        after: Some(&serde_json::json!({
            "versions_added": added,
            "reviews_added": reviews_added,
        })),
    })
}

/// The local rater a server account's curation is recorded under, added with role curator when
/// this database does not know the name.
fn curator_key(
    w: &Write<'_>,
    name: &str,
    curators: &mut std::collections::BTreeMap<String, i64>,
    report: &mut ReceivedVersions,
) -> Result<i64> {
    if let Some(&key) = curators.get(name) {
        return Ok(key);
    }
    let key = crate::rating::insert_rater(w, name, crate::rating::RaterRole::Curator, None)?;
    curators.insert(name.to_owned(), key);
    report.curators_added.push(name.to_owned());
    Ok(key)
}
