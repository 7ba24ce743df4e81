//! `probe` and `render` of docs/formats.md §4, for DICOM, NIfTI and PNG/JPEG alike.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use dicom_object::DefaultDicomObject;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::DynamicImage;
use serde::Serialize;

use super::error::{ImagingError, ImagingErrorKind};
use super::{dicom, nifti, raster};

/// What to render. `frame` counts from 0 (for NIfTI: axial slice = third voxel axis of volume 0);
/// `window` is (center, width) of a linear VOI window in modality units.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RenderOptions {
    pub frame: Option<u32>,
    pub window: Option<(f64, f64)>,
}

/// An image file's facts (`neurorater probe FILE --json`). Keys absent for a format are null.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// "dicom", "nifti1", "nifti2", "png" or "jpeg".
    pub format: &'static str,
    pub rows: u32,
    pub columns: u32,
    /// DICOM frames; NIfTI slices along the third axis.
    pub frames: u32,
    pub modality: Option<String>,
    pub bits_allocated: Option<u32>,
    pub photometric_interpretation: Option<String>,
    /// The UID alone.
    pub transfer_syntax: Option<String>,
    /// Of frame 0 (NIfTI: scl_slope/scl_inter, 1 and 0 when unscaled).
    pub rescale_slope: f64,
    pub rescale_intercept: f64,
    /// The file's first window for frame 0 (NIfTI: cal_min..cal_max as a window), if any.
    pub window_center: Option<f64>,
    pub window_width: Option<f64>,
    /// Over all frames (NIfTI: volume 0), before rescale.
    pub stored_min: Option<f64>,
    pub stored_max: Option<f64>,
    /// NIfTI: dim[1..=dim[0]].
    pub dims: Option<Vec<i64>>,
    /// NIfTI datatype name (nibabel's spelling: int16, float32, rgb24…).
    pub datatype: Option<&'static str>,
    /// NIfTI: pixdim[1..=dim[0]].
    pub pixdim: Option<Vec<f64>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Dicom,
    Nifti,
    Png,
    Jpeg,
}

/// Decides by content, not by name: DICOM preamble, NIfTI header size (after gunzip), PNG or
/// JPEG signature. A file with none of these is tried as preamble-less DICOM.
pub(crate) fn detect(path: &Path) -> Result<Format, ImagingError> {
    let mut first = Vec::with_capacity(132);
    std::fs::File::open(path)
        .and_then(|f| f.take(132).read_to_end(&mut first))
        .map_err(|e| ImagingError::new(path, ImagingErrorKind::Io, format!("cannot read: {e}")))?;
    if first.get(128..132) == Some(b"DICM") {
        return Ok(Format::Dicom);
    }
    if first.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(Format::Png);
    }
    if first.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(Format::Jpeg);
    }
    if nifti::looks_like_nifti(&first) {
        return Ok(Format::Nifti);
    }
    if first.starts_with(&[0x1f, 0x8b]) {
        let mut stream = nifti::open_stream(path)?;
        let mut head = [0u8; 4];
        if stream.read_exact(&mut head).is_ok() && nifti::looks_like_nifti(&head) {
            return Ok(Format::Nifti);
        }
        return Err(ImagingError::new(
            path,
            ImagingErrorKind::UnrecognisedFormat,
            "a gzip file that does not hold a NIfTI image",
        ));
    }
    Ok(Format::Dicom)
}

pub fn probe(path: &Path) -> Result<Probe, ImagingError> {
    match detect(path)? {
        Format::Dicom => {
            let image = dicom::decode_file(path)?;
            let (h, d) = (&image.header, &image.decoded);
            let rescale = d.frame_rescale(0);
            let window = d.frame_windows(0).into_iter().next();
            let stored = d.stored_range();
            Ok(Probe {
                format: "dicom",
                rows: h.rows,
                columns: h.columns,
                frames: h.frames,
                modality: h.modality.clone(),
                bits_allocated: Some(h.bits_allocated),
                photometric_interpretation: Some(h.photometric.clone()),
                transfer_syntax: Some(h.transfer_syntax.clone()),
                rescale_slope: rescale.slope,
                rescale_intercept: rescale.intercept,
                window_center: window.as_ref().map(|w| w.center),
                window_width: window.as_ref().map(|w| w.width),
                stored_min: stored.map(|s| s.0),
                stored_max: stored.map(|s| s.1),
                dims: None,
                datatype: None,
                pixdim: None,
            })
        }
        Format::Nifti => {
            let image = nifti::decode_file(path)?;
            let (h, d) = (&image.header, &image.decoded);
            let used = h.dim[0].clamp(1, 7) as usize;
            let rescale = d.frame_rescale(0);
            let window = d.frame_windows(0).into_iter().next();
            let stored = d.stored_range();
            Ok(Probe {
                format: if h.version == 2 { "nifti2" } else { "nifti1" },
                rows: d.rows,
                columns: d.columns,
                frames: d.frames,
                modality: None,
                bits_allocated: Some(h.bitpix.max(0) as u32),
                photometric_interpretation: None,
                transfer_syntax: None,
                rescale_slope: rescale.slope,
                rescale_intercept: rescale.intercept,
                window_center: window.as_ref().map(|w| w.center),
                window_width: window.as_ref().map(|w| w.width),
                stored_min: stored.map(|s| s.0),
                stored_max: stored.map(|s| s.1),
                dims: Some(h.dim[1..=used].to_vec()),
                datatype: Some(h.datatype_name()),
                pixdim: Some(h.pixdim[1..=used].to_vec()),
            })
        }
        format @ (Format::Png | Format::Jpeg) => {
            let image = raster::open(path)?;
            let d = raster::decode(&image);
            let stored = d.stored_range();
            Ok(Probe {
                format: if format == Format::Png { "png" } else { "jpeg" },
                rows: d.rows,
                columns: d.columns,
                frames: 1,
                modality: None,
                bits_allocated: Some(
                    image.color().bits_per_pixel() as u32 / image.color().channel_count() as u32,
                ),
                photometric_interpretation: None,
                transfer_syntax: None,
                rescale_slope: 1.0,
                rescale_intercept: 0.0,
                window_center: None,
                window_width: None,
                stored_min: stored.map(|s| s.0),
                stored_max: stored.map(|s| s.1),
                dims: None,
                datatype: None,
                pixdim: None,
            })
        }
    }
}

/// A DICOM file read and parsed, its pixel data not yet decoded. Rendering it again (another
/// frame or window) skips reading and parsing, which for one native 512² slice costs more than
/// decoding and windowing it; the benchmark measures the two parts apart through this.
pub struct ParsedDicom {
    path: PathBuf,
    object: DefaultDicomObject,
}

impl ParsedDicom {
    /// Reads and parses the whole file (the structure guard first, as for every DICOM read).
    pub fn open(path: &Path) -> Result<ParsedDicom, ImagingError> {
        Ok(ParsedDicom {
            path: path.to_path_buf(),
            object: dicom::open(path)?,
        })
    }

    /// Decodes the pixel data and renders one frame by the rule of docs/formats.md §4, as [`render`].
    pub fn render(&self, opts: &RenderOptions) -> Result<DynamicImage, ImagingError> {
        let image = dicom::decode_object(&self.path, &self.object)?;
        let ts = &image.header.transfer_syntax;
        image
            .decoded
            .render(&self.path, opts.frame, opts.window)
            .map_err(|e| e.with_transfer_syntax(ts))
    }
}

/// One frame as 8-bit grey (L8) or colour (Rgb8), by the rule of docs/formats.md §4. Stateless, so a
/// batch is a loop over files in one process.
pub fn render(path: &Path, opts: &RenderOptions) -> Result<DynamicImage, ImagingError> {
    let decoded = match detect(path)? {
        Format::Dicom => return ParsedDicom::open(path)?.render(opts),
        Format::Nifti => nifti::decode_file(path)?.decoded,
        Format::Png | Format::Jpeg => raster::decode(&raster::open(path)?),
    };
    decoded.render(path, opts.frame, opts.window)
}

/// [`render`] encoded as PNG.
pub fn render_png(path: &Path, opts: &RenderOptions) -> Result<Vec<u8>, ImagingError> {
    let image = render(path, opts)?;
    let mut png = Vec::new();
    // Lossless either way; the fixed Up filter instead of the adaptive choice per row (which
    // tries all five filters) took 8 % fewer instructions over the CLI's batch of fixtures, for
    // files ~20 % larger (docs/performance.md, Imaging).
    let encoder =
        PngEncoder::new_with_quality(Cursor::new(&mut png), CompressionType::Fast, FilterType::Up);
    image.write_with_encoder(encoder).map_err(|e| {
        ImagingError::new(
            path,
            ImagingErrorKind::Encode,
            format!("cannot encode the PNG: {e}"),
        )
    })?;
    Ok(png)
}
