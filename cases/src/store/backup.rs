//! Online backups through SQLite's backup API: consistent while the app keeps writing.

use super::Store;
use crate::{Error, Result};
use rusqlite::backup::Backup;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Pages copied per step; between steps other connections may write.
const PAGES_PER_STEP: std::ffi::c_int = 256;
const PAUSE_BETWEEN_STEPS: Duration = Duration::from_millis(5);

impl Store {
    /// Writes a consistent copy of the database to `out` (which must not exist yet).
    pub fn backup_to(&self, out: &Path) -> Result<()> {
        if out.exists() {
            return Err(Error::Io {
                path: out.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "a file is already there; choose a new name",
                ),
            });
        }
        let mut target = Connection::open(out)
            .map_err(|e| Error::database(out, "creating the backup file", e))?;
        copy(self.read(), &mut target, out)?;
        restrict_permissions(out)
    }
}

/// Replaces the database at `db` with the backup at `backup`, first saving the current content
/// beside it. Returns where the replaced content was saved.
pub fn restore(backup: &Path, db: &Path) -> Result<PathBuf> {
    // Opening through Store checks that the backup is a NeuroRater database this build reads.
    let source = Store::open_existing(backup)?;
    let ok: String = source
        .read()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .map_err(|e| Error::database(backup, "checking the backup's integrity", e))?;
    if ok != "ok" {
        return Err(Error::Corrupt {
            what: format!("{}: integrity check says {ok}", backup.display()),
        });
    }
    let mut live = Store::open(db)?;
    let saved = db.with_extension(format!(
        "before-restore-{}.sqlite",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    ));
    live.backup_to(&saved)?;
    copy(source.read(), live.connection_for_restore(), db)?;
    Ok(saved)
}

fn copy(from: &Connection, to: &mut Connection, target: &Path) -> Result<()> {
    let backup =
        Backup::new(from, to).map_err(|e| Error::database(target, "starting the backup", e))?;
    backup
        .run_to_completion(PAGES_PER_STEP, PAUSE_BETWEEN_STEPS, None)
        .map_err(|e| Error::database(target, "copying the database", e))
}

/// The database holds raters' work and study data: only its owner may read it.
pub(crate) fn restrict_permissions(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| Error::Io {
                path: path.to_path_buf(),
                source,
            },
        )?;
    }
    Ok(())
}
