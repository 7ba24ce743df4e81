//! `neurorater scaffold` on an export written by `neurorater_tests::pacs_export` (nested folders,
//! meaningless names, shuffled slices, two series in one folder, an enhanced multi-frame file, a
//! bare implicit-VR data set, a localizer, a DICOMDIR, junk, a BIDS dataset): exact cases, series
//! and files; no identifying value in any byte of the bundle or the database; the key beside the
//! bundle; and the bundle imports as it is.

mod support;

use neurorater_tests::pacs_export::write_pacs_export;
use std::path::{Path, PathBuf};
use support::{digest, neurorater};

fn every_file(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("list") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(every_file(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn assert_no_marker(files: &[PathBuf], markers: &[String]) {
    for file in files {
        let bytes = std::fs::read(file).expect("read");
        for marker in markers {
            let found = bytes.windows(marker.len()).any(|w| w == marker.as_bytes());
            assert!(!found, "{} holds {marker:?}", file.display());
        }
    }
}

fn case(bundle: &Path, id: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(bundle.join("cases").join(id).join("case.json"))
        .expect("case.json");
    serde_json::from_str(&text).expect("JSON")
}

/// (series id, label, files) of a case, in case.json order.
fn series_of(bundle: &Path, case_json: &serde_json::Value) -> Vec<(String, String, usize)> {
    let id = case_json["id"].as_str().expect("id");
    case_json["series"]
        .as_array()
        .expect("series")
        .iter()
        .map(|s| {
            let path = bundle
                .join("cases")
                .join(id)
                .join(s["path"].as_str().expect("path"));
            let files = if path.is_dir() {
                std::fs::read_dir(&path).expect("list").count()
            } else {
                1
            };
            assert_eq!(s["label_guessed"], true);
            (
                s["id"].as_str().expect("id").to_owned(),
                s["label"].as_str().expect("label").to_owned(),
                files,
            )
        })
        .collect()
}

/// Runs `neurorater ARGS`, which must succeed; its standard output.
fn succeeds(args: &[&str]) -> String {
    let output = neurorater(args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {stdout}{stderr}");
    stdout
}

fn import(bundle: &Path, db: &Path) -> String {
    succeeds(&[
        "import",
        bundle.to_str().expect("utf-8"),
        "--db",
        db.to_str().expect("utf-8"),
    ])
}

#[test]
fn a_pacs_export_becomes_a_de_identified_bundle_that_imports_as_it_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let export = write_pacs_export(&dir.path().join("export"));
    let bundle = dir.path().join("study");
    let stdout = succeeds(&[
        "scaffold",
        export.root.to_str().expect("utf-8"),
        "--out",
        bundle.to_str().expect("utf-8"),
    ]);

    // Cases are numbered in the order of their first file: EXPORT/B, EXPORT/ZZPHI…, bids.
    let ct = case(&bundle, "case-001");
    let mr = case(&bundle, "case-002");
    let bids = case(&bundle, "case-003");
    assert!(!bundle.join("cases/case-004").exists(), "{stdout}");
    assert_eq!(
        series_of(&bundle, &ct),
        [("ct".to_owned(), "CT".to_owned(), 4)]
    );
    assert_eq!(
        series_of(&bundle, &mr),
        [
            ("flair".to_owned(), "FLAIR".to_owned(), 5),
            ("t2".to_owned(), "T2".to_owned(), 3),
            ("t1c".to_owned(), "T1+C".to_owned(), 4),
            ("dwi".to_owned(), "DWI".to_owned(), 1),
        ]
    );
    assert_eq!(
        series_of(&bundle, &bids),
        [("flair".to_owned(), "FLAIR".to_owned(), 1)]
    );
    // Age and sex kept as fields: PatientAge, else birth and study date, else participants.tsv.
    for (case, modality, age, sex) in [
        (&ct, "CT", 68, "M"),
        (&mr, "MR", 34, "F"),
        (&bids, "MR", 61, "M"),
    ] {
        assert_eq!(
            (&case["modality"], &case["age"], &case["sex"]),
            (&modality.into(), &age.into(), &sex.into()),
            "{case}"
        );
        assert_eq!(case["tasks"], serde_json::json!([]));
    }
    assert_eq!(
        ct["to_complete"],
        serde_json::json!([
            "disease_group",
            "tasks",
            "clinical_note",
            "series_labels",
            "burned_in_annotation"
        ])
    );
    assert_eq!(
        mr["to_complete"],
        serde_json::json!(["disease_group", "tasks", "clinical_note", "series_labels"])
    );

    // Skipped with a reason, and the localizer and the DICOMDIR reported.
    for (file, reason) in [
        ("EXPORT/README.TXT", "a text file"),
        ("EXPORT/EMPTY", "an empty file"),
        ("EXPORT/thumb.dcm", "a PNG picture"),
        ("EXPORT/B/SR0001", "DICOM without pixel data"),
        (
            "bids/sub-zz01/ses-1/func/sub-zz01_ses-1_task-rest_bold.nii.gz",
            "BIDS func data",
        ),
        (
            "bids/sub-zz01/ses-1/anat/sub-zz01_ses-1_FLAIR.json",
            "the JSON sidecar",
        ),
    ] {
        let line = format!("skipped {}: {reason}", export.root.join(file).display());
        assert!(stdout.contains(&line), "{line}\n{stdout}");
    }
    let skipped = stdout.lines().filter(|l| l.starts_with("skipped ")).count();
    assert_eq!(skipped, 8, "{stdout}");
    assert!(stdout.contains("a localizer, left out"), "{stdout}");
    assert!(
        stdout.contains("a DICOMDIR listing 3 files, 1 of them not found"),
        "{stdout}"
    );

    // The key: beside the bundle, owner-only, original study → case id.
    let key_path = dir.path().join("study.key.csv");
    let key = std::fs::read_to_string(&key_path).expect("key");
    assert!(
        key.contains(&format!(
            "case-001,{},{},",
            export.study_uids[1], export.accessions[1]
        )),
        "{key}"
    );
    assert!(
        key.contains(&format!(
            "case-002,{},{},",
            export.study_uids[0], export.accessions[0]
        )),
        "{key}"
    );
    assert!(
        key.contains("case-003,,,") && key.contains("sub-zz01/ses-1"),
        "{key}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_path)
            .expect("key")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Nothing else beside the bundle: no partial folder left.
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside.len(), 3, "{beside:?}");

    let db = dir.path().join("study.sqlite");
    let imported = import(&bundle, &db);
    assert!(
        imported.contains("3 cases, 6 series, 18 images, 0 tasks"),
        "{imported}"
    );
    assert!(
        imported.contains("0 identifying DICOM attributes found"),
        "{imported}"
    );

    let mut stored = every_file(&bundle);
    stored.extend(every_file(dir.path()).into_iter().filter(|f| {
        f.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("study.sqlite"))
    }));
    assert_no_marker(&stored, &export.markers);
}

#[test]
fn a_bundle_folder_that_is_not_empty_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let export = write_pacs_export(&dir.path().join("export"));
    let bundle = dir.path().join("study");
    std::fs::create_dir(&bundle).expect("mkdir");
    std::fs::write(bundle.join("notes.txt"), "mine").expect("write");
    let before = digest(&bundle.join("notes.txt"));
    let output = neurorater(&[
        "scaffold",
        export.root.to_str().expect("utf-8"),
        "--out",
        bundle.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not empty"));
    assert_eq!(std::fs::read_dir(&bundle).expect("list").count(), 1);
    assert_eq!(digest(&bundle.join("notes.txt")), before);
    assert!(!dir.path().join("study.key.csv").exists());
}

/// A generic CSV naming studies by accession number or StudyInstanceUID and key images by file
/// name, SOP Instance UID and InstanceNumber: the bundle holds the responses under case ids and
/// the tasks with key images as display indices, and imports.
#[test]
fn a_harness_csv_becomes_responses_and_tasks_with_key_images_as_display_indices() {
    let dir = tempfile::tempdir().expect("temp dir");
    let export = write_pacs_export(&dir.path().join("export"));
    let csv = dir.path().join("predictions.csv");
    // FLAIR slices lie at z = 3 × InstanceNumber, so IM4 (instance 4) is display index 3; the
    // T2's instance 3 (SOP …99901.3.5.3) is index 2; the CT's instance 1 is index 0.
    std::fs::write(
        &csv,
        format!(
            "study,question_id,question,prediction,key_image\n\
             {acc},dx,What is the diagnosis?,Multiple sclerosis,IM4;1.2.826.0.1.3680043.99901.3.5.3\n\
             {acc},dx,,Small vessel disease,\n\
             {uid},bleed,Is there a bleed?,No,#1\n",
            acc = export.accessions[0],
            uid = export.study_uids[1],
        ),
    )
    .expect("write");
    let bundle = dir.path().join("study");
    let run = |responses: &Path| {
        neurorater(&[
            "scaffold",
            export.root.to_str().expect("utf-8"),
            "--out",
            bundle.to_str().expect("utf-8"),
            "--responses",
            responses.to_str().expect("utf-8"),
            "--map",
            "case_id=study,task_id=question_id,prompt=question,answer=prediction,key_images=key_image",
            "--model",
            "vlm-a",
        ])
    };
    let output = run(&csv);
    assert!(output.status.success(), "{output:?}");
    let mr = case(&bundle, "case-002");
    assert_eq!(
        mr["tasks"],
        serde_json::json!([{
            "id": "dx", "family": "differential_diagnosis", "level": 1,
            "prompt": "What is the diagnosis?",
            "key_images": [{"series": "flair", "slice": 3}, {"series": "t2", "slice": 2}]
        }])
    );
    let ct = case(&bundle, "case-001");
    assert_eq!(
        ct["tasks"][0]["key_images"],
        serde_json::json!([{"series": "ct", "slice": 0}])
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(bundle.join("responses.jsonl"))
        .expect("responses")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let keys: Vec<(&str, &str, u64, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["case_id"].as_str().expect("case"),
                l["task_id"].as_str().expect("task"),
                l["sample"].as_u64().expect("sample"),
                l["model"].as_str().expect("model"),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("case-002", "dx", 0, "vlm-a"),
            ("case-002", "dx", 1, "vlm-a"),
            ("case-001", "bleed", 0, "vlm-a")
        ]
    );
    let db = dir.path().join("study.sqlite");
    let imported = import(&bundle, &db);
    assert!(
        imported.contains("2 tasks; 3 responses added"),
        "{imported}"
    );
    let mut stored = every_file(&bundle);
    stored.push(db.clone());
    assert_no_marker(&stored, &export.markers);

    // lmms-eval's samples file, added to the bundle later: the study named by its accession
    // number through the key beside the bundle; a second run adds nothing.
    let samples = dir.path().join("samples_dx.jsonl");
    std::fs::write(
        &samples,
        format!(
            "{{\"doc_id\": 0, \"doc\": {{\"study\": \"{}\"}}, \"filtered_resps\": [\"Neuromyelitis optica\"]}}\n",
            export.accessions[0]
        ),
    )
    .expect("write");
    let add = |samples: &Path, task: &str| {
        neurorater(&[
            "import-responses",
            samples.to_str().expect("utf-8"),
            "--bundle",
            bundle.to_str().expect("utf-8"),
            "--map",
            "case_id=doc.study,answer=filtered_resps.0",
            "--model",
            "vlm-b",
            "--task",
            task,
        ])
    };
    let added = add(&samples, "dx");
    let shown = String::from_utf8_lossy(&added.stdout);
    assert!(
        shown.contains("1 responses added") && shown.contains("(0 already there)"),
        "{added:?}"
    );
    let again = add(&samples, "dx");
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("0 responses added"),
        "{again:?}"
    );
    let jsonl = std::fs::read_to_string(bundle.join("responses.jsonl")).expect("responses");
    assert_eq!(jsonl.lines().count(), 4);
    assert!(
        jsonl.lines().last().is_some_and(
            |l| l.contains(r#""case_id":"case-002","task_id":"dx","model":"vlm-b","sample":0"#)
        ),
        "{jsonl}"
    );
    let refused = add(&samples, "triage");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(&format!(
            "{}:1: task_id: case \"case-002\" has no task \"triage\"",
            samples.display()
        )),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(bundle.join("responses.jsonl")).expect("responses"),
        jsonl
    );
    assert!(import(&bundle, &db).contains("1 responses added (3 already stored)"));

    // A study the scan did not find: named by file, line and field; nothing written.
    std::fs::remove_dir_all(&bundle).expect("clean");
    std::fs::remove_file(dir.path().join("study.key.csv")).expect("clean");
    let wrong = dir.path().join("wrong.csv");
    std::fs::write(
        &wrong,
        "study,question_id,question,prediction,key_image\nNOPE,dx,Q,A,\nZZACC7001,dx,Q,A,flair:9\n",
    )
    .expect("write");
    let output = run(&wrong);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = wrong.display();
    assert!(
        stderr.contains(&format!(
            "{shown}:2: case_id: \"NOPE\" names no scanned study"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{shown}:3: key_images: \"flair:9\" names no slice"
        )),
        "{stderr}"
    );
    assert!(!bundle.exists() && !dir.path().join("study.key.csv").exists());
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("study") && !name.starts_with("study.sqlite"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `import-responses` resolves key images against the bundle's own files (file name,
/// InstanceNumber inside the copy, display index), adds them to the task in case.json, and
/// refuses a key image that names no slice without writing anything.
#[test]
fn import_responses_resolves_key_images_by_the_bundles_files_into_the_task() {
    let dir = tempfile::tempdir().expect("temp dir");
    let export = write_pacs_export(&dir.path().join("export"));
    let bundle = dir.path().join("study");
    let csv = dir.path().join("predictions.csv");
    std::fs::write(
        &csv,
        format!(
            "study,question_id,question,prediction\n{},dx,What is the diagnosis?,Multiple sclerosis\n",
            export.accessions[0]
        ),
    )
    .expect("write");
    succeeds(&[
        "scaffold",
        export.root.to_str().expect("utf-8"),
        "--out",
        bundle.to_str().expect("utf-8"),
        "--responses",
        csv.to_str().expect("utf-8"),
        "--map",
        "case_id=study,task_id=question_id,prompt=question,answer=prediction",
        "--model",
        "vlm-a",
    ]);
    let case_json = bundle.join("cases").join("case-002").join("case.json");
    let before = std::fs::read_to_string(&case_json).expect("case.json");
    assert_eq!(
        case(&bundle, "case-002")["tasks"][0]["key_images"],
        serde_json::json!([])
    );

    let add = |file: &Path| {
        neurorater(&[
            "import-responses",
            file.to_str().expect("utf-8"),
            "--bundle",
            bundle.to_str().expect("utf-8"),
            "--map",
            "case_id=study,task_id=question_id,answer=prediction,key_images=key_image",
            "--model",
            "vlm-b",
        ])
    };
    // The copies are 0001.dcm… in display order; FLAIR instance 4 is display index 3 (its
    // slices lie at z = 3 × InstanceNumber), so `flair:#4` and `flair:0004.dcm` are one slice.
    let wrong = dir.path().join("wrong.csv");
    std::fs::write(
        &wrong,
        "study,question_id,prediction,key_image\nZZACC7001,dx,Stroke,flair:0099.dcm\n",
    )
    .expect("write");
    let refused = add(&wrong);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(&format!(
            "{}:2: key_images: \"flair:0099.dcm\" names no slice",
            wrong.display()
        )),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&case_json).expect("case.json"),
        before
    );

    let samples = dir.path().join("samples.csv");
    std::fs::write(
        &samples,
        "study,question_id,prediction,key_image\n\
         ZZACC7001,dx,Stroke,flair:0004.dcm;flair:#4;t2:0\n",
    )
    .expect("write");
    let added = add(&samples);
    assert!(added.status.success(), "{added:?}");
    assert_eq!(
        case(&bundle, "case-002")["tasks"][0]["key_images"],
        serde_json::json!([{"series": "flair", "slice": 3}, {"series": "t2", "slice": 0}])
    );
    let db = dir.path().join("study.sqlite");
    assert!(import(&bundle, &db).contains("2 responses added"));
}
