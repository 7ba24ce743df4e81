//! Pixels go to the webview as raw bytes (`tauri::ipc::Response`), never as base64 JSON: an
//! uncompressed NIfTI-1 volume that NiiVue parses directly.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use crate::validate;
use cases::imaging::{load_dicom_series, load_key_images, load_nifti, Volume};
use cases::model::SeriesKind;
use cases::store::SeriesFiles;
use tauri::ipc::Response;
use tauri::State;

#[tauri::command]
pub async fn series_volume(
    state: State<'_, AppState>,
    series_key: i64,
) -> Result<Response, CommandError> {
    let series_key = validate::key("series_key", series_key)?;
    // Only the file list is read under the lock; hashing and decoding run after it is released,
    // on a blocking thread, so other commands and the window stay responsive.
    let files = state.with_store(|store| Ok(store.series_files(series_key)?))?;
    let bytes = tauri::async_runtime::spawn_blocking(move || series_nifti_bytes(&files))
        .await
        .map_err(|e| {
            CommandError::new(
                ErrorCode::ImageUnavailable,
                format!("decoding series {series_key} stopped unexpectedly: {e}"),
            )
        })??;
    Ok(Response::new(bytes))
}

/// Verifies the files are the ones imported, decodes them and re-encodes them as NIfTI-1.
pub fn series_nifti_bytes(files: &SeriesFiles) -> Result<Vec<u8>, CommandError> {
    files.verify()?;
    Ok(decode(files)?.to_nifti1_bytes())
}

fn decode(files: &SeriesFiles) -> Result<Volume, cases::Error> {
    let paths = files.paths();
    let volume = match files.kind {
        SeriesKind::Dicom => load_dicom_series(&paths)?,
        SeriesKind::KeyImages => load_key_images(&paths)?,
        SeriesKind::Nifti => match paths.as_slice() {
            [path] => load_nifti(path)?,
            _ => {
                return Err(cases::Error::Corrupt {
                    what: format!(
                        "NIfTI series {} lists {} files; a NIfTI series is exactly one file",
                        files.label,
                        paths.len()
                    ),
                })
            }
        },
    };
    Ok(volume)
}
