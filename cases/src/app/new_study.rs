//! "New study…": the study lead turns folders a PACS exported (and a harness's answers) into an
//! imported study, as `neurorater scaffold` then `neurorater import` do, with a look at every
//! series and the fields the scan cannot know filled in between.
//!
//! A [`Draft`] is the scaffolded bundle in a hidden folder beside where the study will live
//! (`.NAME.draft`, its key `.NAME.draft.key.csv`), and the lead's corrections held in memory.
//! [`Draft::import`] writes the corrections, moves bundle and key to `NAME` and `NAME.key.csv`
//! and imports in one transaction; a refused import moves them back and keeps the draft.
//! Dropping a draft that was not imported removes its folder and key, so cancelling at any step
//! leaves neither a bundle nor a study behind.

use super::LeadSession;
use crate::bundle::{Problem, CASES_DIR, CASE_FILE};
use crate::import::{import_bundle_dir, ImportSummary};
use crate::model::{
    CaseFile, DiseaseGroup, SeriesKind, SliceRef, TaskFamily, TaskSpec, ToComplete,
};
use crate::progress::Progress;
use crate::scaffold::{self, Outcome, ResponsesInput, ScaffoldOptions, Skipped};
use crate::store::Store;
use crate::{Error, ImportError, Result};
use image::{DynamicImage, GenericImage, RgbImage};
use imaging::RenderOptions;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What the lead chose before the scan.
#[derive(Debug, Clone)]
pub struct NewStudyRequest {
    /// Folders (or files) the export is in.
    pub sources: Vec<PathBuf>,
    /// The folder the study's bundle goes into, as `folder/study_id`.
    pub folder: PathBuf,
    /// The study's id, also the bundle folder's name.
    pub study_id: String,
    /// A harness's answers, read with its column map during the scan: key images named by the
    /// original files' SOP Instance UID, file name or InstanceNumber can only be resolved then.
    pub responses: Option<ResponsesInput>,
    /// Dates removed, or shifted by one offset per patient.
    pub dates: scaffold::Dates,
}

/// How a scan ended.
pub enum ScanOutcome {
    Drafted(Box<Draft>),
    /// Stopped on request; nothing was left behind.
    Cancelled,
    /// The responses file does not fit the export (`FILE:LINE: field: message` each); nothing
    /// was left behind.
    Refused(Vec<Problem>),
}

/// How an import ended.
#[derive(Debug)]
pub enum ImportOutcome {
    Imported(ImportSummary),
    /// The bundle as corrected does not validate; the draft is kept for another try.
    Refused(Vec<Problem>),
}

/// A scanned study before it is imported.
pub struct Draft {
    study_id: String,
    dir: PathBuf,
    key: PathBuf,
    final_dir: PathBuf,
    final_key: PathBuf,
    cases: Vec<CaseFile>,
    files_found: usize,
    skipped: Vec<Skipped>,
    notes: Vec<String>,
    responses: usize,
    /// Per case, per series: the attribute the label was guessed from.
    label_basis: Vec<Vec<Option<&'static str>>>,
    imported: bool,
}

/// The draft as the lead sees it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct DraftView {
    pub study_id: String,
    /// Where the bundle will be once imported.
    pub bundle: String,
    pub files_found: usize,
    pub skipped: Vec<SkippedView>,
    pub notes: Vec<String>,
    pub responses: usize,
    pub cases: Vec<DraftCase>,
}

#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct SkippedView {
    pub path: String,
    pub reason: String,
}

#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct DraftCase {
    pub id: String,
    pub modality: crate::model::Modality,
    pub age: u32,
    pub sex: crate::model::Sex,
    pub disease_group: DiseaseGroup,
    pub clinical_note: String,
    pub series: Vec<DraftSeries>,
    pub tasks: Vec<DraftTask>,
    pub to_complete: Vec<ToComplete>,
}

#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct DraftSeries {
    pub id: String,
    pub label: String,
    /// The label is the scan's guess, not yet the lead's.
    pub guessed: bool,
    /// What the guess was read from (`SeriesDescription`, `DiffusionBValue` …).
    pub basis: Option<&'static str>,
    pub slices: usize,
}

/// A task as the table edits it, key images included (the slices the model is shown, which a
/// scan resolves only from a harness's file); follow-up turns stay as the scan resolved them.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct DraftTask {
    pub id: String,
    pub family: TaskFamily,
    pub prompt: String,
    /// Absent (an older page): the scan's, kept.
    #[serde(default)]
    pub key_images: Option<Vec<SliceRef>>,
}

/// The lead's answer for one case: what the scan could not know.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct CaseEdit {
    pub disease_group: DiseaseGroup,
    pub clinical_note: String,
    pub tasks: Vec<DraftTask>,
}

/// The placeholder prompt the scaffold writes when a harness's file carries none.
const PLACEHOLDER_PROMPT: &str = "(prompt to be completed)";
/// Longest series label accepted (labels are short names: T1, FLAIR, "T1+C post").
const MAX_LABEL: usize = 64;
/// Thumbnails in a series' strip, and each one's largest side in pixels.
pub const STRIP_LENGTH: u32 = 5;
pub const THUMBNAIL_SIDE: u32 = 96;

/// Scans `request.sources` into a draft beside `request.folder/study_id`; the lead's.
pub fn scan(
    _lead: &LeadSession,
    request: &NewStudyRequest,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<ScanOutcome> {
    let final_dir = request.folder.join(&request.study_id);
    let final_key = request
        .folder
        .join(format!("{}{}", request.study_id, scaffold::KEY_SUFFIX));
    for taken in [&final_dir, &final_key] {
        if taken.exists() {
            return Err(already_there(taken));
        }
    }
    let dir = request.folder.join(format!(".{}.draft", request.study_id));
    let options = ScaffoldOptions {
        study_id: Some(request.study_id.clone()),
        responses: request.responses.clone(),
        dates: request.dates,
    };
    let report = match scaffold::scaffold(&request.sources, &dir, &options, progress, cancel) {
        Ok(Outcome::Written(report)) => report,
        Ok(Outcome::Cancelled) => return Ok(ScanOutcome::Cancelled),
        Err(Error::Responses { problems }) => return Ok(ScanOutcome::Refused(problems)),
        Err(e) => return Err(e),
    };
    let mut draft = Draft {
        study_id: request.study_id.clone(),
        dir: report.bundle.clone(),
        key: report.key.clone(),
        final_dir,
        final_key,
        cases: Vec::new(),
        files_found: report.files_found,
        skipped: report.skipped,
        notes: report.notes,
        responses: report.responses,
        label_basis: report
            .cases
            .iter()
            .map(|c| c.series.iter().map(|s| s.label_basis).collect())
            .collect(),
        imported: false,
    };
    // From here on, dropping the draft removes what the scan wrote.
    draft.cases = report
        .cases
        .iter()
        .map(|c| read_case(&draft.case_file(&c.id)))
        .collect::<Result<_>>()?;
    Ok(ScanOutcome::Drafted(Box::new(draft)))
}

fn already_there(path: &Path) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "already exists: choose another study id or folder",
        ),
    }
}

fn read_case(path: &Path) -> Result<CaseFile> {
    let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    serde_json::from_str(&text).map_err(|e| io(path, std::io::Error::other(e)))
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn invalid(message: String) -> Error {
    Error::Rating(crate::rating::RatingError::Invalid {
        field: "new study".into(),
        message,
    })
}

impl Draft {
    pub fn view(&self) -> DraftView {
        DraftView {
            study_id: self.study_id.clone(),
            bundle: self.final_dir.display().to_string(),
            files_found: self.files_found,
            skipped: self
                .skipped
                .iter()
                .map(|s| SkippedView {
                    path: s.path.display().to_string(),
                    reason: s.reason.clone(),
                })
                .collect(),
            notes: self.notes.clone(),
            responses: self.responses,
            cases: self
                .cases
                .iter()
                .zip(&self.label_basis)
                .map(|(case, bases)| self.case_view(case, bases))
                .collect(),
        }
    }

    fn case_view(&self, case: &CaseFile, bases: &[Option<&'static str>]) -> DraftCase {
        DraftCase {
            id: case.id.clone(),
            modality: case.modality,
            age: case.age,
            sex: case.sex,
            disease_group: case.disease_group,
            clinical_note: case.clinical_note.clone(),
            series: case
                .series
                .iter()
                .zip(bases)
                .map(|(series, basis)| DraftSeries {
                    id: series.id.clone(),
                    label: series.label.clone(),
                    guessed: series.label_guessed,
                    basis: *basis,
                    slices: self.slice_files(case, &series.id).map_or(0, |f| f.len()),
                })
                .collect(),
            tasks: case
                .tasks
                .iter()
                .map(|t| DraftTask {
                    id: t.id.clone(),
                    family: t.family,
                    prompt: t.prompt.clone(),
                    key_images: Some(t.key_images.clone()),
                })
                .collect(),
            to_complete: case.to_complete.clone(),
        }
    }

    fn case_file(&self, case_id: &str) -> PathBuf {
        self.dir.join(CASES_DIR).join(case_id).join(CASE_FILE)
    }

    fn case_mut(&mut self, case_id: &str) -> Result<&mut CaseFile> {
        self.cases
            .iter_mut()
            .find(|c| c.id == case_id)
            .ok_or_else(|| Error::NotFound {
                what: format!("case {case_id} of the new study"),
            })
    }

    /// The lead's label for a series; it is no longer a guess, and once no label of the case
    /// is, the case no longer lists its labels as to be completed.
    pub fn set_label(&mut self, case_id: &str, series_id: &str, label: &str) -> Result<DraftCase> {
        let label = label.trim();
        if label.is_empty() || label.chars().count() > MAX_LABEL || label.contains(['\n', '\r']) {
            return Err(invalid(format!(
                "a series label is one line of 1 to {MAX_LABEL} characters (T1, FLAIR, …)"
            )));
        }
        let case = self.case_mut(case_id)?;
        let series = case
            .series
            .iter_mut()
            .find(|s| s.id == series_id)
            .ok_or_else(|| Error::NotFound {
                what: format!("series {series_id} of case {case_id}"),
            })?;
        series.label = label.to_owned();
        series.label_guessed = false;
        if case.series.iter().all(|s| !s.label_guessed) {
            case.to_complete.retain(|t| *t != ToComplete::SeriesLabels);
        }
        Ok(self.case_view_of(case_id))
    }

    /// The lead's disease group, clinical note and tasks for a case. A task keeps the key
    /// images the scan resolved for it; `to_complete` loses what is now given (a disease group
    /// once set, tasks once each has its own prompt, the note once written).
    pub fn edit_case(&mut self, case_id: &str, edit: CaseEdit) -> Result<DraftCase> {
        let CaseEdit {
            disease_group,
            clinical_note,
            tasks,
        } = edit;
        // Each series' slice count, for the key images the lead names.
        let slices: Vec<(String, usize)> = {
            let case =
                self.cases
                    .iter()
                    .find(|c| c.id == case_id)
                    .ok_or_else(|| Error::NotFound {
                        what: format!("case {case_id} of the new study"),
                    })?;
            case.series
                .iter()
                .map(|series| {
                    let files = self.slice_files(case, &series.id).map_or(0, |f| f.len());
                    (series.id.clone(), files)
                })
                .collect()
        };
        for task in &tasks {
            for key in task.key_images.iter().flatten() {
                match slices.iter().find(|(id, _)| *id == key.series) {
                    None => {
                        return Err(invalid(format!(
                            "task {}: key image on series {:?}, which case {case_id} does not have",
                            task.id, key.series
                        )))
                    }
                    Some((_, count)) if key.slice as usize >= *count => {
                        return Err(invalid(format!(
                            "task {}: key image slice {} of series {}, which has {count} \
                             (slices count from 0)",
                            task.id, key.slice, key.series
                        )))
                    }
                    Some(_) => {}
                }
            }
        }
        let case = self.case_mut(case_id)?;
        let mut edited = Vec::with_capacity(tasks.len());
        for task in tasks {
            let kept = case.tasks.iter().find(|t| t.id == task.id);
            edited.push(TaskSpec {
                id: task.id.trim().to_owned(),
                family: task.family,
                level: kept.map_or(1, |t| t.level),
                prompt: task.prompt.trim().to_owned(),
                key_images: match task.key_images {
                    Some(keys) => keys,
                    None => kept.map(|t| t.key_images.clone()).unwrap_or_default(),
                },
                follow_up: kept.map(|t| t.follow_up.clone()).unwrap_or_default(),
            });
        }
        case.disease_group = disease_group;
        case.clinical_note = clinical_note.trim().to_owned();
        case.tasks = edited;
        let tasks_given = !case.tasks.is_empty()
            && case
                .tasks
                .iter()
                .all(|t| !t.prompt.is_empty() && t.prompt != PLACEHOLDER_PROMPT);
        let note_given = !case.clinical_note.is_empty();
        case.to_complete.retain(|t| match t {
            ToComplete::DiseaseGroup => false,
            ToComplete::Tasks => !tasks_given,
            ToComplete::ClinicalNote => !note_given,
            _ => true,
        });
        Ok(self.case_view_of(case_id))
    }

    fn case_view_of(&self, case_id: &str) -> DraftCase {
        let (case, bases) = self
            .cases
            .iter()
            .zip(&self.label_basis)
            .find(|(c, _)| c.id == case_id)
            .expect("the case was just found");
        self.case_view(case, bases)
    }

    /// The image files of a series in display order: the de-identified DICOM copies, or the
    /// one NIfTI file.
    fn slice_files(&self, case: &CaseFile, series_id: &str) -> Option<Vec<PathBuf>> {
        let series = case.series.iter().find(|s| s.id == series_id)?;
        let path = self.dir.join(CASES_DIR).join(&case.id).join(&series.path);
        match series.kind {
            SeriesKind::Nifti | SeriesKind::KeyImages if path.is_file() => Some(vec![path]),
            _ => {
                let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                    .ok()?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_file())
                    .collect();
                // The scaffold numbers copies in display order, zero-padded.
                files.sort();
                Some(files)
            }
        }
    }

    /// A strip of [`STRIP_LENGTH`] thumbnails spread evenly through the series (fewer when it
    /// has fewer slices), side by side in one PNG, each fitted into [`THUMBNAIL_SIDE`] pixels.
    pub fn thumbnail_strip(&self, case_id: &str, series_id: &str) -> Result<Vec<u8>> {
        let not_found = || Error::NotFound {
            what: format!("series {series_id} of case {case_id} in the new study"),
        };
        let case = self
            .cases
            .iter()
            .find(|c| c.id == case_id)
            .ok_or_else(not_found)?;
        let files = self.slice_files(case, series_id).ok_or_else(not_found)?;
        let frames: Vec<(PathBuf, Option<u32>)> = match files.as_slice() {
            [one] => {
                let frames = imaging::probe(one)?.frames.max(1);
                spread(frames as usize)
                    .into_iter()
                    .map(|f| (one.clone(), Some(f as u32)))
                    .collect()
            }
            many => spread(many.len())
                .into_iter()
                .map(|i| (many[i].clone(), None))
                .collect(),
        };
        let mut strip = RgbImage::new(THUMBNAIL_SIDE * frames.len() as u32, THUMBNAIL_SIDE);
        for (at, (path, frame)) in frames.iter().enumerate() {
            let options = RenderOptions {
                frame: *frame,
                window: None,
            };
            let thumb = imaging::render(path, &options)?
                .thumbnail(THUMBNAIL_SIDE, THUMBNAIL_SIDE)
                .to_rgb8();
            let x = at as u32 * THUMBNAIL_SIDE + (THUMBNAIL_SIDE - thumb.width()) / 2;
            let y = (THUMBNAIL_SIDE - thumb.height()) / 2;
            strip
                .copy_from(&thumb, x, y)
                .map_err(|e| io(path, std::io::Error::other(e)))?;
        }
        let mut png = Vec::new();
        DynamicImage::ImageRgb8(strip)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| io(&self.dir, std::io::Error::other(e)))?;
        Ok(png)
    }

    /// Writes the lead's corrections, moves the bundle and its key into place and imports the
    /// study in one transaction. A refused import (the problems as `FILE:LINE: field`) moves
    /// them back, so the lead can correct and try again; nothing was stored.
    pub fn import(
        &mut self,
        store: &mut Store,
        _lead: &LeadSession,
        progress: &dyn Progress,
    ) -> Result<ImportOutcome> {
        for case in &self.cases {
            let path = self.case_file(&case.id);
            let mut text = serde_json::to_string_pretty(case).map_err(|e| io(&path, e.into()))?;
            text.push('\n');
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        for taken in [&self.final_dir, &self.final_key] {
            if taken.exists() {
                return Err(already_there(taken));
            }
        }
        std::fs::rename(&self.dir, &self.final_dir).map_err(|e| io(&self.final_dir, e))?;
        if let Err(e) = std::fs::rename(&self.key, &self.final_key) {
            let _ = std::fs::rename(&self.final_dir, &self.dir);
            return Err(io(&self.final_key, e));
        }
        match import_bundle_dir(store, &self.final_dir, progress) {
            Ok(summary) => {
                self.imported = true;
                Ok(ImportOutcome::Imported(summary))
            }
            Err(refused) => {
                std::fs::rename(&self.final_dir, &self.dir).map_err(|e| io(&self.dir, e))?;
                std::fs::rename(&self.final_key, &self.key).map_err(|e| io(&self.key, e))?;
                match refused {
                    ImportError::Invalid(problems) => Ok(ImportOutcome::Refused(problems)),
                    ImportError::Store(e) => Err(e),
                }
            }
        }
    }
}

/// Up to [`STRIP_LENGTH`] indices spread evenly over `0..count`, the middle one included.
fn spread(count: usize) -> Vec<usize> {
    let shown = count.min(STRIP_LENGTH as usize);
    (0..shown)
        .map(|i| (2 * i + 1) * count / (2 * shown))
        .collect()
}

impl Drop for Draft {
    /// A draft not imported leaves nothing: the lead cancelled, started another, or closed the
    /// app. Once imported, the bundle is the study's (its images are read from there).
    fn drop(&mut self) {
        if !self.imported {
            let _ = std::fs::remove_dir_all(&self.dir);
            let _ = std::fs::remove_file(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::spread;

    #[test]
    fn a_strip_spreads_its_thumbnails_evenly_and_never_repeats_a_slice() {
        assert_eq!(spread(1), vec![0]);
        assert_eq!(spread(3), vec![0, 1, 2]);
        assert_eq!(spread(10), vec![1, 3, 5, 7, 9]);
        assert_eq!(spread(150), vec![15, 45, 75, 105, 135]);
        assert!(spread(0).is_empty());
    }
}
