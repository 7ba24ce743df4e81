//! `neurorater scaffold`: a PACS export to a study bundle (FORMATS §7), with a progress bar and
//! Ctrl-C leaving nothing behind.

use crate::progress::Bar;
use crate::Failure;
use cases::scaffold::{scaffold, Outcome, ScaffoldOptions};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args)]
pub struct ScaffoldArgs {
    /// Folders (any depth) or files exported by a PACS, a CD or a research archive.
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// The bundle folder to write (new or empty); the key goes beside it as BUNDLE.key.csv.
    #[arg(long)]
    out: PathBuf,
    /// The study id in study.json (default: the bundle folder's name).
    #[arg(long)]
    study_id: Option<String>,
}

pub fn run(args: &ScaffoldArgs) -> Result<(), Failure> {
    let cancel = ctrl_c_flag()?;
    let options = ScaffoldOptions {
        study_id: args.study_id.clone(),
    };
    let bar = Bar::new();
    let outcome = scaffold(&args.sources, &args.out, &options, &bar, &cancel);
    bar.finish();
    let report = match outcome? {
        Outcome::Cancelled => {
            return Err(Failure::Internal(
                "stopped: nothing was written; run the command again to scaffold".into(),
            ))
        }
        Outcome::Written(report) => report,
    };
    for skipped in &report.skipped {
        println!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
    for note in &report.notes {
        println!("note: {note}");
    }
    let mut series = 0;
    let mut files = 0;
    for case in &report.cases {
        let shown: Vec<String> = case
            .series
            .iter()
            .map(|s| {
                let basis = s
                    .label_basis
                    .map_or("no telling attribute".to_owned(), |b| format!("from {b}"));
                let files = if s.files == 1 { "1 file" } else { "files" };
                let count = if s.files == 1 {
                    String::new()
                } else {
                    format!("{} ", s.files)
                };
                format!("{} ({}?, {basis}; {count}{files})", s.id, s.label)
            })
            .collect();
        let to_complete: Vec<String> = case
            .to_complete
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok()?.as_str().map(String::from))
            .collect();
        println!(
            "{}: {}; to complete: {}",
            case.id,
            shown.join(", "),
            to_complete.join(", ")
        );
        series += case.series.len();
        files += case.series.iter().map(|s| s.files).sum::<usize>();
    }
    println!(
        "scaffolded {} files into {}: {} cases, {} series, {} image files; {} skipped. The key \
         (original study → case id) is {}: keep it apart from the bundle",
        report.files_found,
        report.bundle.display(),
        report.cases.len(),
        series,
        files,
        report.skipped.len(),
        report.key.display()
    );
    Ok(())
}

/// A flag Ctrl-C sets, so the scan stops between files and removes what it wrote.
fn ctrl_c_flag() -> Result<Arc<AtomicBool>, Failure> {
    let flag = Arc::new(AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(format!("cannot watch for Ctrl-C: {e}")))?;
    let set = Arc::clone(&flag);
    std::thread::spawn(move || {
        runtime.block_on(crate::run::stop_signal());
        set.store(true, Ordering::Relaxed);
    });
    Ok(flag)
}
