//! The one piece of shared state: the database, which is unavailable while first start prepares
//! it. Commands lock it once at their boundary and never hold the lock across an await.

use crate::error::{CommandError, ErrorCode};
use cases::store::Store;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// Where start-up is; the UI shows a progress screen until `Ready`.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StartupStatus {
    Preparing {
        phase: String,
        done: u64,
        total: u64,
    },
    Ready,
    Failed {
        error: CommandError,
    },
}

pub enum Library {
    Preparing,
    Ready(Store),
    Failed(CommandError),
}

pub struct AppState {
    library: Mutex<Library>,
    /// Kept apart from `library` so progress can be read while the import holds the store.
    startup: Mutex<StartupStatus>,
    /// The database the window opened at start (`--db`, else the default one): where it returns
    /// when a team server's study, read in a database of its own, is left (`return_home`).
    home: Mutex<Option<PathBuf>>,
}

impl Default for AppState {
    fn default() -> Self {
        AppState {
            library: Mutex::new(Library::Preparing),
            startup: Mutex::new(StartupStatus::Preparing {
                phase: "opening the database".into(),
                done: 0,
                total: 0,
            }),
            home: Mutex::new(None),
        }
    }
}

impl AppState {
    /// Runs `read` against the open store, or explains why there is none yet.
    pub fn with_store<T>(
        &self,
        read: impl FnOnce(&Store) -> Result<T, CommandError>,
    ) -> Result<T, CommandError> {
        match &*lock(&self.library) {
            Library::Ready(store) => read(store),
            Library::Preparing => Err(CommandError::new(
                ErrorCode::NotReady,
                "the database is still being prepared; wait for start-up to finish",
            )),
            Library::Failed(error) => Err(error.clone()),
        }
    }

    /// Runs `change` against the open store; the lock is held until it returns (edits commit
    /// inside it, so a command's reply means the change is on disk).
    pub fn with_store_mut<T>(
        &self,
        change: impl FnOnce(&mut Store) -> Result<T, CommandError>,
    ) -> Result<T, CommandError> {
        match &mut *lock(&self.library) {
            Library::Ready(store) => change(store),
            Library::Preparing => Err(CommandError::new(
                ErrorCode::NotReady,
                "the database is still being prepared; wait for start-up to finish",
            )),
            Library::Failed(error) => Err(error.clone()),
        }
    }

    pub fn startup_status(&self) -> StartupStatus {
        lock(&self.startup).clone()
    }

    pub fn set_progress(&self, phase: &str, done: u64, total: u64) {
        *lock(&self.startup) = StartupStatus::Preparing {
            phase: phase.to_owned(),
            done,
            total,
        };
    }

    /// Reads and writes `store` from now on, the one open before closed: a team server's study
    /// is read in a database of its own (`commands::team`).
    pub fn open_instead(&self, store: Store) {
        *lock(&self.library) = Library::Ready(store);
    }

    /// Opens the database the window started on again, if another one (a team server study's)
    /// is open instead; whether it did. Logging out of the team server returns here: the study
    /// on screen is then the workstation's own again, not the account's copy.
    pub fn return_home(&self) -> Result<bool, CommandError> {
        let Some(home) = lock(&self.home).clone() else {
            return Ok(false);
        };
        let away = self.with_store(|store| Ok(store.path() != home.as_path()))?;
        if !away {
            return Ok(false);
        }
        let store = Store::open(&home)?;
        self.open_instead(store);
        Ok(true)
    }

    pub fn finish(&self, outcome: Result<Store, CommandError>) {
        if let Ok(store) = &outcome {
            *lock(&self.home) = Some(store.path().to_path_buf());
        }
        let (library, status) = match outcome {
            Ok(store) => (Library::Ready(store), StartupStatus::Ready),
            Err(error) => (
                Library::Failed(error.clone()),
                StartupStatus::Failed { error },
            ),
        };
        *lock(&self.library) = library;
        *lock(&self.startup) = status;
    }
}

/// A panic while holding a lock leaves plain data behind (no invariants span a lock), so a
/// poisoned lock is still safe to read; refusing would brick the window for the session.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
