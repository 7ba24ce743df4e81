//! A folder as a PACS, a CD and a research archive export it, written through dicom-rs and
//! flate2 (never through the code under test): nested folders with meaningless names, slices
//! shuffled, two series in one folder, an enhanced multi-frame file, a bare implicit-VR data set
//! without preamble, a localizer, a DICOMDIR, junk, a structured report, and a BIDS dataset.
//! Every identifying value is a marker ([`PacsExport::markers`]) that must not reach the bundle.

use dicom_core::value::DataSetSequence;
use dicom_core::{DataElement, PrimitiveValue, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileDicomObject, FileMetaTableBuilder, InMemDicomObject};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What the export holds, for exact expectations.
pub struct PacsExport {
    pub root: PathBuf,
    /// Values that must appear in no byte of the bundle or the database: names, ids, dates,
    /// original UIDs, free text, folder names.
    pub markers: Vec<String>,
    pub study_uids: [&'static str; 2],
    pub accessions: [&'static str; 2],
}

const ALPHA_STUDY: &str = "1.2.826.0.1.3680043.99901.1";
const BETA_STUDY: &str = "1.2.826.0.1.3680043.99902.1";
const ALPHA_ACCESSION: &str = "ZZACC7001";
const BETA_ACCESSION: &str = "ZZACC7002";
const MR_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.4";
const ENHANCED_MR_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.4.1";
const CT_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.2";
const BASIC_TEXT_SR: &str = "1.2.840.10008.5.1.4.1.1.88.11";
const AXIAL: [f64; 6] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
const SAGITTAL: [f64; 6] = [0.0, 1.0, 0.0, 0.0, 0.0, -1.0];
const CORONAL: [f64; 6] = [1.0, 0.0, 0.0, 0.0, 0.0, -1.0];

/// One instance to write.
struct Image<'a> {
    class: &'a str,
    study: &'a str,
    series: String,
    sop: String,
    series_number: i32,
    modality: &'a str,
    description: &'a str,
    image_type: &'a str,
    instance: i32,
    position: [f64; 3],
    orientation: [f64; 6],
    patient: &'a Patient<'a>,
    extra: Vec<(Tag, VR, String)>,
    /// Rows and columns.
    size: u16,
}

struct Patient<'a> {
    name: &'a str,
    id: &'a str,
    accession: &'a str,
    age: Option<&'a str>,
    birth_date: &'a str,
    study_date: &'a str,
    /// Two days after the study date: date shifting must keep the interval.
    acquisition_date_time: &'a str,
    sex: &'a str,
}

fn put(obj: &mut InMemDicomObject, tag: Tag, vr: VR, value: &str) {
    obj.put(DataElement::new(tag, vr, PrimitiveValue::from(value)));
}

fn decimals(values: &[f64]) -> PrimitiveValue {
    PrimitiveValue::Strs(values.iter().map(|v| format!("{v}")).collect())
}

/// Rows and columns of the fixture's images: small, the test is about files, not pixels.
const SIZE: u16 = 8;

fn dataset(image: &Image<'_>, frames: u32) -> InMemDicomObject {
    let mut obj = InMemDicomObject::new_empty();
    let p = image.patient;
    for (tag, vr, value) in [
        (tags::SPECIFIC_CHARACTER_SET, VR::CS, "ISO_IR 100"),
        (tags::IMAGE_TYPE, VR::CS, image.image_type),
        (tags::SOP_CLASS_UID, VR::UI, image.class),
        (tags::SOP_INSTANCE_UID, VR::UI, &image.sop),
        (tags::STUDY_DATE, VR::DA, p.study_date),
        (tags::STUDY_TIME, VR::TM, "101112"),
        (tags::ACQUISITION_DATE_TIME, VR::DT, p.acquisition_date_time),
        (tags::ACCESSION_NUMBER, VR::SH, p.accession),
        (tags::MODALITY, VR::CS, image.modality),
        (tags::INSTITUTION_NAME, VR::LO, "ZZPHI Marker Infirmary"),
        (tags::REFERRING_PHYSICIAN_NAME, VR::PN, "ZZPHI^REFERRER"),
        (tags::SERIES_DESCRIPTION, VR::LO, image.description),
        (tags::PATIENT_NAME, VR::PN, p.name),
        (tags::PATIENT_ID, VR::LO, p.id),
        (tags::PATIENT_BIRTH_DATE, VR::DA, p.birth_date),
        (tags::PATIENT_SEX, VR::CS, p.sex),
        (tags::STUDY_INSTANCE_UID, VR::UI, image.study),
        (tags::SERIES_INSTANCE_UID, VR::UI, &image.series),
        (tags::STUDY_ID, VR::SH, "ZZPHISTUDYID"),
        (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
    ] {
        put(&mut obj, tag, vr, value);
    }
    if let Some(age) = p.age {
        put(&mut obj, tags::PATIENT_AGE, VR::AS, age);
    }
    put(
        &mut obj,
        tags::SERIES_NUMBER,
        VR::IS,
        &image.series_number.to_string(),
    );
    put(
        &mut obj,
        tags::INSTANCE_NUMBER,
        VR::IS,
        &image.instance.to_string(),
    );
    // A private tag with a name in it: the profile removes private attributes as a class.
    obj.put(DataElement::new(
        Tag(0x0029, 0x0010),
        VR::LO,
        PrimitiveValue::from("ZZPHI PRIVATE CREATOR"),
    ));
    if frames == 1 {
        obj.put(DataElement::new(
            tags::IMAGE_POSITION_PATIENT,
            VR::DS,
            decimals(&image.position),
        ));
        obj.put(DataElement::new(
            tags::IMAGE_ORIENTATION_PATIENT,
            VR::DS,
            decimals(&image.orientation),
        ));
        obj.put(DataElement::new(
            tags::PIXEL_SPACING,
            VR::DS,
            decimals(&[1.0, 1.0]),
        ));
    } else {
        put(
            &mut obj,
            tags::NUMBER_OF_FRAMES,
            VR::IS,
            &frames.to_string(),
        );
        let item = |elements: Vec<DataElement<InMemDicomObject>>| {
            InMemDicomObject::from_element_iter(elements)
        };
        let sequence = |tag, items: Vec<InMemDicomObject>| {
            DataElement::new(tag, VR::SQ, DataSetSequence::from(items))
        };
        let shared = item(vec![
            sequence(
                tags::PLANE_ORIENTATION_SEQUENCE,
                vec![item(vec![DataElement::new(
                    tags::IMAGE_ORIENTATION_PATIENT,
                    VR::DS,
                    decimals(&image.orientation),
                )])],
            ),
            sequence(
                tags::PIXEL_MEASURES_SEQUENCE,
                vec![item(vec![
                    DataElement::new(tags::PIXEL_SPACING, VR::DS, decimals(&[1.0, 1.0])),
                    DataElement::new(tags::SLICE_THICKNESS, VR::DS, decimals(&[3.0])),
                ])],
            ),
        ]);
        let per_frame = (0..frames)
            .map(|f| {
                let [x, y, z] = image.position;
                item(vec![sequence(
                    tags::PLANE_POSITION_SEQUENCE,
                    vec![item(vec![DataElement::new(
                        tags::IMAGE_POSITION_PATIENT,
                        VR::DS,
                        decimals(&[x, y, z + 3.0 * f64::from(f)]),
                    )])],
                )])
            })
            .collect();
        obj.put(sequence(
            tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE,
            vec![shared],
        ));
        obj.put(sequence(
            tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE,
            per_frame,
        ));
    }
    for (tag, value) in [
        (tags::SAMPLES_PER_PIXEL, 1u16),
        (tags::ROWS, image.size),
        (tags::COLUMNS, image.size),
        (tags::BITS_ALLOCATED, 16),
        (tags::BITS_STORED, 12),
        (tags::HIGH_BIT, 11),
        (tags::PIXEL_REPRESENTATION, 0),
    ] {
        obj.put(DataElement::new(tag, VR::US, PrimitiveValue::from(value)));
    }
    for (tag, vr, value) in &image.extra {
        put(&mut obj, *tag, *vr, value);
    }
    let pixels = vec![
        100 + image.instance as u16;
        usize::from(image.size) * usize::from(image.size) * frames as usize
    ];
    obj.put(DataElement::new(
        tags::PIXEL_DATA,
        VR::OW,
        PrimitiveValue::U16(pixels.into()),
    ));
    obj
}

fn part10(obj: InMemDicomObject, class: &str, sop: &str) -> FileDicomObject<InMemDicomObject> {
    obj.with_meta(
        FileMetaTableBuilder::new()
            .transfer_syntax("1.2.840.10008.1.2.1")
            .media_storage_sop_class_uid(class)
            .media_storage_sop_instance_uid(sop),
    )
    .expect("file meta")
}

fn write_part10(path: &Path, image: &Image<'_>, frames: u32) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    part10(dataset(image, frames), image.class, &image.sop)
        .write_to_file(path)
        .expect("write DICOM");
}

/// A bare data set in implicit VR little endian: no preamble, no "DICM", no file meta.
fn write_bare_implicit(path: &Path, image: &Image<'_>) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let ts = dicom_transfer_syntax_registry::entries::IMPLICIT_VR_LITTLE_ENDIAN.erased();
    let mut file = std::fs::File::create(path).expect("create");
    dataset(image, 1)
        .write_dataset_with_ts(&mut file, &ts)
        .expect("write implicit VR data set");
}

/// Writes the export under `root` and returns what it holds.
pub fn write_pacs_export(root: &Path) -> PacsExport {
    let alpha = Patient {
        name: "ZZPHI^ALPHA",
        id: "ZZPHI-MRN-41",
        accession: ALPHA_ACCESSION,
        age: Some("034Y"),
        birth_date: "19010203",
        study_date: "19350304",
        acquisition_date_time: "19350306093000",
        sex: "F",
    };
    let beta = Patient {
        name: "ZZPHI^BETA",
        id: "ZZPHI-MRN-42",
        accession: BETA_ACCESSION,
        age: None,
        birth_date: "19020611",
        study_date: "19710610",
        acquisition_date_time: "19710612093000",
        sex: "M",
    };
    let export = root.join("EXPORT");
    // Folder names a PACS writes can carry the patient's name.
    let alpha_dir = export
        .join("ZZPHI_ALPHA_FOLDER")
        .join("DIR000")
        .join("A1B2");
    let mut uids = Vec::new();
    let mut make =
        |study: &'static str,
         patient,
         series_number: i32,
         (modality, description, image_type): (&'static str, &'static str, &'static str),
         instance: i32,
         position: [f64; 3],
         orientation: [f64; 6]| {
            let prefix = if study == ALPHA_STUDY { 99901 } else { 99902 };
            let series = format!("1.2.826.0.1.3680043.{prefix}.2.{series_number}");
            let sop = format!("1.2.826.0.1.3680043.{prefix}.3.{series_number}.{instance}");
            uids.push(series.clone());
            uids.push(sop.clone());
            let class = if modality == "CT" { CT_IMAGE } else { MR_IMAGE };
            Image {
                class,
                study,
                series,
                sop,
                series_number,
                modality,
                description,
                image_type,
                instance,
                position,
                orientation,
                patient,
                extra: Vec::new(),
                size: SIZE,
            }
        };
    let flair = ("MR", "AX FLAIR", "ORIGINAL\\PRIMARY\\M\\ND");
    let t1c = ("MR", "AX T1 POST GAD", "ORIGINAL\\PRIMARY\\M\\ND");
    let t2 = ("MR", "Ax T2 TSE", "ORIGINAL\\PRIMARY\\M\\ND");
    let localizer = ("MR", "3-plane loc", "ORIGINAL\\PRIMARY\\LOCALIZER");
    let dwi = (
        "MR",
        "ep2d_diff_trace",
        "ORIGINAL\\PRIMARY\\DIFFUSION\\TRACE",
    );
    let ct = ("CT", "Head routine", "ORIGINAL\\PRIMARY\\AXIAL");

    // FLAIR (5 slices) and T1+C (4 slices) in one folder, meaningless names, shuffled order.
    let mut written = Vec::new();
    let shuffled = [
        (
            3,
            flair,
            3.0,
            &[("IM7", 3), ("IM2", 5), ("IM9", 1), ("IM4", 4), ("IM1", 2)][..],
        ),
        (
            7,
            t1c,
            4.0,
            &[("IM3", 2), ("IM8", 4), ("IM5", 1), ("IM6", 3)][..],
        ),
    ];
    for (series_number, kind, spacing, names) in shuffled {
        for &(name, instance) in names {
            let z = spacing * f64::from(instance);
            let img = make(
                ALPHA_STUDY,
                &alpha,
                series_number,
                kind,
                instance,
                [0.0, 0.0, z],
                AXIAL,
            );
            write_part10(&alpha_dir.join(name), &img, 1);
            written.push(alpha_dir.join(name));
        }
    }
    // A three-plane localizer: left out.
    for (instance, orientation) in [(1, AXIAL), (2, SAGITTAL), (3, CORONAL)] {
        let img = make(
            ALPHA_STUDY,
            &alpha,
            1,
            localizer,
            instance,
            [0.0; 3],
            orientation,
        );
        write_part10(
            &export
                .join("ZZPHI_ALPHA_FOLDER/DIR001")
                .join(format!("L{instance}")),
            &img,
            1,
        );
    }
    // Enhanced multi-frame diffusion: one file, four frames.
    let img = make(ALPHA_STUDY, &alpha, 9, dwi, 1, [0.0, 0.0, 0.0], AXIAL);
    let img = Image {
        class: ENHANCED_MR_IMAGE,
        ..img
    };
    write_part10(&export.join("ZZPHI_ALPHA_FOLDER/DIR002/00000001"), &img, 4);
    // T2 as bare implicit-VR data sets, deep in the tree.
    for instance in 1..=3 {
        let img = make(
            ALPHA_STUDY,
            &alpha,
            5,
            t2,
            instance,
            [0.0, 0.0, 5.0 * f64::from(instance)],
            AXIAL,
        );
        write_bare_implicit(
            &root.join(format!("deep/a/b/c/d/{:08X}", instance * 7919)),
            &img,
        );
    }
    // CT of another patient, one slice with burned-in text.
    for instance in 1..=4 {
        let mut img = make(
            BETA_STUDY,
            &beta,
            2,
            ct,
            instance,
            [0.0, 0.0, 2.5 * f64::from(instance)],
            AXIAL,
        );
        if instance == 2 {
            img.extra
                .push((tags::BURNED_IN_ANNOTATION, VR::CS, "YES".into()));
        }
        write_part10(&export.join(format!("B/{}", 40 - instance)), &img, 1);
    }
    // A structured report: DICOM, but no image.
    let report = make(
        BETA_STUDY,
        &beta,
        99,
        ("SR", "report", "ORIGINAL"),
        1,
        [0.0; 3],
        AXIAL,
    );
    let mut sr = dataset(
        &Image {
            class: BASIC_TEXT_SR,
            ..report
        },
        1,
    );
    sr.remove_element(tags::PIXEL_DATA);
    let sr_sop = uids.last().cloned().expect("uid");
    part10(sr, BASIC_TEXT_SR, &sr_sop)
        .write_to_file(export.join("B/SR0001"))
        .expect("write SR");

    write_dicomdir(&export, &written[..2]);
    // Junk a CD carries.
    std::fs::write(
        export.join("README.TXT"),
        "Exported by ZZPHI PACS viewer\r\n",
    )
    .expect("write");
    std::fs::write(export.join("EMPTY"), b"").expect("write");
    let mut png = Vec::new();
    image::DynamicImage::new_luma8(4, 4)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("png");
    std::fs::write(export.join("thumb.dcm"), png).expect("write");

    write_bids(&root.join("bids"));

    let mut markers: Vec<String> = [
        "ZZPHI",
        ALPHA_STUDY,
        BETA_STUDY,
        ALPHA_ACCESSION,
        BETA_ACCESSION,
        "19010203",
        "19350304",
        "19020611",
        "19710610",
        "19350306",
        "19710612",
        "034Y",
        "AX FLAIR",
        "POST GAD",
        "sub-zz01",
    ]
    .map(String::from)
    .into();
    markers.extend(uids);
    PacsExport {
        root: root.to_path_buf(),
        markers,
        study_uids: [ALPHA_STUDY, BETA_STUDY],
        accessions: [ALPHA_ACCESSION, BETA_ACCESSION],
    }
}

/// A DICOMDIR listing `listed` (relative to `folder`) and one file that is not there.
fn write_dicomdir(folder: &Path, listed: &[PathBuf]) {
    let record = |file_id: Vec<String>| {
        let mut item = InMemDicomObject::new_empty();
        put(&mut item, tags::DIRECTORY_RECORD_TYPE, VR::CS, "IMAGE");
        item.put(DataElement::new(
            tags::REFERENCED_FILE_ID,
            VR::CS,
            PrimitiveValue::Strs(file_id.into_iter().collect()),
        ));
        item
    };
    let mut records: Vec<InMemDicomObject> = listed
        .iter()
        .map(|path| {
            record(
                path.strip_prefix(folder)
                    .expect("inside")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect(),
            )
        })
        .collect();
    records.push(record(vec!["GONE".into(), "IM0".into()]));
    let mut obj = InMemDicomObject::new_empty();
    put(&mut obj, tags::FILE_SET_ID, VR::CS, "ZZPHICD");
    obj.put(DataElement::new(
        tags::DIRECTORY_RECORD_SEQUENCE,
        VR::SQ,
        DataSetSequence::from(records),
    ));
    part10(obj, "1.2.840.10008.1.3.10", "1.2.826.0.1.3680043.99903.1")
        .write_to_file(folder.join("DICOMDIR"))
        .expect("write DICOMDIR");
}

/// A NIfTI-1 volume of 4 × 4 × 3 bytes with a marker in `descrip`, gzipped as BIDS has it.
fn nifti_gz(descrip: &str) -> Vec<u8> {
    let mut header = vec![0u8; 352];
    header[0..4].copy_from_slice(&348i32.to_le_bytes());
    for (i, dim) in [3i16, 4, 4, 3, 1, 1, 1, 1].into_iter().enumerate() {
        header[40 + 2 * i..42 + 2 * i].copy_from_slice(&dim.to_le_bytes());
    }
    header[70..72].copy_from_slice(&2i16.to_le_bytes()); // datatype uint8
    header[72..74].copy_from_slice(&8i16.to_le_bytes()); // bitpix
    for (i, pixdim) in [1.0f32, 1.0, 1.0, 3.0].into_iter().enumerate() {
        header[76 + 4 * i..80 + 4 * i].copy_from_slice(&pixdim.to_le_bytes());
    }
    header[108..112].copy_from_slice(&352f32.to_le_bytes()); // vox_offset
    header[112..116].copy_from_slice(&1f32.to_le_bytes()); // scl_slope
    header[148..148 + descrip.len()].copy_from_slice(descrip.as_bytes());
    header[254..256].copy_from_slice(&1i16.to_le_bytes()); // sform_code
    for (row, values) in [[1f32, 0., 0., 0.], [0., 1., 0., 0.], [0., 0., 3., 0.]]
        .into_iter()
        .enumerate()
    {
        for (i, v) in values.into_iter().enumerate() {
            let at = 280 + 16 * row + 4 * i;
            header[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    header[344..348].copy_from_slice(b"n+1\0");
    header.extend((0..48u8).map(|v| v * 5));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&header).expect("gzip");
    gz.finish().expect("gzip")
}

fn write_bids(root: &Path) {
    let anat = root.join("sub-zz01/ses-1/anat");
    let func = root.join("sub-zz01/ses-1/func");
    std::fs::create_dir_all(&anat).expect("mkdir");
    std::fs::create_dir_all(&func).expect("mkdir");
    std::fs::write(
        root.join("participants.tsv"),
        "participant_id\tage\tsex\nsub-zz01\t61\tM\n",
    )
    .expect("write");
    std::fs::write(
        root.join("dataset_description.json"),
        r#"{"Name": "ZZPHI dataset", "BIDSVersion": "1.9.0"}"#,
    )
    .expect("write");
    std::fs::write(
        anat.join("sub-zz01_ses-1_FLAIR.nii.gz"),
        nifti_gz("ZZPHI nifti descrip"),
    )
    .expect("write");
    std::fs::write(
        anat.join("sub-zz01_ses-1_FLAIR.json"),
        r#"{"Modality": "MR", "InstitutionName": "ZZPHI Infirmary", "EchoTime": 0.12}"#,
    )
    .expect("write");
    std::fs::write(
        func.join("sub-zz01_ses-1_task-rest_bold.nii.gz"),
        nifti_gz("ZZPHI bold"),
    )
    .expect("write");
}

/// The scale benchmark's export (scripts/bench/scaffold_scale.sh): `cases` studies of `series`
/// axial MR series of `slices` slices of `size`² 16-bit pixels, uncompressed, one file per slice
/// as a PACS writes them: `<root>/<case>/<series>/<meaningless name>`, names not in slice order.
pub fn write_scale_export(root: &Path, cases: u32, series: u32, slices: u32, size: u16) -> u64 {
    const DESCRIPTIONS: [&str; 4] = ["AX T1", "AX T2", "AX FLAIR", "AX T1 POST GAD"];
    let mut written = 0;
    for case in 0..cases {
        let patient = Patient {
            name: "ZZPHI^SCALE",
            id: "ZZPHI-SCALE",
            accession: "ZZACCSCALE",
            age: Some("050Y"),
            birth_date: "19010101",
            study_date: "19510101",
            acquisition_date_time: "19510103093000",
            sex: "F",
        };
        let study = format!("1.2.826.0.1.3680043.99904.{case}");
        for s in 0..series {
            let folder = root.join(format!("P{case:05}")).join(format!("S{s:03}"));
            std::fs::create_dir_all(&folder).expect("mkdir");
            for k in 0..slices {
                let image = Image {
                    class: MR_IMAGE,
                    study: &study,
                    series: format!("{study}.{s}"),
                    sop: format!("{study}.{s}.{k}"),
                    series_number: s as i32 + 1,
                    modality: "MR",
                    description: DESCRIPTIONS[s as usize % DESCRIPTIONS.len()],
                    image_type: "ORIGINAL\\PRIMARY\\M\\ND",
                    instance: k as i32 + 1,
                    position: [0.0, 0.0, f64::from(k)],
                    orientation: AXIAL,
                    patient: &patient,
                    extra: Vec::new(),
                    size,
                };
                // A multiplicative hash of the slice number: names that do not sort as slices do.
                let name = format!("{:08X}", k.wrapping_mul(2_654_435_761));
                part10(dataset(&image, 1), MR_IMAGE, &image.sop)
                    .write_to_file(folder.join(name))
                    .expect("write DICOM");
                written += 1;
            }
        }
    }
    written
}
