//! `neurorater package` as real processes on the demo study: a lead's database and a remote
//! rater's, the packages between them; a merge twice leaves the lead's file as it was, a conflict
//! exits 2 and is listed, a damaged package exits 2 naming the member.

mod support;

use cases::rating::{RatingEdit, DEMO_STUDY_ID};
use cases::store::Store;
use std::collections::BTreeMap;
use std::path::Path;
use support::{digest, neurorater};

fn ok(args: &[&str]) -> serde_json::Value {
    let out = neurorater(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Saves a draft of the rater's first queue item with `comment`, through the domain crate (the
/// CLI has no rating command; the app does this).
fn rate_first(db: &Path, rater: &str, comment: &str) {
    let mut store = Store::open_existing(db).unwrap();
    let id = store
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == rater)
        .unwrap()
        .id;
    let first = store.reading_queue(id, DEMO_STUDY_ID).unwrap()[0].assignment;
    store
        .save_rating(
            id,
            first,
            &RatingEdit {
                overall: Some(3.0),
                not_applicable: Default::default(),
                dimensions: BTreeMap::new(),
                correctness: None,
                confidence: Some(3),
                comment: comment.into(),
                seconds_on_task: 30.0,
            },
        )
        .unwrap();
}

#[test]
fn lead_to_remote_and_back_from_the_command_line() {
    let work = tempfile::tempdir().unwrap();
    let path = |name: &str| work.path().join(name).to_str().unwrap().to_owned();
    let (bundle, lead, remote) = (path("demo"), path("lead.sqlite"), path("b/remote.sqlite"));
    assert!(neurorater(&["demo", "--out", &bundle]).status.success());
    assert!(neurorater(&["import", &bundle, "--db", &lead])
        .status
        .success());
    for (name, role) in [("Dr Lead", "curator"), ("Dr Remote", "neurologist")] {
        ok(&["rater", "add", name, "--role", role, "--db", &lead]);
    }
    ok(&[
        "assign",
        "--db",
        &lead,
        "--study",
        DEMO_STUDY_ID,
        "--name",
        "site-b",
        "--seed",
        "7",
        "--lead",
        "Dr Lead",
        "--rater",
        "Dr Remote",
        "--per-rater",
        "5",
    ]);

    let package = path("dr-remote.nrpkg.tar");
    let exported = ok(&[
        "package",
        "export-rater",
        "--db",
        &lead,
        "--study",
        DEMO_STUDY_ID,
        "--rater",
        "Dr Remote",
        "--site",
        "Site B",
        "--out",
        &package,
        "--json",
    ]);
    assert_eq!(exported["items"], 5);
    // A damaged copy is refused (exit 2) and leaves no database behind.
    let damaged = path("damaged.tar");
    let mut bytes = std::fs::read(&package).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&damaged, bytes).unwrap();
    let out = neurorater(&["package", "import", "--db", &remote, &damaged]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!Path::new(&remote).exists());

    let imported = ok(&["package", "import", "--db", &remote, &package, "--json"]);
    assert_eq!(imported["package_id"], exported["package_id"]);
    assert_eq!(imported["already_imported"], false);
    let again = ok(&["package", "import", "--db", &remote, &package, "--json"]);
    assert_eq!(again["already_imported"], true);

    rate_first(Path::new(&remote), "Dr Remote", "from site B");
    let results = path("results.tar");
    let written = ok(&[
        "package",
        "export-results",
        "--db",
        &remote,
        "--out",
        &results,
        "--json",
    ]);
    assert_eq!(
        (written["rated"].as_u64(), written["items"].as_u64()),
        (Some(1), Some(5))
    );

    let merged = ok(&["package", "merge", "--db", &lead, &results, "--json"]);
    assert_eq!(merged["added"], 1);
    assert_eq!(merged["conflicts"], serde_json::json!([]));
    let before = digest(Path::new(&lead));
    let twice = ok(&["package", "merge", "--db", &lead, &results, "--json"]);
    assert_eq!(
        (twice["added"].as_u64(), twice["unchanged"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        digest(Path::new(&lead)),
        before,
        "a second merge changed the database"
    );

    // Edited at both sites: listed, exit 2, the lead's version kept.
    rate_first(Path::new(&lead), "Dr Remote", "edited at the lead");
    rate_first(Path::new(&remote), "Dr Remote", "edited at site B");
    let results = path("results-2.tar");
    ok(&[
        "package",
        "export-results",
        "--db",
        &remote,
        "--out",
        &results,
        "--json",
    ]);
    let out = neurorater(&["package", "merge", "--db", &lead, &results, "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["conflicts"][0]["kind"], "edited_at_lead");
    assert_eq!(report["conflicts"][0]["item"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ratings.jsonl:1: item 1"), "{stderr}");
    let kept: String = rusqlite::Connection::open(&lead)
        .unwrap()
        .query_row("SELECT comment FROM ratings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, "edited at the lead");

    // One changed byte: refused whole, naming the member, the database untouched.
    let mut bytes = std::fs::read(&results).unwrap();
    let at = bytes
        .windows(b"edited at site B".len())
        .position(|w| w == b"edited at site B")
        .unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(&results, bytes).unwrap();
    let before = digest(Path::new(&lead));
    let out = neurorater(&["package", "merge", "--db", &lead, &results]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ratings.jsonl: sha256"), "{stderr}");
    assert_eq!(digest(Path::new(&lead)), before);
}
