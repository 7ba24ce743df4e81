//! `neurorater rater` and `assign` as real processes on the demo study: a lead's plan from the
//! command line, with the overlap and shares the summary reports, and refusals that exit 2
//! naming the argument and leave the database as it was.

mod support;

use std::path::Path;
use support::{digest, neurorater};

fn ok(args: &[&str]) -> serde_json::Value {
    let out = neurorater(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn refused(args: &[&str]) -> String {
    let out = neurorater(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} must be refused as bad input"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_lead_assigns_the_demo_study_from_the_command_line() {
    let work = tempfile::tempdir().unwrap();
    let (bundle, db) = (work.path().join("demo"), work.path().join("study.sqlite"));
    let (bundle, db) = (bundle.to_str().unwrap(), db.to_str().unwrap());
    assert!(neurorater(&["demo", "--out", bundle]).status.success());
    assert!(neurorater(&["import", bundle, "--db", db]).status.success());

    for (name, role) in [
        ("Dr Lee Lead", "curator"),
        ("Dr A", "neuroradiologist"),
        ("Dr B", "neurologist"),
        ("Dr C", "resident"),
    ] {
        let rater = ok(&["rater", "add", name, "--role", role, "--db", db]);
        assert_eq!(rater["role"], role);
    }
    assert_eq!(
        ok(&["rater", "list", "--db", db]).as_array().unwrap().len(),
        4
    );

    let plan = ok(&[
        "assign",
        "--db",
        db,
        "--study",
        "neurorater-demo",
        "--name",
        "pilot",
        "--seed",
        "7",
        "--lead",
        "Dr Lee Lead",
        "--rater",
        "Dr A",
        "--rater",
        "Dr B",
        "--rater",
        "Dr C",
        "--overlap",
        "0.25",
        "--repeat",
        "0.1",
        "--repeat-after-days",
        "21",
    ]);
    // 288 demo responses: 72 read by all three, the other 216 dealt out 72 each.
    assert_eq!(plan["n_responses"], 288);
    assert_eq!(plan["n_overlap"], 72);
    assert_eq!(plan["n_unassigned"], 0);
    assert_eq!(
        plan["seed"], "7",
        "a seed is a string in JSON, exact beyond 2^53"
    );
    for rater in plan["raters"].as_array().unwrap() {
        assert_eq!(rater["first_reads"], 144, "{rater}");
    }

    let before = digest(Path::new(db));
    let unknown = refused(&[
        "assign",
        "--db",
        db,
        "--study",
        "neurorater-demo",
        "--name",
        "second",
        "--seed",
        "1",
        "--lead",
        "Dr Lee Lead",
        "--rater",
        "Dr Nobody",
    ]);
    assert!(
        unknown.contains("--rater: no rater named \"Dr Nobody\""),
        "{unknown}"
    );
    let bad_share = refused(&[
        "assign",
        "--db",
        db,
        "--study",
        "neurorater-demo",
        "--name",
        "second",
        "--seed",
        "1",
        "--lead",
        "Dr Lee Lead",
        "--rater",
        "Dr A",
        "--overlap",
        "1.5",
    ]);
    assert!(bad_share.contains("overlap_share"), "{bad_share}");
    let curator_reads = refused(&[
        "assign",
        "--db",
        db,
        "--study",
        "neurorater-demo",
        "--name",
        "second",
        "--seed",
        "1",
        "--lead",
        "Dr Lee Lead",
        "--rater",
        "Dr Lee Lead",
    ]);
    assert!(curator_reads.contains("is a curator"), "{curator_reads}");
    let bad_role = refused(&["rater", "add", "Dr D", "--role", "surgeon", "--db", db]);
    assert!(bad_role.contains("--role: \"surgeon\""), "{bad_role}");
    assert_eq!(
        digest(Path::new(db)),
        before,
        "a refused command writes nothing"
    );

    // A reader joins the running plan: they read its overlap; nothing new to deal.
    ok(&["rater", "add", "Dr D", "--role", "neurologist", "--db", db]);
    let topped = ok(&[
        "assign",
        "--db",
        db,
        "--study",
        "neurorater-demo",
        "--name",
        "pilot",
        "--lead",
        "Dr Lee Lead",
        "--top-up",
        "--rater",
        "Dr D",
    ]);
    assert_eq!(topped["n_new_responses"], 0);
    assert_eq!(topped["plan"]["top_ups"], 1);
    let raters = topped["plan"]["raters"].as_array().unwrap();
    assert_eq!(raters.len(), 4);
    assert_eq!(raters[3]["rater"], "Dr D");
    assert_eq!(raters[3]["first_reads"], 72);
    assert_eq!(raters[3]["overlap"], 72);
    let bad_key = refused(&[
        "assign",
        "--db",
        db,
        "--study",
        "neurorater-demo",
        "--name",
        "third",
        "--seed",
        "1",
        "--lead",
        "Dr Lee Lead",
        "--rater",
        "Dr A",
        "--stratify-by",
        "hospital",
    ]);
    assert!(bad_key.contains("--stratify-by: \"hospital\""), "{bad_key}");
}
