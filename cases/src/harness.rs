//! Model responses as evaluation harnesses write them: a CSV (with a header) or a JSONL file,
//! read through a column map (`answer=prediction,case_id=study,…`) so that nobody rewrites a
//! harness's output by hand. docs/bundle.md "Responses from evaluation harnesses" has recipes.
//!
//! A JSONL column may be a dotted path into the object (`doc.case_id`, `filtered_resps.0`), as
//! lmms-eval nests its samples. Key images may be given by display index (`12`), InstanceNumber
//! (`#12`), SOP Instance UID or file name, each optionally after `SERIES:`; [`KeyImageRef`]
//! resolves them to display indices.

use crate::bundle::Problem;
use crate::model::SliceRef;
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

/// A field of a response that a column can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    CaseId,
    TaskId,
    Model,
    Sample,
    Answer,
    Rationale,
    Prompt,
    KeyImages,
}

const FIELDS: [(&str, Field); 8] = [
    ("case_id", Field::CaseId),
    ("task_id", Field::TaskId),
    ("model", Field::Model),
    ("sample", Field::Sample),
    ("answer", Field::Answer),
    ("rationale", Field::Rationale),
    ("prompt", Field::Prompt),
    ("key_images", Field::KeyImages),
];

/// Which column fills which field: `field=column,…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMap(BTreeMap<Field, String>);

impl FromStr for ColumnMap {
    type Err = String;

    fn from_str(text: &str) -> Result<ColumnMap, String> {
        let mut map = BTreeMap::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, column) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?} is not FIELD=COLUMN"))?;
            let field = FIELDS
                .iter()
                .find(|(name, _)| *name == field.trim())
                .map(|(_, f)| *f)
                .ok_or_else(|| {
                    let known: Vec<&str> = FIELDS.iter().map(|(n, _)| *n).collect();
                    format!(
                        "{field:?} is not a field; the fields are {}",
                        known.join(", ")
                    )
                })?;
            map.insert(field, column.trim().to_owned());
        }
        for required in [Field::CaseId, Field::Answer] {
            if !map.contains_key(&required) {
                return Err(format!(
                    "the map must name the column of {}",
                    FIELDS
                        .iter()
                        .find(|(_, f)| *f == required)
                        .map_or("", |(n, _)| n)
                ));
            }
        }
        Ok(ColumnMap(map))
    }
}

/// What the file does not say: used when the map names no column for the field.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// VLMEvalKit writes one file per model, named after it.
    pub model: Option<String>,
    pub task_id: Option<String>,
}

/// One response as the harness gave it; the case is still the harness's reference to it.
#[derive(Debug, Clone, PartialEq)]
pub struct HarnessResponse {
    pub line: usize,
    pub case_ref: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub answer: String,
    pub rationale: Option<String>,
    pub prompt: Option<String>,
    pub key_images: Vec<String>,
}

impl HarnessResponse {
    /// The `responses.jsonl` line, under the bundle's `case_id`; nothing else of the harness's
    /// row is kept (it may hold what a rater must not see).
    pub fn into_line(self, case_id: String) -> crate::model::ResponseLine {
        crate::model::ResponseLine {
            case_id,
            task_id: self.task_id,
            model: self.model,
            sample: self.sample,
            answer: self.answer,
            rationale: self.rationale,
            turns: None,
            extra: serde_json::Map::new(),
        }
    }
}

/// Reads `path` (CSV when its name ends in `.csv`, else JSONL) through `map`; every problem
/// names the file, line and field. Responses without a sample column are numbered 0, 1, … per
/// case, task and model in file order (pass@k files repeat the line).
pub fn read_responses(
    path: &Path,
    map: &ColumnMap,
    defaults: &Defaults,
) -> Result<Vec<HarnessResponse>, Vec<Problem>> {
    let file = path.display().to_string();
    let problem = |line: Option<usize>, field: &str, message: String| Problem {
        file: file.clone(),
        line,
        field: field.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![problem(None, "-", format!("cannot be read: {e}"))])?;
    let rows: Vec<(usize, Row)> = if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    {
        csv_rows(&text).map_err(|(line, message)| vec![problem(line, "-", message)])?
    } else {
        let mut rows = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<serde_json::Value>(line) {
                Ok(value) => rows.push((index + 1, Row::Json(value))),
                Err(e) => {
                    return Err(vec![problem(
                        Some(index + 1),
                        "-",
                        format!("not JSON: {e}"),
                    )])
                }
            }
        }
        rows
    };
    let mut problems = Vec::new();
    let mut responses = Vec::new();
    let mut samples: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    for (line, row) in rows {
        let mut value = |field: Field, fallback: Option<&String>| -> Option<String> {
            let name = FIELDS
                .iter()
                .find(|(_, f)| *f == field)
                .map_or("", |(n, _)| n);
            match map.0.get(&field) {
                Some(column) => match row.get(column) {
                    Some(value) => Some(value),
                    None => {
                        problems.push(problem(
                            Some(line),
                            name,
                            format!("no column {column:?} (mapped to {name})"),
                        ));
                        None
                    }
                },
                None => fallback.cloned(),
            }
        };
        let case_ref = value(Field::CaseId, None);
        let answer = value(Field::Answer, None);
        let task_id = value(Field::TaskId, defaults.task_id.as_ref());
        let model = value(Field::Model, defaults.model.as_ref());
        let sample = value(Field::Sample, None);
        let rationale = value(Field::Rationale, None);
        let prompt = value(Field::Prompt, None);
        let key_images = value(Field::KeyImages, None);
        let (Some(case_ref), Some(answer)) = (case_ref, answer) else {
            continue;
        };
        let Some(task_id) = task_id else {
            problems.push(problem(
                Some(line),
                "task_id",
                "no task: map a task_id column or give a task id for every line".into(),
            ));
            continue;
        };
        let Some(model) = model else {
            problems.push(problem(
                Some(line),
                "model",
                "no model: map a model column or give the model's name".into(),
            ));
            continue;
        };
        let sample = match sample {
            Some(text) => match text.parse::<u32>() {
                Ok(sample) => sample,
                Err(_) => {
                    problems.push(problem(
                        Some(line),
                        "sample",
                        format!("{text:?} is not a sample number (0, 1, …)"),
                    ));
                    continue;
                }
            },
            None => {
                let next = samples
                    .entry((case_ref.clone(), task_id.clone(), model.clone()))
                    .or_insert(0);
                *next += 1;
                *next - 1
            }
        };
        responses.push(HarnessResponse {
            line,
            case_ref,
            task_id,
            model,
            sample,
            answer,
            rationale,
            prompt,
            key_images: key_images.map(|k| split_list(&k)).unwrap_or_default(),
        });
    }
    if problems.is_empty() {
        Ok(responses)
    } else {
        Err(problems)
    }
}

/// A list in one cell: a JSON array, or values separated by `;` or `|`.
fn split_list(text: &str) -> Vec<String> {
    if let Ok(serde_json::Value::Array(items)) = serde_json::from_str(text) {
        return items.iter().map(scalar_text).collect();
    }
    text.split([';', '|'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

enum Row {
    Csv(BTreeMap<String, String>),
    Json(serde_json::Value),
}

impl Row {
    /// The column's value as text (a JSON array as JSON text, for key image lists).
    fn get(&self, column: &str) -> Option<String> {
        match self {
            Row::Csv(fields) => fields.get(column).cloned(),
            Row::Json(value) => {
                let mut at = value;
                for step in column.split('.') {
                    at = match at {
                        serde_json::Value::Array(items) => {
                            items.get(step.parse::<usize>().ok()?)?
                        }
                        other => other.get(step)?,
                    };
                }
                (!at.is_null()).then(|| scalar_text(at))
            }
        }
    }
}

fn scalar_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A CSV that cannot be read: the line when known, and why.
type CsvError = (Option<usize>, String);

fn csv_rows(text: &str) -> Result<Vec<(usize, Row)>, CsvError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| (Some(1), format!("the header cannot be read: {e}")))?
        .iter()
        .map(String::from)
        .collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            (line, format!("not a CSV row: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let fields = header
            .iter()
            .cloned()
            .zip(record.iter().map(String::from))
            .collect();
        rows.push((line, Row::Csv(fields)));
    }
    Ok(rows)
}

/// One slice as the harness may name it, in display order within its series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceIdentity {
    pub file_name: String,
    pub sop_instance_uid: String,
    pub instance_number: Option<i32>,
}

/// A key image as a harness names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyImageRef {
    DisplayIndex(u32),
    InstanceNumber(i32),
    SopInstanceUid(String),
    FileName(String),
}

impl KeyImageRef {
    /// `12` display index, `#12` InstanceNumber, `1.2.840…` SOP Instance UID, anything else a
    /// file name (its last path component); with an optional `SERIES:` in front.
    pub fn parse(text: &str) -> (Option<&str>, KeyImageRef) {
        let (series, reference) = match text.split_once(':') {
            Some((series, rest)) if !series.contains(['/', '\\']) => (Some(series), rest),
            _ => (None, text),
        };
        let reference = reference.trim();
        let parsed = if let Ok(index) = reference.parse::<u32>() {
            KeyImageRef::DisplayIndex(index)
        } else if let Some(number) = reference.strip_prefix('#').and_then(|n| n.parse().ok()) {
            KeyImageRef::InstanceNumber(number)
        } else if reference.matches('.').count() >= 2
            && reference.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            KeyImageRef::SopInstanceUid(reference.to_owned())
        } else {
            let name = reference.rsplit(['/', '\\']).next().unwrap_or(reference);
            KeyImageRef::FileName(name.to_owned())
        };
        (series, parsed)
    }
}

/// The display index `text` names among `series` (id and slices in display order), or why not.
pub fn resolve_key_image(
    text: &str,
    series: &[(String, Vec<SliceIdentity>)],
) -> Result<SliceRef, String> {
    let (named, reference) = KeyImageRef::parse(text);
    let candidates: Vec<&(String, Vec<SliceIdentity>)> = match named {
        Some(id) => series.iter().filter(|(s, _)| s == id).collect(),
        None => series.iter().collect(),
    };
    if candidates.is_empty() {
        return Err(format!(
            "{text:?}: no series {:?} in this case",
            named.unwrap_or_default()
        ));
    }
    let found: Vec<SliceRef> = candidates
        .iter()
        .filter_map(|(id, slices)| {
            let index = match &reference {
                KeyImageRef::DisplayIndex(index) => {
                    ((*index as usize) < slices.len().max(1)).then_some(*index as usize)
                }
                KeyImageRef::InstanceNumber(n) => {
                    slices.iter().position(|s| s.instance_number == Some(*n))
                }
                KeyImageRef::SopInstanceUid(uid) => {
                    slices.iter().position(|s| &s.sop_instance_uid == uid)
                }
                KeyImageRef::FileName(name) => slices.iter().position(|s| &s.file_name == name),
            }?;
            Some(SliceRef {
                series: id.clone(),
                slice: index as u32,
            })
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("{text:?} names no slice of this case")),
        _ => Err(format!(
            "{text:?} fits slices of several series ({}): write SERIES:{text}",
            found
                .iter()
                .map(|r| r.series.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What [`add_to_bundle`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    pub added: usize,
    /// Lines `responses.jsonl` already held with the same answer.
    pub already_there: usize,
}

/// Each series of a case (its id) with its slices' identities in display order.
type CaseSlices = Vec<(String, Vec<SliceIdentity>)>;

/// Adds a harness's responses to the bundle at `dir`'s `responses.jsonl` (`neurorater
/// import-responses`). Cases are named by case id, or through `key` (the scaffold's key: original
/// StudyInstanceUID, accession number or source → case id); tasks must exist. Nothing is written
/// unless every line fits; a line the file already holds with the same answer is counted, not
/// written twice; the same response with another answer is a problem (it needs a new sample).
pub fn add_to_bundle(
    dir: &Path,
    responses: Vec<HarnessResponse>,
    file: &Path,
    key: Option<&Path>,
    progress: &dyn crate::progress::Progress,
) -> Result<Added, Vec<Problem>> {
    let bundle = crate::bundle::load(dir, progress)?;
    let shown = file.display().to_string();
    let mut problems = Vec::new();
    let mut problem = |line, field: &str, message: String| {
        problems.push(Problem::on_line(&shown, line, field, message));
    };
    let key_rows = match key {
        Some(key) => read_key(key).map_err(|message| {
            vec![Problem {
                file: key.display().to_string(),
                line: None,
                field: "-".into(),
                message,
            }]
        })?,
        None => Vec::new(),
    };
    let existing: BTreeMap<crate::model::ResponseKey, &str> = bundle
        .responses
        .iter()
        .map(|r| (r.value.key(), r.value.answer.as_str()))
        .collect();
    let mut added = Vec::new();
    let mut already_there = 0;
    // Read once per case that names key images: the bundle's own slices, as a harness run on
    // the bundle's files names them.
    let mut slice_identities: BTreeMap<String, Result<CaseSlices, String>> = BTreeMap::new();
    let mut key_images_added: BTreeMap<(String, String), Vec<SliceRef>> = BTreeMap::new();
    for response in responses {
        let case_id = if bundle.cases.iter().any(|c| c.case.id == response.case_ref) {
            response.case_ref.clone()
        } else if let Some(row) = key_rows.iter().find(|row| {
            let tail = format!("/{}", response.case_ref);
            row[1..]
                .iter()
                .any(|v| !v.is_empty() && (*v == response.case_ref || v.ends_with(&tail)))
        }) {
            row[0].clone()
        } else {
            problem(
                response.line,
                "case_id",
                format!(
                    "{:?} is no case of the bundle{}",
                    response.case_ref,
                    if key.is_some() {
                        " nor a study of the key"
                    } else {
                        " (give --key to name studies by their original ids)"
                    }
                ),
            );
            continue;
        };
        let Some(case) = bundle.cases.iter().find(|c| c.case.id == case_id) else {
            problem(
                response.line,
                "case_id",
                format!("the key names {case_id:?}, which the bundle does not hold"),
            );
            continue;
        };
        if !case.case.tasks.iter().any(|t| t.id == response.task_id) {
            problem(
                response.line,
                "task_id",
                format!(
                    "case {case_id:?} has no task {:?}: add it to its case.json first",
                    response.task_id
                ),
            );
            continue;
        }
        if !response.key_images.is_empty() {
            let identities = slice_identities
                .entry(case_id.clone())
                .or_insert_with(|| bundle_slices(&bundle.dir, case));
            let identities = match identities {
                Ok(identities) => identities,
                Err(message) => {
                    problem(response.line, "key_images", message.clone());
                    continue;
                }
            };
            let wanted = key_images_added
                .entry((case_id.clone(), response.task_id.clone()))
                .or_default();
            for reference in &response.key_images {
                match resolve_key_image(reference, identities) {
                    Ok(slice) if !wanted.contains(&slice) => wanted.push(slice),
                    Ok(_) => {}
                    Err(message) => problem(response.line, "key_images", message),
                }
            }
        }
        let at = response.line;
        let line = response.into_line(case_id);
        match existing.get(&line.key()) {
            Some(answer) if *answer == line.answer => already_there += 1,
            Some(_) => problem(
                at,
                "answer",
                format!(
                    "responses.jsonl already holds case {:?}, task {:?}, model {:?}, sample {} with \
                     another answer: give this one another sample",
                    line.case_id, line.task_id, line.model, line.sample
                ),
            ),
            None => added.push(line),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let target = bundle.dir.join(crate::bundle::RESPONSES_FILE);
    let write_problem = |message: String| {
        vec![Problem {
            file: target.display().to_string(),
            line: None,
            field: "-".into(),
            message,
        }]
    };
    let cases = with_key_images(&bundle, key_images_added);
    let mut text = std::fs::read_to_string(&target)
        .map_err(|e| write_problem(format!("cannot be read: {e}")))?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for line in &added {
        text.push_str(&serde_json::to_string(line).map_err(|e| write_problem(e.to_string()))?);
        text.push('\n');
    }
    // Each file written beside and renamed: whole before or after, never half-written. The tasks'
    // key images go first, so responses never name slices their task does not show.
    for (path, case) in cases {
        let mut json =
            serde_json::to_string_pretty(&case).map_err(|e| write_problem(e.to_string()))?;
        json.push('\n');
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, json)
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| {
                vec![Problem {
                    file: path.display().to_string(),
                    line: None,
                    field: "-".into(),
                    message: format!("cannot be written: {e}"),
                }]
            })?;
    }
    let partial = target.with_extension("jsonl.partial");
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, &target))
        .map_err(|e| write_problem(format!("cannot be written: {e}")))?;
    Ok(Added {
        added: added.len(),
        already_there,
    })
}

/// The case files whose tasks gain key images, with where each goes: a key image a response names
/// is one its task shows (the rater sees the slices the model saw).
fn with_key_images(
    bundle: &crate::bundle::Bundle,
    added: BTreeMap<(String, String), Vec<SliceRef>>,
) -> Vec<(std::path::PathBuf, crate::model::CaseFile)> {
    let mut changed: BTreeMap<String, crate::model::CaseFile> = BTreeMap::new();
    for ((case_id, task_id), slices) in added {
        let Some(found) = bundle.cases.iter().find(|c| c.case.id == case_id) else {
            continue;
        };
        let case = changed
            .entry(found.file.clone())
            .or_insert_with(|| found.case.clone());
        if let Some(task) = case.tasks.iter_mut().find(|t| t.id == task_id) {
            for slice in slices {
                if !task.key_images.contains(&slice) {
                    task.key_images.push(slice);
                }
            }
        }
    }
    changed
        .into_iter()
        .filter(|(file, case)| {
            bundle
                .cases
                .iter()
                .any(|c| &c.file == file && c.case != *case)
        })
        .map(|(file, case)| (bundle.dir.join(file), case))
        .collect()
}

/// How a harness run on the bundle's own files names their slices: the series' file names, and
/// for DICOM the SOP Instance UIDs and InstanceNumbers in them, in display order. A NIfTI series
/// is named by display index only.
fn bundle_slices(
    dir: &Path,
    case: &crate::bundle::BundleCase,
) -> Result<Vec<(String, Vec<SliceIdentity>)>, String> {
    case.case
        .series
        .iter()
        .zip(&case.series)
        .map(|(spec, images)| {
            if spec.kind == crate::model::SeriesKind::Nifti {
                return Ok((spec.id.clone(), Vec::new()));
            }
            let slices = images
                .iter()
                .map(|image| {
                    let file_name = image.path.rsplit('/').next().unwrap_or_default().to_owned();
                    let (sop_instance_uid, instance_number) = match spec.kind {
                        crate::model::SeriesKind::Dicom => {
                            let meta = imaging::read_dicom_meta(&dir.join(&image.path))
                                .map_err(|e| e.to_string())?;
                            (meta.sop_instance_uid, meta.instance_number)
                        }
                        _ => (String::new(), None),
                    };
                    Ok(SliceIdentity {
                        file_name,
                        sop_instance_uid,
                        instance_number,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok((spec.id.clone(), slices))
        })
        .collect()
}

/// The rows of a scaffold key: case id, StudyInstanceUID, accession number, source.
fn read_key(path: &Path) -> Result<Vec<[String; 4]>, String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("cannot be read: {e}"))?;
    reader
        .records()
        .map(|record| {
            let record = record.map_err(|e| format!("not a key row: {e}"))?;
            let field = |i: usize| record.get(i).unwrap_or_default().to_owned();
            Ok([field(0), field(1), field(2), field(3)])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slices() -> Vec<(String, Vec<SliceIdentity>)> {
        let slice = |file: &str, sop: &str, n| SliceIdentity {
            file_name: file.into(),
            sop_instance_uid: sop.into(),
            instance_number: Some(n),
        };
        vec![
            (
                "flair".into(),
                vec![slice("IM9", "1.2.3.1", 1), slice("IM1", "1.2.3.2", 2)],
            ),
            (
                "t2".into(),
                vec![
                    slice("X", "1.2.4.1", 1),
                    slice("Y", "1.2.4.2", 2),
                    slice("Z", "1.2.4.3", 3),
                ],
            ),
        ]
    }

    fn check(text: &str, expected: Result<(&str, u32), &str>) {
        let got = resolve_key_image(text, &slices());
        match expected {
            Ok((series, slice)) => assert_eq!(
                got,
                Ok(SliceRef {
                    series: series.into(),
                    slice
                }),
                "{text}"
            ),
            Err(message) => assert!(
                got.as_ref().is_err_and(|e| e.contains(message)),
                "{text}: {got:?}"
            ),
        }
    }

    #[test]
    fn key_images_by_uid_file_instance_number_or_index_resolve_to_display_indices() {
        check("1.2.4.2", Ok(("t2", 1)));
        check("/export/DIR000/IM1", Ok(("flair", 1)));
        check("t2:#3", Ok(("t2", 2)));
        check("flair:0", Ok(("flair", 0)));
        check("t2:2", Ok(("t2", 2)));
        check("#2", Err("several series (flair, t2)"));
        check("flair:2", Err("names no slice"));
        check("swi:1", Err("no series \"swi\""));
    }

    #[test]
    fn a_map_names_known_fields_and_the_required_ones() {
        let map: ColumnMap = "answer=prediction, case_id=doc.id".parse().expect("a map");
        assert_eq!(map.0[&Field::CaseId], "doc.id");
        assert!("answer=prediction"
            .parse::<ColumnMap>()
            .is_err_and(|e| e.contains("case_id")));
        assert!("answr=x,case_id=y"
            .parse::<ColumnMap>()
            .is_err_and(|e| e.contains("not a field")));
    }

    #[test]
    fn csv_and_nested_jsonl_read_alike_and_samples_are_numbered_in_file_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let csv = dir.path().join("out.csv");
        std::fs::write(
            &csv,
            "index,question_id,prediction\nS1,dx,MS\nS1,dx,\"NMOSD, then MS\"\n",
        )
        .expect("write");
        let map: ColumnMap = "case_id=index,task_id=question_id,answer=prediction"
            .parse()
            .expect("map");
        let defaults = Defaults {
            model: Some("vlm-a".into()),
            task_id: None,
        };
        let read = read_responses(&csv, &map, &defaults).expect("read");
        assert_eq!(
            read.iter()
                .map(|r| (r.line, r.sample, r.answer.as_str()))
                .collect::<Vec<_>>(),
            [(2, 0, "MS"), (3, 1, "NMOSD, then MS")]
        );
        let jsonl = dir.path().join("samples.jsonl");
        std::fs::write(
            &jsonl,
            "{\"doc\": {\"id\": \"S1\"}, \"filtered_resps\": [\"MS\"]}\n\n{\"doc\": {}}\n",
        )
        .expect("write");
        let map: ColumnMap = "case_id=doc.id,answer=filtered_resps.0"
            .parse()
            .expect("map");
        let defaults = Defaults {
            model: Some("m".into()),
            task_id: Some("dx".into()),
        };
        let problems = read_responses(&jsonl, &map, &defaults).expect_err("line 3 lacks both");
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                format!(
                    "{}:3: case_id: no column \"doc.id\" (mapped to case_id)",
                    jsonl.display()
                ),
                format!(
                    "{}:3: answer: no column \"filtered_resps.0\" (mapped to answer)",
                    jsonl.display()
                ),
            ]
        );
    }
}
