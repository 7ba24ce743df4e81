//! A series as one volume for the viewer: stored values with one rescale, geometry in patient
//! space (DICOM LPS, mm), window presets; and its NIfTI-1 form for NiiVue.

use std::path::{Path, PathBuf};

use super::decoded::{Decoded, Rescale};
use super::error::{ImagingError, ImagingErrorKind};
use super::geometry::{dicom_affine, lps_from_ras, SeriesGeometry, KEY_IMAGE_AFFINE};
use super::meta::{frame_positions, pixel_spacing, plane_of, slice_spacing};
use super::samples::{with_samples, Sample, Samples};
use super::voi::Window;
use super::{dicom, nifti, raster};

/// One volume. Samples run column fastest, then row, then slice; colour volumes hold RGB bytes
/// interleaved.
#[derive(Debug, Clone, PartialEq)]
pub struct Volume {
    /// [columns, rows, slices].
    pub dims: [usize; 3],
    /// Voxel (column i, row j, slice k, 1) to patient LPS mm.
    pub voxel_to_patient: [[f64; 4]; 4],
    /// Stored values in their own type; modality value = stored × rescale.slope + rescale.intercept.
    /// Slices with differing rescales are stored as f32 modality values with the identity rescale.
    pub samples: Samples,
    /// 1 (grey) or 3 (RGB, `Samples::U8`).
    pub channels: u8,
    pub rescale: Rescale,
    /// Presets, the default first: the file's windows, then the full range of the volume.
    pub windows: Vec<Window>,
    pub modality: Option<String>,
    /// MONOCHROME1: low values are displayed white.
    pub monochrome1: bool,
    /// Smallest and largest modality value.
    pub value_range: (f64, f64),
}

/// What the first file of a series says for the whole series: pixel module, windows,
/// orientation, pixel spacing (row, column) and slice spacing.
type SeriesHeader = (
    dicom::PixelHeader,
    Vec<Window>,
    Option<[f64; 6]>,
    [f64; 2],
    Option<f64>,
);

/// A DICOM series, `paths` already ordered (see [`super::order_series`]); every frame of every
/// file becomes one slice.
pub fn load_dicom_series(paths: &[PathBuf]) -> Result<Volume, ImagingError> {
    let first_path = paths.first().ok_or_else(|| {
        ImagingError::new(
            Path::new(""),
            ImagingErrorKind::InvalidRequest,
            "a series needs at least one file",
        )
    })?;
    let mut stack: Option<Stack> = None;
    let mut positions: Vec<Option<[f64; 3]>> = Vec::new();
    let mut first: Option<SeriesHeader> = None;
    // Files are decoded a few at a time, one per core, and stacked in order: a viewer waits for
    // the whole series, and holding only a few decoded files at once keeps memory near 1×.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let read = |path: &PathBuf| {
        let obj = dicom::open(path)?;
        let image = dicom::decode_object(path, &obj)?;
        Ok::<_, ImagingError>((obj, image))
    };
    let decoded = paths.chunks(workers).flat_map(|batch| -> Vec<_> {
        if batch.len() == 1 {
            return vec![read(&batch[0])];
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = batch.iter().map(|p| scope.spawn(|| read(p))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    });
    for (path, result) in paths.iter().zip(decoded) {
        let (obj, image) = result?;
        let (h, d) = (&image.header, image.decoded);
        if let Some((f, ..)) = &first {
            if (f.rows, f.columns, f.samples_per_pixel) != (h.rows, h.columns, h.samples_per_pixel)
            {
                return Err(ImagingError::new(
                    path,
                    ImagingErrorKind::InvalidRequest,
                    format!(
                        "{}×{} with {} sample(s) per pixel does not match the series' first file {} ({}×{}, {})",
                        h.columns, h.rows, h.samples_per_pixel, first_path.display(), f.columns, f.rows, f.samples_per_pixel
                    ),
                ).with_transfer_syntax(&h.transfer_syntax));
            }
        } else {
            first = Some((
                h.clone(),
                d.frame_windows(0),
                plane_of(&obj).1,
                pixel_spacing(&obj),
                slice_spacing(&obj),
            ));
        }
        positions.extend(frame_positions(&obj, d.frames));
        let rescales: Vec<Rescale> = (0..d.frames).map(|f| d.frame_rescale(f)).collect();
        let slice_len = d.frame_len();
        let part = colour_as_u8(d);
        match stack.as_mut() {
            Some(stack) => stack.push(part, &rescales, slice_len),
            None => stack = Some(Stack::start(part, &rescales, slice_len, paths.len())),
        }
    }
    let Some((header, file_windows, orientation, spacing, spacing_between)) = first else {
        return Err(ImagingError::new(
            first_path,
            ImagingErrorKind::InvalidRequest,
            "no file of the series was read",
        ));
    };
    let channels = if header.samples_per_pixel == 3 { 3 } else { 1 };
    let (samples, rescale) = match stack {
        Some(stack) => stack.finish(),
        None => (Samples::U8(Vec::new()), Rescale::IDENTITY),
    };
    let slices = positions.len();
    let dims = [header.columns as usize, header.rows as usize, slices];

    let ends = (
        positions.first().copied().flatten(),
        positions.last().copied().flatten(),
    );
    let affine = dicom_affine(orientation, spacing, spacing_between, ends, slices);
    Ok(finish(
        dims,
        affine,
        samples,
        channels,
        rescale,
        file_windows,
        header.modality,
        header.photometric == "MONOCHROME1",
    ))
}

/// A NIfTI-1 or NIfTI-2 file's volume 0, geometry converted from RAS to LPS.
pub fn load_nifti(path: &Path) -> Result<Volume, ImagingError> {
    let image = nifti::decode_file(path)?;
    let lps = lps_from_ras(image.header.affine_ras());
    let d = image.decoded;
    let dims = [d.columns as usize, d.rows as usize, d.frames as usize];
    let windows = d.frame_windows(0);
    let rescale = d.frame_rescale(0);
    Ok(finish(
        dims, lps, d.samples, d.channels, rescale, windows, None, false,
    ))
}

/// PNG/JPEG key images as the slices of one volume (1 mm pixels, no patient geometry).
pub fn load_key_images(paths: &[PathBuf]) -> Result<Volume, ImagingError> {
    let images = paths
        .iter()
        .map(|p| raster::open(p).map(|i| (p, i)))
        .collect::<Result<Vec<_>, _>>()?;
    let Some((first_path, first)) = images.first() else {
        return Err(super::geometry::no_key_images());
    };
    let (width, height) = (first.width(), first.height());
    let colour = images.iter().any(|(_, i)| i.color().has_color());
    let mut bytes = Vec::new();
    for (path, image) in &images {
        if (image.width(), image.height()) != (width, height) {
            return Err(ImagingError::new(
                path,
                ImagingErrorKind::InvalidRequest,
                format!(
                    "{}×{} does not match the first key image {} ({width}×{height})",
                    image.width(),
                    image.height(),
                    first_path.display()
                ),
            ));
        }
        if colour {
            bytes.extend_from_slice(image.to_rgb8().as_raw());
        } else {
            bytes.extend_from_slice(image.to_luma8().as_raw());
        }
    }
    let dims = [width as usize, height as usize, images.len()];
    let full_scale = vec![Window::spanning(0.0, 255.0, "full scale of the key images")];
    Ok(finish(
        dims,
        KEY_IMAGE_AFFINE,
        Samples::U8(bytes),
        if colour { 3 } else { 1 },
        Rescale::IDENTITY,
        full_scale,
        None,
        false,
    ))
}

#[allow(clippy::too_many_arguments)] // one private constructor: every field is needed
fn finish(
    dims: [usize; 3],
    voxel_to_patient: [[f64; 4]; 4],
    samples: Samples,
    channels: u8,
    rescale: Rescale,
    mut windows: Vec<Window>,
    modality: Option<String>,
    monochrome1: bool,
) -> Volume {
    let stored = samples.min_max(0..samples.len()).unwrap_or((0.0, 0.0));
    let value_range = rescale.range(stored);
    // MR has no standard windows and its whole range is dominated by a few bright voxels (fat,
    // vessels, flow): without the file's own window, open on the robust range so lesions show.
    if channels == 1 && windows.is_empty() && modality.as_deref() == Some("MR") {
        windows.extend(robust_window(&samples, rescale, stored));
    }
    if channels == 1 {
        windows.push(Window::spanning(
            value_range.0,
            value_range.1,
            "full range of the volume",
        ));
    }
    Volume {
        dims,
        voxel_to_patient,
        samples,
        channels,
        rescale,
        windows,
        modality,
        monochrome1,
        value_range,
    }
}

/// Share of the stored range above the minimum that counts as background (air, noise floor).
const BACKGROUND_FRACTION: f64 = 0.02;
const ROBUST_LOW_PERCENTILE: f64 = 1.0;
const ROBUST_HIGH_PERCENTILE: f64 = 99.5;
const ROBUST_BINS: usize = 4096;

/// The window from the 1st to the 99.5th percentile of the non-background voxels (those more
/// than 2 % of the stored range above its minimum), from a 4096-bin histogram of the stored
/// values: exact to 1/4096 of the range, one pass, no sort. `None` for an empty or flat volume,
/// or a rescale that reverses the order of values.
fn robust_window(samples: &Samples, rescale: Rescale, (lo, hi): (f64, f64)) -> Option<Window> {
    if hi <= lo || rescale.slope <= 0.0 {
        return None;
    }
    let width = (hi - lo) / ROBUST_BINS as f64;
    let background = lo + BACKGROUND_FRACTION * (hi - lo);
    let mut counts = vec![0u64; ROBUST_BINS];
    with_samples!(samples, v => {
        for x in v {
            let x = x.value();
            if x > background {
                let bin = (((x - lo) / width) as usize).min(ROBUST_BINS - 1);
                counts[bin] += 1;
            }
        }
    });
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let bin_at = |percentile: f64| {
        let rank = (percentile / 100.0 * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        counts
            .iter()
            .position(|c| {
                seen += c;
                seen >= rank
            })
            .unwrap_or(ROBUST_BINS - 1)
    };
    let (b_lo, b_hi) = (
        bin_at(ROBUST_LOW_PERCENTILE),
        bin_at(ROBUST_HIGH_PERCENTILE),
    );
    // Lower edge of the low bin, upper edge of the high bin: the window never clips the
    // percentile voxels themselves.
    let stored_lo = lo + b_lo as f64 * width;
    let stored_hi = (lo + (b_hi + 1) as f64 * width).min(hi);
    let (a, b) = rescale.range((stored_lo, stored_hi));
    (b > a).then(|| {
        Window::spanning(
            a,
            b,
            "1st to 99.5th percentile of the non-background voxels",
        )
    })
}

/// Colour scaled to 8 bits once, so a colour volume is always RGB bytes.
fn colour_as_u8(d: Decoded) -> Samples {
    if d.channels != 3 || matches!(d.samples, Samples::U8(_)) {
        return d.samples;
    }
    let scale = 255.0 / d.colour_max.max(1.0);
    Samples::U8(
        with_samples!(&d.samples, v => v.iter().map(|x| (x.value() * scale + 0.5).floor().clamp(0.0, 255.0) as u8).collect()),
    )
}

/// The slices of a series gathered into one buffer as files are decoded, so the peak memory is
/// the volume plus one file. Kept in the stored type with one rescale while every slice shares
/// it (a 16-bit series stays 16-bit); f32 modality values once rescales or types differ.
enum Stack {
    Stored(Samples, Rescale),
    Modality(Vec<f32>),
}

impl Stack {
    fn start(part: Samples, rescales: &[Rescale], slice_len: usize, files: usize) -> Stack {
        let common = rescales.first().copied().unwrap_or(Rescale::IDENTITY);
        if rescales.iter().all(|r| *r == common) {
            let mut part = part;
            let additional = part.len() * files.saturating_sub(1);
            reserve(&mut part, additional);
            Stack::Stored(part, common)
        } else {
            let mut values = Vec::with_capacity(part.len() * files);
            extend_modality(&mut values, &part, rescales, slice_len);
            Stack::Modality(values)
        }
    }

    fn push(&mut self, part: Samples, rescales: &[Rescale], slice_len: usize) {
        if let Stack::Stored(stored, common) = self {
            let same_type = std::mem::discriminant(stored) == std::mem::discriminant(&part);
            if same_type && rescales.iter().all(|r| r == common) {
                append(stored, part);
                return;
            }
            let mut values = Vec::with_capacity(stored.len() * 2);
            extend_modality(&mut values, stored, &[*common], stored.len().max(1));
            *self = Stack::Modality(values);
        }
        if let Stack::Modality(values) = self {
            extend_modality(values, &part, rescales, slice_len);
        }
    }

    fn finish(self) -> (Samples, Rescale) {
        match self {
            Stack::Stored(samples, rescale) => (samples, rescale),
            Stack::Modality(values) => (Samples::F32(values), Rescale::IDENTITY),
        }
    }
}

/// Appends `part`'s modality values, slice `k` rescaled by `rescales[k]` (the last one repeats).
fn extend_modality(values: &mut Vec<f32>, part: &Samples, rescales: &[Rescale], slice_len: usize) {
    let last = rescales.last().copied().unwrap_or(Rescale::IDENTITY);
    with_samples!(part, v => {
        for (k, chunk) in v.chunks(slice_len.max(1)).enumerate() {
            let r = rescales.get(k).copied().unwrap_or(last);
            values.extend(chunk.iter().map(|x| (x.value() * r.slope + r.intercept) as f32));
        }
    });
}

fn reserve(samples: &mut Samples, additional: usize) {
    with_samples!(samples, v => v.reserve_exact(additional));
}

fn append(into: &mut Samples, part: Samples) {
    match (into, part) {
        (Samples::U8(a), Samples::U8(b)) => a.extend(b),
        (Samples::I8(a), Samples::I8(b)) => a.extend(b),
        (Samples::U16(a), Samples::U16(b)) => a.extend(b),
        (Samples::I16(a), Samples::I16(b)) => a.extend(b),
        (Samples::U32(a), Samples::U32(b)) => a.extend(b),
        (Samples::I32(a), Samples::I32(b)) => a.extend(b),
        (Samples::F32(a), Samples::F32(b)) => a.extend(b),
        (Samples::F64(a), Samples::F64(b)) => a.extend(b),
        // `Stack::push` appends only parts of the same type.
        _ => {}
    }
}

impl Volume {
    /// Where the voxels lie, without them.
    pub fn geometry(&self) -> SeriesGeometry {
        SeriesGeometry {
            dims: self.dims,
            voxel_to_patient: self.voxel_to_patient,
        }
    }

    /// The volume as an uncompressed NIfTI-1 file (348-byte header, vox_offset 352): sform in
    /// RAS+ as NIfTI requires, scl_slope/scl_inter = the rescale, cal_min..cal_max = the default
    /// window's edges. Colour volumes become RGB24.
    pub fn to_nifti1_bytes(&self) -> Vec<u8> {
        let (datatype, bitpix): (i16, i16) = match (&self.samples, self.channels) {
            (Samples::U8(_), 3) => (128, 24),
            (Samples::U8(_), _) => (2, 8),
            (Samples::I8(_), _) => (256, 8),
            (Samples::U16(_), _) => (512, 16),
            (Samples::I16(_), _) => (4, 16),
            (Samples::U32(_), _) => (768, 32),
            (Samples::I32(_), _) => (8, 32),
            (Samples::F32(_), _) => (16, 32),
            (Samples::F64(_), _) => (64, 64),
        };
        let mut ras = self.voxel_to_patient;
        for row in &mut ras[..2] {
            for value in row.iter_mut() {
                *value = -*value;
            }
        }
        let column_norm = |j: usize| (0..3).map(|i| ras[i][j] * ras[i][j]).sum::<f64>().sqrt();
        let (cal_min, cal_max) = match self.windows.first() {
            Some(w) if self.channels == 1 => (
                w.center - 0.5 - (w.width - 1.0) / 2.0,
                w.center - 0.5 + (w.width - 1.0) / 2.0,
            ),
            _ => (0.0, 0.0),
        };

        let mut h = vec![0u8; 352];
        let put = |h: &mut Vec<u8>, at: usize, bytes: &[u8]| {
            h[at..at + bytes.len()].copy_from_slice(bytes)
        };
        put(&mut h, 0, &348i32.to_le_bytes());
        let dims = [
            3i16,
            self.dims[0] as i16,
            self.dims[1] as i16,
            self.dims[2] as i16,
            1,
            1,
            1,
            1,
        ];
        for (i, d) in dims.iter().enumerate() {
            put(&mut h, 40 + 2 * i, &d.to_le_bytes());
        }
        put(&mut h, 70, &datatype.to_le_bytes());
        put(&mut h, 72, &bitpix.to_le_bytes());
        let pixdim = [
            1.0f32,
            column_norm(0) as f32,
            column_norm(1) as f32,
            column_norm(2) as f32,
            0.0,
            0.0,
            0.0,
            0.0,
        ];
        for (i, p) in pixdim.iter().enumerate() {
            put(&mut h, 76 + 4 * i, &p.to_le_bytes());
        }
        put(&mut h, 108, &352f32.to_le_bytes());
        put(&mut h, 112, &(self.rescale.slope as f32).to_le_bytes());
        put(&mut h, 116, &(self.rescale.intercept as f32).to_le_bytes());
        put(&mut h, 123, &[2]); // xyzt_units: millimetres
        put(&mut h, 124, &(cal_max as f32).to_le_bytes());
        put(&mut h, 128, &(cal_min as f32).to_le_bytes());
        put(&mut h, 254, &1i16.to_le_bytes()); // sform_code: scanner anatomical
        for (row, at) in ras.iter().zip([280, 296, 312]) {
            for (j, value) in row.iter().enumerate() {
                put(&mut h, at + 4 * j, &(*value as f32).to_le_bytes());
            }
        }
        put(&mut h, 344, b"n+1\0");
        h.reserve(self.samples.len() * self.samples.bytes_per_sample());
        self.samples.extend_le_bytes(&mut h);
        h
    }

    /// The patient axis (0 = x, right to left; 1 = y, front to back; 2 = z, foot to head) that
    /// the slice direction mostly follows: 2 for an axial acquisition.
    pub fn slice_axis(&self) -> usize {
        let step = [0, 1, 2].map(|row| self.voxel_to_patient[row][2].abs());
        (0..3).fold(
            0,
            |best, axis| if step[axis] > step[best] { axis } else { best },
        )
    }

    /// Slice `k` alone, as a one-slice volume at the same place in patient space, with the whole
    /// volume's windows and value range: drawn with those, it looks exactly as slice `k` of the
    /// whole volume does. `None` past the last slice.
    pub fn single_slice(&self, k: usize) -> Option<Volume> {
        if k >= self.dims[2] {
            return None;
        }
        let per_slice = self.dims[0] * self.dims[1] * usize::from(self.channels.max(1));
        let mut voxel_to_patient = self.voxel_to_patient;
        for row in &mut voxel_to_patient[..3] {
            row[3] += k as f64 * row[2];
        }
        Some(Volume {
            dims: [self.dims[0], self.dims[1], 1],
            voxel_to_patient,
            samples: self.samples.sub_range(k * per_slice..(k + 1) * per_slice),
            channels: self.channels,
            rescale: self.rescale,
            windows: self.windows.clone(),
            modality: self.modality.clone(),
            monochrome1: self.monochrome1,
            value_range: self.value_range,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robust_window_skips_background_and_the_brightest_half_percent() {
        // 1000 background voxels at 0, then 1..=1000 once each, then 4 outliers at 4000.
        let mut v: Vec<i16> = vec![0; 1000];
        v.extend(1..=1000);
        v.extend([4000; 4]);
        let samples = Samples::I16(v);
        let w = robust_window(&samples, Rescale::IDENTITY, (0.0, 4000.0)).expect("a window");
        // Background: values <= 80 (2 % of 4000). Counted: 81..=1000 (920) and the 4 outliers:
        // 924 voxels. 1st percentile = rank ceil(9.24) = 10 -> value 90; 99.5th = rank
        // ceil(919.38) = 920 -> value 1000 (the outliers are ranks 921..924).
        // Bins are 4000/4096 wide: the edges are the bins holding 90 and 1000.
        let bin = 4000.0 / 4096.0;
        let lo = (90.0f64 / bin).floor() * bin;
        let hi = ((1000.0f64 / bin).floor() + 1.0) * bin;
        let edges = (
            w.center - 0.5 - (w.width - 1.0) / 2.0,
            w.center - 0.5 + (w.width - 1.0) / 2.0,
        );
        assert!((edges.0 - lo).abs() < 1e-9, "{edges:?} vs {lo}");
        assert!((edges.1 - hi).abs() < 1e-9, "{edges:?} vs {hi}");
    }

    #[test]
    fn robust_window_applies_the_rescale_and_refuses_flat_volumes() {
        let samples = Samples::U16((0..=100).collect());
        let rescale = Rescale {
            slope: 2.0,
            intercept: 10.0,
        };
        let w = robust_window(&samples, rescale, (0.0, 100.0)).expect("a window");
        let low_edge = w.center - 0.5 - (w.width - 1.0) / 2.0;
        // Non-background: 3..=100 (98 voxels); 1st percentile = rank 1 -> stored 3, bin edge
        // floor(3 / (100/4096)) * (100/4096), then x2 + 10.
        let bin = 100.0 / 4096.0;
        assert!((low_edge - ((3.0f64 / bin).floor() * bin * 2.0 + 10.0)).abs() < 1e-9);
        assert!(robust_window(&Samples::U16(vec![5; 10]), rescale, (5.0, 5.0)).is_none());
        let reversed = Rescale {
            slope: -1.0,
            intercept: 0.0,
        };
        assert!(robust_window(&samples, reversed, (0.0, 100.0)).is_none());
    }

    #[test]
    fn mr_without_a_window_opens_on_the_robust_range_and_ct_on_the_full_range() {
        let mut v: Vec<i16> = vec![0; 500];
        v.extend(1..=500);
        v.push(5000);
        let mr = finish(
            [1001, 1, 1],
            [
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
            Samples::I16(v.clone()),
            1,
            Rescale::IDENTITY,
            Vec::new(),
            Some("MR".into()),
            false,
        );
        assert_eq!(mr.windows.len(), 2);
        assert!(mr.windows[0].explanation.contains("percentile"));
        assert!(mr.windows[0].width < 1000.0, "{:?}", mr.windows[0]);
        let ct = finish(
            [1001, 1, 1],
            [
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
            Samples::I16(v),
            1,
            Rescale::IDENTITY,
            Vec::new(),
            Some("CT".into()),
            false,
        );
        assert_eq!(ct.windows.len(), 1);
        assert_eq!(ct.windows[0].width, 5001.0);
    }
}
