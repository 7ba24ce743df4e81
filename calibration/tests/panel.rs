//! Partial readers: the clinicians' ICC and Fleiss' κ use the largest complete panel instead of
//! becoming "not estimable" because one reader has scored little (issue 19), and say so.

mod common;

use calibration::bootstrap::NoProgress;
use calibration::icc::icc;
use calibration::input::{CalibrationInput, ItemInfo, LongTable, ReportOptions, ScoreRow};
use calibration::panel::largest_complete_panel;
use calibration::report::build_report;
use calibration::RatingMatrix;
use common::*;
use std::collections::BTreeMap;

/// 40 items in 20 cases, three full clinicians, the grader, and a fourth clinician who scored
/// only `partial_items` of them.
fn study(partial_items: usize) -> CalibrationInput {
    let mut table = LongTable::default();
    let mut push = |item: usize, rater: &str, score: f64| {
        table.scores.push(ScoreRow {
            item: format!("i{item}"),
            rater: rater.into(),
            dimension: "overall".into(),
            score,
        })
    };
    for item in 0..40 {
        // Scores on 1–5 with a fixed, varied pattern (no random generator needed).
        let truth = 1.0 + ((item * 7) % 5) as f64;
        let nudge = |k: usize| (((item * 3 + k * 5) % 7) as f64 - 3.0) / 3.0;
        for (k, rater) in ["dr_a", "dr_b", "dr_c"].into_iter().enumerate() {
            push(item, rater, (truth + nudge(k)).round().clamp(1.0, 5.0));
        }
        push(item, "grader", (truth + nudge(4)).round().clamp(1.0, 5.0));
        if item < partial_items {
            push(item, "trainee", (truth + nudge(3)).round().clamp(1.0, 5.0));
        }
    }
    for item in 0..40 {
        table.items.insert(
            format!("i{item}"),
            ItemInfo {
                case: Some(format!("c{}", item / 2)),
                groups: BTreeMap::new(),
            },
        );
    }
    CalibrationInput {
        table,
        ..CalibrationInput::default()
    }
}

fn options() -> ReportOptions {
    ReportOptions {
        grader: Some("grader".into()),
        bootstrap_resamples: 200,
        ..ReportOptions::default()
    }
}

#[test]
fn one_partial_reader_is_left_out_of_the_icc_panel_and_named() {
    let input = study(1);
    let report = build_report(&input, &options(), &NoProgress).expect("report");
    let human = &report.dimensions[0].overall.human_human;
    assert_eq!(human.raters, ["dr_a", "dr_b", "dr_c", "trainee"]);
    assert_eq!(human.panel.raters, ["dr_a", "dr_b", "dr_c"]);
    assert_eq!(human.panel.left_out.len(), 1);
    assert_eq!(human.panel.left_out[0].rater, "trainee");
    assert_eq!(human.panel.left_out[0].items_scored, 1);
    assert_eq!(human.panel.n_items, 40);
    assert!(
        human.panel.note.contains("trainee (1 items scored)"),
        "{}",
        human.panel.note
    );

    // The panel's ICC is the ICC of those three clinicians' table, which the trainee's absence
    // from the input leaves unchanged.
    let without = build_report(
        &input.without_raters(&["trainee".to_string()]),
        &options(),
        &NoProgress,
    )
    .expect("report");
    let alone = &without.dimensions[0].overall.human_human;
    assert_eq!(human.icc, alone.icc);
    assert_eq!(human.fleiss_kappa, alone.fleiss_kappa);
    assert!(human.icc.icc2.value().is_some(), "{:?}", human.icc.icc2);
    assert!(human.fleiss_kappa.value().is_some());
    // Krippendorff's α still uses the trainee's score (it handles missing data itself).
    assert_ne!(human.krippendorff_alpha, alone.krippendorff_alpha);
    // The verdict's human ICC2 comes from the panel, and its words name the partial reader.
    let verdict = report.verdict.as_ref().expect("verdict");
    assert_eq!(
        verdict.human_icc2,
        human.icc.icc2.value().map(|v| v.value),
        "ICC2 of the panel"
    );
    assert!(
        verdict
            .summary
            .contains("left out as partial readers: trainee"),
        "{}",
        verdict.summary
    );
    // The grader's ICC (grader as one more rater) uses the same panel.
    let grader = report.dimensions[0]
        .overall
        .grader
        .as_ref()
        .expect("grader");
    assert_eq!(grader.vs_human_mean.icc.raters, 4);
    assert_eq!(grader.vs_human_mean.icc.n, 40);
}

#[test]
fn a_reader_who_scored_nearly_everything_stays_in_the_panel() {
    // 38 of 40: 38 items × 4 clinicians hold more scores than 40 × 3.
    let report = build_report(&study(38), &options(), &NoProgress).expect("report");
    let human = &report.dimensions[0].overall.human_human;
    assert_eq!(human.panel.raters.len(), 4);
    assert!(human.panel.left_out.is_empty());
    assert_eq!(human.icc.n, 38);
    assert_eq!(human.icc.items_dropped, 2);
    assert!(
        !report
            .verdict
            .as_ref()
            .expect("verdict")
            .summary
            .contains("partial"),
        "complete enough panels are not remarked on"
    );
}

#[test]
fn the_panel_is_the_subset_with_the_most_scores() {
    let s = |v: f64| Some(v);
    // Raters 0 and 1 score all six items; rater 2 items 0–3; rater 3 items 0–1.
    // {0,1}: 12 scores, {0,1,2}: 4 × 3 = 12 (tie, more raters wins), {0,1,2,3}: 2 × 4 = 8.
    let rows: Vec<Vec<Option<f64>>> = (0..6)
        .map(|i| {
            let v = i as f64;
            vec![
                s(v),
                s(v + 1.0),
                (i < 4).then_some(v),
                (i < 2).then_some(v + 2.0),
            ]
        })
        .collect();
    let matrix = RatingMatrix::from_rows(&rows);
    assert_eq!(largest_complete_panel(&matrix), [0, 1, 2]);
    // With complete data the panel is everyone.
    let full: Vec<Vec<f64>> = (0..5)
        .map(|i| vec![i as f64, i as f64 + 1.0, 2.0])
        .collect();
    assert_eq!(
        largest_complete_panel(&RatingMatrix::from_complete_rows(&full)),
        [0, 1, 2]
    );
    // The panel's ICC equals the ICC of its columns.
    let panel = matrix.select_columns(&[0, 1, 2]);
    close(
        icc(&panel).icc2.value().expect("ICC2").value,
        icc(&RatingMatrix::from_rows(
            &rows.iter().map(|r| r[..3].to_vec()).collect::<Vec<_>>(),
        ))
        .icc2
        .value()
        .expect("ICC2")
        .value,
        0.0,
        "same table",
    );
}
