//! Where an assignment read from a package the team server built lives on the server.
//!
//! A rater in server mode reads offline from a rater package the server built (its items name
//! their `server_assignment`, recorded at import) and sends each saved edit to the server's edit
//! endpoint for that assignment. These reads answer "where does this edit go".

use crate::store::Store;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

/// The team server's name of one local assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerLink {
    /// The study on the server (the package's `study_id`, the same on both sides).
    pub study_id: String,
    /// The server's assignment id: `/api/studies/{study_id}/items/{server_assignment}`.
    pub server_assignment: i64,
    /// The rater package the assignment came from.
    pub package_id: String,
}

/// One local assignment and the server assignment it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AssignmentLink {
    pub assignment: i64,
    pub server_assignment: i64,
}

/// The server assignment behind local `assignment`, if it was imported from a package the team
/// server built; `None` for an assignment made here or from a local lead's package.
pub fn server_link(store: &Store, assignment: i64) -> Result<Option<ServerLink>> {
    store
        .read()
        .query_row(
            "SELECT s.study_id, i.server_assignment, p.package_id
             FROM rater_package_items i JOIN rater_packages p ON i.package = p.id
             JOIN studies s ON p.study = s.id
             WHERE i.assignment = ?1 AND p.direction = 'imported'
               AND i.server_assignment IS NOT NULL",
            params![assignment],
            |r| {
                Ok(ServerLink {
                    study_id: r.get(0)?,
                    server_assignment: r.get(1)?,
                    package_id: r.get(2)?,
                })
            },
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "finding an assignment's server link", e))
}

/// Every assignment of `study_id` imported from a package the team server built, with its server
/// assignment, in local assignment order.
pub fn server_links(store: &Store, study_id: &str) -> Result<Vec<AssignmentLink>> {
    let fail = |e| Error::database(store.path(), "listing the study's server links", e);
    let conn = store.read();
    let mut stmt = conn
        .prepare(
            "SELECT i.assignment, i.server_assignment
             FROM rater_package_items i JOIN rater_packages p ON i.package = p.id
             JOIN studies s ON p.study = s.id
             WHERE s.study_id = ?1 AND p.direction = 'imported'
               AND i.server_assignment IS NOT NULL
             ORDER BY i.assignment",
        )
        .map_err(fail)?;
    let links = stmt
        .query_map([study_id], |r| {
            Ok(AssignmentLink {
                assignment: r.get(0)?,
                server_assignment: r.get(1)?,
            })
        })
        .map_err(fail)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(fail)?;
    Ok(links)
}
