//! Builds the calibration report from a long ratings CSV; a development aid for looking at the
//! HTML and for timing the report against Python (scripts/reference/calibration/compare_speed.py).
//!
//!     cargo run --release -p neurorater-calibration --example report_from_csv -- \
//!         RATINGS.csv GRADER OUT.(json|html) [RESAMPLES] [SCALE_MIN SCALE_MAX SCALE_STEP]
//!
//! Prints the seconds spent building the report (parsing excluded) on stdout.

use calibration::bootstrap::NoProgress;
use calibration::csv_input::parse_long_csv;
use calibration::input::{CalibrationInput, ReportOptions, ScaleSpec};
use calibration::report::build_report;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!(
            "usage: report_from_csv RATINGS.csv GRADER OUT.(json|html) [RESAMPLES] [MIN MAX STEP]"
        );
        return ExitCode::from(2);
    }
    let text = match std::fs::read_to_string(&args[0]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", args[0]);
            return ExitCode::from(2);
        }
    };
    let table = match parse_long_csv(&text, &args[0]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let number = |i: usize| args.get(i).and_then(|a| a.parse::<f64>().ok());
    let options = ReportOptions {
        grader: Some(args[1].clone()),
        bootstrap_resamples: args.get(3).and_then(|a| a.parse().ok()).unwrap_or(2000),
        scale: match (number(4), number(5), number(6)) {
            (Some(min), Some(max), Some(step)) => Some(ScaleSpec { min, max, step }),
            _ => None,
        },
        ..ReportOptions::default()
    };
    let input = CalibrationInput {
        table,
        ..CalibrationInput::default()
    };
    let started = Instant::now();
    let report = match build_report(&input, &options, &NoProgress) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let rendered = if args[2].ends_with(".html") {
        calibration::html::to_html(&report)
    } else {
        calibration::tables::to_json(&report)
    };
    println!("{:.4}", started.elapsed().as_secs_f64());
    if let Err(e) = std::fs::write(&args[2], rendered) {
        eprintln!("{}: {e}", args[2]);
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
