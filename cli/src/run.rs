//! `neurorater grade` and `respond`: a run of the `runner` crate with a progress bar, stopped
//! cleanly by Ctrl-C.

use crate::data::db_path;
use crate::Failure;
use cases::store::Store;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use runner::{RunError, RunProgress, RunSummary, Spec};
use std::path::PathBuf;

#[derive(Args)]
pub struct GradeArgs {
    #[arg(long)]
    db: Option<PathBuf>,
    /// The study to grade (by default the database's only study).
    #[arg(long)]
    study: Option<String>,
    /// The grader spec (TOML, docs/formats.md §6).
    #[arg(long)]
    spec: PathBuf,
}

#[derive(Args)]
pub struct RespondArgs {
    #[arg(long)]
    db: Option<PathBuf>,
    /// The study whose tasks to ask (by default the database's only study).
    #[arg(long)]
    study: Option<String>,
    /// The model spec (TOML, docs/formats.md §6).
    #[arg(long)]
    spec: PathBuf,
    /// Samples per task in all (sample indexes 0..K); those already stored are not asked again.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    samples: u32,
}

impl From<RunError> for Failure {
    fn from(error: RunError) -> Self {
        match error {
            RunError::Store(e) => e.into(),
            e if e.is_input() => Failure::Input(vec![e.to_string()]),
            e => Failure::Internal(e.to_string()),
        }
    }
}

pub fn grade(args: &GradeArgs) -> Result<(), Failure> {
    let spec = Spec::load(&args.spec)?;
    let mut store = Store::open_existing(&db_path(args.db.clone())?)?;
    let study = crate::calibrate::pick_study(&store, args.study.as_deref())?;
    let bar = RunBar::new();
    let summary = runtime()?.block_on(runner::grade(
        &mut store,
        &study,
        &spec,
        &bar,
        stop_signal(),
    ));
    bar.0.finish_and_clear();
    report("graded", &summary?)
}

pub fn respond(args: &RespondArgs) -> Result<(), Failure> {
    let spec = Spec::load(&args.spec)?;
    let mut store = Store::open_existing(&db_path(args.db.clone())?)?;
    let study = crate::calibrate::pick_study(&store, args.study.as_deref())?;
    let bar = RunBar::new();
    let summary = runtime()?.block_on(runner::run::respond(
        &mut store,
        &study,
        &spec,
        args.samples,
        &bar,
        stop_signal(),
    ));
    bar.0.finish_and_clear();
    report("answered", &summary?)
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(format!("cannot start the async runtime: {e}")))
}

/// Resolves on Ctrl-C (SIGINT); if the handler cannot be installed, never.
pub(crate) async fn stop_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Exit 0 when every item is stored, 1 when some failed or the run was stopped (listed).
fn report(verb: &str, summary: &RunSummary) -> Result<(), Failure> {
    let tokens = summary.prompt_tokens + summary.completion_tokens;
    let cost = summary
        .cost
        .map(|c| format!(", cost {c:.4}"))
        .unwrap_or_default();
    let skipped = match summary.skipped.len() {
        0 => String::new(),
        n => format!("; {n} task(s) skipped, listed above"),
    };
    say!(
        "{verb} {} of {} missing item(s); {} failed{skipped}; {tokens} tokens{cost}",
        summary.stored,
        summary.total,
        summary.failed.len()
    );
    if summary.cancelled {
        eprintln!("stopped: run the same command again to send what is still missing");
    }
    if summary.failed.is_empty() && !summary.cancelled {
        return Ok(());
    }
    let mut lines: Vec<String> = summary
        .failed
        .iter()
        .map(|(item, why)| format!("failed: {item}: {why}"))
        .collect();
    if summary.cancelled {
        lines.push("the run was stopped before every item was done".into());
    }
    Err(Failure::Internal(lines.join("\n")))
}

struct RunBar(ProgressBar);

impl RunBar {
    fn new() -> RunBar {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "[{bar:30}] {pos}/{len} {per_sec} {msg} ETA {eta} ({elapsed})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        RunBar(bar)
    }
}

impl RunProgress for RunBar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }

    fn stored(&self, done: u64, tokens: u64, cost: Option<f64>) {
        self.0.set_position(done);
        let cost = cost.map(|c| format!(", cost {c:.4}")).unwrap_or_default();
        self.0.set_message(format!("{tokens} tokens{cost}"));
    }

    fn failed(&self, item: &str, reason: &str) {
        self.0.println(format!("failed: {item}: {reason}"));
    }

    fn skipped(&self, task: &str, reason: &str) {
        // On stderr whether or not a terminal shows the bar (its own println is dropped without
        // one): a pipeline's log must say what was never sent.
        self.0.suspend(|| eprintln!("skipped: {task}: {reason}"));
    }
}
