//! The PHI corpus: DICOM slices carrying a marker in every PS3.15 basic-profile attribute this
//! test can write (every text, date and time VR in `identifying_tags`, and every UID the profile
//! replaces), imported, rated, exported in every form and reported on: no marker may appear in
//! the database file, its WAL, any export or any report. Sequences and binary attributes of the
//! profile are not filled (the importer drops identifying attributes by tag, whatever their VR).

use cases::export::{export, Format, What};
use cases::import::import_bundle;
use cases::progress::NoProgress;
use cases::store::Store;
use neurorater_tests::phi::plant_identifiers;
use neurorater_tests::write_small_bundle;
use rusqlite::params;

fn rate(store: &mut Store) {
    store
        .write(|w| {
            let tx = w.tx();
            for (id, name) in [(1, "dr-a"), (2, "dr-b")] {
                tx.execute(
                    "INSERT INTO raters (id, name, role) VALUES (?1, ?2, 'neuroradiologist')",
                    params![id, name],
                )
                .map_err(|e| w.fail("adding a rater", e))?;
            }
            let responses: Vec<i64> = {
                let mut stmt = tx
                    .prepare("SELECT id FROM responses ORDER BY id")
                    .map_err(|e| w.fail("listing responses", e))?;
                let ids = stmt
                    .query_map([], |row| row.get(0))
                    .map_err(|e| w.fail("listing responses", e))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| w.fail("listing responses", e))?;
                ids
            };
            for (index, response) in responses.iter().enumerate() {
                for rater in [1, 2] {
                    tx.execute(
                        "INSERT INTO ratings (response, rater, overall, status, updated_at, \
                         submitted_at, comment) VALUES (?1, ?2, ?3, 'submitted', \
                         '2026-11-21T10:00:00Z', '2026-11-21T10:00:00Z', 'looks fine')",
                        params![response, rater, 1.0 + ((index + rater as usize) % 5) as f64],
                    )
                    .map_err(|e| w.fail("adding a rating", e))?;
                }
            }
            Ok(())
        })
        .unwrap();
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn no_planted_identifier_reaches_the_database_an_export_or_a_report() {
    let work = tempfile::tempdir().unwrap();
    let bundle = write_small_bundle(&work.path().join("bundle"), false);
    let markers = plant_identifiers(&bundle);
    assert!(markers.len() > 60, "only {} markers planted", markers.len());
    let fixture = std::fs::read(bundle.join("cases/ms-01/flair/a.dcm")).unwrap();
    for marker in markers.iter().filter(|m| m.starts_with("ZZPHI")) {
        assert!(
            contains(&fixture, marker),
            "the fixture must carry {marker}"
        );
    }

    let db_dir = work.path().join("db");
    let db = db_dir.join("neurorater.sqlite");
    let mut store = Store::open(&db).unwrap();
    let summary =
        import_bundle(&mut store, &bundle, &NoProgress).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(summary.identifying_attributes_dropped > 0);
    rate(&mut store);

    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    for what in [What::Ratings, What::Errors, What::GroundTruth] {
        for format in [Format::Csv, Format::Jsonl] {
            let text = export(&store, what, format).unwrap();
            outputs.push((format!("export {what:?} {format:?}"), text.into_bytes()));
        }
    }
    let data = cases::analysis::study_data(&store, "pilot", Some("g-v1")).unwrap();
    let options = calibration::input::ReportOptions {
        grader: Some("g-v1".into()),
        bootstrap_resamples: 50,
        ..Default::default()
    };
    let report = calibration::report::build_report(
        &data.input,
        &options,
        &calibration::bootstrap::NoProgress,
    )
    .unwrap();
    outputs.push((
        "report json".into(),
        calibration::tables::to_json(&report).into_bytes(),
    ));
    outputs.push((
        "report html".into(),
        calibration::html::to_html(&report).into_bytes(),
    ));
    for (name, text) in calibration::tables::to_csv_tables(&report) {
        outputs.push((format!("report {name}"), text.into_bytes()));
    }
    // Read the database while the store is still open, so the WAL is there too.
    for entry in std::fs::read_dir(&db_dir).unwrap() {
        let path = entry.unwrap().path();
        outputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
    }
    drop(store);
    outputs.push(("database after close".into(), std::fs::read(&db).unwrap()));
    assert!(
        outputs.iter().any(|(name, _)| name.ends_with("-wal")),
        "no WAL was read"
    );

    for (name, bytes) in &outputs {
        for marker in &markers {
            assert!(!contains(bytes, marker), "{marker} leaked into {name}");
        }
    }
}
