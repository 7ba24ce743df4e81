//! The database as the calibration report's input: repeat reads and missed findings reach the
//! report's test-retest and missed-findings sections.

#[path = "support/rating.rs"]
mod rating_support;

use calibration::bootstrap::NoProgress;
use calibration::input::ReportOptions;
use cases::rating::{PlanSpec, RaterRole, RatingEdit, DEMO_STUDY_ID};
use rating_support::demo_store;
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn a_clinicians_repeat_reads_reach_the_test_retest_section_and_stay_out_of_the_table() {
    let (_dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let plan = PlanSpec {
        study_id: DEMO_STUDY_ID.into(),
        name: "test-retest".into(),
        seed: 5,
        raters: vec![rater],
        overlap_share: 0.0,
        responses_per_rater: Some(6),
        repeat_share: 1.0,
        repeat_after_days: 0,
    };
    store.create_assignment_plan(rater, &plan).unwrap();
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(queue.len(), 12, "six first reads and their repeats");
    let dimensions: Vec<String> = store
        .reading_item(rater, queue[0].assignment)
        .unwrap()
        .rubric
        .dimensions
        .iter()
        .map(|d| d.id.clone())
        .collect();
    // First reads 1, 2, 3, 4, 5, 3 in order of the responses' first appearance; the repeats
    // 1, 3, 3, 4, 4, 3: two reads differ by one point.
    let (firsts, repeats) = (
        [1.0, 2.0, 3.0, 4.0, 5.0, 3.0],
        [1.0, 3.0, 3.0, 4.0, 4.0, 3.0],
    );
    let mut order: Vec<i64> = Vec::new();
    let mut written: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    for item in &queue {
        let (response, read_no): (i64, i64) = store
            .read()
            .query_row(
                "SELECT response, read_no FROM assignments WHERE id = ?1",
                [item.assignment],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        if !order.contains(&response) {
            order.push(response);
        }
        let index = order.iter().position(|r| *r == response).unwrap();
        let overall = if read_no == 1 {
            firsts[index]
        } else {
            repeats[index]
        };
        let entry = written.entry(response).or_default();
        if read_no == 1 {
            entry.0 = overall;
        } else {
            entry.1 = overall;
        }
        let edit = RatingEdit {
            overall: Some(overall),
            dimensions: dimensions.iter().map(|d| (d.clone(), overall)).collect(),
            correctness: Some(cases::rating::Correctness::Correct),
            confidence: Some(3),
            comment: String::new(),
            seconds_on_task: 30.0,
        };
        store.save_rating(rater, item.assignment, &edit).unwrap();
        store.submit_rating(rater, item.assignment).unwrap();
    }

    let data = cases::analysis::study_data(&store, DEMO_STUDY_ID, None).unwrap();
    let mut pairs: Vec<(f64, f64)> = data
        .input
        .repeat_reads
        .iter()
        .map(|r| {
            assert_eq!(r.rater, "Dr Ada");
            (r.first, r.repeat)
        })
        .collect();
    let mut expected: Vec<(f64, f64)> = written.values().copied().collect();
    pairs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(pairs, expected);
    let ada_in_table = data
        .input
        .table
        .scores
        .iter()
        .filter(|s| s.rater == "Dr Ada" && s.dimension == "overall")
        .count();
    assert_eq!(ada_in_table, 6, "first reads only in the inter-rater table");

    let options = ReportOptions {
        scale: Some(data.scale),
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    };
    let report = calibration::report::build_report(&data.input, &options, &NoProgress).unwrap();
    let section = report.intra_rater.expect("a test-retest section");
    assert_eq!(section.raters.len(), 1);
    let ada = &section.raters[0];
    assert_eq!((ada.rater.as_deref(), ada.n_pairs), (Some("Dr Ada"), 6));
    let t = ada.reliability.value().expect("six pairs are enough");
    assert!((t.mean_absolute_difference - 2.0 / 6.0).abs() < 1e-12);
    assert!((t.mean_difference - 0.0).abs() < 1e-12, "one up, one down");
    // The demo's images stay for the test process (a label's mark is checked against them), so
    // its ground truth is read and the missed-findings section is checked.
    let missed = report.missed_findings.expect("a missed-findings section");
    assert_eq!(missed.not_checked, None);
}

#[test]
fn missed_findings_of_the_demo_reach_the_report_with_their_location() {
    // The bundle stays: the ground truth's lesion marks are read from its images.
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("demo");
    cases::demo::write_demo_bundle(&bundle, &cases::progress::NoProgress).unwrap();
    let mut store = cases::store::Store::open(&dir.path().join("db.sqlite")).unwrap();
    cases::import::import_bundle_dir(&mut store, &bundle, &cases::progress::NoProgress).unwrap();
    let data = cases::analysis::study_data(&store, DEMO_STUDY_ID, None).unwrap();
    let input = &data.input.missed_findings;
    let lesion_tasks: i64 = store
        .read()
        .query_row(
            "SELECT count(*) FROM responses r JOIN tasks t ON r.task = t.id
             WHERE t.family = 'lesion_identification'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(input.not_checked, None);
    assert_eq!(input.checked.len() as i64, lesion_tasks);
    let found = cases::curation::missed_findings(&store, DEMO_STUDY_ID).unwrap();
    assert!(
        !found.is_empty(),
        "the demo's wrong lesion answers miss lesions"
    );
    assert_eq!(input.missed.len(), found.len(), "none lost on the way");
    let checked: BTreeSet<&str> = input.checked.iter().map(|c| c.item.as_str()).collect();
    for (miss, source) in input.missed.iter().zip(&found) {
        assert_eq!(
            miss.item,
            format!(
                "{}/{}/{}/{}",
                source.case_id, source.task_id, source.model, source.sample
            )
        );
        assert!(checked.contains(miss.item.as_str()));
        assert_eq!(miss.description, source.description);
        let lesion = cases::curation::versions::current(&store, DEMO_STUDY_ID, &source.case_id)
            .unwrap()
            .unwrap()
            .truth
            .lesions
            .into_iter()
            .find(|l| l.id == source.lesion_id)
            .unwrap();
        if let Some(mark) = lesion.marks.first() {
            assert!(
                miss.location
                    .contains(&format!("marked on {}", mark.series_id)),
                "{}",
                miss.location
            );
        }
        if let Some(shown) = lesion.shown_on.first() {
            assert!(miss.location.contains(&shown.series), "{}", miss.location);
        }
    }
    let options = ReportOptions {
        scale: Some(data.scale),
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    let report = calibration::report::build_report(&data.input, &options, &NoProgress).unwrap();
    let section = report.missed_findings.expect("a missed-findings section");
    assert_eq!(section.missed, found.len());
    assert_eq!(
        section.by_model.iter().map(|m| m.missed).sum::<usize>(),
        found.len()
    );
    assert!(report.intra_rater.is_none(), "the demo has no repeat reads");
}
