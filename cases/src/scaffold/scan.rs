//! Finding the images in what a PACS, a CD or a research archive exported: every file under the
//! sources, recognised by its content (never its name), and the DICOM headers read, their facts
//! kept; the de-identified copies are written once the images are grouped and ordered.

use super::label::Acquisition;
use crate::package::{date_shift, deid};
use dicom_dictionary_std::tags;
use dicom_encoding::transfer_syntax::TransferSyntaxIndex;
use dicom_object::{FileDicomObject, FileMetaTableBuilder, InMemDicomObject, OpenFileOptions};
use imaging::{DicomMeta, HeaderEnd, PixelDataAt};
use std::io::{Read, Seek, SeekFrom};
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
/// A scanner's header, vendor private groups included, fits in this with room to spare; a
/// longer one is read from the file again.
const HEADER_BYTES_READ: u64 = 32 * 1024;

/// A file's first bytes, read once: what the file is and, for most DICOM files, its whole header.
pub(super) struct Head {
    pub bytes: Vec<u8>,
    pub file_len: u64,
}

impl Head {
    pub(super) fn read(path: &Path) -> std::io::Result<Head> {
        let mut file = std::fs::File::open(path)?;
        let file_len = file.metadata()?.len();
        let mut bytes = Vec::with_capacity(file_len.min(HEADER_BYTES_READ) as usize);
        (&mut file)
            .take(HEADER_BYTES_READ)
            .read_to_end(&mut bytes)?;
        Ok(Head { bytes, file_len })
    }
}

/// What the file at `path` is, from `head`, its first bytes.
pub(super) fn classify(path: &Path, head: &[u8]) -> std::io::Result<Kind> {
    let head = &head[..head.len().min(HEAD_BYTES)];
    if head.is_empty() {
        return Ok(Kind::NotAnImage("an empty file".into()));
    }
    if head.len() >= 132 && &head[128..132] == b"DICM" || head.starts_with(b"DICM") {
        return Ok(Kind::Dicom { part10: true });
    }
    if is_nifti_header(head) {
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
    if is_plausible_implicit_vr(head) {
        return Ok(Kind::Dicom { part10: false });
    }
    Ok(Kind::NotAnImage(describe_other(head)))
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
    /// A Part 10 file (else a bare implicit-VR data set).
    pub part10: bool,
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

/// What reading one DICOM file's header gave.
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

/// A DICOM file read by dicom-rs; its PixelData is left out when it was read as a header.
type DicomFile = FileDicomObject<InMemDicomObject>;

/// Reads the header of the DICOM file at `path` (stopping before the pixel data, as the scan
/// needs nothing more), from `head` when it holds the whole header.
pub(super) fn read_dicom(path: &Path, part10: bool, head: &Head) -> Result<DicomRead, String> {
    let (file, has_pixel_data) = if part10 {
        part10_header(path, head)?
    } else {
        let file = bare_data_set(path)?;
        let has_pixel_data = file.get(tags::PIXEL_DATA).is_some();
        (file, has_pixel_data)
    };
    let class = file
        .meta()
        .media_storage_sop_class_uid()
        .trim_end_matches(['\0', ' ']);
    if class == DICOMDIR_CLASS {
        return Ok(DicomRead::Directory(directory_records(&file)));
    }
    if !has_pixel_data {
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
        part10,
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
    Ok(DicomRead::Image(Box::new(instance)))
}

/// The header of a Part 10 file and whether PixelData follows it: parsed from the bytes the
/// structure guard walked when `head` holds the whole header, else the file read whole.
fn part10_header(path: &Path, head: &Head) -> Result<(DicomFile, bool), String> {
    let parse = |bytes: &[u8]| {
        OpenFileOptions::new()
            .read_until(tags::PIXEL_DATA)
            .from_reader(bytes)
            .map_err(|e| format!("not readable as DICOM: {e}"))
    };
    match imaging::check_dicom_header_bytes(path, &head.bytes, head.file_len)
        .map_err(|e| e.reason)?
    {
        Some(HeaderEnd::PixelDataAt(offset)) => Ok((parse(&head.bytes[..offset as usize])?, true)),
        Some(HeaderEnd::NoPixelData) => Ok((parse(&head.bytes)?, false)),
        None => {
            imaging::check_dicom_structure(path, false).map_err(|e| e.reason)?;
            let file = OpenFileOptions::new()
                .open_file(path)
                .map_err(|e| format!("not readable as DICOM: {e}"))?;
            let has_pixel_data = file.get(tags::PIXEL_DATA).is_some();
            Ok((file, has_pixel_data))
        }
    }
}

/// A bare implicit-VR data set, read whole, as a Part 10 file.
fn bare_data_set(path: &Path) -> Result<DicomFile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let ts = dicom_transfer_syntax_registry::TransferSyntaxRegistry
        .get(IMPLICIT_VR_LE)
        .ok_or("implicit VR little endian is not registered")?;
    let object = InMemDicomObject::read_dataset_with_ts(&bytes[..], ts)
        .map_err(|e| format!("not readable as implicit VR DICOM: {e}"))?;
    with_file_meta(object)
}

/// Writes the de-identified copy of `instance` to `target` (UIDs replaced under `salt`). The
/// header goes through [`deid::deidentify`]; when the file ends with its pixel data, those
/// bytes are copied through as they are (the kernel copies them, nothing decodes them), else
/// the whole file is read and written again.
pub(super) fn write_deidentified(
    instance: &Instance,
    target: &Path,
    salt: &str,
    dates: super::Dates,
) -> Result<(), String> {
    let path = &instance.source;
    let unreadable = |e: dicom_object::ReadError| format!("not readable as DICOM: {e}");
    let (mut file, pixel_data_at) = if instance.part10 {
        match imaging::check_dicom_structure(path, false).map_err(|e| e.reason)? {
            Some(PixelDataAt {
                offset,
                closes_file: true,
            }) => {
                let header = OpenFileOptions::new()
                    .read_until(tags::PIXEL_DATA)
                    .open_file(path)
                    .map_err(unreadable)?;
                (header, Some(offset))
            }
            _ => (
                OpenFileOptions::new().open_file(path).map_err(unreadable)?,
                None,
            ),
        }
    } else {
        (bare_data_set(path)?, None)
    };
    let dates = match dates {
        super::Dates::Remove => deid::Dates::Remove,
        super::Dates::ShiftPerPatient => deid::Dates::Shift {
            days: date_shift::patient_offset(salt, &patient_key(&file, &instance.study_uid)),
        },
    };
    deid::deidentify(&mut file, salt, dates);
    let failed = |e: &dyn std::fmt::Display| {
        format!("writing the de-identified copy {}: {e}", target.display())
    };
    let mut copy = std::fs::File::create(target).map_err(|e| failed(&e))?;
    file.write_all(&mut copy).map_err(|e| failed(&e))?;
    if let Some(offset) = pixel_data_at {
        let mut source = std::fs::File::open(path).map_err(|e| failed(&e))?;
        source
            .seek(SeekFrom::Start(offset))
            .and_then(|_| std::io::copy(&mut source, &mut copy))
            .map_err(|e| failed(&e))?;
    }
    Ok(())
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

    /// An MR slice naming its patient, with 4×4 16-bit pixels, then `trailing` top-level
    /// elements after its pixel data.
    fn mr_slice(path: &Path, trailing: &[dicom_core::DataElement<InMemDicomObject>]) {
        use dicom_core::{DataElement, PrimitiveValue, VR};
        let text = |tag, vr, value: &str| DataElement::new(tag, vr, PrimitiveValue::from(value));
        let mut object = InMemDicomObject::from_element_iter([
            text(tags::SOP_CLASS_UID, VR::UI, "1.2.840.10008.5.1.4.1.1.4"),
            text(tags::SOP_INSTANCE_UID, VR::UI, "1.2.3.4.5"),
            text(tags::STUDY_DATE, VR::DA, "20240115"),
            text(tags::MODALITY, VR::CS, "MR"),
            text(tags::PATIENT_NAME, VR::PN, "Doe^Jane"),
            text(tags::PATIENT_ID, VR::LO, "MRN-4711"),
            text(tags::STUDY_INSTANCE_UID, VR::UI, "1.2.3.4"),
            text(tags::SERIES_INSTANCE_UID, VR::UI, "1.2.3.4.1"),
            text(tags::SERIES_DESCRIPTION, VR::LO, "AX FLAIR"),
            DataElement::new(tags::ROWS, VR::US, PrimitiveValue::from(4_u16)),
            DataElement::new(tags::COLUMNS, VR::US, PrimitiveValue::from(4_u16)),
            DataElement::new(tags::BITS_ALLOCATED, VR::US, PrimitiveValue::from(16_u16)),
            DataElement::new(
                tags::PIXEL_DATA,
                VR::OW,
                PrimitiveValue::U16((0..16_u16).map(|v| v * 97).collect()),
            ),
        ]);
        for element in trailing {
            object.put(element.clone());
        }
        object
            .with_meta(
                FileMetaTableBuilder::new()
                    .transfer_syntax("1.2.840.10008.1.2.1")
                    .media_storage_sop_class_uid("1.2.840.10008.5.1.4.1.1.4")
                    .media_storage_sop_instance_uid("1.2.3.4.5"),
            )
            .expect("file meta")
            .write_to_file(path)
            .expect("write the slice");
    }

    /// The copy as the rule has it: the whole file read, de-identified, written again.
    fn reference_copy(path: &Path, salt: &str) -> Vec<u8> {
        let mut file = OpenFileOptions::new().open_file(path).expect("read");
        deid::deidentify(&mut file, salt, deid::Dates::Remove);
        let mut bytes = Vec::new();
        file.write_all(&mut bytes).expect("write");
        bytes
    }

    #[test]
    fn the_copy_with_pixels_copied_through_is_the_copy_the_rule_writes() {
        use dicom_core::{DataElement, PrimitiveValue, VR};
        let dir = tempfile::tempdir().expect("temp dir");
        let padding = DataElement::new(
            dicom_core::Tag(0xFFFC, 0xFFFC),
            VR::OB,
            PrimitiveValue::from(vec![0_u8; 8]),
        );
        for (name, trailing) in [("plain.dcm", vec![]), ("padded.dcm", vec![padding])] {
            let source = dir.path().join(name);
            mr_slice(&source, &trailing);
            let pixel_data = imaging::check_dicom_structure(&source, false)
                .expect("well formed")
                .expect("pixel data");
            // The fast path for the plain file, the whole-file path when something follows.
            assert_eq!(pixel_data.closes_file, trailing.is_empty(), "{name}");
            let head = Head::read(&source).expect("read");
            let Ok(DicomRead::Image(instance)) = read_dicom(&source, true, &head) else {
                panic!("{name}: not read as an image");
            };
            assert_eq!(instance.study_uid, "1.2.3.4");
            let copy = dir.path().join(format!("copy-{name}"));
            write_deidentified(&instance, &copy, "salt", super::super::Dates::Remove)
                .expect("write the copy");
            let written = std::fs::read(&copy).expect("read the copy");
            assert_eq!(written, reference_copy(&source, "salt"), "{name}");
            let contains = |needle: &[u8]| written.windows(needle.len()).any(|w| w == needle);
            for identifying in [&b"Doe^Jane"[..], b"MRN-4711", b"20240115"] {
                assert!(
                    !contains(identifying),
                    "{name}: {identifying:?} left in the copy"
                );
            }
        }
    }

    #[test]
    fn a_header_read_from_the_first_bytes_is_the_header_read_from_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let source = dir.path().join("slice.dcm");
        mr_slice(&source, &[]);
        let head = Head::read(&source).expect("read");
        let pixel_data = imaging::check_dicom_structure(&source, true)
            .expect("well formed")
            .expect("pixel data");
        // The whole file fits the bytes read, and a shortened view of them settles nothing
        // beyond where they end.
        let settled = |bytes: &[u8]| {
            imaging::check_dicom_header_bytes(&source, bytes, head.file_len).expect("well formed")
        };
        assert_eq!(
            settled(&head.bytes),
            Some(HeaderEnd::PixelDataAt(pixel_data.offset))
        );
        assert_eq!(
            settled(&head.bytes[..pixel_data.offset as usize - 20]),
            None
        );
        let (from_bytes, has_pixel_data) = part10_header(&source, &head).expect("parse");
        assert!(has_pixel_data);
        let from_file = OpenFileOptions::new()
            .read_until(tags::PIXEL_DATA)
            .open_file(&source)
            .expect("read");
        let encode = |file: &DicomFile| {
            let mut bytes = Vec::new();
            file.write_all(&mut bytes).expect("write");
            bytes
        };
        assert_eq!(encode(&from_bytes), encode(&from_file));
    }

    fn kind_of(path: &Path) -> std::io::Result<Kind> {
        classify(path, &Head::read(path)?.bytes)
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
            kind_of(&write("IM0001.txt", &part10)).expect("read"),
            Kind::Dicom { part10: true }
        );
        // (0008,0005) CS "ISO_IR 100", then (0008,0016) UI: a bare implicit-VR data set.
        let mut bare = vec![0x08, 0, 0x05, 0, 10, 0, 0, 0];
        bare.extend_from_slice(b"ISO_IR 100");
        bare.extend_from_slice(&[0x08, 0, 0x16, 0, 4, 0, 0, 0]);
        bare.extend_from_slice(b"1.2\0");
        assert_eq!(
            kind_of(&write("noext", &bare)).expect("read"),
            Kind::Dicom { part10: false }
        );
        let mut nifti = vec![0u8; 352];
        nifti[..4].copy_from_slice(&348i32.to_le_bytes());
        nifti[344..348].copy_from_slice(b"n+1\0");
        assert_eq!(
            kind_of(&write("scan.dat", &nifti)).expect("read"),
            Kind::Nifti
        );
        for (name, bytes, reason) in [
            ("empty.dcm", &b""[..], "an empty file"),
            ("README", &b"Exported by PACS\r\n"[..], "a text file"),
            ("thumb.dcm", &b"\x89PNG\r\n\x1a\n...."[..], "a PNG picture"),
            ("blob", &[0u8, 1, 2, 3, 0xFE, 0xFF][..], "neither DICOM"),
        ] {
            match kind_of(&write(name, bytes)).expect("read") {
                Kind::NotAnImage(why) => assert!(why.starts_with(reason), "{name}: {why}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
