//! A whole rating arriving from elsewhere — a results package, the team server — for one read
//! of the lead's database: the one rule for what may be written (the app's rules, marks inside
//! their volume, never over a rating someone changed here) and the one way it is written (the
//! rating, its labels, the record of where it came from, an audit entry), whoever brought it.

use super::results::{marks_outside_volume, violations, ResultRating};
use crate::rating::table::{self, ReadKey, WholeRating};
use crate::rating::{stored_rating, ResponseContext};
use crate::store::audit::Entry;
use crate::store::{Store, Write};
use crate::Result;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::BTreeMap;

/// The read a rating arrives for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub rater: i64,
    pub response: i64,
    pub read_no: i64,
}

pub(crate) enum Action {
    Add,
    Update { rating: i64, before: ResultRating },
}

/// What to do with an arriving rating, decided against the lead's database.
pub(crate) enum Verdict {
    /// Write it: a new rating, or an update of one an earlier arrival wrote that nobody changed.
    Write(Action),
    /// The same content is stored already.
    Unchanged,
    /// The lead's database holds a different rating for this read that no arrival wrote, or
    /// one changed here after an arrival wrote it: left alone, a conflict.
    EditedHere,
    /// Older than the one an earlier arrival wrote: left alone, a conflict.
    Older,
}

/// One rating to write, with where it came from for the record and the audit entry.
pub(crate) struct Planned {
    pub target: Target,
    pub rating: ResultRating,
    pub action: Action,
    /// Kept in `merged_ratings.results_package`: the results package's id, or the team
    /// server's `team-server:STUDY:ASSIGNMENT`.
    pub source: String,
    /// Who the audit entry names, its verb ("merge rating": the entry says "merge rating
    /// (added)" or "(updated)"), and what it records beside the rating it stored.
    pub actor: String,
    pub verb: &'static str,
    pub provenance: serde_json::Map<String, serde_json::Value>,
    /// The rubric version (this database's numbering) the rating was made under, when the
    /// source says (the team server; a results package, the version its rater package carried);
    /// `None`: the study's current one (a results package answering a package exported before
    /// that was recorded).
    pub rubric_version: Option<u32>,
}

/// The rating of one read with its labels, and its row id.
pub(crate) fn load_rating(
    conn: &Connection,
    target: Target,
) -> rusqlite::Result<Option<(i64, ResultRating)>> {
    Ok(
        stored_rating(conn, target.rater, target.response, target.read_no)?
            .map(|(id, view)| (id, ResultRating::from_view(0, view))),
    )
}

/// The rules an arriving rating breaks, as `(field, message)` pairs (label fields as
/// `labels[<index>].<field>`): the app's rules first, then whether its marks lie inside their
/// volume. `cases` keeps each case's stored geometry between calls.
pub(crate) fn problems(
    store: &Store,
    cases: &mut BTreeMap<i64, crate::curation::CaseContext>,
    context: &ResponseContext,
    rating: &ResultRating,
) -> Result<Vec<(String, String)>> {
    let found = violations(context, rating);
    if !found.is_empty() {
        return Ok(found);
    }
    marks_outside_volume(store, cases, context, rating)
}

/// Whether `rating` may be written for `target`: new, the same, or an update of what an earlier
/// arrival wrote and nobody changed since, else a conflict. `rubric_version` is the version
/// (this database's numbering) the source recorded it under, when the source numbers versions
/// as this database does (the team server, or a results package whose rater package's version
/// was recorded at export): a rating saved again under another version is then a change even
/// with the same content, so it is recorded under the version its rater scored on. `None` (a
/// results package answering an older export): the content alone decides.
pub(crate) fn verdict(
    store: &Store,
    target: Target,
    rating: &ResultRating,
    rubric_version: Option<u32>,
) -> Result<Verdict> {
    let conn = store.read();
    let fail = |doing: &'static str| super::db_fail(store.path(), doing);
    let Some((id, mut here)) = load_rating(conn, target).map_err(fail("reading a rating"))? else {
        return Ok(Verdict::Write(Action::Add));
    };
    // Read only where the source numbers versions as this database does (a results package's
    // rater does not, and its merge compares content alone).
    let stored_version: Option<u32> = rubric_version
        .map(|_| {
            conn.query_row(
                "SELECT rubric_version FROM ratings WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
        })
        .transpose()
        .map_err(fail("reading a rating's rubric version"))?;
    if here.content_sha256() == rating.content_sha256() && rubric_version == stored_version {
        return Ok(Verdict::Unchanged);
    }
    let written: Option<(String, String)> = conn
        .query_row(
            "SELECT content_sha256, remote_updated_at FROM merged_ratings WHERE rating = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(fail("reading what earlier merges wrote"))?;
    // Where the source numbers versions as this database does, the audit entry's `before` says
    // the version the rating was stored under, beside the one `after` records.
    if stored_version.is_some() {
        here.rubric_version = stored_version;
    }
    Ok(match written {
        None => Verdict::EditedHere,
        Some((hash, _)) if hash != here.content_sha256() => Verdict::EditedHere,
        Some((_, remote_updated_at)) if rating.updated_at <= remote_updated_at => Verdict::Older,
        Some(_) => Verdict::Write(Action::Update {
            rating: id,
            before: here,
        }),
    })
}

/// Writes the planned ratings, their labels and the record of where each came from, each with
/// its audit entry, in one transaction.
pub(crate) fn write(store: &mut Store, planned: &[Planned]) -> Result<()> {
    store.write(|w| write_in(w, planned))
}

/// [`write`] inside a transaction the caller holds, for a caller that writes more with it (the
/// team server's pull adds the raters it brings).
pub(crate) fn write_in(w: &Write<'_>, planned: &[Planned]) -> Result<()> {
    let tx = w.tx();
    for plan in planned {
        let r = &plan.rating;
        let scores = r.scores();
        let whole = WholeRating {
            scores: &scores,
            status: r.status,
            updated_at: &r.updated_at,
            submitted_at: r.submitted_at.as_deref(),
            rubric_version: plan.rubric_version,
        };
        let (rating_id, before) = match &plan.action {
            Action::Add => {
                let key = ReadKey {
                    response: plan.target.response,
                    rater: plan.target.rater,
                    read_no: plan.target.read_no,
                };
                let id = table::insert_whole(tx, key, &whole)
                    .map_err(|e| w.fail("adding a merged rating", e))?;
                (id, None)
            }
            Action::Update { rating, before } => {
                table::replace_whole(tx, *rating, &whole)
                    .map_err(|e| w.fail("updating a merged rating", e))?;
                (*rating, Some(before))
            }
        };
        for label in &r.labels {
            table::insert_label(tx, rating_id, &label.edit())
                .map_err(|e| w.fail("adding a merged error label", e))?;
        }
        tx.execute(
            "INSERT INTO merged_ratings (rating, results_package, content_sha256,
                     remote_updated_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (rating) DO UPDATE SET results_package = excluded.results_package,
                     content_sha256 = excluded.content_sha256,
                     remote_updated_at = excluded.remote_updated_at",
            params![rating_id, plan.source, r.content_sha256(), r.updated_at],
        )
        .map_err(|e| w.fail("recording the merge", e))?;
        let mut after = plan.provenance.clone();
        after.insert(
            "rating".into(),
            serde_json::to_value(r).expect("a rating serialises"),
        );
        let action = match plan.action {
            Action::Add => format!("{} (added)", plan.verb),
            Action::Update { .. } => format!("{} (updated)", plan.verb),
        };
        w.audit(&Entry {
            actor: &plan.actor,
            action: &action,
            entity: &format!("rating:{rating_id}"),
            before: before
                .map(|b| serde_json::to_value(b).expect("a rating serialises"))
                .as_ref(),
            after: Some(&serde_json::Value::Object(after)),
        })?;
    }
    Ok(())
}
