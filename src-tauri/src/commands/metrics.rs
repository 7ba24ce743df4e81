//! The automatic text metrics from the app (docs/metrics.md): the study lead (or a curator)
//! measures every response's rationale against its case's expected reasoning, as
//! `neurorater metrics` does, with progress events and Stop. A thin adapter over
//! `textmetrics::compute`; the calibration report reads what it stores.

use crate::error::{CommandError, ErrorCode};
use crate::long_work::{EventProgress, LongWork, Overlap};
use crate::state::AppState;
use cases::ids::Id;
use cases::store::Store;
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};

/// The event the metrics panel follows: after the model loads and after every stored batch.
pub const METRICS_EVENT: &str = "metrics-progress";

/// Who the audit log names for the metrics computed here: the app, as `neurorater metrics` names
/// the CLI, so that the log tells which front end measured a batch.
const AUDIT_ACTOR: &str = "neurorater-app metrics";

/// The computation in progress, if any: one at a time, stopped through this.
pub struct ActiveMetrics(LongWork);

impl Default for ActiveMetrics {
    fn default() -> Self {
        // Every batch is stored as it finishes: two computations would measure the same
        // responses twice.
        ActiveMetrics(LongWork::new(Overlap::Refuse(
            "the metrics are being computed already; wait for that or stop it first",
        )))
    }
}

/// What a computation did: the model it measured with, how many responses it stored, and how
/// many were left when it was stopped.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct MetricsOutcome {
    pub model: String,
    pub computed: usize,
    pub left: usize,
    pub cancelled: bool,
}

fn metrics_error(error: textmetrics::Error) -> CommandError {
    use textmetrics::Error as E;
    match error {
        E::Store(e) => e.into(),
        // The message names the missing file and `bash scripts/setup.sh`.
        E::WeightsMissing { .. } | E::BadModelFile { .. } => {
            CommandError::new(ErrorCode::NotFound, error.to_string())
        }
        other => CommandError::new(ErrorCode::Database, other.to_string()),
    }
}

/// Computes the study's missing or stale text metrics with all-MiniLM-L6-v2 from
/// `NEURORATER_MINILM_DIR` or the cache folder `scripts/setup.sh` fills (nothing is downloaded),
/// reporting through [`METRICS_EVENT`]. Runs on its own connection to the database file, so the
/// app stays usable; every batch is stored as it finishes, so Stop keeps what was measured.
#[tauri::command]
#[specta::specta]
pub async fn metrics_compute<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    active: State<'_, ActiveMetrics>,
    study_id: Id,
) -> Result<MetricsOutcome, CommandError> {
    let path = state.with_store(|store| {
        cases::app::workbench::open_metrics(store)?;
        Ok(store.path().to_path_buf())
    })?;
    let computing = active.0.start()?;
    let progress = EventProgress::new(app, METRICS_EVENT, 0, &computing);
    let stop = computing.stop();
    let outcome = tauri::async_runtime::spawn_blocking(move || {
        let model = textmetrics::MiniLm::load(&textmetrics::weights::locate()?)?;
        let mut store = Store::open_existing(&path)?;
        let summary = textmetrics::compute::compute_study(
            &mut store,
            &study_id,
            &model,
            &progress,
            stop.flag(),
            AUDIT_ACTOR,
        )?;
        Ok::<_, textmetrics::Error>(MetricsOutcome {
            model: model.identity().to_owned(),
            computed: summary.computed,
            left: summary.left,
            cancelled: summary.cancelled,
        })
    })
    .await;
    drop(computing);
    outcome
        .map_err(|e| {
            CommandError::new(
                ErrorCode::Database,
                format!("computing the metrics stopped unexpectedly: {e}"),
            )
        })?
        .map_err(metrics_error)
}

/// Stops the computation after the batch in flight; every stored batch is kept. False when
/// nothing was being computed.
#[tauri::command]
#[specta::specta]
pub async fn metrics_cancel(active: State<'_, ActiveMetrics>) -> Result<bool, CommandError> {
    Ok(active.0.cancel())
}
