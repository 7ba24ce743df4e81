//! DICOM pixel data through dicom-pixeldata (every codec it offers; 12-bit JPEG through
//! libjpeg-turbo, jpeg12.rs), then our own handling of the stored bits, colour models, rescale
//! and windows — single-frame, multi-frame and enhanced multi-frame alike.

use std::path::Path;

use dicom_core::header::HasLength;
use dicom_dictionary_std::tags;
use dicom_object::{open_file, DefaultDicomObject, InMemDicomObject, OpenFileOptions};
use dicom_pixeldata::{DecodedPixelData, PixelDecoder, PlanarConfiguration};

use super::decoded::{Decoded, Rescale};
use super::error::{ImagingError, ImagingErrorKind};
use super::jpeg12;
use super::meta::{functional_group_item, open_error, text, unsigned};
use super::samples::Samples;
use super::voi::{VoiFunction, Window};
use super::MAX_DECODED_BYTES;

/// The header facts of the pixel data, as the file declares them.
#[derive(Debug, Clone)]
pub(crate) struct PixelHeader {
    pub rows: u32,
    pub columns: u32,
    pub frames: u32,
    pub samples_per_pixel: u32,
    pub bits_allocated: u32,
    pub bits_stored: u32,
    pub signed: bool,
    pub photometric: String,
    pub transfer_syntax: String,
    pub modality: Option<String>,
}

/// A DICOM file with its pixel data decoded.
pub(crate) struct DicomImage {
    pub header: PixelHeader,
    pub decoded: Decoded,
}

/// Opens a whole DICOM file. When the header reads but the rest does not, the error says so,
/// with the transfer syntax: a file cut short inside its pixel data is `Truncated`.
pub(crate) fn open(path: &Path) -> Result<DefaultDicomObject, ImagingError> {
    super::guard::check_dicom_structure(path, false)?;
    open_file(path).map_err(|e| {
        let Ok(header) = OpenFileOptions::new()
            .read_until(tags::PIXEL_DATA)
            .open_file(path)
        else {
            return open_error(path, &e);
        };
        let ts = header.meta().transfer_syntax().to_string();
        let kind = if ends_early(&e) {
            ImagingErrorKind::Truncated
        } else {
            ImagingErrorKind::Decode
        };
        let what = if kind == ImagingErrorKind::Truncated {
            "the file ends inside its pixel data"
        } else {
            "cannot read past the header"
        };
        ImagingError::new(path, kind, format!("{what}: {}", error_chain(&e)))
            .with_transfer_syntax(&ts)
    })
}

/// Whether an I/O "unexpected end of file" is among the causes of `e`.
fn ends_early(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

pub(crate) fn decode_file(path: &Path) -> Result<DicomImage, ImagingError> {
    decode_object(path, &open(path)?)
}

pub(crate) fn decode_object(
    path: &Path,
    obj: &DefaultDicomObject,
) -> Result<DicomImage, ImagingError> {
    let header = pixel_header(path, obj)?;
    let err = |kind, reason: String| {
        ImagingError::new(path, kind, reason).with_transfer_syntax(&header.transfer_syntax)
    };

    if obj.get(tags::PIXEL_DATA).is_none() {
        let reason = if obj.get(tags::FLOAT_PIXEL_DATA).is_some()
            || obj.get(tags::DOUBLE_FLOAT_PIXEL_DATA).is_some()
        {
            "float pixel data (7FE0,0008 / 7FE0,0009) is not supported"
        } else {
            "the file has no PixelData (7FE0,0010): it is not an image"
        };
        return Err(err(ImagingErrorKind::Unsupported, reason.into()));
    }
    if header.photometric == "PALETTE COLOR" {
        return Err(err(
            ImagingErrorKind::Unsupported,
            "PhotometricInterpretation PALETTE COLOR is not supported (no palette lookup yet)"
                .into(),
        ));
    }

    // dicom-rs's jpeg-decoder reads 8-bit precision only: 12-bit lossy JPEG goes to
    // libjpeg-turbo (jpeg12.rs), which hands back grey BitsAllocated 16 data.
    let twelve_bit;
    let by_dicom_rs;
    let (data, decoded_pi, planar): (&[u8], String, bool) =
        if jpeg12::is_twelve_bit_jpeg(obj, &header.transfer_syntax) {
            twelve_bit = jpeg12::decode_frames(obj, &header).map_err(|(kind, reason)| {
                err(kind, format!("cannot decode the pixel data: {reason}"))
            })?;
            (&twelve_bit, header.photometric.clone(), false)
        } else {
            by_dicom_rs = decode_with_dicom_rs(obj).map_err(|reason| {
                err(
                    ImagingErrorKind::Decode,
                    format!("cannot decode the pixel data: {reason}"),
                )
            })?;
            (
                by_dicom_rs.data(),
                by_dicom_rs
                    .photometric_interpretation()
                    .as_str()
                    .to_string(),
                by_dicom_rs.planar_configuration() == PlanarConfiguration::PixelFirst,
            )
        };
    let native_422 = header.photometric == "YBR_FULL_422" && is_native(&header.transfer_syntax);
    let frame_pixels = header.rows as usize * header.columns as usize;
    let bytes_per_sample = (header.bits_allocated as usize).div_ceil(8);
    let frame_bytes = if native_422 {
        frame_pixels * 2
    } else {
        frame_pixels * header.samples_per_pixel as usize * bytes_per_sample
    };
    let expected = frame_bytes * header.frames as usize;
    if data.len() < expected {
        return Err(err(
            ImagingErrorKind::Truncated,
            format!(
                "pixel data is truncated: {} bytes where Rows {} × Columns {} × NumberOfFrames {} × SamplesPerPixel {} × {} bits declare {expected}",
                data.len(),
                header.rows,
                header.columns,
                header.frames,
                header.samples_per_pixel,
                header.bits_allocated
            ),
        ));
    }
    let data = &data[..expected];

    let (samples, channels, colour_max) = if header.samples_per_pixel == 1 {
        (grey_samples(data, &header), 1, 0.0)
    } else {
        let rgb = colour_samples(data, &header, &decoded_pi, planar, native_422)
            .map_err(|r| err(ImagingErrorKind::Unsupported, r))?;
        (rgb, 3, 2f64.powi(header.bits_stored as i32) - 1.0)
    };

    let (rescale, windows) = rescale_and_windows(obj, header.frames);
    let decoded = Decoded {
        columns: header.columns,
        rows: header.rows,
        frames: header.frames,
        channels,
        samples,
        rescale,
        windows,
        monochrome1: header.photometric == "MONOCHROME1",
        colour_max,
    };
    Ok(DicomImage { header, decoded })
}

/// Every codec dicom-rs offers. Its JPEG adapter indexes past its buffer on some malformed
/// streams (found by the fuzzer, fuzz/regressions/dicom/): a codec's panic is this file's
/// decode error, not a crash.
fn decode_with_dicom_rs(obj: &DefaultDicomObject) -> Result<DecodedPixelData<'_>, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| obj.decode_pixel_data()))
        .map_err(|_| "the codec failed on malformed compressed data".to_string())?
        .map_err(|e| error_chain(&e))
}

/// Reads and validates the pixel module, refusing absurd sizes before anything is allocated.
pub(crate) fn pixel_header(
    path: &Path,
    obj: &DefaultDicomObject,
) -> Result<PixelHeader, ImagingError> {
    let transfer_syntax = obj
        .meta()
        .transfer_syntax()
        .trim_end_matches(['\0', ' '])
        .to_string();
    let err = |kind, reason: String| {
        ImagingError::new(path, kind, reason).with_transfer_syntax(&transfer_syntax)
    };
    let required = |tag, name: &str| {
        unsigned(obj, tag).ok_or_else(|| {
            err(
                ImagingErrorKind::InvalidHeader,
                format!("{name} is missing or not a number"),
            )
        })
    };
    let rows = required(tags::ROWS, "Rows (0028,0010)")?;
    let columns = required(tags::COLUMNS, "Columns (0028,0011)")?;
    let bits_allocated = required(tags::BITS_ALLOCATED, "BitsAllocated (0028,0100)")?;
    let bits_stored = unsigned(obj, tags::BITS_STORED).unwrap_or(bits_allocated);
    let samples_per_pixel = unsigned(obj, tags::SAMPLES_PER_PIXEL).unwrap_or(1);
    let frames = match obj.get(tags::NUMBER_OF_FRAMES) {
        Some(e) if !e.is_empty() => e.to_int::<u32>().map_err(|_| {
            err(
                ImagingErrorKind::InvalidHeader,
                "NumberOfFrames (0028,0008) is not a non-negative integer".into(),
            )
        })?,
        _ => 1,
    };
    let photometric = text(obj, tags::PHOTOMETRIC_INTERPRETATION).ok_or_else(|| {
        err(
            ImagingErrorKind::InvalidHeader,
            "PhotometricInterpretation (0028,0004) is missing".into(),
        )
    })?;
    if rows == 0 || columns == 0 || frames == 0 {
        return Err(err(
            ImagingErrorKind::InvalidHeader,
            format!("empty image: Rows {rows}, Columns {columns}, NumberOfFrames {frames}"),
        ));
    }
    if ![1, 8, 16, 32].contains(&bits_allocated) || bits_stored == 0 || bits_stored > bits_allocated
    {
        return Err(err(
            ImagingErrorKind::Unsupported,
            format!("BitsAllocated {bits_allocated} with BitsStored {bits_stored} is not supported (1, 8, 16 or 32 bits, BitsStored ≤ BitsAllocated)"),
        ));
    }
    if samples_per_pixel != 1 && samples_per_pixel != 3 {
        return Err(err(
            ImagingErrorKind::Unsupported,
            format!("SamplesPerPixel {samples_per_pixel} is not supported (1 or 3)"),
        ));
    }
    let declared = rows as u128
        * columns as u128
        * frames as u128
        * samples_per_pixel as u128
        * (bits_allocated as u128).div_ceil(8);
    if declared > MAX_DECODED_BYTES as u128 {
        return Err(err(
            ImagingErrorKind::TooLarge,
            format!(
                "Rows {rows} × Columns {columns} × NumberOfFrames {frames} × SamplesPerPixel {samples_per_pixel} × {bits_allocated} bits declares {declared} bytes, more than the {MAX_DECODED_BYTES}-byte limit"
            ),
        ));
    }
    Ok(PixelHeader {
        rows,
        columns,
        frames,
        samples_per_pixel,
        bits_allocated,
        bits_stored,
        signed: unsigned(obj, tags::PIXEL_REPRESENTATION) == Some(1),
        photometric,
        transfer_syntax,
        modality: text(obj, tags::MODALITY),
    })
}

fn is_native(ts: &str) -> bool {
    matches!(
        ts,
        "1.2.840.10008.1.2"
            | "1.2.840.10008.1.2.1"
            | "1.2.840.10008.1.2.2"
            | "1.2.840.10008.1.2.1.99"
    )
}

/// Stored values with the bits above BitsStored masked off and, for signed data, sign-extended
/// from BitsStored (PS3.5 8.1.1): junk in unused high bits (overlays, old scanners) must not
/// become pixel values.
fn grey_samples(data: &[u8], h: &PixelHeader) -> Samples {
    let bits = h.bits_stored;
    match h.bits_allocated {
        // dicom-pixeldata unpacks 1-bit data to one byte per pixel, 0 or 255.
        1 => Samples::U8(data.iter().map(|&b| u8::from(b != 0)).collect()),
        8 => {
            let values = data.iter().map(|&b| fit(b as u32, bits, h.signed));
            if h.signed {
                Samples::I8(values.map(|v| v as i8).collect())
            } else {
                Samples::U8(values.map(|v| v as u8).collect())
            }
        }
        // The common case (CT, MR) in 16-bit arithmetic, which vectorises: shifting the stored
        // bits to the top and back drops the unused high bits and, for signed data, extends the
        // sign from BitsStored, as `fit` does.
        // (Filling a zeroed vector through `zip` vectorises where `collect` over the chunks
        // did not: a third of the benchmark's decode + VOI time went to that loop.)
        16 => {
            let unused = 16 - bits;
            let words = || {
                data.chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]) << unused)
            };
            let n = data.len() / 2;
            if h.signed {
                let mut values = vec![0i16; n];
                for (v, w) in values.iter_mut().zip(words()) {
                    *v = (w as i16) >> unused;
                }
                Samples::I16(values)
            } else {
                let mut values = vec![0u16; n];
                for (v, w) in values.iter_mut().zip(words()) {
                    *v = w >> unused;
                }
                Samples::U16(values)
            }
        }
        _ => {
            let values = data
                .chunks_exact(4)
                .map(|c| fit(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), bits, h.signed));
            if h.signed {
                Samples::I32(values.map(|v| v as i32).collect())
            } else {
                Samples::U32(values.map(|v| v as u32).collect())
            }
        }
    }
}

/// `raw` restricted to its low `bits` bits, as a signed or unsigned value.
#[inline]
fn fit(raw: u32, bits: u32, signed: bool) -> i64 {
    let value = if bits >= 32 {
        raw as u64
    } else {
        (raw & ((1u32 << bits) - 1)) as u64
    } as i64;
    if signed && bits < 64 && value >= 1i64 << (bits - 1) {
        value - (1i64 << bits)
    } else {
        value
    }
}

/// Interleaved RGB from whatever the codec left: planar or interleaved, RGB or YBR_FULL,
/// native YBR_FULL_422 (two luma samples share one chroma pair, PS3.3 C.7.6.3.1.2).
fn colour_samples(
    data: &[u8],
    h: &PixelHeader,
    decoded_pi: &str,
    planar: bool,
    native_422: bool,
) -> Result<Samples, String> {
    let pixels = h.rows as usize * h.columns as usize;
    if native_422 {
        if h.bits_allocated != 8 || !h.columns.is_multiple_of(2) {
            return Err(format!(
                "YBR_FULL_422 with {} bits and {} columns is not supported",
                h.bits_allocated, h.columns
            ));
        }
        let mut rgb = Vec::with_capacity(data.len() / 2 * 3);
        for quad in data.chunks_exact(4) {
            let (y0, y1, cb, cr) = (quad[0], quad[1], quad[2], quad[3]);
            rgb.extend_from_slice(&ybr_to_rgb(y0, cb, cr));
            rgb.extend_from_slice(&ybr_to_rgb(y1, cb, cr));
        }
        return Ok(Samples::U8(rgb));
    }
    let bytes = (h.bits_allocated as usize).div_ceil(8);
    let frame_bytes = pixels * 3 * bytes;
    let mut interleaved = Vec::with_capacity(data.len());
    for frame in data.chunks_exact(frame_bytes) {
        if planar {
            for p in 0..pixels {
                for c in 0..3 {
                    let at = (c * pixels + p) * bytes;
                    interleaved.extend_from_slice(&frame[at..at + bytes]);
                }
            }
        } else {
            interleaved.extend_from_slice(frame);
        }
    }
    match (decoded_pi, h.bits_allocated) {
        ("RGB", 8) => Ok(Samples::U8(interleaved)),
        ("YBR_FULL", 8) => Ok(Samples::U8(
            interleaved
                .chunks_exact(3)
                .flat_map(|p| ybr_to_rgb(p[0], p[1], p[2]))
                .collect(),
        )),
        ("RGB", 16) => Ok(Samples::U16(
            interleaved
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        )),
        ("RGB", 32) => Ok(Samples::U32(
            interleaved
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )),
        (pi, bits) => Err(format!(
            "colour data in {pi} with {bits} bits per sample is not supported"
        )),
    }
}

/// YBR_FULL to RGB with the coefficients of PS3.3 C.7.6.3.1.2 (ITU-R BT.601, full range).
fn ybr_to_rgb(y: u8, cb: u8, cr: u8) -> [u8; 3] {
    let (y, cb, cr) = (y as f64, cb as f64 - 128.0, cr as f64 - 128.0);
    let channel = |v: f64| (v + 0.5).floor().clamp(0.0, 255.0) as u8;
    [
        channel(y + 1.402 * cr),
        channel(y - 0.344136 * cb - 0.714136 * cr),
        channel(y + 1.772 * cb),
    ]
}

/// Rescale and windows from the top level, or per frame from the enhanced multi-frame functional
/// groups (Pixel Value Transformation and Frame VOI LUT macros; per-frame overrides shared).
fn rescale_and_windows(obj: &InMemDicomObject, frames: u32) -> (Vec<Rescale>, Vec<Vec<Window>>) {
    let shared = functional_group_item(obj, tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE);
    let per_frame: Vec<&InMemDicomObject> = obj
        .get(tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE)
        .and_then(|e| e.items())
        .filter(|items| items.len() == frames as usize)
        .map(|items| items.iter().collect())
        .unwrap_or_default();

    let shared_rescale = shared
        .and_then(|s| macro_item(s, tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE))
        .and_then(rescale_in);
    let shared_windows = shared
        .and_then(|s| macro_item(s, tags::FRAME_VOILUT_SEQUENCE))
        .map(windows_in);
    let top_rescale = rescale_in(obj)
        .or(shared_rescale)
        .unwrap_or(Rescale::IDENTITY);
    let top_windows = shared_windows.unwrap_or_else(|| windows_in(obj));

    let frame_rescale: Vec<Option<Rescale>> = per_frame
        .iter()
        .map(|g| macro_item(g, tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE).and_then(rescale_in))
        .collect();
    let rescale = if frame_rescale.iter().any(Option::is_some) {
        frame_rescale
            .into_iter()
            .map(|r| r.unwrap_or(top_rescale))
            .collect()
    } else {
        vec![top_rescale]
    };
    let frame_windows: Vec<Option<Vec<Window>>> = per_frame
        .iter()
        .map(|g| macro_item(g, tags::FRAME_VOILUT_SEQUENCE).map(windows_in))
        .collect();
    let windows = if frame_windows.iter().any(Option::is_some) {
        frame_windows
            .into_iter()
            .map(|w| w.unwrap_or_else(|| top_windows.clone()))
            .collect()
    } else if top_windows.is_empty() {
        Vec::new()
    } else {
        vec![top_windows]
    };
    (rescale, windows)
}

/// The first item of the macro sequence `seq` inside a functional group item.
fn macro_item(group: &InMemDicomObject, seq: dicom_core::Tag) -> Option<&InMemDicomObject> {
    group.get(seq)?.items()?.first()
}

fn rescale_in(item: &InMemDicomObject) -> Option<Rescale> {
    let number = |tag| {
        item.get(tag)
            .and_then(|e| e.to_float64().ok())
            .filter(|v| v.is_finite())
    };
    let (slope, intercept) = (number(tags::RESCALE_SLOPE), number(tags::RESCALE_INTERCEPT));
    if slope.is_none() && intercept.is_none() {
        return None;
    }
    Some(Rescale {
        slope: slope.unwrap_or(1.0),
        intercept: intercept.unwrap_or(0.0),
    })
}

fn windows_in(item: &InMemDicomObject) -> Vec<Window> {
    let numbers = |tag| {
        item.get(tag)
            .and_then(|e| e.to_multi_float64().ok())
            .unwrap_or_default()
    };
    let explanations: Vec<String> = item
        .get(tags::WINDOW_CENTER_WIDTH_EXPLANATION)
        .and_then(|e| e.to_multi_str().ok())
        .map(|v| v.iter().map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let function = VoiFunction::from_dicom(text(item, tags::VOILUT_FUNCTION).as_deref());
    numbers(tags::WINDOW_CENTER)
        .into_iter()
        .zip(numbers(tags::WINDOW_WIDTH))
        .enumerate()
        .map(|(i, (center, width))| Window {
            center,
            width,
            function,
            explanation: explanations
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("window {} of the file", i + 1)),
        })
        .collect()
}

pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut reason = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        reason.push_str(": ");
        reason.push_str(&s.to_string());
        source = s.source();
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(bits_stored: u32, signed: bool) -> PixelHeader {
        PixelHeader {
            rows: 1,
            columns: 4,
            frames: 1,
            samples_per_pixel: 1,
            bits_allocated: 16,
            bits_stored,
            signed,
            photometric: "MONOCHROME2".into(),
            transfer_syntax: "1.2.840.10008.1.2.1".into(),
            modality: None,
        }
    }

    /// Little-endian words with junk above bit 11 (an overlay in the high bits, as old
    /// scanners wrote): 12-bit values 0x800 (−2048 signed), 0xFFF (−1), 0x7FF (2047), 5.
    const WORDS: [u16; 4] = [0xF800, 0xAFFF, 0x17FF, 0x3005];

    fn bytes() -> Vec<u8> {
        WORDS.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn twelve_bit_samples_drop_the_high_bits_and_extend_the_sign() {
        assert_eq!(
            grey_samples(&bytes(), &header(12, true)),
            Samples::I16(vec![-2048, -1, 2047, 5])
        );
        assert_eq!(
            grey_samples(&bytes(), &header(12, false)),
            Samples::U16(vec![0x800, 0xFFF, 0x7FF, 5])
        );
    }

    #[test]
    fn full_sixteen_bit_samples_are_the_words_themselves() {
        assert_eq!(
            grey_samples(&bytes(), &header(16, true)),
            Samples::I16(WORDS.iter().map(|&w| w as i16).collect())
        );
        assert_eq!(
            grey_samples(&bytes(), &header(16, false)),
            Samples::U16(WORDS.to_vec())
        );
    }
}
