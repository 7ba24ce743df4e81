//! The automatic text metrics from the app (docs/metrics.md): the study lead (or a curator)
//! measures every response's rationale against its case's expected reasoning, as
//! `neurorater metrics` does, with progress events and Stop. A thin adapter over
//! `textmetrics::compute`; the calibration report reads what it stores.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use crate::validate;
use cases::progress::Progress;
use cases::store::Store;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tauri::{AppHandle, Emitter, Runtime, State};

/// The event the metrics panel follows: after the model loads and after every stored batch.
pub const METRICS_EVENT: &str = "metrics-progress";

/// The computation in progress, if any: one at a time, stopped through this flag.
#[derive(Default)]
pub struct ActiveMetrics(Mutex<Option<Arc<AtomicBool>>>);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct MetricsProgress {
    done: u64,
    total: u64,
    elapsed_ms: u64,
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

struct EventProgress<R: Runtime> {
    app: AppHandle<R>,
    started: Instant,
    total: AtomicU64,
}

impl<R: Runtime> EventProgress<R> {
    fn emit(&self, done: u64) {
        let payload = MetricsProgress {
            done,
            total: self.total.load(Ordering::Relaxed),
            elapsed_ms: self.started.elapsed().as_millis() as u64,
        };
        // A closed window cannot listen; the computation goes on and its outcome is returned.
        let _ = self.app.emit(METRICS_EVENT, payload);
    }
}

impl<R: Runtime> Progress for EventProgress<R> {
    fn phase(&self, _name: &str, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.emit(0);
    }

    fn advance(&self, done: u64) {
        self.emit(done);
    }
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
    study_id: String,
) -> Result<MetricsOutcome, CommandError> {
    let study_id = validate::id("study_id", &study_id)?.to_owned();
    let path = state.with_store(|store| {
        cases::app::Session::current(store)?.study_lead("Computing the automatic metrics")?;
        Ok(store.path().to_path_buf())
    })?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let mut slot = active.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return Err(CommandError::new(
                ErrorCode::Refused,
                "the metrics are being computed already; wait for that or stop it first",
            ));
        }
        *slot = Some(stop.clone());
    }
    let progress = EventProgress {
        app,
        started: Instant::now(),
        total: AtomicU64::new(0),
    };
    let outcome = tauri::async_runtime::spawn_blocking(move || {
        let model = textmetrics::MiniLm::load(&textmetrics::weights::locate()?)?;
        let mut store = Store::open_existing(&path)?;
        let summary =
            textmetrics::compute::compute_study(&mut store, &study_id, &model, &progress, &stop)?;
        Ok::<_, textmetrics::Error>(MetricsOutcome {
            model: model.identity().to_owned(),
            computed: summary.computed,
            left: summary.left,
            cancelled: summary.cancelled,
        })
    })
    .await;
    *active.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
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
    let slot = active.0.lock().unwrap_or_else(|p| p.into_inner());
    Ok(match &*slot {
        Some(stop) => {
            stop.store(true, Ordering::Relaxed);
            true
        }
        None => false,
    })
}
