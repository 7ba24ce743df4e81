//! A series as the viewer receives it: the image files verified against their import hashes,
//! decoded into one [`Volume`], and kept in a [`VolumeCache`] (least recently used, bounded by
//! bytes), so opening a case again, another viewport on the same series, or the whole series
//! after its opening slice, costs a copy instead of a re-hash and a decode. A cached volume is
//! served only while every one of its files still has the size and modification time it had when
//! it was hashed; anything else re-verifies the hashes, so a changed image is refused, never
//! shown.
//!
//! What a mark measures ([`measure`]) is read from the same cached volume: distances, ROI
//! statistics and bidimensional diameters in patient mm (docs/rating.md, "Measurements").
//!
//! No session: a series' pixels are what every reader is shown.

use crate::marks::{Mark, MarkKind, Plane};
use crate::model::SeriesKind;
use crate::rating::RatingError;
use crate::store::SeriesFiles;
use crate::{Error, Result};
use imaging::{
    distance_mm, ellipse_diameters, load_dicom_series, load_key_images, load_nifti,
    outline_diameters, Diameters, ImagingErrorKind, RoiShape, Volume,
};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// What the cache may hold: a few large series (a 300-slice 512² CT is 150 MiB) or many small ones.
pub const VOLUME_CACHE_BYTES: usize = 512 << 20;

/// The slice a viewport in `plane` opens on, alone: native slice `slice` (0-based along the
/// series' own slice axis), or when `None` the one the viewer shows first, the middle. `None`
/// when the viewport does not show the series' own slices (an axial series in a coronal
/// viewport) or the series has a single slice: the viewport then waits for the whole series.
pub fn opening_slice(volume: &Volume, plane: Plane, slice: Option<i64>) -> Result<Option<Volume>> {
    let count = volume.dims[2];
    if count < 2 || volume.slice_axis() != plane.normal_axis() {
        return Ok(None);
    }
    let index = match slice {
        Some(k) => usize::try_from(k)
            .ok()
            .filter(|&k| k < count)
            .ok_or_else(|| {
                Error::Rating(RatingError::Invalid {
                    field: "slice".into(),
                    message: format!("the series has slices 0 to {}, got {k}", count - 1),
                })
            })?,
        None => middle_as_displayed(volume),
    };
    Ok(volume.single_slice(index))
}

/// The native slice NiiVue shows at the middle of its view: slice ⌊n/2⌋ counted in its own
/// order, which runs towards the right, front or head (RAS); a series acquired the other way
/// counts from its last slice.
fn middle_as_displayed(volume: &Volume) -> usize {
    let count = volume.dims[2];
    let axis = volume.slice_axis();
    // Patient LPS to RAS: x and y change sign.
    let ras_step = volume.voxel_to_patient[axis][2] * if axis < 2 { -1.0 } else { 1.0 };
    if ras_step >= 0.0 {
        count / 2
    } else {
        count - 1 - count / 2
    }
}

/// What a mark measures on its series: an arrow its length (tail to head), an ellipse or a
/// freehand outline the statistics of the voxels inside it and its bidimensional diameters; a
/// point nothing. Computed floats can be NaN (an ROI with no pixel centre inside), hence
/// `number | null` in the UI.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Measurement {
    pub distance_mm: Option<f64>,
    pub roi: Option<RoiMeasurement>,
}

/// An ROI's statistics in the series' modality values (`unit`) and its diameters, patient mm.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RoiMeasurement {
    /// "HU" for CT (stored values through the rescale), "" for any other signal.
    pub unit: String,
    /// The native slice (0-based) whose pixels were measured.
    pub slice: u32,
    /// Pixels whose centres lie inside the shape.
    pub pixels: u32,
    pub mean: f64,
    /// Population standard deviation (n in the denominator).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// The drawn shape's area.
    pub area_mm2: f64,
    /// The area of the pixels counted.
    pub pixel_area_mm2: f64,
    /// RANO: the longest in-plane diameter, the longest perpendicular to it, their product.
    pub longest_mm: f64,
    pub perpendicular_mm: f64,
    pub product_mm2: f64,
    /// End points of the two diameters, patient LPS mm (for drawing them).
    pub longest_lps_mm: [[f64; 3]; 2],
    pub perpendicular_lps_mm: [[f64; 3]; 2],
}

/// What `mark` measures on `volume` (its series). A mark whose shape is wrong, or an ROI that
/// does not lie on one native slice or is drawn on a colour series, is refused naming `mark`.
pub fn measure(volume: &Volume, mark: &Mark) -> Result<Measurement> {
    let refuse = |message: String| {
        Error::Rating(RatingError::Invalid {
            field: "mark".into(),
            message,
        })
    };
    mark.check_shape().map_err(refuse)?;
    let p = &mark.points_lps_mm;
    let (shape, diameters) = match mark.kind {
        MarkKind::Point => {
            return Ok(Measurement {
                distance_mm: None,
                roi: None,
            })
        }
        MarkKind::Arrow => {
            return Ok(Measurement {
                distance_mm: Some(distance_mm(p[0], p[1])),
                roi: None,
            })
        }
        MarkKind::Ellipse => (
            RoiShape::Ellipse {
                centre: p[0],
                a: p[1],
                b: p[2],
            },
            ellipse_diameters(p[0], p[1], p[2]),
        ),
        MarkKind::Freehand => (RoiShape::Outline(p.clone()), outline_diameters(p)),
    };
    let Some(Diameters {
        longest_mm,
        longest,
        perpendicular_mm,
        perpendicular,
        product_mm2,
    }) = diameters
    else {
        return Err(refuse(format!("the {} has no area", mark.kind.name())));
    };
    let stats = volume.roi_stats(&shape).map_err(|e| match e.kind {
        ImagingErrorKind::InvalidRequest => refuse(e.reason),
        _ => Error::Imaging(e),
    })?;
    Ok(Measurement {
        distance_mm: None,
        roi: Some(RoiMeasurement {
            unit: if volume.modality.as_deref() == Some("CT") {
                "HU"
            } else {
                ""
            }
            .into(),
            slice: u32::try_from(stats.slice).unwrap_or(u32::MAX),
            pixels: u32::try_from(stats.pixels).unwrap_or(u32::MAX),
            mean: stats.mean,
            sd: stats.sd,
            min: stats.min,
            max: stats.max,
            area_mm2: stats.area_mm2,
            pixel_area_mm2: stats.pixel_area_mm2,
            longest_mm,
            perpendicular_mm,
            product_mm2,
            longest_lps_mm: longest,
            perpendicular_lps_mm: perpendicular,
        }),
    })
}

/// Verifies the files are the ones imported, then decodes them.
pub fn decode_verified(files: &SeriesFiles) -> Result<Volume> {
    files.verify()?;
    decode(files)
}

fn decode(files: &SeriesFiles) -> Result<Volume> {
    let paths = files.paths();
    let volume = match files.kind {
        SeriesKind::Dicom => load_dicom_series(&paths)?,
        SeriesKind::KeyImages => load_key_images(&paths)?,
        SeriesKind::Nifti => match paths.as_slice() {
            [path] => load_nifti(path)?,
            _ => {
                return Err(Error::Corrupt {
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

/// What a cached value costs in memory.
pub trait Footprint {
    fn footprint(&self) -> usize;
}

impl Footprint for Volume {
    fn footprint(&self) -> usize {
        self.samples.len() * self.samples.bytes_per_sample()
    }
}

struct Entry<T> {
    key: i64,
    fingerprint: Fingerprint,
    value: Arc<T>,
}

/// Decoded series by series key, least recently used first out, holding at most `capacity`
/// bytes. Cloning shares the same cache.
pub struct DecodedCache<T> {
    capacity: usize,
    /// Most recently used last.
    entries: Arc<Mutex<Vec<Entry<T>>>>,
}

pub type VolumeCache = DecodedCache<Volume>;

impl<T> Clone for DecodedCache<T> {
    fn clone(&self) -> Self {
        DecodedCache {
            capacity: self.capacity,
            entries: self.entries.clone(),
        }
    }
}

impl<T: Footprint> Default for DecodedCache<T> {
    fn default() -> Self {
        DecodedCache::with_capacity(VOLUME_CACHE_BYTES)
    }
}

impl<T: Footprint> DecodedCache<T> {
    pub fn with_capacity(capacity: usize) -> Self {
        DecodedCache {
            capacity,
            entries: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The cached value of `key` if its files are unchanged since they were verified, else
    /// `load(files)` (which verifies and decodes), cached when it succeeds and fits.
    pub fn get_or_load(
        &self,
        key: i64,
        files: &SeriesFiles,
        load: impl FnOnce(&SeriesFiles) -> Result<T>,
    ) -> Result<Arc<T>> {
        let paths = files.paths();
        // Taken before loading: a file rewritten while it is hashed gets a newer time than this,
        // so the next open re-verifies it.
        let now = fingerprint(&paths);
        if let Some(hit) = self.hit(key, &now) {
            return Ok(hit);
        }
        let value = Arc::new(load(files)?);
        if now.iter().all(Option::is_some) {
            self.insert(key, now, value.clone());
        }
        Ok(value)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry<T>>> {
        // A panic while holding the lock leaves a consistent list (entries are whole or absent).
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn hit(&self, key: i64, now: &Fingerprint) -> Option<Arc<T>> {
        let mut entries = self.lock();
        let at = entries.iter().position(|e| e.key == key)?;
        let entry = entries.remove(at);
        if &entry.fingerprint != now {
            return None;
        }
        let value = entry.value.clone();
        entries.push(entry);
        Some(value)
    }

    fn insert(&self, key: i64, fingerprint: Fingerprint, value: Arc<T>) {
        let size = value.footprint();
        if size > self.capacity {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|e| e.key != key);
        let mut held: usize = entries.iter().map(|e| e.value.footprint()).sum();
        while held + size > self.capacity && !entries.is_empty() {
            held -= entries.remove(0).value.footprint();
        }
        entries.push(Entry {
            key,
            fingerprint,
            value,
        });
    }

    /// Bytes held now.
    pub fn held_bytes(&self) -> usize {
        self.lock().iter().map(|e| e.value.footprint()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SeriesFile;
    use imaging::{Rescale, Samples};
    use std::cell::Cell;

    impl Footprint for Vec<u8> {
        fn footprint(&self) -> usize {
            self.len()
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
        let dir = tempfile::tempdir().unwrap();
        let files = series(dir.path(), "a.dcm", b"one");
        let cache = DecodedCache::<Vec<u8>>::with_capacity(100);
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
        let dir = tempfile::tempdir().unwrap();
        let files = series(dir.path(), "a.dcm", b"one");
        let cache = DecodedCache::<Vec<u8>>::with_capacity(100);
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
        let dir = tempfile::tempdir().unwrap();
        let files = series(dir.path(), "a.dcm", b"one");
        let cache = DecodedCache::<Vec<u8>>::with_capacity(100);
        let refused = |_: &SeriesFiles| {
            Err(Error::ImageChanged {
                path: "a.dcm".into(),
            })
        };
        assert!(cache.get_or_load(1, &files, refused).is_err());
        assert_eq!(cache.held_bytes(), 0);
        cache.get_or_load(1, &files, |_| Ok(vec![1])).unwrap();
        std::fs::remove_file(&files.files[0].path).unwrap();
        assert!(cache.get_or_load(1, &files, refused).is_err());
    }

    #[test]
    fn evicts_the_least_recently_used_to_stay_within_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            series(dir.path(), "a", b"a"),
            series(dir.path(), "b", b"b"),
            series(dir.path(), "c", b"c"),
        );
        let cache = DecodedCache::<Vec<u8>>::with_capacity(25);
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

    /// `slices` slices of 2×2 voxels, slice k holding the value k, stepping 3 mm along
    /// `slice_step` (patient LPS).
    fn stack(slices: usize, slice_step: [f64; 3]) -> Volume {
        Volume {
            dims: [2, 2, slices],
            voxel_to_patient: [
                [1.0, 0.0, slice_step[0] * 3.0, 0.0],
                [0.0, 1.0, slice_step[1] * 3.0, 0.0],
                [0.0, 0.0, slice_step[2] * 3.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
            samples: Samples::I16((0..slices as i16).flat_map(|k| [k; 4]).collect()),
            channels: 1,
            rescale: Rescale::IDENTITY,
            windows: Vec::new(),
            modality: None,
            monochrome1: false,
            value_range: (0.0, slices as f64 - 1.0),
        }
    }

    fn first_value(volume: Option<Volume>) -> Option<f64> {
        volume.and_then(|v| v.samples.get(0))
    }

    #[test]
    fn the_opening_slice_is_the_one_asked_for_or_the_middle_niivue_shows() {
        let feet_to_head = stack(6, [0.0, 0.0, 1.0]);
        let axial = |v: &Volume, k| opening_slice(v, Plane::Axial, k).unwrap();
        assert_eq!(first_value(axial(&feet_to_head, Some(4))), Some(4.0));
        // NiiVue counts 0..6 towards the head and shows ⌊6/2⌋ = 3 at the middle.
        assert_eq!(first_value(axial(&feet_to_head, None)), Some(3.0));
        // Acquired head to feet: NiiVue's slice 3 is native slice 6 - 1 - 3 = 2.
        let head_to_feet = stack(6, [0.0, 0.0, -1.0]);
        assert_eq!(first_value(axial(&head_to_feet, None)), Some(2.0));
        // Patient x runs to the left, NiiVue's towards the right: a step to the left counts down.
        let sagittal_leftwards = stack(5, [1.0, 0.0, 0.0]);
        let sagittal = opening_slice(&sagittal_leftwards, Plane::Sagittal, None).unwrap();
        assert_eq!(first_value(sagittal), Some(2.0));
    }

    #[test]
    fn no_opening_slice_off_the_series_own_plane_or_for_a_single_slice() {
        let axial_series = stack(6, [0.0, 0.0, 1.0]);
        assert!(opening_slice(&axial_series, Plane::Coronal, None)
            .unwrap()
            .is_none());
        assert!(opening_slice(&axial_series, Plane::Sagittal, Some(1))
            .unwrap()
            .is_none());
        assert!(
            opening_slice(&stack(1, [0.0, 0.0, 1.0]), Plane::Axial, None)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn an_arrow_measures_its_length_and_an_roi_off_one_slice_is_refused_naming_the_mark() {
        let series = stack(6, [0.0, 0.0, 1.0]);
        let mark = |kind, points_lps_mm| Mark {
            series_id: "s".into(),
            kind,
            plane: Plane::Axial,
            points_lps_mm,
        };
        let arrow = mark(MarkKind::Arrow, vec![[0.0, 0.0, 3.0], [0.6, 0.8, 3.0]]);
        assert_eq!(measure(&series, &arrow).unwrap().distance_mm, Some(1.0));
        // Slices are 3 mm apart: z 0 and 6 are slices 0 and 2.
        let across = mark(
            MarkKind::Freehand,
            vec![[0.0, 0.0, 0.0], [1.0, 0.0, 6.0], [1.0, 1.0, 0.0]],
        );
        match measure(&series, &across) {
            Err(Error::Rating(RatingError::Invalid { field, message })) => {
                assert_eq!(field, "mark");
                assert!(message.contains("one slice"), "{message}");
            }
            other => panic!("an ROI across slices must be refused: {other:?}"),
        }
        let on_slice_1 = mark(
            MarkKind::Freehand,
            vec![
                [-0.5, -0.5, 3.0],
                [1.5, -0.5, 3.0],
                [1.5, 1.5, 3.0],
                [-0.5, 1.5, 3.0],
            ],
        );
        let roi = measure(&series, &on_slice_1).unwrap().roi.unwrap();
        assert_eq!((roi.slice, roi.pixels, roi.mean, roi.sd), (1, 4, 1.0, 0.0));
        assert!((roi.longest_mm - 8f64.sqrt()).abs() < 1e-12, "{roi:?}");
        assert_eq!(roi.unit, "");
    }

    #[test]
    fn an_opening_slice_outside_the_series_is_refused_naming_the_range() {
        let series = stack(6, [0.0, 0.0, 1.0]);
        for bad in [6, -1, i64::MAX] {
            match opening_slice(&series, Plane::Axial, Some(bad)) {
                Err(Error::Rating(RatingError::Invalid { field, message })) => {
                    assert_eq!(field, "slice");
                    assert!(message.contains("slices 0 to 5"), "{message}");
                }
                other => panic!("slice {bad} must be refused as invalid: {other:?}"),
            }
        }
    }
}
