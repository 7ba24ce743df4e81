//! The append-only audit log: who changed what, when, before and after.
//!
//! Each entry's hash is SHA-256 over the previous entry's hash and this entry's fields, so editing
//! or deleting any entry (bypassing the triggers, e.g. with another SQLite client) breaks the chain
//! from that entry on, and [`verify`] names the first broken one.
//!
//! A chain alone cannot show that its tail was cut off, or that someone edited an entry and
//! recomputed every hash after it: the result is again a valid chain. The [`Head`] (the last
//! entry's number and hash, `N:HASH`) kept outside the database — printed by `neurorater audit
//! head`, in every calibration report and by `backup` — is the anchor: [`verify_anchored`] fails
//! unless entry N still exists with that hash.

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

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
    let at = super::now(conn)?;
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
    crate::digest::hex(&hasher.finalize())
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

/// The last entry of the chain, written `N:HASH` (entry number, colon, 64 hex digits). An empty
/// log's head is `0:` followed by [`GENESIS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub entry: i64,
    pub hash: String,
}

impl fmt::Display for Head {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.entry, self.hash)
    }
}

impl FromStr for Head {
    type Err = String;

    fn from_str(text: &str) -> Result<Head, String> {
        let malformed = || {
            format!("{text:?} is not N:HASH (an entry number, a colon and 64 hex digits, as `neurorater audit head` prints it)")
        };
        let (entry, hash) = text.trim().split_once(':').ok_or_else(malformed)?;
        let entry: i64 = entry.parse().map_err(|_| malformed())?;
        if entry < 0 || hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(malformed());
        }
        Ok(Head {
            entry,
            hash: hash.to_ascii_lowercase(),
        })
    }
}

/// The chain's head now.
pub fn head(conn: &Connection) -> rusqlite::Result<Head> {
    Ok(conn
        .query_row(
            "SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1",
            [],
            |row| {
                Ok(Head {
                    entry: row.get(0)?,
                    hash: row.get(1)?,
                })
            },
        )
        .optional()?
        .unwrap_or_else(|| Head {
            entry: 0,
            hash: GENESIS.to_owned(),
        }))
}

/// [`verify`], then, with `expected`, whether that entry still exists with that hash: a log cut
/// short or rewritten (and re-hashed) since the head was written down is broken at that entry.
pub fn verify_anchored(conn: &Connection, expected: Option<&Head>) -> rusqlite::Result<Verdict> {
    let verdict = verify(conn)?;
    let (Verdict::Intact { .. }, Some(expected)) = (&verdict, expected) else {
        return Ok(verdict);
    };
    if expected.entry == 0 {
        // Every log, even an empty one, extends the genesis.
        return Ok(if expected.hash == GENESIS {
            verdict
        } else {
            Verdict::Broken {
                entry_id: 0,
                reason: format!(
                    "the expected head 0:{} is not the genesis hash",
                    expected.hash
                ),
            }
        });
    }
    let stored: Option<String> = conn
        .query_row(
            "SELECT hash FROM audit_log WHERE id = ?1",
            [expected.entry],
            |row| row.get(0),
        )
        .optional()?;
    Ok(match stored {
        None => Verdict::Broken {
            entry_id: expected.entry,
            reason: format!(
                "the expected head {expected} is missing: the log now ends at entry {} (its \
                 tail was removed)",
                head(conn)?.entry
            ),
        },
        Some(hash) if hash != expected.hash => Verdict::Broken {
            entry_id: expected.entry,
            reason: format!(
                "its hash is {hash}, not the expected head's {}: the log was rewritten at or \
                 before this entry and its hashes recomputed",
                expected.hash
            ),
        },
        Some(_) => verdict,
    })
}
