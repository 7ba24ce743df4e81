//! The store on a real SQLite file: migrations from empty, pragmas, the audit chain.

use cases::store::audit::{self, Entry, Verdict};
use cases::store::{migrations, Store};
use rusqlite::Connection;

#[test]
fn migrations_build_the_schema_from_an_empty_file_and_are_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/db.sqlite");
    let store = Store::open(&path).unwrap();
    let conn = store.read();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, migrations::MIGRATIONS.len() as i64);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for expected in [
        "assignment_plans",
        "assignments",
        "audit_log",
        "cases",
        "error_labels",
        "grader_scores",
        "ground_truth",
        "images",
        "raters",
        "ratings",
        "responses",
        "rater_positions",
        "series",
        "settings",
        "studies",
        "tasks",
    ] {
        assert!(
            tables.iter().any(|t| t == expected),
            "no table {expected}: {tables:?}"
        );
    }
    let foreign_keys: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!((foreign_keys, journal.as_str()), (1, "wal"));
    drop(store);
    // Opening again applies nothing and keeps the version.
    let again = Store::open(&path).unwrap();
    let version: i64 = again
        .read()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, migrations::MIGRATIONS.len() as i64);
    assert!(again.is_empty().unwrap());
}

#[cfg(unix)]
#[test]
fn a_new_database_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    Store::open(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_database_from_a_newer_build_is_refused_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 999).unwrap();
    drop(conn);
    let error = Store::open(&path).err().expect("must refuse");
    assert!(error.to_string().contains("schema version 999"), "{error}");
}

fn append(store: &mut Store, action: &str, after: serde_json::Value) {
    store
        .write(|w| {
            w.audit(&Entry {
                actor: "tester",
                action,
                entity: "rating:1",
                before: None,
                after: Some(&after),
            })
        })
        .unwrap();
}

#[test]
fn the_audit_chain_verifies_and_names_the_first_tampered_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let mut store = Store::open(&path).unwrap();
    for score in 1..=4 {
        append(
            &mut store,
            "set score",
            serde_json::json!({ "overall": score }),
        );
    }
    assert_eq!(
        audit::verify(store.read()).unwrap(),
        Verdict::Intact { entries: 4 }
    );

    // The triggers refuse edits through the app's own connection…
    let refused = store
        .read()
        .execute("UPDATE audit_log SET actor = 'mallory' WHERE id = 2", []);
    assert!(refused.is_err());
    // …so a tamperer drops them first, from another client.
    drop(store);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER audit_log_is_append_only_update;
         UPDATE audit_log SET after_json = '{\"overall\":5}' WHERE id = 3;",
    )
    .unwrap();
    match audit::verify(&conn).unwrap() {
        Verdict::Broken { entry_id, reason } => {
            assert_eq!(entry_id, 3);
            assert!(reason.contains("edited"), "{reason}");
        }
        other => panic!("tampering not detected: {other:?}"),
    }
}

#[test]
fn deleting_an_audit_entry_breaks_the_chain_at_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let mut store = Store::open(&path).unwrap();
    for score in 1..=3 {
        append(
            &mut store,
            "set score",
            serde_json::json!({ "overall": score }),
        );
    }
    drop(store);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER audit_log_is_append_only_delete; DELETE FROM audit_log WHERE id = 2;",
    )
    .unwrap();
    assert!(matches!(
        audit::verify(&conn).unwrap(),
        Verdict::Broken { entry_id: 3, .. }
    ));
}

#[test]
fn backup_and_restore_round_trip_and_keep_the_replaced_content() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let mut store = Store::open(&db).unwrap();
    append(&mut store, "first", serde_json::json!(1));
    let backup = dir.path().join("backup.sqlite");
    store.backup_to(&backup).unwrap();
    append(&mut store, "second", serde_json::json!(2));
    drop(store);

    let saved = cases::store::restore(&backup, &db).unwrap();
    let restored = Store::open(&db).unwrap();
    let count = |conn: &Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count(restored.read()), 1);
    assert_eq!(count(Store::open(&saved).unwrap().read()), 2);
    assert!(store_backup_refuses_to_overwrite(&restored, &backup));
}

fn store_backup_refuses_to_overwrite(store: &Store, existing: &std::path::Path) -> bool {
    store.backup_to(existing).is_err()
}

/// A database written by the first release (schema 1) keeps its ratings and their error labels
/// when the ratings table is rebuilt for repeat reads.
#[test]
fn ratings_and_their_labels_survive_the_migration_to_repeat_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.sqlite");
    let mut conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute_batch(migrations::MIGRATIONS[0]).unwrap();
    tx.pragma_update(None, "user_version", 1).unwrap();
    tx.execute_batch(
        "INSERT INTO studies VALUES (1, 's', 'S', '', '{}', '{}', '/b');
         INSERT INTO cases VALUES (1, 1, 'c1', 'stroke', 'CT', 70, 'F', '{}', '');
         INSERT INTO tasks VALUES (1, 1, 't1', 'differential_diagnosis', 1, 'p', '[]');
         INSERT INTO responses VALUES (1, 1, 'm', 0, 'a', 'r', NULL, '{}');
         INSERT INTO raters VALUES (1, 'dr a', 'neurologist', 5);
         INSERT INTO ratings (id, response, rater, overall, status, updated_at)
             VALUES (7, 1, 1, 4.0, 'submitted', '2026-01-01');
         INSERT INTO error_labels (rating, category, severity, span_start, span_end)
             VALUES (7, 'R1', 2, 0, 3);
         INSERT INTO error_labels (rating, category, severity, mark_json)
             VALUES (7, 'P1', 3, '{}');",
    )
    .unwrap();
    tx.commit().unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let conn = store.read();
    let (read_no, overall, status): (i64, f64, String) = conn
        .query_row(
            "SELECT read_no, overall, status FROM ratings WHERE id = 7",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((read_no, overall, status.as_str()), (1, 4.0, "submitted"));
    let labels: i64 = conn
        .query_row(
            "SELECT count(*) FROM error_labels WHERE rating = 7",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(labels, 2);
    // Labels made before answers and turns could be labelled lie in the rationale; a mark-only
    // label lies in no text.
    let places: Vec<(String, Option<String>, Option<i64>)> = conn
        .prepare("SELECT category, span_text, span_turn FROM error_labels ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        places,
        [
            ("R1".to_owned(), Some("rationale".to_owned()), None),
            ("P1".to_owned(), None, None)
        ]
    );
    // The table keeps a text with its span, and a turn with a turn label only.
    for (text, turn) in [("'turn'", "NULL"), ("'answer'", "2"), ("NULL", "NULL")] {
        let insert = format!(
            "INSERT INTO error_labels (rating, category, severity, span_start, span_end, span_text,
                 span_turn) VALUES (7, 'R4', 2, 0, 1, {text}, {turn})"
        );
        assert!(
            conn.execute(&insert, []).is_err(),
            "{text} {turn} was stored"
        );
    }
    let foreign_keys: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(foreign_keys, 1);
}

/// A plan made before plans could be the study lead's keeps its maker, its queue and every
/// reference to it when the table is rebuilt to allow none (migration 20).
#[test]
fn plans_and_their_assignments_survive_the_rebuild_that_lets_the_study_lead_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.sqlite");
    let mut conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute_batch(migrations::MIGRATIONS[0]).unwrap();
    tx.execute_batch(migrations::MIGRATIONS[1]).unwrap();
    tx.pragma_update(None, "user_version", 2).unwrap();
    tx.execute_batch(
        "INSERT INTO studies VALUES (1, 's', 'S', '', '{}', '{}', '/b');
         INSERT INTO cases VALUES (1, 1, 'c1', 'stroke', 'CT', 70, 'F', '{}', '');
         INSERT INTO tasks VALUES (1, 1, 't1', 'differential_diagnosis', 1, 'p', '[]');
         INSERT INTO responses VALUES (1, 1, 'm', 0, 'a', 'r', NULL, '{}');
         INSERT INTO raters VALUES (1, 'dr a', 'neurologist', 5);
         INSERT INTO assignment_plans VALUES (4, 1, 'pilot', -9, 0.5, 0.0, 0, 1, '2026-01-01');
         INSERT INTO assignments (id, plan, rater, response, position, overlap)
             VALUES (9, 4, 1, 1, 1, 0);",
    )
    .unwrap();
    tx.commit().unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let conn = store.read();
    let plan: (i64, String, i64, Option<i64>) = conn
        .query_row(
            "SELECT p.id, p.name, p.seed, p.created_by FROM assignments a
             JOIN assignment_plans p ON a.plan = p.id WHERE a.id = 9",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(plan, (4, "pilot".to_owned(), -9, Some(1)));
    let dangling: i64 = conn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(dangling, 0);
    // The study lead's plan: no maker.
    conn.execute(
        "INSERT INTO assignment_plans (study, name, seed, overlap_share, repeat_share,
             repeat_after_days, created_by, created_at) VALUES (1, 'lead', 1, 0, 0, 0, NULL, 'now')",
        [],
    )
    .unwrap();
}
