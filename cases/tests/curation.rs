//! Curation on a real database holding the imported demo study: versions and review, concurrent
//! edits, validation against the images, compare and merge, the ground-truth bundle round trip,
//! reveal after rating, missed findings and the human baseline; measurements on the demo CT
//! against pydicom and numpy.

use cases::app::baseline::{self as app_baseline, Answer, TaskRef};
use cases::app::{catalog, Session};
use cases::curation::{
    self, baseline, BaselineState, BaselineTask, CuratedLesion, CuratedTruth, Decision, Edit,
    HumanAnswer, HumanRole, Side, Source, Status, MAIN_BRANCH,
};
use cases::marks::{Mark, MarkKind, Plane};
use cases::model::SliceRef;
use cases::progress::NoProgress;
use cases::store::Store;
use cases::Error;
use cases::ImportError;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const STUDY: &str = "neurorater-demo";

#[path = "support/demo_study.rs"]
mod demo_study;

struct Fixture {
    dir: tempfile::TempDir,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    demo_study::demo_database_at(&path);
    let store = Store::open(&path).unwrap();
    Fixture { dir, store }
}

fn add_rater(store: &mut Store, name: &str, role: &str) -> i64 {
    store
        .write(|w| {
            w.tx()
                .execute(
                    "INSERT INTO raters (name, role, years_experience) VALUES (?1, ?2, 5)",
                    [name, role],
                )
                .map_err(|e| w.fail("adding a rater", e))?;
            Ok(w.tx().last_insert_rowid())
        })
        .unwrap()
}

fn count(store: &Store, sql: &str) -> i64 {
    store.read().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn edit<'a>(curator: i64, based_on: Option<i64>, truth: &'a CuratedTruth) -> Edit<'a> {
    Edit {
        study_id: STUDY,
        case_id: "ms-01",
        branch: MAIN_BRANCH,
        curator,
        based_on,
        truth,
    }
}

fn ms01(store: &Store) -> CuratedTruth {
    curation::current(store, STUDY, "ms-01")
        .unwrap()
        .unwrap()
        .truth
}

/// A point mark on the FLAIR of ms-01 at `lps`.
fn point(lps: [f64; 3]) -> Mark {
    Mark {
        series_id: "flair".into(),
        kind: MarkKind::Point,
        plane: Plane::Axial,
        points_lps_mm: vec![lps],
    }
}

/// The z (LPS mm) of slice `k` of a demo series: ImagePositionPatient of its k-th file in
/// display order.
fn slice_z(series_dir: &Path, k: u32) -> f64 {
    let mut metas: Vec<_> = std::fs::read_dir(series_dir)
        .unwrap()
        .map(|e| imaging::read_dicom_meta(&e.unwrap().path()).unwrap())
        .collect();
    imaging::order_series(&mut metas);
    metas[k as usize].image_position_patient.unwrap()[2]
}

#[test]
fn every_demo_case_has_complete_ground_truth_as_version_1_with_marks_on_their_slices() {
    let f = fixture();
    let cases = f.store.cases(STUDY).unwrap();
    let bundled = std::fs::read_dir(demo_study::demo_bundle().join("cases"))
        .unwrap()
        .count();
    assert_eq!(cases.len(), bundled);
    let mut marks = 0;
    for case in cases {
        let history = curation::history(&f.store, STUDY, &case.id).unwrap();
        assert_eq!(history.len(), 1, "{}", case.id);
        let v1 = &history[0];
        assert_eq!(
            (v1.version, v1.status, v1.source),
            (1, Status::Final, Source::Bundle)
        );
        let truth = &v1.truth;
        assert!(!truth.diagnosis.is_empty() && !truth.differential.is_empty());
        assert!(!truth.expected_reasoning.is_empty() && truth.difficulty.is_some());
        assert_eq!(truth.tasks.len(), case.n_tasks as usize, "{}", case.id);
        assert!(truth.tasks.iter().all(|t| !t.key_images.is_empty()));
        let context = curation::CaseContext::load(&f.store, STUDY, &case.id).unwrap();
        assert_eq!(context.check(&f.store, truth).unwrap(), vec![]);
        for lesion in &truth.lesions {
            assert!(!lesion.marks.is_empty(), "{}/{}", case.id, lesion.id);
            for mark in &lesion.marks {
                marks += 1;
                let shown = lesion
                    .shown_on
                    .iter()
                    .find(|s| s.series == mark.series_id)
                    .unwrap();
                let dir = demo_study::demo_bundle()
                    .join("cases")
                    .join(&case.id)
                    .join(&mark.series_id);
                // The slice shown is the one the mark lies on (5 mm slices: within half of one).
                let z = slice_z(&dir, shown.slice);
                assert!(
                    (z - mark.points_lps_mm[0][2]).abs() <= 2.5,
                    "{}/{}: slice z {z}, mark {:?}",
                    case.id,
                    lesion.id,
                    mark.points_lps_mm[0]
                );
            }
        }
    }
    assert!(marks >= 15, "{marks} marks");
}

#[test]
fn a_draft_is_reviewed_and_finalised_by_a_second_curator() {
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let ben = add_rater(&mut f.store, "Ben", "neuroradiologist");
    let mut truth = ms01(&f.store);
    truth.lesions.push(CuratedLesion {
        id: "L7".into(),
        description: "Right temporal juxtacortical plaque".into(),
        marks: vec![point([40.0, 10.0, -5.0])],
        shown_on: vec![],
    });
    let v2 = curation::save_draft(&mut f.store, &edit(ana, Some(1), &truth)).unwrap();
    assert_eq!(v2, 2);
    // A draft is not the ground truth yet.
    assert_eq!(
        curation::current(&f.store, STUDY, "ms-01")
            .unwrap()
            .unwrap()
            .version,
        1
    );
    let early = curation::review(
        &mut f.store,
        STUDY,
        "ms-01",
        ben,
        2,
        Decision::Finalised,
        "",
    );
    assert!(matches!(early, Err(Error::CurationRefused(m)) if m.contains("is draft")));
    curation::submit_for_review(&mut f.store, STUDY, "ms-01", ana, 2).unwrap();
    let own = curation::review(
        &mut f.store,
        STUDY,
        "ms-01",
        ana,
        2,
        Decision::Finalised,
        "",
    );
    assert!(matches!(own, Err(Error::CurationRefused(m)) if m.contains("second curator")));
    curation::review(
        &mut f.store,
        STUDY,
        "ms-01",
        ben,
        2,
        Decision::Comment,
        "L7 is convincing",
    )
    .unwrap();
    curation::review(
        &mut f.store,
        STUDY,
        "ms-01",
        ben,
        2,
        Decision::Finalised,
        "",
    )
    .unwrap();

    let history = curation::history(&f.store, STUDY, "ms-01").unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].source, Source::Bundle);
    let v2 = &history[1];
    assert_eq!(
        (v2.status, v2.author.as_deref(), v2.based_on),
        (Status::Final, Some("Ana"), Some(1))
    );
    let decisions: Vec<(&str, &str)> = v2
        .reviews
        .iter()
        .map(|r| (r.by.as_str(), r.decision.as_str()))
        .collect();
    assert_eq!(
        decisions,
        [
            ("Ana", "submitted"),
            ("Ben", "comment"),
            ("Ben", "finalised")
        ]
    );
    assert_eq!(ms01(&f.store), truth);
    let changes = curation::diff_versions(&history[0].truth, &v2.truth);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].field, "lesions[L7]");

    // The table exports read now holds the final version, and a re-import keeps it.
    let source: String = f
        .store
        .read()
        .query_row(
            "SELECT g.source FROM ground_truth g JOIN cases c ON g.case_ref = c.id
             WHERE c.case_id = 'ms-01'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(source, "curator");
    cases::import::import_bundle_dir(&mut f.store, &demo_study::demo_bundle(), &NoProgress)
        .unwrap();
    assert_eq!(ms01(&f.store), truth);
    let exported = cases::export::export(
        &f.store,
        cases::export::What::GroundTruth,
        cases::export::Format::Jsonl,
    )
    .unwrap();
    let line = exported.lines().find(|l| l.contains("\"ms-01\"")).unwrap();
    assert!(line.contains("Right temporal juxtacortical plaque"));
    assert!(matches!(
        cases::store::audit::verify(f.store.read()).unwrap(),
        cases::store::audit::Verdict::Intact { .. }
    ));
    assert_eq!(
        count(
            &f.store,
            "SELECT count(*) FROM audit_log WHERE action LIKE 'ground_truth.%'"
        ),
        // Version 1 stored, version 2 saved, submitted, comment, finalised.
        5
    );
}

#[test]
fn a_concurrent_edit_is_refused_naming_who_saved_first() {
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let ben = add_rater(&mut f.store, "Ben", "curator");
    let mut by_ana = ms01(&f.store);
    by_ana.diagnosis = "Relapsing-remitting multiple sclerosis (Ana)".into();
    let mut by_ben = ms01(&f.store);
    by_ben.diagnosis = "Multiple sclerosis (Ben)".into();
    curation::save_draft(&mut f.store, &edit(ana, Some(1), &by_ana)).unwrap();
    let refused = curation::save_draft(&mut f.store, &edit(ben, Some(1), &by_ana)).unwrap_err();
    let message = refused.to_string();
    assert!(
        matches!(&refused, Error::StaleGroundTruth { latest: 2, by, .. } if by == "Ana"),
        "{message}"
    );
    assert!(message.contains("after version 1"), "{message}");
    assert_eq!(
        count(&f.store, "SELECT count(*) FROM ground_truth_versions"),
        2
    );
    // Starting from nothing while a version exists is just as stale.
    assert!(matches!(
        curation::save_draft(&mut f.store, &edit(ben, None, &by_ben)),
        Err(Error::StaleGroundTruth { latest: 2, .. })
    ));
    // Based on the latest, Ben's edit goes through.
    assert_eq!(
        curation::save_draft(&mut f.store, &edit(ben, Some(2), &by_ben)).unwrap(),
        3
    );
    // Reviewing a version that is no longer the latest is refused too.
    assert!(matches!(
        curation::submit_for_review(&mut f.store, STUDY, "ms-01", ana, 2),
        Err(Error::StaleGroundTruth { latest: 3, .. })
    ));
}

#[test]
fn ground_truth_that_contradicts_the_case_is_refused_with_each_field() {
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let mut truth = ms01(&f.store);
    truth.lesions[0].marks[0].series_id = "swi".into();
    truth.lesions[1].marks = vec![point([0.0, 0.0, 400.0])];
    truth.lesions[2].shown_on = vec![SliceRef {
        series: "flair".into(),
        slice: 999,
    }];
    truth.tasks[0].task_id = "t9".into();
    let message = curation::save_draft(&mut f.store, &edit(ana, Some(1), &truth))
        .unwrap_err()
        .to_string();
    for expected in [
        "lesions[0].marks[0].series_id: no series \"swi\"",
        "lesions[1].marks[0].points_lps_mm: point 1 at (0.0, 0.0, 400.0) mm lies outside",
        "lesions[2].shown_on[0].slice: slice 999 is beyond the last",
        "tasks[0].task_id: no task \"t9\"",
    ] {
        assert!(message.contains(expected), "{expected} not in {message}");
    }
    assert_eq!(
        count(&f.store, "SELECT count(*) FROM ground_truth_versions"),
        0
    );
}

#[test]
fn two_independent_curations_are_compared_and_merged_into_a_consensus() {
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let ben = add_rater(&mut f.store, "Ben", "curator");
    let base = ms01(&f.store);
    let mut a = base.clone();
    a.difficulty = base.difficulty.map(|d| d % 3 + 1);
    let mut b = base.clone();
    b.lesions.retain(|l| l.id != "L6");
    for (curator, branch, truth) in [(ana, "ana", &a), (ben, "ben", &b)] {
        curation::save_draft(
            &mut f.store,
            &Edit {
                branch,
                based_on: None,
                ..edit(curator, None, truth)
            },
        )
        .unwrap();
    }
    let history = curation::history(&f.store, STUDY, "ms-01").unwrap();
    let latest = |branch: &str| {
        history
            .iter()
            .rfind(|v| v.branch == branch)
            .unwrap()
            .truth
            .clone()
    };
    let disagreements = curation::compare(&latest("ana"), &latest("ben"));
    let units: Vec<&str> = disagreements.iter().map(|d| d.unit.as_str()).collect();
    assert_eq!(units, ["lesions[L6]", "difficulty"]);
    let choices = BTreeMap::from([
        ("lesions[L6]".to_owned(), Side::A),
        ("difficulty".to_owned(), Side::B),
    ]);
    let consensus = curation::merge(&latest("ana"), &latest("ben"), &choices).unwrap();
    assert_eq!(consensus, base, "kept L6 and the original difficulty");
    let v =
        curation::versions::save_consensus(&mut f.store, &edit(ana, Some(1), &consensus)).unwrap();
    let history = curation::history(&f.store, STUDY, "ms-01").unwrap();
    let saved = history.iter().find(|h| h.version == v).unwrap();
    assert_eq!(
        (saved.branch.as_str(), saved.source),
        (MAIN_BRANCH, Source::Consensus)
    );
    // An independent curation is merged, not submitted itself.
    assert!(matches!(
        curation::submit_for_review(&mut f.store, STUDY, "ms-01", ana, 2),
        Err(Error::CurationRefused(m)) if m.contains("independent curation")
    ));
}

#[test]
fn the_ground_truth_bundle_round_trips_through_import() {
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let ben = add_rater(&mut f.store, "Ben", "curator");
    let mut truth = ms01(&f.store);
    truth.lesions[0].description = "Left periventricular plaque, edited".into();
    truth.lesions[0].marks.push(Mark {
        series_id: "flair".into(),
        kind: MarkKind::Ellipse,
        plane: Plane::Axial,
        points_lps_mm: vec![[20.0, 5.0, 10.0], [26.0, 5.0, 10.0], [20.0, 9.0, 10.0]],
    });
    curation::save_draft(&mut f.store, &edit(ana, Some(1), &truth)).unwrap();
    curation::submit_for_review(&mut f.store, STUDY, "ms-01", ana, 2).unwrap();
    curation::review(
        &mut f.store,
        STUDY,
        "ms-01",
        ben,
        2,
        Decision::Finalised,
        "",
    )
    .unwrap();

    let out = f.dir.path().join("gt");
    let summary = curation::export_bundle(&f.store, STUDY, &out).unwrap();
    let bundled = std::fs::read_dir(demo_study::demo_bundle().join("cases"))
        .unwrap()
        .count();
    assert_eq!((summary.cases, summary.skipped.len()), (bundled, 0));
    let ms = std::fs::read_to_string(out.join("cases/ms-01.json")).unwrap();
    assert!(ms.contains("points_lps_mm") && ms.contains("edited"));
    // Key images are real PNGs of the slice's size (the demo's 1.25 mm grid).
    let file: curation::bundle::CaseTruthFile = serde_json::from_str(&ms).unwrap();
    assert!(!file.key_image_files.is_empty());
    for key in &file.key_image_files {
        let image = image::open(out.join(&key.png)).unwrap();
        let probe = imaging::probe(
            &demo_study::demo_bundle()
                .join("cases/ms-01")
                .join(&key.series)
                .read_dir()
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path(),
        )
        .unwrap();
        assert_eq!((image.width(), image.height()), (probe.columns, probe.rows));
    }
    assert_eq!(summary.key_images, count_files(&out.join("key-images")));

    // Into a database that has only the demo study: the same ground truth, final.
    let mut other = fixture();
    let written = curation::import_bundle(&mut other.store, &out, "test").unwrap();
    assert_eq!(written, 1, "only ms-01 differs from the demo's own");
    assert_eq!(ms01(&other.store), truth);
    // Finalised by a second curator there; final only as imported here, and shown as such.
    let reviewed = curation::current(&f.store, STUDY, "ms-01")
        .unwrap()
        .unwrap();
    let imported = curation::current(&other.store, STUDY, "ms-01")
        .unwrap()
        .unwrap();
    assert!(!reviewed.imported_final && !reviewed.reviews.is_empty());
    assert!(imported.imported_final && imported.reviews.is_empty());
    assert_eq!(imported.source, curation::Source::Import);
    // The study bundle's own ground truth is final as imported too.
    let from_bundle = curation::current(&other.store, STUDY, "ms-02")
        .unwrap()
        .unwrap();
    assert!(from_bundle.imported_final, "{:?}", from_bundle.source);
    // The ground-truth export says the same, case by case.
    let exported_imported_final = |store: &cases::store::Store, case: &str| {
        let lines = cases::export::export(
            store,
            cases::export::What::GroundTruth,
            cases::export::Format::Jsonl,
        )
        .unwrap();
        lines
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .find(|row| row["case_id"] == case)
            .unwrap()["imported_final"]
            .clone()
    };
    assert_eq!(exported_imported_final(&f.store, "ms-01"), false);
    assert_eq!(exported_imported_final(&other.store, "ms-01"), true);
    assert_eq!(exported_imported_final(&other.store, "ms-02"), true);
    for case in other.store.cases(STUDY).unwrap() {
        assert_eq!(
            curation::current(&other.store, STUDY, &case.id)
                .unwrap()
                .unwrap()
                .truth,
            curation::current(&f.store, STUDY, &case.id)
                .unwrap()
                .unwrap()
                .truth
        );
    }
    // Again: nothing changes.
    assert_eq!(
        curation::import_bundle(&mut other.store, &out, "test").unwrap(),
        0
    );
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            if path.is_dir() {
                count_files(&path)
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn a_bundle_that_contradicts_the_case_is_refused_with_file_line_and_field() {
    let mut f = fixture();
    let out = f.dir.path().join("gt");
    curation::export_bundle(&f.store, STUDY, &out).unwrap();
    let path = out.join("cases/stroke-01.json");
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let marks = &mut file["ground_truth"]["lesions"][0]["marks"];
    marks[0]["series_id"] = "t2star".into();
    marks
        .as_array_mut()
        .unwrap()
        .push(serde_json::to_value(point([0.0, 0.0, -300.0])).unwrap());
    let text = serde_json::to_string_pretty(&file).unwrap();
    std::fs::write(&path, &text).unwrap();
    let before = count(&f.store, "SELECT count(*) FROM audit_log");

    let Err(ImportError::Invalid(problems)) = curation::import_bundle(&mut f.store, &out, "test")
    else {
        panic!("accepted");
    };
    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    // The field's line: the last `points_lps_mm` key before the outside coordinate.
    let points_line = text
        .lines()
        .take(line_of("-300.0"))
        .enumerate()
        .filter(|(_, l)| l.contains("points_lps_mm"))
        .last()
        .unwrap()
        .0
        + 1;
    assert_eq!(
        lines,
        [
            format!(
                "cases/stroke-01.json:{}: ground_truth.lesions[0].marks[0].series_id: no series \
                 \"t2star\" in case stroke-01",
                line_of("t2star")
            ),
            format!(
                "cases/stroke-01.json:{}: ground_truth.lesions[0].marks[1].points_lps_mm: point 1 \
                 at (0.0, 0.0, -300.0) mm lies outside the series' volume (series \"flair\")",
                points_line
            ),
        ]
    );
    assert_eq!(count(&f.store, "SELECT count(*) FROM audit_log"), before);
    assert_eq!(
        count(&f.store, "SELECT count(*) FROM ground_truth_versions"),
        0
    );
}

/// A plan with one assignment per (rater, response key) given, in order.
fn assign(store: &mut Store, rater: i64, responses: &[i64]) -> Vec<i64> {
    store
        .write(|w| {
            let fail = |e| w.fail("assigning", e);
            w.tx()
                .execute(
                    "INSERT OR IGNORE INTO assignment_plans (study, name, seed, overlap_share,
                         repeat_share, repeat_after_days, created_by, created_at)
                     VALUES (1, 'plan', 1, 0, 0, 0, ?1, 'now')",
                    [rater],
                )
                .map_err(fail)?;
            let mut ids = Vec::new();
            for (i, response) in responses.iter().enumerate() {
                w.tx()
                    .execute(
                        "INSERT INTO assignments (plan, rater, response, position, overlap)
                         VALUES (1, ?1, ?2, ?3, 0)",
                        [rater, *response, i as i64 + 1],
                    )
                    .map_err(fail)?;
                ids.push(w.tx().last_insert_rowid());
            }
            Ok(ids)
        })
        .unwrap()
}

fn rate(store: &mut Store, rater: i64, response: i64, status: &str) {
    store
        .write(|w| {
            w.tx()
                .execute(
                    "INSERT INTO ratings (response, rater, overall, status, updated_at)
                     VALUES (?1, ?2, 3, ?3, 'now')
                     ON CONFLICT (response, rater, read_no) DO UPDATE SET status = excluded.status",
                    rusqlite::params![response, rater, status],
                )
                .map_err(|e| w.fail("rating", e))?;
            Ok(())
        })
        .unwrap()
}

fn responses_of(store: &Store, case_id: &str, task_id: &str) -> Vec<i64> {
    store
        .read()
        .prepare(
            "SELECT r.id FROM responses r JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id
             WHERE c.case_id = ?1 AND t.task_id = ?2 ORDER BY r.id",
        )
        .unwrap()
        .query_map([case_id, task_id], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_rater_sees_the_ground_truth_only_after_submitting() {
    let mut f = fixture();
    let rita = add_rater(&mut f.store, "Rita", "neurologist");
    let other = add_rater(&mut f.store, "Omar", "neurologist");
    let t1 = responses_of(&f.store, "stroke-01", "t1");
    let t2 = responses_of(&f.store, "stroke-01", "t2");
    let ids = assign(&mut f.store, rita, &[t1[0], t2[0]]);
    let refused = |store: &mut Store, rater, assignment| match curation::ground_truth_for_rater(
        store, rater, assignment,
    ) {
        Err(Error::CurationRefused(message)) => message,
        other => panic!("not refused: {other:?}"),
    };
    assert!(refused(&mut f.store, rita, ids[0]).contains("after the rating is submitted"));
    rate(&mut f.store, rita, t1[0], "draft");
    assert!(refused(&mut f.store, rita, ids[0]).contains("after the rating is submitted"));
    rate(&mut f.store, rita, t1[0], "submitted");
    // Another task of the same case is still to be rated.
    assert!(refused(&mut f.store, rita, ids[0])
        .contains("still has 1 response(s) of case stroke-01 to rate"));
    assert!(refused(&mut f.store, other, ids[0]).contains("another rater"));
    rate(&mut f.store, rita, t2[0], "submitted");
    assert_eq!(
        f.store
            .reading_item(rita, ids[0])
            .unwrap()
            .ground_truth_seen_at,
        None
    );
    let revealed = curation::ground_truth_for_rater(&mut f.store, rita, ids[0]).unwrap();
    assert_eq!(revealed.case_id, "stroke-01");
    assert!(revealed.version.truth.lesions[0]
        .description
        .contains("left MCA"));
    assert_eq!(
        count(
            &f.store,
            "SELECT count(*) FROM audit_log WHERE action = 'ground_truth.revealed'"
        ),
        1
    );
    // Seen the truth: neither rating of the case can be reopened and changed any more, and
    // both reading items say since when (the time of the reveal's audit entry).
    let revealed_at: String = f
        .store
        .read()
        .query_row(
            "SELECT at FROM audit_log WHERE action = 'ground_truth.revealed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    for assignment in [ids[0], ids[1]] {
        let item = f.store.reading_item(rita, assignment).unwrap();
        assert_eq!(item.ground_truth_seen_at.as_ref(), Some(&revealed_at));
        match f.store.reopen_rating(rita, assignment) {
            Err(Error::Rating(cases::rating::RatingError::Refused(message))) => {
                assert!(
                    message.contains("locked: you saw the case's ground truth"),
                    "{message}"
                )
            }
            other => panic!("reopened after the reveal: {other:?}"),
        }
    }
    // Another rater's reveal locks nothing of theirs.
    let t3 = responses_of(&f.store, "stroke-01", "t1");
    let omar = assign(&mut f.store, other, &[t3[0]]);
    rate(&mut f.store, other, t3[0], "submitted");
    assert_eq!(
        f.store
            .reading_item(other, omar[0])
            .unwrap()
            .ground_truth_seen_at,
        None
    );
    f.store.reopen_rating(other, omar[0]).unwrap();
}

fn answer(rater: i64, role: HumanRole, diagnosis: &str, reasoning: &str) -> HumanAnswer {
    HumanAnswer {
        study_id: STUDY.into(),
        case_id: "stroke-01".into(),
        task_id: "t1".into(),
        rater,
        role,
        years_experience: Some(3),
        diagnosis: diagnosis.into(),
        differential: vec!["Stroke mimic".into()],
        reasoning: reasoning.into(),
        seconds_on_task: 95.0,
    }
}

#[test]
fn human_baseline_answers_are_blind_responses_with_role_and_experience() {
    let mut f = fixture();
    let res1 = add_rater(&mut f.store, "Resident One", "resident");
    let res2 = add_rater(&mut f.store, "Resident Two", "resident");
    let seen = add_rater(&mut f.store, "Seen", "neurologist");
    let task = baseline::blind_task(&f.store, res1, STUDY, "stroke-01", "t1").unwrap();
    assert!(task.prompt.contains("DWI/ADC"));
    assert_eq!(task.key_images.len(), 1);
    let first = curation::submit_human_answer(
        &mut f.store,
        &answer(
            res1,
            HumanRole::Resident,
            "Left MCA infarct",
            "DWI bright, ADC dark",
        ),
    )
    .unwrap();
    let second = curation::submit_human_answer(
        &mut f.store,
        &answer(
            res2,
            HumanRole::Resident,
            "Acute left MCA stroke",
            "restricted diffusion",
        ),
    )
    .unwrap();
    let stored: Vec<(String, i64, String, String)> = f
        .store
        .read()
        .prepare(
            "SELECT r.model, r.sample, r.respondent_kind, h.role FROM responses r
             JOIN human_answers h ON h.response = r.id WHERE r.id IN (?1, ?2) ORDER BY r.id",
        )
        .unwrap()
        .query_map([first, second], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        stored,
        [
            (
                "human:resident".into(),
                0,
                "human".into(),
                "resident".into()
            ),
            (
                "human:resident".into(),
                1,
                "human".into(),
                "resident".into()
            ),
        ]
    );
    // Twice by the same clinician, or by one who has seen the models' answers: refused.
    assert!(curation::submit_human_answer(
        &mut f.store,
        &answer(res1, HumanRole::Resident, "MCA stroke", "")
    )
    .is_err());
    let model_answer = responses_of(&f.store, "stroke-01", "t2")[0];
    let assigned = assign(&mut f.store, seen, &[model_answer])[0];
    // In the queue but never opened: still blind.
    baseline::blind_task(&f.store, seen, STUDY, "stroke-01", "t1").unwrap();
    f.store.reading_item(seen, assigned).unwrap();
    let refused = baseline::blind_task(&f.store, seen, STUDY, "stroke-01", "t1").unwrap_err();
    assert!(
        refused.to_string().contains(
            "has been shown a model's answer on this case (opened in Reading or rated, first at 20"
        ),
        "{refused}"
    );
    // Opening it again records nothing more: the first showing is what counts.
    f.store.reading_item(seen, assigned).unwrap();
    assert_eq!(
        count(
            &f.store,
            &format!("SELECT count(*) FROM audit_log WHERE action = 'show item' AND entity = 'assignment:{assigned}'")
        ),
        1
    );
    // The baseline is an item of the calibration input, so pass@k shows a row for it.
    let data = cases::analysis::study_data(&f.store, STUDY, None).unwrap();
    let text = format!("{:?}", data.input);
    assert!(text.contains("stroke-01/t1/human:resident/0"));
}

#[test]
fn the_baseline_lists_what_a_clinician_may_answer_and_refuses_curators() {
    let mut f = fixture();
    let cora = add_rater(&mut f.store, "Cora", "curator");
    let rex = add_rater(&mut f.store, "Rex", "resident");
    for refused in [
        curation::baseline_tasks(&f.store, cora, STUDY).unwrap_err(),
        baseline::blind_task(&f.store, cora, STUDY, "stroke-01", "t1").unwrap_err(),
    ] {
        assert!(refused.to_string().contains("curator"), "{refused}");
    }
    let tasks = curation::baseline_tasks(&f.store, rex, STUDY).unwrap();
    assert_eq!(
        tasks.len() as i64,
        count(&f.store, "SELECT count(*) FROM tasks")
    );
    assert!(tasks.iter().all(|t| t.state == BaselineState::Open));

    let mut bad = |edit: &dyn Fn(&mut HumanAnswer)| {
        let mut a = answer(rex, HumanRole::Resident, "Left MCA infarct", "DWI");
        edit(&mut a);
        curation::submit_human_answer(&mut f.store, &a)
            .unwrap_err()
            .to_string()
    };
    assert!(bad(&|a| a.years_experience = Some(71)).contains("years_experience"));
    assert!(bad(&|a| a.differential = vec!["ICH".into(), " ".into()]).contains("differential[1]"));
    curation::submit_human_answer(
        &mut f.store,
        &answer(rex, HumanRole::Resident, "Left MCA infarct", "DWI"),
    )
    .unwrap();
    let ms01_answer = responses_of(&f.store, "ms-01", "t1")[0];
    let ms01_item = assign(&mut f.store, rex, &[ms01_answer])[0];

    let state_of = |store: &Store, case: &str, task: &str| {
        curation::baseline_tasks(store, rex, STUDY)
            .unwrap()
            .into_iter()
            .find(|t| t.case_id == case && t.task_id == task)
            .unwrap()
            .state
    };
    assert_eq!(
        state_of(&f.store, "stroke-01", "t1"),
        BaselineState::Answered
    );
    assert_eq!(state_of(&f.store, "stroke-01", "t2"), BaselineState::Open);
    // A model answer of ms-01 in the queue, not yet opened, leaves the case blind.
    assert_eq!(state_of(&f.store, "ms-01", "t1"), BaselineState::Open);
    // Opening one model answer of ms-01 in Reading unblinds every task of the case.
    f.store.reading_item(rex, ms01_item).unwrap();
    let ms01_tasks: Vec<BaselineTask> = curation::baseline_tasks(&f.store, rex, STUDY)
        .unwrap()
        .into_iter()
        .filter(|t| t.case_id == "ms-01")
        .collect();
    assert!(ms01_tasks.len() > 1);
    assert!(ms01_tasks
        .iter()
        .all(|t| t.state == BaselineState::NotBlind));
}

#[test]
fn rated_baseline_answers_are_a_row_of_the_pass_at_k_table() {
    let mut f = fixture();
    let rita = add_rater(&mut f.store, "Rita", "neuroradiologist");
    let mut judged = Vec::new();
    for (name, correctness) in [("Resident One", "correct"), ("Resident Two", "incorrect")] {
        let resident = add_rater(&mut f.store, name, "resident");
        let response = curation::submit_human_answer(
            &mut f.store,
            &answer(resident, HumanRole::Resident, "Left MCA infarct", "DWI"),
        )
        .unwrap();
        judged.push((response, correctness));
    }
    f.store
        .write(|w| {
            for (response, correctness) in &judged {
                w.tx()
                    .execute(
                        "INSERT INTO ratings (response, rater, overall, correctness, status,
                             updated_at)
                         VALUES (?1, ?2, 3, ?3, 'submitted', 'now')",
                        rusqlite::params![response, rita, correctness],
                    )
                    .map_err(|e| w.fail("rating", e))?;
            }
            Ok(())
        })
        .unwrap();
    let data = cases::analysis::study_data(&f.store, STUDY, None).unwrap();
    let report = calibration::report::build_report(
        &data.input,
        &calibration::input::ReportOptions::default(),
        &calibration::bootstrap::NoProgress,
    )
    .unwrap();
    let row = |k: usize| {
        report
            .pass_at_k
            .iter()
            .find(|r| r.model == "human:resident" && r.k == k)
            .unwrap_or_else(|| panic!("no human:resident row for k={k}: {:?}", report.pass_at_k))
    };
    // One task, two residents' answers, one judged right: pass@1 = 1 - C(1,1)/C(2,1) = 0.5.
    match &row(1).pass_at_k {
        calibration::Estimate::Value(v) => assert_eq!((v.value, v.n), (0.5, 1)),
        other => panic!("pass@1 not estimated: {other:?}"),
    }
    assert!(matches!(
        row(5).pass_at_k,
        calibration::Estimate::NotEstimable { .. }
    ));
}

#[test]
fn a_lesion_one_curator_placed_elsewhere_is_listed_as_two_places() {
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let ben = add_rater(&mut f.store, "Ben", "curator");
    let base = ms01(&f.store);
    let mut moved = base.clone();
    // Ben gives L1 the marks of L2: the same name for another place.
    moved.lesions[0].marks = base.lesions[1].marks.clone();
    let mut versions = Vec::new();
    for (curator, branch, truth) in [(ana, "ana", &base), (ben, "ben", &moved)] {
        versions.push(
            curation::save_draft(
                &mut f.store,
                &Edit {
                    branch,
                    ..edit(curator, None, truth)
                },
            )
            .unwrap(),
        );
    }
    let history = curation::history(&f.store, STUDY, "ms-01").unwrap();
    let truth_of = |v: i64| &history.iter().find(|h| h.version == v).unwrap().truth;
    let found = curation::compare(truth_of(versions[0]), truth_of(versions[1]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].unit, "lesions[L1]");
    assert_eq!(
        found[0].detail.as_deref(),
        Some("the marks do not overlap: two different places; differs in marks")
    );
}

#[test]
fn missed_findings_are_lesions_no_response_mentions_and_no_rater_flagged() {
    let mut f = fixture();
    let res1 = add_rater(&mut f.store, "Resident One", "resident");
    let res2 = add_rater(&mut f.store, "Resident Two", "resident");
    let rater = add_rater(&mut f.store, "Rita", "neuroradiologist");
    let right = curation::submit_human_answer(
        &mut f.store,
        &answer(res1, HumanRole::Resident, "Left MCA infarct", ""),
    )
    .unwrap();
    let missed = curation::submit_human_answer(
        &mut f.store,
        &answer(
            res2,
            HumanRole::Resident,
            "No acute abnormality",
            "normal DWI",
        ),
    )
    .unwrap();
    let of = |store: &Store, response: i64| -> Vec<String> {
        curation::missed_findings(store, STUDY)
            .unwrap()
            .into_iter()
            .filter(|m| m.response == response)
            .map(|m| m.lesion_id)
            .collect()
    };
    assert!(of(&f.store, right).is_empty());
    assert_eq!(of(&f.store, missed), ["L1"]);
    // Only lesion-identification tasks are checked.
    let all = curation::missed_findings(&f.store, STUDY).unwrap();
    assert!(all
        .iter()
        .all(|m| m.task_id == "t1" || m.case_id != "stroke-01"));
    // A P1 label of a submitted rating far from the lesion does not cover it; one on it does.
    rate(&mut f.store, rater, missed, "submitted");
    let label = |store: &mut Store, mark: &Mark| {
        store
            .write(|w| {
                w.tx()
                    .execute(
                        "INSERT INTO error_labels (rating, category, severity, mark_json)
                         SELECT id, 'P1', 3, ?2 FROM ratings WHERE response = ?1",
                        rusqlite::params![missed, serde_json::to_string(mark).unwrap()],
                    )
                    .map_err(|e| w.fail("labelling", e))?;
                Ok(())
            })
            .unwrap()
    };
    let lesion = &curation::current(&f.store, STUDY, "stroke-01")
        .unwrap()
        .unwrap()
        .truth
        .lesions[0];
    let centre = lesion.marks[0].points_lps_mm[0];
    let far = Mark {
        series_id: lesion.marks[0].series_id.clone(),
        ..point([-centre[0], centre[1], centre[2]])
    };
    label(&mut f.store, &far);
    assert_eq!(of(&f.store, missed), ["L1"]);
    let near = Mark {
        series_id: lesion.marks[0].series_id.clone(),
        ..point(centre)
    };
    label(&mut f.store, &near);
    assert!(of(&f.store, missed).is_empty());
}

#[test]
fn a_blinded_reader_answers_the_baseline_by_case_codes_never_seeing_a_case_id() {
    let mut f = fixture();
    let rex = add_rater(&mut f.store, "Rex", "resident");
    f.store.set_current_rater(rex).unwrap();
    let reader = Session::current(&f.store).unwrap().reader().unwrap();
    // Each case's code, as the reader's case view names it; the codes of the reader's case list.
    let session = Session::current(&f.store).unwrap();
    let codes: BTreeMap<String, String> = f
        .store
        .cases(STUDY)
        .unwrap()
        .into_iter()
        .map(|c| {
            let view = catalog::case(&f.store, &session, STUDY, &c.id).unwrap();
            (c.id, view.summary.id)
        })
        .collect();
    let listed_codes: BTreeSet<String> = catalog::cases(&f.store, &session, STUDY)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed_codes, codes.values().cloned().collect());

    // The same tasks as the store lists, each case named by the code of the reader's case list,
    // listed by code.
    let listed = app_baseline::tasks(&f.store, &reader, STUDY).unwrap();
    let stored = curation::baseline_tasks(&f.store, rex, STUDY).unwrap();
    let mut expected: Vec<BaselineTask> = stored
        .iter()
        .map(|t| BaselineTask {
            case_id: codes[&t.case_id].clone(),
            ..t.clone()
        })
        .collect();
    expected.sort_by(|a, b| a.case_id.cmp(&b.case_id));
    assert_eq!(listed, expected);
    let sent = serde_json::to_string(&listed).unwrap();
    for id in codes.keys() {
        assert!(!sent.contains(id.as_str()), "{id} reached a blinded reader");
    }

    // The code opens the task, and the task names the case by its code again.
    let stroke = TaskRef {
        study_id: STUDY,
        case: &codes["stroke-01"],
        task_id: "t1",
    };
    let blind = app_baseline::blind_task(&f.store, &reader, stroke).unwrap();
    assert_eq!(blind.case_id, codes["stroke-01"]);
    assert_eq!(
        blind.prompt,
        baseline::blind_task(&f.store, rex, STUDY, "stroke-01", "t1")
            .unwrap()
            .prompt
    );
    assert!(!serde_json::to_string(&blind).unwrap().contains("stroke-01"));

    // The answer given under the code is stored against the case itself.
    let response = app_baseline::submit(
        &mut f.store,
        &reader,
        stroke,
        Answer {
            role: HumanRole::Resident,
            years_experience: Some(3),
            diagnosis: "Left MCA infarct".into(),
            differential: vec![],
            reasoning: "DWI bright".into(),
            seconds_on_task: 60.0,
        },
    )
    .unwrap();
    let stored_under: String = f
        .store
        .read()
        .query_row(
            "SELECT c.case_id FROM responses r JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id WHERE r.id = ?1",
            [response],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored_under, "stroke-01");
    let unknown = TaskRef {
        case: "case-0000000000",
        ..stroke
    };
    assert!(matches!(
        app_baseline::blind_task(&f.store, &reader, unknown),
        Err(Error::NotFound { .. })
    ));
}

fn series_keys(store: &Store) -> Vec<i64> {
    store
        .read()
        .prepare("SELECT id FROM series ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Lesion marks, key-image slices and missed findings are checked against the geometry import
/// stores from the headers; it must be the decoded volume's, to the bit, for every demo series
/// (the 144 × 176 MR and 512 × 512 CT grids, 32 slices each).
#[test]
fn the_geometry_stored_at_import_is_the_decoded_series() {
    let f = fixture();
    let keys = series_keys(&f.store);
    assert!(keys.len() >= 12, "{} series", keys.len());
    assert_eq!(
        count(&f.store, "SELECT count(*) FROM series_geometry"),
        keys.len() as i64,
        "one row per series"
    );
    let mut grids = std::collections::BTreeSet::new();
    for key in keys {
        let stored = f.store.series_geometry(key).unwrap();
        let files = f.store.series_files(key).unwrap();
        let decoded = cases::app::series::decode_verified(&files).unwrap();
        assert_eq!(stored, decoded.geometry(), "series {}", files.label);
        grids.insert(stored.dims);
    }
    assert!(
        grids.contains(&[144, 176, 32]) && grids.contains(&[512, 512, 32]),
        "{grids:?}"
    );
}

/// A database imported by a build without the geometry table (the table dropped, the schema
/// version set back) gets its rows when this build first opens it, equal to import's, in one
/// audited write; a series whose files are gone then is left without a row and its geometry is
/// an error naming the file, not a wrong grid.
#[test]
fn a_database_from_before_the_geometry_table_is_filled_when_first_opened() {
    let Fixture { dir: temp, store } = fixture();
    let imported: Vec<_> = series_keys(&store)
        .into_iter()
        .map(|key| (key, store.series_geometry(key).unwrap()))
        .collect();
    drop(store);
    let dir = temp.path();

    // The bundle copied beside the database, one series' first file removed.
    let bundle = dir.join("bundle");
    demo_study::copy_tree(&demo_study::demo_bundle(), &bundle);
    let old = dir.join("old.sqlite");
    std::fs::copy(dir.join("db.sqlite"), &old).unwrap();
    let conn = rusqlite::Connection::open(&old).unwrap();
    // The schema just before the geometry table (later migrations run again on opening).
    let version = cases::store::migrations::MIGRATIONS
        .iter()
        .position(|m| m.contains("CREATE TABLE series_geometry"))
        .unwrap() as i64;
    conn.execute_batch("DROP TABLE series_geometry").unwrap();
    // What the later migrations that are not re-runnable added (the N/A column, the plan
    // top-ups' columns and tables, the rubric versions, the server links of package items, the
    // team server's outbox and its conflicts' resolutions, what a rater's copy learned from it,
    // what an exported rater package carried, a run result's cost), undone so they run again.
    conn.execute_batch(
        "ALTER TABLE ratings DROP COLUMN not_applicable_json;
         DROP TABLE plan_raters; DROP TABLE plan_responses;
         ALTER TABLE assignment_plans DROP COLUMN responses_per_rater;
         ALTER TABLE assignment_plans DROP COLUMN stratify_json;
         ALTER TABLE assignment_plans DROP COLUMN top_ups;
         DROP TABLE rubric_versions;
         ALTER TABLE studies DROP COLUMN rubric_version;
         ALTER TABLE ratings DROP COLUMN rubric_version;
         DROP INDEX rater_package_items_by_assignment;
         DROP INDEX rater_package_items_by_server_assignment;
         ALTER TABLE rater_package_items DROP COLUMN server_assignment;
         DROP TABLE team_resolutions;
         DROP TABLE team_outbox;
         DROP TABLE team_server_word;
         ALTER TABLE rater_packages DROP COLUMN rubric_version;
         ALTER TABLE rater_packages DROP COLUMN rubric_sha256;
         ALTER TABLE rater_packages DROP COLUMN taxonomy_sha256;
         ALTER TABLE rater_package_items DROP COLUMN response_sha256;
         ALTER TABLE rater_package_items DROP COLUMN task_sha256;
         ALTER TABLE rater_package_items DROP COLUMN case_sha256;
         ALTER TABLE rater_package_items DROP COLUMN images_sha256;
         ALTER TABLE run_results DROP COLUMN cost;",
    )
    .unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
    conn.execute(
        "UPDATE studies SET bundle_dir = ?1",
        [bundle.to_str().unwrap()],
    )
    .unwrap();
    let (gone_key, _) = imported[0];
    let gone_file: String = conn
        .query_row(
            "SELECT path FROM images WHERE series = ?1 AND position = 0",
            [gone_key],
            |r| r.get(0),
        )
        .unwrap();
    let gone_file = bundle.join(gone_file);
    drop(conn);
    std::fs::remove_file(&gone_file).unwrap();

    let store = Store::open(&old).unwrap();
    assert_eq!(
        count(&store, "SELECT count(*) FROM series_geometry"),
        imported.len() as i64 - 1
    );
    for (key, geometry) in &imported[1..] {
        assert_eq!(store.series_geometry(*key).unwrap(), *geometry);
    }
    match store.series_geometry(gone_key) {
        Err(Error::ImageMissing { path, .. }) => assert_eq!(path, gone_file),
        other => panic!("expected the missing file named, got {other:?}"),
    }
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM audit_log WHERE action = 'store series geometry'"
        ),
        1
    );
    assert!(matches!(
        cases::store::audit::verify(store.read()).unwrap(),
        cases::store::audit::Verdict::Intact { .. }
    ));
    // Opening again reads nothing and writes nothing.
    drop(store);
    let store = Store::open(&old).unwrap();
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM audit_log WHERE action = 'store series geometry'"
        ),
        1
    );
}

/// The team server's history of ms-01 as `GET …/curation` gives it: the bundle's version 1, and
/// version 2 saved by "lead", submitted, finalised by "curator".
fn server_history(store: &Store, diagnosis: &str) -> Vec<curation::Version> {
    let mut bundle = curation::history(store, STUDY, "ms-01").unwrap().remove(0);
    bundle.created_at = Some("2026-11-27T10:00:00.000Z".into());
    let mut truth = bundle.truth.clone();
    truth.diagnosis = diagnosis.into();
    let review = |by: &str, decision: &str, at: &str| curation::ReviewEntry {
        by: by.into(),
        decision: decision.into(),
        comment: String::new(),
        at: at.into(),
    };
    let finalised = curation::Version {
        version: 2,
        branch: MAIN_BRANCH.into(),
        based_on: Some(1),
        status: Status::Final,
        source: Source::Curator,
        author: Some("lead".into()),
        created_at: Some("2026-11-27T11:00:00.000Z".into()),
        reviews: vec![
            review("lead", "submitted", "2026-11-27T11:01:00.000Z"),
            review("curator", "finalised", "2026-11-27T11:02:00.000Z"),
        ],
        imported_final: false,
        truth,
    };
    vec![bundle, finalised]
}

#[test]
fn the_team_servers_versions_are_pulled_once_and_a_version_saved_here_only_is_kept() {
    let lead = Session::command_line();
    let mut f = fixture();
    let arriving = BTreeMap::from([(
        "ms-01".to_owned(),
        server_history(&f.store, "MS, curated on the server"),
    )]);
    let pulled = cases::app::team::pull_curation(&mut f.store, &lead, STUDY, &arriving).unwrap();
    assert_eq!((pulled.versions_added, pulled.reviews_added), (1, 2));
    assert_eq!(pulled.curators_added, ["lead", "curator"]);
    assert!(pulled.conflicts.is_empty(), "{:?}", pulled.conflicts);
    let here = curation::history(&f.store, STUDY, "ms-01").unwrap();
    assert_eq!(here.len(), 2);
    assert_eq!(here[1].status, Status::Final);
    assert_eq!(here[1].author.as_deref(), Some("lead"));
    assert_eq!(here[1].reviews.len(), 2);
    assert_eq!(ms01(&f.store).diagnosis, "MS, curated on the server");
    let exported = cases::export::export(
        &f.store,
        cases::export::What::GroundTruth,
        cases::export::Format::Jsonl,
    )
    .unwrap();
    assert!(exported.contains("MS, curated on the server"));
    let again = cases::app::team::pull_curation(&mut f.store, &lead, STUDY, &arriving).unwrap();
    assert_eq!((again.versions_added, again.reviews_added), (0, 0));

    // A draft saved here before the pull holds number 2: listed, kept, nothing overwritten.
    let mut f = fixture();
    let ana = add_rater(&mut f.store, "Ana", "curator");
    let mut local = ms01(&f.store);
    local.diagnosis = "MS, Ana's draft".into();
    curation::save_draft(&mut f.store, &edit(ana, Some(1), &local)).unwrap();
    let conflicted =
        cases::app::team::pull_curation(&mut f.store, &lead, STUDY, &arriving).unwrap();
    assert_eq!(conflicted.versions_added, 0);
    assert_eq!(conflicted.conflicts.len(), 1, "{:?}", conflicted.conflicts);
    assert!(conflicted.conflicts[0].contains("version 2"));
    let here = curation::history(&f.store, STUDY, "ms-01").unwrap();
    assert_eq!(here.len(), 2);
    assert_eq!(here[1].truth.diagnosis, "MS, Ana's draft");
}

/// Measurement values may differ from numpy's by the order of floating-point sums only.
const MEASURE_TOLERANCE: f64 = 1e-9;
/// The reference's perpendicular diameter of an outline is sampled on 200,001 lines: a lower
/// bound within this of the exact value (scripts/reference/imaging/make_measurement_reference.py).
const SAMPLED_DIAMETER_TOLERANCE_MM: f64 = 0.01;

#[test]
fn measurements_on_the_demo_ct_equal_pydicom_and_numpy() {
    use cases::app::series::{decode_verified, measure};
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("data/measurement_reference.json")).unwrap();
    let f = fixture();
    // The series as the viewer gets it: the stored files, verified and decoded.
    let key: i64 = f
        .store
        .read()
        .query_row(
            "SELECT s.id FROM series s JOIN cases c ON s.case_ref = c.id
             WHERE c.case_id = ?1 AND s.series_id = ?2",
            [&reference["case"], &reference["series"]].map(|v| v.as_str().unwrap()),
            |r| r.get(0),
        )
        .unwrap();
    let volume = decode_verified(&f.store.series_files(key).unwrap()).unwrap();
    let points = |v: &serde_json::Value| -> Vec<[f64; 3]> {
        serde_json::from_value(v["points"].clone()).unwrap()
    };
    let mark = |kind, v: &serde_json::Value| Mark {
        series_id: "ct".into(),
        kind,
        plane: Plane::Axial,
        points_lps_mm: points(v),
    };
    let close = |what: &str, ours: f64, theirs: &serde_json::Value, tolerance: f64| {
        let theirs = theirs.as_f64().unwrap();
        assert!(
            (ours - theirs).abs() <= tolerance * theirs.abs().max(1.0),
            "{what}: ours {ours}, numpy's {theirs}"
        );
    };
    for d in reference["distances"].as_array().unwrap() {
        let ours = measure(&volume, &mark(MarkKind::Arrow, d)).unwrap();
        close(
            "distance",
            ours.distance_mm.unwrap(),
            &d["distance_mm"],
            MEASURE_TOLERANCE,
        );
    }
    let shapes = [
        ("ellipses", MarkKind::Ellipse),
        ("outlines", MarkKind::Freehand),
    ];
    for (list, kind) in shapes {
        for (n, r) in reference[list].as_array().unwrap().iter().enumerate() {
            let roi = measure(&volume, &mark(kind, r)).unwrap().roi.unwrap();
            let what = |field: &str| format!("{list}[{n}].{field}");
            assert_eq!(
                roi.slice as u64,
                r["slice"].as_u64().unwrap(),
                "{}",
                what("slice")
            );
            assert_eq!(
                roi.pixels as u64,
                r["pixels"].as_u64().unwrap(),
                "{}",
                what("pixels")
            );
            assert_eq!(roi.unit, "HU");
            for (field, ours) in [
                ("mean", roi.mean),
                ("sd", roi.sd),
                ("min", roi.min),
                ("max", roi.max),
                ("area_mm2", roi.area_mm2),
                ("pixel_area_mm2", roi.pixel_area_mm2),
                ("longest_mm", roi.longest_mm),
            ] {
                close(&what(field), ours, &r[field], MEASURE_TOLERANCE);
            }
            let perpendicular = r["perpendicular_mm"].as_f64().unwrap();
            let tolerance = match kind {
                MarkKind::Ellipse => MEASURE_TOLERANCE * perpendicular,
                _ => SAMPLED_DIAMETER_TOLERANCE_MM,
            };
            assert!(
                roi.perpendicular_mm >= perpendicular - MEASURE_TOLERANCE
                    && roi.perpendicular_mm <= perpendicular + tolerance,
                "{}: ours {}, numpy's {perpendicular}",
                what("perpendicular_mm"),
                roi.perpendicular_mm
            );
        }
    }
}
