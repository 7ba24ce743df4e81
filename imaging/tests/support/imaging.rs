//! Writes real DICOM files with dicom-object for tests and benches that need a series on disk
//! (the public sample sets hold no multi-instance series small enough to commit).
#![allow(dead_code)] // shared by the test binary and the bench through `#[path]`; each uses a part

use std::path::{Path, PathBuf};

use dicom_core::{DataElement, PrimitiveValue, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileMetaTableBuilder, InMemDicomObject};

/// One slice of a synthetic series.
pub struct SliceSpec {
    pub instance_number: i32,
    pub position: Option<[f64; 3]>,
    pub orientation: Option<[f64; 6]>,
    pub rows: u16,
    pub columns: u16,
    /// Stored values, row after row.
    pub pixels: Vec<i16>,
    pub rescale: (f64, f64),
}

fn text(tag: dicom_core::Tag, vr: VR, value: &str) -> DataElement<InMemDicomObject> {
    DataElement::new(tag, vr, PrimitiveValue::from(value))
}

/// A US (unsigned short) element: rows, columns, bits.
pub fn unsigned_short(tag: dicom_core::Tag, value: u16) -> DataElement<InMemDicomObject> {
    DataElement::new(tag, VR::US, PrimitiveValue::from(value))
}

fn decimals(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v}"))
        .collect::<Vec<_>>()
        .join("\\")
}

/// Writes one CT slice (explicit VR little endian) to `dir/name` and returns its path.
pub fn write_slice(dir: &Path, name: &str, series_uid: &str, spec: &SliceSpec) -> PathBuf {
    let sop_uid = format!("{series_uid}.{}", spec.instance_number);
    let mut obj = InMemDicomObject::new_empty();
    obj.put(text(
        tags::SOP_CLASS_UID,
        VR::UI,
        "1.2.840.10008.5.1.4.1.1.2",
    ));
    obj.put(text(tags::SOP_INSTANCE_UID, VR::UI, &sop_uid));
    obj.put(text(tags::PATIENT_NAME, VR::PN, "Synthetic^Patient"));
    obj.put(text(tags::MODALITY, VR::CS, "CT"));
    obj.put(text(tags::SERIES_INSTANCE_UID, VR::UI, series_uid));
    obj.put(text(
        tags::INSTANCE_NUMBER,
        VR::IS,
        &spec.instance_number.to_string(),
    ));
    if let Some(p) = spec.position {
        obj.put(text(tags::IMAGE_POSITION_PATIENT, VR::DS, &decimals(&p)));
    }
    if let Some(o) = spec.orientation {
        obj.put(text(tags::IMAGE_ORIENTATION_PATIENT, VR::DS, &decimals(&o)));
    }
    obj.put(text(tags::PIXEL_SPACING, VR::DS, "0.5\\0.75"));
    obj.put(text(
        tags::RESCALE_SLOPE,
        VR::DS,
        &format!("{}", spec.rescale.0),
    ));
    obj.put(text(
        tags::RESCALE_INTERCEPT,
        VR::DS,
        &format!("{}", spec.rescale.1),
    ));
    obj.put(unsigned_short(tags::SAMPLES_PER_PIXEL, 1u16));
    obj.put(text(
        tags::PHOTOMETRIC_INTERPRETATION,
        VR::CS,
        "MONOCHROME2",
    ));
    obj.put(unsigned_short(tags::ROWS, spec.rows));
    obj.put(unsigned_short(tags::COLUMNS, spec.columns));
    obj.put(unsigned_short(tags::BITS_ALLOCATED, 16u16));
    obj.put(unsigned_short(tags::BITS_STORED, 16u16));
    obj.put(unsigned_short(tags::HIGH_BIT, 15u16));
    obj.put(unsigned_short(tags::PIXEL_REPRESENTATION, 1u16));
    let bytes: Vec<u8> = spec.pixels.iter().flat_map(|v| v.to_le_bytes()).collect();
    obj.put(DataElement::new(
        tags::PIXEL_DATA,
        VR::OW,
        PrimitiveValue::from(bytes),
    ));
    let file = obj
        .with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax("1.2.840.10008.1.2.1")
                .media_storage_sop_class_uid("1.2.840.10008.5.1.4.1.1.2"),
        )
        .expect("a complete file meta table");
    let path = dir.join(name);
    file.write_to_file(&path)
        .expect("the temporary directory is writable");
    path
}

/// An axial-ish, slightly oblique series: `slices` slices of rows×columns, 2.5 mm apart along
/// the normal, pixel (r, c) of slice k = k·100 + r + c.
pub fn oblique_series(slices: usize, rows: u16, columns: u16) -> Vec<SliceSpec> {
    let (angle_sin, angle_cos) = (0.2f64.sin(), 0.2f64.cos());
    let orientation = [1.0, 0.0, 0.0, 0.0, angle_cos, angle_sin];
    // normal = row × column = (0, -sin, cos)
    let normal = [0.0, -angle_sin, angle_cos];
    (0..slices)
        .map(|k| {
            let step = 2.5 * k as f64;
            SliceSpec {
                instance_number: k as i32 + 1,
                position: Some([-100.0, -120.0 + normal[1] * step, 30.0 + normal[2] * step]),
                orientation: Some(orientation),
                rows,
                columns,
                pixels: (0..rows as usize * columns as usize)
                    .map(|i| (k * 100 + i / columns as usize + i % columns as usize) as i16)
                    .collect(),
                rescale: (1.0, -1024.0),
            }
        })
        .collect()
}
