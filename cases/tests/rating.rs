//! Rating on a real SQLite file holding the real demo study: blinding of what raters receive,
//! seeded assignment, edit rules, submit/reopen, the audit chain and positions.

#[path = "support/rating.rs"]
mod rating_support;

use cases::app::permissions::Action;
use cases::app::{catalog, reading, LeadSession, Session};
use cases::model::Taxonomy;
use cases::rating::{
    LabelEdit, PlanSpec, RaterRole, RatingEdit, RatingError, SpanText, DEMO_STUDY_ID,
};
use cases::store::audit::{self, Verdict};
use cases::store::Store;
use cases::Error;
use rating_support::{demo_store, family_limited_rubric, responses_key_order};
use rusqlite::Connection;
use std::collections::{BTreeMap, BTreeSet};

fn spec(name: &str, seed: u64, raters: Vec<i64>, overlap: f64, repeat: f64) -> PlanSpec {
    PlanSpec {
        study_id: DEMO_STUDY_ID.into(),
        name: name.into(),
        seed,
        raters,
        overlap_share: overlap,
        responses_per_rater: None,
        repeat_share: repeat,
        repeat_after_days: 21,
        stratify_by: Vec::new(),
    }
}

/// Every assignment of a plan, per rater name, as (case/task/model/sample, read_no) in order.
fn queues(conn: &Connection, plan_name: &str) -> BTreeMap<String, Vec<(String, i64)>> {
    let mut stmt = conn
        .prepare(
            "SELECT ra.name, c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample,
                    a.read_no
             FROM assignments a JOIN assignment_plans p ON a.plan = p.id
             JOIN raters ra ON a.rater = ra.id JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE p.name = ?1 ORDER BY ra.name, a.position",
        )
        .unwrap();
    let mut out: BTreeMap<String, Vec<(String, i64)>> = BTreeMap::new();
    let rows = stmt
        .query_map([plan_name], |r| {
            Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    for row in rows {
        let (rater, key, read_no) = row.unwrap();
        out.entry(rater).or_default().push((key, read_no));
    }
    out
}

fn three_raters(store: &mut Store) -> Vec<i64> {
    [
        ("Dr Ada", RaterRole::Neuroradiologist, Some(12)),
        ("Dr Bo", RaterRole::Neurologist, Some(7)),
        ("Dr Cy", RaterRole::Resident, None),
    ]
    .into_iter()
    .map(|(name, role, years)| store.create_rater(name, role, years).unwrap().id)
    .collect()
}

#[test]
fn the_same_seed_gives_the_same_queues_and_another_seed_other_ones() {
    let (_a_dir, mut a) = demo_store();
    let (_b_dir, mut b) = demo_store();
    let raters_a = three_raters(&mut a);
    let raters_b = three_raters(&mut b);
    a.create_assignment_plan(raters_a[0], &spec("p", 42, raters_a.clone(), 0.2, 0.1))
        .unwrap();
    b.create_assignment_plan(raters_b[0], &spec("p", 42, raters_b.clone(), 0.2, 0.1))
        .unwrap();
    let first = queues(a.read(), "p");
    assert_eq!(first.len(), 3);
    assert_eq!(first, queues(b.read(), "p"));

    let (_c_dir, mut c) = demo_store();
    let raters_c = three_raters(&mut c);
    c.create_assignment_plan(raters_c[0], &spec("p", 43, raters_c, 0.2, 0.1))
        .unwrap();
    let other = queues(c.read(), "p");
    for rater in first.keys() {
        assert_ne!(
            first[rater], other[rater],
            "{rater}'s queue did not change with the seed"
        );
    }
}

#[test]
fn overlap_is_exact_every_response_is_assigned_and_repeats_come_last() {
    let (_dir, mut store) = demo_store();
    let raters = three_raters(&mut store);
    let all = responses_key_order(store.read());
    let n = all.len();
    assert!(n > 20, "the demo has {n} responses");
    let summary = store
        .create_assignment_plan(raters[1], &spec("inter", 5, raters.clone(), 0.3, 0.25))
        .unwrap();
    let expected_overlap = (0.3 * n as f64).round() as usize;
    assert_eq!(summary.n_overlap as usize, expected_overlap);
    assert_eq!(summary.n_unassigned, 0);

    let queues = queues(store.read(), "inter");
    let firsts: Vec<BTreeSet<&str>> = queues
        .values()
        .map(|q| {
            q.iter()
                .filter(|(_, r)| *r == 1)
                .map(|(k, _)| k.as_str())
                .collect()
        })
        .collect();
    let everyone: BTreeSet<&str> = firsts.iter().skip(1).fold(firsts[0].clone(), |acc, s| {
        acc.intersection(s).copied().collect()
    });
    assert_eq!(
        everyone.len(),
        expected_overlap,
        "responses read by every rater"
    );
    let union: BTreeSet<&str> = firsts.iter().flatten().copied().collect();
    assert_eq!(
        union,
        all.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    // Non-overlap responses are read by exactly one rater, in balanced shares.
    let own: Vec<usize> = firsts.iter().map(|s| s.len() - expected_overlap).collect();
    assert_eq!(own.iter().sum::<usize>(), n - expected_overlap);
    assert!(
        own.iter().max().unwrap() - own.iter().min().unwrap() <= 1,
        "{own:?}"
    );

    let created_at = summary.created_at.clone();
    let opens: String = store
        .read()
        .query_row("SELECT date(?1, '+21 days')", [&created_at], |r| r.get(0))
        .unwrap();
    for queue in queues.values() {
        let first_reads = queue.iter().filter(|(_, r)| *r == 1).count();
        let repeats: Vec<&(String, i64)> = queue.iter().filter(|(_, r)| *r == 2).collect();
        assert_eq!(repeats.len(), (0.25 * first_reads as f64).round() as usize);
        // Repeats follow every first read and repeat one of them.
        assert!(queue[..first_reads].iter().all(|(_, r)| *r == 1));
        let firsts: BTreeSet<&String> = queue[..first_reads].iter().map(|(k, _)| k).collect();
        assert!(repeats.iter().all(|(k, _)| firsts.contains(k)));
    }
    let not_before: BTreeSet<Option<String>> = store
        .read()
        .prepare("SELECT DISTINCT not_before FROM assignments WHERE read_no = 2")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(not_before, BTreeSet::from([Some(opens.clone())]));

    // A repeat read is listed with its opening date and cannot be read early.
    let queue = store.reading_queue(raters[0], DEMO_STUDY_ID).unwrap();
    let last = queue.last().unwrap();
    assert_eq!(
        (last.available, last.opens_on.as_deref()),
        (false, Some(opens.as_str()))
    );
    assert_eq!(last.position, last.total);
    let early = store.reading_item(raters[0], last.assignment).unwrap_err();
    assert!(
        matches!(early, Error::Rating(RatingError::Refused(_))),
        "{early}"
    );
}

#[test]
fn a_capped_plan_gives_each_rater_exactly_their_share_and_leaves_the_rest() {
    let (_dir, mut store) = demo_store();
    let raters = three_raters(&mut store);
    let n = responses_key_order(store.read()).len();
    let mut capped = spec("capped", 8, raters.clone(), 0.1, 0.0);
    capped.responses_per_rater = Some(40);
    let summary = store.create_assignment_plan(raters[2], &capped).unwrap();
    let overlap = (0.1 * n as f64).round() as u32;
    assert!(summary
        .raters
        .iter()
        .all(|r| r.first_reads == 40 && r.overlap == overlap));
    assert_eq!(
        summary.n_unassigned as usize,
        n - (overlap as usize + 3 * (40 - overlap as usize))
    );

    // A rater with a queue may join a second plan: it gives them only responses they do not
    // read yet (cases/tests/plans.rs tests the rest).
    let again = store
        .create_assignment_plan(raters[2], &spec("again", 8, vec![raters[0]], 0.1, 0.0))
        .unwrap();
    assert_eq!(again.raters[0].first_reads as usize, n - 40);
}

/// Every string value and key of `value`, recursively.
fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn nothing_a_rater_receives_names_the_model_the_grader_or_another_raters_work() {
    let (_dir, mut store) = demo_store();
    let raters = three_raters(&mut store);
    let (ada, bo) = (raters[0], raters[1]);
    store
        .create_assignment_plan(ada, &spec("blind", 3, vec![ada, bo], 1.0, 0.0))
        .unwrap();
    // Bo rates and labels every item Ada will read, with text that must never reach Ada.
    let bo_queue = store.reading_queue(bo, DEMO_STUDY_ID).unwrap();
    for item in &bo_queue {
        store
            .save_rating(
                bo,
                item.assignment,
                &RatingEdit {
                    overall: Some(2.0),
                    not_applicable: Default::default(),
                    dimensions: BTreeMap::new(),
                    correctness: None,
                    confidence: Some(3),
                    comment: "BO-PRIVATE-COMMENT".into(),
                    seconds_on_task: 4.0,
                },
            )
            .unwrap();
        store
            .add_error_label(
                bo,
                item.assignment,
                &text_label("R1", [0, 4], "BO-PRIVATE-LABEL"),
            )
            .unwrap();
    }

    let conn = store.read();
    let column = |sql: &str| -> Vec<String> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let models = column("SELECT DISTINCT model FROM responses");
    let graders = column("SELECT DISTINCT grader FROM grader_scores");
    let grader_rationales =
        column("SELECT rationale FROM grader_scores WHERE rationale IS NOT NULL");
    assert_eq!(models.len(), 3);
    assert!(!graders.is_empty() && !grader_rationales.is_empty());
    let forbidden_keys = [
        "model",
        "sample",
        "grader",
        "score",
        "response_id",
        "demo_planted_errors",
        "extra",
    ];

    let ada_queue = store.reading_queue(ada, DEMO_STUDY_ID).unwrap();
    assert_eq!(ada_queue.len(), bo_queue.len());
    // A queue carries its reader's own time on each item (the "minutes left" pace), never
    // another's: Bo's four seconds on each, nothing yet for Ada on the same responses.
    let bo_times: Vec<Option<f64>> = store
        .reading_queue(bo, DEMO_STUDY_ID)
        .unwrap()
        .iter()
        .map(|i| i.seconds_on_task)
        .collect();
    assert_eq!(bo_times, vec![Some(4.0); bo_queue.len()]);
    assert!(ada_queue.iter().all(|i| i.seconds_on_task.is_none()));
    let mut bo_ids = BTreeSet::new();
    for item in &ada_queue {
        let payload = store.reading_item(ada, item.assignment).unwrap();
        assert!(payload.rating.is_none(), "Ada has not rated anything yet");
        let text = serde_json::to_string(&payload).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut all = Vec::new();
        strings(&value, &mut all);
        for name in models.iter().chain(&graders) {
            assert!(!text.contains(name.as_str()), "{name} in {text}");
        }
        for rationale in &grader_rationales {
            assert!(
                !text.contains(rationale.as_str()),
                "a grader rationale reached the rater"
            );
        }
        for key in forbidden_keys {
            assert!(!all.iter().any(|s| s == key), "key {key} in {text}");
        }
        assert!(
            !text.contains("BO-PRIVATE"),
            "another rater's work in {text}"
        );
        assert!(!serde_json::to_string(&ada_queue)
            .unwrap()
            .contains("BO-PRIVATE"));
        bo_ids.insert(item.assignment);
    }
    // Bo's assignments are "not found" for Ada: nothing confirms they exist.
    for item in &bo_queue {
        assert!(!bo_ids.contains(&item.assignment));
        for outcome in [
            store.reading_item(ada, item.assignment).map(|_| ()),
            store.set_position(ada, item.assignment),
        ] {
            assert!(
                matches!(outcome, Err(Error::NotFound { .. })),
                "{outcome:?}"
            );
        }
        let saved = store.save_rating(ada, item.assignment, &RatingEdit::empty());
        assert!(matches!(saved, Err(Error::NotFound { .. })));
    }
    let bo_label: i64 = store
        .read()
        .query_row("SELECT min(id) FROM error_labels", [], |r| r.get(0))
        .unwrap();
    let deleted = store.delete_error_label(ada, bo_label);
    assert!(
        matches!(deleted, Err(Error::NotFound { .. })),
        "{deleted:?}"
    );
}

trait Empty {
    fn empty() -> Self;
}

impl Empty for RatingEdit {
    fn empty() -> Self {
        RatingEdit {
            overall: None,
            not_applicable: Default::default(),
            dimensions: BTreeMap::new(),
            correctness: None,
            confidence: None,
            comment: String::new(),
            seconds_on_task: 0.0,
        }
    }
}

fn text_label(category: &str, span: [u32; 2], comment: &str) -> LabelEdit {
    LabelEdit {
        category: category.into(),
        severity: 2,
        span: Some(span),
        text: SpanText::Rationale,
        turn: None,
        mark: None,
        comment: comment.into(),
    }
}

fn one_item(store: &mut Store) -> (i64, i64) {
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    store
        .ensure_demo_queue(rater)
        .unwrap()
        .expect("a new queue");
    let first = store.reading_queue(rater, DEMO_STUDY_ID).unwrap()[0].assignment;
    (rater, first)
}

#[test]
fn submit_names_every_missing_field_and_reopen_is_audited() {
    let (_dir, mut store) = demo_store();
    let (rater, item) = one_item(&mut store);
    let payload = store.reading_item(rater, item).unwrap();
    let dimension_ids: Vec<String> = payload
        .rubric
        .dimensions
        .iter()
        .map(|d| d.id.clone())
        .collect();
    assert_eq!(dimension_ids.len(), 4);

    let missing = |e: Error| match e {
        Error::Rating(RatingError::Incomplete { missing }) => missing,
        other => panic!("expected Incomplete, got {other}"),
    };
    let mut expected = vec!["overall".to_owned()];
    expected.extend(dimension_ids.iter().map(|d| format!("dimensions.{d}")));
    expected.extend(["correctness".to_owned(), "confidence".to_owned()]);
    assert_eq!(
        missing(store.submit_rating(rater, item).unwrap_err()),
        expected
    );

    let mut edit = RatingEdit::empty();
    edit.overall = Some(4.0);
    edit.dimensions.insert(dimension_ids[0].clone(), 3.0);
    edit.correctness = Some(cases::rating::Correctness::Partly);
    let ack = store.save_rating(rater, item, &edit).unwrap();
    assert_eq!(ack.status, cases::rating::RatingStatus::Draft);
    let error = store.submit_rating(rater, item).unwrap_err();
    let message = error.to_string();
    let mut expected: Vec<String> = dimension_ids[1..]
        .iter()
        .map(|d| format!("dimensions.{d}"))
        .collect();
    expected.push("confidence".into());
    assert_eq!(missing(error), expected);
    assert!(
        message.contains("confidence") && message.contains(&dimension_ids[3]),
        "{message}"
    );

    for id in &dimension_ids {
        edit.dimensions.insert(id.clone(), 4.0);
    }
    edit.confidence = Some(4);
    store.save_rating(rater, item, &edit).unwrap();
    let submitted = store.submit_rating(rater, item).unwrap();
    assert_eq!(submitted.status, cases::rating::RatingStatus::Submitted);
    let submitted_at = store
        .reading_item(rater, item)
        .unwrap()
        .rating
        .unwrap()
        .submitted_at;
    assert!(submitted_at.is_some());

    // Submitted: edits are refused until reopened.
    for refused in [
        store.save_rating(rater, item, &edit).map(|_| ()),
        store
            .add_error_label(rater, item, &text_label("R1", [0, 3], ""))
            .map(|_| ()),
    ] {
        assert!(
            matches!(refused, Err(Error::Rating(RatingError::Refused(_)))),
            "{refused:?}"
        );
    }
    let reopened = store.reopen_rating(rater, item).unwrap();
    assert_eq!(reopened.status, cases::rating::RatingStatus::Draft);
    let (actor, before, after): (String, String, String) = store
        .read()
        .query_row(
            "SELECT actor, before_json, after_json FROM audit_log WHERE action = 'reopen rating'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(actor, "Dr Ada");
    let before: serde_json::Value = serde_json::from_str(&before).unwrap();
    let after: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(before["status"], "submitted");
    assert_eq!(before["submitted_at"].as_str(), submitted_at.as_deref());
    assert_eq!(
        (after["status"].as_str(), after["submitted_at"].is_null()),
        (Some("draft"), true)
    );
    store
        .save_rating(rater, item, &edit)
        .expect("a reopened rating is editable");

    let actions: Vec<String> = store
        .read()
        .prepare("SELECT action FROM audit_log WHERE actor = 'Dr Ada' ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        actions,
        [
            // The demo queue is dealt as the study lead's plan, not Dr Ada's.
            "create rater",
            // reading_item handed the response over: recorded once, for blinding elsewhere.
            "show item",
            "save rating",
            "save rating",
            "submit rating",
            "reopen rating",
            "save rating"
        ]
    );
    assert!(matches!(
        audit::verify(store.read()).unwrap(),
        Verdict::Intact { .. }
    ));
}

#[test]
fn scores_labels_and_spans_are_checked_against_the_rubric_taxonomy_and_text() {
    let (dir, mut store) = demo_store();
    let (rater, item) = one_item(&mut store);
    let invalid_field = |e: Error| match e {
        Error::Rating(RatingError::Invalid { field, .. }) => field,
        other => panic!("expected Invalid, got {other}"),
    };
    let mut edit = RatingEdit::empty();
    edit.overall = Some(3.5);
    assert_eq!(
        invalid_field(store.save_rating(rater, item, &edit).unwrap_err()),
        "overall"
    );
    edit.overall = Some(3.0);
    edit.dimensions.insert("bedside_manner".into(), 3.0);
    assert_eq!(
        invalid_field(store.save_rating(rater, item, &edit).unwrap_err()),
        "dimensions.bedside_manner"
    );
    edit.dimensions.clear();
    edit.confidence = Some(6);
    assert_eq!(
        invalid_field(store.save_rating(rater, item, &edit).unwrap_err()),
        "confidence"
    );

    // Spans count UTF-16 code units: a brain emoji is two of them.
    let payload = store.reading_item(rater, item).unwrap();
    let rationale = format!("🧠 {}", payload.response.rationale.clone().unwrap());
    drop(payload);
    let path = dir.path().join("db.sqlite");
    let response: i64 = store
        .read()
        .query_row(
            "SELECT response FROM assignments WHERE id = ?1",
            [item],
            |r| r.get(0),
        )
        .unwrap();
    Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE responses SET rationale = ?1 WHERE id = ?2",
            rusqlite::params![rationale, response],
        )
        .unwrap();
    let units = rationale.encode_utf16().count() as u32;
    assert_eq!(units as usize, rationale.chars().count() + 1);
    let ok = store
        .add_error_label(rater, item, &text_label("R1", [0, 2], "the emoji"))
        .unwrap();
    assert!(ok.label_id > 0);
    store
        .add_error_label(
            rater,
            item,
            &text_label("R1", [units - 3, units], "the end"),
        )
        .expect("a span up to the last UTF-16 unit");
    for bad in [[1, 3], [3, 3], [0, units + 1]] {
        let error = store
            .add_error_label(rater, item, &text_label("R1", bad, ""))
            .unwrap_err();
        assert_eq!(invalid_field(error), "span", "{bad:?}");
    }
    let unknown = store
        .add_error_label(rater, item, &text_label("Z9", [0, 2], ""))
        .unwrap_err();
    assert_eq!(invalid_field(unknown), "category");
    let mut severe = text_label("R1", [0, 2], "");
    severe.severity = 4;
    assert_eq!(
        invalid_field(store.add_error_label(rater, item, &severe).unwrap_err()),
        "severity"
    );

    // Image-anchored categories need a mark, on one of the case's series.
    let image_codes: Vec<String> = Taxonomy::neurorater_default()
        .categories
        .into_iter()
        .filter(|c| c.anchor == cases::model::Anchor::Image)
        .map(|c| c.code)
        .collect();
    assert_eq!(image_codes, ["P1"]);
    let mut missed = LabelEdit {
        category: "P1".into(),
        severity: 3,
        span: None,
        text: SpanText::Rationale,
        turn: None,
        mark: None,
        comment: "left frontal lesion not reported".into(),
    };
    assert_eq!(
        invalid_field(store.add_error_label(rater, item, &missed).unwrap_err()),
        "mark"
    );
    let series = store.reading_item(rater, item).unwrap().series[0]
        .series_id
        .clone();
    let mut mark = cases::marks::Mark {
        series_id: "no-such-series".into(),
        kind: cases::marks::MarkKind::Point,
        plane: cases::marks::Plane::Axial,
        points_lps_mm: vec![[10.0, -20.0, 30.0]],
    };
    missed.mark = Some(mark.clone());
    assert_eq!(
        invalid_field(store.add_error_label(rater, item, &missed).unwrap_err()),
        "mark.series_id"
    );
    mark.series_id = series;
    mark.points_lps_mm.push([0.0; 3]);
    missed.mark = Some(mark.clone());
    assert_eq!(
        invalid_field(store.add_error_label(rater, item, &missed).unwrap_err()),
        "mark"
    );
    // Checked against the series' volume, as a curator's lesion marks are.
    mark.points_lps_mm = vec![[10.0, -20.0, 500.0]];
    missed.mark = Some(mark.clone());
    let outside = store.add_error_label(rater, item, &missed).unwrap_err();
    assert!(
        outside
            .to_string()
            .contains("lies outside the series' volume"),
        "{outside}"
    );
    assert_eq!(invalid_field(outside), "mark.points_lps_mm");
    mark.points_lps_mm = vec![[10.0, -20.0, 30.0]];
    missed.mark = Some(mark.clone());
    let added = store.add_error_label(rater, item, &missed).unwrap();
    let mut moved_out = missed.clone();
    moved_out.mark = Some(cases::marks::Mark {
        points_lps_mm: vec![[10.0, -20.0, 500.0]],
        ..mark.clone()
    });
    assert_eq!(
        invalid_field(
            store
                .update_error_label(rater, added.label_id, &moved_out)
                .unwrap_err()
        ),
        "mark.points_lps_mm"
    );

    // Update and delete, and what the rater reads back.
    let mut changed = missed.clone();
    changed.severity = 1;
    store
        .update_error_label(rater, added.label_id, &changed)
        .unwrap();
    store.delete_error_label(rater, ok.label_id).unwrap();
    let labels = store
        .reading_item(rater, item)
        .unwrap()
        .rating
        .unwrap()
        .labels;
    assert_eq!(labels.len(), 2);
    assert_eq!(labels[1].id, added.label_id);
    assert_eq!(
        (labels[1].severity, labels[1].mark.as_ref()),
        (1, Some(&mark))
    );
    assert_eq!(labels[0].span, Some([units - 3, units]));
    assert!(matches!(
        audit::verify(store.read()).unwrap(),
        Verdict::Intact { .. }
    ));
}

#[test]
fn the_current_rater_and_position_survive_reopening_the_file() {
    let (dir, mut store) = demo_store();
    let (rater, _) = one_item(&mut store);
    assert!(
        store.ensure_demo_queue(rater).unwrap().is_none(),
        "a second call adds nothing"
    );
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    let n = store
        .read()
        .query_row("SELECT count(*) FROM responses", [], |r| r.get::<_, i64>(0))
        .unwrap();
    assert_eq!(queue.len() as i64, n, "the demo queue holds every response");
    assert_eq!(store.resume(rater).unwrap(), None);
    store.set_current_rater(rater).unwrap();
    store.set_position(rater, queue[6].assignment).unwrap();
    drop(store);

    let mut store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    assert_eq!(
        store.current_rater().unwrap().map(|r| r.name),
        Some("Dr Ada".into())
    );
    let resumed = store.resume(rater).unwrap().unwrap();
    assert_eq!(
        (resumed.study_id.as_str(), resumed.assignment),
        (DEMO_STUDY_ID, queue[6].assignment)
    );
    assert_eq!(
        store
            .reading_item(rater, resumed.assignment)
            .unwrap()
            .position,
        7
    );
}

#[test]
fn raters_are_validated_with_messages_naming_the_field() {
    let (_dir, mut store) = demo_store();
    store
        .create_rater("Dr Ada", RaterRole::Curator, None)
        .unwrap();
    for (name, years, field) in [
        ("  ", None, "name"),
        ("Dr Ada", None, "name"),
        ("Dr\nEve", None, "name"),
        ("Dr Eve", Some(71), "years_experience"),
    ] {
        match store.create_rater(name, RaterRole::Resident, years) {
            Err(Error::Rating(RatingError::Invalid { field: got, .. })) => assert_eq!(got, field),
            other => panic!("{name:?}: {other:?}"),
        }
    }
    assert_eq!(store.raters().unwrap().len(), 1);
}

#[test]
fn repeat_reads_stay_out_of_inter_rater_data_and_exports_carry_read_no_and_ids() {
    let (dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let mut plan = spec("repeat", 11, vec![rater], 0.0, 1.0);
    plan.responses_per_rater = Some(1);
    plan.repeat_after_days = 0;
    store.create_assignment_plan(rater, &plan).unwrap();
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(queue.len(), 2, "one first read and its repeat");
    assert!(queue[1].available, "a repeat after 0 days is open today");
    let dimension_ids: Vec<String> = store
        .reading_item(rater, queue[0].assignment)
        .unwrap()
        .rubric
        .dimensions
        .iter()
        .map(|d| d.id.clone())
        .collect();
    for (item, overall) in [(&queue[0], 2.0), (&queue[1], 5.0)] {
        let mut edit = RatingEdit::empty();
        edit.overall = Some(overall);
        edit.dimensions = dimension_ids.iter().map(|d| (d.clone(), overall)).collect();
        edit.correctness = Some(cases::rating::Correctness::Correct);
        edit.confidence = Some(3);
        store.save_rating(rater, item.assignment, &edit).unwrap();
        store.submit_rating(rater, item.assignment).unwrap();
    }
    // A span after a non-BMP character: the export's quote counts UTF-16 units as the UI does.
    let response: i64 = store
        .read()
        .query_row(
            "SELECT response FROM assignments WHERE id = ?1",
            [queue[0].assignment],
            |r| r.get(0),
        )
        .unwrap();
    Connection::open(dir.path().join("db.sqlite"))
        .unwrap()
        .execute(
            "UPDATE responses SET rationale = '🧠 edema here' WHERE id = ?1",
            [response],
        )
        .unwrap();
    store.reopen_rating(rater, queue[0].assignment).unwrap();
    let label = store
        .add_error_label(rater, queue[0].assignment, &text_label("K1", [3, 8], ""))
        .unwrap();
    store.submit_rating(rater, queue[0].assignment).unwrap();

    let data = cases::analysis::study_data(&store, DEMO_STUDY_ID, None).unwrap();
    let ada: Vec<f64> = data
        .input
        .table
        .scores
        .iter()
        .filter(|s| s.rater == "Dr Ada" && s.dimension == "overall")
        .map(|s| s.score)
        .collect();
    assert_eq!(ada, [2.0], "only the first read counts");
    let pairs = cases::analysis::repeat_pairs(&store, DEMO_STUDY_ID).unwrap();
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (
            pairs[0].rater.as_str(),
            pairs[0].first_overall,
            pairs[0].repeat_overall
        ),
        ("Dr Ada", Some(2.0), Some(5.0))
    );

    use cases::export::{export, Format, What};
    let ratings = export(&store, What::Ratings, Format::Jsonl).unwrap();
    let rows: Vec<serde_json::Value> = ratings
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    let read_nos: Vec<(i64, f64)> = rows
        .iter()
        .map(|r| {
            (
                r["read_no"].as_i64().unwrap(),
                r["overall"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(read_nos, [(1, 2.0), (2, 5.0)]);
    assert!(rows.iter().all(|r| r["rating_id"].as_i64().is_some()
        && r["model"].as_str().is_some()
        && r["submitted_at"].as_str().is_some()));
    let errors = export(&store, What::Errors, Format::Jsonl).unwrap();
    let error: serde_json::Value = serde_json::from_str(errors.lines().next().unwrap()).unwrap();
    assert_eq!(error["label_id"].as_i64(), Some(label.label_id));
    assert_eq!(error["rating_id"], rows[0]["rating_id"]);
    assert_eq!(
        (error["read_no"].as_i64(), error["quote"].as_str()),
        (Some(1), Some("edema"))
    );
    let csv = export(&store, What::Ratings, Format::Csv).unwrap();
    assert!(csv.lines().next().unwrap().starts_with(
        "study_id,case_id,task_id,model,sample,rating_id,read_no,rater,rater_role,overall"
    ));
}

/// Every object key path of `value` (`a.b`, arrays as `a[]`), not descending into `skip` paths,
/// whose keys are data (EHR field names, rubric dimension ids).
fn key_paths(value: &serde_json::Value, path: &str, skip: &[&str], out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                out.insert(child_path.clone());
                if !skip.contains(&child_path.as_str()) {
                    key_paths(child, &child_path, skip, out);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                key_paths(item, &format!("{path}[]"), skip, out);
            }
        }
        _ => {}
    }
}

/// The allow-list: a field added to the reading payload must be added here, deliberately (and to
/// `ui/src/ratingTypes.ts`).
#[test]
fn the_reading_payload_holds_exactly_the_allowed_fields() {
    let (_dir, mut store) = demo_store();
    let (rater, item) = one_item(&mut store);
    let series = store.reading_item(rater, item).unwrap().series[0]
        .series_id
        .clone();
    let mut edit = RatingEdit::empty();
    edit.overall = Some(3.0);
    edit.dimensions.insert("diagnostic_accuracy".into(), 3.0);
    store.save_rating(rater, item, &edit).unwrap();
    store
        .add_error_label(rater, item, &text_label("R1", [0, 4], "span"))
        .unwrap();
    let mut missed = text_label("P1", [0, 4], "mark");
    missed.span = None;
    missed.mark = Some(cases::marks::Mark {
        series_id: series,
        kind: cases::marks::MarkKind::Point,
        plane: cases::marks::Plane::Axial,
        points_lps_mm: vec![[1.0, 2.0, 3.0]],
    });
    store.add_error_label(rater, item, &missed).unwrap();

    let payload = serde_json::to_value(store.reading_item(rater, item).unwrap()).unwrap();
    let mut paths = BTreeSet::new();
    key_paths(&payload, "", &["case.ehr", "rating.dimensions"], &mut paths);
    let expected: BTreeSet<String> = [
        "assignment",
        "position",
        "total",
        "case",
        "case.case_code",
        "case.age",
        "case.sex",
        "case.modality",
        "case.ehr",
        "case.clinical_note",
        "task",
        "task.prompt",
        "task.family",
        "task.level",
        "task.key_images",
        "task.key_images[].series",
        "task.key_images[].slice",
        "series",
        "series[].key",
        "series[].series_id",
        "series[].label",
        "series[].kind",
        "series[].n_images",
        "response",
        "response.answer",
        "response.rationale",
        "response.turns",
        "rubric",
        "rubric.overall",
        "rubric.overall.label",
        "rubric.overall.min",
        "rubric.overall.max",
        "rubric.overall.step",
        "rubric.overall.levels",
        "rubric.overall.levels[].value",
        "rubric.overall.levels[].descriptor",
        "rubric.dimensions",
        "rubric.dimensions[].id",
        "rubric.dimensions[].label",
        "rubric.dimensions[].min",
        "rubric.dimensions[].max",
        "rubric.dimensions[].step",
        "rubric.dimensions[].levels",
        "rubric.dimensions[].levels[].value",
        "rubric.dimensions[].levels[].descriptor",
        "taxonomy",
        "taxonomy[].code",
        "taxonomy[].name",
        "taxonomy[].definition",
        "taxonomy[].anchor",
        "rating",
        "rating.status",
        "rating.overall",
        "rating.dimensions",
        "rating.not_applicable",
        "rating.correctness",
        "rating.confidence",
        "rating.comment",
        "rating.seconds_on_task",
        "rating.updated_at",
        "rating.submitted_at",
        "rating.labels",
        "rating.labels[].id",
        "rating.labels[].category",
        "rating.labels[].severity",
        "rating.labels[].span",
        "rating.labels[].text",
        "rating.labels[].turn",
        "rating.labels[].mark",
        "rating.labels[].mark.series_id",
        "rating.labels[].mark.kind",
        "rating.labels[].mark.plane",
        "rating.labels[].mark.points_lps_mm",
        "rating.labels[].comment",
        // When this rater saw the case's ground truth (their own reveal, after submitting): a
        // time, nothing of the truth itself; the screen shows the rating as locked.
        "ground_truth_seen_at",
        // Why a submitted rating may not be reopened (that reveal, or the team lead's lock): the
        // rater's own state, nothing of the truth.
        "reopen_refused",
        // The draft's scores the current rubric no longer admits, in the rules' words: the
        // rater's own scores.
        "outdated_scores",
    ]
    .map(String::from)
    .into_iter()
    .collect();
    assert_eq!(
        paths.difference(&expected).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "fields not on the allow-list"
    );
    assert_eq!(
        expected.difference(&paths).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "allowed fields missing"
    );
}

/// Dr Ada, a neurologist who reads blinded, and Dr Cora, a curator who does not.
fn reader_and_curator(store: &mut Store) -> (i64, i64) {
    let reader = store
        .create_rater("Dr Ada", RaterRole::Neurologist, Some(8))
        .unwrap()
        .id;
    let curator = store
        .create_rater("Dr Cora", RaterRole::Curator, None)
        .unwrap()
        .id;
    (reader, curator)
}

#[test]
fn a_blinded_reader_sees_each_case_by_a_stable_code_without_its_id_or_disease_group() {
    let (_dir, mut store) = demo_store();
    let (reader, curator) = reader_and_curator(&mut store);
    let stored = store.cases(DEMO_STUDY_ID).unwrap();
    let listed = |store: &Store| {
        let session = Session::current(store).unwrap();
        catalog::cases(store, &session, DEMO_STUDY_ID).unwrap()
    };
    // A lead with nobody reading, and a curator, see the cases as stored.
    assert_eq!(listed(&store), stored);
    store.set_current_rater(curator).unwrap();
    assert_eq!(listed(&store), stored);

    store.set_current_rater(reader).unwrap();
    let blinded = listed(&store);
    assert_eq!(blinded.len(), stored.len());
    assert_eq!(listed(&store), blinded, "the codes are stable");
    let codes: BTreeSet<&str> = blinded.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(codes.len(), stored.len(), "one code per case");
    assert!(blinded.iter().all(|c| c.disease_group.is_none()));
    // Neither a case id (the demo's `ms-01` names the diagnosis) nor a group's name reaches the
    // reader, in any field.
    let sent = serde_json::to_string(&blinded).unwrap();
    for case in &stored {
        assert!(
            !sent.contains(&case.id),
            "{} reached a blinded reader",
            case.id
        );
        let group = serde_json::to_string(&case.disease_group).unwrap();
        assert!(
            !sent.contains(group.trim_matches('"')),
            "{group} reached a blinded reader"
        );
    }
    let ordered: Vec<&str> = blinded.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ordered.is_sorted(),
        "listed by code, not in the ids' grouped order"
    );

    // The reader opens a case by its code, or by the id a blind task gave them; the view carries
    // the code either way.
    let session = Session::current(&store).unwrap();
    let first = &stored[0];
    let code = cases::case_codes::CaseCodes::new(store_secret(&store)).code(&first.id);
    assert!(codes.contains(code.as_str()));
    for name in [code.as_str(), first.id.as_str()] {
        let view = catalog::case(&store, &session, DEMO_STUDY_ID, name).unwrap();
        assert_eq!(view.summary.id, code);
        assert_eq!(view.summary.disease_group, None);
        assert_eq!(view.summary.n_tasks, first.n_tasks);
    }
    assert!(matches!(
        catalog::case(&store, &session, DEMO_STUDY_ID, "case-0000000000"),
        Err(Error::NotFound { .. })
    ));
}

/// The demo study's secret, read as the schema stores it.
fn store_secret(store: &Store) -> Vec<u8> {
    store
        .read()
        .query_row(
            "SELECT salt FROM study_secrets JOIN studies ON studies.id = study_secrets.study
             WHERE studies.study_id = ?1",
            [DEMO_STUDY_ID],
            |r| r.get(0),
        )
        .unwrap()
}

/// A lead's session for `view` at this workstation, as every unblinding command opens it.
fn unblinded(store: &Store, view: &str) -> Result<LeadSession, Error> {
    Session::current(store)?.unblinded(view)
}

fn study_lead(store: &Store) -> Result<LeadSession, Error> {
    Session::current(store)?.study_lead(Action::MergeResults)
}

#[test]
fn the_study_leads_actions_are_refused_while_a_rater_reads_blinded() {
    let (_dir, mut store) = demo_store();
    let (reader, curator) = reader_and_curator(&mut store);
    study_lead(&store).unwrap();
    store.set_current_rater(reader).unwrap();
    match study_lead(&store) {
        Err(Error::Rating(RatingError::Refused(message))) => assert!(
            message.starts_with("Merging a results package is the study lead's")
                && message.contains("Dr Ada is reading here as a neurologist"),
            "{message}"
        ),
        other => panic!("a blinded reader must be refused: {other:?}"),
    }
    store.set_current_rater(curator).unwrap();
    study_lead(&store).unwrap();
}

#[test]
fn a_blinded_reader_cannot_open_unblinding_views_until_they_leave_reading() {
    let (_dir, mut store) = demo_store();
    let (reader, curator) = reader_and_curator(&mut store);
    // A lead with nobody reading may open everything.
    unblinded(&store, "The calibration report").unwrap();

    store.set_current_rater(reader).unwrap();
    match unblinded(&store, "The calibration report") {
        Err(Error::Rating(RatingError::Refused(message))) => {
            assert!(
                message.contains("Dr Ada reads blinded (neurologist)"),
                "{message}"
            )
        }
        other => panic!("a blinded reader must be refused: {other:?}"),
    }
    store.leave_reading().unwrap();
    assert_eq!(store.current_rater().unwrap(), None);
    unblinded(&store, "The calibration report").unwrap();
    let left: String = store
        .read()
        .query_row(
            "SELECT actor FROM audit_log WHERE action = 'leave reading'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, "Dr Ada");

    // Curators know the ground truth: they get no blinded queue and are no plan's reader.
    store.set_current_rater(curator).unwrap();
    unblinded(&store, "Curation").unwrap();
    assert_eq!(store.ensure_demo_queue(curator).unwrap(), None);
    match store.create_assignment_plan(
        curator,
        &spec("with a curator", 3, vec![reader, curator], 0.5, 0.0),
    ) {
        Err(Error::Rating(RatingError::Invalid { field, message })) => {
            assert_eq!(field, "raters");
            assert!(message.contains("Dr Cora is a curator"), "{message}");
        }
        other => panic!("a curator cannot be assigned blinded reading: {other:?}"),
    }
}

#[test]
fn a_database_without_the_demo_study_deals_no_demo_queue() {
    // A study lead's own database: a new reader waits for the lead's plan instead of failing.
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("study.sqlite")).unwrap();
    let reader = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    assert_eq!(store.ensure_demo_queue(reader).unwrap(), None);
}

/// Who the rating of `assignment` is stored under, and its comment.
fn stored_comment(store: &Store, assignment: i64) -> Option<(String, String)> {
    store
        .read()
        .query_row(
            "SELECT ra.name, g.comment FROM ratings g
             JOIN assignments a ON a.response = g.response AND a.rater = g.rater
                 AND a.read_no = g.read_no
             JOIN raters ra ON ra.id = g.rater WHERE a.id = ?1",
            [assignment],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok()
}

fn commented(comment: &str) -> RatingEdit {
    RatingEdit {
        comment: comment.into(),
        ..RatingEdit::empty()
    }
}

fn reader_changed(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Rating(RatingError::ReaderChanged(message))) => message,
        other => panic!("expected ReaderChanged, got {other:?}"),
    }
}

#[test]
fn an_edit_is_written_as_the_sessions_reader_and_never_as_another() {
    let (_dir, mut store) = demo_store();
    let (ada, ada_item) = one_item(&mut store);
    let bo = store
        .create_rater("Dr Bo", RaterRole::Neurologist, Some(7))
        .unwrap()
        .id;
    store.ensure_demo_queue(bo).unwrap().expect("Bo's queue");
    let bo_item = store.reading_queue(bo, DEMO_STUDY_ID).unwrap()[0].assignment;

    // Ada reads: her edit is hers.
    store.set_current_rater(ada).unwrap();
    let as_ada = Session::current(&store)
        .unwrap()
        .reader_as(&store, ada)
        .unwrap();
    reading::save_rating(&mut store, &as_ada, ada_item, &commented("Ada's")).unwrap();
    assert_eq!(
        stored_comment(&store, ada_item),
        Some(("Dr Ada".into(), "Ada's".into()))
    );
    // She cannot write as Bo, whatever the front end claims...
    let message = reader_changed(Session::current(&store).unwrap().reader_as(&store, bo));
    assert!(
        message.contains("made as Dr Bo, and Dr Ada is the reader"),
        "{message}"
    );
    // ...nor, as herself, reach Bo's assignment: another rater's item is not found.
    let into_bo = reading::save_rating(&mut store, &as_ada, bo_item, &commented("Ada in Bo's"));
    assert!(
        matches!(into_bo, Err(Error::NotFound { .. })),
        "{into_bo:?}"
    );
    assert_eq!(stored_comment(&store, bo_item), None);

    // The study lead (nobody reading) writes no reader's rating, and has no reader session.
    store.leave_reading().unwrap();
    let message = reader_changed(Session::current(&store).unwrap().reader_as(&store, ada));
    assert!(message.contains("nobody is reading here now"), "{message}");
    assert!(Session::current(&store).unwrap().reader().is_err());
    // A curator is a named rater, yet only ever themselves: Ada's item is not theirs.
    let cora = store
        .create_rater("Dr Cora", RaterRole::Curator, None)
        .unwrap()
        .id;
    store.set_current_rater(cora).unwrap();
    reader_changed(Session::current(&store).unwrap().reader_as(&store, ada));
    let as_cora = Session::current(&store)
        .unwrap()
        .reader_as(&store, cora)
        .unwrap();
    let into_ada = reading::submit_rating(&mut store, &as_cora, ada_item);
    assert!(
        matches!(into_ada, Err(Error::NotFound { .. })),
        "{into_ada:?}"
    );
    assert_eq!(
        stored_comment(&store, ada_item),
        Some(("Dr Ada".into(), "Ada's".into())),
        "nothing the others tried reached Ada's rating"
    );
}

#[test]
fn an_edit_queued_before_the_reader_changed_is_refused_unwritten_then_written_as_its_reader() {
    let (_dir, mut store) = demo_store();
    let (ada, item) = one_item(&mut store);
    let bo = store
        .create_rater("Dr Bo", RaterRole::Neurologist, Some(7))
        .unwrap()
        .id;
    store.set_current_rater(ada).unwrap();
    let edit_as = |store: &mut Store, made_as: i64, comment: &str| {
        let reader = Session::current(store)?.reader_as(store, made_as)?;
        reading::save_rating(store, &reader, item, &commented(comment))
    };
    edit_as(&mut store, ada, "first").unwrap();
    let audited = |store: &Store| -> i64 {
        store
            .read()
            .query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0))
            .unwrap()
    };

    // Bo takes the workstation while Ada's next edit is still queued in the window.
    store.set_current_rater(bo).unwrap();
    let before = audited(&store);
    let message = reader_changed(edit_as(&mut store, ada, "queued"));
    assert_eq!(
        message,
        "this edit was made as Dr Ada, and Dr Bo is the reader here now: it was not saved. \
         Choose Dr Ada again (Switch reader) to save it"
    );
    assert_eq!(audited(&store), before, "a refused edit writes nothing");
    assert_eq!(
        stored_comment(&store, item),
        Some(("Dr Ada".into(), "first".into()))
    );
    // Leaving reading mode is no different: still not Ada's session.
    store.leave_reading().unwrap();
    reader_changed(edit_as(&mut store, ada, "queued"));

    // Ada is chosen again: the kept edit is written, as hers.
    store.set_current_rater(ada).unwrap();
    edit_as(&mut store, ada, "queued").unwrap();
    assert_eq!(
        stored_comment(&store, item),
        Some(("Dr Ada".into(), "queued".into()))
    );
}

/// Labels in the answer, the rationale and a turn of a consultation: each is checked against its
/// own text, stored with it, shown back in it, and exported with `text`, `turn` and a quote cut
/// from that text; a label made before the migration reads as a rationale label.
#[test]
fn labels_in_each_text_of_a_consultation_are_checked_stored_and_exported_with_their_text() {
    let (_dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    store
        .create_assignment_plan(rater, &spec("all", 3, vec![rater], 0.0, 0.0))
        .unwrap();
    let (assignment, item) = store
        .reading_queue(rater, DEMO_STUDY_ID)
        .unwrap()
        .iter()
        .find_map(|q| {
            let item = store.reading_item(rater, q.assignment).ok()?;
            (item.response.turns.is_some() && item.response.rationale.is_some())
                .then_some((q.assignment, item))
        })
        .expect("a consultation with a rationale in the demo");
    let turns = item.response.turns.clone().unwrap();
    let turn = turns.iter().rposition(|t| t.role == "assistant").unwrap() as u32;
    let turn_text = turns[turn as usize].content.clone();
    let units = |text: &str| text.encode_utf16().count() as u32;
    let in_text = |category: &str, text: SpanText, turn: Option<u32>, span: [u32; 2]| LabelEdit {
        text,
        turn,
        ..text_label(category, span, "")
    };

    // Each text's own length bounds a span in it.
    let refused = |label: LabelEdit, store: &mut Store| match store
        .add_error_label(rater, assignment, &label)
    {
        Err(Error::Rating(RatingError::Invalid { field, .. })) => field,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let answer_units = units(&item.response.answer);
    assert_eq!(
        refused(
            in_text("P3", SpanText::Answer, None, [0, answer_units + 1]),
            &mut store
        ),
        "span"
    );
    assert_eq!(
        refused(
            in_text("R4", SpanText::Turn, Some(turns.len() as u32), [0, 1]),
            &mut store
        ),
        "turn"
    );
    assert_eq!(
        refused(in_text("R4", SpanText::Turn, None, [0, 1]), &mut store),
        "turn"
    );
    assert_eq!(
        refused(
            in_text("R4", SpanText::Turn, Some(turn), [0, units(&turn_text) + 1]),
            &mut store
        ),
        "span"
    );

    let labels = [
        in_text("R4", SpanText::Turn, Some(turn), [0, units(&turn_text)]),
        in_text("P3", SpanText::Answer, None, [0, answer_units]),
        in_text("R1", SpanText::Rationale, None, [0, 3]),
    ];
    for label in &labels {
        store.add_error_label(rater, assignment, label).unwrap();
    }
    let shown = store
        .reading_item(rater, assignment)
        .unwrap()
        .rating
        .unwrap()
        .labels;
    assert_eq!(
        shown
            .iter()
            .map(|l| (l.category.as_str(), l.text, l.turn, l.span))
            .collect::<Vec<_>>(),
        labels
            .iter()
            .map(|l| (l.category.as_str(), l.text, l.turn, l.span))
            .collect::<Vec<_>>()
    );

    use cases::export::{export, Format, What};
    let errors: Vec<serde_json::Value> = export(&store, What::Errors, Format::Jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rationale = item.response.rationale.as_deref().unwrap();
    let utf16 = |text: &str, [start, end]: [u32; 2]| {
        String::from_utf16(&text.encode_utf16().collect::<Vec<_>>()[start as usize..end as usize])
            .unwrap()
    };
    assert_eq!(
        errors
            .iter()
            .map(|e| (
                e["category"].clone(),
                e["text"].clone(),
                e["turn"].clone(),
                e["quote"].clone()
            ))
            .collect::<Vec<_>>(),
        vec![
            (
                "R4".into(),
                "turn".into(),
                turn.into(),
                turn_text.clone().into()
            ),
            (
                "P3".into(),
                "answer".into(),
                serde_json::Value::Null,
                item.response.answer.clone().into()
            ),
            (
                "R1".into(),
                "rationale".into(),
                serde_json::Value::Null,
                utf16(rationale, [0, 3]).into()
            ),
        ]
    );
    let csv = export(&store, What::Errors, Format::Csv).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",quote,mark,comment,text,turn"),
        "the new columns come last: {}",
        csv.lines().next().unwrap()
    );
}

#[test]
fn a_rating_has_the_dimensions_of_its_tasks_family_and_keeps_not_applicable_apart() {
    let (_dir, mut store) = demo_store();
    let dimensions = family_limited_rubric(&store);
    let (rater, _) = one_item(&mut store);
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    let item_of = |store: &mut Store, lesions: bool| {
        queue
            .iter()
            .map(|q| q.assignment)
            .find(|a| {
                let family = store.reading_item(rater, *a).unwrap().task.family;
                (family == cases::model::TaskFamily::LesionIdentification) == lesions
            })
            .expect("the demo queue has tasks of both kinds")
    };
    let (other, lesions) = (item_of(&mut store, false), item_of(&mut store, true));
    let invalid_field = |e: Error| match e {
        Error::Rating(RatingError::Invalid { field, .. }) => field,
        other => panic!("expected Invalid, got {other}"),
    };

    // A task of another family: the lesion-only dimension is neither asked for nor accepted.
    let mut edit = RatingEdit::empty();
    edit.dimensions.insert(dimensions[0].clone(), 3.0);
    assert_eq!(
        invalid_field(store.save_rating(rater, other, &edit).unwrap_err()),
        format!("dimensions.{}", dimensions[0])
    );
    // Not applicable only where the rubric allows it.
    let mut edit = RatingEdit::empty();
    edit.not_applicable.insert(dimensions[2].clone());
    assert_eq!(
        invalid_field(store.save_rating(rater, other, &edit).unwrap_err()),
        format!("dimensions.{}", dimensions[2])
    );
    let expected_missing: Vec<String> = ["overall".to_owned()]
        .into_iter()
        .chain(dimensions[1..].iter().map(|d| format!("dimensions.{d}")))
        .chain(["correctness".to_owned(), "confidence".to_owned()])
        .collect();
    match store.submit_rating(rater, other).unwrap_err() {
        Error::Rating(RatingError::Incomplete { missing }) => assert_eq!(missing, expected_missing),
        e => panic!("expected Incomplete, got {e}"),
    }

    let mut edit = RatingEdit::empty();
    edit.overall = Some(3.0);
    edit.not_applicable.insert(dimensions[1].clone());
    for id in &dimensions[2..] {
        edit.dimensions.insert(id.clone(), 4.0);
    }
    edit.correctness = Some(cases::rating::Correctness::Correct);
    edit.confidence = Some(3);
    store.save_rating(rater, other, &edit).unwrap();
    store.submit_rating(rater, other).unwrap();
    let stored = store.reading_item(rater, other).unwrap().rating.unwrap();
    assert_eq!(
        stored.not_applicable,
        BTreeSet::from([dimensions[1].clone()])
    );
    assert!(!stored.dimensions.contains_key(&dimensions[1]));
    assert_eq!(stored.scores(), edit);
    let column: String = Connection::open(store.path())
        .unwrap()
        .query_row(
            "SELECT not_applicable_json FROM ratings WHERE status = 'submitted'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(column, format!("[\"{}\"]", dimensions[1]));

    // A lesion-identification task needs the lesion-only dimension as well.
    store.save_rating(rater, lesions, &edit).unwrap();
    match store.submit_rating(rater, lesions).unwrap_err() {
        Error::Rating(RatingError::Incomplete { missing }) => {
            assert_eq!(missing, [format!("dimensions.{}", dimensions[0])])
        }
        e => panic!("expected Incomplete, got {e}"),
    }
    let check = cases::rating::ratings_against_audit(&store).unwrap();
    assert!(check.unaccounted.is_empty(), "{:?}", check.unaccounted);
}
