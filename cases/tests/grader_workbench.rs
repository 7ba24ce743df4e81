//! The grader workbench on a real SQLite file holding the demo study: the split is stored and
//! never moves, test agreement opens only with a confirmation (audited once), the disagreement
//! browser lists development items only, and drift reads both versions.

#[path = "support/rating.rs"]
mod rating_support;

use cases::grader_workbench::{
    confirm_grader, development_disagreements, grader_drift, grader_on_split, item_side_by_side,
};
use cases::rating::DEMO_STUDY_ID;
use cases::store::Store;
use rating_support::demo_store;
use rusqlite::params;
use std::collections::{BTreeMap, BTreeSet};

const LEAD: &str = "study lead";

/// Every demo response as (id, case, model), in id order.
fn responses(store: &Store) -> Vec<(i64, String, String)> {
    let mut stmt = store
        .read()
        .prepare(
            "SELECT r.id, c.case_id, r.model FROM responses r JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id ORDER BY r.id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn rater(store: &Store, name: &str) -> i64 {
    store
        .read()
        .execute(
            "INSERT INTO raters (name, role) VALUES (?1, 'neuroradiologist')",
            [name],
        )
        .unwrap();
    store.read().last_insert_rowid()
}

fn rate(store: &Store, response: i64, rater: i64, overall: f64) -> i64 {
    store
        .read()
        .execute(
            "INSERT INTO ratings (response, rater, read_no, overall, status, updated_at)
             VALUES (?1, ?2, 1, ?3, 'submitted', '2026-01-01T00:00:00Z')",
            params![response, rater, overall],
        )
        .unwrap();
    store.read().last_insert_rowid()
}

fn grade(store: &Store, response: i64, grader: &str, score: f64) {
    store
        .read()
        .execute(
            "INSERT INTO grader_scores (response, grader, score, errors_json, rationale,
                extra_json) VALUES (?1, ?2, ?3, '[{\"category\": \"P3\"}]', 'too sure', '{}')",
            params![response, grader, score],
        )
        .unwrap();
}

fn part_ids(store: &Store, part: &str) -> Vec<i64> {
    let mut stmt = store
        .read()
        .prepare("SELECT response FROM grader_split_items WHERE part = ?1 ORDER BY response")
        .unwrap();
    stmt.query_map([part], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn audit_count(store: &Store, action: &str) -> i64 {
    store
        .read()
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action = ?1",
            [action],
            |r| r.get(0),
        )
        .unwrap()
}

/// The first `n` responses rated by two clinicians (scores from the response id, one point apart)
/// and graded by "wb-v1" at the clinicians' mean, one point above it where the id is a multiple
/// of 3.
fn rated_study(n: usize) -> (tempfile::TempDir, Store, Vec<(i64, String, String)>) {
    let (dir, store) = demo_store();
    let all = responses(&store);
    assert!(all.len() >= n, "the demo has {} responses", all.len());
    let (a, b) = (rater(&store, "Dr A"), rater(&store, "Dr B"));
    for (id, _, _) in &all[..n] {
        let base = 1.0 + (*id % 4) as f64;
        rate(&store, *id, a, base);
        rate(&store, *id, b, base + 1.0);
        let off = if id % 3 == 0 { 1.0 } else { 0.0 };
        grade(&store, *id, "wb-v1", base + 0.5 + off);
    }
    (dir, store, all[..n].to_vec())
}

#[test]
fn the_split_holds_whole_cases_stored_and_never_moves() {
    let (_dir, mut store, rated) = rated_study(40);
    let first = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 99, LEAD).unwrap();
    assert_eq!(first.seed, 99);
    assert_eq!(first.development_items + first.test_items, 40);
    let parts = |store: &Store| -> BTreeMap<i64, String> {
        let mut stmt = store
            .read()
            .prepare("SELECT response, part FROM grader_split_items")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let placed = parts(&store);
    let cases: BTreeSet<&str> = rated.iter().map(|r| r.1.as_str()).collect();
    for case in &cases {
        let parts: BTreeSet<&str> = rated
            .iter()
            .filter(|r| r.1 == *case)
            .map(|r| placed[&r.0].as_str())
            .collect();
        assert_eq!(parts.len(), 1, "case {case} lies in one part: {parts:?}");
    }
    assert!(cases.len() >= 2);
    // Another seed offered later changes nothing: the stored one holds.
    let again = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 12345, LEAD).unwrap();
    assert_eq!(again.seed, 99);
    assert_eq!(parts(&store), placed);
    assert_eq!(audit_count(&store, "place grader split items"), 1);

    // Items rated later are added; none placed before moves.
    let all = responses(&store);
    let c = rater(&store, "Dr C");
    for (id, _, _) in &all[40..50] {
        rate(&store, *id, c, 3.0);
    }
    let grown = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 1, LEAD).unwrap();
    assert_eq!(grown.development_items + grown.test_items, 50);
    let now = parts(&store);
    assert!(placed.iter().all(|(r, p)| now[r] == *p));
    assert_eq!(audit_count(&store, "place grader split items"), 2);
    // A late item of a case placed before joins its case's part.
    let case_of: BTreeMap<i64, &str> = all.iter().map(|r| (r.0, r.1.as_str())).collect();
    for (id, case, _) in &all[40..50] {
        if let Some((earlier, _, _)) = rated.iter().find(|r| r.1 == *case) {
            assert_eq!(now[id], placed[earlier], "late item of {}", case_of[id]);
        }
    }
}

#[test]
fn the_verdict_of_a_study_the_workbench_split_reads_only_its_test_cases() {
    use calibration::input::ItemsUsed;
    let (_dir, mut store, rated) = rated_study(60);
    // The report checks scores against the rubric's 1–5 scale: whole points, at most 5.
    store
        .read()
        .execute(
            "UPDATE grader_scores SET score = MIN(CAST(score AS INTEGER), 5)",
            [],
        )
        .unwrap();
    let lead = cases::app::Session::command_line();
    let report = |store: &Store| {
        cases::app::calibration::study_report(
            store,
            &lead,
            DEMO_STUDY_ID,
            calibration::input::ReportOptions {
                grader: Some("wb-v1".into()),
                bootstrap_resamples: 50,
                ..Default::default()
            },
        )
        .unwrap()
        .build(&calibration::bootstrap::NoProgress)
        .unwrap()
    };
    // Before the workbench splits the study, the verdict reads every rated item.
    let before = report(&store).verdict.unwrap();
    assert_eq!(before.items_used, ItemsUsed::All);
    assert_eq!(before.n_items, 60);

    grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 5, LEAD).unwrap();
    confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v1", 5, LEAD).unwrap();
    let test = part_ids(&store, "test");
    let test_cases: BTreeSet<&str> = rated
        .iter()
        .filter(|r| test.contains(&r.0))
        .map(|r| r.1.as_str())
        .collect();
    let verdict = report(&store).verdict.unwrap();
    assert_eq!(
        verdict.items_used,
        ItemsUsed::TestCases {
            cases: test_cases.len(),
            items: test.len(),
            versions_confirmed: 1,
        }
    );
    assert_eq!(verdict.n_items, test.len());
    assert_eq!(verdict.n_cases, test_cases.len());
    assert!(
        verdict.summary.contains(&format!(
            "read only the {} items of the {} test cases",
            test.len(),
            test_cases.len()
        )),
        "{}",
        verdict.summary
    );
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["items_used"]["test_cases"]["versions_confirmed"], 1);
}

#[test]
fn test_agreement_opens_only_with_an_audited_confirmation() {
    let (_dir, mut store, _) = rated_study(40);
    let before = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    assert_eq!(before.development_graded, before.development_items);
    assert!(before.test.is_none() && before.confirmed.is_none());
    // The grader is one point above the clinicians' mean on development items whose id is a
    // multiple of 3, at the mean on the others.
    let development = part_ids(&store, "development");
    let lenient = development.iter().filter(|id| *id % 3 == 0).count();
    assert_eq!(
        before.development.mean_difference,
        Some(lenient as f64 / development.len() as f64)
    );

    let confirmed = confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    let test = confirmed.test.expect("shown once confirmed");
    assert_eq!(test.n_items, confirmed.test_items);
    assert_eq!(confirmed.confirmed.as_ref().unwrap().by, LEAD);
    assert_eq!(audit_count(&store, "confirm grader version"), 1);
    let (entity, after): (String, String) = store
        .read()
        .query_row(
            "SELECT entity, after_json FROM audit_log WHERE action = 'confirm grader version'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(entity, format!("study:{DEMO_STUDY_ID}/grader:wb-v1"));
    let after: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(after["test"]["n_items"], test.n_items);

    confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    assert_eq!(
        audit_count(&store, "confirm grader version"),
        1,
        "confirming again records nothing"
    );
    let unknown = confirm_grader(&mut store, DEMO_STUDY_ID, "never-ran", 7, LEAD).unwrap_err();
    assert!(
        unknown.to_string().contains("run it before confirming"),
        "{unknown}"
    );
}

#[test]
fn the_browser_lists_development_items_by_gap_and_opens_test_items_after_confirmation() {
    let (_dir, mut store, _) = rated_study(40);
    let list = development_disagreements(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    let on_split = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    assert_eq!(list.len(), on_split.development_items);
    assert!(list.windows(2).all(|w| w[0].gap >= w[1].gap));
    assert_eq!(list[0].gap, 1.0);
    assert_eq!(list.last().unwrap().gap, 0.0);
    let test_ids = part_ids(&store, "test");
    assert!(list.iter().all(|d| !test_ids.contains(&d.response)));

    // A development item side by side, with a clinician's error label and the grader's claims.
    let top = &list[0];
    let rating: i64 = store
        .read()
        .query_row(
            "SELECT g.id FROM ratings g JOIN raters ra ON g.rater = ra.id
             WHERE g.response = ?1 AND ra.name = 'Dr B'",
            [top.response],
            |r| r.get(0),
        )
        .unwrap();
    store
        .read()
        .execute(
            "INSERT INTO error_labels (rating, category, severity, span_start, span_end,
                 span_text, comment) VALUES (?1, 'R2', 2, 0, 4, 'rationale', 'wrong territory')",
            [rating],
        )
        .unwrap();
    let item = item_side_by_side(&store, "wb-v1", top.response).unwrap();
    assert_eq!(
        format!(
            "{}/{}/{}/{}",
            item.case_id, item.task_id, item.model, item.sample
        ),
        top.item
    );
    assert_eq!(item.clinicians.len(), 2);
    assert_eq!(item.clinicians[1].rater, "Dr B");
    assert_eq!(item.clinicians[1].errors[0].category, "R2");
    assert_eq!(item.grader_score, Some(top.grader_score));
    assert_eq!(item.grader_rationale.as_deref(), Some("too sure"));
    assert_eq!(item.grader_errors[0].category, "P3");
    assert!(
        !item.key_images.is_empty(),
        "the viewer opens on the task's key images"
    );

    let refused = item_side_by_side(&store, "wb-v1", test_ids[0]).unwrap_err();
    assert!(refused.to_string().contains("is a test item"), "{refused}");
    confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    assert!(item_side_by_side(&store, "wb-v1", test_ids[0]).is_ok());
}

#[test]
fn drift_compares_the_items_both_versions_scored() {
    let (_dir, store, rated) = rated_study(30);
    // v2: one point lower on every item but the first five, which it has not scored.
    let v1: BTreeMap<i64, f64> = {
        let mut stmt = store
            .read()
            .prepare("SELECT response, score FROM grader_scores WHERE grader = 'wb-v1'")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for (id, _, _) in &rated[5..] {
        grade(&store, *id, "wb-v2", v1[id] - 1.0);
    }
    let drift = grader_drift(&store, DEMO_STUDY_ID, "wb-v1", "wb-v2").unwrap();
    assert_eq!(drift.n_common, 25);
    assert_eq!(drift.mean_shift, Some(-1.0));
    // The demo's scale is 1-5: a verdict passes at 3 or above.
    assert_eq!(drift.pass_at_or_above, 3.0);
    let expected_flips = rated[5..]
        .iter()
        .filter(|(id, _, _)| v1[id] >= 3.0 && v1[id] - 1.0 < 3.0)
        .count();
    assert_eq!(drift.flips_to_fail.len(), expected_flips);
    assert!(drift.flips_to_pass.is_empty());
    let models: BTreeSet<&str> = rated[5..].iter().map(|r| r.2.as_str()).collect();
    assert_eq!(drift.models.len(), models.len());
}

/// Binds `name` as a grader spec first run at `at`, as `runner::record` binds one.
fn bind_spec(store: &Store, name: &str, at: &str) {
    store
        .read()
        .execute(
            "INSERT INTO run_specs (name, kind, spec_sha256, spec_json, first_run_at)
             VALUES (?1, 'grader', 'sha', '{}', ?2)",
            params![name, at],
        )
        .unwrap();
}

/// Issue 41 finding 5: an older version was confirmed on the test items after a newer one, so the
/// best test score could be picked after the fact.
#[test]
fn a_confirmed_version_closes_the_test_items_to_earlier_versions() {
    let (_dir, mut store, rated) = rated_study(40);
    for (id, _, _) in &rated {
        grade(&store, *id, "wb-v2", 3.0);
        grade(&store, *id, "wb-v3", 2.0);
    }
    bind_spec(&store, "wb-v1", "2026-01-01T00:00:00.000Z");
    bind_spec(&store, "wb-v2", "2026-01-02T00:00:00.000Z");
    bind_spec(&store, "wb-v3", "2026-01-03T00:00:00.000Z");
    confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v2", 7, LEAD).unwrap();

    let refused = confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("\"wb-v2\", a later version, was confirmed"),
        "{refused}"
    );
    assert_eq!(audit_count(&store, "confirm grader version"), 1);
    let earlier = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v1", 7, LEAD).unwrap();
    assert!(earlier.test.is_none() && earlier.confirmed.is_none());
    let closed = earlier.closed_by.expect("the card says why");
    assert_eq!(
        (closed.grader.as_str(), closed.by.as_str()),
        ("wb-v2", LEAD)
    );

    // Scores imported with the bundle (no spec) come before every spec: closed too.
    for (id, _, _) in &rated {
        grade(&store, *id, "imported", 4.0);
    }
    assert!(confirm_grader(&mut store, DEMO_STUDY_ID, "imported", 7, LEAD).is_err());

    // A later version may still be confirmed, and its confirmation stands beside the first.
    let later = confirm_grader(&mut store, DEMO_STUDY_ID, "wb-v3", 7, LEAD).unwrap();
    assert!(later.test.is_some() && later.closed_by.is_none());
    let first = grader_on_split(&mut store, DEMO_STUDY_ID, "wb-v2", 7, LEAD).unwrap();
    assert!(first.test.is_some() && first.closed_by.is_none());
}
