//! Study bundles: reading and validating a bundle directory (`docs/bundle.md`) without touching
//! the database.
//!
//! [`load`] checks everything it can — every file, every line, every image — and returns either a
//! fully resolved [`Bundle`] or all the problems it found, so that import can refuse a broken
//! bundle before writing a byte.

mod locate;
mod problem;

pub use problem::{Problem, Problems};

use crate::model::{
    CaseFile, GraderLine, MarkShape, ResponseKey, ResponseLine, Rubric, Scale, SeriesKind,
    SliceRef, StudyFile, TaskFamily, Taxonomy,
};
use crate::progress::Progress;
use crate::rating::rules::applying_dimension;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

pub const STUDY_FILE: &str = "study.json";
pub const CASES_DIR: &str = "cases";
pub const CASE_FILE: &str = "case.json";
pub const RESPONSES_FILE: &str = "responses.jsonl";
pub const GRADER_FILE: &str = "grader.jsonl";

/// The bundle format version this build reads.
pub const FORMAT_VERSION: u32 = 1;

/// The largest `study.json` or `case.json` read (16 MiB): a hand-written file is kilobytes.
pub const MAX_JSON_BYTES: u64 = 16 << 20;
/// The largest `responses.jsonl` or `grader.jsonl` read (1 GiB), refused before reading.
pub const MAX_JSONL_BYTES: u64 = 1 << 30;
/// The longest line of a JSONL file (1 MiB): an answer with its rationale and turns is kilobytes.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A bundle that passed validation, with every image found, ordered and hashed.
#[derive(Debug)]
pub struct Bundle {
    /// Canonical absolute path: images are referenced relative to it.
    pub dir: PathBuf,
    pub study: StudyFile,
    /// The study's taxonomy, or the default one.
    pub taxonomy: Taxonomy,
    pub cases: Vec<BundleCase>,
    pub responses: Vec<Located<ResponseLine>>,
    pub grader: Vec<Located<GraderLine>>,
    /// PS3.15 identifying attributes present in the DICOM files (never stored).
    pub identifying_attributes_found: usize,
}

#[derive(Debug)]
pub struct BundleCase {
    /// `cases/<dir>/case.json`, for messages.
    pub file: String,
    pub case: CaseFile,
    /// Parallel to `case.series`.
    pub series: Vec<Vec<ImageFile>>,
    /// Each series' geometry from the headers read here, parallel to `case.series`: import
    /// stores it, so nothing decodes a series to learn where its slices are.
    pub geometry: Vec<imaging::SeriesGeometry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFile {
    /// Relative to the bundle directory, `/`-separated.
    pub path: String,
    pub sha256: String,
    pub byte_len: u64,
    /// `sha256:<hex>` of the SOP Instance UID: PS3.15 replaces it (it leads back to the
    /// hospital's archive), so only a one-way digest is kept, enough to recognise the instance.
    pub sop_instance_uid: Option<String>,
}

/// A parsed JSONL line and where it came from.
#[derive(Debug, Clone)]
pub struct Located<T> {
    pub line: usize,
    pub value: T,
}

impl ResponseLine {
    pub fn key(&self) -> ResponseKey {
        ResponseKey {
            case_id: self.case_id.clone(),
            task_id: self.task_id.clone(),
            model: self.model.clone(),
            sample: self.sample,
        }
    }
}

impl GraderLine {
    pub fn response_key(&self) -> ResponseKey {
        ResponseKey {
            case_id: self.case_id.clone(),
            task_id: self.task_id.clone(),
            model: self.model.clone(),
            sample: self.sample,
        }
    }
}

/// Reads and validates the bundle at `dir`.
pub fn load(dir: &Path, progress: &dyn Progress) -> Result<Bundle, Vec<Problem>> {
    let mut problems = Problems::default();
    let dir = match dir.canonicalize() {
        Ok(dir) if dir.is_dir() => dir,
        Ok(_) | Err(_) => {
            problems.push(
                &dir.display().to_string(),
                None,
                "-",
                "is not a readable directory: give the folder that holds study.json",
            );
            return Err(problems.into_sorted());
        }
    };

    let study = read_json::<StudyFile>(&dir, STUDY_FILE, &mut problems);
    if let Some((study, text)) = &study {
        check_study(study, text, &mut problems);
    }
    let taxonomy = study
        .as_ref()
        .and_then(|(s, _)| s.taxonomy.clone())
        .unwrap_or_else(Taxonomy::neurorater_default);

    progress.phase("reading cases", 0);
    let case_files = list_case_files(&dir, &mut problems);
    let mut cases = Vec::new();
    let mut case_file_by_id: HashMap<String, String> = HashMap::new();
    let mut unreadable_cases = BTreeSet::new();
    for rel in &case_files {
        let Some((case, text)) = read_json::<CaseFile>(&dir, rel, &mut problems) else {
            // Its responses would all be "unknown case": one problem per cause is enough.
            if let Some(folder) = rel.split('/').nth(1) {
                unreadable_cases.insert(folder.to_owned());
            }
            continue;
        };
        check_case(&case, rel, &text, &mut problems);
        if let Some(first) = case_file_by_id.insert(case.id.clone(), rel.clone()) {
            problems.at_field(
                rel,
                &text,
                "id",
                format!("case id {:?} is also used by {first}", case.id),
            );
            continue;
        }
        cases.push((rel.clone(), text, case));
    }

    let total_images: u64 = cases
        .iter()
        .map(|(rel, _, case)| estimate_files(&dir, rel, case))
        .sum();
    progress.phase("reading images", total_images);
    let mut images_done = 0u64;
    let mut identifying_attributes_found = 0;
    let mut resolved = Vec::new();
    for (rel, text, case) in cases {
        let case_dir = Path::new(&rel).parent().unwrap_or(Path::new("")).to_owned();
        let mut series_images = Vec::new();
        let mut geometry = Vec::new();
        for (index, spec) in case.series.iter().enumerate() {
            let field = format!("series[{index}].path");
            let images = match resolve_inside(&dir, &case_dir.join(&spec.path)) {
                Ok(path) => read_series(&dir, &path, spec.kind, &rel, &text, &field, &mut problems),
                Err(message) => {
                    problems.at_field(&rel, &text, &field, message);
                    None
                }
            };
            // A series that could not be read is a problem already: the bundle is refused.
            let images = match images {
                Some((images, series_geometry)) => {
                    geometry.push(series_geometry);
                    images
                }
                None => Vec::new(),
            };
            images_done += images.len() as u64;
            progress.advance(images_done);
            identifying_attributes_found += images.iter().map(|i| i.identifying).sum::<usize>();
            series_images.push(images);
        }
        check_slice_refs(&case, &series_images, &rel, &text, &mut problems);
        resolved.push(BundleCase {
            file: rel,
            series: series_images
                .into_iter()
                .map(|images| images.into_iter().map(|i| i.file).collect())
                .collect(),
            geometry,
            case,
        });
    }

    progress.phase("reading responses", 0);
    let responses = read_jsonl::<ResponseLine>(&dir, RESPONSES_FILE, true, &mut problems);
    let grader = read_jsonl::<GraderLine>(&dir, GRADER_FILE, false, &mut problems);
    let cases_by_id: HashMap<&str, (&CaseFile, SliceCounts)> = resolved
        .iter()
        .map(|c| {
            let images: Vec<usize> = c.series.iter().map(Vec::len).collect();
            (
                c.case.id.as_str(),
                (&c.case, slice_counts(&c.case, &images)),
            )
        })
        .collect();
    check_responses(&responses, &cases_by_id, &unreadable_cases, &mut problems);
    if let Some((study, _)) = &study {
        let families: HashMap<(&str, &str), TaskFamily> = cases_by_id
            .iter()
            .flat_map(|(case_id, (case, _))| {
                case.tasks
                    .iter()
                    .map(move |t| ((*case_id, t.id.as_str()), t.family))
            })
            .collect();
        check_grader(
            &grader,
            &responses,
            &families,
            study,
            &taxonomy,
            &mut problems,
        );
    }

    match study {
        Some((study, _)) if problems.is_empty() => Ok(Bundle {
            dir,
            study,
            taxonomy,
            cases: resolved,
            responses,
            grader,
            identifying_attributes_found,
        }),
        _ => Err(problems.into_sorted()),
    }
}

fn read_text(dir: &Path, rel: &str, problems: &mut Problems) -> Option<String> {
    let path = dir.join(rel);
    // A text file reached through a symbolic link out of the bundle is not the bundle's.
    if let Ok(canonical) = path.canonicalize() {
        if !canonical.starts_with(dir) {
            problems.push(
                rel,
                None,
                "-",
                "leads outside the bundle (a symbolic link?)",
            );
            return None;
        }
    }
    let limit = if rel.ends_with(".jsonl") {
        MAX_JSONL_BYTES
    } else {
        MAX_JSON_BYTES
    };
    if let Ok(len) = std::fs::metadata(&path).map(|m| m.len()) {
        if len > limit {
            problems.push(
                rel,
                None,
                "-",
                format!("is {len} bytes, more than the {limit}-byte limit for this file"),
            );
            return None;
        }
    }
    match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(e) => {
                let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                problems.push(rel, Some(line), "-", "is not valid UTF-8");
                None
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(rel, None, "-", "is missing");
            None
        }
        Err(e) => {
            problems.push(rel, None, "-", format!("cannot be read: {e}"));
            None
        }
    }
}

/// Parses a JSON file, reporting a type error with the path of the field it concerns.
fn read_json<T: serde::de::DeserializeOwned>(
    dir: &Path,
    rel: &str,
    problems: &mut Problems,
) -> Option<(T, String)> {
    let text = read_text(dir, rel, problems)?;
    match parse_with_path::<T>(&text) {
        Ok(value) => Some((value, text)),
        Err((field, line, message)) => {
            problems.push(rel, Some(line), field, message);
            None
        }
    }
}

fn parse_with_path<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, (String, usize, String)> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize::<_, T>(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner();
        let field = if path == "." { "-".to_owned() } else { path };
        // serde_json appends " at line L column C"; the line is reported in front instead.
        let message = inner.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(head, _)| head)
            .to_owned();
        (field, inner.line().max(1), message)
    })
}

fn read_jsonl<T: serde::de::DeserializeOwned>(
    dir: &Path,
    rel: &str,
    required: bool,
    problems: &mut Problems,
) -> Vec<Located<T>> {
    if !required && !dir.join(rel).exists() {
        return Vec::new();
    }
    let Some(text) = read_text(dir, rel, problems) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            problems.push(
                rel,
                Some(index + 1),
                "-",
                format!(
                    "the line is {} bytes, more than the {MAX_LINE_BYTES}-byte limit",
                    line.len()
                ),
            );
            continue;
        }
        match parse_with_path::<T>(line) {
            Ok(value) => lines.push(Located {
                line: index + 1,
                value,
            }),
            Err((field, _, message)) => problems.push(rel, Some(index + 1), field, message),
        }
    }
    lines
}

fn list_case_files(dir: &Path, problems: &mut Problems) -> Vec<String> {
    let cases_dir = dir.join(CASES_DIR);
    let entries = match std::fs::read_dir(&cases_dir) {
        Ok(entries) => entries,
        Err(_) => {
            problems.push(
                CASES_DIR,
                None,
                "-",
                "is missing: a bundle keeps each case in cases/<case>/case.json",
            );
            return Vec::new();
        }
    };
    let mut files: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .map(|name| format!("{CASES_DIR}/{name}/{CASE_FILE}"))
        .collect();
    files.sort();
    if files.is_empty() {
        problems.push(CASES_DIR, None, "-", "holds no case folders");
    }
    files
}

/// Ids end up in file names, URLs of the app and exports: keep them plain (`crate::ids`).
fn check_id(kind: &str, id: &str) -> Option<String> {
    crate::ids::id_problem(id).map(|problem| format!("{kind} id {id:?} {problem}"))
}

fn check_scale(scale: &Scale, field: &str, file: &str, text: &str, problems: &mut Problems) {
    if !(scale.min.is_finite() && scale.max.is_finite() && scale.min < scale.max) {
        problems.at_field(file, text, field, "the scale needs finite min < max");
        return;
    }
    let steps = (scale.max - scale.min) / scale.step;
    if !(scale.step > 0.0 && (steps - steps.round()).abs() < 1e-6) {
        problems.at_field(
            file,
            text,
            &format!("{field}.step"),
            "step must be positive and divide max − min into whole steps",
        );
        return;
    }
    for (index, level) in scale.levels.iter().enumerate() {
        if !scale.admits(level.value) {
            problems.at_field(
                file,
                text,
                &format!("{field}.levels[{index}].value"),
                format!(
                    "{} is not a level of the scale {}..{} step {}",
                    level.value, scale.min, scale.max, scale.step
                ),
            );
        }
    }
}

/// The rubric's own rules (scales, unique plain dimension ids, families named when given),
/// each problem at its `rubric.…` field of `file`: a bundle's study.json and the lead's edit in
/// the app (`crate::rubric`) are checked alike.
pub(crate) fn check_rubric(rubric: &Rubric, file: &str, text: &str, problems: &mut Problems) {
    check_scale(&rubric.overall, "rubric.overall", file, text, problems);
    let mut seen = BTreeSet::new();
    for (index, dimension) in rubric.dimensions.iter().enumerate() {
        let field = format!("rubric.dimensions[{index}]");
        if let Some(message) = check_id("dimension", &dimension.id) {
            problems.at_field(file, text, &format!("{field}.id"), message);
        }
        if dimension.id == "overall" || !seen.insert(dimension.id.as_str()) {
            problems.at_field(
                file,
                text,
                &format!("{field}.id"),
                format!(
                    "dimension id {:?} is used twice (\"overall\" is reserved)",
                    dimension.id
                ),
            );
        }
        if dimension.label.trim().is_empty() {
            problems.at_field(
                file,
                text,
                &format!("{field}.label"),
                "needs a name to show the rater",
            );
        }
        check_scale(&dimension.scale, &field, file, text, problems);
        if dimension.families.as_ref().is_some_and(Vec::is_empty) {
            problems.at_field(
                file,
                text,
                &format!("{field}.families"),
                "names no task family: leave it out to score the dimension on every family",
            );
        }
    }
}

fn check_study(study: &StudyFile, text: &str, problems: &mut Problems) {
    let file = STUDY_FILE;
    if study.format_version != FORMAT_VERSION {
        problems.at_field(
            file,
            text,
            "format_version",
            format!(
                "this build reads bundle format {FORMAT_VERSION}, not {}",
                study.format_version
            ),
        );
    }
    if let Some(message) = check_id("study", &study.study.id) {
        problems.at_field(file, text, "study.id", message);
    }
    check_rubric(&study.rubric, file, text, problems);
    if let Some(taxonomy) = &study.taxonomy {
        let mut codes = BTreeSet::new();
        for (index, category) in taxonomy.categories.iter().enumerate() {
            if !codes.insert(category.code.as_str()) {
                problems.at_field(
                    file,
                    text,
                    &format!("taxonomy.categories[{index}].code"),
                    format!("category code {:?} is used twice", category.code),
                );
            }
        }
    }
}

fn check_case(case: &CaseFile, file: &str, text: &str, problems: &mut Problems) {
    if let Some(message) = check_id("case", &case.id) {
        problems.at_field(file, text, "id", message);
    }
    if case.age > 130 {
        problems.at_field(
            file,
            text,
            "age",
            format!("{} is not a plausible age in years", case.age),
        );
    }
    if case.series.is_empty() {
        problems.at_field(
            file,
            text,
            "series",
            "a case needs at least one image series",
        );
    }
    let mut series_ids = BTreeSet::new();
    for (index, series) in case.series.iter().enumerate() {
        if let Some(message) = check_id("series", &series.id) {
            problems.at_field(file, text, &format!("series[{index}].id"), message);
        } else if !series_ids.insert(series.id.as_str()) {
            problems.at_field(
                file,
                text,
                &format!("series[{index}].id"),
                format!("series id {:?} is used twice in this case", series.id),
            );
        }
    }
    let mut task_ids = BTreeSet::new();
    for (index, task) in case.tasks.iter().enumerate() {
        let field = format!("tasks[{index}]");
        if let Some(message) = check_id("task", &task.id) {
            problems.at_field(file, text, &format!("{field}.id"), message);
        } else if !task_ids.insert(task.id.as_str()) {
            problems.at_field(
                file,
                text,
                &format!("{field}.id"),
                format!("task id {:?} is used twice in this case", task.id),
            );
        }
        if !(1..=3).contains(&task.level) {
            problems.at_field(
                file,
                text,
                &format!("{field}.level"),
                format!(
                    "{} is not a level: 1 direct, 2 complex, 3 multi-turn",
                    task.level
                ),
            );
        }
        if task.prompt.trim().is_empty() {
            problems.at_field(
                file,
                text,
                &format!("{field}.prompt"),
                "the prompt is empty",
            );
        }
    }
    if let Some(truth) = &case.ground_truth {
        if let Some(difficulty) = truth.difficulty.filter(|d| !(1..=3).contains(d)) {
            problems.at_field(
                file,
                text,
                "ground_truth.difficulty",
                format!("{difficulty} is not a level: 1 direct, 2 complex, 3 multi-turn"),
            );
        }
        for (l, lesion) in truth.lesions.iter().enumerate() {
            for (m, mark) in lesion.marks.iter().enumerate() {
                let field = format!("ground_truth.lesions[{l}].marks[{m}]");
                if !series_ids.contains(mark.series.as_str()) {
                    problems.at_field(
                        file,
                        text,
                        &format!("{field}.series"),
                        format!("no series {:?} in this case", mark.series),
                    );
                }
                let (needed, shape) = match mark.shape {
                    MarkShape::Point => (1..=1, "a point takes 1 position"),
                    MarkShape::Arrow => (2..=2, "an arrow takes 2 positions (tail, head)"),
                    MarkShape::Ellipse => (
                        3..=3,
                        "an ellipse takes 3 positions (centre, two axis ends)",
                    ),
                    MarkShape::Freehand => {
                        (3..=10_000, "a freehand outline takes 3 to 10000 positions")
                    }
                };
                if !needed.contains(&mark.points_mm.len())
                    || mark.points_mm.iter().flatten().any(|v| !v.is_finite())
                {
                    problems.at_field(
                        file,
                        text,
                        &format!("{field}.points_mm"),
                        format!("{shape}, all finite"),
                    );
                }
            }
        }
    }
}

/// Resolves a bundle-relative path, refusing anything that leaves the bundle (`..`, absolute
/// paths, symbolic links pointing outside).
fn resolve_inside(bundle: &Path, rel: &Path) -> Result<PathBuf, String> {
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "{} must be a relative path inside the bundle (no '..', no absolute path)",
            rel.display()
        ));
    }
    let path = bundle.join(rel);
    let canonical = path
        .canonicalize()
        .map_err(|e| format!("{} cannot be found: {e}", rel.display()))?;
    if !canonical.starts_with(bundle) {
        return Err(format!(
            "{} leads outside the bundle (a symbolic link?)",
            rel.display()
        ));
    }
    Ok(canonical)
}

fn relative(bundle: &Path, path: &Path) -> String {
    path.strip_prefix(bundle)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

struct FoundImage {
    file: ImageFile,
    identifying: usize,
}

fn estimate_files(dir: &Path, case_file: &str, case: &CaseFile) -> u64 {
    let case_dir = dir.join(Path::new(case_file).parent().unwrap_or(Path::new("")));
    case.series
        .iter()
        .map(|s| match s.kind {
            SeriesKind::Nifti => 1,
            _ => std::fs::read_dir(case_dir.join(&s.path)).map_or(0, |d| d.count() as u64),
        })
        .sum()
}

/// The files of a folder series, by name, hidden files and DICOMDIR left out.
fn folder_files(folder: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)?
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "DICOMDIR"
        })
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

fn read_series(
    bundle: &Path,
    path: &Path,
    kind: SeriesKind,
    case_file: &str,
    case_text: &str,
    field: &str,
    problems: &mut Problems,
) -> Option<(Vec<FoundImage>, imaging::SeriesGeometry)> {
    let mut found = Vec::new();
    let geometry = match kind {
        SeriesKind::Nifti => {
            if !path.is_file() {
                problems.at_field(
                    case_file,
                    case_text,
                    field,
                    "a nifti series is one .nii or .nii.gz file",
                );
                return None;
            }
            let geometry = match imaging::probe(path).and_then(|_| imaging::nifti_geometry(path)) {
                Ok(geometry) => geometry,
                Err(e) => {
                    problems.push(
                        &relative(bundle, path),
                        None,
                        "-",
                        format!("cannot be read as NIfTI: {e}"),
                    );
                    return None;
                }
            };
            found.push(FoundImage {
                file: hash_file(bundle, path, None, problems)?,
                identifying: 0,
            });
            geometry
        }
        SeriesKind::KeyImages => {
            let files = list_folder(bundle, path, case_file, case_text, field, problems)?;
            let mut read = Vec::new();
            for file in files {
                let rel = relative(bundle, &file);
                let is_raster = file.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    matches!(e.to_ascii_lowercase().as_str(), "png" | "jpg" | "jpeg")
                });
                if !is_raster {
                    problems.push(&rel, None, "-", "key images must be PNG or JPEG files");
                    continue;
                }
                if let Err(e) = image::image_dimensions(&file) {
                    problems.push(&rel, None, "-", format!("cannot be read as an image: {e}"));
                    continue;
                }
                if let Some(image) = hash_file(bundle, &file, None, problems) {
                    found.push(FoundImage {
                        file: image,
                        identifying: 0,
                    });
                    read.push(file);
                }
            }
            if read.is_empty() {
                problems.at_field(case_file, case_text, field, "the series holds no images");
                return None;
            }
            match imaging::key_images_geometry(&read) {
                Ok(geometry) => geometry,
                Err(e) => {
                    problems.push(&relative(bundle, &read[0]), None, "-", e.to_string());
                    return None;
                }
            }
        }
        SeriesKind::Dicom => {
            let files = list_folder(bundle, path, case_file, case_text, field, problems)?;
            let mut metas = Vec::new();
            let mut by_path = HashMap::new();
            for file in files {
                match imaging::read_dicom_meta(&file) {
                    Ok(meta) => {
                        by_path.insert(meta.sop_instance_uid.clone(), file);
                        metas.push(meta);
                    }
                    Err(e) => problems.push(
                        &relative(bundle, &file),
                        None,
                        "-",
                        format!("not a readable DICOM file: {e}"),
                    ),
                }
            }
            let series_uids: BTreeSet<&str> = metas
                .iter()
                .map(|m| m.series_instance_uid.as_str())
                .collect();
            if series_uids.len() > 1 {
                problems.at_field(
                    case_file,
                    case_text,
                    field,
                    format!(
                        "the folder holds {} DICOM series; give each series its own folder and entry",
                        series_uids.len()
                    ),
                );
                return None;
            }
            if by_path.len() != metas.len() {
                problems.at_field(
                    case_file,
                    case_text,
                    field,
                    "two files in the folder share one SOP Instance UID",
                );
                return None;
            }
            imaging::order_series(&mut metas);
            let Some(geometry) = imaging::dicom_series_geometry(&metas) else {
                problems.at_field(case_file, case_text, field, "the series holds no images");
                return None;
            };
            for meta in metas {
                let file = &by_path[&meta.sop_instance_uid];
                let image = hash_file(
                    bundle,
                    file,
                    Some(uid_digest(&meta.sop_instance_uid)),
                    problems,
                )?;
                found.push(FoundImage {
                    file: image,
                    identifying: meta.identifying_attributes.len(),
                });
            }
            geometry
        }
    };
    if found.is_empty() {
        problems.at_field(case_file, case_text, field, "the series holds no images");
        return None;
    }
    Some((found, geometry))
}

/// The files of a series folder; a file that is a symbolic link out of the bundle is a problem
/// (the bundle would show another folder's, perhaps another patient's, image).
fn list_folder(
    bundle: &Path,
    path: &Path,
    case_file: &str,
    case_text: &str,
    field: &str,
    problems: &mut Problems,
) -> Option<Vec<PathBuf>> {
    if !path.is_dir() {
        problems.at_field(
            case_file,
            case_text,
            field,
            "this series kind is a folder of files",
        );
        return None;
    }
    match folder_files(path) {
        Ok(files) => Some(
            files
                .into_iter()
                .filter(|file| {
                    let inside = file.canonicalize().is_ok_and(|c| c.starts_with(bundle));
                    if !inside {
                        problems.push(
                            &relative(bundle, file),
                            None,
                            "-",
                            "leads outside the bundle (a symbolic link?)",
                        );
                    }
                    inside
                })
                .collect(),
        ),
        Err(e) => {
            problems.at_field(
                case_file,
                case_text,
                field,
                format!("the folder cannot be listed: {e}"),
            );
            None
        }
    }
}

fn uid_digest(uid: &str) -> String {
    format!("sha256:{}", crate::digest::sha256_hex(uid.as_bytes()))
}

fn hash_file(
    bundle: &Path,
    path: &Path,
    sop_instance_uid: Option<String>,
    problems: &mut Problems,
) -> Option<ImageFile> {
    let rel = relative(bundle, path);
    match std::fs::read(path) {
        Ok(bytes) => Some(ImageFile {
            sha256: crate::digest::sha256_hex(&bytes),
            byte_len: bytes.len() as u64,
            path: rel,
            sop_instance_uid,
        }),
        Err(e) => {
            problems.push(&rel, None, "-", format!("cannot be read: {e}"));
            None
        }
    }
}

/// How many slices each series of a case has, by series id; `None` for NIfTI, whose single file's
/// slice count is checked when it is decoded.
type SliceCounts<'a> = HashMap<&'a str, Option<usize>>;

fn slice_counts<'a>(case: &'a CaseFile, images_per_series: &[usize]) -> SliceCounts<'a> {
    case.series
        .iter()
        .zip(images_per_series)
        .map(|(spec, &images)| {
            let count = match spec.kind {
                SeriesKind::Nifti => None,
                _ => Some(images),
            };
            (spec.id.as_str(), count)
        })
        .collect()
}

/// What is wrong with a slice reference, as (the field under `field`, the message).
fn slice_ref_problem(counts: &SliceCounts, slice_ref: &SliceRef) -> Option<(&'static str, String)> {
    match counts.get(slice_ref.series.as_str()) {
        None => Some((
            "series",
            format!("no series {:?} in this case", slice_ref.series),
        )),
        Some(Some(count)) if slice_ref.slice as usize >= *count && *count > 0 => Some((
            "slice",
            format!(
                "slice {} does not exist: series {:?} has {count} slices (counted from 0)",
                slice_ref.slice, slice_ref.series
            ),
        )),
        Some(_) => None,
    }
}

/// Slices a task or its follow-up turns point at must exist in the series.
fn check_slice_refs(
    case: &CaseFile,
    series_images: &[Vec<FoundImage>],
    file: &str,
    text: &str,
    problems: &mut Problems,
) {
    let counts = slice_counts(
        case,
        &series_images.iter().map(Vec::len).collect::<Vec<_>>(),
    );
    for (t, task) in case.tasks.iter().enumerate() {
        let task_refs = task
            .key_images
            .iter()
            .enumerate()
            .map(|(k, r)| (format!("tasks[{t}].key_images[{k}]"), r));
        let follow_up_refs = task.follow_up.iter().enumerate().flat_map(|(f, turn)| {
            turn.key_images
                .iter()
                .enumerate()
                .map(move |(k, r)| (format!("tasks[{t}].follow_up[{f}].key_images[{k}]"), r))
        });
        for (field, slice_ref) in task_refs.chain(follow_up_refs) {
            if let Some((part, message)) = slice_ref_problem(&counts, slice_ref) {
                problems.at_field(file, text, &format!("{field}.{part}"), message);
            }
        }
    }
}

fn check_responses(
    responses: &[Located<ResponseLine>],
    cases: &HashMap<&str, (&CaseFile, SliceCounts)>,
    unreadable_cases: &BTreeSet<String>,
    problems: &mut Problems,
) {
    let file = RESPONSES_FILE;
    let mut seen: HashMap<ResponseKey, usize> = HashMap::new();
    for Located { line, value } in responses {
        let line_number = line;
        let line = Some(*line);
        match cases.get(value.case_id.as_str()) {
            None if unreadable_cases.contains(&value.case_id) => {}
            None => problems.push(
                file,
                line,
                "case_id",
                format!("no case {:?} in the bundle", value.case_id),
            ),
            Some((case, _)) if !case.tasks.iter().any(|t| t.id == value.task_id) => problems.push(
                file,
                line,
                "task_id",
                format!("case {:?} has no task {:?}", value.case_id, value.task_id),
            ),
            Some((_, counts)) => {
                for (t, turn) in value.turns.iter().flatten().enumerate() {
                    for (k, slice_ref) in turn.key_images.iter().enumerate() {
                        if let Some((part, message)) = slice_ref_problem(counts, slice_ref) {
                            let field = format!("turns[{t}].key_images[{k}].{part}");
                            problems.push(file, line, field, message);
                        }
                    }
                }
            }
        }
        if value.model.trim().is_empty() {
            problems.push(file, line, "model", "the model name is empty");
        }
        if value.answer.trim().is_empty() {
            problems.push(file, line, "answer", "the answer is empty");
        }
        if let Some(first) = seen.insert(value.key(), *line_number) {
            problems.push(
                file,
                line,
                "sample",
                format!("the same case, task, model and sample as line {first}"),
            );
        }
    }
}

fn check_grader(
    grader: &[Located<GraderLine>],
    responses: &[Located<ResponseLine>],
    families: &HashMap<(&str, &str), TaskFamily>,
    study: &StudyFile,
    taxonomy: &Taxonomy,
    problems: &mut Problems,
) {
    let file = GRADER_FILE;
    let known: BTreeSet<ResponseKey> = responses.iter().map(|r| r.value.key()).collect();
    let dimensions: BTreeMap<&str, &Scale> = study
        .rubric
        .dimensions
        .iter()
        .map(|d| (d.id.as_str(), &d.scale))
        .collect();
    let codes: BTreeSet<&str> = taxonomy
        .categories
        .iter()
        .map(|c| c.code.as_str())
        .collect();
    let mut seen: HashMap<(ResponseKey, &str), usize> = HashMap::new();
    for Located { line, value } in grader {
        let at = Some(*line);
        let key = value.response_key();
        if !known.contains(&key) {
            problems.push(
                file,
                at,
                "sample",
                format!(
                    "grades a response that responses.jsonl does not hold (case {:?}, task {:?}, model {:?}, sample {})",
                    key.case_id, key.task_id, key.model, key.sample
                ),
            );
        }
        let overall = &study.rubric.overall;
        if !(value.score.is_finite() && value.score >= overall.min && value.score <= overall.max) {
            problems.push(
                file,
                at,
                "score",
                format!(
                    "{} is outside the rubric's overall scale {}..{}",
                    value.score, overall.min, overall.max
                ),
            );
        }
        let family = families.get(&(value.case_id.as_str(), value.task_id.as_str()));
        for (id, score) in value.dimensions.iter().flatten() {
            // A dimension the rubric does not apply to the task's family is refused as the
            // app and the ratings import refuse it: one rule.
            if let Some(&family) = family {
                if let Err(refused) = applying_dimension(&study.rubric, family, id) {
                    problems.push(file, at, refused.field, refused.message);
                    continue;
                }
            }
            match dimensions.get(id.as_str()) {
                None => problems.push(
                    file,
                    at,
                    format!("dimensions.{id}"),
                    "not a dimension of the study's rubric",
                ),
                Some(scale)
                    if !(score.is_finite() && *score >= scale.min && *score <= scale.max) =>
                {
                    problems.push(
                        file,
                        at,
                        format!("dimensions.{id}"),
                        format!(
                            "{score} is outside the dimension's scale {}..{}",
                            scale.min, scale.max
                        ),
                    )
                }
                Some(_) => {}
            }
        }
        for (index, error) in value.errors.iter().flatten().enumerate() {
            if !codes.contains(error.category.as_str()) {
                problems.push(
                    file,
                    at,
                    format!("errors[{index}].category"),
                    format!(
                        "{:?} is not a category of the taxonomy {:?}",
                        error.category, taxonomy.id
                    ),
                );
            }
        }
        if value.grader.trim().is_empty() {
            problems.push(file, at, "grader", "the grader name is empty");
        }
        if let Some(first) = seen.insert((key, value.grader.as_str()), *line) {
            problems.push(
                file,
                at,
                "grader",
                format!("the same response and grader as line {first}"),
            );
        }
    }
}
