//! A study's marks as DICOM Structured Reports (docs/formats.md §9, `export --what sr`;
//! docs/dicom-sr.md): per case, one Comprehensive 3D SR holding a TID 1500 Measurement Report
//! whose measurement groups (TID 1410, planar ROI) are the ground truth's lesion marks and the
//! clinicians' image-anchored error labels, beside de-identified copies of the series they lie on.
//!
//! - **References are to de-identified instances only.** Each series a mark lies on is written
//!   into the case's folder by the rater package's de-identification (`package::deidentified_image`:
//!   PS3.15 basic profile, UIDs replaced by salted digests), salted with a digest of the study's
//!   secret, so the same study gives the same UIDs on every export and nobody without the secret
//!   maps them back. The report's study, series, instance and frame-of-reference UIDs are read
//!   from those copies; an original UID never leaves.
//! - **Coordinates:** a mark whose points lie in one image's plane (within half the spacing
//!   between the series' planes) is a SCOORD on that image, in its (column, row) pixel coordinates
//!   with (0, 0) the top left corner of the top left pixel (PS3.3 C.18.6.1.2); any other mark
//!   (drawn on a reslice) is a SCOORD3D in patient LPS mm on the series' frame of reference. Point
//!   → POINT, arrow → POLYLINE (tail, head), ellipse → ELLIPSE (major axis ends, then minor axis
//!   ends), freehand → closed POLYLINE (SCOORD) or POLYGON (SCOORD3D), the first point repeated.
//! - **Codes:** a lesion's finding is SNOMED CT 52988006 "Lesion"; an error label's is its
//!   taxonomy category under the private scheme `99NEURORATER` (the code is the category's code,
//!   the version the study's taxonomy id); where a mark came from and a label's severity are
//!   qualitative evaluations under the same scheme ([`SCHEME`]).
//! - **No identifying value**: the patient's id is the case id (the study's pseudonym) in the
//!   report and the copies, the name empty; no date, name or id of the source is read.

use crate::model::{GroundTruth, MarkShape, SeriesKind, Taxonomy};
use crate::store::Store;
use crate::{Error, Result};
use dicom_core::smallvec::SmallVec;
use dicom_core::value::{DataSetSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::meta::FileMetaTableBuilder;
use dicom_object::{from_reader, InMemDicomObject};
use imaging::vector::{cross, dot, sub};
use rusqlite::OptionalExtension;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The private coding scheme designator of NeuroRater's codes (docs/dicom-sr.md lists them).
pub const SCHEME: &str = "99NEURORATER";
/// Comprehensive 3D SR Storage: SCOORD and SCOORD3D in one document.
pub const COMPREHENSIVE_3D_SR: &str = "1.2.840.10008.5.1.4.1.1.88.34";
const EXPLICIT_VR_LE: &str = "1.2.840.10008.1.2.1";
/// The SR's file name in each case folder.
pub const REPORT_FILE: &str = "sr.dcm";

/// What an export wrote, and the marks it could not place (each with the reason).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SrSummary {
    /// Cases with at least one mark placed: one report each.
    pub reports: usize,
    pub lesion_marks: usize,
    pub label_marks: usize,
    /// De-identified image files written beside the reports.
    pub images: usize,
    /// `CASE: what: why` for each mark left out.
    pub skipped: Vec<String>,
}

/// Where a mark came from.
#[derive(Debug, Clone)]
enum Source {
    Lesion {
        id: String,
        mark: usize,
        marks: usize,
    },
    Label {
        id: i64,
        category: String,
        severity: u8,
        rater: String,
        model: String,
        sample: i64,
        task: String,
        read_no: i64,
    },
}

#[derive(Debug, Clone)]
struct Drawn {
    source: Source,
    series: String,
    shape: MarkShape,
    points: Vec<[f64; 3]>,
}

/// One de-identified image as written: what a reference and a coordinate need.
#[derive(Debug, Clone)]
struct Instance {
    sop_class: String,
    sop_instance: String,
    study: String,
    series: String,
    frame_of_reference: Option<String>,
    /// None for a multi-frame image or one without plane geometry.
    plane: Option<ImagePlane>,
}

/// Where a single-frame image lies: Image Position, Orientation and Pixel Spacing.
#[derive(Debug, Clone, Copy)]
struct ImagePlane {
    /// The centre of the top left pixel, LPS mm.
    position: [f64; 3],
    /// The direction columns count along (first row of the orientation), and rows along.
    row: [f64; 3],
    column: [f64; 3],
    /// Between rows, between columns (Pixel Spacing's order), mm.
    spacing: [f64; 2],
}

impl ImagePlane {
    fn normal(&self) -> [f64; 3] {
        cross(self.row, self.column)
    }
}

/// An error label with a mark, as read: id, category, severity, mark JSON, rater, model,
/// sample, task, read number.
type LabelRow = (i64, String, u8, String, String, String, i64, String, i64);

enum Placed {
    /// (column, row) pixel coordinates on one instance.
    Image {
        instance: usize,
        points: Vec<[f64; 2]>,
    },
    /// Patient LPS mm on a frame of reference.
    Space {
        frame: String,
        points: Vec<[f64; 3]>,
    },
}

/// Writes `out/CASE/sr.dcm` and `out/CASE/SERIES/NNNNN.dcm` for every case of `study_id` with a
/// mark on a DICOM series.
pub fn write_reports(store: &Store, study_id: &str, out: &Path) -> Result<SrSummary> {
    let study = store.study_key(study_id)?;
    let conn = store.read();
    let fail = |doing: &'static str| move |e| Error::database(store.path(), doing, e);
    let (bundle_dir, taxonomy_json): (String, String) = conn
        .query_row(
            "SELECT bundle_dir, taxonomy_json FROM studies WHERE id = ?1",
            [study],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(fail("reading the study"))?;
    let taxonomy: Taxonomy = crate::store::stored_taxonomy(study_id, &taxonomy_json)?;
    // The codes' scheme version (SH, at most 16 characters): the first 16 hex digits of the
    // taxonomy's SHA-256 as stored, as the report manifest's `taxonomy_sha256` begins.
    let taxonomy_version =
        crate::digest::hex(&Sha256::digest(taxonomy_json.as_bytes()))[..16].to_owned();
    let secret = store.study_secret(study)?;
    // The UID salt: a digest of the secret, never the secret itself (which keys case codes).
    let salt = crate::digest::hex(
        &Sha256::new()
            .chain_update(b"neurorater dicom-sr uids\0")
            .chain_update(&secret)
            .finalize(),
    );
    let cases: Vec<(i64, String, String)> = conn
        .prepare("SELECT id, case_id, modality FROM cases WHERE study = ?1 ORDER BY case_id")
        .and_then(|mut s| {
            s.query_map([study], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .map_err(fail("listing the cases"))?;
    // When the reports were made (the store's clock, UTC), as DA and TM: never a source date.
    let now = da_tm(&crate::store::now(conn).map_err(fail("reading the clock"))?);
    let mut summary = SrSummary::default();
    for (case_key, case_id, modality) in cases {
        let drawn = case_marks(store, case_key)?;
        if drawn.is_empty() {
            continue;
        }
        let case_dir = out.join(&case_id);
        let mut instances: Vec<Instance> = Vec::new();
        let mut by_series: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut missing: BTreeMap<String, String> = BTreeMap::new();
        for series_id in drawn
            .iter()
            .map(|d| d.series.clone())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let row: Option<(i64, String)> = conn
                .query_row(
                    "SELECT id, kind FROM series WHERE case_ref = ?1 AND series_id = ?2",
                    rusqlite::params![case_key, series_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(fail("reading a series"))?;
            let Some((series_key, kind)) = row else {
                missing.insert(series_id, "the case has no such series".into());
                continue;
            };
            let kind: SeriesKind =
                crate::store::parse_enum(&kind).ok_or_else(|| Error::Corrupt {
                    what: format!("series {series_id}'s kind {kind:?}"),
                })?;
            if kind != SeriesKind::Dicom {
                missing.insert(
                    series_id,
                    "the series is not DICOM: an SR refers to DICOM instances".into(),
                );
                continue;
            }
            let files: Vec<(String, String)> = conn
                .prepare("SELECT path, sha256 FROM images WHERE series = ?1 ORDER BY position")
                .and_then(|mut s| {
                    s.query_map([series_key], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                })
                .map_err(fail("listing a series' images"))?;
            let series_dir = case_dir.join(&series_id);
            std::fs::create_dir_all(&series_dir).map_err(|e| io(&series_dir, e))?;
            let mut indices = Vec::with_capacity(files.len());
            for (position, (file, sha256)) in files.iter().enumerate() {
                let bytes = crate::package::deidentified_image(
                    kind,
                    &Path::new(&bundle_dir).join(file),
                    sha256,
                    &salt,
                )?;
                let path = series_dir.join(copy_name(position));
                indices.push(instances.len());
                instances.push(write_copy(&path, &bytes, &case_id)?);
                summary.images += 1;
            }
            by_series.insert(series_id, indices);
        }
        let mut groups = Vec::new();
        for mark in &drawn {
            let what = describe(&mark.source);
            if let Some(why) = missing.get(&mark.series) {
                summary
                    .skipped
                    .push(format!("{case_id}: {what} on {}: {why}", mark.series));
                continue;
            }
            let members = &by_series[&mark.series];
            match place(mark, members, &instances) {
                Ok(placed) => {
                    match mark.source {
                        Source::Lesion { .. } => summary.lesion_marks += 1,
                        Source::Label { .. } => summary.label_marks += 1,
                    }
                    groups.push((mark, placed));
                }
                Err(why) => summary
                    .skipped
                    .push(format!("{case_id}: {what} on {}: {why}", mark.series)),
            }
        }
        if groups.is_empty() {
            // No report refers to the copies: take them away again, so the folder holds no case
            // without its report (the skipped marks say why).
            summary.images -= instances.len();
            remove_copies(&case_dir, &by_series)?;
            continue;
        }
        let report = build_report(
            &salt,
            &case_id,
            &modality,
            (&taxonomy, &taxonomy_version),
            &groups,
            &instances,
            &now,
        )?;
        let path = case_dir.join(REPORT_FILE);
        report.write_to_file(&path).map_err(|e| {
            io(
                &path,
                std::io::Error::other(format!("writing the DICOM SR: {e}")),
            )
        })?;
        summary.reports += 1;
    }
    Ok(summary)
}

/// DICOM's date (DA, `YYYYMMDD`) and time (TM, `HHMMSS`) of a time stamp as the store writes
/// them (`2026-11-29T07:33:50.123Z`).
fn da_tm(stamp: &str) -> (String, String) {
    let digits = |part: &str| {
        part.chars()
            .filter(char::is_ascii_digit)
            .collect::<String>()
    };
    let (date, time) = stamp.split_once('T').unwrap_or((stamp, ""));
    let time = digits(time.split('.').next().unwrap_or_default());
    (digits(date), time)
}

/// The file name of a series' copy at `position` (from 0) in the series' order.
fn copy_name(position: usize) -> String {
    format!("{:05}.dcm", position + 1)
}

/// Removes the copies written for a case, and the folders that held only them.
fn remove_copies(case_dir: &Path, by_series: &BTreeMap<String, Vec<usize>>) -> Result<()> {
    for (series_id, copies) in by_series {
        let series_dir = case_dir.join(series_id);
        for position in 0..copies.len() {
            let copy = series_dir.join(copy_name(position));
            std::fs::remove_file(&copy).map_err(|e| io(&copy, e))?;
        }
        let _ = std::fs::remove_dir(&series_dir);
    }
    // Left when something else is in it (an earlier export's report, a file of the user's).
    let _ = std::fs::remove_dir(case_dir);
    Ok(())
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The case's lesion marks (its current ground truth) and its error labels' marks, in order.
fn case_marks(store: &Store, case_key: i64) -> Result<Vec<Drawn>> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "reading the marks to export", e);
    let mut drawn = Vec::new();
    let body: Option<String> = conn
        .query_row(
            "SELECT body_json FROM ground_truth WHERE case_ref = ?1",
            [case_key],
            |r| r.get(0),
        )
        .optional()
        .map_err(fail)?;
    if let Some(body) = body {
        let truth: GroundTruth = serde_json::from_str(&body).map_err(|e| Error::Corrupt {
            what: format!("stored ground truth: {e}"),
        })?;
        for lesion in truth.lesions {
            let marks = lesion.marks.len();
            for (index, mark) in lesion.marks.into_iter().enumerate() {
                drawn.push(Drawn {
                    source: Source::Lesion {
                        id: lesion.id.clone(),
                        mark: index + 1,
                        marks,
                    },
                    series: mark.series,
                    shape: mark.shape,
                    points: mark.points_mm,
                });
            }
        }
    }
    let mut stmt = conn
        .prepare(
            "SELECT e.id, e.category, e.severity, e.mark_json, ra.name, r.model, r.sample,
                    t.task_id, g.read_no
             FROM error_labels e JOIN ratings g ON e.rating = g.id JOIN raters ra ON g.rater = ra.id
             JOIN responses r ON g.response = r.id JOIN tasks t ON r.task = t.id
             WHERE t.case_ref = ?1 AND e.mark_json IS NOT NULL
             ORDER BY t.task_id, r.model, r.sample, ra.name, g.read_no, e.id",
        )
        .map_err(fail)?;
    let rows: Vec<LabelRow> = stmt
        .query_map([case_key], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        })
        .and_then(|rows| rows.collect())
        .map_err(fail)?;
    for (id, category, severity, mark_json, rater, model, sample, task, read_no) in rows {
        let mark: crate::marks::Mark =
            serde_json::from_str(&mark_json).map_err(|e| Error::Corrupt {
                what: format!("error label {id}'s mark: {e}"),
            })?;
        let shape = match mark.kind {
            crate::marks::MarkKind::Point => MarkShape::Point,
            crate::marks::MarkKind::Arrow => MarkShape::Arrow,
            crate::marks::MarkKind::Ellipse => MarkShape::Ellipse,
            crate::marks::MarkKind::Freehand => MarkShape::Freehand,
        };
        drawn.push(Drawn {
            source: Source::Label {
                id,
                category,
                severity,
                rater,
                model,
                sample,
                task,
                read_no,
            },
            series: mark.series_id,
            shape,
            points: mark.points_lps_mm,
        });
    }
    Ok(drawn)
}

/// The mark's tracking identifier: what a reader of the SR sees it named by.
fn describe(source: &Source) -> String {
    match source {
        Source::Lesion { id, mark, marks } if *marks > 1 => {
            format!("ground-truth lesion {id}, mark {mark} of {marks}")
        }
        Source::Lesion { id, .. } => format!("ground-truth lesion {id}"),
        Source::Label {
            id,
            category,
            rater,
            model,
            sample,
            task,
            read_no,
            ..
        } => format!(
            "error label {id} ({category}) by {rater} on {model} sample {sample}, task {task}, \
             read {read_no}"
        ),
    }
}

/// Writes the de-identified copy, naming its patient by the case id, and returns what the
/// report refers to. The copy's bytes are read in memory and the file written once.
fn write_copy(path: &Path, bytes: &[u8], case_id: &str) -> Result<Instance> {
    let unreadable = |message: String| io(path, std::io::Error::other(message));
    let mut object = from_reader(bytes).map_err(|e| unreadable(format!("reading DICOM: {e}")))?;
    object.put(text(tags::PATIENT_NAME, VR::PN, ""));
    object.put(text(tags::PATIENT_ID, VR::LO, case_id));
    // The profile removed these type 2 attributes; a PACS wants them present, and empty says
    // nothing.
    for (tag, vr) in EMPTIED_TYPE_2 {
        if object.element(tag).is_err() {
            object.put(text(tag, vr, ""));
        }
    }
    for element in deidentification_elements() {
        object.put(element);
    }
    object
        .write_to_file(path)
        .map_err(|e| unreadable(format!("writing the de-identified copy: {e}")))?;
    let text = |tag: Tag| -> Option<String> {
        object
            .element(tag)
            .ok()
            .and_then(|e| e.to_str().ok())
            .map(|s| s.trim_end_matches(['\0', ' ']).to_owned())
            .filter(|s| !s.is_empty())
    };
    let floats = |tag: Tag| -> Option<Vec<f64>> {
        object
            .element(tag)
            .ok()
            .and_then(|e| e.to_multi_float64().ok())
    };
    let frames = text(tags::NUMBER_OF_FRAMES)
        .and_then(|n| n.trim().parse::<u32>().ok())
        .unwrap_or(1);
    let plane = match (
        floats(tags::IMAGE_POSITION_PATIENT),
        floats(tags::IMAGE_ORIENTATION_PATIENT),
        floats(tags::PIXEL_SPACING),
    ) {
        (Some(p), Some(o), Some(s))
            if frames == 1 && p.len() == 3 && o.len() == 6 && s.len() == 2 =>
        {
            Some(ImagePlane {
                position: [p[0], p[1], p[2]],
                row: [o[0], o[1], o[2]],
                column: [o[3], o[4], o[5]],
                spacing: [s[0], s[1]],
            })
        }
        _ => None,
    };
    let required = |tag: Tag, name: &str| {
        text(tag).ok_or_else(|| unreadable(format!("the de-identified copy has no {name}")))
    };
    Ok(Instance {
        sop_class: required(tags::SOP_CLASS_UID, "SOP Class UID")?,
        sop_instance: required(tags::SOP_INSTANCE_UID, "SOP Instance UID")?,
        study: required(tags::STUDY_INSTANCE_UID, "Study Instance UID")?,
        series: required(tags::SERIES_INSTANCE_UID, "Series Instance UID")?,
        frame_of_reference: text(tags::FRAME_OF_REFERENCE_UID),
        plane,
    })
}

/// Type 2 attributes of the image IODs (Patient, General Study, Frame of Reference modules) the
/// basic profile removes: written back empty in the copies.
const EMPTIED_TYPE_2: [(Tag, VR); 8] = [
    (tags::PATIENT_BIRTH_DATE, VR::DA),
    (tags::PATIENT_SEX, VR::CS),
    (tags::STUDY_DATE, VR::DA),
    (tags::STUDY_TIME, VR::TM),
    (tags::REFERRING_PHYSICIAN_NAME, VR::PN),
    (tags::STUDY_ID, VR::SH),
    (tags::ACCESSION_NUMBER, VR::SH),
    (tags::POSITION_REFERENCE_INDICATOR, VR::LO),
];

/// Patient Identity Removed and how (the report's and every copy's).
fn deidentification_elements() -> [DataElement<Object>; 3] {
    [
        text(tags::PATIENT_IDENTITY_REMOVED, VR::CS, "YES"),
        text(
            tags::DEIDENTIFICATION_METHOD,
            VR::LO,
            "NeuroRater: PS3.15 basic profile, UIDs replaced",
        ),
        sequence(
            tags::DEIDENTIFICATION_METHOD_CODE_SEQUENCE,
            vec![code_item(&code(
                "113100",
                "DCM",
                "Basic Application Confidentiality Profile",
            ))],
        ),
    ]
}

/// The points the graphic type carries, in order (see the module's list).
fn graphic_points(
    shape: MarkShape,
    points: &[[f64; 3]],
) -> std::result::Result<Vec<[f64; 3]>, String> {
    let needed = match shape {
        MarkShape::Point => points.len() == 1,
        MarkShape::Arrow => points.len() == 2,
        MarkShape::Ellipse => points.len() == 3,
        MarkShape::Freehand => points.len() >= 3,
    };
    if !needed || points.iter().flatten().any(|c| !c.is_finite()) {
        return Err(format!("a malformed mark ({} point(s))", points.len()));
    }
    Ok(match shape {
        MarkShape::Point | MarkShape::Arrow => points.to_vec(),
        MarkShape::Ellipse => {
            let centre = points[0];
            let mut axes = [sub(points[1], centre), sub(points[2], centre)];
            if dot(axes[1], axes[1]) > dot(axes[0], axes[0]) {
                axes.swap(0, 1);
            }
            let end = |axis: [f64; 3], sign: f64| {
                [
                    centre[0] + sign * axis[0],
                    centre[1] + sign * axis[1],
                    centre[2] + sign * axis[2],
                ]
            };
            vec![
                end(axes[0], 1.0),
                end(axes[0], -1.0),
                end(axes[1], 1.0),
                end(axes[1], -1.0),
            ]
        }
        MarkShape::Freehand => {
            let mut closed = points.to_vec();
            closed.push(points[0]);
            closed
        }
    })
}

/// Places a mark on the image whose plane holds it, else in the series' frame of reference.
fn place(
    mark: &Drawn,
    members: &[usize],
    instances: &[Instance],
) -> std::result::Result<Placed, String> {
    let points = graphic_points(mark.shape, &mark.points)?;
    // Each single-frame image's plane offset along its normal, to learn the series' spacing.
    let planar: Vec<(usize, ImagePlane)> = members
        .iter()
        .filter_map(|&i| instances[i].plane.map(|plane| (i, plane)))
        .collect();
    if let Some((_, first)) = planar.first() {
        let normal = first.normal();
        let mut offsets: Vec<f64> = planar
            .iter()
            .map(|(_, plane)| dot(plane.position, normal))
            .collect();
        offsets.sort_by(f64::total_cmp);
        let gap = offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|g| *g > 1e-6)
            .fold(f64::INFINITY, f64::min);
        let tolerance = if gap.is_finite() { gap / 2.0 } else { 0.5 } + 1e-6;
        let best = planar
            .iter()
            .map(|&(i, plane)| {
                let normal = plane.normal();
                let off = points
                    .iter()
                    .map(|p| dot(sub(*p, plane.position), normal).abs())
                    .fold(0.0, f64::max);
                (off, i, plane)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((off, i, plane)) = best {
            if off <= tolerance && plane.spacing[0] > 0.0 && plane.spacing[1] > 0.0 {
                let pixels = points
                    .iter()
                    .map(|p| {
                        let d = sub(*p, plane.position);
                        [
                            dot(d, plane.row) / plane.spacing[1] + 0.5,
                            dot(d, plane.column) / plane.spacing[0] + 0.5,
                        ]
                    })
                    .collect();
                return Ok(Placed::Image {
                    instance: i,
                    points: pixels,
                });
            }
        }
    }
    let frame = members
        .iter()
        .find_map(|&i| instances[i].frame_of_reference.clone())
        .ok_or("it lies in no image's plane and the series has no frame of reference")?;
    Ok(Placed::Space { frame, points })
}

fn uid(salt: &str, parts: &[&str]) -> String {
    let mut hasher = Sha256::new().chain_update(salt.as_bytes());
    for part in parts {
        hasher.update([0u8]);
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    let mut high = [0u8; 16];
    high.copy_from_slice(&digest[..16]);
    format!("2.25.{}", u128::from_be_bytes(high))
}

type Object = InMemDicomObject;

fn text(tag: Tag, vr: VR, value: &str) -> DataElement<Object> {
    DataElement::new(tag, vr, PrimitiveValue::from(value))
}

fn sequence(tag: Tag, items: Vec<Object>) -> DataElement<Object> {
    DataElement::new(tag, VR::SQ, DataSetSequence::from(items))
}

struct Code<'a> {
    value: &'a str,
    scheme: &'a str,
    meaning: &'a str,
    version: Option<&'a str>,
}

const fn code<'a>(value: &'a str, scheme: &'a str, meaning: &'a str) -> Code<'a> {
    Code {
        value,
        scheme,
        meaning,
        version: None,
    }
}

/// A code; a value longer than Code Value's 16 characters goes in Long Code Value, and a meaning
/// is cut to Code Meaning's 64.
fn code_item(code: &Code<'_>) -> Object {
    let value = if code.value.chars().count() > 16 {
        text(tags::LONG_CODE_VALUE, VR::UC, code.value)
    } else {
        text(tags::CODE_VALUE, VR::SH, code.value)
    };
    let meaning: String = code.meaning.chars().take(64).collect();
    let mut item = Object::from_element_iter([
        value,
        text(tags::CODING_SCHEME_DESIGNATOR, VR::SH, code.scheme),
        text(tags::CODE_MEANING, VR::LO, &meaning),
    ]);
    if let Some(version) = code.version {
        item.put(text(tags::CODING_SCHEME_VERSION, VR::SH, version));
    }
    item
}

/// A content item: relationship, value type, concept name, and its value's elements.
fn item(
    relationship: &str,
    value_type: &str,
    name: &Code<'_>,
    value: Vec<DataElement<Object>>,
) -> Object {
    let mut item = Object::from_element_iter([
        text(tags::RELATIONSHIP_TYPE, VR::CS, relationship),
        text(tags::VALUE_TYPE, VR::CS, value_type),
        sequence(tags::CONCEPT_NAME_CODE_SEQUENCE, vec![code_item(name)]),
    ]);
    for element in value {
        item.put(element);
    }
    item
}

fn code_value(relationship: &str, name: &Code<'_>, value: &Code<'_>) -> Object {
    item(
        relationship,
        "CODE",
        name,
        vec![sequence(
            tags::CONCEPT_CODE_SEQUENCE,
            vec![code_item(value)],
        )],
    )
}

fn floats(values: impl IntoIterator<Item = f64>) -> PrimitiveValue {
    PrimitiveValue::F32(
        values
            .into_iter()
            .map(|v| v as f32)
            .collect::<SmallVec<_>>(),
    )
}

const FINDING: Code<'static> = code("121071", "DCM", "Finding");
const LESION: Code<'static> = code("52988006", "SCT", "Lesion");
const IMAGE_REGION: Code<'static> = code("111030", "DCM", "Image Region");
const MARK_SOURCE: Code<'static> = code("MARK-SOURCE", SCHEME, "Mark source");
const GROUND_TRUTH: Code<'static> = code("GROUND-TRUTH", SCHEME, "Curated ground truth");
const RATER_LABEL: Code<'static> = code("ERROR-LABEL", SCHEME, "Clinician's error label");
const SEVERITY: Code<'static> = code("SEVERITY", SCHEME, "Error severity");
const SEVERITIES: [Code<'static>; 3] = [
    code("SEVERITY-1", SCHEME, "Minor"),
    code("SEVERITY-2", SCHEME, "Moderate"),
    code("SEVERITY-3", SCHEME, "Major"),
];

fn group(
    salt: &str,
    case_id: &str,
    (taxonomy, taxonomy_version): (&Taxonomy, &str),
    mark: &Drawn,
    placed: &Placed,
    instances: &[Instance],
) -> Object {
    let tracking_key = match &mark.source {
        Source::Lesion { id, mark, .. } => format!("lesion\0{id}\0{mark}"),
        Source::Label { id, .. } => format!("label\0{id}"),
    };
    let mut content = vec![
        item(
            "HAS OBS CONTEXT",
            "TEXT",
            &code("112039", "DCM", "Tracking Identifier"),
            vec![text(tags::TEXT_VALUE, VR::UT, &describe(&mark.source))],
        ),
        item(
            "HAS OBS CONTEXT",
            "UIDREF",
            &code("112040", "DCM", "Tracking Unique Identifier"),
            vec![text(
                tags::UID,
                VR::UI,
                &uid(salt, &["tracking", case_id, &tracking_key]),
            )],
        ),
    ];
    match &mark.source {
        Source::Lesion { .. } => {
            content.push(code_value("CONTAINS", &FINDING, &LESION));
            content.push(code_value("CONTAINS", &MARK_SOURCE, &GROUND_TRUTH));
        }
        Source::Label {
            category, severity, ..
        } => {
            let meaning = taxonomy
                .categories
                .iter()
                .find(|c| &c.code == category)
                .map_or(category.as_str(), |c| c.name.as_str());
            let finding = Code {
                value: category,
                scheme: SCHEME,
                meaning,
                version: Some(taxonomy_version),
            };
            content.push(code_value("CONTAINS", &FINDING, &finding));
            content.push(code_value("CONTAINS", &MARK_SOURCE, &RATER_LABEL));
            if let Some(level) = SEVERITIES.get(usize::from(severity.saturating_sub(1))) {
                content.push(code_value("CONTAINS", &SEVERITY, level));
            }
        }
    }
    let graphic_type = |three_d: bool| match mark.shape {
        MarkShape::Point => "POINT",
        MarkShape::Arrow => "POLYLINE",
        MarkShape::Ellipse => "ELLIPSE",
        MarkShape::Freehand if three_d => "POLYGON",
        MarkShape::Freehand => "POLYLINE",
    };
    content.push(match placed {
        Placed::Image { instance, points } => {
            let image = &instances[*instance];
            let mut source = item(
                "SELECTED FROM",
                "IMAGE",
                &code("260753009", "SCT", "Source"),
                Vec::new(),
            );
            source.put(sequence(
                tags::REFERENCED_SOP_SEQUENCE,
                vec![Object::from_element_iter([
                    text(tags::REFERENCED_SOP_CLASS_UID, VR::UI, &image.sop_class),
                    text(
                        tags::REFERENCED_SOP_INSTANCE_UID,
                        VR::UI,
                        &image.sop_instance,
                    ),
                ])],
            ));
            item(
                "CONTAINS",
                "SCOORD",
                &IMAGE_REGION,
                vec![
                    DataElement::new(
                        tags::GRAPHIC_DATA,
                        VR::FL,
                        floats(points.iter().flatten().copied()),
                    ),
                    text(tags::GRAPHIC_TYPE, VR::CS, graphic_type(false)),
                    sequence(tags::CONTENT_SEQUENCE, vec![source]),
                ],
            )
        }
        Placed::Space { frame, points } => item(
            "CONTAINS",
            "SCOORD3D",
            &IMAGE_REGION,
            vec![
                DataElement::new(
                    tags::GRAPHIC_DATA,
                    VR::FL,
                    floats(points.iter().flatten().copied()),
                ),
                text(tags::GRAPHIC_TYPE, VR::CS, graphic_type(true)),
                text(tags::REFERENCED_FRAME_OF_REFERENCE_UID, VR::UI, frame),
            ],
        ),
    });
    let mut container = item(
        "CONTAINS",
        "CONTAINER",
        &code("125007", "DCM", "Measurement Group"),
        vec![
            text(tags::CONTINUITY_OF_CONTENT, VR::CS, "CONTINUOUS"),
            sequence(
                tags::CONTENT_TEMPLATE_SEQUENCE,
                vec![Object::from_element_iter([
                    text(tags::MAPPING_RESOURCE, VR::CS, "DCMR"),
                    text(tags::TEMPLATE_IDENTIFIER, VR::CS, "1410"),
                ])],
            ),
        ],
    );
    container.put(sequence(tags::CONTENT_SEQUENCE, content));
    container
}

fn build_report(
    salt: &str,
    case_id: &str,
    modality: &str,
    (taxonomy, taxonomy_version): (&Taxonomy, &str),
    groups: &[(&Drawn, Placed)],
    instances: &[Instance],
    now: &(String, String),
) -> Result<dicom_object::FileDicomObject<Object>> {
    // Every instance a coordinate lies on, by study and series, for the evidence sequence.
    let mut evidence: BTreeMap<&str, BTreeMap<&str, BTreeMap<&str, &str>>> = BTreeMap::new();
    for (_, placed) in groups {
        if let Placed::Image { instance, .. } = placed {
            let image = &instances[*instance];
            evidence
                .entry(&image.study)
                .or_default()
                .entry(&image.series)
                .or_default()
                .insert(&image.sop_instance, &image.sop_class);
        }
    }
    // The report joins the study of the copies it refers to (every series of a case is one
    // study's, as scaffold writes them); a case whose marks all lie in space takes its first
    // copy's study.
    let study_uid = evidence
        .keys()
        .next()
        .map(|s| s.to_string())
        .or_else(|| instances.first().map(|i| i.study.clone()))
        .unwrap_or_else(|| uid(salt, &["study", case_id]));
    let sop_instance = uid(salt, &["sr instance", case_id]);
    let procedure = if modality == "CT" {
        code("24725-4", "LN", "CT Head")
    } else {
        code("24590-2", "LN", "MR Brain")
    };
    let root_content = vec![
        code_value(
            "HAS CONCEPT MOD",
            &code("121049", "DCM", "Language of Content Item and Descendants"),
            &code("en", "RFC5646", "English"),
        ),
        code_value(
            "HAS OBS CONTEXT",
            &code("121005", "DCM", "Observer Type"),
            &code("121007", "DCM", "Device"),
        ),
        item(
            "HAS OBS CONTEXT",
            "UIDREF",
            &code("121012", "DCM", "Device Observer UID"),
            vec![text(tags::UID, VR::UI, &uid(salt, &["device"]))],
        ),
        item(
            "HAS OBS CONTEXT",
            "TEXT",
            &code("121013", "DCM", "Device Observer Name"),
            vec![text(tags::TEXT_VALUE, VR::UT, "NeuroRater")],
        ),
        code_value(
            "HAS CONCEPT MOD",
            &code("121058", "DCM", "Procedure reported"),
            &procedure,
        ),
        {
            let mut measurements = item(
                "CONTAINS",
                "CONTAINER",
                &code("126010", "DCM", "Imaging Measurements"),
                vec![text(tags::CONTINUITY_OF_CONTENT, VR::CS, "SEPARATE")],
            );
            measurements.put(sequence(
                tags::CONTENT_SEQUENCE,
                groups
                    .iter()
                    .map(|(mark, placed)| {
                        group(
                            salt,
                            case_id,
                            (taxonomy, taxonomy_version),
                            mark,
                            placed,
                            instances,
                        )
                    })
                    .collect(),
            ));
            measurements
        },
    ];
    let evidence_items: Vec<Object> = evidence
        .iter()
        .map(|(study, series)| {
            Object::from_element_iter([
                sequence(
                    tags::REFERENCED_SERIES_SEQUENCE,
                    series
                        .iter()
                        .map(|(series_uid, sops)| {
                            Object::from_element_iter([
                                sequence(
                                    tags::REFERENCED_SOP_SEQUENCE,
                                    sops.iter()
                                        .map(|(sop, class)| {
                                            Object::from_element_iter([
                                                text(tags::REFERENCED_SOP_CLASS_UID, VR::UI, class),
                                                text(
                                                    tags::REFERENCED_SOP_INSTANCE_UID,
                                                    VR::UI,
                                                    sop,
                                                ),
                                            ])
                                        })
                                        .collect(),
                                ),
                                text(tags::SERIES_INSTANCE_UID, VR::UI, series_uid),
                            ])
                        })
                        .collect(),
                ),
                text(tags::STUDY_INSTANCE_UID, VR::UI, study),
            ])
        })
        .collect();
    let mut object = Object::from_element_iter([
        text(tags::SPECIFIC_CHARACTER_SET, VR::CS, "ISO_IR 192"),
        text(tags::INSTANCE_CREATION_DATE, VR::DA, &now.0),
        text(tags::INSTANCE_CREATION_TIME, VR::TM, &now.1),
        text(tags::SOP_CLASS_UID, VR::UI, COMPREHENSIVE_3D_SR),
        text(tags::SOP_INSTANCE_UID, VR::UI, &sop_instance),
        text(tags::STUDY_DATE, VR::DA, ""),
        text(tags::CONTENT_DATE, VR::DA, &now.0),
        text(tags::STUDY_TIME, VR::TM, ""),
        text(tags::CONTENT_TIME, VR::TM, &now.1),
        text(tags::ACCESSION_NUMBER, VR::SH, ""),
        text(tags::MODALITY, VR::CS, "SR"),
        text(tags::MANUFACTURER, VR::LO, "NeuroRater"),
        text(tags::REFERRING_PHYSICIAN_NAME, VR::PN, ""),
        sequence(
            tags::CODING_SCHEME_IDENTIFICATION_SEQUENCE,
            vec![Object::from_element_iter([
                text(tags::CODING_SCHEME_DESIGNATOR, VR::SH, SCHEME),
                text(
                    tags::CODING_SCHEME_NAME,
                    VR::ST,
                    &format!("NeuroRater error taxonomy {} and mark codes", taxonomy.id),
                ),
                text(tags::CODING_SCHEME_VERSION, VR::SH, taxonomy_version),
                text(
                    tags::CODING_SCHEME_RESPONSIBLE_ORGANIZATION,
                    VR::ST,
                    "NeuroRater (docs/dicom-sr.md)",
                ),
            ])],
        ),
        text(tags::SERIES_DESCRIPTION, VR::LO, "NeuroRater marks"),
        text(tags::MANUFACTURER_MODEL_NAME, VR::LO, "NeuroRater"),
        sequence(
            tags::REFERENCED_PERFORMED_PROCEDURE_STEP_SEQUENCE,
            Vec::new(),
        ),
        text(tags::PATIENT_NAME, VR::PN, ""),
        text(tags::PATIENT_ID, VR::LO, case_id),
        text(tags::PATIENT_BIRTH_DATE, VR::DA, ""),
        text(tags::PATIENT_SEX, VR::CS, ""),
        text(tags::SOFTWARE_VERSIONS, VR::LO, env!("CARGO_PKG_VERSION")),
        text(tags::STUDY_INSTANCE_UID, VR::UI, &study_uid),
        text(
            tags::SERIES_INSTANCE_UID,
            VR::UI,
            &uid(salt, &["sr series", case_id]),
        ),
        text(tags::STUDY_ID, VR::SH, ""),
        text(tags::SERIES_NUMBER, VR::IS, "900"),
        text(tags::INSTANCE_NUMBER, VR::IS, "1"),
        text(tags::VALUE_TYPE, VR::CS, "CONTAINER"),
        sequence(
            tags::CONCEPT_NAME_CODE_SEQUENCE,
            vec![code_item(&code(
                "126000",
                "DCM",
                "Imaging Measurement Report",
            ))],
        ),
        text(tags::CONTINUITY_OF_CONTENT, VR::CS, "SEPARATE"),
        sequence(tags::PERFORMED_PROCEDURE_CODE_SEQUENCE, Vec::new()),
        text(tags::COMPLETION_FLAG, VR::CS, "COMPLETE"),
        text(tags::VERIFICATION_FLAG, VR::CS, "UNVERIFIED"),
        sequence(
            tags::CONTENT_TEMPLATE_SEQUENCE,
            vec![Object::from_element_iter([
                text(tags::MAPPING_RESOURCE, VR::CS, "DCMR"),
                text(tags::TEMPLATE_IDENTIFIER, VR::CS, "1500"),
            ])],
        ),
        sequence(tags::CONTENT_SEQUENCE, root_content),
    ]);
    for element in deidentification_elements() {
        object.put(element);
    }
    if !evidence_items.is_empty() {
        object.put(sequence(
            tags::CURRENT_REQUESTED_PROCEDURE_EVIDENCE_SEQUENCE,
            evidence_items,
        ));
    }
    object
        .with_meta(FileMetaTableBuilder::new().transfer_syntax(EXPLICIT_VR_LE))
        .map_err(|e| Error::Corrupt {
            what: format!("the SR of case {case_id}: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ellipse_gives_its_major_axis_first() {
        let points = graphic_points(
            MarkShape::Ellipse,
            &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 3.0, 0.0]],
        )
        .unwrap();
        assert_eq!(
            points,
            vec![
                [0.0, 3.0, 0.0],
                [0.0, -3.0, 0.0],
                [1.0, 0.0, 0.0],
                [-1.0, 0.0, 0.0]
            ]
        );
    }

    #[test]
    fn a_freehand_outline_is_closed() {
        let outline = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]];
        let points = graphic_points(MarkShape::Freehand, &outline).unwrap();
        assert_eq!(points.len(), 4);
        assert_eq!(points[3], outline[0]);
    }

    #[test]
    fn the_stores_clock_becomes_dicom_date_and_time() {
        assert_eq!(
            da_tm("2026-11-29T07:33:50.123Z"),
            ("20261129".to_owned(), "073350".to_owned())
        );
    }

    #[test]
    fn uids_are_short_and_stable() {
        let a = uid("salt", &["sr instance", "ms-01"]);
        assert!(a.len() <= 64 && a.starts_with("2.25."));
        assert_eq!(a, uid("salt", &["sr instance", "ms-01"]));
        assert_ne!(a, uid("salt", &["sr instance", "ms-02"]));
    }
}
