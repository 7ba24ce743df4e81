//! First start: open the database and, when it holds no study, generate the demo study and import
//! it, reporting each phase to the window so it never looks frozen.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::progress::Progress;
use cases::store::Store;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tauri::{AppHandle, Emitter, Manager, Runtime};

/// The event the UI listens to while it shows the start-up screen.
pub const PROGRESS_EVENT: &str = "startup-progress";

#[derive(Debug, Clone, Serialize)]
struct ProgressPayload<'a> {
    phase: &'a str,
    done: u64,
    total: u64,
}

/// Adapts `cases::progress::Progress` to Tauri events and to the state `startup_status` reads
/// (a window that loads after an event was sent still sees where start-up is).
struct EventProgress<'a, R: Runtime> {
    app: &'a AppHandle<R>,
    phase: Mutex<(String, u64)>,
}

impl<R: Runtime> EventProgress<'_, R> {
    fn report(&self, phase: &str, done: u64, total: u64) {
        self.app
            .state::<AppState>()
            .set_progress(phase, done, total);
        // A closed window cannot listen; start-up carries on regardless.
        let _ = self
            .app
            .emit(PROGRESS_EVENT, ProgressPayload { phase, done, total });
    }
}

impl<R: Runtime> Progress for EventProgress<'_, R> {
    fn phase(&self, name: &str, total: u64) {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner()) = (name.to_owned(), total);
        self.report(name, 0, total);
    }

    fn advance(&self, done: u64) {
        let (name, total) = self.phase.lock().unwrap_or_else(|p| p.into_inner()).clone();
        self.report(&name, done, total);
    }
}

/// Runs on its own thread: generating and importing the demo takes seconds. `seed_demo`: an empty
/// database gets the demo study (not when the app was started for a team server, whose studies
/// are read in databases of their own).
pub fn prepare_library<R: Runtime>(app: AppHandle<R>, database: Option<PathBuf>, seed_demo: bool) {
    let progress = EventProgress {
        app: &app,
        phase: Mutex::new(("opening the database".into(), 0)),
    };
    let outcome = open_or_seed(&progress, database, seed_demo);
    let opened = outcome.is_ok();
    app.state::<AppState>().finish(outcome);
    let _ = app.emit(
        PROGRESS_EVENT,
        ProgressPayload {
            phase: "ready",
            done: 1,
            total: 1,
        },
    );
    if opened {
        let spawned = std::thread::Builder::new()
            .name("automatic-backups".into())
            .spawn(move || take_backups_while_running(app));
        if let Err(e) = spawned {
            eprintln!("automatic backups while running are off: {e}");
        }
    }
}

/// How often the app asks whether a rotated backup is due (by age or by number of changes; see
/// `AutoBackup`); asking costs one directory listing.
const BACKUP_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Rotated backups while a rater works, not only at start: a long session's edits are in a
/// backup within the policy's bounds. A failure is reported and tried again, never in the way.
fn take_backups_while_running<R: Runtime>(app: AppHandle<R>) {
    loop {
        std::thread::sleep(BACKUP_CHECK_INTERVAL);
        let outcome = app.state::<AppState>().with_store(|store| {
            let policy = cases::store::AutoBackup::beside(store.path());
            Ok(store.backup_if_due(&policy)?)
        });
        if let Err(e) = outcome {
            eprintln!("automatic backup failed: {}", e.message);
        }
    }
}

fn open_or_seed(
    progress: &dyn Progress,
    database: Option<PathBuf>,
    seed_demo: bool,
) -> Result<Store, CommandError> {
    let db_path = match database {
        Some(path) => path,
        None => Store::default_path().map_err(startup_failed)?,
    };
    progress.phase("opening the database", 1);
    let mut store = Store::open(&db_path).map_err(startup_failed)?;
    if seed_demo && store.is_empty().map_err(startup_failed)? {
        let bundle_dir = demo_bundle_dir(&db_path);
        seed_demo_study(&mut store, &bundle_dir, progress)?;
    }
    // Rotated backups beside the database (docs/reliability.md). A failed backup must not keep
    // the rater from working: it is reported on stderr and tried again at the next start.
    if let Err(e) = store.backup_if_due(&cases::store::AutoBackup::beside(&db_path)) {
        eprintln!("automatic backup failed: {e}");
    }
    Ok(store)
}

/// The demo bundle lives beside the database it was imported into (for the default database that
/// is the user's NeuroRater data directory), so a test's temporary database never touches the
/// user's files and the images stay where the store's paths point.
fn demo_bundle_dir(db_path: &Path) -> PathBuf {
    let stem = db_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "neurorater".into());
    db_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(format!("{stem}-demo-study"))
}

fn seed_demo_study(
    store: &mut Store,
    bundle_dir: &Path,
    progress: &dyn Progress,
) -> Result<(), CommandError> {
    // An earlier start may have died half-way through writing; the database is empty, so nothing
    // refers to these files and a fresh copy is the only consistent state.
    if bundle_dir.exists() {
        std::fs::remove_dir_all(bundle_dir).map_err(|e| {
            startup_failed(format!(
                "{}: could not clear an unfinished demo study: {e}",
                bundle_dir.display()
            ))
        })?;
    }
    demo::write_demo_bundle(bundle_dir, progress).map_err(startup_failed)?;
    cases::import::import_bundle_dir(store, bundle_dir, progress).map_err(|error| match error {
        cases::ImportError::Invalid(problems) => startup_failed(format!(
            "the generated demo study did not import ({} problem(s)): {}",
            problems.len(),
            problems
                .iter()
                .take(5)
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )),
        cases::ImportError::Store(error) => startup_failed(error),
    })?;
    // The demo's clinicians rated every answer; with their ratings stored the calibration view
    // has something to calibrate from the first start on.
    let ratings = bundle_dir.join(DEMO_RATINGS_FILE);
    cases::ratings_import::import_ratings_csv(store, &ratings, progress).map_err(|error| {
        match error {
            cases::ImportError::Invalid(problems) => startup_failed(format!(
                "the demo study's ratings did not import ({} problem(s)): {}",
                problems.len(),
                problems
                    .iter()
                    .take(5)
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            cases::ImportError::Store(error) => startup_failed(error),
        }
    })?;
    // The demo's grader and model specs, bound as `neurorater grade/respond --spec` binds them:
    // the workbench opens with a grader and a model ready to run against a local server.
    runner::versions::bind_demo_specs(store).map_err(startup_failed)?;
    Ok(())
}

/// The long ratings CSV (docs/formats.md §3) the demo writes beside its bundle files.
const DEMO_RATINGS_FILE: &str = "ratings.csv";

fn startup_failed(reason: impl std::fmt::Display) -> CommandError {
    CommandError::new(ErrorCode::StartupFailed, reason.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cases::progress::NoProgress;
    use runner::record::Kind;
    use runner::versions::stored_specs;
    use runner::Spec;

    #[test]
    fn the_demo_bundle_sits_beside_its_database() {
        assert_eq!(
            demo_bundle_dir(Path::new("/tmp/run-7/test.sqlite")),
            PathBuf::from("/tmp/run-7/test-demo-study")
        );
    }

    /// The committed spec file, read from the repository rather than through `include_str!`,
    /// hashed by the function `neurorater grade/respond` binds with.
    fn committed_hash(file: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../demo/src/specs")
            .join(file);
        let text = std::fs::read_to_string(&path).expect("the committed demo spec");
        Spec::parse(&text, file).unwrap().content_hash()
    }

    #[test]
    fn first_start_binds_the_demo_specs_as_the_cli_would() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("first.sqlite");
        let mut store = open_or_seed(&NoProgress, Some(db.clone()), true).expect("first start");

        let graders = stored_specs(&store, Kind::Grader).unwrap();
        let models = stored_specs(&store, Kind::Model).unwrap();
        let listed = |specs: &[runner::versions::StoredSpec]| -> Vec<(String, String, i64)> {
            specs
                .iter()
                .map(|s| (s.spec.name.clone(), s.spec_sha256.clone(), s.stored))
                .collect()
        };
        assert_eq!(
            listed(&graders),
            [(
                "demo-grader-local-v1".into(),
                committed_hash("grader.toml"),
                0
            )]
        );
        assert_eq!(
            listed(&models),
            [("demo-vlm-local".into(), committed_hash("model.toml"), 0)]
        );
        assert_eq!(graders[0].spec.endpoint, "http://127.0.0.1:8000/v1");
        assert_eq!(models[0].spec.endpoint, "http://127.0.0.1:8000/v1");

        // One audit entry per binding, the one a first `grade`/`respond` run writes.
        let bindings: Vec<(String, String, String)> = store
            .read()
            .prepare(
                "SELECT actor, entity, after_json FROM audit_log WHERE action = 'bind run spec'
                 ORDER BY id",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected = |name: &str, kind: &str, file: &str| {
            let after = serde_json::json!({"kind": kind, "spec_sha256": committed_hash(file)});
            ("runner".to_owned(), format!("run_spec:{name}"), after)
        };
        let bindings: Vec<(String, String, serde_json::Value)> = bindings
            .into_iter()
            .map(|(a, e, after)| (a, e, serde_json::from_str(&after).unwrap()))
            .collect();
        assert_eq!(
            bindings,
            [
                expected("demo-grader-local-v1", "grader", "grader.toml"),
                expected("demo-vlm-local", "model", "model.toml"),
            ]
        );

        // The bundle's spec files, as `neurorater grade/respond --spec` reads them, find their
        // names bound to themselves: binding again changes nothing and writes no audit entry.
        let bundle = demo_bundle_dir(&db);
        for (file, kind) in [("grader.toml", Kind::Grader), ("model.toml", Kind::Model)] {
            let spec = Spec::load(&bundle.join("specs").join(file)).unwrap();
            runner::record::bind_spec(&mut store, &spec, kind).unwrap();
        }
        let entries: i64 = store
            .read()
            .query_row(
                "SELECT count(*) FROM audit_log WHERE action = 'bind run spec'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(entries, 2);
    }
}
