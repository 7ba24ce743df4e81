//! Multi-site studies (docs/multisite.md). At the remote rater's site: import the rater package
//! the study lead sent into the open database, and export the results package to send back. At
//! the lead's: build a rater's package, as `neurorater package export-rater` does, and merge a
//! results package into the open database, as `neurorater package merge` does. Each touches only the file the user picked in the native dialog, reports its progress
//! as [`PROGRESS_EVENT`]s carrying the window's `request` number, and can be cancelled
//! (`cancel_package_action`) until it writes.

use crate::error::{CommandError, ErrorCode};
use crate::long_work::{EventProgress, LongWork, Overlap};
use crate::state::AppState;
use cases::app::permissions::Action;
use cases::app::Session;
use cases::ids::{Id, Key};
use serde::Serialize;
use std::path::{Path, PathBuf};
use tauri::{AppHandle, Runtime, State};

/// The event the package menu follows while a package is read, checked or written.
pub const PROGRESS_EVENT: &str = "package-progress";

/// The package action under way: one at a time, stopped by `cancel_package_action`.
pub struct PackageWork(LongWork);

impl Default for PackageWork {
    fn default() -> Self {
        // Each action writes once, in one transaction (or one file) at its end, and stops
        // before it if asked: a newer action replaces the one under way.
        PackageWork(LongWork::new(Overlap::Replace))
    }
}

/// Runs `action` with progress events and the stop of a new package action.
fn cancellable<R: Runtime, T>(
    app: AppHandle<R>,
    work: &PackageWork,
    request: u32,
    action: impl FnOnce(&EventProgress<R>) -> Result<T, CommandError>,
) -> Result<T, CommandError> {
    let started = work.0.start()?;
    action(&EventProgress::new(app, PROGRESS_EVENT, request, &started))
}

/// Stops the package action under way before it writes; whether one was running. Its command
/// fails with `cancelled` and nothing is written.
#[tauri::command]
#[specta::specta]
pub async fn cancel_package_action(work: State<'_, PackageWork>) -> Result<bool, CommandError> {
    Ok(work.0.cancel())
}

/// What the rater sees after an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ImportedPackage {
    pub package_id: String,
    pub study_id: String,
    pub rater: String,
    pub site: String,
    pub items: u32,
    /// The same package was imported before; nothing changed.
    pub already_imported: bool,
    /// The study was read here already: the package (the team server's) added `items` to its
    /// queue.
    pub top_up: bool,
}

/// Imports the rater package at `path` (the file chosen in the open dialog). The package is
/// blinded, so a rater in reading mode may import it.
#[tauri::command]
#[specta::specta]
pub async fn import_rater_package<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    work: State<'_, PackageWork>,
    path: String,
    request: Option<u32>,
) -> Result<ImportedPackage, CommandError> {
    let file = package_source(Path::new(&path))?;
    cancellable(app, &work, request.unwrap_or_default(), |progress| {
        state.with_store_mut(|store| {
            let imported = cases::package::import_rater_package(store, &file, progress)?;
            Ok(ImportedPackage {
                package_id: imported.package_id,
                study_id: imported.study_id,
                rater: imported.rater,
                site: imported.site,
                items: imported.items,
                already_imported: imported.already_imported,
                top_up: imported.top_up,
            })
        })
    })
}

/// What a merge did, for the study lead: the counts, and each conflict in the words of the CLI
/// (`file:line: field: why`), none of which carries a score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct MergedResults {
    pub package_id: String,
    pub rater: String,
    pub site: String,
    pub added: u32,
    pub updated: u32,
    pub unchanged: u32,
    pub conflicts: Vec<String>,
}

/// Merges the results package at `path` (the file chosen in the open dialog) into the open
/// database: new ratings added, ones the remote rater changed updated, anything the lead's site
/// changed kept and listed as a conflict. One transaction, audited; merging again changes nothing.
/// Refused while a rater reads blinded here: it is the study lead's decision.
#[tauri::command]
#[specta::specta]
pub async fn merge_results_package<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    work: State<'_, PackageWork>,
    path: String,
    request: Option<u32>,
) -> Result<MergedResults, CommandError> {
    let file = package_source(Path::new(&path))?;
    cancellable(app, &work, request.unwrap_or_default(), |progress| {
        state.with_store_mut(|store| {
            let lead = Session::current(store)?.study_lead(Action::MergeResults)?;
            let report = cases::app::merge_results_package(store, &lead, &file, progress)?;
            Ok(MergedResults {
                package_id: report.package_id,
                rater: report.rater,
                site: report.site,
                added: report.added,
                updated: report.updated,
                unchanged: report.unchanged,
                conflicts: report.conflicts.iter().map(ToString::to_string).collect(),
            })
        })
    })
}

/// What the study lead sent off: the package built for a rater at another site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct BuiltRaterPackage {
    pub package_id: String,
    pub rater: String,
    pub site: String,
    pub items: u32,
    pub cases: u32,
    pub images: u32,
    /// The file written.
    pub path: String,
}

/// Builds the rater package of rater `rater_id`'s queue in study `study_id`, for them to read at
/// `site`, into `path` (the file chosen in the save dialog), as `neurorater package
/// export-rater` does: images de-identified, responses blinded, recorded here so that its results
/// merge. The study lead's: refused while a rater reads blinded here.
// A command's arguments are its IPC fields, each checked on its own as it is deserialised.
#[allow(clippy::too_many_arguments)]
#[tauri::command]
#[specta::specta]
pub async fn export_rater_package<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    work: State<'_, PackageWork>,
    study_id: Id,
    rater_id: Key,
    site: String,
    path: String,
    request: Option<u32>,
) -> Result<BuiltRaterPackage, CommandError> {
    let target = package_target(Path::new(&path))?;
    cancellable(app, &work, request.unwrap_or_default(), |progress| {
        state.with_store_mut(|store| {
            let lead = Session::current(store)?.study_lead(Action::ExchangePackages)?;
            let rater = store.rater(rater_id.get())?;
            let built = cases::app::export_rater_package(
                store,
                &lead,
                &study_id,
                &rater.name,
                &site,
                &target,
                progress,
            )?;
            Ok(BuiltRaterPackage {
                package_id: built.package_id,
                rater: built.rater,
                site: built.site,
                items: built.items,
                cases: built.cases,
                images: built.images,
                path: built.out.display().to_string(),
            })
        })
    })
}

/// The rater packages imported into the open database, for the rater to choose which to answer
/// when there are several. Like the import and the export, open in reading mode: each is a
/// rater's own.
#[tauri::command]
#[specta::specta]
pub async fn imported_rater_packages(
    state: State<'_, AppState>,
) -> Result<Vec<cases::package::ImportedRaterPackage>, CommandError> {
    state.with_store(|store| Ok(cases::package::imported_rater_packages(store)?))
}

/// Writes the results package answering the imported rater package (`package_id`, needed only
/// when the database holds several) to `path`, the file chosen in the save dialog. Returns the
/// file written. (Not `package`: the generated bindings pass arguments as JavaScript parameters,
/// and `package` is a reserved word there.)
#[tauri::command]
#[specta::specta]
pub async fn export_results_package<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    work: State<'_, PackageWork>,
    path: String,
    package_id: Option<Id>,
    request: Option<u32>,
) -> Result<String, CommandError> {
    let target = package_target(Path::new(&path))?;
    let package = package_id.as_deref();
    let written = cancellable(app, &work, request.unwrap_or_default(), |progress| {
        state.with_store(|store| {
            Ok(cases::package::export_results_package(
                store, package, &target, progress,
            )?)
        })
    })?;
    Ok(written.out.display().to_string())
}

fn refuse(path: &Path, why: &str) -> CommandError {
    CommandError::new(
        ErrorCode::InvalidArgument,
        format!("path: {}: {why}", path.display()),
    )
}

fn is_tar(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("tar"))
}

/// The exact file the open dialog returned, checked: absolute, an existing regular file (resolved
/// through symbolic links) ending in `.tar`.
fn package_source(path: &Path) -> Result<PathBuf, CommandError> {
    if !path.is_absolute() {
        return Err(refuse(
            path,
            "must be an absolute path from the open dialog",
        ));
    }
    let Ok(resolved) = path.canonicalize() else {
        return Err(refuse(path, "does not exist"));
    };
    if !resolved.is_file() {
        return Err(refuse(path, "is not a file"));
    }
    if !is_tar(&resolved) {
        return Err(refuse(path, "a package is a .tar file"));
    }
    Ok(resolved)
}

/// The exact file the save dialog returned, checked like a calibration export: absolute, in an
/// existing folder (resolved through symbolic links), ending in `.tar`, and not a folder.
/// Anything else is refused rather than adjusted, so the file written is the one the user saw.
fn package_target(path: &Path) -> Result<PathBuf, CommandError> {
    if !path.is_absolute() {
        return Err(refuse(
            path,
            "must be an absolute path from the save dialog",
        ));
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(refuse(path, "names no file"));
    };
    let Ok(parent) = parent.canonicalize() else {
        return Err(refuse(path, "its folder does not exist"));
    };
    if !parent.is_dir() {
        return Err(refuse(path, "its folder does not exist"));
    }
    let target = parent.join(name);
    if !is_tar(&target) {
        return Err(refuse(path, "a package must end in .tar"));
    }
    if target.is_dir() {
        return Err(refuse(path, "is a folder"));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary directory.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "neurorater-package-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn the_chosen_files_are_used_in_their_resolved_folders() {
        let dir = temp_dir("resolved");
        let real = dir.join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.join("link")).unwrap();
        std::fs::write(real.join("in.TAR"), b"").unwrap();
        assert_eq!(
            package_source(&dir.join("link/in.TAR")).unwrap(),
            real.join("in.TAR")
        );
        assert_eq!(
            package_target(&dir.join("link/out.tar")).unwrap(),
            real.join("out.tar")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn paths_the_dialogs_cannot_have_returned_are_refused_by_reason() {
        let dir = temp_dir("refused");
        std::fs::write(dir.join("notes.txt"), b"").unwrap();
        std::fs::create_dir(dir.join("folder.tar")).unwrap();
        let sources = [
            (PathBuf::from("in.tar"), "must be an absolute path"),
            (dir.join("missing.tar"), "does not exist"),
            (dir.join("folder.tar"), "is not a file"),
            (dir.join("notes.txt"), "is a .tar file"),
        ];
        for (path, why) in sources {
            let error = package_source(&path).expect_err(why);
            assert_eq!(error.code, ErrorCode::InvalidArgument);
            assert!(error.message.contains(why), "{}", error.message);
        }
        let targets = [
            (PathBuf::from("out.tar"), "must be an absolute path"),
            (dir.join("missing/out.tar"), "its folder does not exist"),
            (dir.join("out.zip"), "must end in .tar"),
            (dir.join("folder.tar"), "is a folder"),
            (PathBuf::from("/"), "names no file"),
        ];
        for (path, why) in targets {
            let error = package_target(&path).expect_err(why);
            assert_eq!(error.code, ErrorCode::InvalidArgument);
            assert!(error.message.contains(why), "{}", error.message);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
