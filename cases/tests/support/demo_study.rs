//! The real demo study, written and imported once per test process; each caller gets its own copy
//! of the database, so tests run in parallel without sharing state. Writing the bundle is most of
//! a demo test's time (about 3 s, 94 MB of DICOM): once per test, it was most of the Rust tests'
//! wait in CI (docs/performance.md, "CI build time"). Shared by the test binaries of `cases`, the
//! server and the team client, and by the edit bench, through `#[path]`.
#![allow(dead_code)] // each binary uses a part

use cases::import::import_bundle_dir;
use cases::progress::NoProgress;
use cases::store::Store;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The template database's bytes. The stored study names its bundle's folder (a label's mark is
/// checked against its series' volume, a package carries its pixels), so the bundle stays for the
/// process: in Cargo's folder for test files, one per live test process (a folder a finished
/// process left behind is removed by the next).
fn template() -> &'static [u8] {
    static TEMPLATE: OnceLock<Vec<u8>> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        remove_bundles_of_finished_processes(scratch());
        let root = process_root();
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("a folder for the demo bundle");
        let bundle = root.join("demo");
        demo::write_demo_bundle(&bundle, &NoProgress).expect("demo bundle");
        let db = root.join("template.sqlite");
        let mut store = Store::open(&db).expect("template database");
        import_bundle_dir(&mut store, &bundle, &NoProgress).expect("demo import");
        // Closing the last connection checkpoints the WAL into the main file.
        drop(store);
        std::fs::read(&db).expect("template bytes")
    })
}

fn scratch() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

const BUNDLE_PREFIX: &str = "demo-study-";

fn process_root() -> PathBuf {
    scratch().join(format!("{BUNDLE_PREFIX}{}", std::process::id()))
}

fn remove_bundles_of_finished_processes(scratch: &Path) {
    let Ok(entries) = std::fs::read_dir(scratch) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(BUNDLE_PREFIX) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The demo bundle the template was imported from (its `ratings.csv` among its files). Shared by
/// every test of the process: read it, never change it (copy it first).
pub fn demo_bundle() -> PathBuf {
    template();
    process_root().join("demo")
}

/// Writes the demo database (the demo study imported, nothing rated) to `path`.
pub fn demo_database_at(path: &Path) {
    std::fs::write(path, template()).expect("copy of the template database");
}

/// Writes the demo database to `<dir>/db.sqlite` and returns its path.
pub fn demo_file(dir: &Path) -> PathBuf {
    let path = dir.join("db.sqlite");
    demo_database_at(&path);
    path
}

/// A new database file (`<dir>/db.sqlite`) with the demo study imported and nothing rated.
pub fn demo_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = demo_file(dir.path());
    let store = Store::open(&path).expect("open the copy");
    (dir, store)
}

/// Copies a folder's tree: a test that changes the bundle works on its own copy.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder for the copy");
    for entry in std::fs::read_dir(from).expect("the folder to copy") {
        let entry = entry.expect("a folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("its type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("a copied file");
        }
    }
}
