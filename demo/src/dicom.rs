//! Writes a synthesised volume as a real multi-file DICOM series (one file per axial slice).

use super::rng::uid;
use super::synth::Sequence;
use super::template::Grid;
use cases::Error;
use dicom_core::smallvec::SmallVec;
use dicom_core::value::PrimitiveValue;
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::{tags, uids};
use dicom_object::meta::FileMetaTableBuilder;
use dicom_object::InMemDicomObject;
use std::path::Path;

/// Who the synthetic patient is; nothing here identifies a person.
pub(crate) struct SeriesContext<'a> {
    pub(crate) case_id: &'a str,
    /// 1-based, for "DEMO^CASE01".
    pub(crate) case_number: usize,
    pub(crate) series_id: &'a str,
    pub(crate) series_number: u32,
    pub(crate) age: u32,
    pub(crate) sex: &'a str,
    pub(crate) sequence: Sequence,
}

/// How modality values become stored values: CT keeps HU + 1024 unsigned (intercept −1024), MR
/// stores its values directly.
fn rescale_intercept(sequence: Sequence) -> f64 {
    if sequence == Sequence::Ct {
        -1024.0
    } else {
        0.0
    }
}

fn description(sequence: Sequence) -> &'static str {
    match sequence {
        Sequence::T1 => "AX T1 SE",
        Sequence::T2 => "AX T2 TSE",
        Sequence::Flair => "AX T2 FLAIR",
        Sequence::Dwi => "AX DWI b1000",
        Sequence::Adc => "AX ADC",
        Sequence::Ct => "AX HEAD 5mm BRAIN",
    }
}

fn ds(values: &[f64]) -> PrimitiveValue {
    // Decimal strings are limited to 16 characters; six decimals keep sub-micrometre precision.
    let texts: Vec<String> = values.iter().map(|v| format_ds(*v)).collect();
    PrimitiveValue::Strs(SmallVec::from_vec(texts))
}

fn format_ds(value: f64) -> String {
    let text = format!("{value:.6}");
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

fn text(tag: Tag, vr: VR, value: &str) -> DataElement<InMemDicomObject> {
    DataElement::new(tag, vr, PrimitiveValue::from(value))
}

fn us(tag: Tag, value: u16) -> DataElement<InMemDicomObject> {
    DataElement::new(tag, VR::US, PrimitiveValue::from(value))
}

fn decimal(tag: Tag, values: &[f64]) -> DataElement<InMemDicomObject> {
    DataElement::new(tag, VR::DS, ds(values))
}

/// Writes `values` (modality values on `grid`, slice-major) as `dir/IM0001.dcm …`, one file per
/// slice from inferior to superior. Returns the number of files written.
pub(crate) fn write_series(
    dir: &Path,
    context: &SeriesContext,
    grid: &Grid,
    values: &[f32],
) -> Result<usize, Error> {
    if values.len() != grid.voxels() {
        return Err(Error::Demo(format!(
            "{}: {} values for a {} × {} × {} grid",
            dir.display(),
            values.len(),
            grid.columns,
            grid.rows,
            grid.slices
        )));
    }
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let sequence = context.sequence;
    let intercept = rescale_intercept(sequence);
    let is_ct = sequence == Sequence::Ct;
    let study_uid = uid(&format!("neurorater-demo/{}/study", context.case_id));
    let frame_uid = uid(&format!("neurorater-demo/{}/frame", context.case_id));
    let series_uid = uid(&format!(
        "neurorater-demo/{}/{}",
        context.case_id, context.series_id
    ));
    let (window_centre, window_width) = sequence.window();
    let pixels_per_slice = grid.rows * grid.columns;
    for slice in 0..grid.slices {
        let instance = slice + 1;
        let sop_uid = uid(&format!(
            "neurorater-demo/{}/{}/{}",
            context.case_id, context.series_id, instance
        ));
        let position = grid.lps(0.0, 0.0, slice as f64);
        let start = slice * pixels_per_slice;
        // Little-endian bytes, as the transfer syntax stores them: handed over as bytes, a 512²
        // slice is written in one piece instead of value by value.
        let stored: Vec<u8> = values[start..start + pixels_per_slice]
            .iter()
            .flat_map(|v| {
                ((f64::from(*v) - intercept).round().clamp(0.0, 4095.0) as u16).to_le_bytes()
            })
            .collect();
        let mut object = InMemDicomObject::from_element_iter([
            text(
                tags::SOP_CLASS_UID,
                VR::UI,
                if is_ct {
                    uids::CT_IMAGE_STORAGE
                } else {
                    uids::MR_IMAGE_STORAGE
                },
            ),
            text(tags::SOP_INSTANCE_UID, VR::UI, &sop_uid),
            DataElement::new(
                tags::IMAGE_TYPE,
                VR::CS,
                PrimitiveValue::Strs(SmallVec::from_vec(vec![
                    "DERIVED".to_string(),
                    "SECONDARY".to_string(),
                    "AXIAL".to_string(),
                ])),
            ),
            text(tags::STUDY_DATE, VR::DA, "20260101"),
            text(tags::SERIES_DATE, VR::DA, "20260101"),
            text(tags::STUDY_TIME, VR::TM, "090000"),
            text(tags::MODALITY, VR::CS, if is_ct { "CT" } else { "MR" }),
            text(
                tags::MANUFACTURER,
                VR::LO,
                "NeuroRater demo (synthetic, MNI ICBM152)",
            ),
            text(tags::STUDY_DESCRIPTION, VR::LO, "SYNTHETIC DEMO BRAIN"),
            text(tags::SERIES_DESCRIPTION, VR::LO, description(sequence)),
            text(
                tags::PATIENT_NAME,
                VR::PN,
                &format!("DEMO^CASE{:02}", context.case_number),
            ),
            text(
                tags::PATIENT_ID,
                VR::LO,
                &format!("DEMO-{}", context.case_id),
            ),
            text(tags::PATIENT_SEX, VR::CS, context.sex),
            text(tags::PATIENT_AGE, VR::AS, &format!("{:03}Y", context.age)),
            text(tags::BODY_PART_EXAMINED, VR::CS, "HEAD"),
            decimal(tags::SLICE_THICKNESS, &[grid.slice_mm]),
            decimal(tags::SPACING_BETWEEN_SLICES, &[grid.slice_mm]),
            text(tags::PATIENT_POSITION, VR::CS, "HFS"),
            text(tags::STUDY_INSTANCE_UID, VR::UI, &study_uid),
            text(tags::SERIES_INSTANCE_UID, VR::UI, &series_uid),
            text(tags::STUDY_ID, VR::SH, "1"),
            DataElement::new(
                tags::SERIES_NUMBER,
                VR::IS,
                PrimitiveValue::from(context.series_number.to_string()),
            ),
            DataElement::new(
                tags::INSTANCE_NUMBER,
                VR::IS,
                PrimitiveValue::from(instance.to_string()),
            ),
            decimal(tags::IMAGE_POSITION_PATIENT, &position),
            decimal(
                tags::IMAGE_ORIENTATION_PATIENT,
                &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            ),
            text(tags::FRAME_OF_REFERENCE_UID, VR::UI, &frame_uid),
            decimal(tags::SLICE_LOCATION, &[position[2]]),
            us(tags::SAMPLES_PER_PIXEL, 1),
            text(tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
            us(tags::ROWS, grid.rows as u16),
            us(tags::COLUMNS, grid.columns as u16),
            decimal(tags::PIXEL_SPACING, &[grid.pixel_mm, grid.pixel_mm]),
            us(tags::BITS_ALLOCATED, 16),
            // Values are clamped to 0–4095 above: 12 significant bits, as most scanners store.
            us(tags::BITS_STORED, 12),
            us(tags::HIGH_BIT, 11),
            us(tags::PIXEL_REPRESENTATION, 0),
            decimal(tags::WINDOW_CENTER, &[window_centre]),
            decimal(tags::WINDOW_WIDTH, &[window_width]),
            decimal(tags::RESCALE_INTERCEPT, &[intercept]),
            decimal(tags::RESCALE_SLOPE, &[1.0]),
            text(tags::RESCALE_TYPE, VR::LO, if is_ct { "HU" } else { "US" }),
            DataElement::new(
                tags::PIXEL_DATA,
                VR::OW,
                PrimitiveValue::U8(SmallVec::from_vec(stored)),
            ),
        ]);
        for element in acquisition_elements(sequence) {
            object.put(element);
        }
        let path = dir.join(format!("IM{instance:04}.dcm"));
        let file = object
            .with_meta(FileMetaTableBuilder::new().transfer_syntax(uids::EXPLICIT_VR_LITTLE_ENDIAN))
            .map_err(|e| Error::Demo(format!("{}: file meta: {e}", path.display())))?;
        file.write_to_file(&path)
            .map_err(|e| Error::Demo(format!("{}: cannot write DICOM: {e}", path.display())))?;
    }
    Ok(grid.slices)
}

/// The acquisition attributes a reader glances at to confirm what a series is.
fn acquisition_elements(sequence: Sequence) -> Vec<DataElement<InMemDicomObject>> {
    // (scanning sequence, TR ms, TE ms, inversion ms)
    let (scanning, tr, te, inversion) = match sequence {
        Sequence::Ct => {
            return vec![
                decimal(tags::KVP, &[120.0]),
                text(tags::CONVOLUTION_KERNEL, VR::SH, "BRAIN"),
            ];
        }
        Sequence::T1 => ("SE", 550.0, 10.0, None),
        Sequence::T2 => ("SE", 5000.0, 95.0, None),
        Sequence::Flair => ("IR", 9000.0, 90.0, Some(2500.0)),
        Sequence::Dwi | Sequence::Adc => ("EP", 6000.0, 70.0, None),
    };
    let mut elements = vec![
        text(tags::SCANNING_SEQUENCE, VR::CS, scanning),
        text(tags::SEQUENCE_VARIANT, VR::CS, "NONE"),
        text(tags::MR_ACQUISITION_TYPE, VR::CS, "2D"),
        decimal(tags::REPETITION_TIME, &[tr]),
        decimal(tags::ECHO_TIME, &[te]),
        decimal(tags::MAGNETIC_FIELD_STRENGTH, &[3.0]),
        text(tags::IMAGED_NUCLEUS, VR::SH, "1H"),
    ];
    if let Some(ti) = inversion {
        elements.push(decimal(tags::INVERSION_TIME, &[ti]));
    }
    if sequence == Sequence::Dwi {
        elements.push(DataElement::new(
            tags::DIFFUSION_B_VALUE,
            VR::FD,
            PrimitiveValue::from(1000.0f64),
        ));
    }
    elements
}
