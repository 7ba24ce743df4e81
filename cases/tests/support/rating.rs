//! A fresh database holding the real demo study, for the rating tests and the edit bench.
//! The bundle is generated and imported once per process into a template file; each caller gets
//! its own copy, so tests run in parallel without sharing state.
#![allow(dead_code)] // shared by test binaries and the bench through `mod`/`#[path]`; each uses a part

use cases::import::import_bundle_dir;
use cases::progress::NoProgress;
use cases::store::Store;
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The template database's bytes. A label's mark is checked against its series' volume, so the
/// images stay for the process: in Cargo's folder for test files, one per live test process
/// (a folder a finished process left behind is removed by the next).
fn template() -> &'static [u8] {
    static TEMPLATE: OnceLock<Vec<u8>> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        remove_bundles_of_finished_processes(scratch);
        let root = scratch.join(format!("{BUNDLE_PREFIX}{}", std::process::id()));
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

const BUNDLE_PREFIX: &str = "rating-demo-";

fn remove_bundles_of_finished_processes(scratch: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(scratch) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(BUNDLE_PREFIX) else {
            continue;
        };
        if !std::path::Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The demo bundle the template was imported from (its `ratings.csv` among its files).
pub fn demo_bundle() -> PathBuf {
    template();
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{BUNDLE_PREFIX}{}", std::process::id()))
        .join("demo")
}

/// A new database file (`<dir>/db.sqlite`) with the demo study imported and nothing rated.
pub fn demo_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = demo_file(dir.path());
    let store = Store::open(&path).expect("open the copy");
    (dir, store)
}

/// Writes the demo database to `<dir>/db.sqlite` and returns its path.
pub fn demo_file(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("db.sqlite");
    std::fs::write(&path, template()).expect("copy of the template database");
    path
}

/// Every response of the database as `case/task/model/sample`, in store order.
pub fn responses_key_order(conn: &Connection) -> Vec<String> {
    conn.prepare(
        "SELECT c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample
         FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
         ORDER BY r.id",
    )
    .unwrap()
    .query_map([], |r| r.get(0))
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// The demo study's rubric with its first dimension scored on lesion identification only and
/// its second allowed "not applicable", written into the database as a study imported so would
/// hold it. Returns the dimension ids in rubric order.
pub fn family_limited_rubric(store: &Store) -> Vec<String> {
    let conn = Connection::open(store.path()).unwrap();
    let text: String = conn
        .query_row(
            "SELECT rubric_json FROM studies WHERE study_id = ?1",
            [cases::rating::DEMO_STUDY_ID],
            |r| r.get(0),
        )
        .unwrap();
    let mut rubric: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dimensions = rubric["dimensions"].as_array_mut().unwrap();
    dimensions[0]["families"] = serde_json::json!(["lesion_identification"]);
    dimensions[1]["allow_not_applicable"] = serde_json::json!(true);
    let ids = dimensions
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    conn.execute(
        "UPDATE studies SET rubric_json = ?1 WHERE study_id = ?2",
        [rubric.to_string(), cases::rating::DEMO_STUDY_ID.to_owned()],
    )
    .unwrap();
    ids
}
