//! `neurorater export --what ground-truth --format bundle` and `neurorater import-ground-truth`,
//! run as the real binary on the demo study.

use std::path::Path;
use std::process::{Command, Output};

fn neurorater(args: &[&str], db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("the neurorater binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_ground_truth_bundle_exports_imports_unchanged_and_refuses_a_contradiction() {
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let status = Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(["demo", "--out"])
        .arg(&demo)
        .status()
        .unwrap();
    assert!(status.success());
    let db = dir.path().join("db.sqlite");
    let import = neurorater(&["import", demo.to_str().unwrap()], &db);
    assert!(import.status.success(), "{}", stderr(&import));

    let gt = dir.path().join("gt");
    let export = neurorater(
        &[
            "export",
            "--what",
            "ground-truth",
            "--format",
            "bundle",
            "--out",
            gt.to_str().unwrap(),
        ],
        &db,
    );
    assert!(export.status.success(), "{}", stderr(&export));
    let cases = std::fs::read_dir(demo.join("cases")).unwrap().count();
    assert_eq!(std::fs::read_dir(gt.join("cases")).unwrap().count(), cases);
    let ms: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gt.join("cases/ms-01.json")).unwrap())
            .unwrap();
    let png = ms["key_image_files"][0]["png"].as_str().unwrap();
    assert!(std::fs::read(gt.join(png))
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n"));

    // The database's own ground truth back in: nothing changes.
    let again = neurorater(&["import-ground-truth", gt.to_str().unwrap()], &db);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 case(s) got a new version"));

    // A mark far outside the FLAIR volume: exit 2, file, line and field named.
    let mut ms = ms;
    ms["ground_truth"]["lesions"][0]["marks"][0]["points_lps_mm"][0][2] = 500.0.into();
    let text = serde_json::to_string_pretty(&ms).unwrap();
    std::fs::write(gt.join("cases/ms-01.json"), &text).unwrap();
    let refused = neurorater(&["import-ground-truth", gt.to_str().unwrap()], &db);
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(
        message.contains("cases/ms-01.json:")
            && message.contains(": ground_truth.lesions[0].marks[0].points_lps_mm: point 1 at"),
        "{message}"
    );

    // Bundle is a form of ground truth only.
    let wrong = neurorater(
        &[
            "export", "--what", "ratings", "--format", "bundle", "--out", "x",
        ],
        &db,
    );
    assert_eq!(wrong.status.code(), Some(2));
}
