//! `neurorater metrics` as a real process on the pilot bundle: each response's rationale measured
//! against the case's expected reasoning and stored, the values equal to the Python packages'
//! (`scripts/reference/metrics/make_text_metrics_reference.py` holds the pilot's pairs), nothing
//! measured twice, a changed rationale measured again, the report's section filled from the store,
//! a missing model named with the command that fetches it, and Ctrl-C (SIGINT) stopping a run
//! with every finished batch kept.

mod support;

use neurorater_tests::write_small_bundle;
use serde::Deserialize;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::neurorater;

/// The textmetrics crate's own bound against the Python references.
const TOLERANCE: f64 = 1e-4;

#[derive(Deserialize)]
struct Reference {
    texts: Vec<String>,
    pairs: Vec<Pair>,
}

#[derive(Deserialize)]
struct Pair {
    reference: usize,
    candidate: usize,
    cosine: f64,
    bertscore: Scores,
    rouge_l: Rouge,
}

#[derive(Deserialize)]
struct Scores {
    precision: f64,
    recall: f64,
    f1: f64,
}

#[derive(Deserialize)]
struct Rouge {
    f: f64,
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn pilot_db(work: &std::path::Path) -> std::path::PathBuf {
    let bundle = work.join("b");
    write_small_bundle(&bundle, false);
    let db = work.join("db.sqlite");
    let imported = neurorater(&[
        "import",
        bundle.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(imported.status.success(), "{}", text(&imported));
    db
}

#[test]
fn metrics_are_stored_once_equal_the_python_packages_and_reach_the_report() {
    let work = tempfile::tempdir().unwrap();
    let db = pilot_db(work.path());
    let db_arg = db.to_str().unwrap();

    let run = neurorater(&["metrics", "--db", db_arg]);
    assert!(run.status.success(), "{}", text(&run));
    // Three responses carry a rationale; the level-2 one has turns only.
    assert!(
        text(&run).contains("3 response(s) measured"),
        "{}",
        text(&run)
    );

    let reference: Reference = serde_json::from_str(include_str!(
        "../../textmetrics/tests/data/text_metrics_reference.json"
    ))
    .unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut checked = 0;
    for pair in &reference.pairs {
        let expected = &reference.texts[pair.reference];
        if expected != "Ovoid periventricular lesions in a young woman." {
            continue;
        }
        let rationale = &reference.texts[pair.candidate];
        let stored: (f64, f64, f64, f64, f64) = conn
            .query_row(
                "SELECT m.cosine, m.bertscore_precision, m.bertscore_recall, m.bertscore_f1,
                        m.rouge_l_f
                 FROM text_metrics m JOIN responses r ON m.response = r.id
                 WHERE r.rationale = ?1",
                [rationale],
                |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                },
            )
            .unwrap();
        let want = (
            pair.cosine,
            pair.bertscore.precision,
            pair.bertscore.recall,
            pair.bertscore.f1,
            pair.rouge_l.f,
        );
        for (name, got, want) in [
            ("cosine", stored.0, want.0),
            ("BERTScore P", stored.1, want.1),
            ("BERTScore R", stored.2, want.2),
            ("BERTScore F1", stored.3, want.3),
            ("ROUGE-L F", stored.4, want.4),
        ] {
            assert!(
                (got - want).abs() <= TOLERANCE,
                "{rationale:?}: {name} {got}, Python {want}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 3);
    let embeddings: i64 = conn
        .query_row("SELECT count(*) FROM text_embeddings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(embeddings, 4, "three rationales and one expected reasoning");

    // A second run measures nothing; a changed rationale is measured again, alone.
    let again = neurorater(&["metrics", "--db", db_arg]);
    assert!(
        text(&again).contains("0 response(s) measured"),
        "{}",
        text(&again)
    );
    conn.execute(
        "UPDATE responses SET rationale = 'Dawson fingers on sagittal FLAIR.'
         WHERE rationale = 'Dawson''s fingers.'",
        [],
    )
    .unwrap();
    let changed = neurorater(&["metrics", "--db", db_arg]);
    assert!(
        text(&changed).contains("1 response(s) measured"),
        "{}",
        text(&changed)
    );
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM text_metrics", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 3, "the stale row is replaced, not added to");

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
    assert!(imported.status.success(), "{}", text(&imported));
    let report = work.path().join("report.json");
    let built = neurorater(&[
        "calibrate",
        "--db",
        db_arg,
        "--grader",
        "g-v1",
        "--resamples",
        "50",
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(built.status.success(), "{}", text(&built));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let section = &json["automatic_metrics"];
    let metrics: Vec<&str> = section["against_clinicians"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        metrics,
        [
            "bertscore_f1",
            "bertscore_precision",
            "bertscore_recall",
            "cosine_minilm",
            "rouge_l_f",
            "grader"
        ]
    );
    assert!(section["metrics_missing"].is_null());
}

#[test]
fn a_missing_model_is_named_with_the_setup_command_and_nothing_is_written() {
    let work = tempfile::tempdir().unwrap();
    let db = pilot_db(work.path());
    let before = support::digest(&db);
    let empty = work.path().join("no-model");
    std::fs::create_dir_all(&empty).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(["metrics", "--db", db.to_str().unwrap()])
        .env("NEURORATER_MINILM_DIR", &empty)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = text(&run);
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(message.contains("scripts/setup.sh"), "{message}");
    assert_eq!(support::digest(&db), before);
}

/// Responses stored per transaction by `textmetrics::compute` (`PAIRS_PER_BATCH`).
const BATCH: i64 = 32;

/// The pilot bundle with `extra` more responses to ms-01/dx, each with its own rationale of
/// about sixty word pieces, so that measuring them takes a few batches' time.
fn long_study(work: &Path, extra: usize) -> std::path::PathBuf {
    let bundle = work.join("b");
    write_small_bundle(&bundle, false);
    let mut lines = std::fs::read_to_string(bundle.join("responses.jsonl")).unwrap();
    for k in 1..=extra {
        let rationale = format!(
            "Reading {k}: ovoid periventricular lesions perpendicular to the ventricles, \
             juxtacortical and infratentorial lesions satisfying dissemination in space; the \
             differential includes NMOSD and ADEM, less likely given the distribution ({k})."
        );
        lines.push_str(
            &serde_json::json!({"case_id": "ms-01", "task_id": "dx", "model": "vlm-c",
                                "sample": k, "answer": "MS", "rationale": rationale})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(bundle.join("responses.jsonl"), lines).unwrap();
    let db = work.join("db.sqlite");
    let imported = neurorater(&[
        "import",
        bundle.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(imported.status.success(), "{}", text(&imported));
    db
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Every stored metrics row with its values, in response order.
fn stored_rows(db: &Path) -> Vec<(i64, String, f64, f64, f64)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT response, rationale_sha256, cosine, bertscore_f1, rouge_l_f FROM text_metrics
             ORDER BY response",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    rows
}

#[test]
fn ctrl_c_stops_between_batches_keeping_each_finished_one_and_the_next_run_completes() {
    let work = tempfile::tempdir().unwrap();
    // Four batches: Ctrl-C comes once the first is stored, and the run stops after the one in
    // flight then.
    let db = long_study(work.path(), 125);
    let total = 128;
    let child = Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(["metrics", "--db", db.to_str().unwrap()])
        .env_remove("NEURORATER_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let measured = || count(&db, "SELECT count(*) FROM text_metrics");
    let deadline = Instant::now() + Duration::from_secs(120);
    while measured() == 0 {
        assert!(Instant::now() < deadline, "no batch was stored");
        std::thread::sleep(Duration::from_millis(10));
    }
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(1), "{}", text(&stopped));

    let kept = measured();
    assert!(kept < total, "the run finished before Ctrl-C");
    assert_eq!(kept % BATCH, 0, "whole batches only: {kept}");
    assert!(
        text(&stopped).contains(&format!(
            "stopped with {} response(s) left: run the same command again",
            total - kept
        )),
        "{}",
        text(&stopped)
    );
    // Each stored row has its rationale's embedding and its batch's audit entry: nothing
    // half-written.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM text_metrics m WHERE NOT EXISTS
             (SELECT 1 FROM text_embeddings e
              WHERE e.model = m.model AND e.text_sha256 = m.rationale_sha256)"
        ),
        0
    );
    let batches_audited = count(
        &db,
        "SELECT count(*) FROM audit_log WHERE action = 'compute text metrics'",
    );
    assert_eq!(
        batches_audited,
        kept / BATCH,
        "one audit entry per stored batch"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM audit_log WHERE action = 'compute text metrics'
             AND actor = 'neurorater metrics'"
        ),
        batches_audited,
        "the CLI is named as the batches' actor"
    );
    let before = stored_rows(&db);

    let resumed = neurorater(&["metrics", "--db", db.to_str().unwrap()]);
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert!(
        text(&resumed).contains(&format!("{} response(s) measured", total - kept)),
        "{}",
        text(&resumed)
    );
    assert_eq!(measured(), total);
    let after = stored_rows(&db);
    assert!(
        before.iter().all(|row| after.contains(row)),
        "rows stored before Ctrl-C are kept as they were"
    );
}
