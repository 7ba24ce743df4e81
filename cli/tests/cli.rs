//! The `neurorater` command's contract (docs/formats.md §4), run as a real process on real files:
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
        name: "a turn's image in a series the case does not have",
        breaks: |b| {
            edit(
                &b.join("responses.jsonl"),
                r#"{"role": "assistant", "content": "Periventricular."}"#,
                r#"{"role": "assistant", "content": "Periventricular."}, {"role": "user", "content": "And here?", "key_images": [{"series": "t2", "slice": 0}, {"series": "flair", "slice": 7}]}"#,
            )
        },
        expected: &[
            r#"responses.jsonl:5: turns[2].key_images[0].series: no series "t2" in this case"#,
            r#"responses.jsonl:5: turns[2].key_images[1].slice: slice 7 does not exist: series "flair" has 4 slices (counted from 0)"#,
        ],
    },
    Broken {
        name: "a grader scoring a dimension the rubric does not apply to the task's family",
        breaks: |b| {
            edit(
                &b.join("study.json"),
                r#"{"id": "reasoning", "label": "Reasoning","#,
                r#"{"id": "reasoning", "families": ["lesion_identification"], "label": "Reasoning","#,
            )
        },
        expected: &[
            r#"grader.jsonl:1: dimensions.reasoning: "Reasoning" is not scored on differential_diagnosis tasks (the rubric applies it to lesion_identification)"#,
        ],
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
            r#"grader.jsonl:2: errors[0].category: "Z9" is not a category of the taxonomy "neurorater-default-v2""#,
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
    // FORMATS §4: each case with its series, each with its id, label, kind and how many images
    // it holds (counted here from the bundle's folders).
    let series = listing[0]["cases"][0]["series"].as_array().unwrap();
    let found: Vec<(&str, &str, &str, u64)> = series
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap(),
                s["label"].as_str().unwrap(),
                s["kind"].as_str().unwrap(),
                s["images"].as_u64().unwrap(),
            )
        })
        .collect();
    let files = |folder: &str| {
        std::fs::read_dir(bundle.join("cases/ms-01").join(folder))
            .unwrap()
            .count() as u64
    };
    assert_eq!(
        found,
        [
            ("flair", "FLAIR", "dicom", files("flair")),
            ("keys", "Key images", "key_images", files("keys")),
        ]
    );
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
             INSERT INTO error_labels (rating, category, severity, span_start, span_end, span_text)
               VALUES (1, 'P4', 2, 15, 33, 'rationale');",
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
         dimension:diagnosis,not_applicable,correctness,confidence,status,seconds_on_task,\
         updated_at,submitted_at,comment,rubric_version\n\
         pilot,ms-01,dx,vlm-a,1,1,1,dr-a,neuroradiologist,2.0,1,[],incorrect,,submitted,0.0,\
         2026-11-21T10:00:00Z,,,1\n"
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
    // The ground truth's lesion mark as DICOM SR (docs/dicom-sr.md; read back and validated in
    // cases/tests/dicom_sr.rs); a table export still needs its --format.
    let sr = work.path().join("sr");
    let output = neurorater(&[
        "export",
        "--db",
        db_arg,
        "--what",
        "sr",
        "--out",
        sr.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("wrote 1 DICOM SR report(s)"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(sr.join("ms-01/sr.dcm").exists());
    let output = neurorater(&[
        "export", "--db", db_arg, "--what", "ratings", "--out", "x.csv",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--format"), "{}", stderr(&output));

    // The rating and its label were written with another client, not through NeuroRater: the
    // chain holds (the import's one entry), the rating has no entry of its own.
    let verify = neurorater(&["audit", "verify", "--db", db_arg]);
    assert_eq!(verify.status.code(), Some(2));
    assert!(
        stderr(&verify).contains("rating 1: it has no audit entry"),
        "{}",
        stderr(&verify)
    );
}

/// Removes the newest audit entries past `keep`, as someone with another SQLite client could:
/// the chain that is left is valid, so only the anchor can tell.
fn cut_audit_tail(db: &Path, keep: i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch("DROP TRIGGER audit_log_is_append_only_delete")
        .unwrap();
    conn.execute("DELETE FROM audit_log WHERE id > ?1", [keep])
        .unwrap();
}

#[test]
fn the_audit_head_anchors_the_log_against_a_cut_tail_and_a_rewrite() {
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
    let add = |name: &str| {
        let added = neurorater(&["rater", "add", name, "--role", "resident", "--db", db_arg]);
        assert!(added.status.success(), "{}", stderr(&added));
    };
    add("dr-a");
    let head_output = neurorater(&["audit", "head", "--db", db_arg]);
    assert!(head_output.status.success(), "{}", stderr(&head_output));
    let head = String::from_utf8(head_output.stdout)
        .unwrap()
        .trim()
        .to_owned();
    // The import's entry, then the rater's.
    let (entry, hash) = head.split_once(':').unwrap();
    assert_eq!(entry, "2");
    let stored_hash: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT hash FROM audit_log WHERE id = 2", [], |r| r.get(0))
        .unwrap();
    assert_eq!(hash, stored_hash);

    let verify = |expected: &str| {
        neurorater(&["audit", "verify", "--db", db_arg, "--expect-head", expected])
    };
    let intact = verify(&head);
    assert!(intact.status.success(), "{}", stderr(&intact));
    assert!(String::from_utf8_lossy(&intact.stdout).contains("entry 2 unchanged"));

    // Later entries extend the head: it still verifies.
    add("dr-b");
    assert!(verify(&head).status.success());

    // A malformed head is refused as input, naming the form.
    let malformed = verify("2:not-a-hash");
    assert_eq!(malformed.status.code(), Some(2));
    assert!(
        stderr(&malformed).contains("N:HASH"),
        "{}",
        stderr(&malformed)
    );

    // The tail cut back to entry 1: the chain is valid, the anchor is missing.
    cut_audit_tail(&db, 1);
    assert!(neurorater(&["audit", "verify", "--db", db_arg])
        .status
        .success());
    let cut = verify(&head);
    assert_eq!(cut.status.code(), Some(2));
    assert!(
        stderr(&cut).contains("audit log entry 2 is broken")
            && stderr(&cut).contains("the log now ends at entry 1"),
        "{}",
        stderr(&cut)
    );

    // A new entry 2 written after the cut: again a valid chain, but not the anchored entry.
    add("dr-c");
    assert!(neurorater(&["audit", "verify", "--db", db_arg])
        .status
        .success());
    let rewritten = verify(&head);
    assert_eq!(rewritten.status.code(), Some(2));
    assert!(
        stderr(&rewritten).contains("audit log entry 2 is broken")
            && stderr(&rewritten).contains("hashes recomputed"),
        "{}",
        stderr(&rewritten)
    );
}

/// An audit entry's hash as docs/security.md (T9) describes it, written out here rather than
/// taken from `cases`: SHA-256 over the previous hash and the entry's fields, each prefixed by its
/// length in bytes (u64, little endian), an absent before/after by u64::MAX.
fn audit_entry_hash(fields: [Option<&str>; 7]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for field in fields {
        match field {
            Some(text) => {
                hasher.update((text.len() as u64).to_le_bytes());
                hasher.update(text.as_bytes());
            }
            None => hasher.update(u64::MAX.to_le_bytes()),
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn an_edited_entry_with_every_hash_recomputed_passes_the_chain_but_not_the_head() {
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
    for name in ["dr-a", "dr-b"] {
        let added = neurorater(&["rater", "add", name, "--role", "resident", "--db", db_arg]);
        assert!(added.status.success(), "{}", stderr(&added));
    }
    let head_output = neurorater(&["audit", "head", "--db", db_arg]);
    let head = String::from_utf8(head_output.stdout)
        .unwrap()
        .trim()
        .to_owned();
    assert!(head.starts_with("3:"), "{head}");

    // Someone with another SQLite client renames the first rater in entry 2 and recomputes the
    // hash of that entry and of every entry after it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TRIGGER audit_log_is_append_only_update")
        .unwrap();
    let after: String = conn
        .query_row("SELECT after_json FROM audit_log WHERE id = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(after.contains("dr-a"), "{after}");
    conn.execute(
        "UPDATE audit_log SET after_json = ?1 WHERE id = 2",
        [after.replace("dr-a", "dr-z")],
    )
    .unwrap();
    let mut prev: String = conn
        .query_row("SELECT hash FROM audit_log WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    for id in 2..=3 {
        let fields: (
            String,
            String,
            String,
            String,
            Option<String>,
            Option<String>,
        ) = conn
            .query_row(
                "SELECT at, actor, action, entity, before_json, after_json FROM audit_log
                 WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                },
            )
            .unwrap();
        let hash = audit_entry_hash([
            Some(&prev),
            Some(&fields.0),
            Some(&fields.1),
            Some(&fields.2),
            Some(&fields.3),
            fields.4.as_deref(),
            fields.5.as_deref(),
        ]);
        conn.execute(
            "UPDATE audit_log SET prev_hash = ?1, hash = ?2 WHERE id = ?3",
            rusqlite::params![prev, hash, id],
        )
        .unwrap();
        prev = hash;
    }
    drop(conn);

    // The rewritten chain is valid on its own: the recomputation was done right.
    let alone = neurorater(&["audit", "verify", "--db", db_arg]);
    assert!(alone.status.success(), "{}", stderr(&alone));
    // Against the head written down before, entry 3 no longer has its hash.
    let anchored = neurorater(&["audit", "verify", "--db", db_arg, "--expect-head", &head]);
    assert_eq!(anchored.status.code(), Some(2));
    assert!(
        stderr(&anchored).contains("audit log entry 3 is broken")
            && stderr(&anchored).contains("hashes recomputed"),
        "{}",
        stderr(&anchored)
    );
}

#[test]
fn the_calibration_report_and_the_backup_name_the_audit_head() {
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
    let ratings = work.path().join("ratings.csv");
    std::fs::write(
        &ratings,
        "item,rater,score\n\
         ms-01/dx/vlm-a/0,dr-a,2\nms-01/dx/vlm-a/0,dr-b,3\n\
         ms-01/dx/vlm-a/1,dr-a,4\nms-01/dx/vlm-a/1,dr-b,4\n\
         ms-01/dx/vlm-b/0,dr-a,1\nms-01/dx/vlm-b/0,dr-b,2\n",
    )
    .unwrap();
    let imported = neurorater(&["import-ratings", ratings.to_str().unwrap(), "--db", db_arg]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let head = String::from_utf8(neurorater(&["audit", "head", "--db", db_arg]).stdout)
        .unwrap()
        .trim()
        .to_owned();

    let report = work.path().join("report.json");
    let html = work.path().join("report.html");
    for (format, out) in [("json", &report), ("html", &html)] {
        let built = neurorater(&[
            "calibrate",
            "--db",
            db_arg,
            "--format",
            format,
            "--resamples",
            "200",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(built.status.success(), "{}", stderr(&built));
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["audit_head"], head.as_str());
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains(&format!("audit head {head}")));
    // The manifest pins the same data, and the study's taxonomy as stored (issue 40).
    let manifest = &json["manifest"];
    assert_eq!(manifest["audit_head"], head.as_str());
    assert_eq!(manifest["neurorater_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["options"]["bootstrap_resamples"], 200);
    let taxonomy_sha256 = manifest["taxonomy_sha256"].as_str().unwrap();
    assert!(
        taxonomy_sha256.len() == 64 && taxonomy_sha256.bytes().all(|b| b.is_ascii_hexdigit()),
        "{manifest}"
    );
    assert!(manifest["specs"].is_array());
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("<h2>Provenance</h2>"));

    let copy = work.path().join("copy.sqlite");
    let backup = neurorater(&["backup", "--db", db_arg, "--out", copy.to_str().unwrap()]);
    assert!(backup.status.success(), "{}", stderr(&backup));
    assert!(String::from_utf8_lossy(&backup.stdout).ends_with(&format!("audit head {head}\n")));
    let copy_arg = copy.to_str().unwrap();
    assert!(
        neurorater(&["audit", "verify", "--db", copy_arg, "--expect-head", &head])
            .status
            .success()
    );
}

#[test]
fn audit_verify_finds_ratings_changed_without_an_audit_entry() {
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
    let ratings = work.path().join("ratings.csv");
    std::fs::write(
        &ratings,
        "item,rater,score\nms-01/dx/vlm-a/0,dr-a,2\nms-01/dx/vlm-a/1,dr-a,4\n\
         ms-01/dx/vlm-b/0,dr-a,1\n",
    )
    .unwrap();
    let imported = neurorater(&["import-ratings", ratings.to_str().unwrap(), "--db", db_arg]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let verify = || neurorater(&["audit", "verify", "--db", db_arg]);
    let intact = verify();
    assert!(intact.status.success(), "{}", stderr(&intact));
    assert!(
        String::from_utf8_lossy(&intact.stdout).contains("ratings: 3 match their audit entries")
    );

    let conn = rusqlite::Connection::open(&db).unwrap();
    let id_of = |item_model: &str, sample: i64| -> i64 {
        conn.query_row(
            "SELECT g.id FROM ratings g JOIN responses r ON g.response = r.id
             WHERE r.model = ?1 AND r.sample = ?2",
            rusqlite::params![item_model, sample],
            |r| r.get(0),
        )
        .unwrap()
    };
    let (changed, labelled, deleted) = (id_of("vlm-a", 0), id_of("vlm-a", 1), id_of("vlm-b", 0));
    conn.execute_batch(&format!(
        "UPDATE ratings SET overall = 5 WHERE id = {changed};
         INSERT INTO error_labels (rating, category, severity, span_start, span_end, span_text)
             VALUES ({labelled}, 'P4', 2, 0, 5, 'rationale');
         DELETE FROM ratings WHERE id = {deleted};"
    ))
    .unwrap();
    drop(conn);
    let found = verify();
    assert_eq!(found.status.code(), Some(2));
    let lines: Vec<String> = stderr(&found)
        .lines()
        .map(|l| l.split_once(": rating ").unwrap().1.to_owned())
        .collect();
    let mut expected = vec![
        format!("{changed}: overall differs: the table holds 5.0, its last audit entry"),
        format!("{labelled}: labels differs: the table holds 1 labels, its last audit entry"),
        format!("{deleted}: its audit entry"),
    ];
    expected.sort();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for (line, start) in lines.iter().zip(&expected) {
        assert!(line.starts_with(start.as_str()), "{line} / {start}");
    }
    assert!(lines
        .iter()
        .any(|l| l.ends_with("deleted without an audit entry")));
}

#[test]
fn probe_and_render_read_twelve_bit_jpeg_and_htj2k_and_name_a_broken_stream() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../imaging/tests/data");
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

/// `neurorater probe --json FILE | head -0`: the reader is gone before the JSON is written. The
/// command ends quietly, as a Unix filter does, instead of panicking on the closed pipe.
#[test]
fn a_reader_that_closed_its_pipe_ends_the_command_quietly() {
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../imaging/tests/data/JPGExtended.dcm");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(["probe", "--json", sample.to_str().unwrap()])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
}

#[test]
fn calibrate_compares_a_grader_on_another_scale_by_ordering_unless_a_mapping_is_declared() {
    let work = tempfile::tempdir().unwrap();
    let ratings = work.path().join("ratings.csv");
    let mut csv = String::from("item,rater,score,case\n");
    for item in 0..24 {
        let latent = 1 + item * 7 % 5;
        for (rater, wobble) in [("dr-a", 0), ("dr-b", item % 2)] {
            let score = (latent + wobble).min(5);
            csv.push_str(&format!("i{item},{rater},{score},c{}\n", item / 2));
        }
        csv.push_str(&format!("i{item},gpt,{},c{}\n", 2 * latent, item / 2));
    }
    std::fs::write(&ratings, csv).unwrap();
    let ratings_arg = ratings.to_str().unwrap();
    let calibrate = |extra: &[&str]| {
        let mut args = vec![
            "calibrate",
            "--ratings",
            ratings_arg,
            "--grader",
            "gpt",
            "--scale",
            "1,5,1",
            "--resamples",
            "100",
        ];
        args.extend_from_slice(extra);
        neurorater(&args)
    };

    // Without a declaration, the grader's 10 is off the 1–5 scale: an error naming it.
    let undeclared = calibrate(&[]);
    assert_eq!(undeclared.status.code(), Some(2));
    assert!(
        stderr(&undeclared).contains("gpt scored item"),
        "{}",
        stderr(&undeclared)
    );

    let declared = calibrate(&["--rater-scale", "gpt=0,10,1"]);
    assert!(declared.status.success(), "{}", stderr(&declared));
    let json: serde_json::Value = serde_json::from_slice(&declared.stdout).unwrap();
    let scales = &json["dimensions"][0]["scales"];
    let reason = scales["grader_absolute_refused"].as_str().expect("refused");
    assert!(
        reason.contains("0–10") && reason.contains("1–5"),
        "{reason}"
    );
    assert!(json["verdict"]["pearson"]["r"].is_number());
    assert!(json["verdict"]["bias"].is_null());

    let mapped = calibrate(&["--rater-scale", "gpt=0,10,1", "--map-scale", "gpt"]);
    assert!(mapped.status.success(), "{}", stderr(&mapped));
    let json: serde_json::Value = serde_json::from_slice(&mapped.stdout).unwrap();
    assert!(json["dimensions"][0]["scales"]["grader_absolute_refused"].is_null());
    assert!(json["verdict"]["bias"].is_number());

    let malformed = calibrate(&["--rater-scale", "gpt:0-10"]);
    assert_eq!(malformed.status.code(), Some(2));
    assert!(
        stderr(&malformed).contains("--rater-scale: \"gpt:0-10\" is not NAME=MIN,MAX,STEP"),
        "{}",
        stderr(&malformed)
    );
}

/// `calibrate --require` is a gate for pipelines: the report is written, then the run exits 3
/// when a named claim of the verdict does not hold (naming it and why), 0 when every one holds.
#[test]
fn calibrate_require_exits_3_when_a_claim_of_the_verdict_does_not_hold() {
    let work = tempfile::tempdir().unwrap();
    let ratings = work.path().join("ratings.csv");
    // 24 items in 12 cases, three clinicians around each item's level; one grader scores every
    // item at the clinicians' own mean (r = 1 by construction), another at its mirror (r = −1).
    let mut csv = String::from("item,rater,score,case\n");
    for item in 0..24 {
        let level = 2 + item * 7 % 3;
        // Who scores low, middling and high moves from item to item; the mean is `level`.
        let spread = [level - 1, level, level + 1];
        for (k, rater) in ["dr-a", "dr-b", "dr-c"].iter().enumerate() {
            let score = spread[(k + item) % 3];
            csv.push_str(&format!("i{item},{rater},{score},c{}\n", item / 2));
        }
        csv.push_str(&format!("i{item},faithful,{level},c{}\n", item / 2));
        csv.push_str(&format!("i{item},mirror,{},c{}\n", 6 - level, item / 2));
    }
    std::fs::write(&ratings, csv).unwrap();
    let calibrate = |grader: &str, out: &Path, require: &[&str]| {
        let mut args = vec![
            "calibrate",
            "--ratings",
            ratings.to_str().unwrap(),
            "--grader",
            grader,
            "--other-grader",
            if grader == "faithful" {
                "mirror"
            } else {
                "faithful"
            },
            "--scale",
            "1,5,1",
            "--resamples",
            "200",
            "--out",
            out.to_str().unwrap(),
        ];
        for claim in require {
            args.extend(["--require", claim]);
        }
        neurorater(&args)
    };

    let held = work.path().join("faithful.json");
    // Not `non-inferior-random`: with three clinicians whose agreement with the others differs
    // this much, its interval (t on about 2 df) is too wide to show anything either way.
    let passed = calibrate("faithful", &held, &["bar", "lower-bound"]);
    assert_eq!(passed.status.code(), Some(0), "{}", stderr(&passed));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&held).unwrap()).unwrap();
    assert!((json["verdict"]["pearson"]["r"].as_f64().unwrap() - 1.0).abs() < 1e-9);

    let failed_report = work.path().join("mirror.json");
    let failed = calibrate(
        "mirror",
        &failed_report,
        &["bar", "lower-bound", "non-inferior-random"],
    );
    assert_eq!(failed.status.code(), Some(3), "{}", stderr(&failed));
    let said = stderr(&failed);
    assert!(
        said.contains("--require bar: does not hold: r = -1.000 is below the bar 0.9"),
        "{said}"
    );
    assert!(
        said.contains("--require lower-bound: does not hold"),
        "{said}"
    );
    assert!(
        said.contains("--require non-inferior-random: does not hold: the grader's difference from a clinician (clinicians and cases random)"),
        "{said}"
    );
    // The report was written all the same, for the pipeline to keep.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&failed_report).unwrap()).unwrap();
    assert_eq!(json["verdict"]["meets_bar"], false);

    let unknown = calibrate("faithful", &held, &["vibes"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
}

/// Issue 41, finding 1: the demo's ratings imported, then "not applicable" allowed on one
/// dimension by re-importing the bundle (rubric version 2): `calibrate --db` failed with "no
/// human raters besides the grader". It now reads every version-1 rating, as before the edit.
#[test]
fn calibrate_reads_the_ratings_made_before_a_rubric_edit_that_kept_them_comparable() {
    let work = tempfile::tempdir().unwrap();
    let (bundle, db) = (work.path().join("demo"), work.path().join("study.sqlite"));
    let (bundle_arg, db_arg) = (bundle.to_str().unwrap(), db.to_str().unwrap());
    assert!(neurorater(&["demo", "--out", bundle_arg]).status.success());
    assert!(neurorater(&["import", bundle_arg, "--db", db_arg])
        .status
        .success());
    let ratings = bundle.join("ratings.csv");
    let imported = neurorater(&["import-ratings", ratings.to_str().unwrap(), "--db", db_arg]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let report = |name: &str| -> serde_json::Value {
        let out = work.path().join(name);
        let built = neurorater(&[
            "calibrate",
            "--db",
            db_arg,
            "--grader",
            "demo-grader-v1",
            "--resamples",
            "20",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(built.status.success(), "{}", stderr(&built));
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
    };
    let before = report("before.json");

    let study_file = bundle.join("study.json");
    let mut study: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&study_file).unwrap()).unwrap();
    study["rubric"]["dimensions"][0]["allow_not_applicable"] = serde_json::Value::Bool(true);
    std::fs::write(&study_file, serde_json::to_string_pretty(&study).unwrap()).unwrap();
    let reimported = neurorater(&["import", bundle_arg, "--db", db_arg]);
    assert!(reimported.status.success(), "{}", stderr(&reimported));

    let after = report("after.json");
    let versions = after["rubric_versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "the edit made version 2: {versions:?}");
    assert_eq!(versions[1]["current"], true);
    assert_eq!(versions[0]["left_out"], serde_json::json!([]));
    // The same clinicians, items and scores as before the edit; the same verdict.
    assert_eq!(after["summary"], before["summary"]);
    assert_eq!(after["verdict"]["pearson"], before["verdict"]["pearson"]);
    assert!(after["verdict"]["pearson"]["r"].is_number());
}
