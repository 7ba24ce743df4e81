//! 12-bit lossy JPEG (DICOM JPEG Extended, 1.2.840.10008.1.2.4.51, processes 2 and 4) through
//! libjpeg-turbo's 12-bit decoder. dicom-rs's jpeg-decoder reads 8-bit precision only, yet older
//! CT, MR and NM archives hold 12-bit JPEG; every other codec stays with dicom-pixeldata.
//!
//! The only `unsafe` of the crate: the TurboJPEG calls on a handle this module owns, writing
//! into a buffer checked against the size the library itself read from the stream.

use std::ffi::CStr;

use dicom_core::value::Value;
use dicom_dictionary_std::tags;
use dicom_object::mem::InMemFragment;
use dicom_object::{DefaultDicomObject, InMemDicomObject};
use turbojpeg_sys as tj;

use super::dicom::PixelHeader;
use super::error::ImagingErrorKind;

/// JPEG Baseline (process 1) and JPEG Extended (processes 2 and 4): a 12-bit stream is legal
/// only under the latter, but a mislabelled one is decoded all the same: the stream's own
/// start-of-frame says what it holds.
const JPEG_LOSSY_SYNTAXES: [&str; 2] = ["1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.51"];

/// Whether the pixel data is lossy JPEG at 12-bit precision, which this module decodes.
pub(crate) fn is_twelve_bit_jpeg(obj: &DefaultDicomObject, transfer_syntax: &str) -> bool {
    if !JPEG_LOSSY_SYNTAXES.contains(&transfer_syntax) {
        return false;
    }
    let Some(fragments) = obj
        .get(tags::PIXEL_DATA)
        .and_then(|e| e.value().fragments())
    else {
        return false;
    };
    fragments
        .first()
        .is_some_and(|first| lossy_precision(first) == Some(12))
}

/// The sample precision of a lossy (DCT) JPEG's start-of-frame segment, `None` when the stream
/// has none before its first scan or is lossless (SOF3, SOF7, SOF11, SOF15: dicom-rs decodes
/// those at any precision).
fn lossy_precision(jpeg: &[u8]) -> Option<u8> {
    if jpeg.get(..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut at = 2;
    loop {
        // Markers may be preceded by any number of 0xFF fill bytes (ITU T.81 B.1.1.2).
        while *jpeg.get(at)? == 0xFF && *jpeg.get(at + 1)? == 0xFF {
            at += 1;
        }
        if *jpeg.get(at)? != 0xFF {
            return None;
        }
        let marker = *jpeg.get(at + 1)?;
        let length = u16::from_be_bytes([*jpeg.get(at + 2)?, *jpeg.get(at + 3)?]) as usize;
        match marker {
            // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                let lossless = matches!(marker, 0xC3 | 0xC7 | 0xCB | 0xCF);
                return if lossless {
                    None
                } else {
                    jpeg.get(at + 4).copied()
                };
            }
            0xDA | 0xD9 => return None,
            _ => at += 2 + length,
        }
    }
}

/// Decodes every frame of a 12-bit grey JPEG into 16-bit little-endian stored values, frame
/// after frame, as dicom-pixeldata lays out BitsAllocated 16 data. The reason on failure is
/// worded for the user; the caller adds the file and transfer syntax.
pub(crate) fn decode_frames(
    obj: &DefaultDicomObject,
    header: &PixelHeader,
) -> Result<Vec<u8>, (ImagingErrorKind, String)> {
    let unsupported = |reason: String| (ImagingErrorKind::Unsupported, reason);
    let corrupt = |reason: String| (ImagingErrorKind::Decode, reason);
    if header.samples_per_pixel != 1 {
        return Err(unsupported(format!(
            "12-bit JPEG with SamplesPerPixel {} is not supported (grey images only)",
            header.samples_per_pixel
        )));
    }
    if header.bits_allocated != 16 {
        return Err(unsupported(format!(
            "12-bit JPEG needs BitsAllocated 16, the file declares {}",
            header.bits_allocated
        )));
    }
    let value = obj
        .get(tags::PIXEL_DATA)
        .map(|e| e.value())
        .ok_or_else(|| corrupt("the file has no PixelData (7FE0,0010)".into()))?;
    let streams = frame_streams(value, header.frames).map_err(corrupt)?;
    let decoder = Decoder::new().map_err(corrupt)?;
    let (rows, columns) = (header.rows, header.columns);
    let frame_pixels = rows as usize * columns as usize;
    let mut out = Vec::with_capacity(frame_pixels * 2 * streams.len());
    let mut samples = vec![0i16; frame_pixels];
    for (index, stream) in streams.iter().enumerate() {
        decoder
            .decode_grey(stream, rows, columns, &mut samples)
            .map_err(|reason| corrupt(format!("frame {index}: {reason}")))?;
        out.extend(samples.iter().flat_map(|s| s.to_le_bytes()));
    }
    Ok(out)
}

/// One JPEG stream per frame (PS3.5 A.4): one fragment per frame, all fragments of a
/// single-frame image, or the fragments the Basic Offset Table assigns to each frame.
fn frame_streams(
    value: &Value<InMemDicomObject, InMemFragment>,
    frames: u32,
) -> Result<Vec<Vec<u8>>, String> {
    let fragments = value
        .fragments()
        .ok_or("the pixel data of a JPEG transfer syntax is not encapsulated")?;
    let frames = frames as usize;
    if fragments.is_empty() {
        return Err("the pixel data holds no JPEG fragment".into());
    }
    if frames == 1 {
        return Ok(vec![fragments.concat()]);
    }
    if fragments.len() == frames {
        return Ok(fragments.to_vec());
    }
    let offsets = value.offset_table().unwrap_or_default();
    if offsets.len() != frames {
        return Err(format!(
            "{} fragments for {frames} frames and a Basic Offset Table of {} entries: cannot tell where each frame starts",
            fragments.len(),
            offsets.len()
        ));
    }
    // Offsets count from the first fragment's item tag: 8 bytes of item header per fragment.
    let mut starts = Vec::with_capacity(fragments.len());
    let mut position = 0u64;
    for fragment in fragments {
        starts.push(position);
        position += 8 + fragment.len() as u64;
    }
    let mut streams = Vec::with_capacity(frames);
    for (frame, &offset) in offsets.iter().enumerate() {
        let end = offsets.get(frame + 1).map_or(u64::MAX, |&o| u64::from(o));
        let first = starts
            .iter()
            .position(|&s| s == u64::from(offset))
            .ok_or_else(|| {
                format!("Basic Offset Table entry {frame} ({offset}) is not at a fragment")
            })?;
        let stream: Vec<u8> = fragments[first..]
            .iter()
            .zip(&starts[first..])
            .take_while(|(_, &start)| start < end)
            .flat_map(|(fragment, _)| fragment.iter().copied())
            .collect();
        streams.push(stream);
    }
    Ok(streams)
}

/// A TurboJPEG decompression handle, destroyed on drop.
struct Decoder(tj::tjhandle);

impl Decoder {
    fn new() -> Result<Self, String> {
        // SAFETY: tj3Init has no preconditions; a null handle is its failure.
        let handle = unsafe { tj::tj3Init(tj::TJINIT_TJINIT_DECOMPRESS as _) };
        if handle.is_null() {
            return Err("cannot start the 12-bit JPEG decoder (libjpeg-turbo)".into());
        }
        let decoder = Decoder(handle);
        // A warning (premature end of data, a corrupt segment) would leave grey or garbled
        // rows in the picture: treat it as the error it is. A scan limit stops a crafted
        // progressive stream from costing minutes.
        decoder.set(tj::TJPARAM_TJPARAM_STOPONWARNING, 1)?;
        decoder.set(tj::TJPARAM_TJPARAM_SCANLIMIT, 500)?;
        Ok(decoder)
    }

    fn set(&self, param: tj::TJPARAM, value: i32) -> Result<(), String> {
        // SAFETY: self.0 is a live handle from tj3Init.
        if unsafe { tj::tj3Set(self.0, param as _, value) } != 0 {
            return Err(self.last_error());
        }
        Ok(())
    }

    fn get(&self, param: tj::TJPARAM) -> i32 {
        // SAFETY: self.0 is a live handle from tj3Init.
        unsafe { tj::tj3Get(self.0, param as _) }
    }

    fn last_error(&self) -> String {
        // SAFETY: tj3GetErrorStr returns a NUL-terminated string owned by the handle, valid
        // until the next call on it; it is copied at once.
        let text = unsafe { CStr::from_ptr(tj::tj3GetErrorStr(self.0)) };
        format!("libjpeg-turbo: {}", text.to_string_lossy())
    }

    /// Decodes one grey 12-bit frame of `rows` × `columns` into `out` (exactly that many
    /// samples), after checking that the stream's own header agrees with the DICOM header.
    fn decode_grey(
        &self,
        jpeg: &[u8],
        rows: u32,
        columns: u32,
        out: &mut [i16],
    ) -> Result<(), String> {
        // SAFETY: jpeg is a live slice of jpeg.len() bytes; the handle is live.
        if unsafe { tj::tj3DecompressHeader(self.0, jpeg.as_ptr(), jpeg.len() as _) } != 0 {
            return Err(self.last_error());
        }
        let width = self.get(tj::TJPARAM_TJPARAM_JPEGWIDTH);
        let height = self.get(tj::TJPARAM_TJPARAM_JPEGHEIGHT);
        let precision = self.get(tj::TJPARAM_TJPARAM_PRECISION);
        let colourspace = self.get(tj::TJPARAM_TJPARAM_COLORSPACE);
        if (width, height) != (columns as i32, rows as i32) {
            return Err(format!(
                "the JPEG stream is {width} × {height} pixels, the header declares Columns {columns} × Rows {rows}"
            ));
        }
        if precision != 12 || self.get(tj::TJPARAM_TJPARAM_LOSSLESS) != 0 {
            return Err(format!(
                "the JPEG stream is not lossy 12-bit (precision {precision})"
            ));
        }
        if colourspace != tj::TJCS_TJCS_GRAY as i32 {
            return Err("the JPEG stream has colour components where SamplesPerPixel is 1".into());
        }
        if out.len() != rows as usize * columns as usize {
            return Err(format!(
                "a {rows} × {columns} frame does not fit a buffer of {} samples",
                out.len()
            ));
        }
        // SAFETY: out holds width × height samples (checked just above, with width and height
        // equal to the stream's own) and the pitch is one row of width grey samples, so the
        // decoder writes inside it.
        let status = unsafe {
            tj::tj3Decompress12(
                self.0,
                jpeg.as_ptr(),
                jpeg.len() as _,
                out.as_mut_ptr(),
                width,
                tj::TJPF_TJPF_GRAY,
            )
        };
        if status != 0 {
            return Err(self.last_error());
        }
        Ok(())
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: self.0 came from tj3Init and is destroyed once, here.
        unsafe { tj::tj3Destroy(self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::lossy_precision;

    fn jpeg_with_sof(marker: u8, precision: u8) -> Vec<u8> {
        let mut stream = vec![0xFF, 0xD8];
        // An APP0 segment to skip, with fill bytes before the next marker.
        stream.extend([0xFF, 0xE0, 0x00, 0x04, 0xAB, 0xCD, 0xFF, 0xFF]);
        stream.extend([
            0xFF, marker, 0x00, 0x0B, precision, 0x00, 0x10, 0x00, 0x10, 0x01,
        ]);
        stream.extend([0x01, 0x11, 0x00, 0xFF, 0xDA]);
        stream
    }

    #[test]
    fn precision_comes_from_the_lossy_start_of_frame() {
        assert_eq!(lossy_precision(&jpeg_with_sof(0xC1, 12)), Some(12));
        assert_eq!(lossy_precision(&jpeg_with_sof(0xC0, 8)), Some(8));
        // Lossless process 14 at 12 bits stays with dicom-rs.
        assert_eq!(lossy_precision(&jpeg_with_sof(0xC3, 12)), None);
    }

    #[test]
    fn streams_without_a_frame_header_have_no_precision() {
        assert_eq!(lossy_precision(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 2]), None);
        assert_eq!(lossy_precision(&[0xFF, 0xD8, 0xFF, 0xE0, 0x00]), None);
        assert_eq!(lossy_precision(b"not a jpeg"), None);
        assert_eq!(lossy_precision(&[]), None);
    }
}
