//! Pixels go to the webview as raw bytes (`tauri::ipc::Response`), never as base64 JSON: an
//! uncompressed NIfTI-1 volume that NiiVue parses directly.
//!
//! A viewport first asks for the one slice it opens on ([`series_opening_slice`]), then for the
//! whole series: the first image does not wait for moving and uploading every slice.
//!
//! Verifying, decoding and the cache of decoded series are the domain's (`cases::app::series`);
//! this module moves the bytes and keeps the work off the UI thread.

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use cases::app::series::{decode_verified, measure, opening_slice, Measurement, VolumeCache};
use cases::ids::Key;
use cases::marks::{Mark, Plane};
use imaging::Volume;
use tauri::ipc::{InvokeResponseBody, IpcResponse, Response};
use tauri::State;

/// Bytes in memory (a NIfTI-1 file, a PNG strip), sent raw: the webview receives an
/// `ArrayBuffer`, and the generated bindings say so.
pub struct RawBytes(Response);

impl RawBytes {
    pub fn new(bytes: Vec<u8>) -> Self {
        RawBytes(Response::new(bytes))
    }
}

impl IpcResponse for RawBytes {
    fn body(self) -> tauri::Result<InvokeResponseBody> {
        self.0.body()
    }
}

impl specta::Type for RawBytes {
    fn definition(_: &mut specta::Types) -> specta::datatype::DataType {
        specta::datatype::DataType::Reference(specta_typescript::define("ArrayBuffer"))
    }
}

#[tauri::command]
#[specta::specta]
pub async fn series_volume(
    state: State<'_, AppState>,
    cache: State<'_, VolumeCache>,
    series_key: i64,
) -> Result<RawBytes, CommandError> {
    let bytes = with_decoded(&state, &cache, series_key, |volume| {
        Ok(volume.to_nifti1_bytes())
    })
    .await?;
    Ok(RawBytes::new(bytes))
}

/// The slice a viewport in `plane` opens on, alone: native slice `slice` (0-based along the
/// series' own slice axis), or when `None` the one the viewer shows first, the middle. Empty when
/// the viewport does not show the series' own slices (an axial series in a coronal viewport) or
/// the series has a single slice: the viewport then waits for the whole series.
#[tauri::command]
#[specta::specta]
pub async fn series_opening_slice(
    state: State<'_, AppState>,
    cache: State<'_, VolumeCache>,
    series_key: Key,
    plane: Plane,
    slice: Option<i64>,
) -> Result<RawBytes, CommandError> {
    let bytes = with_decoded(&state, &cache, series_key.get(), move |volume| {
        Ok(opening_slice(volume, plane, slice)?
            .map(|alone| alone.to_nifti1_bytes())
            .unwrap_or_default())
    })
    .await?;
    Ok(RawBytes::new(bytes))
}

/// What `mark` measures on the series' voxels (distance, ROI statistics, diameters), asked for
/// while it is drawn: the decoded series is cached, so this costs the ROI's pixels, not a decode.
#[tauri::command]
#[specta::specta]
pub async fn series_measure(
    state: State<'_, AppState>,
    cache: State<'_, VolumeCache>,
    series_key: Key,
    mark: Mark,
) -> Result<Measurement, CommandError> {
    with_decoded(&state, &cache, series_key.get(), move |volume| {
        Ok(measure(volume, &mark)?)
    })
    .await
}

/// Runs `respond` on the decoded series, decoding it first unless cached. Only the file list is
/// read under the store's lock; hashing, decoding and `respond` run after it is released, on a
/// blocking thread, so other commands and the window stay responsive.
async fn with_decoded<T: Send + 'static>(
    state: &AppState,
    cache: &VolumeCache,
    series_key: i64,
    respond: impl FnOnce(&Volume) -> Result<T, CommandError> + Send + 'static,
) -> Result<T, CommandError> {
    let files = state.with_store(|store| Ok(store.series_files(series_key)?))?;
    let cache = cache.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let volume = cache.get_or_load(series_key, &files, decode_verified)?;
        respond(&volume)
    })
    .await
    .map_err(|e| {
        CommandError::new(
            ErrorCode::ImageUnavailable,
            format!("decoding series {series_key} stopped unexpectedly: {e}"),
        )
    })?
}
