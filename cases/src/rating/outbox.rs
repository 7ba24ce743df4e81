//! The team server's outbox (issue 16, docs/team-server.md "The desktop app against a server"):
//! every local edit of an assignment that came from a package the team server built is queued
//! here **in the transaction that writes it** (`edits.rs` calls [`enqueue`]), so a rater's work
//! and its way to the server are stored together or not at all. The app's sync worker
//! (`teamclient::sync`) sends the rows in their local order, one at a time, and records each
//! acknowledgement on its row, which is kept for audit.
//!
//! Each row holds its own `edit_id` (random, made once here: a resend after a crash between
//! sending and recording is stored once by the server) and the edit as the server takes it
//! (`cases::app::team::TeamEdit`: the whole rating state for a save or a label change; submit;
//! reopen). The version an edit starts from is the server's version of the link's last
//! acknowledged edit (0 before the first). A refusal (409 `conflict`: someone else's newer
//! version) stops that assignment's queue: its rows stay unsent, the local rating untouched.

use super::reading::{ErrorLabelView, RatingView};
use crate::app::team::{TeamEdit, TeamRatingState};
use crate::store::{Store, Write, NOW_SQL};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

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
            rating: TeamRatingState {
                scores: after.scores(),
                labels: after.labels.iter().map(ErrorLabelView::edit).collect(),
            },
        },
        Outgoing::Submit => TeamEdit::Submit,
        Outgoing::Reopen => TeamEdit::Reopen,
    };
    let edit_json = serde_json::to_string(&edit).expect("an edit serialises");
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
            "SELECT o.id, o.study_id, o.server_assignment, o.edit_id, o.edit_json,
                    coalesce((SELECT s.server_version FROM team_outbox s
                              WHERE s.study_id = o.study_id
                                AND s.server_assignment = o.server_assignment
                                AND s.sent_at IS NOT NULL
                              ORDER BY s.id DESC LIMIT 1), 0)
             FROM team_outbox o
             WHERE o.sent_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM team_outbox x
                               WHERE x.study_id = o.study_id
                                 AND x.server_assignment = o.server_assignment
                                 AND x.sent_at IS NULL AND x.stopped IS NOT NULL)
             ORDER BY o.id LIMIT 1",
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
