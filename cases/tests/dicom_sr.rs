//! `export --what sr` (docs/formats.md §9, docs/dicom-sr.md) read back by readers kept out of the
//! product: pydicom and highdicom (`support/check_sr.py`) find every mark the test drew, with its
//! codes and coordinates, on the referenced de-identified instances; `dciodvfy` (Debian's
//! dicom3tools) finds no error in any report. What is expected comes from the store (SQL) and
//! from the marks as the test drew them, never from the exporter. Both tools are installed by
//! `bash scripts/setup.sh --with-test-tools`; a missing tool fails the test, naming it.

#[path = "support/rating.rs"]
mod rating_support;

use cases::app::{exports, Session};
use cases::marks::{Mark, MarkKind, Plane};
use cases::rating::{LabelEdit, RaterRole, SpanText, DEMO_STUDY_ID};
use rating_support::demo_store;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Python with pydicom, numpy and highdicom that `scripts/setup.sh --with-test-tools`
/// installs into a venv of its own (at `$NEURORATER_TEST_PYTHON_VENV`, else in the user's cache).
fn test_python() -> PathBuf {
    let venv = std::env::var_os("NEURORATER_TEST_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
                })
                .join("neurorater/test-python-venv")
        });
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "no {}: bash scripts/setup.sh --with-test-tools installs pydicom, numpy and highdicom there",
        python.display()
    );
    python
}

fn apply(m: &[[f64; 4]; 3], v: [f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (r, value) in out.iter_mut().enumerate() {
        *value = m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2] + m[r][3];
    }
    out
}

/// A case of the demo with a DICOM series, that series' id, dims and voxel-to-LPS affine.
fn dicom_series(conn: &rusqlite::Connection, case_key: i64) -> (String, [i64; 3], [[f64; 4]; 3]) {
    let (series, columns, rows, slices, blob): (String, i64, i64, i64, Vec<u8>) = conn
        .query_row(
            "SELECT s.series_id, g.columns, g.rows, g.slices, g.voxel_to_patient
             FROM series s JOIN series_geometry g ON g.series = s.id
             WHERE s.case_ref = ?1 AND s.kind = 'dicom' ORDER BY s.id LIMIT 1",
            [case_key],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .expect("a DICOM series with its geometry");
    let mut affine = [[0.0; 4]; 3];
    for (i, chunk) in blob.chunks(8).enumerate() {
        affine[i / 4][i % 4] = f64::from_le_bytes(chunk.try_into().unwrap());
    }
    (series, [columns, rows, slices], affine)
}

#[test]
fn marks_leave_as_a_dicom_sr_that_highdicom_reads_back_and_dciodvfy_accepts() {
    let (dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    store.ensure_demo_queue(rater).unwrap();
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    // The first item whose case has a DICOM series.
    let (assignment, case_key) = queue
        .iter()
        .find_map(|item| {
            let case_key: i64 = store
                .read()
                .query_row(
                    "SELECT t.case_ref FROM assignments a JOIN responses r ON a.response = r.id
                     JOIN tasks t ON r.task = t.id WHERE a.id = ?1
                       AND EXISTS (SELECT 1 FROM series s WHERE s.case_ref = t.case_ref
                                   AND s.kind = 'dicom')",
                    [item.assignment],
                    |r| r.get(0),
                )
                .ok()?;
            Some((item.assignment, case_key))
        })
        .expect("an item on a DICOM case");
    let (series, dims, affine) = dicom_series(store.read(), case_key);
    let centre = [
        dims[0] as f64 / 2.0,
        dims[1] as f64 / 2.0,
        (dims[2] / 2) as f64,
    ];
    let at = |di: f64, dj: f64, dk: f64| {
        apply(&affine, [centre[0] + di, centre[1] + dj, centre[2] + dk])
    };
    // In the acquisition plane (one slice): a point, an arrow and a freehand outline; across
    // slices (as drawn on a reslice): an ellipse.
    let drawn = [
        (
            "P1",
            3,
            MarkKind::Point,
            Plane::Axial,
            vec![at(1.0, 2.0, 0.0)],
        ),
        (
            "P4",
            1,
            MarkKind::Arrow,
            Plane::Axial,
            vec![at(-6.0, -4.0, 0.0), at(-1.0, 0.5, 0.0)],
        ),
        (
            "P5",
            2,
            MarkKind::Freehand,
            Plane::Axial,
            vec![
                at(0.0, 0.0, 0.0),
                at(5.0, 0.0, 0.0),
                at(5.0, 4.0, 0.0),
                at(0.3, 4.7, 0.0),
            ],
        ),
        (
            "P1",
            2,
            MarkKind::Ellipse,
            Plane::Sagittal,
            vec![at(0.0, 0.0, 0.0), at(0.0, 3.0, 0.0), at(0.0, 0.0, 2.0)],
        ),
    ];
    for (category, severity, kind, plane, points) in drawn {
        store
            .add_error_label(
                rater,
                assignment,
                &LabelEdit {
                    category: category.into(),
                    severity,
                    span: None,
                    text: SpanText::Rationale,
                    turn: None,
                    mark: Some(Mark {
                        series_id: series.clone(),
                        kind,
                        plane,
                        points_lps_mm: points,
                    }),
                    comment: String::new(),
                },
            )
            .unwrap();
    }

    let out = dir.path().join("sr");
    let summary = exports::dicom_sr(&store, &Session::command_line(), DEMO_STUDY_ID, &out).unwrap();
    assert_eq!(summary.label_marks, 4, "{summary:?}");
    assert!(summary.skipped.is_empty(), "{summary:?}");

    // What was drawn, as the store holds it.
    let conn = store.read();
    let mut marks = Vec::new();
    let mut stmt = conn
        .prepare(
            "SELECT c.case_id, e.id, e.category, e.severity, e.mark_json FROM error_labels e
             JOIN ratings g ON e.rating = g.id JOIN responses r ON g.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE e.mark_json IS NOT NULL",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (case, id, category, severity, mark) = row.unwrap();
        let mark: Value = serde_json::from_str(&mark).unwrap();
        marks.push(json!({
            "case": case, "kind": "label", "id": id, "category": category,
            "severity": severity, "series": mark["series_id"], "shape": mark["kind"],
            "points": mark["points_lps_mm"],
        }));
    }
    assert_eq!(marks.len(), 4);
    let mut stmt = conn
        .prepare(
            "SELECT c.case_id, g.body_json FROM ground_truth g JOIN cases c ON g.case_ref = c.id",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap();
    let mut lesion_marks = 0;
    for row in rows {
        let (case, body) = row.unwrap();
        let body: Value = serde_json::from_str(&body).unwrap();
        for lesion in body["lesions"].as_array().into_iter().flatten() {
            for mark in lesion["marks"].as_array().into_iter().flatten() {
                lesion_marks += 1;
                marks.push(json!({
                    "case": case, "kind": "lesion", "id": lesion["id"], "category": null,
                    "severity": null, "series": mark["series"], "shape": mark["shape"],
                    "points": mark["points_mm"],
                }));
            }
        }
    }
    assert!(lesion_marks > 0, "the demo's ground truth has lesion marks");
    assert_eq!(summary.lesion_marks, lesion_marks, "{summary:?}");
    let (taxonomy_json, bundle_dir): (String, String) = conn
        .query_row(
            "SELECT taxonomy_json, bundle_dir FROM studies WHERE study_id = ?1",
            [DEMO_STUDY_ID],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // Every UID of the source files (read here from the originals), none of which may leave.
    let mut original_uids = Vec::new();
    let mut stmt = conn.prepare("SELECT path FROM images").unwrap();
    let paths: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for path in paths {
        let object = dicom_object::open_file(Path::new(&bundle_dir).join(&path));
        let Ok(object) = object else { continue };
        for tag in [
            dicom_dictionary_std::tags::SOP_INSTANCE_UID,
            dicom_dictionary_std::tags::STUDY_INSTANCE_UID,
            dicom_dictionary_std::tags::SERIES_INSTANCE_UID,
            dicom_dictionary_std::tags::FRAME_OF_REFERENCE_UID,
        ] {
            if let Ok(element) = object.element(tag) {
                let uid = element
                    .to_str()
                    .unwrap()
                    .trim_end_matches(['\0', ' '])
                    .to_owned();
                original_uids.push(uid);
            }
        }
    }
    assert!(!original_uids.is_empty());

    let mut python = Command::new(test_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/check_sr.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test venv's python: bash scripts/setup.sh --with-test-tools");
    let input = json!({
        "out": out, "taxonomy_json": taxonomy_json,
        "original_uids": original_uids, "marks": marks,
    });
    use std::io::Write;
    python
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let checked = python.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "check_sr.py: {}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let counts: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(counts["groups"], marks.len(), "{counts}");
    // The reslice's ellipse lies in space; the others on an image.
    assert!(counts["scoord3d"].as_u64().unwrap() >= 1, "{counts}");
    assert!(counts["scoord"].as_u64().unwrap() >= 3, "{counts}");

    // dciodvfy: no error in any report; the first copy of each series beside it has no error
    // its original lacks (the de-identification adds none; warnings, e.g. the private coding
    // scheme or an empty Study Date, are allowed).
    let dciodvfy = |file: &Path| -> (Vec<String>, String) {
        let verified = Command::new("dciodvfy")
            .arg(file)
            .output()
            .expect("dciodvfy (Debian's dicom3tools): bash scripts/setup.sh --with-test-tools");
        let said = String::from_utf8_lossy(&verified.stderr).into_owned()
            + &String::from_utf8_lossy(&verified.stdout);
        let errors = said
            .lines()
            .filter(|l| l.starts_with("Error"))
            .map(String::from)
            .collect();
        (errors, said)
    };
    let mut reports = 0;
    let mut copies = 0;
    for case in std::fs::read_dir(&out).unwrap() {
        let case = case.unwrap().path();
        let report = case.join("sr.dcm");
        if report.exists() {
            reports += 1;
            let (errors, said) = dciodvfy(&report);
            assert!(
                errors.is_empty() && said.contains("Comprehensive3DSR"),
                "dciodvfy {}:\n{said}",
                report.display()
            );
        }
        for series in std::fs::read_dir(&case).unwrap() {
            let series = series.unwrap().path();
            let first = series.join("00001.dcm");
            if !first.exists() {
                continue;
            }
            copies += 1;
            let original: String = conn
                .query_row(
                    "SELECT i.path FROM images i JOIN series s ON i.series = s.id
                     JOIN cases c ON s.case_ref = c.id
                     WHERE c.case_id = ?1 AND s.series_id = ?2 ORDER BY i.position LIMIT 1",
                    [
                        case.file_name().unwrap().to_str().unwrap(),
                        series.file_name().unwrap().to_str().unwrap(),
                    ],
                    |r| r.get(0),
                )
                .unwrap();
            let (before, _) = dciodvfy(&Path::new(&bundle_dir).join(original));
            let (after, said) = dciodvfy(&first);
            let added: Vec<&String> = after.iter().filter(|e| !before.contains(e)).collect();
            assert!(
                added.is_empty(),
                "dciodvfy {}: {added:?}\n{said}",
                first.display()
            );
        }
    }
    assert_eq!(reports, summary.reports);
    assert!(copies > 0, "copies beside the reports");
}

/// A case none of whose marks can be placed gets no report, and no copies either: the export
/// never leaves a case's images without the report that refers to them.
#[test]
fn a_case_whose_every_mark_is_skipped_leaves_nothing_behind() {
    let (dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    store.ensure_demo_queue(rater).unwrap();
    let (assignment, case_key, case_id) = store
        .reading_queue(rater, DEMO_STUDY_ID)
        .unwrap()
        .iter()
        .find_map(|item| {
            store
                .read()
                .query_row(
                    "SELECT t.case_ref, c.case_id FROM assignments a
                     JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id
                     JOIN cases c ON t.case_ref = c.id WHERE a.id = ?1
                       AND EXISTS (SELECT 1 FROM series s WHERE s.case_ref = t.case_ref
                                   AND s.kind = 'dicom')",
                    [item.assignment],
                    |r| Ok((item.assignment, r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
                )
                .ok()
        })
        .expect("an item on a DICOM case");
    let (series, dims, affine) = dicom_series(store.read(), case_key);
    let centre = apply(
        &affine,
        [
            dims[0] as f64 / 2.0,
            dims[1] as f64 / 2.0,
            (dims[2] / 2) as f64,
        ],
    );
    store
        .add_error_label(
            rater,
            assignment,
            &LabelEdit {
                category: "P1".into(),
                severity: 2,
                span: None,
                text: SpanText::Rationale,
                turn: None,
                mark: Some(Mark {
                    series_id: series,
                    kind: MarkKind::Point,
                    plane: Plane::Axial,
                    points_lps_mm: vec![centre],
                }),
                comment: String::new(),
            },
        )
        .unwrap();
    // Every mark of the case made unplaceable (no points), as a database from another tool
    // could hold them.
    let conn = store.read();
    conn.execute(
        "UPDATE error_labels SET mark_json = json_set(mark_json, '$.points_lps_mm', json('[]'))
         WHERE mark_json IS NOT NULL",
        [],
    )
    .unwrap();
    let body: String = conn
        .query_row(
            "SELECT body_json FROM ground_truth WHERE case_ref = ?1",
            [case_key],
            |r| r.get(0),
        )
        .unwrap();
    let mut body: Value = serde_json::from_str(&body).unwrap();
    for lesion in body["lesions"].as_array_mut().into_iter().flatten() {
        for mark in lesion["marks"].as_array_mut().into_iter().flatten() {
            mark["points_mm"] = json!([]);
        }
    }
    conn.execute(
        "UPDATE ground_truth SET body_json = ?1 WHERE case_ref = ?2",
        rusqlite::params![body.to_string(), case_key],
    )
    .unwrap();

    let out = dir.path().join("sr");
    let summary = exports::dicom_sr(&store, &Session::command_line(), DEMO_STUDY_ID, &out).unwrap();
    assert!(
        summary
            .skipped
            .iter()
            .any(|why| why.starts_with(&format!("{case_id}: ")) && why.contains("malformed")),
        "{summary:?}"
    );
    assert!(
        !out.join(&case_id).exists(),
        "the copies of {case_id} stayed without a report"
    );
}
