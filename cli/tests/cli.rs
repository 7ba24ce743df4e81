//! The `neurorater` command's contract (FORMATS.md §4), run as a real process on real files:
//! exit codes 0 / 2 / 1, `FILE:LINE: field: message` errors, and a database left byte-identical
//! by a refused import.

use neurorater_tests::write_small_bundle;
mod support;

use std::path::Path;
use std::process::Output;
use support::{digest, neurorater};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A broken copy of the small bundle and the exact error lines it must give.
struct Broken {
    name: &'static str,
    breaks: fn(&Path),
    expected: &'static [&'static str],
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

const CORPUS: &[Broken] = &[
    Broken {
        name: "missing study file",
        breaks: |b| std::fs::remove_file(b.join("study.json")).unwrap(),
        expected: &["study.json: -: is missing"],
    },
    Broken {
        name: "missing image folder",
        breaks: |b| std::fs::remove_dir_all(b.join("cases/ms-01/keys")).unwrap(),
        expected: &[
            "cases/ms-01/case.json:11: series[1].path: cases/ms-01/keys cannot be found: No such file or directory (os error 2)",
        ],
    },
    Broken {
        name: "bad JSONL line",
        breaks: |b| edit(&b.join("responses.jsonl"), r#""sample": 1,"#, r#""sample": "one","#),
        // The grader line that scored the unreadable response is reported too.
        expected: &[
            r#"grader.jsonl:2: sample: grades a response that responses.jsonl does not hold (case "ms-01", task "dx", model "vlm-a", sample 1)"#,
            r#"responses.jsonl:2: sample: invalid type: string "one", expected u32"#,
        ],
    },
    Broken {
        name: "unknown case id",
        breaks: |b| {
            edit(
                &b.join("responses.jsonl"),
                r#""case_id": "ms-01", "task_id": "lesions""#,
                r#""case_id": "ms-99", "task_id": "lesions""#,
            )
        },
        expected: &[r#"responses.jsonl:5: case_id: no case "ms-99" in the bundle"#],
    },
    Broken {
        name: "duplicate response",
        breaks: |b| edit(&b.join("responses.jsonl"), r#""sample": 1,"#, r#""sample": 0,"#),
        expected: &[
            r#"grader.jsonl:2: sample: grades a response that responses.jsonl does not hold (case "ms-01", task "dx", model "vlm-a", sample 1)"#,
            "responses.jsonl:2: sample: the same case, task, model and sample as line 1",
        ],
    },
    Broken {
        name: "duplicate task id",
        breaks: |b| edit(&b.join("cases/ms-01/case.json"), r#""id": "lesions""#, r#""id": "dx""#),
        expected: &[
            r#"cases/ms-01/case.json:16: tasks[1].id: task id "dx" is used twice in this case"#,
            r#"responses.jsonl:5: task_id: case "ms-01" has no task "lesions""#,
        ],
    },
    Broken {
        name: "wrong type",
        breaks: |b| edit(&b.join("cases/ms-01/case.json"), r#""age": 34"#, r#""age": "34""#),
        expected: &[r#"cases/ms-01/case.json:5: age: invalid type: string "34", expected u32"#],
    },
    Broken {
        name: "several problems at once",
        breaks: |b| {
            edit(&b.join("grader.jsonl"), r#""score": 5"#, r#""score": 9"#);
            edit(&b.join("grader.jsonl"), r#""category": "P4""#, r#""category": "Z9""#);
            edit(&b.join("cases/ms-01/case.json"), r#""slice": 2"#, r#""slice": 4"#);
        },
        expected: &[
            r#"cases/ms-01/case.json:15: tasks[0].key_images[0].slice: slice 4 does not exist: series "flair" has 4 slices (counted from 0)"#,
            "grader.jsonl:1: score: 9 is outside the rubric's overall scale 1..5",
            r#"grader.jsonl:2: errors[0].category: "Z9" is not a category of the taxonomy "neurorater-default-v1""#,
        ],
    },
    Broken {
        name: "path escaping the bundle",
        breaks: |b| edit(&b.join("cases/ms-01/case.json"), r#""path": "keys""#, r#""path": "../../../etc""#),
        expected: &[
            "cases/ms-01/case.json:11: series[1].path: cases/ms-01/../../../etc must be a relative path inside the bundle (no '..', no absolute path)",
        ],
    },
];

#[test]
fn every_broken_bundle_gives_its_exact_errors_and_leaves_the_database_byte_identical() {
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("db.sqlite");
    let good = work.path().join("good");
    write_small_bundle(&good, false);
    let first = neurorater(&[
        "import",
        good.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(first.status.success(), "{}", stderr(&first));
    let before = digest(&db);

    for case in CORPUS {
        let broken = work.path().join(case.name.replace(' ', "-"));
        write_small_bundle(&broken, false);
        (case.breaks)(&broken);
        let output = neurorater(&[
            "import",
            broken.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{}: {}",
            case.name,
            stderr(&output)
        );
        let lines: Vec<String> = stderr(&output)
            .lines()
            .map(str::to_owned)
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert_eq!(lines, case.expected, "{}", case.name);
        assert_eq!(digest(&db), before, "{} changed the database", case.name);
    }
}

#[test]
fn an_unreadable_dicom_file_is_named() {
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("b");
    write_small_bundle(&bundle, false);
    std::fs::write(
        bundle.join("cases/ms-01/flair/b.dcm"),
        b"not a DICOM file at all",
    )
    .unwrap();
    let db = work.path().join("db.sqlite");
    let output = neurorater(&[
        "import",
        bundle.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.starts_with("cases/ms-01/flair/b.dcm: -: not a readable DICOM file: "),
        "{text}"
    );
    assert!(
        !db.exists(),
        "a refused import must not even create the database"
    );
}

#[test]
fn cases_lists_the_imported_study_as_json() {
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("b");
    write_small_bundle(&bundle, false);
    let db = work.path().join("db.sqlite");
    let db = db.to_str().unwrap();
    assert!(
        neurorater(&["import", bundle.to_str().unwrap(), "--db", db])
            .status
            .success()
    );
    let output = neurorater(&["cases", "--db", db, "--json"]);
    assert!(output.status.success());
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(listing[0]["study"]["id"], "pilot");
    assert_eq!(listing[0]["cases"][0]["id"], "ms-01");
    assert_eq!(
        listing[0]["cases"][0]["disease_group"],
        "multiple_sclerosis"
    );
    assert_eq!(listing[0]["cases"][0]["n_responses"], 4);
}

#[test]
fn exports_join_on_the_response_key_and_audit_verifies() {
    let work = tempfile::tempdir().unwrap();
    let bundle = work.path().join("b");
    write_small_bundle(&bundle, false);
    let db = work.path().join("db.sqlite");
    let db_arg = db.to_str().unwrap();
    assert!(
        neurorater(&["import", bundle.to_str().unwrap(), "--db", db_arg])
            .status
            .success()
    );
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "INSERT INTO raters (name, role, years_experience) VALUES ('dr-a', 'neuroradiologist', 12);
             INSERT INTO ratings (response, rater, overall, dimensions_json, correctness, status, updated_at)
               SELECT id, 1, 2, '{\"diagnosis\": 1}', 'incorrect', 'submitted', '2026-11-21T10:00:00Z'
               FROM responses WHERE model = 'vlm-a' AND sample = 1;
             INSERT INTO error_labels (rating, category, severity, span_start, span_end)
               VALUES (1, 'P4', 2, 15, 33);",
        )
        .unwrap();
    }
    let out = work.path().join("ratings.csv");
    let output = neurorater(&[
        "export",
        "--db",
        db_arg,
        "--what",
        "ratings",
        "--format",
        "csv",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let csv = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        csv,
        "study_id,case_id,task_id,model,sample,rating_id,read_no,rater,rater_role,overall,\
         dimension:diagnosis,correctness,confidence,status,seconds_on_task,updated_at,\
         submitted_at,comment\n\
         pilot,ms-01,dx,vlm-a,1,1,1,dr-a,neuroradiologist,2.0,1,incorrect,,submitted,0.0,\
         2026-11-21T10:00:00Z,,\n"
    );
    let out = work.path().join("errors.jsonl");
    let output = neurorater(&[
        "export",
        "--db",
        db_arg,
        "--what",
        "errors",
        "--format",
        "jsonl",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let row: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&out).unwrap().trim()).unwrap();
    assert_eq!(row["quote"], "left temporal lobe");
    assert_eq!(
        (row["model"].as_str(), row["sample"].as_i64()),
        (Some("vlm-a"), Some(1))
    );

    let verify = neurorater(&["audit", "verify", "--db", db_arg]);
    assert!(verify.status.success(), "{}", stderr(&verify));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("1 entries"));
}

#[test]
fn probe_and_render_read_twelve_bit_jpeg_and_htj2k_and_name_a_broken_stream() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/tests/data/imaging");
    let sample = |name: &str| samples.join(name).to_str().unwrap().to_owned();
    for (file, syntax) in [
        ("JPGExtended.dcm", "1.2.840.10008.1.2.4.51"),
        ("MR_small_htj2k_lossless.dcm", "1.2.840.10008.1.2.4.201"),
    ] {
        let output = neurorater(&["probe", "--json", &sample(file)]);
        assert!(output.status.success(), "{file}: {}", stderr(&output));
        let probe: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(probe["transfer_syntax"], syntax, "{file}");
    }
    // pydicom's maximum of the 12-bit file's stored values (expected.json).
    let output = neurorater(&["probe", "--json", &sample("JPGExtended.dcm")]);
    let probe: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(probe["stored_max"], 264.0);

    let work = tempfile::tempdir().unwrap();
    let png = work.path().join("twelve.png");
    let output = neurorater(&[
        "render",
        &sample("JPGExtended.dcm"),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bytes = std::fs::read(&png).unwrap();
    // PNG signature, then IHDR: width 256, height 1024.
    assert_eq!(&bytes[1..4], b"PNG");
    assert_eq!(&bytes[16..24], &[0, 0, 1, 0, 0, 0, 4, 0]);

    let output = neurorater(&[
        "render",
        &sample("JPEG-lossy.dcm"),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.contains("JPEG-lossy.dcm")
            && text.contains("libjpeg-turbo: Invalid SOS parameters for sequential JPEG"),
        "{text}"
    );
}
