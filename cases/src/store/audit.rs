//! The append-only audit log: who changed what, when, before and after.
//!
//! Each entry's hash is SHA-256 over the previous entry's hash and this entry's fields, so editing
//! or deleting any entry (bypassing the triggers, e.g. with another SQLite client) breaks the chain
//! from that entry on, and [`verify`] names the first broken one.

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

/// The hash the first entry chains to.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

pub struct Entry<'a> {
    pub actor: &'a str,
    pub action: &'a str,
    /// What was changed, e.g. `rating:42` or `study:demo-neuro`.
    pub entity: &'a str,
    pub before: Option<&'a serde_json::Value>,
    pub after: Option<&'a serde_json::Value>,
}

pub(crate) fn append(conn: &Connection, entry: &Entry<'_>) -> rusqlite::Result<()> {
    let prev_hash: String = conn
        .query_row(
            "SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or_else(|| GENESIS.to_owned());
    let at: String = conn.query_row("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", [], |row| {
        row.get(0)
    })?;
    let before = entry.before.map(|v| v.to_string());
    let after = entry.after.map(|v| v.to_string());
    let hash = entry_hash(
        &prev_hash,
        &at,
        entry.actor,
        entry.action,
        entry.entity,
        before.as_deref(),
        after.as_deref(),
    );
    conn.execute(
        "INSERT INTO audit_log (at, actor, action, entity, before_json, after_json, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            at,
            entry.actor,
            entry.action,
            entry.entity,
            before,
            after,
            prev_hash,
            hash
        ],
    )?;
    Ok(())
}

fn entry_hash(
    prev_hash: &str,
    at: &str,
    actor: &str,
    action: &str,
    entity: &str,
    before: Option<&str>,
    after: Option<&str>,
) -> String {
    let mut hasher = Sha256::new();
    // Length-prefix every field so that moving bytes between fields changes the hash.
    for field in [
        Some(prev_hash),
        Some(at),
        Some(actor),
        Some(action),
        Some(entity),
        before,
        after,
    ] {
        match field {
            Some(text) => {
                hasher.update((text.len() as u64).to_le_bytes());
                hasher.update(text.as_bytes());
            }
            None => hasher.update(u64::MAX.to_le_bytes()),
        }
    }
    hex(&hasher.finalize())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What [`verify`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Intact {
        entries: u64,
    },
    /// The first entry whose stored hashes do not match its content or its predecessor.
    Broken {
        entry_id: i64,
        reason: String,
    },
}

pub fn verify(conn: &Connection) -> rusqlite::Result<Verdict> {
    let mut stmt = conn.prepare(
        "SELECT id, at, actor, action, entity, before_json, after_json, prev_hash, hash
         FROM audit_log ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    let mut expected_prev = GENESIS.to_owned();
    let mut entries = 0;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let prev_hash: String = row.get(7)?;
        let hash: String = row.get(8)?;
        if prev_hash != expected_prev {
            return Ok(Verdict::Broken {
                entry_id: id,
                reason: "its link to the previous entry does not match (an entry before it was \
                         removed or changed)"
                    .into(),
            });
        }
        let before: Option<String> = row.get(5)?;
        let after: Option<String> = row.get(6)?;
        let recomputed = entry_hash(
            &prev_hash,
            &row.get::<_, String>(1)?,
            &row.get::<_, String>(2)?,
            &row.get::<_, String>(3)?,
            &row.get::<_, String>(4)?,
            before.as_deref(),
            after.as_deref(),
        );
        if recomputed != hash {
            return Ok(Verdict::Broken {
                entry_id: id,
                reason: "its content does not match its hash (the entry was edited)".into(),
            });
        }
        expected_prev = hash;
        entries += 1;
    }
    Ok(Verdict::Intact { entries })
}
