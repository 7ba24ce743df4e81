//! `metrics`: the automatic text metrics of a study's responses (MiniLM cosine, BERTScore,
//! ROUGE-L against the expected reasoning), computed where missing and cached in the database.

use crate::calibrate::pick_study;
use crate::data::db_path;
use crate::progress::Bar;
use crate::Failure;
use cases::store::Store;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args)]
pub struct MetricsArgs {
    /// The database (default: the app's).
    #[arg(long)]
    db: Option<PathBuf>,
    /// The study, when the database holds several.
    #[arg(long)]
    study: Option<String>,
}

impl From<textmetrics::Error> for Failure {
    fn from(error: textmetrics::Error) -> Self {
        use textmetrics::Error::*;
        match error {
            Store(e) => e.into(),
            WeightsMissing { .. } | BadModelFile { .. } => Failure::Input(vec![error.to_string()]),
            other => Failure::Internal(other.to_string()),
        }
    }
}

/// Who the audit log names for the metrics this command stores.
const AUDIT_ACTOR: &str = "neurorater metrics";

pub fn run(args: &MetricsArgs) -> Result<(), Failure> {
    // The model first: without it nothing is opened.
    let model = textmetrics::MiniLm::load(&textmetrics::weights::locate()?)?;
    let mut store = Store::open_existing(&db_path(args.db.clone())?)?;
    let study = pick_study(&store, args.study.as_deref())?;
    let cancel = stop_on_ctrl_c();
    let bar = Bar::new();
    let summary =
        textmetrics::compute::compute_study(&mut store, &study, &model, &bar, &cancel, AUDIT_ACTOR);
    bar.finish();
    let summary = summary?;
    println!(
        "text metrics: {} response(s) measured with {}",
        summary.computed,
        model.identity()
    );
    if summary.cancelled {
        return Err(Failure::Internal(format!(
            "stopped with {} response(s) left: run the same command again to measure them",
            summary.left
        )));
    }
    Ok(())
}

/// A flag Ctrl-C (SIGINT) sets; the work checks it between stored batches.
fn stop_on_ctrl_c() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        if runtime.block_on(tokio::signal::ctrl_c()).is_ok() {
            set.store(true, Ordering::Relaxed);
        }
    });
    flag
}
