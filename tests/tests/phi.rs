//! The PHI corpus: DICOM slices carrying a marker in every PS3.15 basic-profile attribute this
//! test can write (every text, date and time VR in `identifying_tags`, and every UID the profile
//! replaces), a NIfTI series and key images with markers in their free-text metadata, imported,
//! rated, exported in every form (the DICOM SR with its image copies included), reported on and
//! packaged for a remote rater: no marker may appear in the database file, its WAL, any export,
//! any report or any byte of the rater package (gzipped members read unzipped too). Sequences
//! and binary attributes of the profile are not filled (the importer drops identifying
//! attributes by tag, whatever their VR).

use cases::export::{export, Format, What};
use cases::import::import_bundle_dir;
use cases::package::export_rater_package;
use cases::progress::NoProgress;
use cases::rating::{PlanSpec, RaterRole};
use cases::store::Store;
use neurorater_tests::phi::{plant_identifiers, plant_in_other_images};
use neurorater_tests::write_small_bundle;
use rusqlite::params;
use std::io::Read;

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

/// Where `needle` is in `haystack`, if anywhere. The package's replacement UIDs (`2.25.` and 39
/// random-looking digits) hold any short run of digits once in a while, so a run of digits inside
/// a longer number does not count: a UID marker followed by another digit, and a marker made of
/// digits alone (a planted date) preceded by one. A leaked value stands on its own: after a
/// delimiter in text, after its length field in DICOM. (A planted date once turned up inside a
/// replacement UID and failed CI, 2026-11-26.)
fn find(haystack: &[u8], needle: &str) -> Option<usize> {
    let uid = needle.starts_with("2.25.");
    let digits = needle.bytes().all(|b| b.is_ascii_digit());
    haystack
        .windows(needle.len())
        .enumerate()
        .find(|(at, window)| {
            let digit_after = haystack
                .get(at + needle.len())
                .is_some_and(u8::is_ascii_digit);
            let digit_before = at
                .checked_sub(1)
                .is_some_and(|b| haystack[b].is_ascii_digit());
            *window == needle.as_bytes() && !(uid && digit_after) && !(digits && digit_before)
        })
        .map(|(at, _)| at)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    find(haystack, needle).is_some()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut plain)
        .unwrap();
    plain
}

/// A remote rater's package of the whole study: every member, by name, gzipped ones unzipped as
/// well (as `NAME (gunzipped)`), and the tar file itself.
fn rater_package(store: &mut Store, dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let rater = store
        .create_rater("Dr Remote", RaterRole::Neuroradiologist, Some(5))
        .unwrap()
        .id;
    store
        .create_assignment_plan(
            rater,
            &PlanSpec {
                study_id: "pilot".into(),
                name: "remote".into(),
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
    let package = dir.join("rater.tar");
    export_rater_package(store, "pilot", "Dr Remote", "Site B", &package, &NoProgress).unwrap();
    let bytes = std::fs::read(&package).unwrap();
    let mut members = vec![("rater package file".to_owned(), bytes.clone())];
    let mut archive = tar::Archive::new(&bytes[..]);
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = format!("package member {}", entry.path().unwrap().display());
        let mut content = Vec::new();
        entry.read_to_end(&mut content).unwrap();
        if content.starts_with(&[0x1F, 0x8B]) {
            members.push((format!("{name} (gunzipped)"), gunzip(&content)));
        }
        members.push((name, content));
    }
    members
}

#[test]
fn no_planted_identifier_reaches_the_database_an_export_or_a_report() {
    let work = tempfile::tempdir().unwrap();
    let bundle = write_small_bundle(&work.path().join("bundle"), false);
    let mut markers = plant_identifiers(&bundle);
    assert!(markers.len() > 60, "only {} markers planted", markers.len());
    let fixture = std::fs::read(bundle.join("cases/ms-01/flair/a.dcm")).unwrap();
    for marker in markers.iter().filter(|m| m.starts_with("ZZPHI")) {
        assert!(
            contains(&fixture, marker),
            "the fixture must carry {marker}"
        );
    }
    let image_markers = plant_in_other_images(&bundle);
    assert_eq!(image_markers.len(), 11);
    let case = bundle.join("cases/ms-01");
    let nifti = std::fs::read(case.join("t1.nii.gz")).unwrap();
    let image_files = [
        gunzip(&nifti),
        nifti,
        std::fs::read(case.join("keys/01.png")).unwrap(),
        std::fs::read(case.join("keys/03.jpg")).unwrap(),
    ];
    for marker in &image_markers {
        assert!(
            image_files.iter().any(|bytes| contains(bytes, marker)),
            "an image file must carry {marker}"
        );
    }
    markers.extend(image_markers);

    let db_dir = work.path().join("db");
    let db = db_dir.join("neurorater.sqlite");
    let mut store = Store::open(&db).unwrap();
    let summary =
        import_bundle_dir(&mut store, &bundle, &NoProgress).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(summary.identifying_attributes_dropped > 0);
    rate(&mut store);

    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    for what in [What::Ratings, What::Errors, What::GroundTruth] {
        for format in [Format::Csv, Format::Jsonl] {
            let text = export(&store, what, format).unwrap();
            outputs.push((format!("export {what:?} {format:?}"), text.into_bytes()));
        }
    }
    // The marks as DICOM SR, with the de-identified copies of the images they lie on.
    let sr = work.path().join("sr");
    let written =
        cases::app::exports::dicom_sr(&store, &cases::app::Session::command_line(), "pilot", &sr)
            .unwrap();
    assert!(written.reports > 0 && written.images > 0, "{written:?}");
    let mut folders = vec![sr];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                outputs.push((
                    format!("export sr {}", path.display()),
                    std::fs::read(&path).unwrap(),
                ));
            }
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
    outputs.extend(rater_package(&mut store, work.path()));
    assert!(
        outputs
            .iter()
            .any(|(name, _)| name.ends_with("t1.nii.gz (gunzipped)")),
        "the NIfTI series is in the package"
    );
    assert!(
        outputs.iter().any(|(name, _)| name.ends_with(".jpg")),
        "the JPEG key image is in the package"
    );
    drop(store);
    outputs.push(("database after close".into(), std::fs::read(&db).unwrap()));
    assert!(
        outputs.iter().any(|(name, _)| name.ends_with("-wal")),
        "no WAL was read"
    );

    for (name, bytes) in &outputs {
        for marker in &markers {
            if let Some(at) = find(bytes, marker) {
                let around =
                    &bytes[at.saturating_sub(40)..(at + marker.len() + 40).min(bytes.len())];
                panic!(
                    "{marker} leaked into {name} at byte {at}: {:?}",
                    String::from_utf8_lossy(around)
                );
            }
        }
    }
}
