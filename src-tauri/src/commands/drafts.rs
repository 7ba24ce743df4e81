//! Work the window holds but has not saved (curation edits not yet a version), kept beside the
//! database so that it survives whatever ends the window — a close, a quit, a crash — and is
//! offered again at the next start (issue 41 finding 2). The window sends its whole draft of a
//! kind as JSON text after every change; this writes it whole (a temporary file renamed over the
//! last, readable by the user alone) and reads it back. The text is the window's: it is checked
//! for size and JSON, not shape, and goes nowhere else.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::app::Session;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use tauri::State;

/// A draft larger than this is not a form's edits.
const MAX_DRAFT_BYTES: usize = 4 * 1024 * 1024;

/// What a draft holds. Curation edits carry ground truth: only a session that may see it
/// (nobody reading blinded here) reads or writes them.
#[derive(Debug, Clone, Copy, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DraftKind {
    Curation,
}

impl DraftKind {
    fn file_name(self) -> &'static str {
        match self {
            DraftKind::Curation => "curation",
        }
    }
}

/// `<database>.drafts/<kind>.json`: beside the database it belongs to, so another database (a
/// team account's copy, a test's) never offers it.
fn draft_path(database: &Path, kind: DraftKind) -> PathBuf {
    let mut folder = database.as_os_str().to_owned();
    folder.push(".drafts");
    PathBuf::from(folder).join(format!("{}.json", kind.file_name()))
}

fn io_error(doing: &str, path: &Path, e: std::io::Error) -> CommandError {
    CommandError::new(
        ErrorCode::Database,
        format!("{doing} {}: {e}", path.display()),
    )
}

/// Where the draft of `kind` lives, once the session may see it.
fn checked_path(state: &AppState, kind: DraftKind) -> Result<PathBuf, CommandError> {
    state.with_store(|store| {
        match kind {
            DraftKind::Curation => {
                Session::current(store)?.unblinded("unsaved curation edits")?;
            }
        }
        Ok(draft_path(store.path(), kind))
    })
}

/// The draft of `kind` kept for this database, or `None`.
#[tauri::command]
#[specta::specta]
pub async fn window_draft_load(
    state: State<'_, AppState>,
    kind: DraftKind,
) -> Result<Option<String>, CommandError> {
    let path = checked_path(&state, kind)?;
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("reading the unsaved work in", &path, e)),
    }
}

/// Keeps `text` as the draft of `kind` (whole, replacing the last); `None` removes it.
#[tauri::command]
#[specta::specta]
pub async fn window_draft_keep(
    state: State<'_, AppState>,
    kind: DraftKind,
    text: Option<String>,
) -> Result<(), CommandError> {
    let path = checked_path(&state, kind)?;
    let Some(text) = text else {
        return match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error("removing the unsaved work in", &path, e)),
        };
    };
    if text.len() > MAX_DRAFT_BYTES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("text: at most {MAX_DRAFT_BYTES} bytes"),
        ));
    }
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("text: not JSON: {e}"),
        ));
    }
    write_whole(&path, &text)
}

/// Writes `text` to a temporary file beside `path` and renames it over `path`: a reader finds the
/// last draft or this one, never half of one.
fn write_whole(path: &Path, text: &str) -> Result<(), CommandError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(|e| io_error("creating", folder, e))?;
    let temporary = path.with_extension("json.part");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&temporary).and_then(|mut file| {
        use std::io::Write;
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    written.map_err(|e| io_error("writing", &temporary, e))?;
    std::fs::rename(&temporary, path).map_err(|e| io_error("replacing", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_lives_beside_its_database_and_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("study.sqlite");
        let path = draft_path(&database, DraftKind::Curation);
        assert_eq!(path, dir.path().join("study.sqlite.drafts/curation.json"));
        write_whole(&path, r#"{"a":1}"#).unwrap();
        write_whole(&path, r#"{"a":2}"#).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), r#"{"a":2}"#);
        assert!(!path.with_extension("json.part").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
