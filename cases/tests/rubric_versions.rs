//! Rubric versions on a real SQLite file holding the real demo study: the lead's edit is in place
//! before the first rating and a new version after; each rating records the version it was saved
//! under; re-importing a bundle whose rubric changed follows the same rule; a blinded reader
//! cannot edit the rubric.

#[path = "support/rating.rs"]
mod rating_support;

use cases::app::permissions::Action;
use cases::app::rubric::{self, RubricSave};
use cases::app::{LeadSession, Session};
use cases::import::import_bundle;
use cases::model::Rubric;
use cases::progress::NoProgress;
use cases::rating::{RaterRole, RatingEdit, RatingError, DEMO_STUDY_ID};
use cases::rubric::{NewVersionReason, SavedRubric};
use cases::store::audit::{self, Verdict};
use cases::store::Store;
use cases::Error;
use rating_support::demo_store;

fn lead(store: &Store) -> LeadSession {
    Session::current(store)
        .unwrap()
        .study_lead(Action::EditRubric)
        .unwrap()
}

fn described(rubric: &Rubric, description: &str) -> Rubric {
    let mut edited = rubric.clone();
    edited.dimensions[0].description = Some(description.to_owned());
    edited
}

/// A rater with the demo queue, and the key of their first item.
fn rater_with_item(store: &mut Store, name: &str) -> (i64, i64) {
    let rater = store
        .create_rater(name, RaterRole::Neuroradiologist, Some(10))
        .unwrap()
        .id;
    store.ensure_demo_queue(rater).unwrap().expect("a queue");
    let item = store.reading_queue(rater, DEMO_STUDY_ID).unwrap()[0].assignment;
    (rater, item)
}

fn commented(comment: &str) -> RatingEdit {
    RatingEdit {
        overall: None,
        dimensions: Default::default(),
        not_applicable: Default::default(),
        correctness: None,
        confidence: None,
        comment: comment.into(),
        seconds_on_task: 0.0,
    }
}

/// Every rating's comment and recorded rubric version, read straight from the file.
fn stored_versions(store: &Store) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mut stmt = conn
        .prepare("SELECT comment, rubric_version FROM ratings ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows
}

/// The versions stored for the demo study: (version, rubric).
fn versions(store: &Store) -> Vec<(i64, Rubric)> {
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT v.version, v.rubric_json FROM rubric_versions v
             JOIN studies s ON v.study = s.id WHERE s.study_id = ?1 ORDER BY v.version",
        )
        .unwrap();
    let rows = stmt
        .query_map([DEMO_STUDY_ID], |r| Ok((r.get(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|row| {
            let (version, json) = row.unwrap();
            (version, serde_json::from_str(&json).unwrap())
        })
        .collect();
    rows
}

fn saved(outcome: RubricSave) -> SavedRubric {
    match outcome {
        RubricSave::Saved(saved) => saved,
        other => panic!("expected a saved rubric, got {other:?}"),
    }
}

#[test]
fn a_version_copied_for_the_team_server_is_never_edited_in_place() {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    let first = rubric::current(&store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert_eq!(first.published_at, None);

    // Reading the study for the server freezes the version it carries, once, audited.
    let study =
        cases::app::team::study_for_server(&mut store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert_eq!((study.rubric_version, study.rubric_versions.len()), (1, 1));
    let published = rubric::current(&store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert!(published.published_at.is_some(), "{published:?}");
    assert_eq!(published.ratings, 0);
    cases::app::team::study_for_server(&mut store, &lead_session, DEMO_STUDY_ID).unwrap();
    let publications: i64 = rusqlite::Connection::open(store.path())
        .unwrap()
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action = 'publish rubric'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(publications, 1);

    // No rating here, but the server has version 1: the change is version 2, saying why.
    let edited = described(&first.rubric, "a wording raters on the server never saw");
    let outcome = rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &edited).unwrap();
    assert_eq!(
        saved(outcome),
        SavedRubric {
            version: 2,
            new_version: true,
            ratings_under_previous: 0,
            reason: Some(NewVersionReason::Published),
        }
    );
    assert_eq!(versions(&store), [(1, first.rubric), (2, edited.clone())]);
    // Version 2 is not on the server yet: edited in place until the next copy.
    let again = described(&edited, "reworded before the next import");
    let outcome = rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &again).unwrap();
    assert_eq!(saved(outcome).reason, None);
    let study =
        cases::app::team::study_for_server(&mut store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert_eq!(
        (study.rubric_version, study.rubric.clone()),
        (2, again.clone())
    );
    let numbers: Vec<u32> = study.rubric_versions.iter().map(|v| v.version).collect();
    assert_eq!(numbers, [1, 2]);
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    assert!(matches!(
        audit::verify(&conn).unwrap(),
        Verdict::Intact { .. }
    ));
}

#[test]
fn an_edit_before_any_rating_is_in_place_and_after_one_is_a_new_version() {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    let before = rubric::current(&store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert_eq!((before.version, before.ratings), (1, 0));

    // Nobody has rated: the edit changes version 1 itself.
    let first = described(&before.rubric, "Is the finding named and placed right?");
    let outcome = rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &first).unwrap();
    assert_eq!(
        saved(outcome),
        SavedRubric {
            version: 1,
            new_version: false,
            ratings_under_previous: 0,
            reason: None,
        }
    );
    assert_eq!(versions(&store), [(1, first.clone())]);
    // Saving it again writes nothing.
    assert_eq!(
        rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &first).unwrap(),
        RubricSave::Unchanged { version: 1 }
    );

    // A rating under version 1 (a draft counts: it holds scores against those dimensions).
    let (rater, item) = rater_with_item(&mut store, "Dr Vera");
    store
        .save_rating(rater, item, &commented("under v1"))
        .unwrap();
    let now = rubric::current(&store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert_eq!((now.version, now.ratings), (1, 1));
    assert_eq!(now.rubric, first);

    // Now a change is version 2; version 1 and its rating stay as they were.
    let second = described(&first, "Is every lesion named, with its site and side?");
    let outcome = rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &second).unwrap();
    assert_eq!(
        saved(outcome),
        SavedRubric {
            version: 2,
            new_version: true,
            ratings_under_previous: 1,
            reason: Some(NewVersionReason::Ratings),
        }
    );
    assert_eq!(versions(&store), [(1, first), (2, second.clone())]);
    assert_eq!(stored_versions(&store), [("under v1".to_owned(), 1)]);
    let now = rubric::current(&store, &lead_session, DEMO_STUDY_ID).unwrap();
    assert_eq!((now.version, now.ratings, now.rubric), (2, 0, second));

    // The rating saved again is saved under version 2.
    store
        .save_rating(rater, item, &commented("under v2"))
        .unwrap();
    assert_eq!(stored_versions(&store), [("under v2".to_owned(), 2)]);

    // Each change is in the audit log, which still verifies.
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let actions: Vec<String> = conn
        .prepare(
            "SELECT action FROM audit_log WHERE entity = ?1 AND action LIKE '%rubric%' ORDER BY id",
        )
        .unwrap()
        .query_map([format!("study:{DEMO_STUDY_ID}")], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(actions, ["edit rubric", "new rubric version"]);
    assert_eq!(
        audit::verify(&conn).unwrap(),
        Verdict::Intact {
            entries: audit_entries(&conn)
        }
    );
}

fn audit_entries(conn: &rusqlite::Connection) -> u64 {
    conn.query_row("SELECT count(*) FROM audit_log", [], |r| r.get::<_, i64>(0))
        .unwrap() as u64
}

#[test]
fn an_invalid_rubric_is_refused_at_its_fields_and_nothing_is_written() {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    let before = rubric::current(&store, &lead_session, DEMO_STUDY_ID).unwrap();
    let mut edited = before.rubric.clone();
    edited.dimensions[1].id = edited.dimensions[0].id.clone();
    edited.dimensions[0].label = String::new();
    edited.overall.max = edited.overall.min;
    let RubricSave::Invalid { problems } =
        rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &edited).unwrap()
    else {
        panic!("an invalid rubric must be refused");
    };
    let mut fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "rubric.dimensions[0].label",
            "rubric.dimensions[1].id",
            "rubric.overall"
        ]
    );
    assert_eq!(versions(&store), [(1, before.rubric)]);
}

#[test]
fn a_blinded_reader_cannot_open_the_rubric_editor() {
    let (_dir, mut store) = demo_store();
    let (reader, _) = rater_with_item(&mut store, "Dr Vera");
    store.set_current_rater(reader).unwrap();
    match Session::current(&store)
        .unwrap()
        .study_lead(Action::EditRubric)
    {
        Err(Error::Rating(RatingError::Refused(message))) => assert!(
            message.starts_with("Editing the rubric is the study lead's"),
            "{message}"
        ),
        other => panic!("a blinded reader must be refused: {other:?}"),
    }
}

#[test]
fn reimporting_a_bundle_with_a_changed_rubric_follows_the_same_rule() {
    let (_dir, mut store) = demo_store();
    let bundle_dir: String = store
        .read()
        .query_row("SELECT bundle_dir FROM studies", [], |r| r.get(0))
        .unwrap();
    let mut bundle = cases::bundle::load(std::path::Path::new(&bundle_dir), &NoProgress).unwrap();
    let original = bundle.study.rubric.clone();

    // The same bundle again: no version, nothing changed.
    let summary = import_bundle(&mut store, &bundle, &NoProgress).unwrap();
    assert_eq!(summary.rubric_change, None);

    // Changed before any rating: in place.
    bundle.study.rubric = described(&original, "first wording");
    let summary = import_bundle(&mut store, &bundle, &NoProgress).unwrap();
    assert_eq!(
        summary.rubric_change,
        Some(SavedRubric {
            version: 1,
            new_version: false,
            ratings_under_previous: 0,
            reason: None,
        })
    );

    // Changed after a rating: a new version, the rating keeps version 1.
    let (rater, item) = rater_with_item(&mut store, "Dr Vera");
    store
        .save_rating(rater, item, &commented("under v1"))
        .unwrap();
    bundle.study.rubric = described(&original, "second wording");
    let summary = import_bundle(&mut store, &bundle, &NoProgress).unwrap();
    assert_eq!(
        summary.rubric_change,
        Some(SavedRubric {
            version: 2,
            new_version: true,
            ratings_under_previous: 1,
            reason: Some(NewVersionReason::Ratings),
        })
    );
    let stored: Vec<i64> = versions(&store).into_iter().map(|(v, _)| v).collect();
    assert_eq!(stored, [1, 2]);
    assert_eq!(stored_versions(&store), [("under v1".to_owned(), 1)]);
    let actor: String = store
        .read()
        .query_row(
            "SELECT actor FROM audit_log WHERE action = 'new rubric version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(actor, "import");
}

/// A rating every rule accepts for submission: every dimension scored at its scale's minimum.
fn complete(rubric: &Rubric, comment: &str) -> RatingEdit {
    RatingEdit {
        overall: Some(rubric.overall.min),
        dimensions: rubric
            .dimensions
            .iter()
            .map(|d| (d.id.clone(), d.scale.min))
            .collect(),
        correctness: Some(cases::rating::Correctness::Correct),
        confidence: Some(3),
        ..commented(comment)
    }
}

#[test]
fn the_report_counts_ratings_per_version_and_reads_every_one_a_rewording_left_comparable() {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    let first = rubric::current(&store, &lead_session, DEMO_STUDY_ID)
        .unwrap()
        .rubric;
    let (ada, _) = rater_with_item(&mut store, "Dr Ada");
    let (bo, _) = rater_with_item(&mut store, "Dr Bo");
    let queue = |store: &Store, rater| -> Vec<i64> {
        store
            .reading_queue(rater, DEMO_STUDY_ID)
            .unwrap()
            .iter()
            .map(|item| item.assignment)
            .collect()
    };
    let (ada_items, bo_items) = (queue(&store, ada), queue(&store, bo));
    // Version 1: Ada submits three, Bo two; Bo leaves a third as a draft (not counted).
    for &item in &ada_items[..3] {
        store
            .save_rating(ada, item, &complete(&first, "v1"))
            .unwrap();
        store.submit_rating(ada, item).unwrap();
    }
    for &item in &bo_items[..2] {
        store
            .save_rating(bo, item, &complete(&first, "v1"))
            .unwrap();
        store.submit_rating(bo, item).unwrap();
    }
    store
        .save_rating(bo, bo_items[2], &commented("draft"))
        .unwrap();
    // Version 2 (a changed description, which leaves every score comparable): Ada submits one
    // more.
    let second = described(&first, "reworded");
    saved(rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &second).unwrap());
    store
        .save_rating(ada, ada_items[3], &complete(&second, "v2"))
        .unwrap();
    store.submit_rating(ada, ada_items[3]).unwrap();

    let data = cases::analysis::study_data(&store, DEMO_STUDY_ID, None).unwrap();
    let counts: Vec<(u32, usize, bool, usize)> = data
        .rubric_versions
        .iter()
        .map(|v| (v.version, v.ratings, v.current, v.left_out.len()))
        .collect();
    // By construction above: five submitted under version 1, one under version 2, nothing left
    // out of either.
    assert_eq!(counts, [(1, 5, false, 0), (2, 1, true, 0)]);
    // The analyses read all six: Ada's four overall scores and Bo's two.
    let mut overall: Vec<_> = data
        .input
        .table
        .scores
        .iter()
        .filter(|s| s.dimension == "overall" && !s.rater.starts_with("demo-grader"))
        .map(|s| s.rater.as_str())
        .collect();
    overall.sort_unstable();
    assert_eq!(
        overall,
        ["Dr Ada"; 4]
            .into_iter()
            .chain(["Dr Bo"; 2])
            .collect::<Vec<_>>()
    );
    assert!(data
        .coverage
        .iter()
        .all(|c| c.ratings() == 6 && c.rated == 6));
}

#[test]
fn a_draft_holding_a_score_the_new_version_dropped_says_so_and_is_submitted_only_without_it() {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    let first = rubric::current(&store, &lead_session, DEMO_STUDY_ID)
        .unwrap()
        .rubric;
    let (rater, item) = rater_with_item(&mut store, "Dr Wren");
    store
        .save_rating(rater, item, &complete(&first, "scored under v1"))
        .unwrap();
    assert!(store
        .reading_item(rater, item)
        .unwrap()
        .outdated_scores
        .is_empty());

    // Version 2 drops a dimension the draft scored.
    let mut second = first.clone();
    let dropped = second.dimensions.pop().unwrap().id;
    let outcome = rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &second).unwrap();
    assert_eq!(saved(outcome).version, 2);
    let opened = store.reading_item(rater, item).unwrap();
    assert_eq!(
        opened
            .outdated_scores
            .iter()
            .map(|o| o.field.clone())
            .collect::<Vec<_>>(),
        [format!("dimensions.{dropped}")]
    );
    assert!(
        opened.outdated_scores[0].message.contains(&dropped),
        "{:?}",
        opened.outdated_scores
    );

    // As it is, the draft cannot be submitted under version 2: the refusal names the dimension.
    let refused = store.submit_rating(rater, item).unwrap_err().to_string();
    assert!(
        refused.contains(&format!("dimensions.{dropped}")),
        "{refused}"
    );
    assert_eq!(stored_versions(&store), [("scored under v1".to_owned(), 1)]);

    // Without it (what the reading screen saves), it is saved and submitted under version 2.
    store
        .save_rating(rater, item, &complete(&second, "scored under v1"))
        .unwrap();
    assert!(store
        .reading_item(rater, item)
        .unwrap()
        .outdated_scores
        .is_empty());
    store.submit_rating(rater, item).unwrap();
    assert_eq!(stored_versions(&store), [("scored under v1".to_owned(), 2)]);

    // A submitted rating keeps the version it was submitted under: nothing is outdated in it.
    let mut third = second.clone();
    third.dimensions.pop();
    rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &third).unwrap();
    assert!(store
        .reading_item(rater, item)
        .unwrap()
        .outdated_scores
        .is_empty());
}

/// A rating as the team server's `GET …/ratings` gives it to the lead, of the demo study's first
/// response, rated `comment` by rater `rater-a`.
fn server_rating(
    store: &Store,
    comment: &str,
    version: i64,
    updated_at: &str,
    rubric_version: Option<u32>,
) -> cases::app::team::TeamStudyRating {
    let (case_id, task_id, model, sample) = rusqlite::Connection::open(store.path())
        .unwrap()
        .query_row(
            "SELECT c.case_id, t.task_id, r.model, r.sample FROM responses r
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id ORDER BY r.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    cases::app::team::TeamStudyRating {
        assignment: 41,
        rater: "rater-a".into(),
        site: "Hospital B".into(),
        case_id,
        task_id,
        model,
        sample,
        status: cases::rating::RatingStatus::Draft,
        version,
        state: cases::app::team::TeamRatingState {
            scores: commented(comment),
            labels: Vec::new(),
        },
        updated_at: updated_at.into(),
        submitted_at: None,
        rubric_version,
        clinical_role: None,
        years_experience: None,
    }
}

#[test]
fn a_pulled_rater_this_database_lacks_is_added_with_the_servers_role_and_one_without_a_role_is_named(
) {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    let rater_rows = |store: &Store| -> Vec<(String, Option<u32>)> {
        let conn = rusqlite::Connection::open(store.path()).unwrap();
        let mut statement = conn
            .prepare("SELECT role, years_experience FROM raters WHERE name = 'rater-a'")
            .unwrap();
        let rows = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows
    };

    // From a server that records no clinical role for rater-a: refused whole, naming them and
    // what to do, and nothing is written.
    let roleless = server_rating(&store, "read", 1, "2026-11-20T10:00:00.000Z", Some(1));
    let refused =
        cases::app::team::pull_ratings(&mut store, &lead_session, DEMO_STUDY_ID, &[roleless])
            .unwrap_err()
            .to_string();
    assert!(
        refused.contains("records no clinical role")
            && refused.contains("neurorater rater add rater-a"),
        "{refused}"
    );
    assert_eq!(rater_rows(&store), []);

    // With the role the lead recorded on the server: added with it, in the pull's transaction,
    // audited as the study lead's.
    let mut with_role = server_rating(&store, "read", 1, "2026-11-20T10:00:00.000Z", Some(1));
    with_role.clinical_role = Some(RaterRole::Resident);
    with_role.years_experience = Some(7);
    let pulled = cases::app::team::pull_ratings(
        &mut store,
        &lead_session,
        DEMO_STUDY_ID,
        std::slice::from_ref(&with_role),
    )
    .unwrap();
    assert_eq!(
        (pulled.added, pulled.raters_added.as_slice()),
        (1, &["rater-a".to_owned()][..])
    );
    assert_eq!(rater_rows(&store), [("resident".to_owned(), Some(7))]);
    let (actor, entity): (String, String) = rusqlite::Connection::open(store.path())
        .unwrap()
        .query_row(
            "SELECT actor, entity FROM audit_log WHERE action = 'create rater'
             ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(actor, "study lead");
    assert!(entity.starts_with("rater:"), "{entity}");
    let rated_by_them: i64 = rusqlite::Connection::open(store.path())
        .unwrap()
        .query_row(
            "SELECT count(*) FROM ratings g JOIN raters rt ON rt.id = g.rater
             WHERE rt.name = 'rater-a'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rated_by_them, 1);

    // Pulled again: nothing new, and nobody added twice.
    let again =
        cases::app::team::pull_ratings(&mut store, &lead_session, DEMO_STUDY_ID, &[with_role])
            .unwrap();
    assert_eq!((again.added, again.unchanged), (0, 1));
    assert!(again.raters_added.is_empty());
    assert_eq!(rater_rows(&store).len(), 1);
}

#[test]
fn a_pulled_rating_saved_again_under_a_newer_rubric_version_is_recorded_under_it() {
    let (_dir, mut store) = demo_store();
    let lead_session = lead(&store);
    store
        .create_rater("rater-a", RaterRole::Neurologist, Some(4))
        .unwrap();
    let pull = |store: &mut Store, rating| {
        cases::app::team::pull_ratings(store, &lead_session, DEMO_STUDY_ID, &[rating]).unwrap()
    };
    let counts = |report: &cases::app::team::PullReport| {
        (
            report.added,
            report.updated,
            report.unchanged,
            report.conflicts.len(),
        )
    };

    // Made under version 1 on the server and pulled.
    let first = server_rating(
        &store,
        "kept as it was",
        2,
        "2026-11-20T10:00:00.000Z",
        Some(1),
    );
    assert_eq!(counts(&pull(&mut store, first)), (1, 0, 0, 0));
    assert_eq!(stored_versions(&store), [("kept as it was".into(), 1)]);

    // The lead moves the rubric on; a rating is under version 1, so it is version 2.
    let current = rubric::current(&store, &lead_session, DEMO_STUDY_ID)
        .unwrap()
        .rubric;
    let outcome = rubric::save(
        &mut store,
        &lead_session,
        DEMO_STUDY_ID,
        &described(&current, "reworded"),
    )
    .unwrap();
    assert_eq!(saved(outcome).version, 2);

    // The rater saves it again on the server, unchanged, now under version 2: the pull updates
    // the version alone, audited as an update.
    let again = server_rating(
        &store,
        "kept as it was",
        3,
        "2026-11-21T09:00:00.000Z",
        Some(2),
    );
    assert_eq!(counts(&pull(&mut store, again.clone())), (0, 1, 0, 0));
    assert_eq!(stored_versions(&store), [("kept as it was".into(), 2)]);
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let (action, before, after): (String, i64, i64) = conn
        .query_row(
            "SELECT action, json_extract(before_json, '$.rubric_version'),
                 json_extract(after_json, '$.team_server.rubric_version')
             FROM audit_log ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (action.as_str(), before, after),
        ("pull rating (updated)", 1, 2)
    );
    assert!(matches!(
        audit::verify(&conn).unwrap(),
        Verdict::Intact { .. }
    ));

    // Pulled again: nothing new. From a server that sends no version, the content decides.
    assert_eq!(counts(&pull(&mut store, again.clone())), (0, 0, 1, 0));
    let unversioned = server_rating(
        &store,
        "kept as it was",
        3,
        "2026-11-21T09:00:00.000Z",
        None,
    );
    assert_eq!(counts(&pull(&mut store, unversioned)), (0, 0, 1, 0));
    assert_eq!(stored_versions(&store), [("kept as it was".into(), 2)]);

    // A version change older than what the last pull wrote is a conflict, written nowhere.
    let stale = server_rating(
        &store,
        "kept as it was",
        2,
        "2026-11-20T10:00:00.000Z",
        Some(1),
    );
    assert_eq!(counts(&pull(&mut store, stale)), (0, 0, 0, 1));
    assert_eq!(stored_versions(&store), [("kept as it was".into(), 2)]);
}

/// Per dimension, the clinicians' scores of submitted first reads, counted straight from the
/// file (the overall column and each key of the dimensions JSON), whatever their version.
fn stored_human_scores(store: &Store) -> std::collections::BTreeMap<String, usize> {
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    let overall: i64 = conn
        .query_row(
            "SELECT count(*) FROM ratings WHERE status = 'submitted' AND read_no = 1
               AND overall IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    counts.insert("overall".to_owned(), overall as usize);
    let mut stmt = conn
        .prepare(
            "SELECT j.key, count(*) FROM ratings g, json_each(g.dimensions_json) j
             WHERE g.status = 'submitted' AND g.read_no = 1 GROUP BY j.key",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap();
    for row in rows {
        let (dimension, n) = row.unwrap();
        counts.insert(dimension, n as usize);
    }
    counts
}

/// Per dimension, the clinicians' scores the report's input holds.
fn read_human_scores(
    data: &cases::analysis::StudyData,
) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for s in &data.input.table.scores {
        if !data.graders.contains(&s.rater) {
            *counts.entry(s.dimension.clone()).or_default() += 1;
        }
    }
    counts
}

/// Issue 41, finding 1: the lead allowed "not applicable" on one dimension after the demo's
/// ratings were in (version 2), and calibration failed with "no human raters besides the
/// grader"; un-ticking it (version 3) stayed broken. Now each dimension reads every rating whose
/// version defines it the same way; a changed scale leaves that dimension's earlier scores out,
/// saying why, and undoing it brings them back.
#[test]
fn a_rubric_edit_leaves_every_comparable_rating_in_the_report_and_says_what_it_left_out() {
    let (_dir, mut store) = demo_store();
    let imported = cases::ratings_import::import_ratings_csv(
        &mut store,
        &rating_support::demo_bundle().join("ratings.csv"),
        &NoProgress,
    )
    .expect("the demo's ratings import");
    assert!(imported.ratings_added > 0, "{imported:?}");
    let lead_session = lead(&store);
    let first = rubric::current(&store, &lead_session, DEMO_STUDY_ID)
        .unwrap()
        .rubric;
    let stored = stored_human_scores(&store);
    let submitted = |store: &Store| -> usize {
        rusqlite::Connection::open(store.path())
            .unwrap()
            .query_row(
                "SELECT count(*) FROM ratings WHERE status = 'submitted' AND read_no = 1",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap() as usize
    };
    let ratings = submitted(&store);
    let options = calibration::input::ReportOptions {
        grader: Some("demo-grader-v1".into()),
        bootstrap_resamples: 20,
        ..Default::default()
    };
    let headline = |store: &Store| {
        cases::app::calibration::study_report(store, &lead(store), DEMO_STUDY_ID, options.clone())
            .expect("the study is read")
            .headline(&NoProgress)
    };
    let data = |store: &Store| cases::analysis::study_data(store, DEMO_STUDY_ID, None).unwrap();
    // Version 1: every stored score is read.
    assert_eq!(read_human_scores(&data(&store)), stored);
    let clinicians = headline(&store).expect("a report").summary.human_raters;
    assert!(!clinicians.is_empty());

    // Version 2: "not applicable" allowed on the first dimension.
    let mut allowed = first.clone();
    allowed.dimensions[0].allow_not_applicable = true;
    let v2 = saved(rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &allowed).unwrap());
    assert_eq!((v2.version, v2.new_version), (2, true));
    let read = data(&store);
    assert_eq!(
        read_human_scores(&read),
        stored,
        "every v1 score still read"
    );
    let versions: Vec<(u32, usize, bool, usize)> = read
        .rubric_versions
        .iter()
        .map(|v| (v.version, v.ratings, v.current, v.left_out.len()))
        .collect();
    assert_eq!(versions, [(1, ratings, false, 0), (2, 0, true, 0)]);
    assert!(read.coverage.iter().all(|c| c.other_definition == 0));
    let report = headline(&store).expect("calibration still builds after allowing N/A");
    assert_eq!(report.summary.human_raters, clinicians);
    let verdict = report.verdict.expect("a verdict");
    assert!(verdict.pearson.value().is_some(), "{}", verdict.summary);

    // A draft under version 2, then "not applicable" un-ticked: version 3, still every score.
    let (rater, item) = rater_with_item(&mut store, "Dr Draft");
    store.save_rating(rater, item, &commented("draft")).unwrap();
    let v3 = saved(rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &first).unwrap());
    assert_eq!(v3.version, 3);
    assert_eq!(read_human_scores(&data(&store)), stored);
    assert!(headline(&store).is_ok());

    // Version 4: the second dimension loses its top level. Its earlier scores are left out, with
    // why; the other dimensions and the overall score are still read whole.
    store
        .save_rating(rater, item, &commented("draft again"))
        .unwrap();
    let narrowed_id = first.dimensions[1].id.clone();
    let mut narrowed = first.clone();
    let scale = &mut narrowed.dimensions[1].scale;
    scale.max -= scale.step;
    let top = scale.max;
    scale.levels.retain(|l| l.value <= top);
    let v4 = saved(rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &narrowed).unwrap());
    assert_eq!(v4.version, 4);
    let read = data(&store);
    let mut expected = stored.clone();
    let left = expected
        .remove(&narrowed_id)
        .expect("the dimension was scored");
    assert_eq!(read_human_scores(&read), expected);
    let version_1 = &read.rubric_versions[0];
    assert_eq!(
        version_1
            .left_out
            .iter()
            .map(|l| (l.dimension.as_str(), l.scores, l.reason.as_str()))
            .collect::<Vec<_>>(),
        [(
            narrowed_id.as_str(),
            left,
            "version 1 scored it 1–5 by 1, the current version 1–4 by 1"
        )]
    );
    let coverage = read
        .coverage
        .iter()
        .find(|c| c.dimension == narrowed_id)
        .unwrap();
    assert_eq!((coverage.rated, coverage.other_definition), (0, ratings));
    let report = headline(&store).expect("still a report");
    assert!(report.verdict.unwrap().pearson.value().is_some());

    // Undone: the scale as version 1 had it, and version 1's scores of it are read again.
    store
        .save_rating(rater, item, &commented("and again"))
        .unwrap();
    let v5 = saved(rubric::save(&mut store, &lead_session, DEMO_STUDY_ID, &first).unwrap());
    assert_eq!(v5.version, 5);
    let read = data(&store);
    assert_eq!(read_human_scores(&read), stored);
    assert!(read.rubric_versions.iter().all(|v| v.left_out.is_empty()));
}
