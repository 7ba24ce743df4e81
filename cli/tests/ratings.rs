//! `neurorater import-ratings` and `calibrate --db` as real processes on the demo study: the
//! clinicians' ratings go in once, a broken file exits 2 naming its lines and leaves the database
//! byte-identical, and the report counts only clinicians as clinicians.

mod support;

use std::path::Path;
use support::{digest, neurorater};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn demo_ratings_import_once_and_calibrate_against_the_clinicians_only() {
    let work = tempfile::tempdir().unwrap();
    let (bundle, db) = (work.path().join("demo"), work.path().join("study.sqlite"));
    let (bundle, db) = (bundle.to_str().unwrap(), db.to_str().unwrap());
    assert!(neurorater(&["demo", "--out", bundle]).status.success());
    assert!(neurorater(&["import", bundle, "--db", db]).status.success());
    let ratings = format!("{bundle}/ratings.csv");

    let first = neurorater(&["import-ratings", &ratings, "--db", db]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let out = text(&first.stdout);
    assert!(out.contains("ratings added (0 already stored)"), "{out}");
    assert!(
        out.contains("new raters: neurologist-C, neurorad-A, neurorad-B")
            && !out.contains("assumed"),
        "the demo file gives every rater's role: {out}"
    );
    let added = out
        .split(" ratings added")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .expect("a count of ratings added");
    let again = neurorater(&["import-ratings", &ratings, "--db", db]);
    assert_eq!(again.status.code(), Some(0));
    let again = text(&again.stdout);
    assert!(
        again.contains(&format!("; 0 ratings added ({added} already stored)")),
        "{again}"
    );

    let broken = work.path().join("broken.csv");
    std::fs::write(&broken, "item,rater,score\nnot/a/response/0,dr-x,3\n").unwrap();
    let before = digest(Path::new(db));
    let refused = neurorater(&["import-ratings", broken.to_str().unwrap(), "--db", db]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        text(&refused.stderr).trim_end(),
        format!(
            "{}:2: item: `not/a/response/0` names no stored response (items are \
             case/task/model/sample); import its study bundle first",
            broken.display()
        )
    );
    assert_eq!(
        digest(Path::new(db)),
        before,
        "a refused import writes nothing"
    );

    let report = neurorater(&[
        "calibrate",
        "--db",
        db,
        "--grader",
        "demo-grader-v1",
        "--resamples",
        "200",
    ]);
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(
        json["summary"]["human_raters"],
        serde_json::json!(["neurologist-C", "neurorad-A", "neurorad-B"])
    );
    assert_eq!(
        json["options"]["other_grader_versions"],
        serde_json::json!(["demo-grader-v2"]),
        "the second grader version is compared as drift, not counted as a clinician"
    );
    assert!(json["verdict"]["pearson"]["r"].is_f64());

    // Without --grader the report is clinicians only, and the graders are still not clinicians.
    let humans_only = neurorater(&["calibrate", "--db", db, "--resamples", "50"]);
    assert_eq!(
        humans_only.status.code(),
        Some(0),
        "{}",
        text(&humans_only.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&humans_only.stdout).unwrap();
    assert_eq!(
        json["summary"]["human_raters"],
        serde_json::json!(["neurologist-C", "neurorad-A", "neurorad-B"]),
        "demo-grader-v1 and demo-grader-v2 are not clinicians"
    );
    assert!(json["verdict"].is_null());
    assert_eq!(json["grader_drift"], serde_json::json!([]));

    // The analyst leaves a reader out and states a margin; the report says both.
    let chosen = neurorater(&[
        "calibrate",
        "--db",
        db,
        "--grader",
        "demo-grader-v1",
        "--exclude-rater",
        "neurologist-C",
        "--margin",
        "0.1",
        "--resamples",
        "50",
    ]);
    assert_eq!(chosen.status.code(), Some(0), "{}", text(&chosen.stderr));
    let json: serde_json::Value = serde_json::from_slice(&chosen.stdout).unwrap();
    assert_eq!(
        json["summary"]["human_raters"],
        serde_json::json!(["neurorad-A", "neurorad-B"])
    );
    assert_eq!(
        json["summary"]["excluded_raters"],
        serde_json::json!(["neurologist-C"])
    );
    assert_eq!(json["options"]["non_inferiority_margin"], 0.1);
    assert!(json["verdict"]["summary"]
        .as_str()
        .unwrap()
        .ends_with("Left out by the analyst: neurologist-C."));
}
