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

/// When the app backs the database up by itself: at start and then whenever either interval has
/// passed, keeping the newest `keep` copies in `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoBackup {
    pub dir: PathBuf,
    pub keep: usize,
    pub every: Duration,
    /// Audit-log entries (every change is one) since the newest backup.
    pub every_changes: i64,
}

impl AutoBackup {
    /// `backups/` beside the database; 10 copies; every 15 minutes or 200 changes.
    pub fn beside(db: &Path) -> AutoBackup {
        AutoBackup {
            dir: db
                .parent()
                .unwrap_or(Path::new("."))
                .join(AUTOMATIC_BACKUP_DIR),
            keep: 10,
            every: Duration::from_secs(15 * 60),
            every_changes: 200,
        }
    }
}

/// The folder of rotated backups beside the database.
pub const AUTOMATIC_BACKUP_DIR: &str = "backups";
const ROTATED_PREFIX: &str = "neurorater-";
const ROTATED_SUFFIX: &str = ".sqlite";

/// A rotated backup, as named by [`Store::rotate_backup`]: `neurorater-<UTC>-a<audit id>.sqlite`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotatedBackup {
    pub path: PathBuf,
    /// Seconds since the Unix epoch when it was taken.
    pub taken_at: u64,
    /// The newest audit-log entry it holds (0 for an empty log).
    pub audit_id: i64,
}

impl Store {
    /// Writes a consistent copy of the database to `out` (which must not exist yet). The file is
    /// created owner-only before a byte is copied into it. Returns the audit chain's head in the
    /// copy, to keep beside it: `audit verify --expect-head` then shows the copy unchanged.
    pub fn backup_to(&self, out: &Path) -> Result<super::audit::Head> {
        create_owner_only(out)?;
        let mut target = Connection::open(out)
            .map_err(|e| Error::database(out, "creating the backup file", e))?;
        copy(self.read(), &mut target, out)?;
        restrict_permissions(out)?;
        super::audit::head(&target)
            .map_err(|e| Error::database(out, "reading the backup's audit head", e))
    }

    /// Takes a backup into `dir` (created owner-only if missing) and deletes the oldest rotated
    /// backups there beyond the newest `keep`. Other files in `dir` are left alone. Returns the
    /// backup and the audit head it holds.
    pub fn rotate_backup(
        &self,
        dir: &Path,
        keep: usize,
    ) -> Result<(RotatedBackup, super::audit::Head)> {
        if keep == 0 {
            return Err(Error::Io {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "keeping 0 backups would delete the one just taken; keep at least 1",
                ),
            });
        }
        create_owner_only_dir(dir)?;
        let audit_id = self.newest_audit_id()?;
        let mut taken_at = unix_now();
        // Two backups within one second (a quick restart) must not share a name.
        let path = loop {
            let path = dir.join(rotated_name(taken_at, audit_id));
            if !path.exists() {
                break path;
            }
            taken_at += 1;
        };
        let head = self.backup_to(&path)?;
        let mut all = rotated_backups(dir)?;
        while all.len() > keep {
            let oldest = all.remove(0);
            std::fs::remove_file(&oldest.path).map_err(|source| Error::Io {
                path: oldest.path.clone(),
                source,
            })?;
        }
        Ok((
            RotatedBackup {
                path,
                taken_at,
                audit_id,
            },
            head,
        ))
    }

    /// Takes a rotated backup when none exists yet, when the newest is older than
    /// `policy.every`, or when `policy.every_changes` changes were made since. Call it at start
    /// and then every minute or so: it costs one directory listing when nothing is due.
    pub fn backup_if_due(&self, policy: &AutoBackup) -> Result<Option<RotatedBackup>> {
        let newest = rotated_backups(&policy.dir)
            .unwrap_or_default()
            .into_iter()
            .last();
        let due = match newest {
            None => true,
            Some(newest) => {
                unix_now().saturating_sub(newest.taken_at) >= policy.every.as_secs()
                    || self.newest_audit_id()? - newest.audit_id >= policy.every_changes
            }
        };
        if !due {
            return Ok(None);
        }
        self.rotate_backup(&policy.dir, policy.keep)
            .map(|(taken, _)| Some(taken))
    }

    fn newest_audit_id(&self) -> Result<i64> {
        self.read()
            .query_row("SELECT coalesce(max(id), 0) FROM audit_log", [], |row| {
                row.get(0)
            })
            .map_err(|e| Error::database(self.path(), "reading the audit log", e))
    }
}

/// The rotated backups in `dir`, oldest first.
pub fn rotated_backups(dir: &Path) -> Result<Vec<RotatedBackup>> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found: Vec<RotatedBackup> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let (taken_at, audit_id) = parse_rotated_name(&name)?;
            Some(RotatedBackup {
                path: entry.path(),
                taken_at,
                audit_id,
            })
        })
        .collect();
    found.sort_by_key(|b| (b.taken_at, b.audit_id));
    Ok(found)
}

fn rotated_name(taken_at: u64, audit_id: i64) -> String {
    format!(
        "{ROTATED_PREFIX}{}-a{audit_id}{ROTATED_SUFFIX}",
        utc_stamp(taken_at)
    )
}

fn parse_rotated_name(name: &str) -> Option<(u64, i64)> {
    let middle = name
        .strip_prefix(ROTATED_PREFIX)?
        .strip_suffix(ROTATED_SUFFIX)?;
    let (stamp, audit) = middle.split_once("-a")?;
    Some((parse_utc_stamp(stamp)?, audit.parse().ok()?))
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYYMMDDTHHMMSSZ`: sorts as it reads, and says the zone.
fn utc_stamp(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn parse_utc_stamp(stamp: &str) -> Option<u64> {
    let digits = |range: std::ops::Range<usize>| stamp.get(range)?.parse::<u64>().ok();
    if stamp.len() != 16 || &stamp[8..9] != "T" || !stamp.ends_with('Z') {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    let (hour, minute, second) = (digits(9..11)?, digits(11..13)?, digits(13..15)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let days = days_from_civil(year as i64, month as u32, day as u32);
    Some(days as u64 * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Creates `path` empty with mode 0600, refusing an existing file.
pub(crate) fn create_owner_only(path: &Path) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source: if source.kind() == std::io::ErrorKind::AlreadyExists {
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a file is already there; choose a new name",
            )
        } else {
            source
        },
    })
}

pub(crate) fn create_owner_only_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::audit::Entry;

    fn change(store: &mut Store, entity: &str) {
        store
            .write(|w| {
                w.audit(&Entry {
                    actor: "test",
                    action: "edit",
                    entity,
                    before: None,
                    after: None,
                })
            })
            .unwrap();
    }

    fn audit_rows(path: &Path) -> i64 {
        Store::open_existing(path)
            .unwrap()
            .read()
            .query_row("SELECT count(*) FROM audit_log", [], |row| row.get(0))
            .unwrap()
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn utc_stamps_match_known_dates_and_parse_back() {
        // 1 700 000 000 s is 2023-11-14 22:13:20 UTC; 951 782 400 s is 2000-02-29 00:00:00 UTC.
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_700_000_000), "20231114T221320Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        for secs in [0, 951_782_400, 1_700_000_000, 4_102_444_799] {
            assert_eq!(parse_utc_stamp(&utc_stamp(secs)), Some(secs));
        }
        assert_eq!(
            parse_rotated_name("neurorater-20231114T221320Z-a17.sqlite"),
            Some((1_700_000_000, 17))
        );
        assert_eq!(parse_rotated_name("neurorater-2023-11-14-a17.sqlite"), None);
        assert_eq!(parse_rotated_name("notes.txt"), None);
    }

    #[test]
    fn rotation_keeps_the_newest_copies_owner_only_and_leaves_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let backups = dir.path().join("backups");
        std::fs::create_dir(&backups).unwrap();
        std::fs::write(backups.join("notes.txt"), "kept").unwrap();
        let mut taken = Vec::new();
        for round in 0..5 {
            change(&mut store, &format!("round:{round}"));
            taken.push(store.rotate_backup(&backups, 3).unwrap().0);
        }
        let left: Vec<PathBuf> = rotated_backups(&backups)
            .unwrap()
            .into_iter()
            .map(|b| b.path)
            .collect();
        let newest: Vec<PathBuf> = taken[2..].iter().map(|b| b.path.clone()).collect();
        assert_eq!(left, newest);
        assert!(backups.join("notes.txt").exists());
        for (round, backup) in taken[2..].iter().enumerate() {
            // Round r's backup holds the r + 1 changes made before it.
            assert_eq!(audit_rows(&backup.path), round as i64 + 3);
            #[cfg(unix)]
            assert_eq!(mode(&backup.path), 0o600);
        }
        assert!(store.rotate_backup(&backups, 0).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_new_backup_folder_is_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let backups = dir.path().join("new/backups");
        store.rotate_backup(&backups, 2).unwrap();
        assert_eq!(mode(&backups), 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_database_its_folder_and_its_wal_are_owner_only_while_open() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("data/neurorater");
        let db = folder.join("db.sqlite");
        let mut store = Store::open(&db).unwrap();
        change(&mut store, "first");
        let wal = folder.join("db.sqlite-wal");
        assert!(wal.exists(), "the store writes through a WAL");
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&wal), 0o600);
        assert_eq!(mode(&folder), 0o700);
    }

    #[test]
    fn automatic_backups_are_taken_when_due_by_changes_or_by_time() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.sqlite");
        let mut store = Store::open(&db).unwrap();
        let policy = AutoBackup {
            every: Duration::from_secs(3600),
            every_changes: 3,
            ..AutoBackup::beside(&db)
        };
        assert_eq!(policy.dir, dir.path().join("backups"));
        assert!(
            store.backup_if_due(&policy).unwrap().is_some(),
            "first start"
        );
        assert!(
            store.backup_if_due(&policy).unwrap().is_none(),
            "nothing changed"
        );
        change(&mut store, "a");
        change(&mut store, "b");
        assert!(
            store.backup_if_due(&policy).unwrap().is_none(),
            "2 of 3 changes"
        );
        change(&mut store, "c");
        let taken = store.backup_if_due(&policy).unwrap().expect("3 changes");
        assert_eq!(audit_rows(&taken.path), 3);
        let hourly_but_overdue = AutoBackup {
            every: Duration::ZERO,
            ..policy.clone()
        };
        assert!(store.backup_if_due(&hourly_but_overdue).unwrap().is_some());
        assert_eq!(rotated_backups(&policy.dir).unwrap().len(), 3);
    }

    #[test]
    fn a_backup_never_overwrites_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let out = dir.path().join("taken.sqlite");
        std::fs::write(&out, "precious").unwrap();
        let error = store.backup_to(&out).unwrap_err().to_string();
        assert!(error.contains("already there"), "{error}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
    }
}
