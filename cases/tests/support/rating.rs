//! The real demo study for the rating tests and the edit bench (`demo_study.rs`: one bundle per
//! process, a database of its own per caller), and what those tests ask of it.
#![allow(dead_code)] // shared by test binaries and the bench through `mod`/`#[path]`; each uses a part

#[path = "demo_study.rs"]
mod demo_study;
#[allow(unused_imports)] // each binary uses a part, as above
pub use demo_study::{demo_bundle, demo_database_at, demo_file, demo_store};

use cases::store::Store;
use rusqlite::Connection;

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
