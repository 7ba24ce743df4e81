//! Several processes writing one database at once (the app and the CLI on the same file): no
//! "database is locked", nothing lost, the audit chain intact. The writers are child processes of
//! this test binary, each with its own connection, as in real use.

use cases::store::audit::{self, Entry, Verdict};
use cases::store::Store;
use std::path::Path;
use std::process::{Child, Command};

const WRITER_DB: &str = "NEURORATER_CONCURRENT_DB";
const WRITER_NAME: &str = "NEURORATER_CONCURRENT_WRITER";
const WRITES_PER_WRITER: usize = 150;

/// The child half: opens the store (creating and migrating it if it is first) and makes
/// [`WRITES_PER_WRITER`] separate changes, each its own transaction, as a rater's edits are.
#[test]
#[ignore = "run by the concurrency tests as a child process"]
fn concurrent_writer_entry() {
    let db = std::env::var_os(WRITER_DB).expect("started by spawn_writer");
    let name = std::env::var(WRITER_NAME).expect("started by spawn_writer");
    let mut store = Store::open(Path::new(&db)).unwrap_or_else(|e| panic!("{name}: {e}"));
    for index in 0..WRITES_PER_WRITER {
        let entity = format!("{name}:{index}");
        let after = serde_json::json!({ "writer": name, "index": index });
        store
            .write(|w| {
                w.audit(&Entry {
                    actor: &name,
                    action: "concurrency-test",
                    entity: &entity,
                    before: None,
                    after: Some(&after),
                })
            })
            .unwrap_or_else(|e| panic!("{name}, write {index}: {e}"));
    }
}

fn spawn_writer(db: &Path, name: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "concurrent_writer_entry",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_DB, db)
        .env(WRITER_NAME, name)
        .spawn()
        .unwrap()
}

fn writes_by(store: &Store, name: &str) -> Vec<String> {
    let mut stmt = store
        .read()
        .prepare("SELECT entity FROM audit_log WHERE actor = ?1 ORDER BY id")
        .unwrap();
    stmt.query_map([name], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn run_writers(db: &Path, names: &[&str]) {
    let children: Vec<(String, Child)> = names
        .iter()
        .map(|name| (name.to_string(), spawn_writer(db, name)))
        .collect();
    for (name, mut child) in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "writer {name} failed: {status}");
    }
    let store = Store::open_existing(db).unwrap();
    for name in names {
        let expected: Vec<String> = (0..WRITES_PER_WRITER)
            .map(|i| format!("{name}:{i}"))
            .collect();
        assert_eq!(writes_by(&store, name), expected, "writes of {name}");
    }
    match audit::verify(store.read()).unwrap() {
        Verdict::Intact { .. } => {}
        broken => panic!("the audit chain broke under concurrent writers: {broken:?}"),
    }
}

#[test]
fn three_processes_writing_one_existing_database_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    drop(Store::open(&db).unwrap());
    run_writers(&db, &["app", "cli", "second-cli"]);
}

#[test]
fn processes_creating_the_same_new_database_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh.sqlite");
    run_writers(&db, &["first", "second", "third", "fourth"]);
}
