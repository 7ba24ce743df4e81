//! `neurorater scaffold`: from folders a PACS, a CD or a research archive exported to a study
//! bundle that imports as it is (FORMATS §7, docs/bundle.md "Scaffolded bundles").
//!
//! - Every file under the sources is read by content: DICOM (Part 10, or a bare implicit-VR data
//!   set), NIfTI (BIDS `sub-*/[ses-*/]anat|dwi/*.nii[.gz]` with their JSON sidecars, or loose
//!   files), a DICOMDIR (read and compared with what was found, never needed); everything else
//!   is listed with the reason it was skipped.
//! - One case per StudyInstanceUID (BIDS: per subject and session; loose NIfTI: per folder), one
//!   series per SeriesInstanceUID; localizers are left out and a series whose slices lie in
//!   several orientations is split, both reported.
//! - The bundle holds de-identified copies only (PS3.15 basic profile through
//!   [`crate::package::deid`]: identifying attributes removed, dates removed or shifted by one
//!   offset per patient ([`Dates`]), UIDs replaced by salted
//!   digests so references inside the study still agree), pseudonymous case ids `case-001`…,
//!   age and sex as the case's fields. The key from original study to case id is written beside
//!   the bundle, mode 0600, never inside it.
//! - What the images cannot say (disease group, tasks, clinical note; labels are guesses) is
//!   listed in each case's `to_complete`.
//!
//! Nothing is left behind on failure or cancel: the bundle is built in a hidden sibling folder
//! and renamed into place at the end.

mod label;
mod nifti;
mod scan;

pub use label::{guess as guess_label, Acquisition, Guess, Label};

use crate::bundle::{Problem, CASES_DIR, CASE_FILE, RESPONSES_FILE, STUDY_FILE};
use crate::harness::{self, ColumnMap, Defaults, HarnessResponse, SliceIdentity};
use crate::model::{
    CaseFile, DiseaseGroup, Modality, ResponseLine, Rubric, Scale, SeriesKind, SeriesSpec, Sex,
    StudyFile, StudyMeta, TaskFamily, TaskSpec, ToComplete,
};
use crate::progress::Progress;
use crate::{Error, Result};
use rayon::prelude::*;
use scan::{DicomRead, Instance, Kind};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The key's name is the bundle folder's with this appended, beside it.
pub const KEY_SUFFIX: &str = ".key.csv";

/// What the caller chooses.
#[derive(Debug, Clone, Default)]
pub struct ScaffoldOptions {
    /// The study id of `study.json`; the bundle folder's name when not given.
    pub study_id: Option<String>,
    /// A harness's output to write as `responses.jsonl`, its cases named by the harness's own
    /// references (StudyInstanceUID, accession number, BIDS subject/session, folder).
    pub responses: Option<ResponsesInput>,
    pub dates: Dates,
}

/// What the de-identified copies keep of dates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dates {
    /// The basic profile: dates that could point at a visit are removed.
    #[default]
    Remove,
    /// Every date of one patient moves by the same number of days (a year to eleven years back,
    /// drawn per run and per patient, written nowhere): intervals between scans stay true.
    /// Birth dates are still removed.
    ShiftPerPatient,
}

/// A harness's responses file and how to read it (see [`crate::harness`]).
#[derive(Debug, Clone)]
pub struct ResponsesInput {
    pub path: PathBuf,
    pub map: ColumnMap,
    pub defaults: Defaults,
}

/// How a scaffold run ended.
#[derive(Debug)]
pub enum Outcome {
    Written(Report),
    /// Stopped on request; nothing was written.
    Cancelled,
}

/// What was found and written; paths of source files appear here (for the person running the
/// scan), never in the bundle.
#[derive(Debug, Default)]
pub struct Report {
    pub bundle: PathBuf,
    pub key: PathBuf,
    pub files_found: usize,
    pub cases: Vec<CaseReport>,
    pub skipped: Vec<Skipped>,
    /// Things a person should know: localizers left out, series split, burned-in text flagged,
    /// what a DICOMDIR listed.
    pub notes: Vec<String>,
    /// Responses written to `responses.jsonl`.
    pub responses: usize,
}

#[derive(Debug)]
pub struct CaseReport {
    pub id: String,
    pub series: Vec<SeriesReport>,
    pub to_complete: Vec<ToComplete>,
}

#[derive(Debug)]
pub struct SeriesReport {
    pub id: String,
    pub label: String,
    /// The attribute the label was guessed from; `None` when nothing was telling.
    pub label_basis: Option<&'static str>,
    /// Files written (a NIfTI series or an enhanced multi-frame DICOM series is one file).
    pub files: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// Scans `sources` and writes the bundle `out` and its key beside it (see the module comment).
pub fn scaffold(
    sources: &[PathBuf],
    out: &Path,
    options: &ScaffoldOptions,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome> {
    // A file that cannot be read through its map fails before the long scan.
    let responses = match &options.responses {
        Some(input) => harness::read_responses(&input.path, &input.map, &input.defaults)
            .map_err(|problems| Error::Responses { problems })?,
        None => Vec::new(),
    };
    let target = Target::prepare(sources, out)?;
    // UIDs become digests salted per run: stable inside this bundle, unlinkable to any other.
    let salt = uuid::Uuid::new_v4().to_string();

    progress.phase("finding files", 0);
    let files = scan::walk(sources, cancel)?;
    if cancel.load(Ordering::Relaxed) {
        return Ok(Outcome::Cancelled);
    }
    // The scan reads headers only: grouping, ordering and labelling need nothing more, and the
    // copies are written once it is known which files the bundle holds.
    progress.phase("reading headers", files.len() as u64);
    let done = AtomicU64::new(0);
    let found: Vec<Found> = files
        .par_iter()
        .map(|path| {
            if cancel.load(Ordering::Relaxed) {
                return Found::Cancelled;
            }
            let found = read_one(path);
            progress.advance(done.fetch_add(1, Ordering::Relaxed) + 1);
            found
        })
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return Ok(Outcome::Cancelled);
    }

    let mut report = Report {
        files_found: files.len(),
        ..Report::default()
    };
    let mut instances = Vec::new();
    let mut niftis = Vec::new();
    let mut directories = Vec::new();
    for found in found {
        match found {
            Found::Dicom(instance) => instances.push(*instance),
            Found::Nifti(path) => niftis.push(path),
            Found::Directory(path, listed) => directories.push((path, listed)),
            Found::Skipped(skipped) => report.skipped.push(skipped),
            Found::Cancelled => return Ok(Outcome::Cancelled),
        }
    }
    let found_files: HashSet<&PathBuf> = files.iter().collect();
    for (path, listed) in directories {
        let folder = path.parent().unwrap_or(Path::new(""));
        let missing = listed
            .iter()
            .filter(|rel| !found_files.contains(&folder.join(rel)))
            .count();
        report.notes.push(format!(
            "{}: a DICOMDIR listing {} files, {missing} of them not found (every file was read \
             by content, listed or not)",
            path.display(),
            listed.len()
        ));
    }

    let mut planned = plan_dicom_cases(instances, &mut report);
    planned.extend(nifti::plan_cases(niftis, &mut report.skipped));
    planned.sort_by(|a, b| a.first_source.cmp(&b.first_source));
    let width = planned.len().to_string().len().max(3);

    let ids: Vec<String> = (1..=planned.len())
        .map(|n| format!("case-{n:0width$}"))
        .collect();
    let series_ids: Vec<Vec<String>> = planned.iter().map(|c| series_ids(&c.series)).collect();
    let (mut tasks, response_lines) = match &options.responses {
        Some(input) => resolve_responses(&input.path, responses, &planned, &ids, &series_ids)
            .map_err(|problems| Error::Responses { problems })?,
        None => (BTreeMap::new(), Vec::new()),
    };

    let images: usize = planned
        .iter()
        .flat_map(|case| &case.series)
        .map(|series| match &series.images {
            SeriesImages::Dicom(instances) => instances.len(),
            SeriesImages::Nifti(_) => 1,
        })
        .sum();
    progress.phase("writing the bundle", images as u64);
    let cases_dir = target.partial.join(CASES_DIR);
    create_dir(&cases_dir)?;
    let copies = Copies {
        salt: &salt,
        dates: options.dates,
        progress,
        done: AtomicU64::new(0),
        cancel,
    };
    let mut key_rows = Vec::new();
    for ((case, id), series_ids) in planned.into_iter().zip(&ids).zip(series_ids) {
        let case_tasks = tasks.remove(id).unwrap_or_default();
        let Some((case_report, key)) =
            write_case(&cases_dir, id, case, series_ids, case_tasks, &copies)?
        else {
            return Ok(Outcome::Cancelled);
        };
        report.cases.push(case_report);
        key_rows.push(key);
    }

    let study_id = options
        .study_id
        .clone()
        .unwrap_or_else(|| id_from_name(out));
    write_json(
        &target.partial.join(STUDY_FILE),
        &study_file(&study_id, report.cases.len()),
    )?;
    let mut jsonl = String::new();
    for line in &response_lines {
        jsonl.push_str(&serde_json::to_string(line).map_err(|e| io(out, e.into()))?);
        jsonl.push('\n');
    }
    write_file(&target.partial.join(RESPONSES_FILE), jsonl.as_bytes())?;
    report.responses = response_lines.len();
    let (bundle, key) = target.commit(&key_rows)?;
    report.bundle = bundle;
    report.key = key;
    Ok(Outcome::Written(report))
}

/// One file's fate.
enum Found {
    Dicom(Box<Instance>),
    Nifti(PathBuf),
    Directory(PathBuf, Vec<PathBuf>),
    Skipped(Skipped),
    Cancelled,
}

fn read_one(path: &Path) -> Found {
    let skipped = |reason: String| {
        Found::Skipped(Skipped {
            path: path.to_path_buf(),
            reason,
        })
    };
    if let Some(image) = nifti::sidecar_image(path) {
        return skipped(format!(
            "the JSON sidecar of {}, read with it",
            image.display()
        ));
    }
    let head = match scan::Head::read(path) {
        Ok(head) => head,
        Err(e) => return skipped(format!("cannot be read: {e}")),
    };
    match scan::classify(path, &head.bytes) {
        Err(e) => skipped(format!("cannot be read: {e}")),
        Ok(Kind::NotAnImage(reason)) => skipped(reason),
        Ok(Kind::Nifti) => Found::Nifti(path.to_path_buf()),
        Ok(Kind::Dicom { part10 }) => match scan::read_dicom(path, part10, &head) {
            Ok(DicomRead::Image(instance)) => Found::Dicom(instance),
            Ok(DicomRead::Directory(listed)) => Found::Directory(path.to_path_buf(), listed),
            Ok(DicomRead::NotAnImage(reason)) | Err(reason) => skipped(reason),
        },
    }
}

/// A case before it has an id.
struct PlannedCase {
    /// The first source file, by path: cases are numbered in this order.
    first_source: PathBuf,
    /// The key's columns: StudyInstanceUID and AccessionNumber, or the BIDS subject/session or
    /// folder a NIfTI case came from.
    study_uid: String,
    accession: String,
    source: String,
    modality: Modality,
    age: Option<u32>,
    sex: Sex,
    series: Vec<PlannedSeries>,
}

struct PlannedSeries {
    guess: Option<Guess>,
    /// Shown when the label could not be guessed.
    fallback_label: &'static str,
    burned_in: bool,
    /// How a harness may name each slice, in display order (empty for NIfTI).
    slices: Vec<SliceIdentity>,
    images: SeriesImages,
}

enum SeriesImages {
    /// The instances, in display order.
    Dicom(Vec<Instance>),
    Nifti(PathBuf),
}

/// Groups DICOM instances into studies and series, leaving out localizers and duplicates and
/// splitting series that hold several orientations; each decision is noted in `report`.
fn plan_dicom_cases(instances: Vec<Instance>, report: &mut Report) -> Vec<PlannedCase> {
    let mut studies: BTreeMap<String, Vec<Instance>> = BTreeMap::new();
    let mut seen_sops: HashSet<String> = HashSet::new();
    for instance in instances {
        if !seen_sops.insert(instance.meta.sop_instance_uid.clone()) {
            report.skipped.push(Skipped {
                path: instance.source.clone(),
                reason: "a copy of an instance already read (same SOPInstanceUID)".into(),
            });
            continue;
        }
        studies
            .entry(instance.study_uid.clone())
            .or_default()
            .push(instance);
    }
    let mut cases = Vec::new();
    for (study_uid, instances) in studies {
        let first_source = instances
            .iter()
            .map(|i| i.source.clone())
            .min()
            .unwrap_or_default();
        let accession = instances
            .iter()
            .find_map(|i| i.accession.clone())
            .unwrap_or_default();
        let age = instances.iter().find_map(|i| i.age_years);
        let sex = instances
            .iter()
            .find_map(|i| match i.sex.as_deref() {
                Some("F") => Some(Sex::F),
                Some("M") => Some(Sex::M),
                _ => None,
            })
            .unwrap_or(Sex::O);
        let mut by_series: BTreeMap<(i32, String), Vec<Instance>> = BTreeMap::new();
        for instance in instances {
            let key = (
                instance.series_number.unwrap_or(i32::MAX),
                instance.meta.series_instance_uid.clone(),
            );
            by_series.entry(key).or_default().push(instance);
        }
        let mut series = Vec::new();
        for ((number, _), instances) in by_series {
            let shown = if number == i32::MAX {
                "a series without SeriesNumber".to_owned()
            } else {
                format!("series {number}")
            };
            let example = instances[0].source.display().to_string();
            if instances.iter().any(|i| i.localizer) {
                report.notes.push(format!(
                    "{shown} ({} files, e.g. {example}): a localizer, left out",
                    instances.len()
                ));
                continue;
            }
            let planes = split_by_orientation(instances);
            if planes.len() > 1 {
                report.notes.push(format!(
                    "{shown} (e.g. {example}) holds slices in {} orientations: written as {} \
                     series, not merged",
                    planes.len(),
                    planes.len()
                ));
            }
            for plane in planes {
                series.push(plan_dicom_series(plane));
            }
        }
        if series.is_empty() {
            continue;
        }
        let all_ct = series
            .iter()
            .all(|s| s.guess.is_some_and(|g| g.label == Label::Ct));
        cases.push(PlannedCase {
            first_source,
            study_uid,
            accession,
            source: String::new(),
            modality: if all_ct { Modality::CT } else { Modality::MR },
            age,
            sex,
            series,
        });
    }
    cases
}

/// Orientations closer than this per component are one plane (as `imaging::order_series` has it).
const SAME_ORIENTATION: f64 = 1e-3;

fn split_by_orientation(instances: Vec<Instance>) -> Vec<Vec<Instance>> {
    let mut planes: Vec<Vec<Instance>> = Vec::new();
    for instance in instances {
        let same = |other: &Instance| match (
            instance.meta.image_orientation_patient,
            other.meta.image_orientation_patient,
        ) {
            (Some(a), Some(b)) => a
                .iter()
                .zip(b.iter())
                .all(|(x, y)| (x - y).abs() <= SAME_ORIENTATION),
            (a, b) => a.is_none() && b.is_none(),
        };
        match planes.iter_mut().find(|plane| same(&plane[0])) {
            Some(plane) => plane.push(instance),
            None => planes.push(vec![instance]),
        }
    }
    planes
}

fn plan_dicom_series(mut instances: Vec<Instance>) -> PlannedSeries {
    let guess = label::guess(&instances[0].acquisition);
    let burned_in = instances.iter().any(|i| i.burned_in);
    let mut metas: Vec<imaging::DicomMeta> = instances.iter().map(|i| i.meta.clone()).collect();
    imaging::order_series(&mut metas);
    let mut by_sop: BTreeMap<String, Instance> = instances
        .drain(..)
        .map(|i| (i.meta.sop_instance_uid.clone(), i))
        .collect();
    let ordered: Vec<Instance> = metas
        .iter()
        .filter_map(|m| by_sop.remove(&m.sop_instance_uid))
        .collect();
    PlannedSeries {
        guess,
        fallback_label: "unknown",
        burned_in,
        slices: ordered
            .iter()
            .map(|i| SliceIdentity {
                file_name: i
                    .source
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                sop_instance_uid: i.meta.sop_instance_uid.clone(),
                instance_number: i.meta.instance_number,
            })
            .collect(),
        images: SeriesImages::Dicom(ordered),
    }
}

/// Series ids from the guessed labels (`flair`, `t1c` …), `-2`, `-3` … when a label repeats.
fn series_ids(series: &[PlannedSeries]) -> Vec<String> {
    let mut used = BTreeSet::new();
    series
        .iter()
        .map(|s| {
            let base = s.guess.map_or("series", |g| g.label.id());
            let id = (1..)
                .map(|n| {
                    if n == 1 {
                        base.to_owned()
                    } else {
                        format!("{base}-{n}")
                    }
                })
                .find(|candidate| !used.contains(candidate))
                .unwrap_or_default();
            used.insert(id.clone());
            id
        })
        .collect()
}

/// Whether the harness's `reference` names this case: its StudyInstanceUID, accession number,
/// source (a NIfTI folder or BIDS `…/sub-X[/ses-Y]`), or the source's tail (`sub-X/ses-Y`,
/// `sub-X`).
fn names_case(reference: &str, case: &PlannedCase) -> bool {
    let reference = reference.trim();
    let tail = format!("/{reference}");
    !reference.is_empty()
        && (reference == case.study_uid
            || reference == case.accession
            || reference == case.source
            || case.source.ends_with(&tail)
            || case
                .source
                .rsplit_once("/ses-")
                .is_some_and(|(subject, _)| subject.ends_with(&tail)))
}

/// The responses and the tasks they answer, under their case ids.
type Resolved = (BTreeMap<String, Vec<TaskSpec>>, Vec<ResponseLine>);

/// The responses under their case ids, and per case the tasks they answer (prompt from the first
/// line that has one, key images resolved to display indices). Every reference that names no
/// case, series or slice is a problem.
fn resolve_responses(
    file: &Path,
    responses: Vec<HarnessResponse>,
    cases: &[PlannedCase],
    ids: &[String],
    series_ids: &[Vec<String>],
) -> std::result::Result<Resolved, Vec<Problem>> {
    let file = file.display().to_string();
    let mut problems = Vec::new();
    let mut problem = |line, field: &str, message: String| {
        problems.push(Problem::on_line(&file, line, field, message));
    };
    let mut tasks: BTreeMap<String, Vec<TaskSpec>> = BTreeMap::new();
    let mut lines = Vec::new();
    for response in responses {
        let found: Vec<usize> = (0..cases.len())
            .filter(|&i| ids[i] == response.case_ref || names_case(&response.case_ref, &cases[i]))
            .collect();
        let index = match found.as_slice() {
            [index] => *index,
            [] => {
                problem(
                    response.line,
                    "case_id",
                    format!(
                        "{:?} names no scanned study (by StudyInstanceUID, accession number, \
                         BIDS subject or session, folder, or case id)",
                        response.case_ref
                    ),
                );
                continue;
            }
            _ => {
                problem(
                    response.line,
                    "case_id",
                    format!(
                        "{:?} names {} scanned cases",
                        response.case_ref,
                        found.len()
                    ),
                );
                continue;
            }
        };
        let identities: Vec<(String, Vec<SliceIdentity>)> = series_ids[index]
            .iter()
            .cloned()
            .zip(cases[index].series.iter().map(|s| s.slices.clone()))
            .collect();
        let mut key_images = Vec::new();
        for reference in &response.key_images {
            match harness::resolve_key_image(reference, &identities) {
                Ok(slice) => key_images.push(slice),
                Err(message) => problem(response.line, "key_images", message),
            }
        }
        let case_tasks = tasks.entry(ids[index].clone()).or_default();
        let position = match case_tasks.iter().position(|t| t.id == response.task_id) {
            Some(position) => position,
            None => {
                case_tasks.push(TaskSpec {
                    id: response.task_id.clone(),
                    family: TaskFamily::DifferentialDiagnosis,
                    level: 1,
                    prompt: String::new(),
                    key_images: Vec::new(),
                    follow_up: Vec::new(),
                });
                case_tasks.len() - 1
            }
        };
        let task = &mut case_tasks[position];
        if task.prompt.is_empty() {
            task.prompt = response.prompt.clone().unwrap_or_default();
        }
        for slice in key_images {
            if !task.key_images.contains(&slice) {
                task.key_images.push(slice);
            }
        }
        lines.push(response.into_line(ids[index].clone()));
    }
    for task in tasks.values_mut().flatten() {
        if task.prompt.trim().is_empty() {
            task.prompt = TASK_PROMPT_PLACEHOLDER.into();
        }
    }
    if problems.is_empty() {
        Ok((tasks, lines))
    } else {
        Err(problems)
    }
}

/// The prompt of a task whose responses did not carry it (`to_complete` keeps `tasks`: family,
/// level and prompt are a curator's to set).
const TASK_PROMPT_PLACEHOLDER: &str = "(prompt to be completed)";

/// What writing the de-identified copies needs, and where it reports.
struct Copies<'a> {
    salt: &'a str,
    dates: Dates,
    progress: &'a dyn Progress,
    /// Images written so far, over all cases.
    done: AtomicU64,
    cancel: &'a AtomicBool,
}

impl Copies<'_> {
    fn advance(&self) {
        self.progress
            .advance(self.done.fetch_add(1, Ordering::Relaxed) + 1);
    }

    /// Writes a series' de-identified copies into `folder` as `0001.dcm`…, in display order,
    /// several at once; `Ok(false)` when cancelled.
    fn write_series(&self, folder: &Path, instances: &[Instance]) -> Result<bool> {
        let digits = instances.len().to_string().len().max(4);
        instances
            .par_iter()
            .enumerate()
            .try_for_each(|(index, instance)| -> Result<()> {
                if self.cancel.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let target = folder.join(format!("{:0digits$}.dcm", index + 1));
                scan::write_deidentified(instance, &target, self.salt, self.dates)
                    .map_err(|reason| io(&instance.source, std::io::Error::other(reason)))?;
                self.advance();
                Ok(())
            })?;
        Ok(!self.cancel.load(Ordering::Relaxed))
    }
}

/// Writes the case's images and `case.json`; returns the report line and the key row, or
/// `None` when cancelled.
fn write_case(
    cases_dir: &Path,
    id: &str,
    case: PlannedCase,
    series_ids: Vec<String>,
    tasks: Vec<TaskSpec>,
    copies: &Copies,
) -> Result<Option<(CaseReport, [String; 4])>> {
    let case_dir = cases_dir.join(id);
    create_dir(&case_dir)?;
    let mut specs = Vec::new();
    let mut series_reports = Vec::new();
    let mut burned_in = false;
    for (series, series_id) in case.series.into_iter().zip(series_ids) {
        burned_in |= series.burned_in;

        let (kind, path, files) = match series.images {
            SeriesImages::Dicom(instances) => {
                let folder = case_dir.join(&series_id);
                create_dir(&folder)?;
                if !copies.write_series(&folder, &instances)? {
                    return Ok(None);
                }
                (SeriesKind::Dicom, series_id.clone(), instances.len())
            }
            SeriesImages::Nifti(source) => {
                if copies.cancel.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let name = nifti::write_copy(&source, &case_dir, &series_id)?;
                copies.advance();
                (SeriesKind::Nifti, name, 1)
            }
        };
        let label = series
            .guess
            .map_or(series.fallback_label, |g| g.label.name());
        series_reports.push(SeriesReport {
            id: series_id.clone(),
            label: label.to_owned(),
            label_basis: series.guess.map(|g| g.basis),
            files,
        });
        specs.push(SeriesSpec {
            id: series_id,
            label: label.to_owned(),
            kind,
            path,
            label_guessed: true,
        });
    }
    let mut to_complete = vec![
        ToComplete::DiseaseGroup,
        ToComplete::Tasks,
        ToComplete::ClinicalNote,
        ToComplete::SeriesLabels,
    ];
    if case.age.is_none() {
        to_complete.push(ToComplete::Age);
    }
    if burned_in {
        to_complete.push(ToComplete::BurnedInAnnotation);
    }
    let case_file = CaseFile {
        id: id.to_owned(),
        // A placeholder the format requires; `to_complete` says it is one.
        disease_group: DiseaseGroup::OtherAbnormality,
        modality: case.modality,
        age: case.age.unwrap_or(0),
        sex: case.sex,
        ehr: BTreeMap::new(),
        clinical_note: String::new(),
        series: specs,
        tasks,
        ground_truth: None,
        to_complete: to_complete.clone(),
    };
    write_json(&case_dir.join(CASE_FILE), &case_file)?;
    Ok(Some((
        CaseReport {
            id: id.to_owned(),
            series: series_reports,
            to_complete,
        },
        [id.to_owned(), case.study_uid, case.accession, case.source],
    )))
}

fn study_file(id: &str, cases: usize) -> StudyFile {
    let levels = [
        (1.0, "Wrong or unsafe"),
        (3.0, "Partly right, important gaps"),
        (5.0, "Correct, complete and well reasoned"),
    ];
    StudyFile {
        format_version: crate::bundle::FORMAT_VERSION,
        study: StudyMeta {
            id: id.to_owned(),
            title: id.to_owned(),
            description: format!(
                "{cases} cases scaffolded from an image export; complete what each case lists \
                 in to_complete"
            ),
        },
        rubric: Rubric {
            overall: Scale {
                label: Some("Overall quality".into()),
                min: 1.0,
                max: 5.0,
                step: 1.0,
                levels: levels
                    .into_iter()
                    .map(|(value, descriptor)| crate::model::ScaleLevel {
                        value,
                        descriptor: descriptor.into(),
                    })
                    .collect(),
            },
            dimensions: Vec::new(),
        },
        taxonomy: None,
    }
}

/// A study id (letters, digits, `-`, `_`, `.`; at most 64) from the bundle folder's name.
fn id_from_name(out: &Path) -> String {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id: String = name
        .chars()
        .map(|c| if crate::ids::is_id_char(c) { c } else { '-' })
        .take(crate::ids::MAX_ID_CHARS)
        .collect();
    if id.is_empty() {
        "scaffolded-study".into()
    } else {
        id
    }
}

/// Where the bundle and its key go, built in a hidden sibling folder until the end.
struct Target {
    out: PathBuf,
    key: PathBuf,
    partial: PathBuf,
    committed: bool,
}

impl Target {
    fn prepare(sources: &[PathBuf], out: &Path) -> Result<Target> {
        let refuse = |message: String| Error::Io {
            path: out.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::AlreadyExists, message),
        };
        if std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some()) || out.is_file() {
            return Err(refuse(
                "already exists and is not empty: give a new folder for the bundle".into(),
            ));
        }
        let name = out
            .file_name()
            .ok_or_else(|| refuse("give a folder name for the bundle".into()))?
            .to_string_lossy()
            .into_owned();
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        create_dir(&parent)?;
        let parent = parent.canonicalize().map_err(|e| io(&parent, e))?;
        for source in sources {
            let source = source.canonicalize().map_err(|e| io(source, e))?;
            if parent.join(&name).starts_with(&source) {
                return Err(refuse(format!(
                    "lies inside the source {}: put the bundle elsewhere, or the next scan reads it",
                    source.display()
                )));
            }
        }
        let key = parent.join(format!("{name}{KEY_SUFFIX}"));
        if key.exists() {
            return Err(Error::Io {
                path: key,
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "a key already exists here: move it away first (it is the only way back \
                     from case ids to patients)",
                ),
            });
        }
        let partial = parent.join(format!(".{name}.partial-{}", uuid::Uuid::new_v4()));
        create_dir(&partial)?;
        Ok(Target {
            out: parent.join(name),
            key,
            partial,
            committed: false,
        })
    }

    /// Writes the key, then puts the bundle and the key in place.
    fn commit(mut self, rows: &[[String; 4]]) -> Result<(PathBuf, PathBuf)> {
        let key_partial = self.partial.with_extension("key");
        write_key(&key_partial, rows)?;
        if self.out.is_dir() {
            // An empty folder the user made for the bundle.
            std::fs::remove_dir(&self.out).map_err(|e| io(&self.out, e))?;
        }
        std::fs::rename(&self.partial, &self.out).map_err(|e| io(&self.out, e))?;
        self.committed = true;
        std::fs::rename(&key_partial, &self.key).map_err(|e| io(&self.key, e))?;
        Ok((self.out.clone(), self.key.clone()))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.partial);
            let _ = std::fs::remove_file(self.partial.with_extension("key"));
        }
    }
}

/// The key, readable by its owner only: it links case ids back to the hospital's studies.
fn write_key(path: &Path, rows: &[[String; 4]]) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(|e| io(path, e))?;
    let mut writer = csv::Writer::from_writer(file);
    let header = [
        "case_id",
        "study_instance_uid",
        "accession_number",
        "source",
    ];
    std::iter::once(header.map(String::from).as_slice())
        .chain(rows.iter().map(|r| r.as_slice()))
        .try_for_each(|row| writer.write_record(row))
        .and_then(|()| writer.flush().map_err(csv::Error::from))
        .map_err(|e| io(path, std::io::Error::other(e)))
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn create_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| io(path, e))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| io(path, e))
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| io(path, e.into()))?;
    text.push('\n');
    write_file(path, text.as_bytes())
}
