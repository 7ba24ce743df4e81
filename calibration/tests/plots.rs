//! The plots the app shows are the HTML report's own, safe to inline under the app's CSP: no
//! scripts, no style attributes, labels escaped.

use calibration::bootstrap::NoProgress;
use calibration::csv_input::parse_long_csv;
use calibration::html::{plots, to_html};
use calibration::input::{
    CalibrationInput, CheckedResponse, MissedLesion, RepeatRead, ReportOptions, ScaleSpec,
};
use calibration::report::build_report;

/// Two dimensions, 3 clinicians and a grader on 24 items; one subgroup value carries markup.
fn report() -> calibration::report::Report {
    report_with(|_| {})
}

fn report_with(extend: impl FnOnce(&mut CalibrationInput)) -> calibration::report::Report {
    let mut csv = String::from("item,rater,score,dimension,site\n");
    for item in 0..24 {
        let site = if item % 2 == 0 {
            "<b>north</b> & co"
        } else {
            "south"
        };
        for (rater, shift) in [("dr_a", 0), ("dr_b", 1), ("dr_c", 0), ("grader", 1)] {
            for dimension in ["overall", "safety"] {
                let score = 1 + (item * 7 + shift + rater.len()) % 5;
                csv.push_str(&format!("i{item},{rater},{score},{dimension},{site}\n"));
            }
        }
    }
    let mut input = CalibrationInput {
        table: parse_long_csv(&csv, "plots.csv").expect("valid CSV"),
        ..CalibrationInput::default()
    };
    extend(&mut input);
    let options = ReportOptions {
        grader: Some("grader".into()),
        scale: Some(ScaleSpec {
            min: 1.0,
            max: 5.0,
            step: 1.0,
        }),
        bootstrap_resamples: 50,
        ..ReportOptions::default()
    };
    build_report(&input, &options, &NoProgress).expect("report")
}

#[test]
fn every_dimension_has_the_html_reports_own_plots_and_they_are_inert() {
    let report = report();
    let plots = plots(&report);
    let html = to_html(&report);
    let names: Vec<&str> = plots
        .dimensions
        .iter()
        .map(|d| d.dimension.as_str())
        .collect();
    assert_eq!(names, ["overall", "safety"]);
    for d in &plots.dimensions {
        for svg in [&d.scatter, &d.bland_altman, &d.confusion, &d.forest] {
            assert_drawn_and_inert(svg, &html);
        }
        assert!(
            d.forest
                .contains("site = &lt;b&gt;north&lt;/b&gt; &amp; co"),
            "{}",
            d.forest
        );
        assert!(!d.forest.contains("<b>"));
    }
    assert!(plots.captions.forest.contains("r = 0.90"));
    assert!(
        plots.error_distribution.is_empty(),
        "a CSV has no error labels"
    );
    assert_eq!(plots.intra_rater, None, "a CSV has no repeat reads");
    assert_eq!(plots.missed_findings, None, "a CSV has no ground truth");
}

fn assert_drawn_and_inert(svg: &str, html: &str) {
    assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"), "{svg}");
    assert!(html.contains(svg), "the HTML report draws the same picture");
    let lower = svg.to_lowercase();
    for forbidden in [
        "<script",
        "style=",
        "javascript:",
        "onload",
        "<foreignobject",
        "href",
    ] {
        assert!(!lower.contains(forbidden), "{forbidden} in {svg}");
    }
}

#[test]
fn test_retest_and_missed_finding_plots_are_the_html_reports_own_and_escape_names() {
    let rater = "<i>dr</i> & co";
    let model = "<m>";
    let report = report_with(|input| {
        for item in 0..8 {
            input.repeat_reads.push(RepeatRead {
                rater: rater.into(),
                item: format!("i{item}"),
                first: f64::from(1 + item % 5),
                repeat: f64::from(1 + (item + item / 4) % 5),
            });
        }
        input.missed_findings.checked = (0..4)
            .map(|i| CheckedResponse {
                item: format!("i{i}"),
                case: format!("i{i}"),
                model: model.into(),
                lesions: 2,
            })
            .collect();
        input.missed_findings.missed = vec![MissedLesion {
            item: "i1".into(),
            lesion_id: "L1".into(),
            description: "left frontal <lesion>".into(),
            location: "FLAIR".into(),
        }];
    });
    let plots = plots(&report);
    let html = to_html(&report);
    let intra = plots.intra_rater.expect("a test-retest plot");
    let missed = plots.missed_findings.expect("a missed-findings plot");
    for svg in [&intra.svg, &missed.svg] {
        assert_drawn_and_inert(svg, &html);
    }
    assert!(
        intra.svg.contains("&lt;i&gt;dr&lt;/i&gt; &amp; co (n 8)"),
        "{}",
        intra.svg
    );
    assert!(intra.svg.contains("pooled (n 8)"), "{}", intra.svg);
    assert!(missed.svg.contains("&lt;m&gt;"), "{}", missed.svg);
    // 1 of 8 lesion checks, 12.5 %, drawn without decimals (Rust rounds the tie to even).
    assert!(missed.svg.contains(">12%<"), "{}", missed.svg);
    assert!(html.contains("left frontal &lt;lesion&gt;"));
    assert!(!html.contains("<lesion>") && !html.contains("<i>dr"));
}
