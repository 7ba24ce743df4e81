//! Nothing of a case's identity reaches a blinded reader. Every reader-facing payload the desktop
//! builds is made for every response of the real demo study — the reading item a rater opens and
//! the rater package a lead sends (its whole file: member names, JSON, every image's bytes) — and
//! searched for every case id, which may name the diagnosis (`ms-01`), and for the case's
//! disease group. The team server's item is searched the same way by
//! `server/tests/api.rs`.

#[path = "support/rating.rs"]
mod rating_support;

use cases::package::{export_rater_package, import_rater_package};
use cases::progress::NoProgress;
use cases::rating::{PlanSpec, RaterRole, DEMO_STUDY_ID};
use cases::store::Store;
use rating_support::demo_store;
use std::collections::BTreeSet;

/// The demo study's case ids.
fn case_ids(store: &Store) -> Vec<String> {
    let ids: Vec<String> = store
        .cases(DEMO_STUDY_ID)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids.len(), 12, "the demo study's twelve cases");
    ids
}

fn assert_no_case_id(what: &str, bytes: &[u8], ids: &[String]) {
    for id in ids {
        let found = bytes.windows(id.len()).any(|w| w == id.as_bytes());
        assert!(!found, "{what} holds the case id {id:?}");
    }
}

/// Every object key of `value`, at any depth.
fn keys<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        serde_json::Value::Object(fields) => {
            for (key, field) in fields {
                out.push(key);
                keys(field, out);
            }
        }
        _ => {}
    }
}

#[test]
fn no_reading_item_names_its_case() {
    let (_dir, mut store) = demo_store();
    let ids = case_ids(&store);
    let rater = store
        .create_rater("Dr Blind", RaterRole::Neuroradiologist, Some(9))
        .unwrap()
        .id;
    store.ensure_demo_queue(rater).unwrap();
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(queue.len(), 288, "every response of the demo study");
    let codes = store.case_codes(DEMO_STUDY_ID).unwrap();
    let expected: BTreeSet<String> = ids.iter().map(|id| codes.code(id)).collect();
    let mut seen = BTreeSet::new();
    for entry in &queue {
        let item = store.reading_item(rater, entry.assignment).unwrap();
        seen.insert(item.case.case_code.clone());
        let json = serde_json::to_value(&item).unwrap();
        let what = format!("the reading item of assignment {}", entry.assignment);
        assert_no_case_id(&what, json.to_string().as_bytes(), &ids);
        let mut named = Vec::new();
        keys(&json, &mut named);
        assert!(
            !named.contains(&"disease_group"),
            "{what} names the disease group"
        );
    }
    // Every case was read, each by its code, and the codes are the case list's.
    assert_eq!(seen, expected);
}

#[test]
fn no_rater_package_names_a_case_in_any_byte() {
    let (dir, mut store) = demo_store();
    let ids = case_ids(&store);
    let rater = store
        .create_rater("Dr Remote", RaterRole::Neurologist, Some(4))
        .unwrap()
        .id;
    store
        .create_assignment_plan(
            rater,
            &PlanSpec {
                study_id: DEMO_STUDY_ID.into(),
                name: "every response".into(),
                seed: 7,
                raters: vec![rater],
                overlap_share: 0.0,
                responses_per_rater: None,
                repeat_share: 0.0,
                repeat_after_days: 0,
                stratify_by: Vec::new(),
            },
        )
        .unwrap();
    let package = dir.path().join("rater.tar");
    let exported = export_rater_package(
        &mut store,
        DEMO_STUDY_ID,
        "Dr Remote",
        "Site B",
        &package,
        &NoProgress,
    )
    .unwrap();
    assert_eq!(exported.cases, 12, "the package carries every case");
    // The whole file: tar headers (member names), JSON lines and every de-identified image.
    let bytes = std::fs::read(&package).unwrap();
    assert_no_case_id("the rater package", &bytes, &ids);
    let mut archive = tar::Archive::new(bytes.as_slice());
    let mut case_files = 0;
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        if !name.ends_with("/case.json") {
            continue;
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        let case: serde_json::Value = serde_json::from_str(&text).unwrap();
        // The bundle format needs the field: every case says the same, which tells nothing.
        assert_eq!(case["disease_group"], "other_abnormality", "{name}");
        assert_eq!(
            name,
            format!("bundle/cases/{}/case.json", case["id"].as_str().unwrap())
        );
        case_files += 1;
    }
    assert_eq!(case_files, 12);

    // The rater's database, once the package is imported, knows the cases by their codes only.
    let remote_dir = tempfile::tempdir().unwrap();
    let mut remote = Store::open(&remote_dir.path().join("remote.sqlite")).unwrap();
    import_rater_package(&mut remote, &package, &NoProgress).unwrap();
    let held: Vec<String> = remote
        .cases(DEMO_STUDY_ID)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let lead_codes = store.case_codes(DEMO_STUDY_ID).unwrap();
    let expected: BTreeSet<String> = ids.iter().map(|id| lead_codes.code(id)).collect();
    assert_eq!(held.iter().cloned().collect::<BTreeSet<_>>(), expected);
    drop(remote);
    // Every file the import left at the rater's site: the database (and its journal) and the
    // images it unpacked.
    for file in walkdir::WalkDir::new(remote_dir.path()) {
        let file = file.unwrap();
        let relative = file.path().strip_prefix(remote_dir.path()).unwrap();
        assert_no_case_id(
            "a path at the rater's site",
            relative.to_string_lossy().as_bytes(),
            &ids,
        );
        if file.file_type().is_file() {
            let what = format!("{} at the rater's site", file.path().display());
            assert_no_case_id(&what, &std::fs::read(file.path()).unwrap(), &ids);
        }
    }
}
