//! Clinicians' ratings from the long CSV of docs/formats.md §3 (`item,rater,score[,dimension][,...]`)
//! into the store, as submitted first reads — for a reader study done outside the app, and for
//! the demo study's clinicians.
//!
//! - `item` is the key of `responses.jsonl`, `case/task/model/sample`, and must name a stored
//!   response; `case` and the grouping columns the report derives from the database
//!   (`disease_group`, `modality`, `task_family`, `level`, `model`) must agree with it when given;
//! - a row whose rater is a stored grader is compared with that grader's stored score and not
//!   stored again (grader scores come from `grader.jsonl` only);
//! - the optional `rater_role` column gives a new rater's role; without it new raters are
//!   assumed to be [`ASSUMED_ROLE`]s and the summary names them;
//! - scores must be on the rubric's scale of their dimension, and the dimension must apply to the
//!   item's task family (`rating::rules`, as for a rating made in the app);
//! - a `score` of `NA` marks the dimension not applicable, where the rubric allows it for the
//!   item's task family (the same rules); a grader's row cannot be `NA`.
//!
//! **Invariants:** every row is checked before anything is written, and all problems are
//! reported as `FILE:LINE: field: message`; the write is one transaction with its audit entry;
//! importing the same file again changes nothing, and a row that contradicts a stored rating is
//! refused (ratings are never overwritten by an import).

use crate::bundle::Problem;
use crate::model::{Rubric, Scale, TaskFamily};
use crate::progress::Progress;
use crate::rating::rules;
use crate::rating::table::{self, ReadKey, WholeRating};
use crate::rating::{RaterRole, RatingEdit, RatingStatus};
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, ImportError};
use calibration::csv_input::is_not_applicable_score;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The column naming a rater's role; a property of the rater, so the report ignores it.
pub const ROLE_COLUMN: &str = calibration::csv_input::RATER_ROLE_COLUMN;
/// The role given to a new rater when the file has no `rater_role` column.
pub const ASSUMED_ROLE: &str = "neuroradiologist";
const ROLES: [&str; 4] = ["neuroradiologist", "neurologist", "resident", "curator"];
/// Who the audit log names for a ratings import.
const ACTOR: &str = "import-ratings";
/// Grouping columns that are facts of the stored response, checked against it.
const DERIVED_COLUMNS: [&str; 6] = [
    "case",
    "disease_group",
    "modality",
    "task_family",
    "level",
    "model",
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RatingsImportSummary {
    /// Score rows in the file.
    pub rows: usize,
    /// Ratings (one per response and clinician) written now.
    pub ratings_added: usize,
    /// Ratings the store already held with exactly these scores.
    pub ratings_already_stored: usize,
    /// Rows by a grader, found equal to its stored score and not stored again.
    pub grader_rows_checked: usize,
    /// Raters created by this import.
    pub raters_added: Vec<String>,
    /// Raters created with [`ASSUMED_ROLE`] because the file gives no role.
    pub roles_assumed: Vec<String>,
}

/// A stored response as the file's rows are checked against it.
struct StoredResponse {
    id: i64,
    study: i64,
    facts: BTreeMap<&'static str, String>,
}

/// A rating being assembled from the file's rows: one per (response, rater).
#[derive(Default)]
struct PendingRating {
    item: String,
    overall: Option<f64>,
    dimensions: BTreeMap<String, f64>,
    /// The dimensions a row marked not applicable (`NA`).
    not_applicable: BTreeSet<String>,
    /// The line of each dimension's row (`overall` included), to name the row of a conflict.
    lines: BTreeMap<String, usize>,
}

struct StoredRating {
    overall: Option<f64>,
    dimensions: BTreeMap<String, f64>,
    not_applicable: BTreeSet<String>,
    submitted: bool,
}

/// Everything in the store the file is checked against.
struct StoreView {
    responses: BTreeMap<String, Vec<StoredResponse>>,
    studies: BTreeMap<i64, (String, Rubric)>,
    /// (response, grader) → overall score and dimension scores.
    grader_scores: BTreeMap<(i64, String), (f64, BTreeMap<String, f64>)>,
    graders: BTreeSet<String>,
    /// name → (id, role)
    raters: BTreeMap<String, (i64, String)>,
    /// (response, rater id) → the first read.
    ratings: BTreeMap<(i64, i64), StoredRating>,
}

/// Imports the ratings in `path`; see the module documentation for the rules.
pub fn import_ratings_csv(
    store: &mut Store,
    path: &Path,
    progress: &dyn Progress,
) -> Result<RatingsImportSummary, ImportError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    // The report's parser is the gate: what it accepts, `neurorater calibrate --ratings` reads
    // the same way; only then are rows matched with the store.
    calibration::csv_input::parse_long_csv(&text, &file).map_err(|e| {
        ImportError::Invalid(
            e.problems
                .into_iter()
                .map(|p| Problem {
                    file: p.file,
                    line: Some(p.line),
                    field: p.field,
                    message: p.message,
                })
                .collect(),
        )
    })?;
    let rows = rows_with_lines(&text).map_err(|message| {
        ImportError::Invalid(vec![Problem {
            file: file.clone(),
            line: None,
            field: "(row)".into(),
            message,
        }])
    })?;
    progress.phase("checking ratings", rows.len() as u64);
    let view = StoreView::read(store)?;
    let plan = check_rows(&file, &rows, &view, progress)?;
    progress.phase("writing ratings", 1);
    let summary = plan.summary.clone();
    if !plan.new_raters.is_empty() || !plan.new_ratings.is_empty() {
        store.write(|w| {
            let mut rater_ids: BTreeMap<String, i64> = view
                .raters
                .iter()
                .map(|(name, (id, _))| (name.clone(), *id))
                .collect();
            for (name, role) in &plan.new_raters {
                let key = crate::rating::insert_rater(w, name, *role, None)?;
                rater_ids.insert(name.clone(), key);
            }
            let now = crate::store::now(w.tx()).map_err(|e| w.fail("reading the clock", e))?;
            for ((response, rater), rating) in &plan.new_ratings {
                // A ratings file carries scores only: no correctness, confidence, comment or time.
                let scores = RatingEdit {
                    overall: rating.overall,
                    not_applicable: rating.not_applicable.clone(),
                    dimensions: rating.dimensions.clone(),
                    correctness: None,
                    confidence: None,
                    comment: String::new(),
                    seconds_on_task: 0.0,
                };
                let key = ReadKey {
                    response: *response,
                    rater: rater_ids[rater],
                    read_no: 1,
                };
                let whole = WholeRating {
                    scores: &scores,
                    status: RatingStatus::Submitted,
                    updated_at: &now,
                    submitted_at: Some(&now),
                    rubric_version: None,
                };
                table::insert_whole(w.tx(), key, &whole)
                    .map_err(|e| w.fail("adding ratings", e))?;
                // Each rating's own entry holds its state, so `audit verify` can compare the
                // table with it (rating/fold.rs).
                let (id, view) =
                    crate::rating::stored_rating(w.tx(), rater_ids[rater], *response, 1)
                        .map_err(|e| w.fail("reading back an added rating", e))?
                        .ok_or_else(|| Error::Corrupt {
                            what: format!(
                                "a rating of response {response} vanished while imported"
                            ),
                        })?;
                w.audit(&Entry {
                    actor: ACTOR,
                    action: "import rating",
                    entity: &format!("rating:{id}"),
                    before: None,
                    after: Some(&serde_json::to_value(&view).expect("a rating serialises")),
                })?;
            }
            let mut after = serde_json::to_value(&summary).unwrap_or_default();
            after["per_rating_entries"] = serde_json::Value::Bool(true);
            w.audit(&Entry {
                actor: ACTOR,
                action: "import ratings",
                entity: &format!("ratings-file:{file}"),
                before: None,
                after: Some(&after),
            })
        })?;
    }
    progress.advance(1);
    Ok(summary)
}

/// A data row: its line and its fields by (trimmed) column name.
type Row = (usize, BTreeMap<String, String>);

/// The file's data rows, each with the line it starts on (the gate has checked their shape).
fn rows_with_lines(text: &str) -> Result<Vec<Row>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        // The report's parser skips a line holding only blanks; so does this.
        if record.len() == 1 && record[0].trim().is_empty() {
            continue;
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
        let fields = header
            .iter()
            .zip(record.iter())
            .map(|(name, value)| (name.clone(), value.trim().to_owned()))
            .collect();
        rows.push((line, fields));
    }
    Ok(rows)
}

struct Plan {
    summary: RatingsImportSummary,
    /// name → role
    new_raters: BTreeMap<String, RaterRole>,
    /// (response, rater name) → rating
    new_ratings: BTreeMap<(i64, String), PendingRating>,
}

/// A row's score cell, read once: a score, or `NA` (the dimension marked not applicable).
#[derive(Clone, Copy)]
enum ScoreCell {
    /// NaN when the cell is no number: then on no scale.
    Score(f64),
    NotApplicable,
}

impl ScoreCell {
    fn read(cell: &str) -> ScoreCell {
        if is_not_applicable_score(cell) {
            ScoreCell::NotApplicable
        } else {
            ScoreCell::Score(cell.parse().unwrap_or(f64::NAN))
        }
    }
}

fn check_rows(
    file: &str,
    rows: &[Row],
    view: &StoreView,
    progress: &dyn Progress,
) -> Result<Plan, ImportError> {
    let mut problems: Vec<Problem> = Vec::new();
    let mut problem = |line: usize, field: &str, message: String| {
        problems.push(Problem {
            file: file.to_owned(),
            line: Some(line),
            field: field.to_owned(),
            message,
        })
    };
    let mut summary = RatingsImportSummary {
        rows: rows.len(),
        ..Default::default()
    };
    // Role given in the file per rater, and the line it was first given on.
    let mut roles_in_file: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let mut pending: BTreeMap<(i64, String), PendingRating> = BTreeMap::new();
    for (index, (line, fields)) in rows.iter().enumerate() {
        let line = *line;
        progress.advance(index as u64 + 1);
        let field = |name: &str| fields.get(name).map(String::as_str).unwrap_or("");
        let (item, rater) = (field("item"), field("rater"));
        let dimension = match field("dimension") {
            "" => "overall",
            given => given,
        };
        let Some(response) = view.response(item, line, &mut problem) else {
            continue;
        };
        let mut row_ok = true;
        for column in DERIVED_COLUMNS {
            let given = field(column);
            let stored = &response.facts[column];
            if fields.contains_key(column) && !given.is_empty() && given != stored {
                problem(
                    line,
                    column,
                    format!("`{given}`, but the stored response `{item}` has `{stored}`"),
                );
                row_ok = false;
            }
        }
        let (study_id, rubric) = &view.studies[&response.study];
        let Some(scale) = scale_of(rubric, dimension) else {
            let known: Vec<&str> = std::iter::once("overall")
                .chain(rubric.dimensions.iter().map(|d| d.id.as_str()))
                .collect();
            problem(
                line,
                "dimension",
                format!(
                    "`{dimension}` is not a dimension of study `{study_id}`'s rubric ({})",
                    known.join(", ")
                ),
            );
            continue;
        };
        // The table's CHECK admits only the three families, so the family parses.
        let family: Option<TaskFamily> =
            serde_json::from_value(response.facts["task_family"].clone().into()).ok();
        if let Some(Err(refused)) = family
            .filter(|_| dimension != "overall")
            .map(|family| rules::applying_dimension(rubric, family, dimension))
        {
            problem(line, "dimension", format!("`{item}`: {}", refused.message));
            continue;
        }
        let cell = ScoreCell::read(field("score"));
        match cell {
            ScoreCell::NotApplicable => {
                // The gate refused `NA` on `overall`; whether the rubric allows the mark on this
                // dimension for this task is the rating rules' to say, as for a mark in the app.
                let marked = RatingEdit {
                    overall: None,
                    dimensions: BTreeMap::new(),
                    not_applicable: BTreeSet::from([dimension.to_owned()]),
                    correctness: None,
                    confidence: None,
                    comment: String::new(),
                    seconds_on_task: 0.0,
                };
                let refused = family
                    .map(|family| rules::rating_violations(rubric, family, &marked))
                    .unwrap_or_default();
                if let Some(refused) = refused.first() {
                    problem(line, "score", format!("`{item}`: {}", refused.message));
                    continue;
                }
                if view.graders.contains(rater) {
                    problem(
                        line,
                        "rater",
                        format!(
                            "`{rater}` is a grader: its scores come from grader.jsonl, and `NA` \
                             marks a clinician's rating"
                        ),
                    );
                    continue;
                }
            }
            ScoreCell::Score(score) => {
                if !scale.admits(score) {
                    problem(
                        line,
                        "score",
                        format!(
                            "{score} is not on the `{dimension}` scale ({} to {} in steps of {})",
                            scale.min, scale.max, scale.step
                        ),
                    );
                    continue;
                }
                if view.graders.contains(rater) {
                    if check_grader_row(
                        view,
                        response,
                        rater,
                        item,
                        dimension,
                        score,
                        line,
                        &mut problem,
                    ) {
                        summary.grader_rows_checked += 1;
                    }
                    continue;
                }
            }
        }
        let role = field(ROLE_COLUMN);
        if !role.is_empty()
            && !check_role(view, &mut roles_in_file, rater, role, line, &mut problem)
        {
            row_ok = false;
        }
        if !row_ok {
            continue;
        }
        let rating = pending
            .entry((response.id, rater.to_owned()))
            .or_insert_with(|| PendingRating {
                item: item.to_owned(),
                ..Default::default()
            });
        match cell {
            ScoreCell::NotApplicable => {
                rating.not_applicable.insert(dimension.to_owned());
            }
            ScoreCell::Score(score) if dimension == "overall" => rating.overall = Some(score),
            ScoreCell::Score(score) => {
                rating.dimensions.insert(dimension.to_owned(), score);
            }
        }
        rating.lines.insert(dimension.to_owned(), line);
    }

    let new_ratings = unstored(view, pending, &mut summary, &mut problem);
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(ImportError::Invalid(problems));
    }

    let new_raters = new_raters(view, &new_ratings, &roles_in_file, &mut summary);
    summary.ratings_added = new_ratings.len();
    Ok(Plan {
        summary,
        new_raters,
        new_ratings,
    })
}

/// A grader's row checked against its stored score (grader scores come from grader.jsonl,
/// never from a ratings file); whether it agrees.
#[allow(clippy::too_many_arguments)]
fn check_grader_row(
    view: &StoreView,
    response: &StoredResponse,
    rater: &str,
    item: &str,
    dimension: &str,
    score: f64,
    line: usize,
    problem: &mut impl FnMut(usize, &str, String),
) -> bool {
    let Some((overall, dimensions)) = view.grader_scores.get(&(response.id, rater.to_owned()))
    else {
        problem(
            line,
            "rater",
            format!(
                "`{rater}` is a grader and has no stored score for `{item}`; grader \
                 scores are imported from grader.jsonl, not from a ratings file"
            ),
        );
        return false;
    };
    let stored = if dimension == "overall" {
        Some(*overall)
    } else {
        dimensions.get(dimension).copied()
    };
    match stored {
        Some(stored) if (stored - score).abs() < 1e-9 => true,
        Some(stored) => {
            problem(
                line,
                "score",
                format!(
                    "grader `{rater}` scored `{item}` {stored} on `{dimension}` in \
                     grader.jsonl, here {score}"
                ),
            );
            false
        }
        None => {
            problem(
                line,
                "dimension",
                format!(
                    "grader `{rater}` gave no `{dimension}` score for `{item}` in \
                     grader.jsonl"
                ),
            );
            false
        }
    }
}

/// A row's role: one of [`ROLES`], the stored rater's, and the same on every line of the file
/// (the first line giving it is remembered in `roles_in_file`); whether it is.
fn check_role(
    view: &StoreView,
    roles_in_file: &mut BTreeMap<String, (String, usize)>,
    rater: &str,
    role: &str,
    line: usize,
    problem: &mut impl FnMut(usize, &str, String),
) -> bool {
    if !ROLES.contains(&role) {
        problem(
            line,
            ROLE_COLUMN,
            format!("`{role}` is not a role ({})", ROLES.join(", ")),
        );
        return false;
    }
    if let Some((_, stored)) = view.raters.get(rater).filter(|(_, r)| r != role) {
        problem(
            line,
            ROLE_COLUMN,
            format!("`{rater}` is stored as a {stored}, here `{role}`"),
        );
        return false;
    }
    match roles_in_file.get(rater) {
        Some((first, first_line)) if first != role => {
            problem(
                line,
                ROLE_COLUMN,
                format!("`{rater}` is a {first} at line {first_line}, here `{role}`"),
            );
            false
        }
        Some(_) => true,
        None => {
            roles_in_file.insert(rater.to_owned(), (role.to_owned(), line));
            true
        }
    }
}

/// The file's ratings the database does not hold yet. One it holds the same is counted as
/// already stored; one it holds otherwise is a problem: an import never overwrites a rating.
fn unstored(
    view: &StoreView,
    pending: BTreeMap<(i64, String), PendingRating>,
    summary: &mut RatingsImportSummary,
    problem: &mut impl FnMut(usize, &str, String),
) -> BTreeMap<(i64, String), PendingRating> {
    let mut new_ratings = BTreeMap::new();
    for ((response, rater), rating) in pending {
        let stored = view
            .raters
            .get(&rater)
            .and_then(|(id, _)| view.ratings.get(&(response, *id)));
        match stored {
            None => {
                new_ratings.insert((response, rater), rating);
            }
            Some(stored) => match conflict(stored, &rating) {
                None => summary.ratings_already_stored += 1,
                Some((dimension, message)) => {
                    let line = rating
                        .lines
                        .get(&dimension)
                        .or_else(|| rating.lines.values().min())
                        .copied()
                        .unwrap_or(0);
                    problem(
                        line,
                        "score",
                        format!(
                            "`{rater}` already has a rating of `{}`: {message}; an import never \
                             overwrites a rating",
                            rating.item
                        ),
                    );
                }
            },
        }
    }
    new_ratings
}

/// The raters the new ratings name that the database does not hold, with their role: the
/// file's, else [`ASSUMED_ROLE`] (said in the summary).
fn new_raters(
    view: &StoreView,
    new_ratings: &BTreeMap<(i64, String), PendingRating>,
    roles_in_file: &BTreeMap<String, (String, usize)>,
    summary: &mut RatingsImportSummary,
) -> BTreeMap<String, RaterRole> {
    let mut new_raters = BTreeMap::new();
    for (_, rater) in new_ratings.keys() {
        if view.raters.contains_key(rater) || new_raters.contains_key(rater) {
            continue;
        }
        let role = match roles_in_file.get(rater) {
            Some((role, _)) => role.as_str(),
            None => {
                summary.roles_assumed.push(rater.clone());
                ASSUMED_ROLE
            }
        };
        // `check_role` admitted only the spellings of `ROLES`, which are RaterRole's.
        let role = crate::store::parse_enum(role).expect("a role check_role admitted");
        summary.raters_added.push(rater.clone());
        new_raters.insert(rater.clone(), role);
    }
    new_raters
}

/// How a stored rating differs from the file's: the dimension first found different, and what
/// differs. `None` when they are the same submitted rating.
fn conflict(stored: &StoredRating, file: &PendingRating) -> Option<(String, String)> {
    if !stored.submitted {
        return Some((
            "overall".into(),
            "the stored one is a draft still being worked on".into(),
        ));
    }
    let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() < 1e-9,
        (None, None) => true,
        _ => false,
    };
    let shown = |v: Option<f64>| v.map_or_else(|| "none".to_owned(), |v| v.to_string());
    if !same(stored.overall, file.overall) {
        return Some((
            "overall".into(),
            format!(
                "stored overall {}, here {}",
                shown(stored.overall),
                shown(file.overall)
            ),
        ));
    }
    if stored.not_applicable != file.not_applicable {
        let differing = stored
            .not_applicable
            .symmetric_difference(&file.not_applicable)
            .next()
            .cloned()
            .unwrap_or_default();
        let marked = |set: &BTreeSet<String>| {
            if set.contains(&differing) {
                "not applicable"
            } else {
                "not marked"
            }
        };
        return Some((
            differing.clone(),
            format!(
                "stored {differing} {}, here {}",
                marked(&stored.not_applicable),
                marked(&file.not_applicable)
            ),
        ));
    }
    let dimensions: BTreeSet<&String> = stored
        .dimensions
        .keys()
        .chain(file.dimensions.keys())
        .collect();
    for dimension in dimensions {
        let (a, b) = (
            stored.dimensions.get(dimension).copied(),
            file.dimensions.get(dimension).copied(),
        );
        if !same(a, b) {
            return Some((
                dimension.clone(),
                format!("stored {dimension} {}, here {}", shown(a), shown(b)),
            ));
        }
    }
    None
}

fn scale_of<'a>(rubric: &'a Rubric, dimension: &str) -> Option<&'a Scale> {
    if dimension == "overall" {
        return Some(&rubric.overall);
    }
    rubric
        .dimensions
        .iter()
        .find(|d| d.id == dimension)
        .map(|d| &d.scale)
}

impl StoreView {
    fn read(store: &Store) -> Result<StoreView, Error> {
        let conn = store.read();
        let fail = |e| Error::database(store.path(), "reading the store to check ratings", e);
        let mut studies = BTreeMap::new();
        let mut stmt = conn
            .prepare("SELECT id, study_id, rubric_json FROM studies")
            .map_err(fail)?;
        let mut rows = stmt.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let study_id: String = row.get(1).map_err(fail)?;
            let rubric =
                crate::store::stored_rubric(&study_id, &row.get::<_, String>(2).map_err(fail)?)?;
            studies.insert(row.get(0).map_err(fail)?, (study_id, rubric));
        }
        drop(rows);
        drop(stmt);

        let mut responses: BTreeMap<String, Vec<StoredResponse>> = BTreeMap::new();
        let mut stmt = conn
            .prepare(
                "SELECT r.id, c.study, c.case_id, t.task_id, r.model, r.sample, c.disease_group,
                        c.modality, t.family, t.level
                 FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id",
            )
            .map_err(fail)?;
        let mut rows = stmt.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let text = |i| row.get::<_, String>(i).map_err(fail);
            let (case, task, model) = (text(2)?, text(3)?, text(4)?);
            let sample: i64 = row.get(5).map_err(fail)?;
            let level: i64 = row.get(9).map_err(fail)?;
            let item = format!("{case}/{task}/{model}/{sample}");
            let facts = BTreeMap::from([
                ("case", case),
                ("disease_group", text(6)?),
                ("modality", text(7)?),
                ("task_family", text(8)?),
                ("level", level.to_string()),
                ("model", model),
            ]);
            responses.entry(item).or_default().push(StoredResponse {
                id: row.get(0).map_err(fail)?,
                study: row.get(1).map_err(fail)?,
                facts,
            });
        }
        drop(rows);
        drop(stmt);

        let mut grader_scores = BTreeMap::new();
        let mut graders = BTreeSet::new();
        let mut stmt = conn
            .prepare("SELECT response, grader, score, dimensions_json FROM grader_scores")
            .map_err(fail)?;
        let mut rows = stmt.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let grader: String = row.get(1).map_err(fail)?;
            let dimensions: Option<String> = row.get(3).map_err(fail)?;
            let dimensions = dimensions
                .and_then(|d| serde_json::from_str(&d).ok())
                .unwrap_or_default();
            graders.insert(grader.clone());
            grader_scores.insert(
                (row.get(0).map_err(fail)?, grader),
                (row.get(2).map_err(fail)?, dimensions),
            );
        }
        drop(rows);
        drop(stmt);

        let mut raters = BTreeMap::new();
        let mut stmt = conn
            .prepare("SELECT id, name, role FROM raters")
            .map_err(fail)?;
        let mut rows = stmt.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            raters.insert(
                row.get(1).map_err(fail)?,
                (row.get(0).map_err(fail)?, row.get(2).map_err(fail)?),
            );
        }
        drop(rows);
        drop(stmt);

        let mut ratings = BTreeMap::new();
        let mut stmt = conn
            .prepare(
                "SELECT response, rater, overall, dimensions_json, status, not_applicable_json
                 FROM ratings WHERE read_no = 1",
            )
            .map_err(fail)?;
        let mut rows = stmt.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let dimensions: String = row.get(3).map_err(fail)?;
            let status: String = row.get(4).map_err(fail)?;
            let not_applicable: Option<String> = row.get(5).map_err(fail)?;
            ratings.insert(
                (row.get(0).map_err(fail)?, row.get(1).map_err(fail)?),
                StoredRating {
                    overall: row.get(2).map_err(fail)?,
                    dimensions: serde_json::from_str(&dimensions).unwrap_or_default(),
                    not_applicable: not_applicable
                        .and_then(|n| serde_json::from_str(&n).ok())
                        .unwrap_or_default(),
                    submitted: status == "submitted",
                },
            );
        }
        drop(rows);
        drop(stmt);
        Ok(StoreView {
            responses,
            studies,
            grader_scores,
            graders,
            raters,
            ratings,
        })
    }

    /// The one stored response `item` names, or a problem saying why there is none.
    fn response(
        &self,
        item: &str,
        line: usize,
        problem: &mut impl FnMut(usize, &str, String),
    ) -> Option<&StoredResponse> {
        match self.responses.get(item).map(Vec::as_slice) {
            Some([only]) => Some(only),
            Some(several) => {
                let studies: Vec<&str> = several
                    .iter()
                    .map(|r| self.studies[&r.study].0.as_str())
                    .collect();
                problem(
                    line,
                    "item",
                    format!(
                        "`{item}` is a response in several studies ({}); import the ratings \
                         into a database holding one of them",
                        studies.join(", ")
                    ),
                );
                None
            }
            None => {
                problem(
                    line,
                    "item",
                    format!(
                        "`{item}` names no stored response (items are case/task/model/sample); \
                         import its study bundle first"
                    ),
                );
                None
            }
        }
    }
}
