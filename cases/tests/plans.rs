//! Assignment plans topped up while a study runs, and stratified plans, on a real SQLite file
//! holding the real demo study. Expected counts are computed here from the stored rows, not
//! taken from the summaries the code returns.

#[path = "support/rating.rs"]
mod rating_support;

use cases::app::permissions::Action;
use cases::app::{plans, Session};
use cases::rating::{PlanSpec, RaterRole, StratifyBy, TopUpSpec, DEMO_STUDY_ID};
use cases::store::Store;
use cases::Error;
use rating_support::demo_store;
use std::collections::{BTreeMap, BTreeSet};

/// An assignment row: (id, rater, response, read_no, position, overlap, not_before).
type Row = (i64, i64, i64, i64, i64, bool, Option<String>);

fn rows(store: &Store, plan: &str) -> Vec<Row> {
    store
        .read()
        .prepare(
            "SELECT a.id, a.rater, a.response, a.read_no, a.position, a.overlap, a.not_before
             FROM assignments a JOIN assignment_plans p ON a.plan = p.id
             WHERE p.name = ?1 ORDER BY a.id",
        )
        .unwrap()
        .query_map([plan], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn all_responses(store: &Store) -> BTreeSet<i64> {
    store
        .read()
        .prepare("SELECT id FROM responses")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn readers(store: &mut Store, names: &[&str]) -> Vec<i64> {
    names
        .iter()
        .map(|name| {
            store
                .create_rater(name, RaterRole::Neuroradiologist, Some(10))
                .unwrap()
                .id
        })
        .collect()
}

fn spec(name: &str, raters: Vec<i64>, overlap: f64) -> PlanSpec {
    PlanSpec {
        study_id: DEMO_STUDY_ID.into(),
        name: name.into(),
        seed: 11,
        raters,
        overlap_share: overlap,
        responses_per_rater: None,
        repeat_share: 0.1,
        repeat_after_days: 14,
        stratify_by: Vec::new(),
    }
}

/// A new model's answers to every task, as a later import of its responses adds them.
fn add_model(store: &Store, model: &str) -> usize {
    store
        .read()
        .execute(
            "INSERT INTO responses (task, model, sample, answer, rationale, turns_json, extra_json)
             SELECT task, ?1, sample, answer, rationale, turns_json, extra_json FROM responses
             WHERE model = (SELECT min(model) FROM responses)",
            [model],
        )
        .unwrap()
}

fn top_up(name: &str, new_raters: Vec<i64>) -> TopUpSpec {
    TopUpSpec {
        study_id: DEMO_STUDY_ID.into(),
        plan: name.into(),
        new_raters,
    }
}

/// Runs the same plan, new model and top-up on a fresh demo store; returns every row.
fn create_then_top_up() -> (Vec<i64>, Vec<Row>, Vec<Row>, Store, tempfile::TempDir) {
    let (dir, mut store) = demo_store();
    let raters = readers(&mut store, &["Dr Ada", "Dr Bo", "Dr Cy"]);
    store
        .create_assignment_plan(raters[0], &spec("main", raters[..2].to_vec(), 0.2))
        .unwrap();
    let before = rows(&store, "main");
    assert!(add_model(&store, "zz-new-model") > 0);
    store
        .top_up_assignment_plan(raters[0], &top_up("main", vec![raters[2]]))
        .unwrap();
    let after = rows(&store, "main");
    (raters, before, after, store, dir)
}

#[test]
fn a_top_up_keeps_every_queue_and_deals_new_responses_and_raters() {
    let (raters, before, after, store, _dir) = create_then_top_up();

    // Existing assignments are untouched: same rows, same order.
    assert_eq!(&after[..before.len()], &before[..]);
    // What was added goes after each rater's last position.
    for &rater in &raters {
        let last = before
            .iter()
            .filter(|r| r.1 == rater)
            .map(|r| r.4)
            .max()
            .unwrap_or(0);
        let added: Vec<i64> = after[before.len()..]
            .iter()
            .filter(|r| r.1 == rater)
            .map(|r| r.4)
            .collect();
        assert!(!added.is_empty(), "rater {rater} received nothing");
        let expected: Vec<i64> = (last + 1..=last + added.len() as i64).collect();
        assert_eq!(added, expected, "rater {rater}: positions follow the queue");
    }
    // Every response of the study, new ones included, is now read by someone.
    let read: BTreeSet<i64> = after.iter().filter(|r| r.3 == 1).map(|r| r.2).collect();
    assert_eq!(read, all_responses(&store));
    // The overlap (old and new) is read by all three; every other response by exactly one.
    let mut first_readers: BTreeMap<i64, usize> = BTreeMap::new();
    for row in after.iter().filter(|r| r.3 == 1) {
        *first_readers.entry(row.2).or_default() += 1;
    }
    let overlap: BTreeSet<i64> = after.iter().filter(|r| r.5).map(|r| r.2).collect();
    for (response, n) in &first_readers {
        let expected = if overlap.contains(response) { 3 } else { 1 };
        assert_eq!(*n, expected, "response {response}");
    }
    // Dr Cy, joining, reads every overlap response.
    let cy: BTreeSet<i64> = after
        .iter()
        .filter(|r| r.1 == raters[2] && r.3 == 1)
        .map(|r| r.2)
        .collect();
    assert!(overlap.is_subset(&cy));

    // The same steps on another copy give the same rows: the top-up is seeded.
    let (_, _, again, _, _dir2) = create_then_top_up();
    assert_eq!(again, after);
}

#[test]
fn a_top_up_with_nothing_new_adds_nothing_and_the_plan_lists_its_counts() {
    let (raters, _, after, mut store, _dir) = create_then_top_up();
    let summary = store
        .top_up_assignment_plan(raters[1], &top_up("main", Vec::new()))
        .unwrap();
    assert_eq!(summary.n_new_responses, 0);
    assert!(summary
        .added
        .iter()
        .all(|a| a.first_reads == 0 && a.repeats == 0));
    assert_eq!(rows(&store, "main"), after);

    let listed = plans::list(&store, &Session::command_line(), DEMO_STUDY_ID).unwrap();
    assert_eq!(listed.len(), 1);
    let plan = &listed[0];
    assert_eq!(plan.top_ups, 2);
    assert_eq!(plan.n_unassigned, 0);
    assert_eq!(plan.n_responses as usize, all_responses(&store).len());
    let ids: Vec<i64> = plan.raters.iter().map(|r| r.rater_id).collect();
    assert_eq!(ids, raters, "raters by seat");
    for rater in &plan.raters {
        let count = |read_no: i64| {
            after
                .iter()
                .filter(|r| r.1 == rater.rater_id && r.3 == read_no)
                .count() as u32
        };
        assert_eq!(rater.first_reads, count(1));
        assert_eq!(rater.repeats, count(2));
    }

    // Seating a rater twice is refused, naming them.
    let twice = store
        .top_up_assignment_plan(raters[1], &top_up("main", vec![raters[2]]))
        .unwrap_err();
    assert!(twice.to_string().contains("Dr Cy already reads"), "{twice}");
}

#[test]
fn a_plan_stratified_by_model_and_family_balances_each_raters_reads_in_every_stratum() {
    let (_dir, mut store) = demo_store();
    let raters = readers(&mut store, &["Dr Ada", "Dr Bo", "Dr Cy"]);
    let mut stratified = spec("strata", raters.clone(), 0.1);
    stratified.stratify_by = vec![StratifyBy::Model, StratifyBy::TaskFamily];
    store
        .create_assignment_plan(raters[0], &stratified)
        .unwrap();

    let stratum: BTreeMap<i64, String> = store
        .read()
        .prepare(
            "SELECT r.id, r.model || '/' || t.family FROM responses r
             JOIN tasks t ON r.task = t.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let strata: BTreeSet<&String> = stratum.values().collect();
    assert!(strata.len() > 3, "the demo has several models and families");
    let assigned = rows(&store, "strata");
    for name in strata {
        let size = stratum.values().filter(|s| *s == name).count();
        let overlap: BTreeSet<i64> = assigned
            .iter()
            .filter(|r| r.5 && stratum[&r.2] == *name)
            .map(|r| r.2)
            .collect();
        assert_eq!(
            overlap.len(),
            (0.1 * size as f64).round() as usize,
            "{name}"
        );
        let dealt: Vec<usize> = raters
            .iter()
            .map(|&rater| {
                assigned
                    .iter()
                    .filter(|r| r.1 == rater && r.3 == 1 && !r.5 && stratum[&r.2] == *name)
                    .count()
            })
            .collect();
        let spread = dealt.iter().max().unwrap() - dealt.iter().min().unwrap();
        assert!(spread <= 1, "{name}: {dealt:?}");
    }

    let twice = PlanSpec {
        name: "twice".into(),
        stratify_by: vec![StratifyBy::Sample, StratifyBy::Sample],
        ..stratified
    };
    match store.create_assignment_plan(raters[0], &twice) {
        Err(Error::Rating(cases::rating::RatingError::Invalid { field, .. })) => {
            assert_eq!(field, "stratify_by")
        }
        other => panic!("a key listed twice is refused: {other:?}"),
    }
}

#[test]
fn a_rater_with_a_queue_joins_a_second_plan_with_only_responses_they_do_not_read() {
    let (_dir, mut store) = demo_store();
    let raters = readers(&mut store, &["Dr Ada", "Dr Bo"]);
    let mut capped = spec("first", vec![raters[0]], 0.0);
    capped.responses_per_rater = Some(10);
    store.create_assignment_plan(raters[0], &capped).unwrap();
    let first: BTreeSet<i64> = rows(&store, "first").iter().map(|r| r.2).collect();
    store
        .create_assignment_plan(raters[0], &spec("second", raters.clone(), 0.5))
        .unwrap();
    let ada_second: BTreeSet<i64> = rows(&store, "second")
        .iter()
        .filter(|r| r.1 == raters[0])
        .map(|r| r.2)
        .collect();
    assert!(!ada_second.is_empty());
    assert!(ada_second.is_disjoint(&first));
}

#[test]
fn plans_are_the_study_leads_and_recorded_under_who_acts() {
    let (_dir, mut store) = demo_store();
    let raters = readers(&mut store, &["Dr Ada", "Dr Bo"]);
    let curator = store
        .create_rater("Dr Cora", RaterRole::Curator, None)
        .unwrap()
        .id;

    // A blinded reader at the workstation cannot open the lead's session.
    store.set_current_rater(raters[0]).unwrap();
    assert!(Session::current(&store)
        .unwrap()
        .study_lead(Action::PlanAssignments)
        .is_err());

    // A curator acting records plans under themselves.
    store.set_current_rater(curator).unwrap();
    let lead = Session::current(&store)
        .unwrap()
        .study_lead(Action::PlanAssignments)
        .unwrap();
    let made = plans::create(&mut store, &lead, &spec("p", raters.clone(), 0.2)).unwrap();
    assert_eq!(
        maker_of(&store, made.plan_id),
        (Some("Dr Cora".to_owned()), "Dr Cora".to_owned())
    );

    // With nobody chosen, the study lead: no rater is named its author, however the raters are
    // listed (issue 41: a blinded clinician, listed first, was recorded as the lead's plan's
    // author), in the plan and in the audit log; its top-up likewise.
    store.leave_reading().unwrap();
    let lead = Session::current(&store)
        .unwrap()
        .study_lead(Action::PlanAssignments)
        .unwrap();
    let made = plans::create(&mut store, &lead, &spec("q", vec![raters[0]], 0.0)).unwrap();
    assert_eq!(
        maker_of(&store, made.plan_id),
        (None, "study lead".to_owned())
    );
    plans::top_up(
        &mut store,
        &lead,
        &TopUpSpec {
            study_id: DEMO_STUDY_ID.into(),
            plan: "q".into(),
            new_raters: vec![raters[1]],
        },
    )
    .unwrap();
    let top_up_actor: String = store
        .read()
        .query_row(
            "SELECT actor FROM audit_log WHERE action = 'top up assignment plan'
             ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(top_up_actor, "study lead");
}

/// Who a plan names as its maker (the rater, or none) and who its audit entry names.
fn maker_of(store: &Store, plan: i64) -> (Option<String>, String) {
    store
        .read()
        .query_row(
            "SELECT r.name, l.actor FROM assignment_plans p LEFT JOIN raters r ON p.created_by = r.id
             JOIN audit_log l ON l.entity = 'assignment_plan:' || p.id
                             AND l.action = 'create assignment plan'
             WHERE p.id = ?1",
            [plan],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
}

/// The demo queue the app deals a new reader is the study lead's plan, not the reader's.
#[test]
fn the_demo_queue_is_dealt_as_the_study_leads_plan() {
    let (_dir, mut store) = demo_store();
    let reader = readers(&mut store, &["Dr Dee"])[0];
    let plan = store
        .ensure_demo_queue(reader)
        .unwrap()
        .expect("a demo queue");
    assert_eq!(
        maker_of(&store, plan.plan_id),
        (None, "study lead".to_owned())
    );
}
