//! The grader workbench (docs/runs.md, "In the app"): grader versions and their prompt diff, the
//! development/test split's agreement and the confirmation that opens the test items, runs of a
//! grader or model with live progress and cancel, the disagreement browser and drift. The study
//! lead's or a curator's: every command opens the lead's session `cases::app::workbench::open`
//! decides (refused while a rater reads blinded here). Thin adapters over `runner` and
//! `cases::app::workbench`.

use crate::error::{CommandError, ErrorCode};
use crate::long_work::{LongWork, Overlap};
use crate::state::AppState;
use calibration::version_drift::VersionDrift;
use cases::app::{workbench, LeadSession};
use cases::grader_workbench::{Disagreement, GraderOnSplit, ItemSideBySide};
use cases::ids::{Id, Key};
use cases::store::Store;
use runner::record::Kind;
use runner::versions::{self, DiffLine};
use runner::{RunError, RunProgress, RunSummary, Spec};
use serde::Serialize;
use std::sync::Mutex;
use tauri::{AppHandle, Emitter, Runtime, State};

/// The event a run reports through, after every stored result or failure.
pub const RUN_EVENT: &str = "run-progress";
/// Spec names and prompts come from the webview; these bound them.
const MAX_NAME: usize = 200;
const MAX_PROMPT_BYTES: usize = 100_000;
/// More samples than pass@k needs is a typo, not a study.
const MAX_SAMPLES: u32 = 100;
/// The run in progress, if any: one at a time, stopped through this.
pub struct ActiveRun(LongWork);

impl Default for ActiveRun {
    fn default() -> Self {
        // A run stores each result as it arrives: two at once would race to score the same items.
        ActiveRun(LongWork::new(Overlap::Refuse(
            "a run is already going; wait for it or stop it first",
        )))
    }
}

fn run_error(error: RunError) -> CommandError {
    let code = match &error {
        RunError::Stopped(_) => ErrorCode::Refused,
        RunError::Internal(_) => ErrorCode::Database,
        _ => ErrorCode::InvalidArgument,
    };
    match error {
        RunError::Store(e) => e.into(),
        other => CommandError::new(code, other.to_string()),
    }
}

fn name(field: &str, value: &str) -> Result<String, CommandError> {
    let value = value.trim();
    if value.is_empty() || value.len() > MAX_NAME || value.chars().any(char::is_control) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: a name of 1 to {MAX_NAME} characters without control characters"),
        ));
    }
    Ok(value.to_owned())
}

fn bounded_text(field: &str, value: &str) -> Result<(), CommandError> {
    if value.len() > MAX_PROMPT_BYTES {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: longer than {MAX_PROMPT_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// A run spec as the window sees it: the runner's `Spec` with its seed as a decimal string (a spec
/// file may set any `i64`, which a JavaScript number would round; `cases::wide`). Every field is
/// taken by name, so a field added to `Spec` fails to compile here until the window carries it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct WindowSpec {
    pub name: String,
    pub endpoint: String,
    pub model: String,
    pub api_key_env: Option<String>,
    pub temperature: f64,
    #[serde(with = "cases::wide::i64_string")]
    #[specta(type = String)]
    pub seed: i64,
    pub max_tokens: u32,
    pub concurrency: u32,
    pub prompt: Option<String>,
    pub requests_per_minute: Option<u32>,
    pub price_per_input_token: Option<f64>,
    pub price_per_output_token: Option<f64>,
    pub max_retries: u32,
    pub timeout_seconds: f64,
}

impl From<Spec> for WindowSpec {
    fn from(spec: Spec) -> Self {
        let Spec {
            name,
            endpoint,
            model,
            api_key_env,
            temperature,
            seed,
            max_tokens,
            concurrency,
            prompt,
            requests_per_minute,
            price_per_input_token,
            price_per_output_token,
            max_retries,
            timeout_seconds,
        } = spec;
        Self {
            name,
            endpoint,
            model,
            api_key_env,
            temperature,
            seed,
            max_tokens,
            concurrency,
            prompt,
            requests_per_minute,
            price_per_input_token,
            price_per_output_token,
            max_retries,
            timeout_seconds,
        }
    }
}

/// A stored spec as the window sees it (`versions::StoredSpec` with a `WindowSpec`).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct WindowStoredSpec {
    pub spec: WindowSpec,
    pub spec_sha256: String,
    pub bound_at: String,
    pub stored: i64,
}

impl From<versions::StoredSpec> for WindowStoredSpec {
    fn from(stored: versions::StoredSpec) -> Self {
        let versions::StoredSpec {
            spec,
            spec_sha256,
            bound_at,
            stored,
        } = stored;
        Self {
            spec: spec.into(),
            spec_sha256,
            bound_at,
            stored,
        }
    }
}

/// Every grader version stored (with `model`, every model spec), oldest first.
#[tauri::command]
#[specta::specta]
pub async fn workbench_versions(
    state: State<'_, AppState>,
    model: Option<bool>,
) -> Result<Vec<WindowStoredSpec>, CommandError> {
    let kind = if model == Some(true) {
        Kind::Model
    } else {
        Kind::Grader
    };
    state.with_store(|store| {
        workbench::open(store)?;
        let stored = versions::stored_specs(store, kind).map_err(run_error)?;
        Ok(stored.into_iter().map(WindowStoredSpec::from).collect())
    })
}

/// Adds a grader (or model) spec from its TOML text, as a spec file for `neurorater grade`.
#[tauri::command]
#[specta::specta]
pub async fn workbench_add_spec(
    state: State<'_, AppState>,
    toml: String,
    model: bool,
) -> Result<WindowSpec, CommandError> {
    bounded_text("toml", &toml)?;
    let kind = if model { Kind::Model } else { Kind::Grader };
    state.with_store_mut(|store| {
        workbench::open(store)?;
        let spec = versions::add_spec(store, &toml, "the spec", kind).map_err(run_error)?;
        Ok(spec.into())
    })
}

/// A new grader version: `base` with `prompt`, under the new name `name`.
#[tauri::command]
#[specta::specta]
pub async fn workbench_new_version(
    state: State<'_, AppState>,
    base: String,
    name: String,
    prompt: String,
) -> Result<WindowSpec, CommandError> {
    let (base, new_name) = (self::name("base", &base)?, self::name("name", &name)?);
    bounded_text("prompt", &prompt)?;
    state.with_store_mut(|store| {
        workbench::open(store)?;
        let spec =
            versions::new_grader_version(store, &base, &new_name, &prompt).map_err(run_error)?;
        Ok(spec.into())
    })
}

/// The line diff between two stored versions' prompts.
#[tauri::command]
#[specta::specta]
pub async fn workbench_prompt_diff(
    state: State<'_, AppState>,
    before: String,
    after: String,
) -> Result<Vec<DiffLine>, CommandError> {
    let (before, after) = (name("before", &before)?, name("after", &after)?);
    state.with_store(|store| {
        workbench::open(store)?;
        let prompt = |n: &str| {
            versions::stored_spec(store, n, Kind::Grader)
                .map(|s| s.prompt.unwrap_or_default())
                .map_err(run_error)
        };
        Ok(versions::line_diff(&prompt(&before)?, &prompt(&after)?))
    })
}

/// One step on the study's development/test split, as the lead's session at the workstation.
fn on_split<T>(
    state: &AppState,
    study_id: &str,
    grader: &str,
    step: fn(&mut Store, &LeadSession, &str, &str) -> cases::Result<T>,
) -> Result<T, CommandError> {
    let grader = name("grader", grader)?;
    state.with_store_mut(|store| {
        let lead = workbench::open(store)?;
        Ok(step(store, &lead, study_id, &grader)?)
    })
}

/// The grader on the study's split: development agreement, test agreement once confirmed.
#[tauri::command]
#[specta::specta]
pub async fn workbench_split(
    state: State<'_, AppState>,
    study_id: Id,
    grader: String,
) -> Result<GraderOnSplit, CommandError> {
    on_split(&state, &study_id, &grader, workbench::split)
}

/// Confirms the grader version: its test agreement opens, and the confirmation is audited.
#[tauri::command]
#[specta::specta]
pub async fn workbench_confirm(
    state: State<'_, AppState>,
    study_id: Id,
    grader: String,
) -> Result<GraderOnSplit, CommandError> {
    on_split(&state, &study_id, &grader, workbench::confirm)
}

/// The development items, largest |grader − clinicians' mean| first.
#[tauri::command]
#[specta::specta]
pub async fn workbench_disagreements(
    state: State<'_, AppState>,
    study_id: Id,
    grader: String,
) -> Result<Vec<Disagreement>, CommandError> {
    on_split(&state, &study_id, &grader, workbench::disagreements)
}

/// One item side by side (a test item only once the grader is confirmed).
#[tauri::command]
#[specta::specta]
pub async fn workbench_item(
    state: State<'_, AppState>,
    grader: String,
    response: Key,
) -> Result<ItemSideBySide, CommandError> {
    let grader = name("grader", &grader)?;
    state.with_store(|store| {
        let lead = workbench::open(store)?;
        Ok(workbench::item(store, &lead, &grader, response.get())?)
    })
}

/// Drift from grader version `before` to `after`.
#[tauri::command]
#[specta::specta]
pub async fn workbench_drift(
    state: State<'_, AppState>,
    study_id: Id,
    before: String,
    after: String,
) -> Result<VersionDrift, CommandError> {
    let (before, after) = (name("before", &before)?, name("after", &after)?);
    state.with_store(|store| {
        let lead = workbench::open(store)?;
        Ok(workbench::drift(store, &lead, &study_id, &before, &after)?)
    })
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct RunProgressPayload {
    name: String,
    total: u64,
    done: u64,
    tokens: u64,
    cost: Option<f64>,
    failed: Vec<(String, String)>,
    /// Tasks the run leaves out, listed before its first request (`case/task`, why).
    skipped: Vec<(String, String)>,
    /// Since the run started: the webview derives the rate and the time left from it.
    elapsed_ms: u64,
}

/// Reports a run to the webview: the whole state after every change (a few hundred bytes).
struct EventProgress<R: Runtime> {
    app: AppHandle<R>,
    started: std::time::Instant,
    state: Mutex<RunProgressPayload>,
}

impl<R: Runtime> EventProgress<R> {
    fn update(&self, change: impl FnOnce(&mut RunProgressPayload)) {
        let payload = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            change(&mut state);
            state.elapsed_ms = self.started.elapsed().as_millis() as u64;
            state.clone()
        };
        // A closed window cannot listen; the run goes on and its summary is returned.
        let _ = self.app.emit(RUN_EVENT, payload);
    }
}

impl<R: Runtime> RunProgress for EventProgress<R> {
    fn start(&self, total: u64) {
        self.update(|s| s.total = total);
    }
    fn stored(&self, done: u64, tokens: u64, cost: Option<f64>) {
        self.update(|s| (s.done, s.tokens, s.cost) = (done, tokens, cost));
    }
    fn failed(&self, item: &str, reason: &str) {
        self.update(|s| s.failed.push((item.to_owned(), reason.to_owned())));
    }
    fn skipped(&self, task: &str, reason: &str) {
        self.update(|s| s.skipped.push((task.to_owned(), reason.to_owned())));
    }
}

/// Runs the stored grader (or, with `samples`, the model) `name` over the study `study_id` until
/// done or cancelled, reporting through [`RUN_EVENT`]. The run has its own connection to the
/// database file, so the app stays usable; results are stored one transaction each as they
/// arrive, exactly as `neurorater grade`/`respond` store them.
#[tauri::command]
#[specta::specta]
pub async fn workbench_run<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    active: State<'_, ActiveRun>,
    study_id: Id,
    name: String,
    samples: Option<u32>,
) -> Result<RunSummary, CommandError> {
    let name = self::name("name", &name)?;
    if samples.is_some_and(|k| k == 0 || k > MAX_SAMPLES) {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("samples: 1 to {MAX_SAMPLES}"),
        ));
    }
    let kind = if samples.is_some() {
        Kind::Model
    } else {
        Kind::Grader
    };
    let (path, spec) = state.with_store(|store| {
        workbench::open(store)?;
        let spec = versions::stored_spec(store, &name, kind).map_err(run_error)?;
        Ok((store.path().to_path_buf(), spec))
    })?;
    let running = active.0.start()?;
    let stop_requested = running.stop();
    let progress = EventProgress {
        app: app.clone(),
        started: std::time::Instant::now(),
        state: Mutex::new(RunProgressPayload {
            name: name.clone(),
            ..RunProgressPayload::default()
        }),
    };
    let (done, finished) = tokio::sync::oneshot::channel();
    // The runner's future borrows the store and the progress across awaits; it runs on a thread
    // of its own with a current-thread runtime rather than on the app's shared one.
    let spawned = std::thread::Builder::new()
        .name("workbench-run".into())
        .spawn(move || {
            let outcome = (|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| RunError::Internal(format!("cannot start the run: {e}")))?;
                let mut store = Store::open_existing(&path)?;
                let stop = async move { stop_requested.requested().await };
                runtime.block_on(async {
                    match samples {
                        None => runner::grade(&mut store, &study_id, &spec, &progress, stop).await,
                        Some(k) => {
                            runner::run::respond(&mut store, &study_id, &spec, k, &progress, stop)
                                .await
                        }
                    }
                })
            })();
            let _ = done.send(outcome);
        });
    let outcome = match spawned {
        Ok(_) => finished
            .await
            .unwrap_or_else(|_| Err(RunError::Internal("the run ended without a word".into()))),
        Err(e) => Err(RunError::Internal(format!("cannot start the run: {e}"))),
    };
    drop(running);
    outcome.map_err(run_error)
}

/// Stops the run in progress: requests in flight are abandoned, finished ones are kept. False
/// when no run was going.
#[tauri::command]
#[specta::specta]
pub async fn workbench_cancel_run(active: State<'_, ActiveRun>) -> Result<bool, CommandError> {
    Ok(active.0.cancel())
}
