//! Images leave the lead's site with nothing in them but pixels and geometry: the bundle's files
//! may still carry names, dates and UIDs (import never stores them, but it does not rewrite the
//! files), and a rater package must carry none.
//!
//! - DICOM, under the PS3.15 basic profile: identifying and private attributes are removed at
//!   every sequence depth; each UID the profile replaces gets `2.25.<128 bits of SHA-256(package
//!   id, original UID)>`, so a series' files keep one series UID (the bundle loader groups by it)
//!   while nobody can map it back without the package id, and two packages never share a UID.
//! - NIfTI-1/2: the free-text header fields (`descrip`, `aux_file`, `intent_name`, and the
//!   unused ANALYZE strings) are blanked and everything between the header and the voxels
//!   (extensions: often a whole DICOM header or a comment) is zeroed, so `vox_offset` and the
//!   voxels stay where they were; `.nii.gz` is written again without the original gzip header
//!   (which can hold the original file name and a time).
//! - PNG keeps only the chunks that say how its pixels look (an allow-list: text, eXIf, tIME,
//!   iCCP and private chunks go); JPEG loses every APPn segment (JFIF, EXIF, XMP, ICC, vendor
//!   data) but a well-formed Adobe APP14, which says how to read its colours, and every comment.
//!   Anything after the end of the image goes too.

use super::date_shift;
use crate::{Error, Result};
use dicom_core::value::Value;
use dicom_core::{DataElement, PrimitiveValue, Tag, VR};
use dicom_object::{open_file, FileDicomObject, InMemDicomObject};
use imaging::{is_identifying, is_private, uid_tags_to_replace};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;

/// A file that cannot be read or rewritten as its format says: the error names it.
fn unreadable(path: &Path, message: String) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    }
}

/// The file at `path` de-identified, as the bytes of a DICOM Part 10 file.
pub(super) fn deidentified_dicom(path: &Path, package_id: &str) -> Result<Vec<u8>> {
    let unreadable = |message: String| unreadable(path, message);
    let mut object = open_file(path).map_err(|e| unreadable(format!("reading DICOM: {e}")))?;
    deidentify(&mut object, package_id, Dates::Remove);
    let mut bytes = Vec::new();
    object
        .write_all(&mut bytes)
        .map_err(|e| unreadable(format!("writing the de-identified copy: {e}")))?;
    Ok(bytes)
}

/// What happens to dates (DA, DT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dates {
    /// The basic profile: identifying dates go; others stay as they are.
    Remove,
    /// Every date moves by these days (one offset per patient: `date_shift::patient_offset`);
    /// birth dates and private attributes still go, and a date that cannot be read goes too.
    Shift { days: i64 },
}

/// Attributes that go even when dates are shifted: a birth date moved by a few years still
/// narrows down who the patient is, and the age is kept as its own field.
const NEVER_SHIFTED: [Tag; 2] = [
    Tag(0x0010, 0x0030), // Patient's Birth Date
    Tag(0x0010, 0x0032), // Patient's Birth Time
];

/// Applies the basic profile to a whole file, its file meta group included. UIDs are replaced
/// by digests salted with `salt`, so one salt keeps a study's references consistent.
pub(crate) fn deidentify(object: &mut FileDicomObject<InMemDicomObject>, salt: &str, dates: Dates) {
    clean(object, salt, dates);
    let sop = replacement_uid(salt, object.meta().media_storage_sop_instance_uid());
    let meta = object.meta_mut();
    meta.media_storage_sop_instance_uid = sop;
    // Who wrote the file (implementation class UID and version name) is kept: it names software,
    // not a patient or a site.
    meta.source_application_entity_title = None;
    meta.sending_application_entity_title = None;
    meta.receiving_application_entity_title = None;
    meta.private_information_creator_uid = None;
    meta.private_information = None;
    meta.update_information_group_length();
}

fn clean(object: &mut InMemDicomObject, package_id: &str, dates: Dates) {
    let tags: Vec<Tag> = object.iter().map(|e| e.header().tag).collect();
    for tag in tags {
        let shift = match dates {
            Dates::Shift { days } if !is_private(tag) && !NEVER_SHIFTED.contains(&tag) => {
                Some(days)
            }
            _ => None,
        };
        let date_vr = object
            .element(tag)
            .ok()
            .map(|e| e.vr())
            .filter(|vr| matches!(vr, VR::DA | VR::DT));
        if let (Some(days), Some(vr)) = (shift, date_vr) {
            let text = object
                .element(tag)
                .ok()
                .and_then(|e| e.to_str().ok())
                .map(|s| s.into_owned())
                .unwrap_or_default();
            let moved = match vr {
                VR::DA => date_shift::shift_da(&text, days),
                _ => date_shift::shift_dt(&text, days),
            };
            match moved {
                Some(value) => {
                    object.put(DataElement::new(tag, vr, PrimitiveValue::from(value)));
                }
                None => {
                    object.remove_element(tag);
                }
            }
        } else if is_identifying(tag) {
            object.remove_element(tag);
        } else if uid_tags_to_replace().contains(&tag) {
            let original = object
                .element(tag)
                .ok()
                .and_then(|e| e.to_str().ok())
                .map(|s| s.trim_end_matches(['\0', ' ']).to_owned())
                .unwrap_or_default();
            object.put(DataElement::new(
                tag,
                VR::UI,
                PrimitiveValue::from(replacement_uid(package_id, &original)),
            ));
        } else {
            object.update_value(tag, |value| {
                if let Value::Sequence(sequence) = value {
                    for item in sequence.items_mut().iter_mut() {
                        clean(item, package_id, dates);
                    }
                }
            });
        }
    }
}

/// The NIfTI file read from `path` (`bytes`, gzipped or not) without its free text and
/// extensions; gzipped again when it came gzipped.
pub(crate) fn deidentified_nifti(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    let unreadable = |message: String| unreadable(path, message);
    if !bytes.starts_with(&GZIP_MAGIC) {
        return blank_nifti_text(bytes.to_vec()).map_err(unreadable);
    }
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut plain)
        .map_err(|e| unreadable(format!("reading the gzipped NIfTI: {e}")))?;
    let plain = blank_nifti_text(plain).map_err(unreadable)?;
    // A fresh gzip header: no file name, no comment, time 0.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder
        .write_all(&plain)
        .and_then(|()| encoder.finish())
        .map_err(|e| unreadable(format!("writing the de-identified copy: {e}")))
}

const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];

/// Free-text fields of the two headers, as (offset, length): NIfTI-1 (nifti1.h) `data_type`,
/// `db_name`, `descrip`, `aux_file`, `intent_name`; NIfTI-2 (nifti2.h) `descrip`, `aux_file`,
/// `intent_name`, `unused_str`. None of them says how to read the voxels.
const NIFTI1_TEXT: [(usize, usize); 5] = [(4, 10), (14, 18), (148, 80), (228, 24), (328, 16)];
const NIFTI2_TEXT: [(usize, usize); 4] = [(240, 80), (320, 24), (508, 16), (525, 15)];

/// `N` header bytes at `at`, or `cut_short` when the file ends before them.
fn header_bytes<const N: usize>(
    nifti: &[u8],
    at: usize,
    cut_short: &str,
) -> std::result::Result<[u8; N], String> {
    nifti
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| cut_short.to_owned())
}

fn blank_nifti_text(mut nifti: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
    let size_field: [u8; 4] = header_bytes(&nifti, 0, "the NIfTI header is cut short")?;
    // sizeof_hdr says the byte order: 348 or 540 read one way or the other.
    let little_endian = [348, 540].contains(&i32::from_le_bytes(size_field));
    let size = if little_endian {
        i32::from_le_bytes(size_field)
    } else {
        i32::from_be_bytes(size_field)
    };
    let (header_len, text_fields, vox_offset) = match size {
        348 => {
            let field = header_bytes(&nifti, 108, "the NIfTI-1 header is cut short")?;
            let offset = if little_endian {
                f32::from_le_bytes(field)
            } else {
                f32::from_be_bytes(field)
            };
            (348, &NIFTI1_TEXT[..], f64::from(offset))
        }
        540 => {
            let field = header_bytes(&nifti, 168, "the NIfTI-2 header is cut short")?;
            let offset = if little_endian {
                i64::from_le_bytes(field)
            } else {
                i64::from_be_bytes(field)
            };
            (540, &NIFTI2_TEXT[..], offset as f64)
        }
        _ => {
            return Err(format!(
                "not a NIfTI-1 or NIfTI-2 header (sizeof_hdr {size})"
            ))
        }
    };
    if nifti.len() < header_len {
        return Err("the NIfTI header is cut short".into());
    }
    if !(vox_offset.is_finite() && vox_offset >= 0.0 && vox_offset <= nifti.len() as f64) {
        return Err(format!(
            "vox_offset {vox_offset} is outside the file ({} bytes)",
            nifti.len()
        ));
    }
    for &(offset, length) in text_fields {
        nifti[offset..offset + length].fill(0);
    }
    // The extension flag and every extension: zero bytes say "no extensions" (nifti1.h).
    let vox_offset = vox_offset as usize;
    if vox_offset > header_len {
        nifti[header_len..vox_offset].fill(0);
    }
    Ok(nifti)
}

/// A PNG or JPEG key image read from `path` without its metadata.
pub(super) fn deidentified_key_image(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    let stripped = if bytes.starts_with(&PNG_SIGNATURE) {
        png_without_metadata(bytes)
    } else if bytes.starts_with(&[0xFF, 0xD8]) {
        jpeg_without_metadata(bytes)
    } else {
        Err("a key image must be a PNG or JPEG file".into())
    };
    stripped.map_err(|message| unreadable(path, message))
}

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// The chunks that say how a PNG's pixels look (PNG 3rd edition). Everything else goes: tEXt,
/// zTXt and iTXt (free text), eXIf, tIME (a date), iCCP (a profile carries free-text
/// descriptions, and key images are not colour-managed), and private or unknown chunks.
const PNG_KEPT_CHUNKS: [&[u8; 4]; 11] = [
    b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"sBIT", b"bKGD",
    b"pHYs",
];

fn png_without_metadata(png: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = PNG_SIGNATURE.to_vec();
    let mut at = PNG_SIGNATURE.len();
    loop {
        let length_field: [u8; 4] = png
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .ok_or(format!("the PNG ends at byte {at} before its IEND chunk"))?;
        let end = at + 12 + u32::from_be_bytes(length_field) as usize;
        let chunk = png.get(at..end).ok_or(format!(
            "the PNG chunk at byte {at} runs past the end of the file"
        ))?;
        let kind = &chunk[4..8];
        if PNG_KEPT_CHUNKS.iter().any(|k| k.as_slice() == kind) {
            out.extend_from_slice(chunk);
        }
        if kind == b"IEND" {
            return Ok(out);
        }
        at = end;
    }
}

fn jpeg_without_metadata(jpeg: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let byte = |at: usize| {
        jpeg.get(at).copied().ok_or(format!(
            "the JPEG ends at byte {at} before its end-of-image marker"
        ))
    };
    let mut out = vec![0xFF, 0xD8];
    let mut at = 2;
    loop {
        if byte(at)? != 0xFF {
            return Err(format!("no JPEG marker at byte {at}"));
        }
        // Fill bytes (0xFF) may precede a marker (ITU T.81 B.1.1.2).
        while byte(at + 1)? == 0xFF {
            at += 1;
        }
        let marker = byte(at + 1)?;
        match marker {
            0xD9 => {
                out.extend_from_slice(&[0xFF, 0xD9]);
                return Ok(out);
            }
            // Markers without a segment: TEM and restart markers.
            0x01 | 0xD0..=0xD7 => {
                out.extend_from_slice(&jpeg[at..at + 2]);
                at += 2;
                continue;
            }
            _ => {}
        }
        let length = u16::from_be_bytes([byte(at + 2)?, byte(at + 3)?]) as usize;
        let segment = jpeg
            .get(at..at + 2 + length)
            .filter(|_| length >= 2)
            .ok_or(format!(
                "the JPEG segment at byte {at} runs past the end of the file"
            ))?;
        let metadata = match marker {
            // A well-formed Adobe segment: "Adobe", version, two flag words, the colour transform.
            0xEE => !(length == 14 && segment[4..].starts_with(b"Adobe")),
            0xE0..=0xEF | 0xFE => true,
            _ => false,
        };
        if !metadata {
            out.extend_from_slice(segment);
        }
        at += 2 + length;
        if marker == 0xDA {
            // Entropy-coded data runs to the next marker: a 0xFF that is neither a stuffed
            // 0xFF00 nor a restart marker.
            let start = at;
            let ends_scan = |at: usize| -> std::result::Result<bool, String> {
                Ok(byte(at)? == 0xFF && !matches!(byte(at + 1)?, 0x00 | 0xD0..=0xD7))
            };
            while !ends_scan(at)? {
                at += 1;
            }
            out.extend_from_slice(&jpeg[start..at]);
        }
    }
}

/// `2.25.` and a 128-bit decimal: the UUID-derived UID form of PS3.5 B.2 (at most 44 characters).
fn replacement_uid(package_id: &str, original: &str) -> String {
    let original = original.trim_end_matches(['\0', ' ']);
    let digest = Sha256::new()
        .chain_update(package_id.as_bytes())
        .chain_update([0u8])
        .chain_update(original.as_bytes())
        .finalize();
    let mut high = [0u8; 16];
    high.copy_from_slice(&digest[..16]);
    format!("2.25.{}", u128::from_be_bytes(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"ZZSECRET";

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    /// A NIfTI file with SECRET in every free-text field, one 16-byte extension holding SECRET,
    /// and four voxel bytes.
    fn nifti(version: u8, little_endian: bool) -> Vec<u8> {
        let (header_len, text, vox_offset_at) = if version == 1 {
            (348, &NIFTI1_TEXT[..], 108)
        } else {
            (540, &NIFTI2_TEXT[..], 168)
        };
        let mut file = vec![0x11u8; header_len + 20 + 4];
        let put32 = |file: &mut Vec<u8>, at: usize, bytes: [u8; 4]| {
            file[at..at + 4].copy_from_slice(&bytes)
        };
        let size = header_len as i32;
        put32(
            &mut file,
            0,
            if little_endian {
                size.to_le_bytes()
            } else {
                size.to_be_bytes()
            },
        );
        let vox_offset = header_len + 20;
        if version == 1 {
            let v = vox_offset as f32;
            put32(
                &mut file,
                vox_offset_at,
                if little_endian {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                },
            );
        } else {
            let v = vox_offset as i64;
            file[vox_offset_at..vox_offset_at + 8].copy_from_slice(&if little_endian {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            });
        }
        for &(offset, length) in text {
            file[offset..offset + length].fill(b' ');
            file[offset..offset + SECRET.len().min(length)]
                .copy_from_slice(&SECRET[..SECRET.len().min(length)]);
        }
        // Extension flag, then one extension (esize 16, ecode 6 = comment) holding SECRET.
        file[header_len..header_len + 4].copy_from_slice(&[1, 0, 0, 0]);
        file[header_len + 12..header_len + 20].copy_from_slice(SECRET);
        file[vox_offset..].copy_from_slice(&[1, 2, 3, 4]);
        file
    }

    #[test]
    fn nifti_free_text_and_extensions_are_blanked_and_nothing_else_moves() {
        for (version, little_endian) in [(1, true), (1, false), (2, true), (2, false)] {
            let original = nifti(version, little_endian);
            assert!(contains(&original, SECRET));
            let clean = deidentified_nifti(Path::new("t1.nii"), &original).unwrap();
            let what = format!("NIfTI-{version}, little endian {little_endian}");
            assert_eq!(clean.len(), original.len(), "{what}");
            assert!(!contains(&clean, SECRET), "{what}");
            let header_len = if version == 1 { 348 } else { 540 };
            let text = if version == 1 {
                &NIFTI1_TEXT[..]
            } else {
                &NIFTI2_TEXT[..]
            };
            for (at, (a, b)) in original.iter().zip(&clean).enumerate() {
                let in_text = text.iter().any(|&(o, l)| (o..o + l).contains(&at));
                let between = (header_len..header_len + 20).contains(&at);
                if in_text || between {
                    assert_eq!(*b, 0, "{what}: byte {at}");
                } else {
                    assert_eq!(a, b, "{what}: byte {at} changed");
                }
            }
        }
    }

    #[test]
    fn gzipped_nifti_loses_its_gzip_file_name_too() {
        let original = nifti(1, true);
        let mut gz = flate2::GzBuilder::new()
            .filename("doe_jane_ZZSECRET.nii")
            .comment("ZZSECRET")
            .write(Vec::new(), flate2::Compression::default());
        gz.write_all(&original).unwrap();
        let gz = gz.finish().unwrap();
        assert!(contains(&gz, SECRET));
        let clean = deidentified_nifti(Path::new("t1.nii.gz"), &gz).unwrap();
        assert!(clean.starts_with(&GZIP_MAGIC));
        assert!(!contains(&clean, SECRET));
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&clean[..])
            .read_to_end(&mut plain)
            .unwrap();
        assert_eq!(plain, blank_nifti_text(original).unwrap());
    }

    #[test]
    fn a_nifti_whose_voxels_lie_past_its_end_is_refused_by_name() {
        let mut file = nifti(1, true);
        file.truncate(360);
        let error = deidentified_nifti(Path::new("cases/x/t1.nii"), &file).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("cases/x/t1.nii: vox_offset 368"), "{text}");
        let error = deidentified_nifti(Path::new("t1.nii"), b"not nifti").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("not a NIfTI-1 or NIfTI-2 header"),
            "{error}"
        );
    }

    fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
        chunk.extend_from_slice(kind);
        chunk.extend_from_slice(data);
        chunk.extend_from_slice(&crc.sum().to_be_bytes());
        chunk
    }

    fn zlib(text: &[u8]) -> Vec<u8> {
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    fn pixels(encoded: &[u8]) -> image::RgbImage {
        image::load_from_memory(encoded).unwrap().to_rgb8()
    }

    fn picture() -> image::RgbImage {
        image::RgbImage::from_fn(16, 8, |x, y| image::Rgb([x as u8 * 15, y as u8 * 30, 99]))
    }

    #[test]
    fn png_keeps_its_pixels_and_loses_text_exif_time_and_private_chunks() {
        let mut encoded = Vec::new();
        picture()
            .write_to(
                &mut std::io::Cursor::new(&mut encoded),
                image::ImageFormat::Png,
            )
            .unwrap();
        let iend = encoded.len() - 12;
        let mut planted = encoded[..iend].to_vec();
        // Before the image data, between IDAT and IEND, and after IEND.
        let first_chunk = PNG_SIGNATURE.len() + 25;
        let metadata: Vec<u8> = [
            png_chunk(b"tEXt", b"Author\0ZZSECRET"),
            png_chunk(
                b"zTXt",
                &[&b"ZZSECRET\0\0"[..], &zlib(b"a compressed secret")].concat(),
            ),
            png_chunk(b"iTXt", b"Comment\0\0\0\0\0ZZSECRET"),
            png_chunk(b"eXIf", b"MM\0*ZZSECRET"),
            png_chunk(b"tIME", &[7, 0xD0, 1, 2, 3, 4, 5]),
            png_chunk(b"prVt", b"ZZSECRET"),
        ]
        .concat();
        planted.splice(first_chunk..first_chunk, metadata.iter().copied());
        planted.extend_from_slice(&png_chunk(b"tEXt", b"Title\0ZZSECRET"));
        planted.extend_from_slice(&encoded[iend..]);
        planted.extend_from_slice(b"ZZSECRET after the end");
        assert_eq!(pixels(&planted), picture());

        let clean = deidentified_key_image(Path::new("k.png"), &planted).unwrap();
        assert!(!contains(&clean, SECRET));
        for kind in [&b"tEXt"[..], b"zTXt", b"iTXt", b"eXIf", b"tIME", b"prVt"] {
            assert!(!contains(&clean, kind), "{}", String::from_utf8_lossy(kind));
        }
        assert_eq!(clean, encoded, "only the planted chunks went");
    }

    fn jpeg_segment(marker: u8, data: &[u8]) -> Vec<u8> {
        let mut segment = vec![0xFF, marker];
        segment.extend_from_slice(&(data.len() as u16 + 2).to_be_bytes());
        segment.extend_from_slice(data);
        segment
    }

    #[test]
    fn jpeg_keeps_its_pixels_and_adobe_segment_and_loses_exif_xmp_and_comments() {
        let mut encoded = Vec::new();
        picture()
            .write_to(
                &mut std::io::Cursor::new(&mut encoded),
                image::ImageFormat::Jpeg,
            )
            .unwrap();
        let adobe = jpeg_segment(0xEE, b"Adobe\0\x64\0\0\0\0\x01");
        let mut planted = vec![0xFF, 0xD8];
        planted.extend(jpeg_segment(0xE1, b"Exif\0\0MM\0*ZZSECRET"));
        planted.extend(jpeg_segment(
            0xE1,
            b"http://ns.adobe.com/xap/1.0/\0<x>ZZSECRET</x>",
        ));
        planted.extend(jpeg_segment(0xFE, b"ZZSECRET comment"));
        planted.extend(jpeg_segment(0xE2, b"ICC_PROFILE\0ZZSECRET"));
        planted.extend(jpeg_segment(
            0xEE,
            b"Adobe ZZSECRET, too long to be a real one",
        ));
        planted.extend(&adobe);
        planted.extend_from_slice(&encoded[2..]);
        planted.extend_from_slice(b"ZZSECRET after the end");
        assert!(
            contains(&encoded, b"JFIF"),
            "the encoder writes a JFIF segment"
        );

        let clean = deidentified_key_image(Path::new("k.jpg"), &planted).unwrap();
        assert!(!contains(&clean, SECRET));
        assert!(!contains(&clean, b"JFIF") && !contains(&clean, b"Exif"));
        assert!(contains(&clean, &adobe), "the colour transform stays");
        assert!(clean.ends_with(&[0xFF, 0xD9]));
        assert_eq!(pixels(&clean), pixels(&encoded));
    }

    #[test]
    fn a_key_image_cut_short_is_refused_by_name() {
        let mut encoded = Vec::new();
        picture()
            .write_to(
                &mut std::io::Cursor::new(&mut encoded),
                image::ImageFormat::Png,
            )
            .unwrap();
        encoded.truncate(encoded.len() - 12);
        let error = deidentified_key_image(Path::new("keys/01.png"), &encoded).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("keys/01.png: the PNG ends at byte"),
            "{error}"
        );
        let error =
            deidentified_key_image(Path::new("keys/02.jpg"), &[0xFF, 0xD8, 0xFF, 0xE1, 0, 9])
                .unwrap_err();
        assert!(error.to_string().contains("runs past the end"), "{error}");
        let error = deidentified_key_image(Path::new("keys/03.gif"), b"GIF89a").unwrap_err();
        assert!(error.to_string().contains("PNG or JPEG"), "{error}");
    }

    #[test]
    fn replacement_uids_are_valid_stable_and_differ_between_packages() {
        let a = replacement_uid("p1", "1.2.840.113619.2.55.3");
        assert_eq!(a, replacement_uid("p1", "1.2.840.113619.2.55.3\0"));
        assert_ne!(a, replacement_uid("p2", "1.2.840.113619.2.55.3"));
        assert!(a.len() <= 64 && a.starts_with("2.25."));
        assert!(a[5..].chars().all(|c| c.is_ascii_digit()) && !a[5..].starts_with('0'));
    }
}
