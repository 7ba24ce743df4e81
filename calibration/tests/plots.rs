//! The plots the app shows are the HTML report's own, safe to inline under the app's CSP: no
//! scripts, no style attributes, labels escaped.

use calibration::bootstrap::NoProgress;
use calibration::csv_input::parse_long_csv;
use calibration::html::{plots, to_html};
use calibration::input::{CalibrationInput, ReportOptions, ScaleSpec};
use calibration::report::build_report;

/// Two dimensions, 3 clinicians and a grader on 24 items; one subgroup value carries markup.
fn report() -> calibration::report::Report {
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
    let input = CalibrationInput {
        table: parse_long_csv(&csv, "plots.csv").expect("valid CSV"),
        ..CalibrationInput::default()
    };
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
            assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"), "{svg}");
            assert!(
                html.contains(svg.as_str()),
                "the HTML report draws the same picture"
            );
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
}
