//! Raters on different scales: declared per rater (CSV columns, options) or per dimension (a
//! database's rubric); values compared only on one scale or through a declared mapping.

mod common;

use calibration::bootstrap::NoProgress;
use calibration::csv_input::parse_long_csv;
use calibration::estimate::Estimate;
use calibration::input::{CalibrationInput, RaterScale, ReportOptions, ScaleSpec};
use calibration::report::{build_report, Report, ReportError, Section};
use calibration::tables::to_json;
use common::*;

const ONE_TO_FIVE: ScaleSpec = ScaleSpec {
    min: 1.0,
    max: 5.0,
    step: 1.0,
};
const ZERO_TO_TEN: ScaleSpec = ScaleSpec {
    min: 0.0,
    max: 10.0,
    step: 1.0,
};

/// 3 clinicians on 1–5 and a grader on 0–10 scoring 60 items in 20 cases; the grader's score
/// is `grader(latent on 1–5)`, the clinicians' the latent rounded plus a deterministic wobble.
/// `declare` adds the scale columns (the grader's row says 0–10, the clinicians' 1–5).
fn study_csv(declare: bool, grader: impl Fn(f64) -> f64) -> String {
    let mut csv = String::from(if declare {
        "item,rater,score,case,scale_min,scale_max\n"
    } else {
        "item,rater,score,case\n"
    });
    for item in 0..60 {
        let latent = 1.0 + (item * 7 % 41) as f64 / 10.0;
        for (j, rater) in ["dr_a", "dr_b", "dr_c"].into_iter().enumerate() {
            let wobble = [0.0, 0.6, -0.6][(item + j) % 3];
            let s = (latent + wobble).round().clamp(1.0, 5.0);
            let scale = if declare { ",1,5" } else { "" };
            csv.push_str(&format!("i{item},{rater},{s},c{}{scale}\n", item / 3));
        }
        let scale = if declare { ",0,10" } else { "" };
        csv.push_str(&format!(
            "i{item},grader,{},c{}{scale}\n",
            grader(latent),
            item / 3
        ));
    }
    csv
}

/// The grader scores 2.5 × (latent − 1), rounded: 0–10 where the clinicians use 1–5.
fn on_zero_to_ten(latent: f64) -> f64 {
    (2.5 * (latent - 1.0)).round().clamp(0.0, 10.0)
}

fn input(csv: &str) -> CalibrationInput {
    CalibrationInput {
        table: parse_long_csv(csv, "study.csv").expect("valid CSV"),
        ..CalibrationInput::default()
    }
}

fn options() -> ReportOptions {
    ReportOptions {
        grader: Some("grader".into()),
        bootstrap_resamples: 200,
        seed: 9,
        ..ReportOptions::default()
    }
}

fn overall(report: &Report) -> &Section {
    &report.dimensions[0].overall
}

fn refusal<T>(e: &Estimate<T>) -> &str {
    e.reason().expect("refused, not computed")
}

#[test]
fn a_grader_on_another_scale_is_compared_by_ordering_only_and_the_report_says_why() {
    let declared = build_report(
        &input(&study_csv(true, on_zero_to_ten)),
        &options(),
        &NoProgress,
    )
    .expect("report");
    let undeclared = build_report(
        &input(&study_csv(false, on_zero_to_ten)),
        &options(),
        &NoProgress,
    )
    .expect("report");
    let scales = &declared.dimensions[0].scales;
    assert_eq!(scales.clinicians, Some(ONE_TO_FIVE));
    let reason = scales.grader_absolute_refused.as_deref().expect("refused");
    assert!(
        reason.contains("0–10") && reason.contains("1–5") && reason.contains("--map-scale"),
        "{reason}"
    );
    assert_eq!(scales.clinicians_absolute_refused, None);

    let (g, u) = (
        overall(&declared).grader.as_ref().unwrap(),
        overall(&undeclared).grader.as_ref().unwrap(),
    );
    // Orderings stay, identical to the figures without declarations.
    assert_eq!(g.vs_human_mean.pearson, u.vs_human_mean.pearson);
    assert_eq!(g.vs_human_mean.spearman, u.vs_human_mean.spearman);
    assert_eq!(g.vs_human_mean.icc.icc3, u.vs_human_mean.icc.icc3);
    assert_eq!(g.like_for_like, u.like_for_like);
    assert_eq!(
        g.vs_human_mean.bootstrap.pearson_r,
        u.vs_human_mean.bootstrap.pearson_r
    );
    // Values are refused, each with the reason; undeclared, they were computed (and wrong).
    assert!(u.vs_human_mean.bland_altman.value().is_some());
    for (what, why) in [
        ("bias", refusal(&g.vs_human_mean.bland_altman)),
        (
            "calibration line",
            refusal(&g.vs_human_mean.calibration_line),
        ),
        (
            "proportional bias",
            refusal(&g.vs_human_mean.proportional_bias),
        ),
        ("kappa", refusal(&g.vs_human_mean.cohen_kappa.quadratic)),
        ("ICC2", refusal(&g.vs_human_mean.icc.icc2)),
        ("ICC1k", refusal(&g.vs_human_mean.icc.icc1k)),
        ("bootstrap bias", refusal(&g.vs_human_mean.bootstrap.bias)),
        ("bootstrap ICC2", refusal(&g.vs_human_mean.bootstrap.icc2)),
        ("alt test", refusal(&g.alt_test)),
        ("vs dr_a", refusal(&g.vs_each_rater[0].bland_altman)),
        (
            "leave one out",
            refusal(
                &g.leave_one_rater_out[0]
                    .grader_vs_rest
                    .mean_absolute_difference,
            ),
        ),
    ] {
        assert!(why.contains(reason), "{what}: {why}");
    }
    let mad = &g.degradation[1];
    assert_eq!(mad.statistic, "mean_absolute_difference_vs_mean_of_others");
    assert!(mad.grader_human.value().is_none() && mad.difference_interval.is_none());
    assert!(
        mad.human_human.value().is_some(),
        "clinicians share a scale"
    );
    // The clinicians' own agreement is untouched.
    assert_eq!(
        overall(&declared).human_human,
        overall(&undeclared).human_human
    );

    let verdict = declared.verdict.as_ref().unwrap();
    assert_eq!(verdict.bias, None);
    assert_eq!(verdict.alt_test_passed, None);
    assert!(
        verdict.summary.contains("Absolute agreement") && verdict.summary.contains(reason),
        "{}",
        verdict.summary
    );
    let json = to_json(&declared);
    assert!(json.contains("\"grader_absolute_refused\""));
    let html = calibration::html::to_html(&declared);
    assert!(html.contains("Absolute agreement not computed"));
    assert!(html.contains("grader 0–10"));
}

#[test]
fn a_declared_linear_mapping_compares_values_as_if_the_grader_had_scored_on_the_clinicians_scale() {
    let mapped = build_report(
        &input(&study_csv(true, on_zero_to_ten)),
        &ReportOptions {
            linear_rescale: vec!["grader".into()],
            ..options()
        },
        &NoProgress,
    )
    .expect("report");
    // The same study with the grader's scores mapped by hand: 1 + 0.4 x, nothing declared.
    let by_hand = build_report(
        &input(&study_csv(false, |latent| {
            1.0 + 0.4 * on_zero_to_ten(latent)
        })),
        &options(),
        &NoProgress,
    )
    .expect("report");
    let scales = &mapped.dimensions[0].scales;
    assert_eq!(scales.grader_absolute_refused, None);
    let grader = scales.raters.iter().find(|r| r.rater == "grader").unwrap();
    assert!(grader.mapped_linearly);
    assert_eq!(grader.scale, Some(ZERO_TO_TEN));
    assert_eq!(scales.effective("grader"), Some(ONE_TO_FIVE));

    let (m, h) = (
        overall(&mapped).grader.as_ref().unwrap(),
        overall(&by_hand).grader.as_ref().unwrap(),
    );
    let (bm, bh) = (
        m.vs_human_mean.bland_altman.value().expect("bias computed"),
        h.vs_human_mean.bland_altman.value().unwrap(),
    );
    close(bm.bias, bh.bias, 1e-12, "bias");
    close(bm.loa_low, bh.loa_low, 1e-12, "lower limit");
    let (im, ih) = (
        m.vs_human_mean.icc.icc2.value().expect("ICC2 computed"),
        h.vs_human_mean.icc.icc2.value().unwrap(),
    );
    close(im.value, ih.value, 1e-12, "ICC2");
    let (lm, lh) = (
        m.vs_human_mean.calibration_line.value().unwrap(),
        h.vs_human_mean.calibration_line.value().unwrap(),
    );
    close(lm.slope, lh.slope, 1e-12, "calibration slope");
    close(lm.intercept, lh.intercept, 1e-12, "calibration intercept");
    // The bias is the mapped grader's mean minus the clinicians' mean, computed here directly.
    let pairs = &m.vs_human_mean.pairs;
    let direct = pairs.iter().map(|p| p[0] - p[1]).sum::<f64>() / pairs.len() as f64;
    close(bm.bias, direct, 1e-12, "bias from the pairs");
    assert!(pairs.iter().all(|p| (1.0..=5.0).contains(&p[0])));
    assert!(
        mapped
            .verdict
            .as_ref()
            .unwrap()
            .summary
            .contains("mapped linearly from 0–10 onto the clinicians' 1–5"),
        "{}",
        mapped.verdict.as_ref().unwrap().summary
    );
}

#[test]
fn clinicians_on_different_scales_keep_orderings_and_lose_absolute_agreement() {
    // dr_c scored 0–10: twice the others' score.
    let mut csv = String::from("item,rater,score,case\n");
    for item in 0..30 {
        let latent = 1.0 + (item * 3 % 5) as f64;
        for (rater, s) in [
            ("dr_a", latent),
            (
                "dr_b",
                (latent + [0.0, 1.0, -1.0][item % 3]).clamp(1.0, 5.0),
            ),
            ("dr_c", 2.0 * latent),
        ] {
            csv.push_str(&format!("i{item},{rater},{s},c{}\n", item / 2));
        }
    }
    let report = build_report(
        &input(&csv),
        &ReportOptions {
            scale: Some(ONE_TO_FIVE),
            rater_scales: vec![RaterScale {
                rater: Some("dr_c".into()),
                dimension: None,
                scale: ZERO_TO_TEN,
            }],
            ..ReportOptions::default()
        },
        &NoProgress,
    )
    .expect("report");
    let scales = &report.dimensions[0].scales;
    let reason = scales
        .clinicians_absolute_refused
        .as_deref()
        .expect("refused");
    assert!(
        reason.contains("dr_c: 0–10") && reason.contains("dr_a: 1–5"),
        "{reason}"
    );
    assert_eq!(scales.clinicians, None);
    let human = &overall(&report).human_human;
    assert!(human.icc.icc3.value().is_some(), "consistency stays");
    assert!(human.icc.icc3k.value().is_some(), "consistency stays");
    for (what, e) in [
        ("ICC1", refusal(&human.icc.icc1)),
        ("ICC2", refusal(&human.icc.icc2)),
        ("ICC2k", refusal(&human.icc.icc2k)),
        ("alpha", refusal(&human.krippendorff_alpha.interval)),
        ("fleiss", refusal(&human.fleiss_kappa)),
        ("variance", refusal(&human.variance_components)),
    ] {
        assert!(e.contains(reason), "{what}: {e}");
    }

    // Mapping dr_c onto the others' scale gives back absolute agreement.
    let mapped = build_report(
        &input(&csv),
        &ReportOptions {
            scale: Some(ONE_TO_FIVE),
            rater_scales: vec![RaterScale {
                rater: Some("dr_c".into()),
                dimension: None,
                scale: ZERO_TO_TEN,
            }],
            linear_rescale: vec!["dr_c".into()],
            ..ReportOptions::default()
        },
        &NoProgress,
    )
    .expect("report");
    assert_eq!(
        mapped.dimensions[0].scales.clinicians_absolute_refused,
        None
    );
    assert!(overall(&mapped).human_human.icc.icc2.value().is_some());
}

#[test]
fn each_dimension_is_checked_against_its_own_declared_scale() {
    // Overall on 1–5 (the default), safety on 0–2 declared for every rater (as a rubric does).
    let mut csv = String::from("item,rater,score,dimension,case\n");
    for item in 0..12 {
        for rater in ["dr_a", "dr_b"] {
            let overall = 1 + (item + rater.len()) % 5;
            let safety = item % 3;
            csv.push_str(&format!("i{item},{rater},{overall},overall,c{item}\n"));
            csv.push_str(&format!("i{item},{rater},{safety},safety,c{item}\n"));
        }
    }
    let mut data = input(&csv);
    data.table.scales.push(RaterScale {
        rater: None,
        dimension: Some("safety".into()),
        scale: ScaleSpec {
            min: 0.0,
            max: 2.0,
            step: 1.0,
        },
    });
    let options = ReportOptions {
        scale: Some(ONE_TO_FIVE),
        ..ReportOptions::default()
    };
    let report = build_report(&data, &options, &NoProgress).expect("0 is on safety's scale");
    let safety = report
        .dimensions
        .iter()
        .find(|d| d.dimension == "safety")
        .unwrap();
    assert_eq!(safety.scales.clinicians.map(|s| s.max), Some(2.0));
    assert_eq!(
        safety.scales.categories().map(|c| c.levels().to_vec()),
        Some(vec![0.0, 1.0, 2.0]),
        "κ and the consensus use safety's three levels"
    );
    assert!(safety.overall.human_human.fleiss_kappa.value().is_some());
    // A 3 on safety is off its scale even though it is on the overall one.
    data.table.scores[1].score = 3.0;
    assert_eq!(
        build_report(&data, &options, &NoProgress).unwrap_err(),
        ReportError::ScoreOutsideScale {
            item: "i0".into(),
            rater: "dr_a".into(),
            dimension: "safety".into(),
            score: 3.0,
            min: 0.0,
            max: 2.0,
        }
    );
}

#[test]
fn scale_columns_are_checked_line_by_line() {
    let csv = "item,rater,score,scale_min,scale_max,scale_step\n\
               a,grader,7,0,10,\n\
               b,grader,4,1,5,1\n\
               c,grader,11,0,10,1\n\
               d,dr_a,3,x,5,1\n\
               e,dr_a,3,,,\n\
               f,dr_a,3,5,1,1\n";
    let error = parse_long_csv(csv, "s.csv").unwrap_err().to_string();
    assert_eq!(
        error,
        "s.csv:3: scale_min: `grader` on `overall` has the scale 0–10 at line 2, here 1–5; one rater scores one dimension on one scale\n\
         s.csv:4: score: 11 is outside the row's scale 0–10\n\
         s.csv:5: scale_min: `x` is not a number (a scale needs scale_min and scale_max)\n\
         s.csv:7: scale_step: min 5, max 1, step 1 do not describe a scale (need step > 0, max ≥ min, at most 1000 levels)"
    );
    let half = parse_long_csv("item,rater,score,scale_min\na,r,1,0\n", "h.csv")
        .unwrap_err()
        .to_string();
    assert_eq!(
        half,
        "h.csv:1: scale_max: scale_min and scale_max come together (scale_step is optional, default 1)"
    );
    let table = parse_long_csv(
        "item,rater,score,scale_min,scale_max\na,grader,7,0,10\nb,grader,3,0,10\nb,dr_a,3,,\n",
        "ok.csv",
    )
    .unwrap();
    assert_eq!(
        table.scales,
        vec![RaterScale {
            rater: Some("grader".into()),
            dimension: Some("overall".into()),
            scale: ZERO_TO_TEN,
        }]
    );
    assert!(
        table.grouping_columns.is_empty(),
        "scale columns are no groups"
    );
}

#[test]
fn contradictory_or_impossible_declarations_are_errors() {
    let data = input(&study_csv(true, on_zero_to_ten));
    let conflicting = ReportOptions {
        rater_scales: vec![RaterScale {
            rater: Some("grader".into()),
            dimension: Some("overall".into()),
            scale: ONE_TO_FIVE,
        }],
        ..options()
    };
    assert_eq!(
        build_report(&data, &conflicting, &NoProgress)
            .unwrap_err()
            .to_string(),
        "scale: grader on 'overall' is declared both 0–10 and 1–5"
    );
    let unknown = ReportOptions {
        linear_rescale: vec!["gpt".into()],
        ..options()
    };
    assert!(matches!(
        build_report(&data, &unknown, &NoProgress).unwrap_err(),
        ReportError::MappedRaterNotFound { name, .. } if name == "gpt"
    ));
    // A mapping needs the rater's own scale: nothing declared is an error, not a no-op.
    let undeclared = ReportOptions {
        linear_rescale: vec!["grader".into()],
        ..options()
    };
    let error = build_report(
        &input(&study_csv(false, on_zero_to_ten)),
        &undeclared,
        &NoProgress,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("its scale is not declared"), "{error}");
    let clinicians_only = ReportOptions {
        rater_scales: vec![RaterScale {
            rater: Some("dr_a".into()),
            dimension: None,
            scale: ONE_TO_FIVE,
        }],
        linear_rescale: vec!["grader".into()],
        ..options()
    };
    let error = build_report(
        &input(&study_csv(false, on_zero_to_ten)),
        &clinicians_only,
        &NoProgress,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("its scale is not declared"), "{error}");
}
