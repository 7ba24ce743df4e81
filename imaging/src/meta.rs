//! DICOM headers without pixel data: what import needs to group, order and de-identify a series.

use std::cmp::Ordering;
use std::path::Path;

use dicom_core::header::{HasLength, Header};
use dicom_core::Tag;
use dicom_dictionary_std::tags;
use dicom_object::{InMemDicomObject, OpenFileOptions};

use super::deid;
use super::error::{ImagingError, ImagingErrorKind};

/// One instance's header facts. Geometry comes from the top level or, for enhanced multi-frame
/// files, from the first frame's functional groups.
#[derive(Debug, Clone, PartialEq)]
pub struct DicomMeta {
    pub series_instance_uid: String,
    pub sop_instance_uid: String,
    pub instance_number: Option<i32>,
    pub image_position_patient: Option<[f64; 3]>,
    pub image_orientation_patient: Option<[f64; 6]>,
    pub modality: Option<String>,
    pub rows: u32,
    pub columns: u32,
    pub frames: u32,
    /// ImagePositionPatient of the first and of the last frame (as [`frame_positions`] gives
    /// them; both unknown when the file has no frame): with the frame counts and the first
    /// file's orientation and spacings, what a series' geometry is built from without pixels.
    pub first_frame_position: Option<[f64; 3]>,
    pub last_frame_position: Option<[f64; 3]>,
    /// PixelSpacing (row spacing, column spacing) in mm; 1 mm when the file does not say.
    pub pixel_spacing: [f64; 2],
    /// SpacingBetweenSlices, else SliceThickness.
    pub slice_spacing: Option<f64>,
    pub transfer_syntax: String,
    /// PS3.15 basic confidentiality profile attributes present (non-empty) at the top level of
    /// this file, private attributes included (see [`deid::is_identifying`]).
    pub identifying_attributes: Vec<Tag>,
}

/// Reads the header of `path`, stopping before the pixel data.
pub fn read_dicom_meta(path: &Path) -> Result<DicomMeta, ImagingError> {
    super::guard::check_dicom_structure(path, true)?;
    let obj = OpenFileOptions::new()
        .read_until(tags::PIXEL_DATA)
        .open_file(path)
        .map_err(|e| open_error(path, &e))?;
    let ts = obj
        .meta()
        .transfer_syntax()
        .trim_end_matches(['\0', ' '])
        .to_string();
    let sop_from_meta = obj.meta().media_storage_sop_instance_uid().to_owned();
    dicom_meta_of(path, &obj, &ts, &sop_from_meta)
}

/// The header facts of `obj`, a file already read from `path` whose transfer syntax is `ts`;
/// `sop_from_meta` is the file meta's Media Storage SOP Instance UID (empty when it has none).
pub fn dicom_meta_of(
    path: &Path,
    obj: &InMemDicomObject,
    ts: &str,
    sop_from_meta: &str,
) -> Result<DicomMeta, ImagingError> {
    let err = |kind, reason: String| ImagingError::new(path, kind, reason).with_transfer_syntax(ts);

    let series_instance_uid = text(obj, tags::SERIES_INSTANCE_UID).ok_or_else(|| {
        err(
            ImagingErrorKind::InvalidHeader,
            "SeriesInstanceUID (0020,000E) is missing or empty".into(),
        )
    })?;
    let sop_instance_uid = text(obj, tags::SOP_INSTANCE_UID)
        .or_else(|| {
            let from_meta = sop_from_meta.trim_end_matches(['\0', ' ']);
            (!from_meta.is_empty()).then(|| from_meta.to_string())
        })
        .ok_or_else(|| {
            err(
                ImagingErrorKind::InvalidHeader,
                "SOPInstanceUID (0008,0018) is missing or empty".into(),
            )
        })?;
    let rows = unsigned(obj, tags::ROWS).ok_or_else(|| {
        err(
            ImagingErrorKind::InvalidHeader,
            "Rows (0028,0010) is missing or not a number".into(),
        )
    })?;
    let columns = unsigned(obj, tags::COLUMNS).ok_or_else(|| {
        err(
            ImagingErrorKind::InvalidHeader,
            "Columns (0028,0011) is missing or not a number".into(),
        )
    })?;
    let frames = match obj.get(tags::NUMBER_OF_FRAMES) {
        None => 1,
        Some(e) if e.is_empty() => 1,
        Some(e) => e.to_int::<u32>().map_err(|_| {
            err(
                ImagingErrorKind::InvalidHeader,
                format!(
                    "NumberOfFrames (0028,0008) is not a non-negative integer: {:?}",
                    e.to_str().unwrap_or_default()
                ),
            )
        })?,
    };

    let (image_position_patient, image_orientation_patient) = plane_of(obj);

    let identifying_attributes = obj
        .iter()
        .filter(|e| deid::is_identifying(e.tag()) && !e.is_empty())
        .map(|e| e.tag())
        .collect();

    Ok(DicomMeta {
        series_instance_uid,
        sop_instance_uid,
        instance_number: obj
            .get(tags::INSTANCE_NUMBER)
            .and_then(|e| e.to_int::<i32>().ok()),
        image_position_patient,
        image_orientation_patient,
        modality: text(obj, tags::MODALITY),
        rows,
        columns,
        frames,
        first_frame_position: frame_position(obj, frames, 0),
        last_frame_position: frame_position(obj, frames, frames.saturating_sub(1)),
        pixel_spacing: pixel_spacing(obj),
        slice_spacing: slice_spacing(obj),
        transfer_syntax: ts.to_owned(),
        identifying_attributes,
    })
}

/// Orientation vectors this close (per component) describe the same plane; scanners write
/// IOP with 5–6 decimals, and re-computation noise stays far below this.
const ORIENTATION_TOLERANCE: f64 = 1e-4;
/// Two slices closer than this along the normal (mm) are the same location (another echo or
/// time point), so geometry cannot order them.
const SAME_LOCATION_MM: f64 = 1e-3;

/// Sorts the instances of one series along the slice normal (row × column direction of
/// ImageOrientationPatient), ascending: for an axial series, foot to head (DICOM LPS +z).
/// Falls back to InstanceNumber (missing numbers last, then SOPInstanceUID) when any instance
/// lacks geometry, orientations differ, or two instances share a location.
pub fn order_series(instances: &mut [DicomMeta]) {
    match slice_positions(instances) {
        Some(positions) => {
            let mut keyed: Vec<(f64, DicomMeta)> = positions
                .into_iter()
                .zip(instances.iter().cloned())
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (slot, (_, meta)) in instances.iter_mut().zip(keyed) {
                *slot = meta;
            }
        }
        None => instances.sort_by(by_instance_number),
    }
}

fn by_instance_number(a: &DicomMeta, b: &DicomMeta) -> Ordering {
    match (a.instance_number, b.instance_number) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.sop_instance_uid.cmp(&b.sop_instance_uid))
}

/// Each instance's distance along the common slice normal, or `None` when geometry cannot order.
fn slice_positions(instances: &[DicomMeta]) -> Option<Vec<f64>> {
    let orientation = instances.first()?.image_orientation_patient?;
    let normal = super::geometry::slice_normal(&orientation)?;
    let mut positions = Vec::with_capacity(instances.len());
    for meta in instances {
        let iop = meta.image_orientation_patient?;
        let same_plane = iop
            .iter()
            .zip(orientation.iter())
            .all(|(a, b)| (a - b).abs() <= ORIENTATION_TOLERANCE);
        if !same_plane {
            return None;
        }
        let ipp = meta.image_position_patient?;
        positions.push(normal[0] * ipp[0] + normal[1] * ipp[1] + normal[2] * ipp[2]);
    }
    let mut sorted = positions.clone();
    sorted.sort_by(f64::total_cmp);
    if sorted.windows(2).any(|w| w[1] - w[0] < SAME_LOCATION_MM) {
        return None;
    }
    Some(positions)
}

pub(crate) fn open_error(path: &Path, e: &dicom_object::ReadError) -> ImagingError {
    use std::error::Error as _;
    let mut reason = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        reason.push_str(": ");
        reason.push_str(&s.to_string());
        source = s.source();
    }
    let kind = if path.is_file() {
        ImagingErrorKind::UnrecognisedFormat
    } else {
        ImagingErrorKind::Io
    };
    ImagingError::new(path, kind, format!("not readable as DICOM: {reason}"))
}

pub fn text(obj: &InMemDicomObject, tag: Tag) -> Option<String> {
    let value = obj.get(tag)?.to_str().ok()?;
    let value = value.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    (!value.is_empty()).then(|| value.to_string())
}

pub(crate) fn unsigned(obj: &InMemDicomObject, tag: Tag) -> Option<u32> {
    obj.get(tag)?.to_int::<u32>().ok()
}

pub(crate) fn floats<const N: usize>(obj: &InMemDicomObject, tag: Tag) -> Option<[f64; N]> {
    let values = obj.get(tag)?.to_multi_float64().ok()?;
    let array: [f64; N] = values.get(..N)?.try_into().ok()?;
    array.iter().all(|v| v.is_finite()).then_some(array)
}

/// ImagePositionPatient and ImageOrientationPatient of the first frame: top level, else the
/// enhanced multi-frame functional groups (per-frame first, then shared).
pub(crate) fn plane_of(obj: &InMemDicomObject) -> (Option<[f64; 3]>, Option<[f64; 6]>) {
    let first_frame = functional_group_item(obj, tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE);
    let shared = functional_group_item(obj, tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE);
    let position = floats::<3>(obj, tags::IMAGE_POSITION_PATIENT).or_else(|| {
        [first_frame, shared]
            .into_iter()
            .flatten()
            .find_map(|group| {
                nested_floats::<3>(
                    group,
                    tags::PLANE_POSITION_SEQUENCE,
                    tags::IMAGE_POSITION_PATIENT,
                )
            })
    });
    let orientation = floats::<6>(obj, tags::IMAGE_ORIENTATION_PATIENT).or_else(|| {
        [first_frame, shared]
            .into_iter()
            .flatten()
            .find_map(|group| {
                nested_floats::<6>(
                    group,
                    tags::PLANE_ORIENTATION_SEQUENCE,
                    tags::IMAGE_ORIENTATION_PATIENT,
                )
            })
    });
    (position, orientation)
}

/// The first item of a functional groups sequence.
pub(crate) fn functional_group_item(obj: &InMemDicomObject, tag: Tag) -> Option<&InMemDicomObject> {
    obj.get(tag)?.items()?.first()
}

/// `tag` inside the first item of the macro sequence `sequence` of a functional group item.
pub(crate) fn nested_floats<const N: usize>(
    group: &InMemDicomObject,
    sequence: Tag,
    tag: Tag,
) -> Option<[f64; N]> {
    floats::<N>(group.get(sequence)?.items()?.first()?, tag)
}

/// ImagePositionPatient of each frame: per-frame functional groups for enhanced multi-frame
/// files, else the top-level position for frame 0 and unknown for the rest.
pub(crate) fn frame_positions(obj: &InMemDicomObject, frames: u32) -> Vec<Option<[f64; 3]>> {
    (0..frames)
        .map(|k| frame_position(obj, frames, k))
        .collect()
}

/// Frame `k`'s position as [`frame_positions`] gives it, without a vector of every frame: a
/// header read before decoding may declare any number of frames.
pub(crate) fn frame_position(obj: &InMemDicomObject, frames: u32, k: u32) -> Option<[f64; 3]> {
    let per_frame = obj
        .get(tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE)
        .and_then(|e| e.items());
    match per_frame {
        Some(items) if items.len() == frames as usize => nested_floats::<3>(
            items.get(k as usize)?,
            tags::PLANE_POSITION_SEQUENCE,
            tags::IMAGE_POSITION_PATIENT,
        ),
        _ if k == 0 => plane_of(obj).0,
        _ => None,
    }
}

/// PixelSpacing (row spacing, column spacing) in mm; 1 mm when the file does not say.
pub(crate) fn pixel_spacing(obj: &InMemDicomObject) -> [f64; 2] {
    floats::<2>(obj, tags::PIXEL_SPACING)
        .or_else(|| {
            let shared = functional_group_item(obj, tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE)?;
            nested_floats::<2>(shared, tags::PIXEL_MEASURES_SEQUENCE, tags::PIXEL_SPACING)
        })
        .filter(|s| s.iter().all(|v| *v > 0.0))
        .unwrap_or([1.0, 1.0])
}

/// SpacingBetweenSlices, else SliceThickness: the slice step when positions are unknown.
pub(crate) fn slice_spacing(obj: &InMemDicomObject) -> Option<f64> {
    let number = |tag| {
        obj.get(tag)
            .and_then(|e| e.to_float64().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    number(tags::SPACING_BETWEEN_SLICES).or_else(|| number(tags::SLICE_THICKNESS))
}
