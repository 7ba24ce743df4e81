//! The PHI corpus shared by `tests/phi.rs` and the real-window test (through the `phi_bundle`
//! example): the small bundle's slices rewritten with a marker in every PS3.15 basic-profile
//! attribute that a text, date, time or UID value can fill; and, for `tests/phi.rs` alone
//! ([`plant_in_other_images`]), markers in the metadata of key images and of a NIfTI series.

use dicom_core::dictionary::{DataDictionary, DataDictionaryEntry, VirtualVr};
use dicom_core::{DataElement, PrimitiveValue, Tag, VR};
use dicom_dictionary_std::StandardDataDictionary;
use imaging::{identifying_tags, uid_tags_to_replace};
use std::io::Write;
use std::path::Path;

use crate::{slice_file, Slice};

/// A marker for `tag` that its VR can hold, or `None` for VRs this test does not fill.
fn marker(tag: Tag, vr: VR, index: usize) -> Option<String> {
    let hex = format!("{:04X}{:04X}", tag.0, tag.1);
    Some(match vr {
        VR::PN => format!("ZZPHI{hex}^MARK"),
        VR::AE | VR::CS | VR::SH => format!("ZZPHI{hex}"),
        VR::LO | VR::LT | VR::ST | VR::UT | VR::UC => format!("ZZPHI {hex} marker text"),
        // Dates and times in 1901, a year no fixture, clock or demo uses.
        VR::DA => format!("1901{:02}{:02}", 1 + index % 12, 1 + index % 28),
        VR::DT => format!("1901{:02}{:02}123456", 1 + index % 12, 1 + index % 28),
        VR::TM => format!("1234{:02}.9{:05}", index % 60, index),
        VR::AS => "077Y".to_owned(),
        VR::UI => format!("2.25.9{index:06}1901"),
        _ => return None,
    })
}

fn exact_vr(tag: Tag) -> Option<VR> {
    match StandardDataDictionary.by_tag(tag)?.vr() {
        VirtualVr::Exact(vr) => Some(vr),
        _ => None,
    }
}

/// Writes the four slices of the small bundle again with every marker planted; returns the
/// markers (the same in every slice, UIDs excepted, which stay unique per file).
pub fn plant_identifiers(bundle: &Path) -> Vec<String> {
    let flair = bundle.join("cases/ms-01/flair");
    let mut planted = Vec::new();
    for (file_index, (name, z, instance)) in [
        ("a.dcm", 9.0, 4),
        ("b.dcm", 6.0, 3),
        ("c.dcm", 3.0, 2),
        ("d.dcm", 0.0, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let sop_uid = format!("2.25.3000{instance}");
        let mut file = slice_file(&Slice {
            series_uid: "2.25.2000",
            sop_uid: &sop_uid,
            instance_number: instance,
            z,
            rows: 8,
            columns: 8,
            value: 100 * instance as u16,
            identified: false,
        });
        for (index, &tag) in identifying_tags().iter().enumerate() {
            let Some(vr) = exact_vr(tag) else { continue };
            let Some(value) = marker(tag, vr, index) else {
                continue;
            };
            file.put(DataElement::new(
                tag,
                vr,
                PrimitiveValue::from(value.as_str()),
            ));
            if file_index == 0 {
                planted.push(value);
            }
        }
        // Series and SOP instance UIDs must keep grouping the slices: each file gets its own
        // marker for the other replaced UIDs, and the real ones are themselves markers.
        for (index, &tag) in uid_tags_to_replace().iter().enumerate() {
            if [
                dicom_dictionary_std::tags::SERIES_INSTANCE_UID,
                dicom_dictionary_std::tags::SOP_INSTANCE_UID,
            ]
            .contains(&tag)
            {
                continue;
            }
            let value = format!("2.25.8{file_index}{index:05}1901");
            file.put(DataElement::new(
                tag,
                VR::UI,
                PrimitiveValue::from(value.as_str()),
            ));
            planted.push(value);
        }
        planted.push(sop_uid);
        file.write_to_file(flair.join(name)).unwrap();
    }
    planted.push("2.25.2000".to_owned());
    planted
}

/// Plants markers where NIfTI and key-image files keep free text: a NIfTI series `t1.nii.gz`
/// added to the case (the flair volume, with markers in `descrip`, `aux_file`, `intent_name`, a
/// comment extension and the gzip header's file name), text chunks (tEXt, zTXt, iTXt) in the key
/// image `01.png`, and a third key image `03.jpg` with EXIF, XMP and a comment. Returns the
/// markers; each can be found in its file's bytes (a NIfTI's after gunzip).
pub fn plant_in_other_images(bundle: &Path) -> Vec<String> {
    let case_dir = bundle.join("cases/ms-01");
    let mut planted = Vec::new();
    let mut mark = |marker: &str| {
        planted.push(marker.to_owned());
        marker.as_bytes().to_vec()
    };

    let mut slices: Vec<_> = std::fs::read_dir(case_dir.join("flair"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    slices.sort();
    let mut nifti = imaging::load_dicom_series(&slices)
        .unwrap()
        .to_nifti1_bytes();
    for (offset, length, marker) in [
        (148, 80, "ZZPHI-NIFTI descrip marker"),
        (228, 24, "ZZPHI-NIFTI-AUXFILE"),
        (328, 16, "ZZPHI-NIFTI-INT"),
    ] {
        let text = mark(marker);
        assert!(text.len() < length);
        nifti[offset..offset + text.len()].copy_from_slice(&text);
    }
    // One comment extension (ecode 6; sizes are multiples of 16) between header and voxels.
    let comment = mark("ZZPHI-NIFTI-EXTENSION-TXT");
    let size = (8 + comment.len()).next_multiple_of(16);
    let mut extension = vec![0u8; size];
    extension[..4].copy_from_slice(&(size as i32).to_le_bytes());
    extension[4..8].copy_from_slice(&6i32.to_le_bytes());
    extension[8..8 + comment.len()].copy_from_slice(&comment);
    nifti[348] = 1;
    nifti.splice(352..352, extension);
    nifti[108..112].copy_from_slice(&((352 + size) as f32).to_le_bytes());
    let gz_name = mark("ZZPHI-NIFTI-GZIPNAME");
    let mut gz = flate2::GzBuilder::new()
        .filename(gz_name)
        .write(Vec::new(), flate2::Compression::default());
    gz.write_all(&nifti).unwrap();
    std::fs::write(case_dir.join("t1.nii.gz"), gz.finish().unwrap()).unwrap();
    let case_json = case_dir.join("case.json");
    let mut case: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&case_json).unwrap()).unwrap();
    case["series"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!(
            {"id": "t1", "label": "T1", "kind": "nifti", "path": "t1.nii.gz"}
        ));
    std::fs::write(&case_json, serde_json::to_vec_pretty(&case).unwrap()).unwrap();

    let keys = case_dir.join("keys");
    let png = std::fs::read(keys.join("01.png")).unwrap();
    let after_header = 8 + 25;
    let mut text_chunks = Vec::new();
    text_chunks.extend(png_chunk(
        b"tEXt",
        &[b"Author\0", &mark("ZZPHI-PNG-TEXT")[..]].concat(),
    ));
    // A zTXt's text is compressed; its keyword is not.
    text_chunks.extend(png_chunk(
        b"zTXt",
        &[
            &mark("ZZPHI-PNG-ZKEY")[..],
            b"\0\0",
            &zlib(b"a compressed note"),
        ]
        .concat(),
    ));
    text_chunks.extend(png_chunk(
        b"iTXt",
        &[b"Comment\0\0\0\0\0", &mark("ZZPHI-PNG-INTL")[..]].concat(),
    ));
    let mut png_planted = png[..after_header].to_vec();
    png_planted.extend(text_chunks);
    png_planted.extend_from_slice(&png[after_header..]);
    std::fs::write(keys.join("01.png"), png_planted).unwrap();

    let mut jpeg = Vec::new();
    image::GrayImage::from_pixel(6, 4, image::Luma([120u8]))
        .write_to(
            &mut std::io::Cursor::new(&mut jpeg),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
    let mut jpeg_planted = jpeg[..2].to_vec();
    jpeg_planted.extend(jpeg_segment(
        0xE1,
        &[b"Exif\0\0MM\0*", &mark("ZZPHI-JPEG-EXIF")[..]].concat(),
    ));
    jpeg_planted.extend(jpeg_segment(
        0xE1,
        &[
            b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>",
            &mark("ZZPHI-JPEG-XMP")[..],
            b"</x:xmpmeta>",
        ]
        .concat(),
    ));
    jpeg_planted.extend(jpeg_segment(0xFE, &mark("ZZPHI-JPEG-COMMENT")));
    jpeg_planted.extend_from_slice(&jpeg[2..]);
    std::fs::write(keys.join("03.jpg"), jpeg_planted).unwrap();
    planted
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
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(text).unwrap();
    encoder.finish().unwrap()
}

fn jpeg_segment(marker: u8, data: &[u8]) -> Vec<u8> {
    let mut segment = vec![0xFF, marker];
    segment.extend_from_slice(&(data.len() as u16 + 2).to_be_bytes());
    segment.extend_from_slice(data);
    segment
}
