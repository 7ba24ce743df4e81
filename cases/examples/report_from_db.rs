//! Times the calibration report of a study database as the app builds it: the first numbers (the
//! scores read and the headline built from them, handed over while the rest is read), reading the
//! study in one snapshot, the headline (the verdict's dimension alone) again, and the whole
//! report with every dimension and subgroup. Run by `scripts/bench/calibration_scale.sh` (figures in
//! docs/performance.md, "Calibration report at a study's size").
//!
//!     cargo build --release -p neurorater-cases --example report_from_db
//!     target/release/examples/report_from_db DB GRADER [ROUNDS] [RESAMPLES]
//!
//! Prints one JSON object: the study's size and the seconds of each step in every round.

use calibration::input::ReportOptions;
use calibration::progress::NoProgress;
use cases::app::calibration::study_report_with_headline;
use cases::app::Session;
use cases::store::Store;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: report_from_db DB GRADER [ROUNDS] [RESAMPLES]");
        return ExitCode::from(2);
    }
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3);
    let resamples: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(2000);
    match run(Path::new(&args[0]), &args[1], rounds, resamples) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn run(db: &Path, grader: &str, rounds: usize, resamples: usize) -> Result<String, String> {
    let store = Store::open_existing(db).map_err(|e| e.to_string())?;
    let study_id: String = store
        .read()
        .query_row(
            "SELECT study_id FROM studies ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .map_err(|e| format!("{}: no study: {e}", db.display()))?;
    let lead = Session::command_line();
    let options = ReportOptions {
        grader: Some(grader.to_owned()),
        bootstrap_resamples: resamples,
        ..ReportOptions::default()
    };
    let (mut read, mut headline, mut whole) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_numbers = Vec::new();
    let mut size = String::new();
    for _ in 0..rounds {
        let started = Instant::now();
        // What the app's view waits for before it shows numbers: the scores read and the
        // headline built from them, handed over while the rest of the study is read.
        let mut headline_at = None;
        let study = study_report_with_headline(&store, &lead, &study_id, options.clone(), |_| {
            headline_at = Some(started.elapsed().as_secs_f64());
        })
        .map_err(|e| e.to_string())?;
        read.push(started.elapsed().as_secs_f64());
        first_numbers.push(headline_at.unwrap_or(f64::NAN));
        let started = Instant::now();
        study.headline(&NoProgress).map_err(|e| e.to_string())?;
        headline.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let report = study.build(&NoProgress).map_err(|e| e.to_string())?;
        whole.push(started.elapsed().as_secs_f64());
        let groups: usize = report.dimensions.iter().map(|d| d.groups.len()).sum();
        size = format!(
            "\"items\": {}, \"cases\": {}, \"scores\": {}, \"dimensions\": {}, \"subgroup_sections\": {}",
            report.summary.items,
            report.summary.cases,
            report.summary.scores,
            report.dimensions.len(),
            groups
        );
    }
    let list = |v: &[f64]| {
        v.iter()
            .map(|s| format!("{s:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(format!(
        "{{{size}, \"resamples\": {resamples}, \"first_numbers_s\": [{}], \"read_s\": [{}], \"headline_s\": [{}], \"report_s\": [{}]}}",
        list(&first_numbers),
        list(&read),
        list(&headline),
        list(&whole)
    ))
}
