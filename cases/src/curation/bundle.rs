//! The ground-truth bundle: a study's current ground truth as one JSON file per case (lesion
//! marks in patient coordinates), with every task's key images rendered to PNG; importing it
//! writes a new version per case that changed, after validating every file against the stored
//! cases, in one transaction. `docs/curation.md` describes the layout.

use super::context::CaseContext;
use super::versions::{self, bundle_version, current, insert_version, materialise, Source, Status};
use super::{CuratedTruth, MAIN_BRANCH};
use crate::bundle::Problems;
use crate::model::{SeriesKind, SliceRef};
use crate::store::Store;
use crate::{Error, ImportError, Result};
use imaging::RenderOptions;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const INDEX_FILE: &str = "ground-truth.json";
pub const CASES_DIR: &str = "cases";
pub const KEY_IMAGES_DIR: &str = "key-images";
const FORMAT: &str = "neurorater-ground-truth";
const FORMAT_VERSION: u32 = 1;

/// `ground-truth.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexFile {
    pub format: String,
    pub format_version: u32,
    pub study_id: String,
}

/// `cases/<case_id>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseTruthFile {
    pub case_id: String,
    /// The version exported (informational on import: the importing database numbers its own).
    pub version: i64,
    /// `final`, `in_review` or `draft`; import keeps it.
    pub status: Status,
    pub ground_truth: CuratedTruth,
    /// The rendered key images (written on export, not read on import: they follow from
    /// `ground_truth.tasks[].key_images`).
    #[serde(default)]
    pub key_image_files: Vec<KeyImageFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyImageFile {
    pub task_id: String,
    pub series: String,
    pub slice: u32,
    /// Relative to the bundle folder.
    pub png: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleExport {
    pub cases: usize,
    pub key_images: usize,
    /// Cases without final ground truth, not exported.
    pub skipped: Vec<String>,
}

/// Writes the current ground truth of every case of `study_id` into `out`.
pub fn export_bundle(store: &Store, study_id: &str, out: &Path) -> Result<BundleExport> {
    let mut summary = BundleExport {
        cases: 0,
        key_images: 0,
        skipped: Vec::new(),
    };
    write_json(
        &out.join(INDEX_FILE),
        &IndexFile {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            study_id: study_id.into(),
        },
    )?;
    for case in store.cases(study_id)? {
        let Some(version) = current(store, study_id, &case.id)? else {
            summary.skipped.push(case.id.clone());
            continue;
        };
        let context = CaseContext::load(store, study_id, &case.id)?;
        let mut key_image_files = Vec::new();
        for task in &version.truth.tasks {
            for slice in &task.key_images {
                let png = format!(
                    "{KEY_IMAGES_DIR}/{}/{}_{}_{}.png",
                    case.id, task.task_id, slice.series, slice.slice
                );
                let bytes = render_slice(store, &context, slice)?;
                write_bytes(&out.join(&png), &bytes)?;
                key_image_files.push(KeyImageFile {
                    task_id: task.task_id.clone(),
                    series: slice.series.clone(),
                    slice: slice.slice,
                    png,
                });
            }
        }
        summary.key_images += key_image_files.len();
        write_json(
            &out.join(CASES_DIR).join(format!("{}.json", case.id)),
            &CaseTruthFile {
                case_id: case.id.clone(),
                version: version.version,
                status: version.status,
                ground_truth: version.truth,
                key_image_files,
            },
        )?;
        summary.cases += 1;
    }
    Ok(summary)
}

/// Reads, validates and imports a ground-truth bundle; returns how many cases got a new
/// version (an unchanged case gets none, so importing twice changes nothing).
pub fn import_bundle(store: &mut Store, dir: &Path, actor: &str) -> Result<usize, ImportError> {
    let mut problems = Problems::default();
    let Some((index, _)) = read_json::<IndexFile>(dir, INDEX_FILE, &mut problems) else {
        return Err(ImportError::Invalid(problems.into_sorted()));
    };
    if index.format != FORMAT || index.format_version != FORMAT_VERSION {
        problems.push(
            INDEX_FILE,
            None,
            "format",
            format!("expected {FORMAT:?} version {FORMAT_VERSION}"),
        );
    }
    if !store.studies()?.iter().any(|s| s.id == index.study_id) {
        problems.push(
            INDEX_FILE,
            None,
            "study_id",
            format!(
                "no study {:?} in the database: import its study bundle first",
                index.study_id
            ),
        );
    }
    if !problems.is_empty() {
        return Err(ImportError::Invalid(problems.into_sorted()));
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.join(CASES_DIR))
        .map_err(|source| Error::Io {
            path: dir.join(CASES_DIR),
            source,
        })?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    let mut accepted = Vec::new();
    for name in names {
        let file = format!("{CASES_DIR}/{name}");
        let Some((case_file, text)) = read_json::<CaseTruthFile>(dir, &file, &mut problems) else {
            continue;
        };
        if name != format!("{}.json", case_file.case_id) {
            problems.at_field(
                &file,
                &text,
                "case_id",
                format!("the file of case {:?} is named {name}", case_file.case_id),
            );
            continue;
        }
        let context = match CaseContext::load(store, &index.study_id, &case_file.case_id) {
            Ok(context) => context,
            Err(Error::NotFound { .. }) => {
                problems.at_field(
                    &file,
                    &text,
                    "case_id",
                    format!(
                        "no case {:?} in study {:?}",
                        case_file.case_id, index.study_id
                    ),
                );
                continue;
            }
            Err(other) => return Err(other.into()),
        };
        let found = context.check(store, &case_file.ground_truth)?;
        for (field, message) in &found {
            problems.at_field(&file, &text, &format!("ground_truth.{field}"), message);
        }
        if found.is_empty() {
            accepted.push((context, case_file));
        }
    }
    if !problems.is_empty() {
        return Err(ImportError::Invalid(problems.into_sorted()));
    }
    let mut plans = Vec::new();
    for (context, file) in accepted {
        let history = versions::history(store, &index.study_id, &context.case_id)?;
        let latest_main = history.iter().rfind(|v| v.branch == MAIN_BRANCH);
        let unchanged =
            latest_main.is_some_and(|v| v.truth == file.ground_truth && v.status == file.status);
        if !unchanged {
            let bundle = bundle_version(store, &context)?;
            plans.push((context, file, latest_main.map(|v| v.version), bundle));
        }
    }
    let written = plans.len();
    store.write(|w| {
        for (context, file, based_on, bundle) in &plans {
            materialise(w, context, bundle.as_ref())?;
            insert_version(
                w,
                context,
                MAIN_BRANCH,
                *based_on,
                file.status,
                Source::Import,
                None,
                &file.ground_truth,
                actor,
            )?;
        }
        Ok(())
    })?;
    Ok(written)
}

/// One slice of a series as PNG (see [`key_image_source`]).
fn render_slice(store: &Store, context: &CaseContext, slice: &SliceRef) -> Result<Vec<u8>> {
    let (path, options) = key_image_source(store, context, slice)?;
    Ok(imaging::render_png(&path, &options)?)
}

/// The file and render options of one slice, as docs/formats.md §4 renders it with the series' default
/// window: the n-th file of a DICOM or key-image series (the n-th frame when the series is one
/// multi-frame file), the n-th axial slice of a NIfTI file. The files' content hashes are checked
/// first, so a changed image is never rendered. The ground-truth bundle and a model run both
/// render key images through this.
pub fn key_image_source(
    store: &Store,
    context: &CaseContext,
    slice: &SliceRef,
) -> Result<(std::path::PathBuf, RenderOptions)> {
    let (key, kind) = context
        .series
        .get(&slice.series)
        .ok_or_else(|| Error::NotFound {
            what: format!("series {:?} of case {:?}", slice.series, context.case_id),
        })?;
    let files = store.series_files(*key)?;
    files.verify()?;
    let paths = files.paths();
    let n = slice.slice as usize;
    let (path, frame) = match kind {
        SeriesKind::Nifti => (paths.first(), Some(slice.slice)),
        SeriesKind::Dicom if paths.len() == 1 => (paths.first(), Some(slice.slice)),
        SeriesKind::Dicom | SeriesKind::KeyImages => (paths.get(n), None),
    };
    let path = path.ok_or_else(|| Error::NotFound {
        what: format!(
            "slice {} of series {:?} of case {:?}",
            slice.slice, slice.series, context.case_id
        ),
    })?;
    Ok((
        path.clone(),
        RenderOptions {
            frame,
            window: None,
        },
    ))
}

fn read_json<T: serde::de::DeserializeOwned>(
    dir: &Path,
    file: &str,
    problems: &mut Problems,
) -> Option<(T, String)> {
    let text = match std::fs::read_to_string(dir.join(file)) {
        Ok(text) => text,
        Err(e) => {
            problems.push(file, None, "-", format!("cannot be read: {e}"));
            return None;
        }
    };
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => Some((value, text)),
        Err(e) => {
            let field = match e.path().to_string() {
                path if path == "." => "-".to_owned(),
                path => path,
            };
            let message = e.inner().to_string();
            // serde_json appends " at line L column C"; the line goes in front instead.
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(head, _)| head)
                .to_owned();
            problems.push(file, Some(e.inner().line().max(1)), field, message);
            None
        }
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Corrupt {
        what: format!("{}: {e}", path.display()),
    })?;
    text.push('\n');
    write_bytes(path, text.as_bytes())
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(path, bytes).map_err(io)
}
