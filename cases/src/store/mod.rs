//! The SQLite store: one file holds a study's cases, responses, grader scores and every rater's
//! work. Images stay where the bundle put them and are referenced by path and content hash.
//!
//! Reads go through [`Store::read`] (a plain connection); every change goes through
//! [`Store::write`], which opens one transaction and appends to the audit log in it, so no code
//! path can change data without leaving a trace or half-writing.

pub mod audit;
mod backup;
mod catalog;
pub(crate) use catalog::{enum_column, enum_text, parse_enum};
pub(crate) mod geometry;
pub use geometry::geometry_from_files;
pub mod migrations;
pub mod outputs;

pub use backup::{restore, rotated_backups, AutoBackup, RotatedBackup, AUTOMATIC_BACKUP_DIR};
pub use catalog::{
    CaseSummary, CaseView, ResponseView, SeriesFile, SeriesFiles, SeriesView, StudySummary,
    TaskView,
};

use crate::{Error, Result};
use rusqlite::{Connection, OpenFlags, Transaction};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The environment variable that overrides the default database file.
pub const DB_ENV: &str = "NEURORATER_DB";

/// The current time as stored everywhere (UTC, milliseconds), from SQLite so that one clock
/// stamps ratings, audit entries and packages alike. The one spelling of it.
pub const NOW_SQL: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// [`NOW_SQL`] read on `conn` (inside a transaction, the time its statements stamp).
pub fn now(conn: &Connection) -> rusqlite::Result<String> {
    conn.query_row(&format!("SELECT {NOW_SQL}"), [], |row| row.get(0))
}

/// A study's own row, where every read of a whole study starts.
pub(crate) struct StudyRow {
    pub key: i64,
    pub title: String,
    pub description: String,
    pub rubric_json: String,
    pub taxonomy_json: String,
    /// Where its bundle (and so its images) lies.
    pub bundle_dir: std::path::PathBuf,
}

/// `study_id`'s row, or "not found" naming it.
pub(crate) fn study_row(store: &Store, study_id: &str) -> Result<StudyRow> {
    use rusqlite::OptionalExtension;
    store
        .read()
        .query_row(
            "SELECT id, title, description, rubric_json, taxonomy_json, bundle_dir FROM studies
             WHERE study_id = ?1",
            [study_id],
            |r| {
                Ok(StudyRow {
                    key: r.get(0)?,
                    title: r.get(1)?,
                    description: r.get(2)?,
                    rubric_json: r.get(3)?,
                    taxonomy_json: r.get(4)?,
                    bundle_dir: std::path::PathBuf::from(r.get::<_, String>(5)?),
                })
            },
        )
        .optional()
        .map_err(|e| crate::Error::database(store.path(), "finding the study", e))?
        .ok_or_else(|| crate::Error::NotFound {
            what: format!("study {study_id:?}"),
        })
}

/// A study's rubric as stored in `studies.rubric_json` (written from a validated bundle, so a
/// failure here means the file was changed outside NeuroRater). `study` names it in the error.
pub fn stored_rubric(study: &str, json: &str) -> Result<crate::model::Rubric> {
    serde_json::from_str(json).map_err(|e| Error::Corrupt {
        what: format!("the rubric of study {study:?}: {e}"),
    })
}

/// A study's error taxonomy as stored in `studies.taxonomy_json`; see [`stored_rubric`].
pub fn stored_taxonomy(study: &str, json: &str) -> Result<crate::model::Taxonomy> {
    serde_json::from_str(json).map_err(|e| Error::Corrupt {
        what: format!("the error taxonomy of study {study:?}: {e}"),
    })
}

/// How long a writer waits for another (the app and the CLI on one file) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.exists() {
                backup::create_owner_only_dir(parent)?;
            }
        }
        // Created owner-only before SQLite writes a byte: the WAL and shared-memory files SQLite
        // creates beside it copy its permissions (an empty file is a new database to SQLite).
        // Another process (the app and the CLI started together) may create it between the check
        // and the create; its file is as good as ours.
        if !path.exists() {
            match backup::create_owner_only(path) {
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists => {}
                other => other?,
            }
        }
        Store::open_with(path, OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Opens a database that must already exist (a backup to restore, a file named by `--db`
    /// for reading).
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.is_file() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no database file here"),
            });
        }
        Store::open_with(path, OpenFlags::empty())
    }

    fn open_with(path: &Path, extra: OpenFlags) -> Result<Store> {
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra,
        )
        .map_err(|e| Error::database(path, "opening the database", e))?;
        configure(&conn).map_err(|e| Error::database(path, "configuring the connection", e))?;
        let found: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(|e| Error::database(path, "reading the schema version", e))?;
        match migrations::apply(&mut conn)
            .map_err(|e| Error::database(path, "migrating the schema", e))?
        {
            migrations::Applied::UpTo(_) => {}
            migrations::Applied::NewerThanThisBuild { found } => {
                return Err(Error::SchemaTooNew {
                    path: path.to_path_buf(),
                    found,
                    supported: migrations::latest_version(),
                })
            }
        }
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        // Only the process whose migration added the table fills it: the files are read once.
        if found < geometry::since_version() {
            geometry::backfill(&mut store)?;
        }
        Ok(store)
    }

    /// `$NEURORATER_DB` when set, else `neurorater.sqlite` in the platform's data directory
    /// (`~/.local/share/neurorater/` on Linux).
    pub fn default_path() -> Result<PathBuf> {
        if let Some(path) = std::env::var_os(DB_ENV).filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(path));
        }
        let dirs = directories::ProjectDirs::from("org", "NeuroRater", "neurorater")
            .ok_or(Error::NoDataDirectory)?;
        Ok(dirs.data_dir().join("neurorater.sqlite"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The read side: queries only (see `catalog.rs` for the typed ones).
    pub fn read(&self) -> &Connection {
        &self.conn
    }

    /// The write side: runs `change` in one transaction, committed only if it returns `Ok`.
    pub fn write<T>(&mut self, change: impl FnOnce(&mut Write<'_>) -> Result<T>) -> Result<T> {
        let path = self.path.clone();
        // IMMEDIATE takes the write lock up front, waiting up to BUSY_TIMEOUT for another
        // process; a deferred transaction that reads first fails at once with "database is
        // locked" when another process wrote since its read began (WAL snapshot rule).
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| Error::database(&path, "starting a write", e))?;
        let mut write = Write { tx, path: &path };
        let value = change(&mut write)?;
        write
            .tx
            .commit()
            .map_err(|e| Error::database(&path, "committing a write", e))?;
        Ok(value)
    }

    /// Restoring overwrites every page; nothing else may hold the connection meanwhile.
    fn connection_for_restore(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Whether any study has been imported (the app imports the demo into an empty store).
    pub fn is_empty(&self) -> Result<bool> {
        let count: i64 = self
            .conn
            .query_row("SELECT count(*) FROM studies", [], |row| row.get(0))
            .map_err(|e| Error::database(&self.path, "counting studies", e))?;
        Ok(count == 0)
    }
}

/// A write transaction. Dropping it without [`Store::write`] committing rolls everything back.
pub struct Write<'a> {
    tx: Transaction<'a>,
    path: &'a Path,
}

impl Write<'_> {
    pub fn tx(&self) -> &Transaction<'_> {
        &self.tx
    }

    /// The database file, for errors that name it.
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// Wraps a failed statement with what was being done, for a message a user can act on.
    pub fn fail(&self, doing: &str, source: rusqlite::Error) -> Error {
        Error::database(self.path, doing, source)
    }

    /// Appends an audit entry in this transaction.
    pub fn audit(&self, entry: &audit::Entry<'_>) -> Result<()> {
        audit::append(&self.tx, entry).map_err(|e| self.fail("appending to the audit log", e))
    }
}

/// Switching a new database to WAL needs its exclusive lock. When two processes open a new file
/// at once, both hold a shared lock and want it; SQLite breaks that deadlock by failing one of
/// them at once with "database is locked", without waiting the busy timeout. The loser retries.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    switch_to_wal(conn)?;
    // FULL: a rater's acknowledged edit must survive power loss, not only a process crash.
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(())
}
