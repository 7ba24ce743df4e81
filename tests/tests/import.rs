//! Bundle import end to end on real files: what is stored, ordering, idempotence, updates,
//! de-identification.

use cases::import::import_bundle_dir;
use cases::progress::NoProgress;
use cases::store::Store;
use cases::ImportError;
use neurorater_tests::{write_small_bundle, PHI_MARKERS};
use rusqlite::params;
use std::path::Path;

fn table_dump(store: &Store) -> String {
    let mut dump = String::new();
    for table in [
        "studies",
        "cases",
        "series",
        "images",
        "tasks",
        "responses",
        "grader_scores",
        "ground_truth",
        "ratings",
        "audit_log",
    ] {
        let mut stmt = store
            .read()
            .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
            .unwrap();
        let columns = stmt.column_count();
        let rows = stmt
            .query_map([], |row| {
                (0..columns)
                    .map(|i| {
                        row.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap();
        for row in rows {
            dump.push_str(&format!("{table}: {}\n", row.unwrap().join(" | ")));
        }
    }
    dump
}

fn import(store: &mut Store, dir: &Path) -> cases::import::ImportSummary {
    import_bundle_dir(store, dir, &NoProgress).unwrap_or_else(|e| match e {
        ImportError::Invalid(problems) => panic!(
            "{}",
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        ),
        ImportError::Store(e) => panic!("{e}"),
    })
}

#[test]
fn a_small_bundle_is_stored_field_by_field() {
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), false);
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    let summary = import(&mut store, bundle.path());
    assert_eq!(
        (summary.cases, summary.series, summary.images, summary.tasks),
        (1, 2, 6, 2)
    );
    assert_eq!(
        (summary.responses_added, summary.grader_scores_added),
        (4, 2)
    );

    let studies = store.studies().unwrap();
    assert_eq!(studies.len(), 1);
    assert_eq!(
        (
            studies[0].id.as_str(),
            studies[0].title.as_str(),
            studies[0].n_responses
        ),
        ("pilot", "Pilot study", 4)
    );
    let case = store.case("pilot", "ms-01").unwrap();
    assert_eq!(case.summary.age, 34);
    assert_eq!(case.summary.series_labels, ["FLAIR", "Key images"]);
    assert_eq!(case.ehr["EDSS"], serde_json::json!(2.0));
    assert_eq!(case.ehr["oligoclonal_bands"], serde_json::json!(true));
    assert_eq!(
        case.clinical_note,
        "Painful loss of vision in the left eye for 5 days."
    );
    assert_eq!(case.tasks[0].key_images[0].slice, 2);
    assert_eq!(case.tasks[1].level, 2);

    // The DICOM series is ordered along the slice normal (z 0, 3, 6, 9), not by file name.
    let flair = store.series_files(case.series[0].key).unwrap();
    let names: Vec<String> = flair
        .files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["d.dcm", "c.dcm", "b.dcm", "a.dcm"]);
    flair.verify().unwrap();

    // Responses reach the rater without the model's name; unknown fields were kept in storage.
    let responses = store.responses(case.tasks[0].key).unwrap();
    assert_eq!(responses.len(), 3);
    let payload = serde_json::to_string(&responses).unwrap();
    assert!(
        !payload.contains("vlm-a") && !payload.contains("vlm-b"),
        "{payload}"
    );
    let extra: String = store
        .read()
        .query_row(
            "SELECT extra_json FROM responses WHERE model = 'vlm-a' AND sample = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(extra, r#"{"run_id":"kept-unknown-field"}"#);
    let turns = store.responses(case.tasks[1].key).unwrap()[0]
        .turns
        .clone()
        .unwrap();
    assert_eq!(turns[1].content, "Periventricular.");
    let errors: String = store
        .read()
        .query_row(
            "SELECT errors_json FROM grader_scores WHERE score = 2",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        errors,
        r#"[{"category":"P4","quote":"left temporal lobe"}]"#
    );
}

#[test]
fn reimporting_the_same_bundle_changes_nothing() {
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), false);
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    import(&mut store, bundle.path());
    let before = table_dump(&store);
    let again = import(&mut store, bundle.path());
    assert_eq!(
        (
            again.responses_added,
            again.grader_scores_added,
            again.rows_written
        ),
        (0, 0, 0)
    );
    assert_eq!(again.responses_already_stored, 4);
    assert_eq!(table_dump(&store), before);
}

#[test]
fn an_updated_bundle_adds_responses_and_keeps_existing_ratings() {
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), false);
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    import(&mut store, bundle.path());
    store
        .write(|w| {
            w.tx()
                .execute_batch(
                    "INSERT INTO raters (name, role, years_experience) VALUES ('dr-a', 'neuroradiologist', 12);
                     INSERT INTO ratings (response, rater, overall, updated_at)
                       SELECT id, 1, 4, '2026-11-21T00:00:00Z' FROM responses WHERE sample = 0 AND model = 'vlm-a';",
                )
                .map_err(|e| w.fail("seeding a rating", e))
        })
        .unwrap();

    let mut responses = std::fs::read_to_string(bundle.path().join("responses.jsonl")).unwrap();
    responses.push_str(
        r#"{"case_id": "ms-01", "task_id": "dx", "model": "vlm-c", "sample": 0, "answer": "NMOSD"}"#,
    );
    std::fs::write(bundle.path().join("responses.jsonl"), responses).unwrap();
    let summary = import(&mut store, bundle.path());
    assert_eq!(
        (summary.responses_added, summary.responses_already_stored),
        (1, 4)
    );
    let overall: f64 = store
        .read()
        .query_row("SELECT overall FROM ratings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(overall, 4.0);
}

#[test]
fn changing_a_stored_response_is_refused_with_its_line() {
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), false);
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    import(&mut store, bundle.path());
    let before = table_dump(&store);
    let path = bundle.path().join("responses.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("Dawson's fingers.", "Changed text.")).unwrap();
    match import_bundle_dir(&mut store, bundle.path(), &NoProgress) {
        Err(ImportError::Invalid(problems)) => {
            let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert!(
                lines[0].starts_with("responses.jsonl:3: answer: this response is already stored with different text"),
                "{lines:?}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(table_dump(&store), before);
}

#[test]
fn a_moved_or_changed_image_is_reported_by_name_never_shown() {
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), false);
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    import(&mut store, bundle.path());
    let case = store.case("pilot", "ms-01").unwrap();
    let keys = store.series_files(case.series[1].key).unwrap();

    image::GrayImage::from_pixel(6, 4, image::Luma([41u8]))
        .save(&keys.files[0].path)
        .unwrap();
    let changed = keys.verify().unwrap_err().to_string();
    assert!(
        changed.contains("01.png") && changed.contains("changed since it was imported"),
        "{changed}"
    );

    std::fs::remove_file(&keys.files[1].path).unwrap();
    let fresh = store.series_files(case.series[1].key).unwrap();
    std::fs::remove_file(&fresh.files[0].path).unwrap();
    let missing = fresh.verify().unwrap_err().to_string();
    assert!(
        missing.contains("01.png") && missing.contains("moved"),
        "{missing}"
    );
}

#[test]
fn identifying_dicom_attributes_never_reach_the_database_file() {
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), true);
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("db.sqlite");
    let mut store = Store::open(&db).unwrap();
    let summary = import(&mut store, bundle.path());
    // The planted markers in each of the 4 slices, plus the fixture's SeriesDescription, which
    // the basic profile also removes (free text can name the patient).
    assert_eq!(
        summary.identifying_attributes_dropped,
        4 * (PHI_MARKERS.len() + 1)
    );
    drop(store);

    // Every file SQLite may have written (the WAL is checkpointed on close, but look anyway).
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(db_dir.path()).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    assert!(bytes.len() > 4096);
    let planted = bundle.path().join("cases/ms-01/flair/a.dcm");
    let dicom_bytes = std::fs::read(planted).unwrap();
    for (_, _, marker) in PHI_MARKERS {
        let needle = marker.as_bytes();
        assert!(
            dicom_bytes.windows(needle.len()).any(|w| w == needle),
            "the fixture must carry {marker}"
        );
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "{marker} leaked into the database"
        );
    }
}

#[test]
fn ratings_keep_their_response_when_a_rater_is_added_twice_by_name() {
    // The schema, not only the UI, keeps one rating per rater and response.
    let bundle = tempfile::tempdir().unwrap();
    write_small_bundle(bundle.path(), false);
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    import(&mut store, bundle.path());
    let duplicate = store.write(|w| {
        let tx = w.tx();
        tx.execute(
            "INSERT INTO raters (name, role) VALUES (?1, 'neurologist')",
            params!["dr-b"],
        )
        .map_err(|e| w.fail("adding a rater", e))?;
        for _ in 0..2 {
            tx.execute(
                "INSERT INTO ratings (response, rater, updated_at) VALUES (1, 1, 'now')",
                [],
            )
            .map_err(|e| w.fail("adding a rating", e))?;
        }
        Ok(())
    });
    assert!(duplicate.is_err());
    let raters: i64 = store
        .read()
        .query_row("SELECT count(*) FROM raters", [], |r| r.get(0))
        .unwrap();
    assert_eq!(raters, 0, "the failed write must roll back whole");
}

#[test]
fn the_demo_bundle_round_trips_every_field_through_import() {
    let bundle = tempfile::tempdir().unwrap();
    let demo = demo::write_demo_bundle(bundle.path(), &NoProgress).unwrap();
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("db.sqlite")).unwrap();
    let summary = import(&mut store, bundle.path());
    assert_eq!(
        (summary.cases, summary.series, summary.images),
        (demo.cases, demo.series, demo.images)
    );
    assert_eq!(summary.responses_added, demo.responses);
    assert_eq!(summary.grader_scores_added, demo.grader_scores);

    // Compare what the store gives back with the bundle's own files, read independently.
    let loaded = cases::bundle::load(bundle.path(), &NoProgress).unwrap();
    let study_id = &loaded.study.study.id;
    for bundle_case in &loaded.cases {
        let written = &bundle_case.case;
        let stored = store.case(study_id, &written.id).unwrap();
        assert_eq!(stored.summary.disease_group, Some(written.disease_group));
        assert_eq!(stored.summary.modality, written.modality);
        assert_eq!(stored.summary.age, written.age);
        assert_eq!(stored.summary.sex, written.sex);
        assert_eq!(stored.ehr, written.ehr);
        assert_eq!(stored.clinical_note, written.clinical_note);
        let labels: Vec<&str> = written.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(stored.summary.series_labels, labels);
        for (series, images) in stored.series.iter().zip(&bundle_case.series) {
            assert_eq!(series.n_images as usize, images.len());
        }
        let mut tasks = written.tasks.clone();
        tasks.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(stored.tasks.len(), tasks.len());
        for (stored_task, task) in stored.tasks.iter().zip(&tasks) {
            assert_eq!(
                (
                    &stored_task.id,
                    stored_task.family,
                    stored_task.level,
                    &stored_task.prompt
                ),
                (&task.id, task.family, task.level, &task.prompt)
            );
            assert_eq!(stored_task.key_images, task.key_images);
        }
        let truth: String = store
            .read()
            .query_row(
                "SELECT g.body_json FROM ground_truth g JOIN cases c ON g.case_ref = c.id
                 WHERE c.case_id = ?1",
                [&written.id],
                |r| r.get(0),
            )
            .unwrap();
        let truth: cases::model::GroundTruth = serde_json::from_str(&truth).unwrap();
        assert_eq!(Some(truth), written.ground_truth);
    }
    let stored_responses: i64 = store
        .read()
        .query_row("SELECT count(*) FROM responses", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored_responses as usize, loaded.responses.len());
}
