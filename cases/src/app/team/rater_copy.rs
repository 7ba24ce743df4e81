//! A rater's copy of a team study (the account's database, filled from packages the server
//! built) and what it takes from the server as it is read: each time the app opens the study and
//! on the sync worker's passes, the app reads the rater's membership and queue there and hands
//! them to [`learn_from_server`]. What it learns is kept here, so the reading item and the local
//! rules (reopen, reveal) apply it without asking the server, offline too:
//! - the study lead's lock of the ground truth (`team_server_word.reveal_locked`);
//! - reveals made from another computer, recorded as a reveal here is
//!   (`curation::reveal::record_server_reveal`), so the reopen rule holds alike;
//! - whether the lead moved the server's rubric on ([`follow_server_rubric`] then takes it,
//!   so the rating rules applied before sending are the ones the server checks);
//! - whether the lead added items to the rater's queue there (the app then fetches them).

use super::super::ReaderSession;
use super::wire::{Membership, QueueEntry};
use crate::model::Rubric;
use crate::rating::RatingError;
use crate::rubric::SavedRubric;
use crate::store::audit::Entry;
use crate::store::{Store, Write, NOW_SQL};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::BTreeSet;

/// Who the audit entries of what the server decided name: the lead decided it there.
const TEAM_SERVER: &str = "team server";

/// What one reading of the server changed here, or asks of the app.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerNews {
    /// The study lead's lock changed: `true` now closed, `false` opened again.
    pub lock_changed: Option<bool>,
    /// Reveals the server holds (made from another computer) newly recorded here.
    pub reveals_recorded: u32,
    /// Items of the rater's queue on the server this database lacks: the lead topped it up.
    pub items_missing: u32,
    /// The server's current rubric version, when it is not the one this computer last took (the
    /// sync worker then takes it, and tells the window only when that changed the rubric here).
    pub rubric_behind: Option<u32>,
}

/// Takes in what the server says of the reader's study `study_id`: their `membership` there and
/// their `queue`. One transaction; repeated with the same answer, it changes nothing.
pub fn learn_from_server(
    store: &mut Store,
    reader: &ReaderSession,
    study_id: &str,
    membership: &Membership,
    queue: &[QueueEntry],
) -> Result<ServerNews> {
    let links = read_from_server(store, study_id)?;
    let items_missing = missing(&links, queue);
    let rater = reader.rater.id;
    store.write(|w| {
        let before = word(w, study_id)?;
        let lock_changed = (before.as_ref().map(|b| b.reveal_locked)
            != Some(membership.reveal_locked))
        .then_some(membership.reveal_locked)
        // A first reading that finds the study open is no change to tell.
        .filter(|locked| *locked || before.is_some());
        w.tx()
            .execute(
                &format!(
                    "INSERT INTO team_server_word (study_id, reveal_locked, learned_at)
                     VALUES (?1, ?2, {NOW_SQL})
                     ON CONFLICT (study_id) DO UPDATE SET reveal_locked = excluded.reveal_locked,
                         learned_at = excluded.learned_at"
                ),
                params![study_id, membership.reveal_locked],
            )
            .map_err(|e| w.fail("recording what the team server said", e))?;
        if let Some(locked) = lock_changed {
            w.audit(&Entry {
                actor: TEAM_SERVER,
                action: "team.reveal_lock",
                entity: &format!("study:{study_id}"),
                before: None,
                after: Some(&serde_json::json!({ "reveal_locked": locked })),
            })?;
        }
        let mut reveals_recorded = 0;
        for entry in queue.iter().filter(|e| e.revealed_at.is_some()) {
            let Some(link) = links
                .iter()
                .find(|l| l.server_assignment == entry.assignment)
            else {
                continue;
            };
            if crate::curation::reveal::record_server_reveal(w, rater, link.assignment, None)? {
                reveals_recorded += 1;
            }
        }
        let rubric_behind = membership.rubric_version.filter(|server| {
            before.as_ref().and_then(|b| b.server_rubric_version) != Some(*server)
        });
        Ok(ServerNews {
            lock_changed,
            reveals_recorded,
            items_missing,
            rubric_behind,
        })
    })
}

/// How many items of the rater's `queue` on the server the study `study_id` here lacks: the lead
/// topped the queue up since the last download.
pub fn items_missing(store: &Store, study_id: &str, queue: &[QueueEntry]) -> Result<u32> {
    Ok(missing(
        &crate::package::server_links(store, study_id)?,
        queue,
    ))
}

fn missing(links: &[crate::package::AssignmentLink], queue: &[QueueEntry]) -> u32 {
    let held: BTreeSet<i64> = links.iter().map(|l| l.server_assignment).collect();
    queue
        .iter()
        .filter(|entry| !held.contains(&entry.assignment))
        .count() as u32
}

/// Makes `server` (the rubric the server sends with the reader's items: its current version,
/// `server_version` when the server said which) the study's rubric in this database, by the one
/// rule (`crate::rubric::save`: in place while no rating was saved here under the current one, a
/// new version after, so a rating already made keeps the rubric it was made under), audited as
/// the team server's change. Only for a study read here from packages the team server built;
/// `None` when it is the rubric held.
pub fn follow_server_rubric(
    store: &mut Store,
    _reader: &ReaderSession,
    study_id: &str,
    server: &Rubric,
    server_version: Option<u32>,
) -> Result<Option<SavedRubric>> {
    read_from_server(store, study_id)?;
    let problems = crate::rubric::problems(server);
    if let Some(problem) = problems.first() {
        return Err(Error::Corrupt {
            what: format!("the team server's rubric of study {study_id}: {problem}"),
        });
    }
    store.write(|w| {
        let saved = crate::rubric::save(w, TEAM_SERVER, study_id, server)?;
        if let Some(version) = server_version {
            w.tx()
                .execute(
                    &format!(
                        "INSERT INTO team_server_word
                             (study_id, reveal_locked, server_rubric_version, learned_at)
                         VALUES (?1, 0, ?2, {NOW_SQL})
                         ON CONFLICT (study_id) DO UPDATE
                             SET server_rubric_version = excluded.server_rubric_version"
                    ),
                    params![study_id, version],
                )
                .map_err(|e| w.fail("recording the team server's rubric version", e))?;
        }
        Ok(saved)
    })
}

/// The study's links to the server; refused for a study not read here from the team server.
fn read_from_server(store: &Store, study_id: &str) -> Result<Vec<crate::package::AssignmentLink>> {
    let links = crate::package::server_links(store, study_id)?;
    if links.is_empty() {
        return Err(Error::Rating(RatingError::Refused(format!(
            "study {study_id} was not read here from the team server: its rubric, locks and \
             queue are this database's own"
        ))));
    }
    Ok(links)
}

struct Word {
    reveal_locked: bool,
    server_rubric_version: Option<u32>,
}

fn word(w: &Write<'_>, study_id: &str) -> Result<Option<Word>> {
    w.tx()
        .query_row(
            "SELECT reveal_locked, server_rubric_version FROM team_server_word
             WHERE study_id = ?1",
            [study_id],
            |r| {
                Ok(Word {
                    reveal_locked: r.get(0)?,
                    server_rubric_version: r.get(1)?,
                })
            },
        )
        .optional()
        .map_err(|e| w.fail("reading what the team server last said", e))
}
