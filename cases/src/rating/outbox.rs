//! The team server's outbox (issue 16, docs/team-server.md "The desktop app against a server"):
//! every local edit of an assignment that came from a package the team server built is queued
//! here **in the transaction that writes it** (`edits.rs` calls [`enqueue`]), so a rater's work
//! and its way to the server are stored together or not at all. The app's sync worker
//! (`teamclient::sync`) sends the rows in their local order, one at a time, and records each
//! acknowledgement on its row, which is kept for audit.
//!
//! Each row holds its own `edit_id` (random, made once here: a resend after a crash between
//! sending and recording is stored once by the server) and the edit as the server takes it
//! (`cases::rating::TeamEdit`: the whole rating state for a save or a label change; submit;
//! reopen). The version an edit starts from is the server's version of the link's last
//! acknowledged edit (0 before the first). A refusal (409 `conflict`: someone else's newer
//! version) stops that assignment's queue: its rows stay unsent, the local rating untouched,
//! until the rater settles it ([`resolve`]: the server's rating kept, or this one sent over it;
//! the rows taken out are kept whole in `team_resolutions`, whose version is then the base).
//! A reveal is sent once every edit of its item is on the server ([`reveal_delivery`]) and
//! recorded as a sent row ([`record_reveal`]).

use super::reading::{stored_rating, ErrorLabelView, RatingView};
use super::table::{self, ReadKey, WholeRating};
use super::{assignment_not_found, own_assignment, refused, RatingStatus};
use super::{edits_to_reach, TeamEdit, TeamRating, TeamRatingState};
use crate::store::audit::Entry;
use crate::store::{Store, Write, NOW_SQL};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// What a local edit sends: the rating's whole state after a save or a label change, or the
/// status change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outgoing {
    State,
    Submit,
    Reopen,
}

/// Queues the edit just written to local `assignment` (whose rating is now `after`) when the
/// assignment came from a package the team server built; does nothing for any other. Runs in
/// the edit's own transaction.
pub(crate) fn enqueue(
    w: &Write<'_>,
    assignment: i64,
    after: &RatingView,
    outgoing: Outgoing,
) -> Result<()> {
    let link: Option<(String, i64)> = w
        .tx()
        .query_row(
            "SELECT s.study_id, i.server_assignment
             FROM rater_package_items i JOIN rater_packages p ON i.package = p.id
             JOIN studies s ON p.study = s.id
             WHERE i.assignment = ?1 AND p.direction = 'imported'
               AND i.server_assignment IS NOT NULL",
            [assignment],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| w.fail("finding the assignment's team server link", e))?;
    let Some((study_id, server_assignment)) = link else {
        return Ok(());
    };
    let edit = match outgoing {
        Outgoing::State => TeamEdit::Save {
            rating: state_of(after),
        },
        Outgoing::Submit => TeamEdit::Submit,
        Outgoing::Reopen => TeamEdit::Reopen,
    };
    queue(w, assignment, &study_id, server_assignment, &edit)
}

/// Adds `edit` of local `assignment` (server assignment `server_assignment` of `study_id`) to
/// the end of the outbox, with an edit id of its own.
fn queue(
    w: &Write<'_>,
    assignment: i64,
    study_id: &str,
    server_assignment: i64,
    edit: &TeamEdit,
) -> Result<()> {
    let edit_json = serde_json::to_string(edit).expect("an edit serialises");
    w.tx()
        .execute(
            &format!(
                "INSERT INTO team_outbox
                     (assignment, study_id, server_assignment, edit_id, edit_json, queued_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, {NOW_SQL})"
            ),
            params![
                assignment,
                study_id,
                server_assignment,
                uuid::Uuid::new_v4().to_string(),
                edit_json
            ],
        )
        .map_err(|e| w.fail("queueing the edit for the team server", e))?;
    Ok(())
}

/// A local rating as the server takes it: its scores and labels.
fn state_of(rating: &RatingView) -> TeamRatingState {
    TeamRatingState {
        scores: rating.scores(),
        labels: rating.labels.iter().map(ErrorLabelView::edit).collect(),
    }
}

/// One queued edit, ready to send as `POST /api/studies/{study_id}/items/{server_assignment}/edits`.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEdit {
    /// The row: its local order, and what [`mark_sent`] and [`mark_stopped`] name.
    pub row: i64,
    pub study_id: String,
    pub server_assignment: i64,
    pub edit_id: String,
    /// The server's version after this link's last acknowledged edit; 0 before the first.
    pub base_version: i64,
    pub edit: TeamEdit,
}

/// The oldest unsent edit whose assignment's queue is not stopped, if any. Sending one at a
/// time, oldest first, keeps every assignment's edits in their order.
pub fn next_to_send(store: &Store) -> Result<Option<OutboxEdit>> {
    let found = store
        .read()
        .query_row(
            &format!(
                "SELECT o.id, o.study_id, o.server_assignment, o.edit_id, o.edit_json, {}
             FROM team_outbox o
             WHERE o.sent_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM team_outbox x
                               WHERE x.study_id = o.study_id
                                 AND x.server_assignment = o.server_assignment
                                 AND x.sent_at IS NULL AND x.stopped IS NOT NULL)
             ORDER BY o.id LIMIT 1",
                base_version_sql("o.study_id", "o.server_assignment")
            ),
            [],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            },
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "reading the team server outbox", e))?;
    let Some((row, study_id, server_assignment, edit_id, edit_json, base_version)) = found else {
        return Ok(None);
    };
    let edit = serde_json::from_str(&edit_json).map_err(|e| Error::Corrupt {
        what: format!("team server outbox row {row}: {e}"),
    })?;
    Ok(Some(OutboxEdit {
        row,
        study_id,
        server_assignment,
        edit_id,
        base_version,
        edit,
    }))
}

/// The server's version of a link's rating after its last acknowledged edit (or the version a
/// conflict was resolved against, if later), 0 before the first (an SQL expression over the link's `study` and `server_assignment` columns): the
/// `base_version` of the link's next edit.
fn base_version_sql(study: &str, server_assignment: &str) -> String {
    // Versions only grow on the server: the latest is the greatest, whether an acknowledgement
    // or a conflict's resolution ([`resolve`]) recorded it.
    format!(
        "max(coalesce((SELECT max(s.server_version) FROM team_outbox s
                       WHERE s.study_id = {study} AND s.server_assignment = {server_assignment}
                         AND s.sent_at IS NOT NULL), 0),
             coalesce((SELECT max(r.server_version) FROM team_resolutions r
                       WHERE r.study_id = {study} AND r.server_assignment = {server_assignment}),
                      0))"
    )
}

/// Records the server's acknowledgement of `row`: stored there, `server_version` its version
/// after the edit. The row stays, for audit.
pub fn mark_sent(store: &mut Store, row: i64, server_version: i64) -> Result<()> {
    store.write(|w| {
        w.tx()
            .execute(
                &format!(
                    "UPDATE team_outbox SET sent_at = {NOW_SQL}, server_version = ?2
                     WHERE id = ?1 AND sent_at IS NULL"
                ),
                params![row, server_version],
            )
            .map_err(|e| w.fail("recording the server's acknowledgement", e))?;
        Ok(())
    })
}

/// The server refused `row` for good (someone else's newer version, or a state it forbids):
/// its assignment's queue stops with `reason`, nothing more of it is sent, the local rating
/// stays as the rater left it.
pub fn mark_stopped(store: &mut Store, row: i64, reason: &str) -> Result<()> {
    store.write(|w| {
        w.tx()
            .execute(
                "UPDATE team_outbox SET stopped = ?2 WHERE id = ?1 AND sent_at IS NULL",
                params![row, reason],
            )
            .map_err(|e| w.fail("stopping an assignment's queue", e))?;
        Ok(())
    })
}

/// What the reading screen says about the outbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OutboxStatus {
    /// Edits saved here and not yet on the server, stopped queues apart.
    pub waiting: u32,
    /// Assignments whose queue the server stopped, with why.
    pub stopped: Vec<StoppedItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoppedItem {
    pub assignment: i64,
    /// The item's place in the rater's queue (1-based).
    pub position: u32,
    /// Edits of this item kept here and not sent.
    pub kept: u32,
    pub reason: String,
}

pub fn status(store: &Store) -> Result<OutboxStatus> {
    let fail = |e| Error::database(store.path(), "reading the team server outbox", e);
    let conn = store.read();
    let waiting: u32 = conn
        .query_row(
            "SELECT count(*) FROM team_outbox o
             WHERE o.sent_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM team_outbox x
                               WHERE x.study_id = o.study_id
                                 AND x.server_assignment = o.server_assignment
                                 AND x.sent_at IS NULL AND x.stopped IS NOT NULL)",
            [],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let mut stmt = conn
        .prepare(
            "SELECT x.assignment, a.position, x.stopped,
                    (SELECT count(*) FROM team_outbox k
                     WHERE k.study_id = x.study_id AND k.server_assignment = x.server_assignment
                       AND k.sent_at IS NULL)
             FROM team_outbox x JOIN assignments a ON a.id = x.assignment
             WHERE x.sent_at IS NULL AND x.stopped IS NOT NULL
             ORDER BY a.position",
        )
        .map_err(fail)?;
    let stopped = stmt
        .query_map([], |r| {
            Ok(StoppedItem {
                assignment: r.get(0)?,
                position: r.get(1)?,
                reason: r.get(2)?,
                kept: r.get(3)?,
            })
        })
        .map_err(fail)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(fail)?;
    Ok(OutboxStatus { waiting, stopped })
}

/// Where an item's edits stand before its ground truth is asked of the server, which shows it
/// only for a rating it holds as submitted.
#[derive(Debug, Clone, PartialEq)]
pub enum RevealDelivery {
    /// Every edit of the item is on the server: the reveal goes as this edit.
    Ready(RevealEdit),
    /// `waiting` edits of the item (its submit among them) are still on this computer.
    Waiting { waiting: u32 },
    /// The server refused an edit of the item: its queue stopped, with why.
    Stopped { reason: String },
}

/// The reveal of one item, ready to send as `POST …/items/{server_assignment}/edits`.
#[derive(Debug, Clone, PartialEq)]
pub struct RevealEdit {
    pub study_id: String,
    pub server_assignment: i64,
    /// Derived from the item and its base version, not drawn: a reveal resent after its
    /// acknowledgement was lost is the same edit, stored once.
    pub edit_id: String,
    pub base_version: i64,
}

/// Whether local `assignment`'s edits are all on the server, so its reveal can be sent; `None`
/// for an assignment no server-built package linked.
pub fn reveal_delivery(store: &Store, assignment: i64) -> Result<Option<RevealDelivery>> {
    let Some(link) = crate::package::server_link(store, assignment)? else {
        return Ok(None);
    };
    let fail = |e| Error::database(store.path(), "reading the team server outbox", e);
    let (waiting, stopped, base_version): (u32, Option<String>, i64) = store
        .read()
        .query_row(
            &format!(
                "SELECT (SELECT count(*) FROM team_outbox o
                         WHERE o.study_id = ?1 AND o.server_assignment = ?2
                           AND o.sent_at IS NULL),
                        (SELECT o.stopped FROM team_outbox o
                         WHERE o.study_id = ?1 AND o.server_assignment = ?2
                           AND o.sent_at IS NULL AND o.stopped IS NOT NULL
                         ORDER BY o.id LIMIT 1),
                        {}",
                base_version_sql("?1", "?2")
            ),
            params![link.study_id, link.server_assignment],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(fail)?;
    Ok(Some(match (stopped, waiting) {
        (Some(reason), _) => RevealDelivery::Stopped { reason },
        (None, 0) => {
            let digest = crate::digest::sha256_hex(
                format!(
                    "{}\0{}\0{base_version}\0reveal",
                    link.package_id, link.server_assignment
                )
                .as_bytes(),
            );
            RevealDelivery::Ready(RevealEdit {
                study_id: link.study_id,
                server_assignment: link.server_assignment,
                edit_id: format!("reveal-{}", &digest[..40]),
                base_version,
            })
        }
        (None, waiting) => RevealDelivery::Waiting { waiting },
    }))
}

/// Records the server's acknowledgement of `edit`, the reveal of local `assignment`, as a sent
/// row of the outbox (the next edit of the item starts from `server_version`). Recording it
/// again changes nothing.
pub fn record_reveal(
    store: &mut Store,
    assignment: i64,
    edit: &RevealEdit,
    server_version: i64,
) -> Result<()> {
    let edit_json = serde_json::to_string(&TeamEdit::Reveal).expect("an edit serialises");
    store.write(|w| {
        w.tx()
            .execute(
                &format!(
                    "INSERT INTO team_outbox
                         (assignment, study_id, server_assignment, edit_id, edit_json, queued_at,
                          sent_at, server_version)
                     VALUES (?1, ?2, ?3, ?4, ?5, {NOW_SQL}, {NOW_SQL}, ?6)
                     ON CONFLICT (edit_id) DO NOTHING"
                ),
                params![
                    assignment,
                    edit.study_id,
                    edit.server_assignment,
                    edit.edit_id,
                    edit_json,
                    server_version
                ],
            )
            .map_err(|e| w.fail("recording the reveal the server acknowledged", e))?;
        Ok(())
    })
}

/// How the rater resolves an item whose queue the server stopped (someone — they, on another
/// computer — changed it on the server since this computer last sent it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The server's rating becomes the local one; the edits kept here are discarded (recorded
    /// in `team_resolutions` and the audit log, not sent).
    KeepServer,
    /// The local rating is sent over the server's: the edits kept here are replaced by those
    /// that bring the server's current version to it, which the outbox then sends.
    SendMine,
}

impl Resolution {
    fn as_str(self) -> &'static str {
        match self {
            Resolution::KeepServer => "keep_server",
            Resolution::SendMine => "send_mine",
        }
    }
}

/// An unsent edit taken out of the outbox by a resolution, as it was queued.
#[derive(Debug, Serialize)]
struct Discarded {
    edit_id: String,
    edit: serde_json::Value,
    queued_at: String,
    /// Why the server refused it (the edit that stopped the queue), if it was that one.
    stopped: Option<String>,
}

/// Resolves `rater`'s stopped item `assignment` against `server`, the server's current rating
/// of it, in one transaction: every unsent edit of the item leaves the outbox, recorded whole in
/// `team_resolutions` and the audit entry; then either the server's rating (scores, labels,
/// status) replaces the local one ([`Resolution::KeepServer`]) or the edits that bring the
/// server's version to the local rating are queued, starting from that version
/// ([`Resolution::SendMine`]). Refused unless the item's queue is stopped.
///
/// A reveal the server recorded for the item (`server.revealed_at`; made from another computer)
/// is kept with the server's rating: recorded here as a reveal here is, with
/// `ground_truth_version`, the version the server's item names (`RaterItem::ground_truth_version`),
/// so the rating stays locked against reopening on this computer too.
pub fn resolve(
    store: &mut Store,
    rater: i64,
    assignment: i64,
    resolution: Resolution,
    server: &TeamRating,
    ground_truth_version: Option<i64>,
) -> Result<()> {
    let actor = store.rater(rater)?.name;
    let own = own_assignment(store.read(), rater, assignment)
        .map_err(|e| Error::database(store.path(), "reading an assignment", e))?
        .ok_or_else(|| assignment_not_found(assignment))?;
    let link = crate::package::server_link(store, assignment)?
        .ok_or_else(|| assignment_not_found(assignment))?;
    store.write(|w| {
        let w: &Write<'_> = w;
        let tx = w.tx();
        let fail = |doing: &'static str| move |e| w.fail(doing, e);
        let unsent: Vec<Discarded> = tx
            .prepare(
                "SELECT edit_id, edit_json, queued_at, stopped FROM team_outbox
                 WHERE study_id = ?1 AND server_assignment = ?2 AND sent_at IS NULL
                 ORDER BY id",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![link.study_id, link.server_assignment], |r| {
                    let edit: String = r.get(1)?;
                    Ok(Discarded {
                        edit_id: r.get(0)?,
                        edit: serde_json::from_str(&edit)
                            .unwrap_or(serde_json::Value::String(edit)),
                        queued_at: r.get(2)?,
                        stopped: r.get(3)?,
                    })
                })?
                .collect()
            })
            .map_err(fail("reading the item's unsent edits"))?;
        if !unsent.iter().any(|d| d.stopped.is_some()) {
            return Err(refused(
                "nothing to resolve: the server has refused no change of this item",
            ));
        }
        let discarded = serde_json::to_value(&unsent).expect("edits serialise");
        tx.execute(
            "DELETE FROM team_outbox
             WHERE study_id = ?1 AND server_assignment = ?2 AND sent_at IS NULL",
            params![link.study_id, link.server_assignment],
        )
        .map_err(fail("taking the item's edits out of the outbox"))?;
        tx.execute(
            &format!(
                "INSERT INTO team_resolutions (assignment, study_id, server_assignment,
                     resolution, server_version, discarded_json, resolved_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, {NOW_SQL})"
            ),
            params![
                assignment,
                link.study_id,
                link.server_assignment,
                resolution.as_str(),
                server.version,
                discarded.to_string()
            ],
        )
        .map_err(fail("recording the resolution"))?;
        let local = stored_rating(tx, rater, own.response, own.read_no)
            .map_err(fail("reading the local rating"))?;
        match resolution {
            Resolution::KeepServer => {
                let whole = WholeRating {
                    scores: &server.state.scores,
                    status: server.status,
                    updated_at: &server.updated_at,
                    submitted_at: (server.status == RatingStatus::Submitted)
                        .then_some(server.updated_at.as_str()),
                    // This database's numbering is its own (the package's rubric is its
                    // version 1): the current one.
                    rubric_version: None,
                };
                let rating = match &local {
                    Some((id, _)) => {
                        table::replace_whole(tx, *id, &whole)
                            .map_err(fail("replacing the local rating"))?;
                        *id
                    }
                    None => {
                        let key = ReadKey {
                            response: own.response,
                            rater,
                            read_no: own.read_no,
                        };
                        table::insert_whole(tx, key, &whole)
                            .map_err(fail("adding the server's rating"))?
                    }
                };
                for label in &server.state.labels {
                    table::insert_label(tx, rating, label)
                        .map_err(fail("adding the server's error labels"))?;
                }
                let (_, after) = stored_rating(tx, rater, own.response, own.read_no)
                    .map_err(fail("reading the rating back"))?
                    .ok_or_else(|| Error::Corrupt {
                        what: format!("rating {rating} vanished while being replaced"),
                    })?;
                if server.revealed_at.is_some() {
                    crate::curation::reveal::record_server_reveal(
                        w,
                        rater,
                        assignment,
                        ground_truth_version,
                    )?;
                }
                w.audit(&Entry {
                    actor: &actor,
                    action: "keep the team server's rating",
                    entity: &format!("rating:{rating}"),
                    before: local
                        .map(|(_, view)| serde_json::to_value(view).expect("a rating serialises"))
                        .as_ref(),
                    after: Some(&serde_json::json!({
                        "rating": after,
                        "server_version": server.version,
                        "discarded": discarded,
                    })),
                })
            }
            Resolution::SendMine => {
                let Some((_, view)) = local else {
                    return Err(refused(
                        "there is no rating of this item on this computer to send",
                    ));
                };
                let edits = edits_to_reach(
                    &state_of(&view),
                    view.status == RatingStatus::Submitted,
                    Some(server),
                );
                for edit in &edits {
                    queue(w, assignment, &link.study_id, link.server_assignment, edit)?;
                }
                w.audit(&Entry {
                    actor: &actor,
                    action: "send the local rating over the team server's",
                    entity: &format!("team_outbox:{}/{}", link.study_id, link.server_assignment),
                    before: Some(&serde_json::json!({ "discarded": discarded })),
                    after: Some(&serde_json::json!({
                        "server_version": server.version,
                        "queued": edits,
                    })),
                })
            }
        }
    })
}
