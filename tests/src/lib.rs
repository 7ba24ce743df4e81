//! Helpers shared by the cross-crate tests: small real bundles written to disk, with real DICOM
//! files written through dicom-rs (never through the code under test).

use dicom_core::{DataElement, PrimitiveValue, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileDicomObject, FileMetaTableBuilder, InMemDicomObject};
use std::path::{Path, PathBuf};

pub mod fuzz_entry;
pub mod pacs_export;
pub mod phi;

/// Marker strings planted in every identifying attribute of [`write_identified_dicom`]; none may
/// appear anywhere after import.
pub const PHI_MARKERS: &[(dicom_core::Tag, VR, &str)] = &[
    (tags::PATIENT_NAME, VR::PN, "ZZPHI^MARKERNAME"),
    (tags::PATIENT_ID, VR::LO, "ZZPHI-PATIENT-ID-7731"),
    (tags::PATIENT_BIRTH_DATE, VR::DA, "19230517"),
    (tags::PATIENT_ADDRESS, VR::LO, "ZZPHI 12 Marker Street"),
    (tags::PATIENT_TELEPHONE_NUMBERS, VR::SH, "ZZPHI-555"),
    (tags::INSTITUTION_NAME, VR::LO, "ZZPHI Marker Hospital"),
    (tags::INSTITUTION_ADDRESS, VR::ST, "ZZPHI Hospital Road"),
    (tags::REFERRING_PHYSICIAN_NAME, VR::PN, "ZZPHI^REFERRER"),
    (tags::PERFORMING_PHYSICIAN_NAME, VR::PN, "ZZPHI^PERFORMER"),
    (tags::OPERATORS_NAME, VR::PN, "ZZPHI^OPERATOR"),
    (tags::ACCESSION_NUMBER, VR::SH, "ZZPHIACC991"),
    (tags::STUDY_DATE, VR::DA, "19230518"),
    (tags::SERIES_DATE, VR::DA, "19230519"),
    (tags::STUDY_ID, VR::SH, "ZZPHISTUDY"),
    (tags::STATION_NAME, VR::SH, "ZZPHISTATION"),
];

/// One slice of an axial series.
pub struct Slice<'a> {
    pub series_uid: &'a str,
    pub sop_uid: &'a str,
    pub instance_number: i32,
    /// z of ImagePositionPatient (mm).
    pub z: f64,
    pub rows: u16,
    pub columns: u16,
    /// Stored value of every pixel of this slice.
    pub value: u16,
    pub identified: bool,
}

/// Writes one MR slice as explicit VR little endian DICOM.
pub fn write_slice(path: &Path, slice: &Slice<'_>) {
    slice_file(slice).write_to_file(path).expect("write DICOM");
}

/// One MR slice as an explicit VR little endian DICOM file in memory, for tests that change some
/// of its attributes before writing it.
pub fn slice_file(slice: &Slice<'_>) -> FileDicomObject<InMemDicomObject> {
    let mut obj = InMemDicomObject::new_empty();
    let text = |obj: &mut InMemDicomObject, tag, vr, value: &str| {
        obj.put(DataElement::new(tag, vr, PrimitiveValue::from(value)));
    };
    text(
        &mut obj,
        tags::SOP_CLASS_UID,
        VR::UI,
        "1.2.840.10008.5.1.4.1.1.4",
    );
    text(&mut obj, tags::SOP_INSTANCE_UID, VR::UI, slice.sop_uid);
    text(
        &mut obj,
        tags::SERIES_INSTANCE_UID,
        VR::UI,
        slice.series_uid,
    );
    text(&mut obj, tags::STUDY_INSTANCE_UID, VR::UI, "2.25.1000");
    text(&mut obj, tags::MODALITY, VR::CS, "MR");
    text(&mut obj, tags::SERIES_DESCRIPTION, VR::LO, "AX FLAIR");
    text(
        &mut obj,
        tags::INSTANCE_NUMBER,
        VR::IS,
        &slice.instance_number.to_string(),
    );
    obj.put(DataElement::new(
        tags::IMAGE_POSITION_PATIENT,
        VR::DS,
        PrimitiveValue::Strs(
            ["-10".to_string(), "-10".into(), format!("{}", slice.z)]
                .into_iter()
                .collect(),
        ),
    ));
    obj.put(DataElement::new(
        tags::IMAGE_ORIENTATION_PATIENT,
        VR::DS,
        PrimitiveValue::Strs(
            ["1", "0", "0", "0", "1", "0"]
                .map(String::from)
                .into_iter()
                .collect(),
        ),
    ));
    obj.put(DataElement::new(
        tags::PIXEL_SPACING,
        VR::DS,
        PrimitiveValue::Strs(["1".to_string(), "1".into()].into()),
    ));
    text(&mut obj, tags::SLICE_THICKNESS, VR::DS, "3");
    text(
        &mut obj,
        tags::PHOTOMETRIC_INTERPRETATION,
        VR::CS,
        "MONOCHROME2",
    );
    for (tag, value) in [
        (tags::SAMPLES_PER_PIXEL, 1u16),
        (tags::ROWS, slice.rows),
        (tags::COLUMNS, slice.columns),
        (tags::BITS_ALLOCATED, 16),
        (tags::BITS_STORED, 12),
        (tags::HIGH_BIT, 11),
        (tags::PIXEL_REPRESENTATION, 0),
    ] {
        obj.put(DataElement::new(tag, VR::US, PrimitiveValue::from(value)));
    }
    if slice.identified {
        for (tag, vr, marker) in PHI_MARKERS {
            text(&mut obj, *tag, *vr, marker);
        }
    }
    let pixels = vec![slice.value; slice.rows as usize * slice.columns as usize];
    obj.put(DataElement::new(
        tags::PIXEL_DATA,
        VR::OW,
        PrimitiveValue::U16(pixels.into()),
    ));
    obj.with_meta(
        FileMetaTableBuilder::new()
            .transfer_syntax("1.2.840.10008.1.2.1")
            .media_storage_sop_class_uid("1.2.840.10008.5.1.4.1.1.4")
            .media_storage_sop_instance_uid(slice.sop_uid),
    )
    .expect("file meta")
}

/// A small valid bundle: one MS case with a 4-slice DICOM series (file names deliberately not in
/// slice order), two PNG key images, two tasks, two models × two samples, grader scores.
/// With `identified`, every slice carries [`PHI_MARKERS`].
pub fn write_small_bundle(dir: &Path, identified: bool) -> PathBuf {
    let case_dir = dir.join("cases/ms-01");
    let series_dir = case_dir.join("flair");
    std::fs::create_dir_all(&series_dir).unwrap();
    // File "a" holds the most superior slice, "d" the most inferior: display order is d c b a.
    for (name, z, instance) in [
        ("a.dcm", 9.0, 4),
        ("b.dcm", 6.0, 3),
        ("c.dcm", 3.0, 2),
        ("d.dcm", 0.0, 1),
    ] {
        write_slice(
            &series_dir.join(name),
            &Slice {
                series_uid: "2.25.2000",
                sop_uid: &format!("2.25.3000{instance}"),
                instance_number: instance,
                z,
                rows: 8,
                columns: 8,
                value: 100 * instance as u16,
                identified,
            },
        );
    }
    let keys = case_dir.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    for (name, grey) in [("01.png", 40u8), ("02.png", 200u8)] {
        image::GrayImage::from_pixel(6, 4, image::Luma([grey]))
            .save(keys.join(name))
            .unwrap();
    }
    std::fs::write(dir.join("study.json"), STUDY_JSON).unwrap();
    std::fs::write(case_dir.join("case.json"), CASE_JSON).unwrap();
    std::fs::write(dir.join("responses.jsonl"), RESPONSES_JSONL).unwrap();
    std::fs::write(dir.join("grader.jsonl"), GRADER_JSONL).unwrap();
    dir.to_path_buf()
}

pub const STUDY_JSON: &str = r#"{
  "format_version": 1,
  "study": {"id": "pilot", "title": "Pilot study", "description": "A tiny study for tests."},
  "rubric": {
    "overall": {"label": "Overall", "min": 1, "max": 5, "step": 1,
      "levels": [{"value": 1, "descriptor": "Wrong"}, {"value": 5, "descriptor": "Right"}]},
    "dimensions": [
      {"id": "diagnosis", "label": "Diagnostic accuracy", "min": 1, "max": 5, "step": 1, "levels": []},
      {"id": "reasoning", "label": "Reasoning", "min": 0, "max": 2, "step": 0.5, "levels": []}
    ]
  }
}
"#;

pub const CASE_JSON: &str = r#"{
  "id": "ms-01",
  "disease_group": "multiple_sclerosis",
  "modality": "MR",
  "age": 34,
  "sex": "F",
  "ehr": {"EDSS": 2.0, "oligoclonal_bands": true, "presenting_complaint": "blurred vision"},
  "clinical_note": "Painful loss of vision in the left eye for 5 days.",
  "series": [
    {"id": "flair", "label": "FLAIR", "kind": "dicom", "path": "flair"},
    {"id": "keys", "label": "Key images", "kind": "key_images", "path": "keys"}
  ],
  "tasks": [
    {"id": "dx", "family": "differential_diagnosis", "level": 1,
     "prompt": "Most likely diagnosis?", "key_images": [{"series": "flair", "slice": 2}]},
    {"id": "lesions", "family": "lesion_identification", "level": 2,
     "prompt": "Describe the lesions.", "key_images": [{"series": "keys", "slice": 1}]}
  ],
  "ground_truth": {
    "diagnosis": "Multiple sclerosis",
    "differential": [{"diagnosis": "MS", "supporting": ["ovoid lesions"], "opposing": []}],
    "lesions": [{"id": "l1", "description": "periventricular lesion",
      "marks": [{"series": "flair", "shape": "point", "points_mm": [[-6.0, -6.0, 3.0]]}]}],
    "expected_reasoning": "Ovoid periventricular lesions in a young woman.",
    "difficulty": 1
  }
}
"#;

pub const RESPONSES_JSONL: &str = r#"{"case_id": "ms-01", "task_id": "dx", "model": "vlm-a", "sample": 0, "answer": "Multiple sclerosis", "rationale": "Periventricular ovoid lesions.", "run_id": "kept-unknown-field"}
{"case_id": "ms-01", "task_id": "dx", "model": "vlm-a", "sample": 1, "answer": "Small vessel disease", "rationale": "Lesions in the left temporal lobe."}
{"case_id": "ms-01", "task_id": "dx", "model": "vlm-b", "sample": 0, "answer": "MS", "rationale": "Dawson's fingers."}

{"case_id": "ms-01", "task_id": "lesions", "model": "vlm-b", "sample": 0, "answer": "Three lesions", "turns": [{"role": "user", "content": "Where?"}, {"role": "assistant", "content": "Periventricular."}]}
"#;

pub const GRADER_JSONL: &str = r#"{"case_id": "ms-01", "task_id": "dx", "model": "vlm-a", "sample": 0, "grader": "g-v1", "score": 5, "dimensions": {"diagnosis": 5, "reasoning": 1.5}}
{"case_id": "ms-01", "task_id": "dx", "model": "vlm-a", "sample": 1, "grader": "g-v1", "score": 2, "errors": [{"category": "P4", "quote": "left temporal lobe"}]}
"#;
