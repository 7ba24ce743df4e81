//! The database as the calibration report's input: repeat reads and missed findings reach the
//! report's test-retest and missed-findings sections.

#[path = "support/rating.rs"]
mod rating_support;

use calibration::bootstrap::NoProgress;
use calibration::input::ReportOptions;
use cases::rating::{LabelEdit, PlanSpec, RaterRole, RatingEdit, SpanText, DEMO_STUDY_ID};
use rating_support::demo_store;
use std::collections::{BTreeMap, BTreeSet};

/// A plan giving one rater every response of the demo study once, in seeded order; tests
/// change the fields they are about.
fn one_rater_plan(rater: i64, name: &str, seed: u64) -> PlanSpec {
    PlanSpec {
        study_id: DEMO_STUDY_ID.into(),
        name: name.into(),
        seed,
        raters: vec![rater],
        overlap_share: 0.0,
        responses_per_rater: None,
        repeat_share: 0.0,
        repeat_after_days: 0,
        stratify_by: Vec::new(),
    }
}

#[test]
fn a_clinicians_repeat_reads_reach_the_test_retest_section_and_stay_out_of_the_table() {
    let (_dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let plan = PlanSpec {
        responses_per_rater: Some(6),
        repeat_share: 1.0,
        ..one_rater_plan(rater, "test-retest", 5)
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
            not_applicable: Default::default(),
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
    // The process's bundle stays: the ground truth's lesion marks are read from its images.
    let (_dir, store) = rating_support::demo_store();
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

/// Two clinicians' overall scores for every response, from a CSV as `import-ratings` reads it.
fn import_two_clinicians(store: &mut cases::store::Store, dir: &std::path::Path) {
    let mut csv = String::from("item,rater,score\n");
    for (i, item) in rating_support::responses_key_order(store.read())
        .iter()
        .enumerate()
    {
        csv.push_str(&format!("{item},dr-a,{}\n", 1 + i % 5));
        csv.push_str(&format!("{item},dr-b,{}\n", 1 + (i + i / 7) % 5));
    }
    let path = dir.join("ratings.csv");
    std::fs::write(&path, csv).unwrap();
    cases::ratings_import::import_ratings_csv(store, &path, &cases::progress::NoProgress).unwrap();
}

#[test]
fn a_kept_report_is_shown_again_until_a_rating_changes() {
    use cases::app::calibration::{study_report, study_report_with_headline, ReportCache};
    let (dir, mut store) = demo_store();
    import_two_clinicians(&mut store, dir.path());
    let lead = cases::app::Session::command_line();
    let options = ReportOptions {
        grader: Some("demo-grader-v1".into()),
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    };
    let cache = ReportCache::default();
    assert!(cache
        .get(&store, &lead, DEMO_STUDY_ID, &options)
        .unwrap()
        .is_none());
    // The headline comes while the study is read, before the ground truth is.
    let mut early = None;
    let study = study_report_with_headline(&store, &lead, DEMO_STUDY_ID, options.clone(), |h| {
        early = Some(h.unwrap())
    })
    .unwrap();
    let early = early.expect("the headline was handed over during the read");
    let first = study.build_into(&cache, &NoProgress).unwrap();
    let kept = cache
        .get(&store, &lead, DEMO_STUDY_ID, &options)
        .unwrap()
        .expect("kept for the same study, options and data");
    assert!(std::sync::Arc::ptr_eq(&first, &kept));
    let other_options = ReportOptions {
        non_inferiority_margin: 0.1,
        ..options.clone()
    };
    assert!(
        cache
            .get(&store, &lead, DEMO_STUDY_ID, &other_options)
            .unwrap()
            .is_none(),
        "other options are another report"
    );

    // The headline is the whole report's verdict to the bit, on the verdict's dimension alone.
    for headline in [early, study.headline(&NoProgress).unwrap()] {
        let (h, f) = (headline.verdict.unwrap(), first.verdict.clone().unwrap());
        assert_eq!(h.pearson.value().unwrap().r, f.pearson.value().unwrap().r);
        assert_eq!((h.low, h.high), (f.low, f.high));
        assert_eq!(h.ceiling, f.ceiling);
        assert_eq!(headline.summary.dimensions, ["overall"]);
        assert!(headline.dimensions[0].groups.is_empty());
        assert_eq!(headline.audit_head, first.audit_head, "the same snapshot");
    }

    // A clinician rates one response: the kept report no longer describes the data.
    let ada = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let plan = PlanSpec {
        responses_per_rater: Some(1),
        ..one_rater_plan(ada, "one read", 5)
    };
    store.create_assignment_plan(ada, &plan).unwrap();
    let item = store.reading_queue(ada, DEMO_STUDY_ID).unwrap()[0].assignment;
    let dimensions: Vec<String> = store
        .reading_item(ada, item)
        .unwrap()
        .rubric
        .dimensions
        .iter()
        .map(|d| d.id.clone())
        .collect();
    let edit = RatingEdit {
        overall: Some(5.0),
        not_applicable: Default::default(),
        dimensions: dimensions.iter().map(|d| (d.clone(), 5.0)).collect(),
        correctness: Some(cases::rating::Correctness::Correct),
        confidence: Some(3),
        comment: String::new(),
        seconds_on_task: 30.0,
    };
    store.save_rating(ada, item, &edit).unwrap();
    store.submit_rating(ada, item).unwrap();
    assert!(
        cache
            .get(&store, &lead, DEMO_STUDY_ID, &options)
            .unwrap()
            .is_none(),
        "a rating edit makes the kept report stale"
    );
    let rebuilt = study_report(&store, &lead, DEMO_STUDY_ID, options.clone())
        .unwrap()
        .build_into(&cache, &NoProgress)
        .unwrap();
    assert!(rebuilt.summary.human_raters.contains(&"Dr Ada".to_owned()));
    assert!(!first.summary.human_raters.contains(&"Dr Ada".to_owned()));
    assert_ne!(first.audit_head, rebuilt.audit_head);
    let kept = cache
        .get(&store, &lead, DEMO_STUDY_ID, &options)
        .unwrap()
        .expect("the rebuilt report is kept");
    assert!(std::sync::Arc::ptr_eq(&rebuilt, &kept));
}

/// An anchoring label (R4) in a consultation points at the turn where the model should have
/// changed its mind; the report's errors per model count them, checked against a count made here
/// from the stored labels alone.
#[test]
fn anchoring_labels_on_turns_are_counted_per_model() {
    let (_dir, mut store) = demo_store();
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let plan = one_rater_plan(rater, "consultations", 11);
    store.create_assignment_plan(rater, &plan).unwrap();
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    let mut consultations = 0;
    for (index, entry) in queue.iter().enumerate() {
        let item = store.reading_item(rater, entry.assignment).unwrap();
        let score = 3.0;
        let edit = RatingEdit {
            overall: Some(score),
            not_applicable: Default::default(),
            dimensions: item
                .rubric
                .dimensions
                .iter()
                .map(|d| (d.id.clone(), d.scale.min))
                .collect(),
            correctness: Some(cases::rating::Correctness::Partly),
            confidence: Some(3),
            comment: String::new(),
            seconds_on_task: 30.0,
        };
        store.save_rating(rater, entry.assignment, &edit).unwrap();
        let turns = item.response.turns.clone().unwrap_or_default();
        // Every other consultation anchors, labelled on its last assistant turn; a P3 on the
        // answer of every response is a label of another category, which must not count.
        if let Some(last) = turns.iter().rposition(|t| t.role == "assistant") {
            consultations += 1;
            if index % 2 == 0 {
                let units = turns[last].content.encode_utf16().count() as u32;
                store
                    .add_error_label(
                        rater,
                        entry.assignment,
                        &LabelEdit {
                            category: "R4".into(),
                            severity: 2,
                            span: Some([0, units.min(12)]),
                            text: SpanText::Turn,
                            turn: Some(last as u32),
                            mark: None,
                            comment: "kept the first impression".into(),
                        },
                    )
                    .unwrap();
            }
        }
        store
            .add_error_label(
                rater,
                entry.assignment,
                &LabelEdit {
                    category: "P3".into(),
                    severity: 1,
                    span: Some([0, 1]),
                    text: SpanText::Answer,
                    turn: None,
                    mark: None,
                    comment: String::new(),
                },
            )
            .unwrap();
        store.submit_rating(rater, entry.assignment).unwrap();
    }
    assert!(consultations > 2, "the demo has level-3 consultations");

    // Independently: per model, the responses with an R4 label on a turn, from the table.
    let mut expected: BTreeMap<String, usize> = BTreeMap::new();
    let mut stmt = store
        .read()
        .prepare(
            "SELECT r.model, count(DISTINCT r.id) FROM error_labels e
             JOIN ratings g ON e.rating = g.id JOIN responses r ON g.response = r.id
             WHERE e.category = 'R4' AND e.span_text = 'turn' AND e.span_turn IS NOT NULL
             GROUP BY r.model",
        )
        .unwrap();
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap()
    {
        let (model, count) = row.unwrap();
        expected.insert(model, count as usize);
    }
    drop(stmt);
    assert!(!expected.is_empty());

    let data = cases::analysis::study_data(&store, DEMO_STUDY_ID, Some("demo-grader-v1")).unwrap();
    let options = ReportOptions {
        scale: Some(data.scale),
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    let report = calibration::report::build_report(&data.input, &options, &NoProgress).unwrap();
    let distribution = report.error_distribution.expect("errors were labelled");
    let counted: BTreeMap<String, usize> = distribution
        .by_model
        .iter()
        .filter_map(|m| {
            let r4 = m.by_category.iter().find(|c| c.name == "R4")?;
            (r4.share.count > 0).then(|| (m.model.clone(), r4.share.count))
        })
        .collect();
    assert_eq!(counted, expected);
}

#[test]
fn the_report_counts_per_dimension_what_was_scored_not_applicable_not_applied_or_empty() {
    use cases::app::calibration::study_report;
    let (dir, mut store) = demo_store();
    let dimensions = rating_support::family_limited_rubric(&store);
    // Two clinicians from a ratings file: overall scores only, every dimension left empty.
    import_two_clinicians(&mut store, dir.path());
    let rater = store
        .create_rater("Dr Ada", RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let plan = PlanSpec {
        responses_per_rater: Some(16),
        ..one_rater_plan(rater, "coverage", 3)
    };
    store.create_assignment_plan(rater, &plan).unwrap();
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    for (index, entry) in queue.iter().enumerate() {
        let item = store.reading_item(rater, entry.assignment).unwrap();
        let mut edit = RatingEdit {
            overall: Some(3.0),
            not_applicable: Default::default(),
            dimensions: BTreeMap::new(),
            correctness: Some(cases::rating::Correctness::Partly),
            confidence: Some(3),
            comment: String::new(),
            seconds_on_task: 30.0,
        };
        for dimension in &item.rubric.dimensions {
            if !dimension.applies_to(item.task.family) {
                continue;
            }
            if dimension.allow_not_applicable && index % 3 == 0 {
                edit.not_applicable.insert(dimension.id.clone());
            } else {
                edit.dimensions.insert(
                    dimension.id.clone(),
                    dimension.scale.min + (index % 2) as f64,
                );
            }
        }
        store.save_rating(rater, entry.assignment, &edit).unwrap();
        // Every fourth stays a draft: the report reads submitted ratings only.
        if index % 4 != 3 {
            store.submit_rating(rater, entry.assignment).unwrap();
        }
    }

    let lead = cases::app::Session::command_line();
    let options = ReportOptions {
        grader: Some("demo-grader-v1".into()),
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    let study = study_report(&store, &lead, DEMO_STUDY_ID, options).unwrap();
    let report = study.build(&NoProgress).unwrap();
    let coverage = report
        .dimension_coverage
        .clone()
        .expect("a database's report");
    assert_eq!(
        coverage
            .iter()
            .map(|c| c.dimension.clone())
            .collect::<Vec<_>>(),
        dimensions
    );

    // Independently, from the tables: submitted first reads, each dimension's state in each.
    for counts in &coverage {
        let only_lesions = counts.dimension == dimensions[0];
        let (rated, not_applicable, not_applied, missing): (i64, i64, i64, i64) = store
            .read()
            .query_row(
                "WITH cells AS (
                   SELECT json_extract(g.dimensions_json, '$.' || ?1) IS NOT NULL AS scored,
                          EXISTS (SELECT 1 FROM json_each(g.not_applicable_json) n
                                  WHERE n.value = ?1) AS marked,
                          (?2 AND t.family <> 'lesion_identification') AS other_family
                   FROM ratings g JOIN responses r ON g.response = r.id
                   JOIN tasks t ON r.task = t.id
                   WHERE g.status = 'submitted' AND g.read_no = 1)
                 SELECT sum(scored), sum(NOT scored AND marked),
                        sum(NOT scored AND NOT marked AND other_family),
                        sum(NOT scored AND NOT marked AND NOT other_family) FROM cells",
                rusqlite::params![counts.dimension, only_lesions],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (
                counts.rated,
                counts.not_applicable,
                counts.not_applied,
                counts.missing
            ),
            (
                rated as usize,
                not_applicable as usize,
                not_applied as usize,
                missing as usize
            ),
            "{}",
            counts.dimension
        );
        // Agreement reads the clinicians' scores alone: as many as were scored.
        let clinician_scores = study
            .input
            .table
            .scores
            .iter()
            .filter(|s| s.dimension == counts.dimension && !study.graders.contains(&s.rater))
            .count();
        assert_eq!(clinician_scores, counts.rated, "{}", counts.dimension);
    }
    let [lesion_only, may_be_na, ..] = &coverage[..] else {
        panic!("the demo rubric has four dimensions")
    };
    assert!(lesion_only.not_applied > 0 && lesion_only.rated > 0);
    assert!(may_be_na.not_applicable > 0 && may_be_na.rated > 0);
    assert!(
        may_be_na.missing > 0,
        "the imported clinicians gave overall scores only"
    );
    let tables: BTreeMap<String, String> = calibration::tables::to_csv_tables(&report)
        .into_iter()
        .collect();
    let expected_row = format!(
        "{},{},{},{},{},{}",
        may_be_na.dimension,
        may_be_na.rated,
        may_be_na.not_applicable,
        may_be_na.not_applied,
        may_be_na.missing,
        may_be_na.other_definition
    );
    // One rubric version: nothing saved under another definition.
    assert!(coverage.iter().all(|c| c.other_definition == 0));
    assert!(
        tables["dimension_coverage.csv"]
            .lines()
            .any(|l| l == expected_row),
        "{}",
        tables["dimension_coverage.csv"]
    );
    assert!(calibration::html::to_html(&report).contains("What each dimension holds"));
}

/// The manifest names what the report was built from: each grader's and model's spec as the
/// runner stored it (imported results without a spec get `null`s), the taxonomy's SHA-256 over
/// its stored text, the rubric version and the audit head; the same data gives the same bytes,
/// and neither a key nor an endpoint's path or credentials reach the report.
#[test]
fn the_manifest_names_the_specs_and_taxonomy_the_report_read_and_nothing_secret() {
    use cases::app::calibration::study_report;
    use sha2::{Digest, Sha256};
    let (dir, mut store) = demo_store();
    import_two_clinicians(&mut store, dir.path());
    // Two grader runs as `runner::record` stores them (`run_specs`: the spec's content hash and
    // its JSON, with the key's variable name at most; the scores in `grader_scores`): the demo's
    // grader spec (demo/src/specs/grader.toml) and a spec whose key variable, endpoint
    // credentials, path and query must stay out of any report. Written here with SQL: linking
    // the runner into this test would build the whole dependency graph again for one table.
    let key_variable = "NEURORATER_MANIFEST_TEST_KEY";
    std::env::set_var(key_variable, "sk-manifest-test-key-value");
    let demo_hash = format!("{:x}", Sha256::digest(b"demo-grader-local-v1 as bound"));
    let specs = [
        (
            "demo-grader-local-v1",
            demo_hash.clone(),
            serde_json::json!({
                "name": "demo-grader-local-v1", "endpoint": "http://127.0.0.1:8000/v1",
                "model": "Qwen/Qwen2.5-VL-7B-Instruct", "temperature": 0.0, "seed": 20260101,
                "max_tokens": 600, "concurrency": 4, "prompt": "grade {{answer}}",
                "requests_per_minute": 120, "max_retries": 5, "timeout_seconds": 120.0,
            }),
        ),
        (
            "keyed-grader",
            format!("{:x}", Sha256::digest(b"keyed-grader as bound")),
            serde_json::json!({
                "name": "keyed-grader",
                "endpoint": "https://proxy-user:proxy-pass@LLM.example.org:8443/deployments/secret-deployment/v1?api-version=2026-01",
                "model": "gpt-x", "api_key_env": key_variable, "temperature": 0.25, "seed": 42,
                "max_tokens": 100, "concurrency": 1, "prompt": "grade {{answer}}",
                "max_retries": 5, "timeout_seconds": 120.0,
            }),
        ),
    ];
    let response: i64 = store
        .read()
        .query_row("SELECT min(id) FROM responses", [], |r| r.get(0))
        .unwrap();
    for (name, hash, json) in &specs {
        let conn = store.read();
        conn.execute(
            "INSERT INTO run_specs (name, kind, spec_sha256, spec_json, first_run_at)
             VALUES (?1, 'grader', ?2, ?3, '2026-11-28T00:00:00.000Z')",
            rusqlite::params![name, hash, json.to_string()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO grader_scores (response, grader, score, extra_json)
             VALUES (?1, ?2, 3.0, '{}')",
            rusqlite::params![response, name],
        )
        .unwrap();
    }

    let lead = cases::app::Session::command_line();
    let options = ReportOptions {
        grader: Some("demo-grader-v1".into()),
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    };
    let build = |store: &cases::store::Store| {
        study_report(store, &lead, DEMO_STUDY_ID, options.clone())
            .unwrap()
            .build(&NoProgress)
            .unwrap()
    };
    let report = build(&store);
    let manifest = &report.manifest;

    let (stored_hash, taxonomy_json, rubric_version): (String, String, u32) = store
        .read()
        .query_row(
            "SELECT (SELECT spec_sha256 FROM run_specs WHERE name = 'demo-grader-local-v1'),
                    taxonomy_json, rubric_version FROM studies WHERE study_id = ?1",
            [DEMO_STUDY_ID],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(stored_hash, demo_hash);
    let taxonomy_sha256: String = Sha256::digest(taxonomy_json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        manifest.taxonomy_sha256.as_deref(),
        Some(taxonomy_sha256.as_str())
    );
    assert_eq!(manifest.rubric_version, Some(rubric_version));
    assert_eq!(manifest.audit_head, report.audit_head);
    assert!(manifest.audit_head.is_some());
    assert_eq!(manifest.neurorater_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest.options["seed"], "1");
    assert_eq!(manifest.options["grader"], "demo-grader-v1");
    assert_eq!(
        manifest.text_metric_model, None,
        "the demo has no text metrics"
    );

    let entry = |name: &str| manifest.specs.iter().find(|s| s.name == name).unwrap();
    let demo = entry("demo-grader-local-v1");
    assert_eq!(
        (
            demo.kind.as_str(),
            demo.sha256.as_deref(),
            demo.model.as_deref()
        ),
        (
            "grader",
            Some(stored_hash.as_str()),
            Some("Qwen/Qwen2.5-VL-7B-Instruct")
        )
    );
    assert_eq!(demo.endpoint_host.as_deref(), Some("127.0.0.1"));
    assert_eq!(demo.seed.as_deref(), Some("20260101"));
    assert_eq!(demo.temperature.as_deref(), Some("0"));
    let keyed = entry("keyed-grader");
    assert_eq!(keyed.endpoint_host.as_deref(), Some("llm.example.org"));
    assert_eq!(keyed.temperature.as_deref(), Some("0.25"));
    let imported = entry("demo-grader-v1");
    assert_eq!(
        (
            imported.sha256.as_ref(),
            imported.model.as_ref(),
            imported.seed.as_ref()
        ),
        (None, None, None),
        "imported scores have no spec"
    );
    // Every model that answered and every grader that scored, once each, by (kind, name).
    let mut expected: Vec<(String, String)> = store
        .read()
        .prepare(
            "SELECT DISTINCT 'model', model FROM responses
             UNION SELECT DISTINCT 'grader', grader FROM grader_scores",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    expected.sort();
    let listed: Vec<(String, String)> = manifest
        .specs
        .iter()
        .map(|s| (s.kind.clone(), s.name.clone()))
        .collect();
    assert_eq!(listed, expected);

    let json = calibration::tables::to_json(&report);
    for secret in [
        key_variable,
        "sk-manifest-test-key-value",
        "proxy-user",
        "proxy-pass",
        "secret-deployment",
        "api-version",
    ] {
        assert!(!json.contains(secret), "{secret} is in the report");
    }

    // The same data: the same bytes. One more rating: another audit head.
    let serialized = |r: &calibration::report::Report| serde_json::to_string(&r.manifest).unwrap();
    assert_eq!(serialized(&report), serialized(&build(&store)));
    let item = rating_support::responses_key_order(store.read())[0].clone();
    let csv = dir.path().join("one-more.csv");
    std::fs::write(&csv, format!("item,rater,score\n{item},dr-c,4\n")).unwrap();
    cases::ratings_import::import_ratings_csv(&mut store, &csv, &cases::progress::NoProgress)
        .unwrap();
    let changed = build(&store);
    assert_ne!(changed.manifest.audit_head, manifest.audit_head);
    assert_ne!(serialized(&changed), serialized(&report));
}

/// Every demo answer is matched against its case's curated diagnosis, and the report built from
/// the database carries the section: an answer that states the curated diagnosis word for word
/// is ranked first (the demo's correct answers of four cases do), and the demo's wrong answers
/// to those tasks are not.
#[test]
fn the_demo_answers_are_matched_against_their_curated_diagnosis() {
    let (dir, mut store) = demo_store();
    import_two_clinicians(&mut store, dir.path());
    let matched = cases::analysis::matched_answers(&store, DEMO_STUDY_ID).unwrap();
    let stored: Vec<(String, String, String, String)> = store
        .read()
        .prepare(
            "SELECT c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample,
                    c.case_id, r.answer, t.family
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        matched.len(),
        stored.len(),
        "every case has a curated diagnosis"
    );
    let by_item: BTreeMap<&str, &calibration::truth_match::MatchedAnswer> =
        matched.iter().map(|m| (m.item.as_str(), m)).collect();
    let (mut verbatim, mut other) = (0, 0);
    for (item, case, answer, family) in &stored {
        if family == "lesion_identification" {
            continue;
        }
        let diagnosis = cases::curation::versions::current(&store, DEMO_STUDY_ID, case)
            .unwrap()
            .unwrap()
            .truth
            .diagnosis;
        let m = by_item[item.as_str()];
        if *answer == diagnosis {
            verbatim += 1;
            assert_eq!(m.top1, Some(true), "{item}: {answer:?}");
            assert!(m.exact, "{item}");
            assert_eq!(m.predicted_group, m.true_group);
        } else if diagnosis == "Relapsing-remitting multiple sclerosis" {
            // ms-01's only other answer is the demo's wrong one, small-vessel disease.
            other += 1;
            assert_eq!(m.top1, Some(false), "{item}: {answer:?}");
        }
    }
    assert!(
        verbatim > 10 && other > 0,
        "{verbatim} verbatim, {other} wrong"
    );

    let lead = cases::app::Session::command_line();
    let options = ReportOptions {
        grader: Some("demo-grader-v1".into()),
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    let report = cases::app::calibration::study_report(&store, &lead, DEMO_STUDY_ID, options)
        .unwrap()
        .build(&NoProgress)
        .unwrap();
    let html = calibration::html::to_html(&report);
    assert!(
        html.contains("Answers against the ground truth"),
        "the HTML shows the section"
    );
    let rows = report.answer_accuracy.expect("an answer_accuracy section");
    let own: Vec<_> = rows.iter().filter(|r| r.task_family.is_none()).collect();
    assert_eq!(own.iter().map(|r| r.n).sum::<usize>(), matched.len());
    assert_eq!(
        rows.iter()
            .filter(|r| r.task_family.is_some())
            .map(|r| r.n)
            .sum::<usize>(),
        matched.len()
    );
    assert!(own
        .iter()
        .all(|r| r.agreement.iter().any(|a| a.against == "grader" && a.n > 0)));
    assert!(own
        .iter()
        .all(|r| !r.pass_at.is_empty() && r.macro_f1.value().is_some()));
    // The demo's lesion answers state no diagnosis: each is listed for the curator with its text.
    let undecided: usize = own.iter().map(|r| r.undecided.len()).sum();
    assert_eq!(undecided, own.iter().map(|r| r.unmatched).sum::<usize>());
    assert!(
        undecided > 0
            && own
                .iter()
                .flat_map(|r| &r.undecided)
                .all(|u| !u.span.is_empty())
    );
}
