//! Importing a study bundle: validate everything first, then write in one transaction.
//!
//! **Invariant:** a bundle with any problem leaves the database untouched (validation needs no
//! write, and conflicts with what is stored are found before the write transaction opens).
//! Re-importing a bundle changes nothing; an updated bundle adds new responses and grader scores
//! and refreshes case metadata, but never alters a stored response or grader score — ratings
//! refer to those. A changed rubric is stored by the rubric-version rule (`crate::rubric`): in
//! place before the first rating under it, a new version after.

use crate::bundle::{self, Bundle, Problem, GRADER_FILE, RESPONSES_FILE};
use crate::model::ResponseKey;
use crate::progress::Progress;
use crate::store::audit::Entry;
use crate::store::{outputs, Store, Write};
use crate::{Error, ImportError};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportSummary {
    pub study_id: String,
    pub cases: usize,
    pub series: usize,
    pub images: usize,
    pub tasks: usize,
    pub responses_added: usize,
    pub responses_already_stored: usize,
    pub grader_scores_added: usize,
    pub grader_scores_already_stored: usize,
    /// Study, case, series, image, task and ground-truth rows added or changed.
    pub rows_written: usize,
    /// PS3.15 identifying attributes found in the DICOM files and not stored.
    pub identifying_attributes_dropped: usize,
    /// How a changed rubric was stored (in place, or a new version because ratings were made
    /// under the stored one); absent when the study is new or its rubric unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rubric_change: Option<crate::rubric::SavedRubric>,
}

/// Who the audit log names for an import from this build.
const IMPORT_ACTOR: &str = "import";

/// Imports a bundle [`bundle::load`] validated (every image already read and hashed once):
/// compares it with what is stored, then writes it in one transaction.
pub fn import_bundle(
    store: &mut Store,
    bundle: &Bundle,
    progress: &dyn Progress,
) -> Result<ImportSummary, ImportError> {
    let conflicts = conflicts_with_store(store, bundle)?;
    if !conflicts.is_empty() {
        return Err(ImportError::Invalid(conflicts));
    }
    progress.phase("writing", 1);
    let summary = store.write(|w| write_bundle(w, bundle))?;
    progress.advance(1);
    Ok(summary)
}

/// Validates the bundle in `dir` and imports it ([`import_bundle`]).
pub fn import_bundle_dir(
    store: &mut Store,
    dir: &Path,
    progress: &dyn Progress,
) -> Result<ImportSummary, ImportError> {
    let bundle = bundle::load(dir, progress).map_err(ImportError::Invalid)?;
    import_bundle(store, &bundle, progress)
}

/// A stored response or grader score that the bundle now says differently.
fn conflicts_with_store(store: &Store, bundle: &Bundle) -> Result<Vec<Problem>, Error> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "comparing the bundle with the database", e);
    let mut problems = Vec::new();
    let mut response_stmt = conn
        .prepare(
            "SELECT r.id, r.answer, r.rationale, r.turns_json FROM responses r
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies s ON c.study = s.id
             WHERE s.study_id = ?1 AND c.case_id = ?2 AND t.task_id = ?3 AND r.model = ?4
               AND r.sample = ?5",
        )
        .map_err(fail)?;
    let study_id = &bundle.study.study.id;
    let mut stored_response = |key: &ResponseKey| {
        response_stmt
            .query_row(
                params![study_id, key.case_id, key.task_id, key.model, key.sample],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, Option<String>>(2)?,
                        row.get::<_, Option<String>>(3)?,
                    ))
                },
            )
            .optional()
    };
    for response in &bundle.responses {
        let r = &response.value;
        if let Some((_, answer, rationale, turns)) = stored_response(&r.key()).map_err(fail)? {
            let same = answer == r.answer
                && rationale == r.rationale
                && turns == r.turns.as_ref().map(json);
            if !same {
                problems.push(Problem {
                    file: RESPONSES_FILE.into(),
                    line: Some(response.line),
                    field: "answer".into(),
                    message: "this response is already stored with different text, and ratings \
                              may refer to it: give the new text a new sample index"
                        .into(),
                });
            }
        }
    }
    for grade in &bundle.grader {
        let g = &grade.value;
        let Some((response_id, ..)) = stored_response(&g.response_key()).map_err(fail)? else {
            continue;
        };
        let stored: Option<f64> = conn
            .query_row(
                "SELECT score FROM grader_scores WHERE response = ?1 AND grader = ?2",
                params![response_id, g.grader],
                |row| row.get(0),
            )
            .optional()
            .map_err(fail)?;
        if stored.is_some_and(|s| s != g.score) {
            problems.push(Problem {
                file: GRADER_FILE.into(),
                line: Some(grade.line),
                field: "score".into(),
                message: format!(
                    "grader {:?} already scored this response {} (now {}): a re-run is a new \
                     grader version, so give it a new grader name",
                    g.grader,
                    stored.unwrap_or_default(),
                    g.score
                ),
            });
        }
    }
    Ok(problems)
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

pub(crate) fn write_bundle(w: &Write<'_>, bundle: &Bundle) -> Result<ImportSummary, Error> {
    let study = &bundle.study;
    let (study_key, rubric, mut updated) = write_study(w, bundle)?;
    let mut summary = ImportSummary {
        study_id: study.study.id.clone(),
        identifying_attributes_dropped: bundle.identifying_attributes_found,
        rubric_change: rubric,
        ..ImportSummary::default()
    };
    for bundle_case in &bundle.cases {
        updated += write_case(w, study_key, bundle_case, &mut summary)?;
    }
    write_responses(w, study_key, bundle, &mut summary)?;
    write_grader_scores(w, study_key, bundle, &mut summary)?;

    summary.rows_written = updated;
    if updated > 0 || summary.responses_added > 0 || summary.grader_scores_added > 0 {
        let after = serde_json::to_value(&summary).unwrap_or_default();
        w.audit(&Entry {
            actor: IMPORT_ACTOR,
            action: "import bundle",
            entity: &format!("study:{}", study.study.id),
            before: None,
            after: Some(&after),
        })?;
    }
    Ok(summary)
}

/// The study's row (its rubric through the rubric-version rule): its key, the rubric change if
/// any, and the rows written.
fn write_study(
    w: &Write<'_>,
    bundle: &Bundle,
) -> Result<(i64, Option<crate::rubric::SavedRubric>, usize), Error> {
    let tx = w.tx();
    let study = &bundle.study;
    let mut updated = 0;
    let fail = |doing: &str, e| w.fail(doing, e);

    // A new study stores its rubric as version 1; a stored study's rubric changes only through
    // the rubric-version rule (`crate::rubric`), as the lead's edit in the app does.
    let inserted = tx
        .execute(
            "INSERT INTO studies (study_id, title, description, rubric_json, taxonomy_json, bundle_dir)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (study_id) DO NOTHING",
            params![
                study.study.id,
                study.study.title,
                study.study.description,
                json(&study.rubric),
                json(&bundle.taxonomy),
                bundle.dir.to_string_lossy(),
            ],
        )
        .map_err(|e| fail("storing the study", e))?;
    updated += inserted;
    updated += tx
        .execute(
            "UPDATE studies SET title = ?2, description = ?3, taxonomy_json = ?4, bundle_dir = ?5
             WHERE study_id = ?1 AND (title, description, taxonomy_json, bundle_dir) IS NOT
                (?2, ?3, ?4, ?5)",
            params![
                study.study.id,
                study.study.title,
                study.study.description,
                json(&bundle.taxonomy),
                bundle.dir.to_string_lossy(),
            ],
        )
        .map_err(|e| fail("storing the study", e))?;
    let study_key: i64 = tx
        .query_row(
            "SELECT id FROM studies WHERE study_id = ?1",
            [&study.study.id],
            |r| r.get(0),
        )
        .map_err(|e| fail("storing the study", e))?;
    let rubric = if inserted == 1 {
        crate::rubric::record_first(w, study_key, &study.rubric)?;
        None
    } else {
        crate::rubric::save(w, IMPORT_ACTOR, &study.study.id, &study.rubric)?
    };
    updated += usize::from(rubric.is_some());
    Ok((study_key, rubric, updated))
}

/// One case with its series (images, geometry), tasks and ground truth; the rows written.
fn write_case(
    w: &Write<'_>,
    study_key: i64,
    bundle_case: &crate::bundle::BundleCase,
    summary: &mut ImportSummary,
) -> Result<usize, Error> {
    use crate::store::enum_text;
    let tx = w.tx();
    let fail = |doing: &str, e| w.fail(doing, e);
    let mut updated = 0;
    let case = &bundle_case.case;
    updated += tx
        .execute(
            "INSERT INTO cases (study, case_id, disease_group, modality, age, sex, ehr_json,
                clinical_note, to_complete_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (study, case_id) DO UPDATE SET disease_group = excluded.disease_group,
                modality = excluded.modality, age = excluded.age, sex = excluded.sex,
                ehr_json = excluded.ehr_json, clinical_note = excluded.clinical_note,
                to_complete_json = excluded.to_complete_json
             WHERE (disease_group, modality, age, sex, ehr_json, clinical_note,
                    to_complete_json) IS NOT
                (excluded.disease_group, excluded.modality, excluded.age, excluded.sex,
                 excluded.ehr_json, excluded.clinical_note, excluded.to_complete_json)",
            params![
                study_key,
                case.id,
                enum_text(&case.disease_group),
                enum_text(&case.modality),
                case.age,
                enum_text(&case.sex),
                json(&case.ehr),
                case.clinical_note,
                json(&case.to_complete),
            ],
        )
        .map_err(|e| fail("storing a case", e))?;
    let case_key: i64 = tx
        .query_row(
            "SELECT id FROM cases WHERE study = ?1 AND case_id = ?2",
            params![study_key, case.id],
            |r| r.get(0),
        )
        .map_err(|e| fail("storing a case", e))?;
    summary.cases += 1;

    for ((spec, images), geometry) in case
        .series
        .iter()
        .zip(&bundle_case.series)
        .zip(&bundle_case.geometry)
    {
        updated += tx
            .execute(
                "INSERT INTO series (case_ref, series_id, label, kind, path)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (case_ref, series_id) DO UPDATE SET label = excluded.label,
                    kind = excluded.kind, path = excluded.path
                 WHERE (label, kind, path) IS NOT (excluded.label, excluded.kind, excluded.path)",
                params![
                    case_key,
                    spec.id,
                    spec.label,
                    enum_text(&spec.kind),
                    spec.path
                ],
            )
            .map_err(|e| fail("storing a series", e))?;
        let series_key: i64 = tx
            .query_row(
                "SELECT id FROM series WHERE case_ref = ?1 AND series_id = ?2",
                params![case_key, spec.id],
                |r| r.get(0),
            )
            .map_err(|e| fail("storing a series", e))?;
        updated += replace_images_if_changed(w, series_key, images)?;
        // Derived from the images: it changes only with them, so it is not counted apart.
        crate::store::geometry::write(tx, series_key, geometry)
            .map_err(|e| fail("storing a series' geometry", e))?;
        summary.series += 1;
        summary.images += images.len();
    }

    for task in &case.tasks {
        updated += tx
            .execute(
                "INSERT INTO tasks (case_ref, task_id, family, level, prompt, key_images_json,
                    follow_up_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (case_ref, task_id) DO UPDATE SET family = excluded.family,
                    level = excluded.level, prompt = excluded.prompt,
                    key_images_json = excluded.key_images_json,
                    follow_up_json = excluded.follow_up_json
                 WHERE (family, level, prompt, key_images_json, follow_up_json) IS NOT
                    (excluded.family, excluded.level, excluded.prompt, excluded.key_images_json,
                     excluded.follow_up_json)",
                params![
                    case_key,
                    task.id,
                    enum_text(&task.family),
                    task.level,
                    task.prompt,
                    json(&task.key_images),
                    json(&task.follow_up)
                ],
            )
            .map_err(|e| fail("storing a task", e))?;
        summary.tasks += 1;
    }

    if let Some(truth) = &case.ground_truth {
        // A curator's edit in the app (source 'curator') is newer than the bundle: keep it.
        updated += tx
            .execute(
                "INSERT INTO ground_truth (case_ref, body_json, source) VALUES (?1, ?2, 'bundle')
                 ON CONFLICT (case_ref) DO UPDATE SET body_json = excluded.body_json
                 WHERE source = 'bundle' AND body_json IS NOT excluded.body_json",
                params![case_key, json(truth)],
            )
            .map_err(|e| fail("storing ground truth", e))?;
    }
    Ok(updated)
}

/// The bundle's responses, each stored once: a response already stored is counted, not changed.
fn write_responses(
    w: &Write<'_>,
    study_key: i64,
    bundle: &Bundle,
    summary: &mut ImportSummary,
) -> Result<(), Error> {
    for response in &bundle.responses {
        let r = &response.value;
        let task = bundle_key(
            w,
            "SELECT t.id FROM tasks t JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 AND c.case_id = ?2 AND t.task_id = ?3",
            params![study_key, r.case_id, r.task_id],
            || format!("task {}/{} of a response", r.case_id, r.task_id),
        )?;
        let stored = outputs::add_response(
            w,
            &outputs::NewResponse {
                task,
                model: &r.model,
                sample: i64::from(r.sample),
                answer: &r.answer,
                rationale: r.rationale.as_deref(),
                turns_json: r.turns.as_ref().map(json),
                extra_json: json(&r.extra),
                respondent: outputs::Respondent::Model,
            },
        )?;
        if stored.is_some() {
            summary.responses_added += 1;
        } else {
            summary.responses_already_stored += 1;
        }
    }
    Ok(())
}

/// The bundle's grader scores, each stored once, as its responses.
fn write_grader_scores(
    w: &Write<'_>,
    study_key: i64,
    bundle: &Bundle,
    summary: &mut ImportSummary,
) -> Result<(), Error> {
    for grade in &bundle.grader {
        let g = &grade.value;
        let response = bundle_key(
            w,
            "SELECT r.id FROM responses r JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 AND c.case_id = ?2 AND t.task_id = ?3 AND r.model = ?4
               AND r.sample = ?5",
            params![study_key, g.case_id, g.task_id, g.model, g.sample],
            || {
                format!(
                    "response {}/{} by {} (sample {}) of a grader score",
                    g.case_id, g.task_id, g.model, g.sample
                )
            },
        )?;
        let stored = outputs::add_grader_score(
            w,
            &outputs::NewGraderScore {
                response,
                grader: &g.grader,
                score: g.score,
                dimensions_json: g.dimensions.as_ref().map(json),
                errors_json: g.errors.as_ref().map(json),
                rationale: g.rationale.as_deref(),
                extra_json: json(&g.extra),
            },
        )?;
        if stored.is_some() {
            summary.grader_scores_added += 1;
        } else {
            summary.grader_scores_already_stored += 1;
        }
    }
    Ok(())
}

/// The key `query` finds for a row of the bundle being written. The bundle was checked against
/// itself before writing, so a missing key means the database changed under the import.
fn bundle_key(
    w: &Write<'_>,
    query: &str,
    values: impl rusqlite::Params,
    what: impl FnOnce() -> String,
) -> Result<i64, Error> {
    let key = w
        .tx()
        .prepare_cached(query)
        .and_then(|mut find| find.query_row(values, |row| row.get(0)).optional())
        .map_err(|e| w.fail("finding where a bundle row belongs", e))?;
    key.ok_or_else(|| Error::Corrupt {
        what: format!("{} is not in the database it was just written to", what()),
    })
}

/// Rewrites a series' image list only when its files or their content changed.
fn replace_images_if_changed(
    w: &Write<'_>,
    series_key: i64,
    images: &[bundle::ImageFile],
) -> Result<usize, Error> {
    let tx = w.tx();
    let stored: Vec<(String, String)> = tx
        .prepare("SELECT path, sha256 FROM images WHERE series = ?1 ORDER BY position")
        .and_then(|mut stmt| {
            stmt.query_map([series_key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(|e| w.fail("reading a series' images", e))?;
    let same = stored.len() == images.len()
        && stored
            .iter()
            .zip(images)
            .all(|((path, sha), image)| *path == image.path && *sha == image.sha256);
    if same {
        return Ok(0);
    }
    tx.execute("DELETE FROM images WHERE series = ?1", [series_key])
        .map_err(|e| w.fail("replacing a series' images", e))?;
    let mut insert = tx
        .prepare(
            "INSERT INTO images (series, position, path, sha256, byte_len, sop_instance_uid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(|e| w.fail("storing images", e))?;
    for (position, image) in images.iter().enumerate() {
        insert
            .execute(params![
                series_key,
                position as i64,
                image.path,
                image.sha256,
                image.byte_len as i64,
                image.sop_instance_uid
            ])
            .map_err(|e| w.fail("storing images", e))?;
    }
    Ok(images.len())
}
