use crate::state::{AppState, StartupStatus};
use tauri::State;

/// Where first start is; the UI polls this once on load and then follows `startup-progress`.
#[tauri::command]
#[specta::specta]
pub fn startup_status(state: State<'_, AppState>) -> StartupStatus {
    state.startup_status()
}
