//! A rater sees the ground truth of a case only after rating: seeing it before would anchor the
//! rating it is meant to be independent of.

use super::context::CaseContext;
use super::versions::{current, Source, Status, Version, MAIN_BRANCH};
use crate::model::GroundTruth;
use crate::rating::rules::{self, ReopenLock, ReopenLocks};
use crate::store::audit::Entry;
use crate::store::{Store, Write};
use crate::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

/// The audit action of a reveal; its entity is `ground_truth:STUDY/CASE`, its actor the rater.
const REVEALED: &str = "ground_truth.revealed";

/// When the rater (`rater`, a key) first saw the ground truth of the case `case_key`, if ever
/// (every reveal is audited here, a reveal the team server holds included:
/// [`record_server_reveal`]).
pub(crate) fn ground_truth_seen_at(
    conn: &Connection,
    case_key: i64,
    rater: i64,
) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT a.at FROM cases c JOIN studies st ON c.study = st.id
         JOIN audit_log a ON a.entity = 'ground_truth:' || st.study_id || '/' || c.case_id
         WHERE c.id = ?1 AND a.action = ?2
           AND a.actor = (SELECT name FROM raters WHERE id = ?3)
         ORDER BY a.id LIMIT 1",
        params![case_key, REVEALED, rater],
        |r| r.get(0),
    )
    .optional()
}

/// Whether the study lead closed the ground truth of the case's study to this computer's
/// account, as the team server last said (`team_server_word`); never for a study not read from
/// a server.
fn closed_by_lead(conn: &Connection, case_key: i64) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT coalesce(max(w.reveal_locked), 0) FROM cases c JOIN studies st ON c.study = st.id
         JOIN team_server_word w ON w.study_id = st.study_id WHERE c.id = ?1",
        [case_key],
        |r| r.get(0),
    )
}

/// What keeps a rater's submitted ratings of one case as they are: the one reading the local
/// reopen, the reading item and the reveal apply (`rules::reopen_refusal`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CaseLocks {
    pub ground_truth_seen_at: Option<String>,
    pub locked_by_lead: bool,
}

impl CaseLocks {
    pub(crate) fn read(conn: &Connection, case_key: i64, rater: i64) -> rusqlite::Result<Self> {
        Ok(CaseLocks {
            ground_truth_seen_at: ground_truth_seen_at(conn, case_key, rater)?,
            locked_by_lead: closed_by_lead(conn, case_key)?,
        })
    }

    pub(crate) fn reopen_refusal(&self) -> Option<ReopenLock> {
        rules::reopen_refusal(ReopenLocks {
            ground_truth_seen_at: self.ground_truth_seen_at.as_deref(),
            locked_by_lead: self.locked_by_lead,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RevealedTruth {
    pub study_id: String,
    pub case_id: String,
    pub version: Version,
}

/// The current ground truth of the case of `assignment`, for `rater`. Refused unless the rater
/// submitted the rating of that assignment, and while any other assignment of theirs on the same
/// case (another task, or a repeat read) is still unsubmitted: the truth would bias it. Each
/// reveal is audited, so a later read can be checked against it.
pub fn ground_truth_for_rater(
    store: &mut Store,
    rater: i64,
    assignment: i64,
) -> Result<RevealedTruth> {
    let (study_id, case_id, name) = check_reveal(store, rater, assignment)?;
    let version = current(store, &study_id, &case_id)?.ok_or_else(|| Error::NotFound {
        what: format!("final ground truth of case {case_id}"),
    })?;
    record(store, &name, assignment, study_id, case_id, version)
}

/// The ground truth of the case of `assignment` as the team server revealed it to `rater`
/// (`truth` in the bundle's form, `number` its version there): the rater's database holds none,
/// as the server-built package carries none. Checked and audited exactly as a local reveal, so
/// the rule that locks a rating after its case's ground truth was seen
/// ([`ground_truth_seen_at`]) holds for it too.
pub fn ground_truth_from_server(
    store: &mut Store,
    rater: i64,
    assignment: i64,
    truth: &GroundTruth,
    number: i64,
) -> Result<RevealedTruth> {
    let (study_id, case_id, name) = check_reveal(store, rater, assignment)?;
    let case = CaseContext::load(store, &study_id, &case_id)?;
    let version = Version {
        version: number,
        branch: MAIN_BRANCH.to_owned(),
        based_on: None,
        status: Status::Final,
        // The server's reveal carries the truth and its number, not who curated it.
        source: Source::Curator,
        author: None,
        created_at: None,
        reviews: Vec::new(),
        imported_final: false,
        truth: case.curated_from_bundle(store, truth)?,
    };
    record(store, &name, assignment, study_id, case_id, version)
}

/// Audits that `rater_name` saw `version` of the case's ground truth through `assignment`.
fn record(
    store: &mut Store,
    rater_name: &str,
    assignment: i64,
    study_id: String,
    case_id: String,
    version: Version,
) -> Result<RevealedTruth> {
    store.write(|w| {
        audit_reveal(
            w,
            rater_name,
            assignment,
            &study_id,
            &case_id,
            Some(version.version),
        )
    })?;
    Ok(RevealedTruth {
        study_id,
        case_id,
        version,
    })
}

/// The audit entry of a reveal, the record [`ground_truth_seen_at`] reads: `rater_name` saw
/// version `version` of the case's ground truth (`None`: a version the team server did not
/// name) through `assignment`.
fn audit_reveal(
    w: &Write<'_>,
    rater_name: &str,
    assignment: i64,
    study_id: &str,
    case_id: &str,
    version: Option<i64>,
) -> Result<()> {
    w.audit(&Entry {
        actor: rater_name,
        action: REVEALED,
        entity: &format!("ground_truth:{study_id}/{case_id}"),
        before: None,
        after: Some(&serde_json::json!({
            "assignment": assignment,
            "version": version,
        })),
    })
}

/// Records, inside the write `w`, that `rater` saw the ground truth of `assignment`'s case on
/// the team server (revealed there, from another computer), as a reveal here records it: a
/// rating taken over from the server keeps the server's reopen lock here too. Nothing is
/// written when a reveal of the case by this rater is recorded already; whether it recorded one.
pub(crate) fn record_server_reveal(
    w: &Write<'_>,
    rater: i64,
    assignment: i64,
    version: Option<i64>,
) -> Result<bool> {
    let (study_id, case_id, case_key, name): (String, String, i64, String) = w
        .tx()
        .query_row(
            "SELECT st.study_id, c.case_id, c.id, ra.name
             FROM assignments a JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id JOIN raters ra ON ra.id = a.rater
             WHERE a.id = ?1 AND a.rater = ?2",
            [assignment, rater],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(|e| w.fail("reading the case of a revealed assignment", e))?;
    let seen = ground_truth_seen_at(w.tx(), case_key, rater)
        .map_err(|e| w.fail("checking for a ground-truth reveal", e))?;
    if seen.is_some() {
        return Ok(false);
    }
    audit_reveal(w, &name, assignment, &study_id, &case_id, version)?;
    Ok(true)
}

/// Whether `rater` may see the ground truth of `assignment`'s case now: the rule
/// [`ground_truth_for_rater`] applies, for a reveal asked elsewhere (the team server).
pub fn may_reveal(store: &Store, rater: i64, assignment: i64) -> Result<()> {
    check_reveal(store, rater, assignment).map(drop)
}

/// The study, case and rater name of an assignment whose ground truth may be revealed.
fn check_reveal(store: &Store, rater: i64, assignment: i64) -> Result<(String, String, String)> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "checking a ground-truth reveal", e);
    let found: Option<(i64, String, String, i64, String)> = conn
        .query_row(
            "SELECT a.rater, st.study_id, c.case_id, c.id, ra.name
             FROM assignments a JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id JOIN raters ra ON ra.id = ?2
             WHERE a.id = ?1",
            [assignment, rater],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            },
        )
        .optional()
        .map_err(fail)?;
    let Some((owner, study_id, case_id, case_key, name)) = found else {
        return Err(Error::NotFound {
            what: format!("assignment {assignment} (or rater {rater})"),
        });
    };
    if owner != rater {
        return Err(Error::CurationRefused(format!(
            "assignment {assignment} belongs to another rater: {name} may reveal the ground \
             truth of their own assignments only"
        )));
    }
    if closed_by_lead(conn, case_key).map_err(fail)? {
        return Err(Error::CurationRefused(
            rules::REVEAL_CLOSED_BY_LEAD.to_owned(),
        ));
    }
    // Every assignment of this rater on this case, with whether its rating is submitted.
    let mut stmt = conn
        .prepare(
            "SELECT a.id, coalesce(g.status = 'submitted', 0)
             FROM assignments a JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id
             LEFT JOIN ratings g ON g.response = a.response AND g.rater = a.rater
                                 AND g.read_no = a.read_no
             WHERE a.rater = ?1 AND t.case_ref = ?2 ORDER BY a.position",
        )
        .map_err(fail)?;
    let on_case: Vec<(i64, bool)> = stmt
        .query_map([rater, case_key], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(fail)?;
    if on_case
        .iter()
        .any(|(id, submitted)| *id == assignment && !submitted)
    {
        return Err(Error::CurationRefused(format!(
            "the ground truth of case {case_id} opens after the rating is submitted: submit \
             assignment {assignment} first"
        )));
    }
    let open = on_case.iter().filter(|(_, submitted)| !submitted).count();
    if open > 0 {
        return Err(Error::CurationRefused(format!(
            "{name} still has {open} response(s) of case {case_id} to rate; the ground truth \
             would bias them, so it opens when they are submitted"
        )));
    }
    Ok((study_id, case_id, name))
}
