//! Pixels go to the webview as raw bytes (`tauri::ipc::Response`), never as base64 JSON: an
//! uncompressed NIfTI-1 volume that NiiVue parses directly.
//!
//! Decoded series are kept in a [`VolumeCache`] (least recently used, bounded by bytes), so
//! opening a case again, or another viewport on the same series, costs a copy instead of a
//! re-hash and a decode. A cached volume is served only while every one of its files still has
//! the size and modification time it had when it was hashed; anything else re-verifies the
//! hashes, so a changed image is refused, never shown.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::error::{CommandError, ErrorCode};
use crate::state::AppState;
use crate::validate;
use cases::imaging::{load_dicom_series, load_key_images, load_nifti, Volume};
use cases::model::SeriesKind;
use cases::store::SeriesFiles;
use tauri::ipc::Response;
use tauri::State;

/// What the cache may hold: a few large series (a 300-slice 512² CT is 150 MiB) or many small ones.
pub const VOLUME_CACHE_BYTES: usize = 512 << 20;

#[tauri::command]
pub async fn series_volume(
    state: State<'_, AppState>,
    cache: State<'_, VolumeCache>,
    series_key: i64,
) -> Result<Response, CommandError> {
    let series_key = validate::key("series_key", series_key)?;
    // Only the file list is read under the lock; hashing and decoding run after it is released,
    // on a blocking thread, so other commands and the window stay responsive.
    let files = state.with_store(|store| Ok(store.series_files(series_key)?))?;
    let cache = cache.inner().clone();
    let bytes = tauri::async_runtime::spawn_blocking(move || {
        cache.get_or_load(series_key, &files, series_nifti_bytes)
    })
    .await
    .map_err(|e| {
        CommandError::new(
            ErrorCode::ImageUnavailable,
            format!("decoding series {series_key} stopped unexpectedly: {e}"),
        )
    })??;
    Ok(Response::new(bytes.as_ref().clone()))
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

/// Size and modification time of each file, in order; `None` when a file cannot be read.
type Fingerprint = Vec<Option<(u64, SystemTime)>>;

fn fingerprint(paths: &[PathBuf]) -> Fingerprint {
    paths
        .iter()
        .map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            Some((meta.len(), meta.modified().ok()?))
        })
        .collect()
}

struct Entry {
    key: i64,
    fingerprint: Fingerprint,
    bytes: Arc<Vec<u8>>,
}

/// Decoded series (as NIfTI bytes) by series key, least recently used first out, holding at
/// most `capacity` bytes. Cloning shares the same cache.
#[derive(Clone)]
pub struct VolumeCache {
    capacity: usize,
    /// Most recently used last.
    entries: Arc<Mutex<Vec<Entry>>>,
}

impl Default for VolumeCache {
    fn default() -> Self {
        VolumeCache::with_capacity(VOLUME_CACHE_BYTES)
    }
}

impl VolumeCache {
    pub fn with_capacity(capacity: usize) -> Self {
        VolumeCache {
            capacity,
            entries: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The cached bytes of `key` if its files are unchanged since they were verified, else
    /// `load(files)` (which verifies and decodes), cached when it succeeds and fits.
    pub fn get_or_load(
        &self,
        key: i64,
        files: &SeriesFiles,
        load: impl FnOnce(&SeriesFiles) -> Result<Vec<u8>, CommandError>,
    ) -> Result<Arc<Vec<u8>>, CommandError> {
        let paths = files.paths();
        // Taken before loading: a file rewritten while it is hashed gets a newer time than this,
        // so the next open re-verifies it.
        let now = fingerprint(&paths);
        if let Some(hit) = self.hit(key, &now) {
            return Ok(hit);
        }
        let bytes = Arc::new(load(files)?);
        if now.iter().all(Option::is_some) {
            self.insert(key, now, bytes.clone());
        }
        Ok(bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        // A panic while holding the lock leaves a consistent list (entries are whole or absent).
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn hit(&self, key: i64, now: &Fingerprint) -> Option<Arc<Vec<u8>>> {
        let mut entries = self.lock();
        let at = entries.iter().position(|e| e.key == key)?;
        let entry = entries.remove(at);
        if &entry.fingerprint != now {
            return None;
        }
        let bytes = entry.bytes.clone();
        entries.push(entry);
        Some(bytes)
    }

    fn insert(&self, key: i64, fingerprint: Fingerprint, bytes: Arc<Vec<u8>>) {
        if bytes.len() > self.capacity {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|e| e.key != key);
        let mut held: usize = entries.iter().map(|e| e.bytes.len()).sum();
        while held + bytes.len() > self.capacity && !entries.is_empty() {
            held -= entries.remove(0).bytes.len();
        }
        entries.push(Entry {
            key,
            fingerprint,
            bytes,
        });
    }

    /// Bytes held now.
    pub fn held_bytes(&self) -> usize {
        self.lock().iter().map(|e| e.bytes.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cases::store::SeriesFile;
    use std::cell::Cell;

    /// A fresh directory for one test (the app crate has no temp-dir dependency).
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(test: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "neurorater-volume-cache-{}-{test}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn series(dir: &std::path::Path, name: &str, content: &[u8]) -> SeriesFiles {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        SeriesFiles {
            kind: SeriesKind::Dicom,
            label: name.into(),
            files: vec![SeriesFile {
                path,
                sha256: String::new(),
            }],
        }
    }

    #[test]
    fn serves_an_unchanged_series_without_loading_again() {
        let dir = TempDir::new("serves_an_unchanged");
        let files = series(dir.path(), "a.dcm", b"one");
        let cache = VolumeCache::with_capacity(100);
        let loads = Cell::new(0);
        let load = |_: &SeriesFiles| {
            loads.set(loads.get() + 1);
            Ok(vec![7u8; 10])
        };
        assert_eq!(*cache.get_or_load(1, &files, load).unwrap(), vec![7u8; 10]);
        assert_eq!(*cache.get_or_load(1, &files, load).unwrap(), vec![7u8; 10]);
        assert_eq!(loads.get(), 1);
    }

    #[test]
    fn reloads_when_a_file_changes_size_or_time() {
        let dir = TempDir::new("reloads_when");
        let files = series(dir.path(), "a.dcm", b"one");
        let cache = VolumeCache::with_capacity(100);
        let loads = Cell::new(0);
        let load = |_: &SeriesFiles| {
            loads.set(loads.get() + 1);
            Ok(vec![loads.get() as u8])
        };
        cache.get_or_load(1, &files, load).unwrap();
        std::fs::write(&files.files[0].path, b"changed").unwrap();
        assert_eq!(*cache.get_or_load(1, &files, load).unwrap(), vec![2]);
        // Same size, later modification time.
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&files.files[0].path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(*cache.get_or_load(1, &files, load).unwrap(), vec![3]);
    }

    #[test]
    fn a_failed_load_is_not_cached_and_a_missing_file_is_never_served() {
        let dir = TempDir::new("a_failed_load");
        let files = series(dir.path(), "a.dcm", b"one");
        let cache = VolumeCache::with_capacity(100);
        let refused = |_: &SeriesFiles| {
            Err(CommandError::new(
                ErrorCode::ImageUnavailable,
                "changed".to_string(),
            ))
        };
        assert!(cache.get_or_load(1, &files, refused).is_err());
        assert_eq!(cache.held_bytes(), 0);
        cache.get_or_load(1, &files, |_| Ok(vec![1])).unwrap();
        std::fs::remove_file(&files.files[0].path).unwrap();
        assert!(cache.get_or_load(1, &files, refused).is_err());
    }

    #[test]
    fn evicts_the_least_recently_used_to_stay_within_its_bytes() {
        let dir = TempDir::new("evicts_the");
        let (a, b, c) = (
            series(dir.path(), "a", b"a"),
            series(dir.path(), "b", b"b"),
            series(dir.path(), "c", b"c"),
        );
        let cache = VolumeCache::with_capacity(25);
        let ten = |_: &SeriesFiles| Ok(vec![0u8; 10]);
        cache.get_or_load(1, &a, ten).unwrap();
        cache.get_or_load(2, &b, ten).unwrap();
        cache.get_or_load(1, &a, ten).unwrap(); // 1 is now the most recent
        cache.get_or_load(3, &c, ten).unwrap(); // evicts 2
        assert_eq!(cache.held_bytes(), 20);
        let reloaded = Cell::new(false);
        cache
            .get_or_load(2, &b, |_| {
                reloaded.set(true);
                Ok(vec![0u8; 10])
            })
            .unwrap();
        assert!(reloaded.get(), "series 2 was evicted");
        let too_big = |_: &SeriesFiles| Ok(vec![0u8; 26]);
        cache.get_or_load(4, &a, too_big).unwrap();
        assert!(cache.held_bytes() <= 25);
    }
}
