//! Finding the images in what a PACS, a CD or a research archive exported: every file under the
//! sources, recognised by its content (never its name), and the DICOM files read once, their
//! facts kept and a de-identified copy written.

use super::label::Acquisition;
use crate::imaging::{self, DicomMeta};
use crate::package::{date_shift, deid};
use dicom_dictionary_std::tags;
use dicom_encoding::transfer_syntax::TransferSyntaxIndex;
use dicom_object::{FileDicomObject, FileMetaTableBuilder, InMemDicomObject, OpenFileOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Every regular file under `sources` (files given directly included), sorted, symbolic links
/// not followed (an export has none, and a link could loop or lead to another patient's folder).
pub(super) fn walk(sources: &[PathBuf], cancel: &AtomicBool) -> crate::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for source in sources {
        for entry in walkdir::WalkDir::new(source).follow_links(false) {
            if cancel.load(Ordering::Relaxed) {
                return Ok(Vec::new());
            }
            let entry = entry.map_err(|e| crate::Error::Io {
                path: e.path().unwrap_or(source).to_path_buf(),
                source: e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("a folder loop")),
            })?;
            if entry.file_type().is_file() {
                files.push(entry.into_path());
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// What a file is, from its first bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// A DICOM Part 10 file (preamble and "DICM"), or a bare data set in implicit VR little
    /// endian (older CDs and archives write those).
    Dicom {
        part10: bool,
    },
    Nifti,
    /// Not an image this scan reads: why.
    NotAnImage(String),
}

const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
/// sizeof_hdr and magic decide NIfTI; 352 bytes hold both for NIfTI-1 and NIfTI-2.
const HEAD_BYTES: usize = 352;

pub(super) fn classify(path: &Path) -> std::io::Result<Kind> {
    let mut file = std::fs::File::open(path)?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut file).take(HEAD_BYTES as u64).read_to_end(&mut head)?;
    if head.is_empty() {
        return Ok(Kind::NotAnImage("an empty file".into()));
    }
    if head.len() >= 132 && &head[128..132] == b"DICM" || head.starts_with(b"DICM") {
        return Ok(Kind::Dicom { part10: true });
    }
    if is_nifti_header(&head) {
        return Ok(Kind::Nifti);
    }
    if head.starts_with(&GZIP_MAGIC) {
        let mut unpacked = Vec::with_capacity(HEAD_BYTES);
        let reopened = std::fs::File::open(path)?;
        // A damaged gzip stream is simply not a NIfTI image.
        let _ = flate2::read::MultiGzDecoder::new(reopened)
            .take(HEAD_BYTES as u64)
            .read_to_end(&mut unpacked);
        return Ok(if is_nifti_header(&unpacked) {
            Kind::Nifti
        } else {
            Kind::NotAnImage("a gzip archive that holds no NIfTI image".into())
        });
    }
    if is_plausible_implicit_vr(&head) {
        return Ok(Kind::Dicom { part10: false });
    }
    Ok(Kind::NotAnImage(describe_other(&head)))
}

fn is_nifti_header(head: &[u8]) -> bool {
    let Some(size) = head.get(0..4) else {
        return false;
    };
    let size = [size[0], size[1], size[2], size[3]];
    let sizes = [i32::from_le_bytes(size), i32::from_be_bytes(size)];
    let magic_at =
        |at: usize, magic: &[&[u8]]| head.get(at..at + 4).is_some_and(|m| magic.contains(&m));
    (sizes.contains(&348) && magic_at(344, &[b"n+1\0", b"ni1\0"]))
        || (sizes.contains(&540) && magic_at(4, &[b"n+2\0", b"ni2\0"]))
}

/// A data set without preamble in implicit VR little endian starts with group 0008 (or the
/// group length 0008,0000), tags ascending, and element lengths that fit the file.
fn is_plausible_implicit_vr(head: &[u8]) -> bool {
    let element = |at: usize| -> Option<(u16, u16, u32)> {
        let b = head.get(at..at + 8)?;
        Some((
            u16::from_le_bytes([b[0], b[1]]),
            u16::from_le_bytes([b[2], b[3]]),
            u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        ))
    };
    let Some((group, first_element, length)) = element(0) else {
        return false;
    };
    // Short values only: a header's first attributes are character sets, image types and UIDs.
    if group != 0x0008 || first_element > 0x0020 || length > 256 {
        return false;
    }
    match element(8 + length as usize) {
        Some((next_group, next_element, next_length)) => {
            (next_group, next_element) > (group, first_element)
                && next_group.is_multiple_of(2)
                && next_length < 1 << 16
        }
        // The head ended first: one well-formed element is all there is to judge.
        None => true,
    }
}

fn describe_other(head: &[u8]) -> String {
    const PICTURES: [(&[u8], &str); 5] = [
        (b"\x89PNG", "a PNG picture"),
        (b"\xFF\xD8", "a JPEG picture"),
        (b"GIF8", "a GIF picture"),
        (b"BM", "a BMP picture"),
        (b"II*\0", "a TIFF picture"),
    ];
    if let Some((_, what)) = PICTURES.iter().find(|(magic, _)| head.starts_with(magic)) {
        return format!("{what}, not a DICOM or NIfTI image (a thumbnail or screenshot?)");
    }
    if head.starts_with(b"%PDF") {
        return "a PDF document".into();
    }
    let text = std::str::from_utf8(head).is_ok_and(|t| {
        t.chars()
            .all(|c| !c.is_control() || c.is_ascii_whitespace())
    });
    if text {
        return "a text file".into();
    }
    "neither DICOM (no preamble, no implicit-VR start) nor NIfTI".into()
}

/// One DICOM image instance: what grouping, ordering, labelling and the key need. Identifying
/// values live here in memory only; none is written into the bundle.
#[derive(Debug, Clone)]
pub(super) struct Instance {
    pub source: PathBuf,
    /// The de-identified copy, in the staging folder.
    pub staged: PathBuf,
    pub study_uid: String,
    pub accession: Option<String>,
    pub meta: DicomMeta,
    pub series_number: Option<i32>,
    pub acquisition: Acquisition,
    pub localizer: bool,
    /// BurnedInAnnotation YES, or a secondary capture.
    pub burned_in: bool,
    pub age_years: Option<u32>,
    pub sex: Option<String>,
}

/// What reading one DICOM file gave.
pub(super) enum DicomRead {
    Image(Box<Instance>),
    /// A DICOMDIR: the files it lists, as paths relative to its folder.
    Directory(Vec<PathBuf>),
    NotAnImage(String),
}

/// Media Storage Directory Storage: a DICOMDIR.
const DICOMDIR_CLASS: &str = "1.2.840.10008.1.3.10";
/// Secondary capture image storage classes start with this (PS3.4 B.5): screenshots, scanned
/// films, pictures that may show names in their pixels.
const SECONDARY_CAPTURE_PREFIX: &str = "1.2.840.10008.5.1.4.1.1.7";
const IMPLICIT_VR_LE: &str = "1.2.840.10008.1.2";

/// Reads the DICOM file at `path`, and when it is an image of a kind a study can hold, writes
/// its de-identified copy to `staged` (UIDs replaced under `salt`).
pub(super) fn read_dicom(
    path: &Path,
    part10: bool,
    staged: &Path,
    salt: &str,
    dates: super::Dates,
) -> Result<DicomRead, String> {
    let mut file = if part10 {
        imaging::check_dicom_structure(path, false).map_err(|e| e.reason)?;
        OpenFileOptions::new()
            .open_file(path)
            .map_err(|e| format!("not readable as DICOM: {e}"))?
    } else {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
        let ts = dicom_transfer_syntax_registry::TransferSyntaxRegistry
            .get(IMPLICIT_VR_LE)
            .ok_or("implicit VR little endian is not registered")?;
        let object = InMemDicomObject::read_dataset_with_ts(&bytes[..], ts)
            .map_err(|e| format!("not readable as implicit VR DICOM: {e}"))?;
        with_file_meta(object)?
    };
    let class = file
        .meta()
        .media_storage_sop_class_uid()
        .trim_end_matches(['\0', ' ']);
    if class == DICOMDIR_CLASS {
        return Ok(DicomRead::Directory(directory_records(&file)));
    }
    if file.get(tags::PIXEL_DATA).is_none() {
        let class = imaging::dicom_text(&file, tags::SOP_CLASS_UID).unwrap_or_default();
        return Ok(DicomRead::NotAnImage(format!(
            "DICOM without pixel data (SOP class {class}: a report, presentation state or key \
             object selection)"
        )));
    }
    let modality = imaging::dicom_text(&file, tags::MODALITY);
    if !matches!(modality.as_deref(), Some("MR" | "CT")) {
        return Ok(DicomRead::NotAnImage(format!(
            "Modality (0008,0060) is {}: a study holds MR and CT images",
            modality.as_deref().unwrap_or("missing")
        )));
    }
    let ts = file
        .meta()
        .transfer_syntax()
        .trim_end_matches(['\0', ' '])
        .to_owned();
    let sop_from_meta = file.meta().media_storage_sop_instance_uid().to_owned();
    let meta = imaging::dicom_meta_of(path, &file, &ts, &sop_from_meta).map_err(|e| e.reason)?;
    let text = |tag| imaging::dicom_text(&file, tag);
    let number = |tag| text(tag).and_then(|v| v.parse::<f64>().ok());
    let study_uid =
        text(tags::STUDY_INSTANCE_UID).ok_or("StudyInstanceUID (0020,000D) is missing or empty")?;
    let image_type: Vec<String> = text(tags::IMAGE_TYPE)
        .map(|t| t.split('\\').map(|v| v.trim().to_owned()).collect())
        .unwrap_or_default();
    let description = text(tags::SERIES_DESCRIPTION)
        .or_else(|| text(tags::PROTOCOL_NAME))
        .unwrap_or_default();
    let localizer = image_type.iter().any(|t| t == "LOCALIZER")
        || [
            "localizer",
            "localiser",
            "scout",
            "survey",
            "3-plane",
            "3 plane",
        ]
        .iter()
        .any(|w| description.to_ascii_lowercase().contains(w));
    let burned_in = text(tags::BURNED_IN_ANNOTATION).is_some_and(|v| v.eq_ignore_ascii_case("YES"))
        || text(tags::SOP_CLASS_UID).is_some_and(|c| c.starts_with(SECONDARY_CAPTURE_PREFIX));
    let instance = Instance {
        source: path.to_path_buf(),
        staged: staged.to_path_buf(),
        accession: text(tags::ACCESSION_NUMBER),
        series_number: text(tags::SERIES_NUMBER).and_then(|v| v.parse().ok()),
        acquisition: Acquisition {
            modality: modality.clone(),
            description,
            image_type,
            scanning_sequence: text(tags::SCANNING_SEQUENCE),
            inversion_time_ms: number(tags::INVERSION_TIME),
            echo_time_ms: number(tags::ECHO_TIME),
            repetition_time_ms: number(tags::REPETITION_TIME),
            diffusion_b_value: number(tags::DIFFUSION_B_VALUE),
            contrast_agent: text(tags::CONTRAST_BOLUS_AGENT).is_some(),
        },
        localizer,
        burned_in,
        age_years: text(tags::PATIENT_AGE)
            .and_then(|age| age_in_years(&age))
            .or_else(|| years_between(&text(tags::PATIENT_BIRTH_DATE)?, &text(tags::STUDY_DATE)?)),
        sex: text(tags::PATIENT_SEX),
        study_uid,
        meta,
    };
    let dates = match dates {
        super::Dates::Remove => deid::Dates::Remove,
        super::Dates::ShiftPerPatient => deid::Dates::Shift {
            days: date_shift::patient_offset(salt, &patient_key(&file, &instance.study_uid)),
        },
    };
    deid::deidentify(&mut file, salt, dates);
    file.write_to_file(staged)
        .map_err(|e| format!("writing the de-identified copy {}: {e}", staged.display()))?;
    Ok(DicomRead::Image(Box::new(instance)))
}

/// Who the patient is within this export, for one date offset per patient: PatientID, else name
/// and birth date, else the study alone.
fn patient_key(file: &InMemDicomObject, study_uid: &str) -> String {
    let text = |tag| imaging::dicom_text(file, tag).unwrap_or_default();
    let id = text(tags::PATIENT_ID);
    let name = text(tags::PATIENT_NAME);
    if !id.is_empty() {
        format!("id:{id}")
    } else if !name.is_empty() {
        format!("name:{name}\0{}", text(tags::PATIENT_BIRTH_DATE))
    } else {
        format!("study:{study_uid}")
    }
}

/// A bare data set as a Part 10 file, so that the copy is one any DICOM reader opens.
fn with_file_meta(object: InMemDicomObject) -> Result<FileDicomObject<InMemDicomObject>, String> {
    let class = imaging::dicom_text(&object, tags::SOP_CLASS_UID)
        .ok_or("SOPClassUID (0008,0016) is missing or empty")?;
    let instance = imaging::dicom_text(&object, tags::SOP_INSTANCE_UID)
        .ok_or("SOPInstanceUID (0008,0018) is missing or empty")?;
    object
        .with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax(IMPLICIT_VR_LE)
                .media_storage_sop_class_uid(class)
                .media_storage_sop_instance_uid(instance),
        )
        .map_err(|e| format!("cannot build a file meta group: {e}"))
}

/// The files a DICOMDIR's records point to (ReferencedFileID, components joined).
fn directory_records(dicomdir: &InMemDicomObject) -> Vec<PathBuf> {
    let Some(records) = dicomdir
        .get(tags::DIRECTORY_RECORD_SEQUENCE)
        .and_then(|e| e.items())
    else {
        return Vec::new();
    };
    records
        .iter()
        .filter_map(|record| {
            let id = record.get(tags::REFERENCED_FILE_ID)?.to_multi_str().ok()?;
            Some(
                id.iter()
                    .map(|part| part.trim_matches(|c: char| c == '\0' || c == ' '))
                    .collect::<PathBuf>(),
            )
        })
        .collect()
}

/// PatientAge (AS): `034Y`, `006M`, `003W`, `010D`, in whole years.
fn age_in_years(age: &str) -> Option<u32> {
    let (number, unit) = age.split_at(age.len().checked_sub(1)?);
    let number: u32 = number.parse().ok()?;
    match unit {
        "Y" => Some(number),
        "M" => Some(number / 12),
        "W" => Some(number / 52),
        "D" => Some(number / 365),
        _ => None,
    }
}

/// Whole years from a birth date to a study date (both DA, `YYYYMMDD`).
fn years_between(birth: &str, study: &str) -> Option<u32> {
    let parse = |d: &str| -> Option<(u32, u32)> {
        (d.len() == 8).then_some(())?;
        Some((d[..4].parse().ok()?, d[4..].parse().ok()?))
    };
    let ((by, bmd), (sy, smd)) = (parse(birth)?, parse(study)?);
    let years = sy.checked_sub(by)?;
    Some(if smd < bmd {
        years.checked_sub(1)?
    } else {
        years
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_come_from_patient_age_or_the_dates() {
        assert_eq!(age_in_years("034Y"), Some(34));
        assert_eq!(age_in_years("018M"), Some(1));
        assert_eq!(age_in_years("Y"), None);
        assert_eq!(years_between("19800615", "20240614"), Some(43));
        assert_eq!(years_between("19800615", "20240615"), Some(44));
        assert_eq!(years_between("1980", "20240615"), None);
    }

    #[test]
    fn content_not_name_decides_what_a_file_is() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).expect("write");
            path
        };
        let mut part10 = vec![0u8; 128];
        part10.extend_from_slice(b"DICM");
        part10.extend_from_slice(&[2, 0, 0, 0]);
        assert_eq!(
            classify(&write("IM0001.txt", &part10)).expect("read"),
            Kind::Dicom { part10: true }
        );
        // (0008,0005) CS "ISO_IR 100", then (0008,0016) UI: a bare implicit-VR data set.
        let mut bare = vec![0x08, 0, 0x05, 0, 10, 0, 0, 0];
        bare.extend_from_slice(b"ISO_IR 100");
        bare.extend_from_slice(&[0x08, 0, 0x16, 0, 4, 0, 0, 0]);
        bare.extend_from_slice(b"1.2\0");
        assert_eq!(
            classify(&write("noext", &bare)).expect("read"),
            Kind::Dicom { part10: false }
        );
        let mut nifti = vec![0u8; 352];
        nifti[..4].copy_from_slice(&348i32.to_le_bytes());
        nifti[344..348].copy_from_slice(b"n+1\0");
        assert_eq!(
            classify(&write("scan.dat", &nifti)).expect("read"),
            Kind::Nifti
        );
        for (name, bytes, reason) in [
            ("empty.dcm", &b""[..], "an empty file"),
            ("README", &b"Exported by PACS\r\n"[..], "a text file"),
            ("thumb.dcm", &b"\x89PNG\r\n\x1a\n...."[..], "a PNG picture"),
            ("blob", &[0u8, 1, 2, 3, 0xFE, 0xFF][..], "neither DICOM"),
        ] {
            match classify(&write(name, bytes)).expect("read") {
                Kind::NotAnImage(why) => assert!(why.starts_with(reason), "{name}: {why}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
