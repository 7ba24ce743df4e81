//! The PHI corpus: DICOM slices carrying a marker in every PS3.15 basic-profile attribute this
//! test can write (every text, date and time VR in `identifying_tags`, and every UID the profile
//! replaces), imported, rated, exported in every form and reported on: no marker may appear in
//! the database file, its WAL, any export or any report. Sequences and binary attributes of the
//! profile are not filled (the importer drops identifying attributes by tag, whatever their VR).

use cases::export::{export, Format, What};
use cases::imaging::{identifying_tags, uid_tags_to_replace};
use cases::import::import_bundle;
use cases::progress::NoProgress;
use cases::store::Store;
use dicom_core::dictionary::{DataDictionary, DataDictionaryEntry, VirtualVr};
use dicom_core::{DataElement, PrimitiveValue, Tag, VR};
use dicom_dictionary_std::StandardDataDictionary;
use neurorater_tests::{slice_file, write_small_bundle, Slice};
use rusqlite::params;
use std::path::Path;

/// A marker for `tag` that its VR can hold, or `None` for VRs this test does not fill.
fn marker(tag: Tag, vr: VR, index: usize) -> Option<String> {
    let hex = format!("{:04X}{:04X}", tag.0, tag.1);
    Some(match vr {
        VR::PN => format!("ZZPHI{hex}^MARK"),
        VR::AE | VR::CS | VR::SH => format!("ZZPHI{hex}"),
        VR::LO | VR::LT | VR::ST | VR::UT | VR::UC => format!("ZZPHI {hex} marker text"),
        // Dates and times in 1901, a year no fixture, clock or demo uses.
        VR::DA => format!("1901{:02}{:02}", 1 + index % 12, 1 + index % 28),
        VR::DT => format!("1901{:02}{:02}123456", 1 + index % 12, 1 + index % 28),
        VR::TM => format!("1234{:02}.9{:05}", index % 60, index),
        VR::AS => "077Y".to_owned(),
        VR::UI => format!("2.25.9{index:06}1901"),
        _ => return None,
    })
}

fn exact_vr(tag: Tag) -> Option<VR> {
    match StandardDataDictionary.by_tag(tag)?.vr() {
        VirtualVr::Exact(vr) => Some(vr),
        _ => None,
    }
}

/// Writes the four slices of the small bundle again with every marker planted; returns the
/// markers (the same in every slice, UIDs excepted, which stay unique per file).
fn plant_markers(bundle: &Path) -> Vec<String> {
    let flair = bundle.join("cases/ms-01/flair");
    let mut planted = Vec::new();
    for (file_index, (name, z, instance)) in [
        ("a.dcm", 9.0, 4),
        ("b.dcm", 6.0, 3),
        ("c.dcm", 3.0, 2),
        ("d.dcm", 0.0, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let sop_uid = format!("2.25.3000{instance}");
        let mut file = slice_file(&Slice {
            series_uid: "2.25.2000",
            sop_uid: &sop_uid,
            instance_number: instance,
            z,
            rows: 8,
            columns: 8,
            value: 100 * instance as u16,
            identified: false,
        });
        for (index, &tag) in identifying_tags().iter().enumerate() {
            let Some(vr) = exact_vr(tag) else { continue };
            let Some(value) = marker(tag, vr, index) else {
                continue;
            };
            file.put(DataElement::new(
                tag,
                vr,
                PrimitiveValue::from(value.as_str()),
            ));
            if file_index == 0 {
                planted.push(value);
            }
        }
        // Series and SOP instance UIDs must keep grouping the slices: each file gets its own
        // marker for the other replaced UIDs, and the real ones are themselves markers.
        for (index, &tag) in uid_tags_to_replace().iter().enumerate() {
            if [
                dicom_dictionary_std::tags::SERIES_INSTANCE_UID,
                dicom_dictionary_std::tags::SOP_INSTANCE_UID,
            ]
            .contains(&tag)
            {
                continue;
            }
            let value = format!("2.25.8{file_index}{index:05}1901");
            file.put(DataElement::new(
                tag,
                VR::UI,
                PrimitiveValue::from(value.as_str()),
            ));
            planted.push(value);
        }
        planted.push(sop_uid);
        file.write_to_file(flair.join(name)).unwrap();
    }
    planted.push("2.25.2000".to_owned());
    planted
}

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
    let markers = plant_markers(&bundle);
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
