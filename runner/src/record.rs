//! What a run reads from the store and writes back: the spec binding, the work still missing,
//! and each result with its run metadata and audit entry in one `Store::write` transaction.
//!
//! Results go into `grader_scores` and `responses`, the tables an import fills, so reports,
//! exports and packages see them like imported ones; `run_results` keeps the rest.

use crate::grader::{Grade, GradingContext};
use crate::spec::Spec;
use crate::RunError;
use cases::model::{ResponseKey, Rubric, Taxonomy, Turn};
use cases::store::audit::Entry;
use cases::store::{outputs, Store, NOW_SQL};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value};

/// Who the audit log names for a run's results.
const RUN_ACTOR: &str = "runner";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Grader,
    Model,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Grader => "grader",
            Kind::Model => "model",
        }
    }
}

/// Binds the spec's name to its content hash on its first run; refuses a different spec under a
/// used name, and a name that imported scores or responses already use (their spec is unknown).
pub fn bind_spec(store: &mut Store, spec: &Spec, kind: Kind) -> Result<(), RunError> {
    let hash = spec.content_hash();
    let fail = |e| cases::Error::Database {
        path: store.path().to_path_buf(),
        doing: "reading the run specs".into(),
        source: e,
    };
    let bound: Option<(String, String)> = store
        .read()
        .query_row(
            "SELECT kind, spec_sha256 FROM run_specs WHERE name = ?1",
            [&spec.name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(fail)?;
    match bound {
        Some((stored_kind, _)) if stored_kind != kind.as_str() => {
            return Err(RunError::NameInUse {
                name: spec.name.clone(),
                why: format!("it names a {stored_kind} of earlier runs"),
            })
        }
        Some((_, stored_hash)) if stored_hash != hash => {
            return Err(RunError::SpecChanged {
                name: spec.name.clone(),
                stored: stored_hash,
                given: hash,
            })
        }
        Some(_) => return Ok(()),
        None => {}
    }
    // Results already stored under an unbound name were imported: their spec is unknown, and a
    // run would mix its answers with theirs (a grader's scores, a model's samples).
    let (imported_sql, what) = match kind {
        Kind::Grader => (
            "SELECT count(*) FROM grader_scores WHERE grader = ?1",
            "imported grader score(s)",
        ),
        Kind::Model => (
            "SELECT count(*) FROM responses WHERE model = ?1",
            "imported model response(s)",
        ),
    };
    let imported: i64 = store
        .read()
        .query_row(imported_sql, [&spec.name], |r| r.get(0))
        .map_err(fail)?;
    if imported > 0 {
        return Err(RunError::NameInUse {
            name: spec.name.clone(),
            why: format!("{imported} {what} carry it"),
        });
    }
    let spec_json = serde_json::to_string(spec).unwrap_or_default();
    store.write(|w| {
        w.tx()
            .execute(
                &format!(
                    "INSERT INTO run_specs (name, kind, spec_sha256, spec_json, first_run_at)
                     VALUES (?1, ?2, ?3, ?4, {NOW_SQL})"
                ),
                params![spec.name, kind.as_str(), hash, spec_json],
            )
            .map_err(|e| w.fail("binding the spec to its name", e))?;
        w.audit(&Entry {
            actor: RUN_ACTOR,
            action: "bind run spec",
            entity: &format!("run_spec:{}", spec.name),
            before: None,
            after: Some(&json!({"kind": kind.as_str(), "spec_sha256": hash})),
        })
    })?;
    Ok(())
}

/// A stored response this grader has not graded yet, with what its prompt may name.
#[derive(Debug, Clone)]
pub struct GradingItem {
    pub response: i64,
    pub key: ResponseKey,
    pub study: i64,
    pub context: GradingContext,
}

/// The study's rubric and taxonomy, as the grader's schema and checks need them.
#[derive(Debug, Clone)]
pub struct StudyScales {
    pub rubric: Rubric,
    pub taxonomy: Taxonomy,
}

/// Every stored response without a score from `grader`, in a stable order, and the scales of
/// the studies they belong to.
pub fn pending_gradings(
    store: &Store,
    study_id: &str,
    grader: &str,
    with_ground_truth: bool,
) -> Result<
    (
        Vec<GradingItem>,
        std::collections::BTreeMap<i64, StudyScales>,
    ),
    RunError,
> {
    let path = store.path().to_path_buf();
    let fail = |e| cases::Error::Database {
        path: path.clone(),
        doing: "listing the responses to grade".into(),
        source: e,
    };
    let conn = store.read();
    let mut scales = std::collections::BTreeMap::new();
    let mut stmt = conn
        .prepare("SELECT id, study_id, rubric_json, taxonomy_json FROM studies WHERE study_id = ?1")
        .map_err(fail)?;
    let rows = stmt
        .query_map([study_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .map_err(fail)?;
    for row in rows {
        let (id, study_id, rubric, taxonomy) = row.map_err(fail)?;
        scales.insert(
            id,
            StudyScales {
                rubric: cases::store::stored_rubric(&study_id, &rubric)?,
                taxonomy: cases::store::stored_taxonomy(&study_id, &taxonomy)?,
            },
        );
    }
    let mut stmt = conn
        .prepare(
            "SELECT r.id, c.case_id, t.task_id, r.model, r.sample, c.study, c.age, c.sex,
                    c.modality, c.ehr_json, c.clinical_note, t.prompt, r.answer, r.rationale,
                    r.turns_json, g.body_json
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id LEFT JOIN ground_truth g ON g.case_ref = c.id
             WHERE st.study_id = ?2 AND NOT EXISTS (SELECT 1 FROM grader_scores s
                               WHERE s.response = r.id AND s.grader = ?1)
             ORDER BY c.case_id, t.task_id, r.model, r.sample",
        )
        .map_err(fail)?;
    let rows = stmt
        .query_map([grader, study_id], |r| {
            let turns: Option<String> = r.get(14)?;
            let truth: Option<String> = r.get(15)?;
            let case_text = format!(
                "Age {}, sex {}, {} study.\nClinical note: {}\nRecord: {}",
                r.get::<_, i64>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, String>(8)?,
                r.get::<_, String>(10)?,
                r.get::<_, String>(9)?,
            );
            Ok(GradingItem {
                response: r.get(0)?,
                key: ResponseKey {
                    case_id: r.get(1)?,
                    task_id: r.get(2)?,
                    model: r.get(3)?,
                    sample: r.get(4)?,
                },
                study: r.get(5)?,
                context: GradingContext {
                    case_text,
                    task_prompt: r.get(11)?,
                    answer: r.get(12)?,
                    rationale: r.get(13)?,
                    turns: turns.and_then(|t| serde_json::from_str::<Vec<Turn>>(&t).ok()),
                    ground_truth: truth
                        .filter(|_| with_ground_truth)
                        .and_then(|t| serde_json::from_str(&t).ok()),
                },
            })
        })
        .map_err(fail)?;
    let items = rows.collect::<Result<Vec<_>, _>>().map_err(fail)?;
    Ok((items, scales))
}

/// What every stored result carries besides its content.
#[derive(Debug, Clone, Default)]
pub struct RunMeta {
    pub raw_replies: Vec<Value>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency_ms: u64,
    pub requests: u32,
}

/// Stores one grade with its run metadata and audit entry in one transaction. Returns false
/// when the response already had a score from this grader (another run got there first).
pub fn save_grade(
    store: &mut Store,
    spec: &Spec,
    item: &GradingItem,
    grade: &Grade,
    meta: &RunMeta,
) -> Result<bool, RunError> {
    Ok(store.write(|w| {
        let stored = outputs::add_grader_score(
            w,
            &outputs::NewGraderScore {
                response: item.response,
                grader: &spec.name,
                score: grade.score,
                dimensions_json: grade.dimensions.as_ref().map(to_json),
                errors_json: grade.errors.as_ref().map(to_json),
                rationale: grade.rationale.as_deref(),
                extra_json: "{}".to_owned(),
            },
        )?;
        let Some(id) = stored else {
            return Ok(false);
        };
        insert_run_result(w, spec, ("grader_score", id), meta)?;
        w.audit(&Entry {
            actor: RUN_ACTOR,
            action: "grade response",
            entity: &format!("grader_score:{id}"),
            before: None,
            after: Some(&json!({
                "grader": spec.name, "case_id": item.key.case_id, "task_id": item.key.task_id,
                "model": item.key.model, "sample": item.key.sample, "score": grade.score,
                "spec_sha256": spec.content_hash(),
            })),
        })?;
        Ok(true)
    })?)
}

fn insert_run_result(
    w: &cases::store::Write<'_>,
    spec: &Spec,
    (column, id): (&str, i64),
    meta: &RunMeta,
) -> cases::Result<()> {
    w.tx()
        .execute(
            &format!(
                "INSERT INTO run_results (spec_name, {column}, spec_sha256, seed, temperature,
                    raw_replies_json, prompt_tokens, completion_tokens, latency_ms, requests,
                    cost, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, {NOW_SQL})"
            ),
            params![
                spec.name,
                id,
                spec.content_hash(),
                spec.seed,
                spec.temperature,
                Value::Array(meta.raw_replies.clone()).to_string(),
                meta.prompt_tokens as i64,
                meta.completion_tokens as i64,
                meta.latency_ms as i64,
                meta.requests,
                spec.cost(meta.prompt_tokens, meta.completion_tokens),
            ],
        )
        .map_err(|e| w.fail("storing the run's metadata", e))?;
    Ok(())
}

/// One sample of one task to ask a model, with its key images' files and render options.
#[derive(Debug, Clone)]
pub struct Question {
    pub task: i64,
    pub key: ResponseKey,
    pub prompt: String,
    pub images: Vec<KeyImageSource>,
    pub follow_up: Vec<FollowUpQuestion>,
}

/// A key image's file and how to render it for the model.
pub type KeyImageSource = (std::path::PathBuf, imaging::RenderOptions);

/// One follow-up turn to send after the model's reply, with the slices shown with it.
#[derive(Debug, Clone)]
pub struct FollowUpQuestion {
    pub text: String,
    /// As the script names them, recorded on the consultation's turn.
    pub key_images: Vec<cases::model::SliceRef>,
    pub images: Vec<KeyImageSource>,
}

/// A model's answer, split as docs/formats.md §6 says.
#[derive(Debug, Clone)]
pub struct Answer {
    pub answer: String,
    pub rationale: Option<String>,
    /// The whole consultation, for a task with a follow-up script.
    pub turns: Option<Vec<Turn>>,
}

/// Every (task, sample) with sample < `samples` that the model of `spec` has no response for.
/// The prompt is the spec's template (`{{task}}`, `{{case}}`), else the case's clinical note and
/// the task's prompt.
/// The questions a model run of `study_id` sends, and the tasks it skips: a task of a case with
/// images but no key image would reach the model as text alone, so it is listed, with why,
/// before any request is sent, and never asked.
pub fn pending_questions(
    store: &Store,
    study_id: &str,
    spec: &Spec,
    samples: u32,
) -> Result<PendingQuestions, RunError> {
    let path = store.path().to_path_buf();
    let fail = |e| cases::Error::Database {
        path: path.clone(),
        doing: "listing the tasks to ask".into(),
        source: e,
    };
    type TaskRow = (
        i64,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        Vec<u32>,
    );
    let rows: Vec<TaskRow> = {
        let mut stmt = store
            .read()
            .prepare(
                "SELECT t.id, st.study_id, c.case_id, t.task_id, t.prompt, t.key_images_json,
                        t.follow_up_json,
                        printf('Age %d, sex %s, %s study.' || char(10) || 'Clinical note: %s',
                               c.age, c.sex, c.modality, c.clinical_note),
                        (SELECT group_concat(r.sample) FROM responses r
                         WHERE r.task = t.id AND r.model = ?1)
                 FROM tasks t JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
                 WHERE st.study_id = ?2
                   AND (json_array_length(t.key_images_json) > 0
                        OR NOT EXISTS (SELECT 1 FROM series s WHERE s.case_ref = c.id))
                 ORDER BY c.case_id, t.task_id",
            )
            .map_err(fail)?;
        let rows = stmt
            .query_map([&spec.name, study_id], |r| {
                let stored: Option<String> = r.get(8)?;
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    stored
                        .unwrap_or_default()
                        .split(',')
                        .filter_map(|n| n.parse().ok())
                        .collect(),
                ))
            })
            .map_err(fail)?;
        rows.collect::<Result<_, _>>().map_err(fail)?
    };
    let skipped = tasks_without_key_images(store, study_id)?;
    let mut contexts = std::collections::HashMap::new();
    let mut questions = Vec::new();
    for (task, study_id, case_id, task_id, prompt, key_images, follow_up, case_text, stored) in rows
    {
        let missing: Vec<u32> = (0..samples).filter(|s| !stored.contains(s)).collect();
        if missing.is_empty() {
            continue;
        }
        let corrupt = |what: &str, e: serde_json::Error| cases::Error::Corrupt {
            what: format!("the {what} of task {task_id} of case {case_id}: {e}"),
        };
        let slices: Vec<cases::model::SliceRef> =
            serde_json::from_str(&key_images).map_err(|e| corrupt("key images", e))?;
        let follow_up: Vec<cases::model::FollowUp> =
            serde_json::from_str(&follow_up).map_err(|e| corrupt("follow-up script", e))?;
        let context = match contexts.entry((study_id.clone(), case_id.clone())) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => new.insert(
                cases::curation::CaseContext::load(store, &study_id, &case_id)?,
            ),
        };
        let context = &*context;
        let sources = |slices: &[cases::model::SliceRef]| {
            slices
                .iter()
                .map(|slice| cases::curation::key_image_source(store, context, slice))
                .collect::<cases::Result<Vec<_>>>()
        };
        let images = sources(&slices)?;
        let follow_up = follow_up
            .into_iter()
            .map(|turn| {
                Ok(FollowUpQuestion {
                    images: sources(&turn.key_images)?,
                    text: turn.text,
                    key_images: turn.key_images,
                })
            })
            .collect::<cases::Result<Vec<_>>>()?;
        let text = match &spec.prompt {
            Some(template) => {
                let fill = crate::grader::GradingContext {
                    case_text: case_text.clone(),
                    task_prompt: prompt.clone(),
                    answer: String::new(),
                    rationale: None,
                    turns: None,
                    ground_truth: None,
                };
                crate::grader::fill_for_model(template, &fill)
            }
            None => format!("{case_text}\n\n{prompt}"),
        };
        for sample in missing {
            questions.push(Question {
                task,
                key: ResponseKey {
                    case_id: case_id.clone(),
                    task_id: task_id.clone(),
                    model: spec.name.clone(),
                    sample,
                },
                prompt: text.clone(),
                images: images.clone(),
                follow_up: follow_up.clone(),
            });
        }
    }
    Ok(PendingQuestions { questions, skipped })
}

/// What a model run of a study asks, and what it leaves out.
#[derive(Debug)]
pub struct PendingQuestions {
    pub questions: Vec<Question>,
    /// Each task left out as `case/task`, with why.
    pub skipped: Vec<(String, String)>,
}

/// The study's tasks whose case has images but which name no key image.
fn tasks_without_key_images(
    store: &Store,
    study_id: &str,
) -> Result<Vec<(String, String)>, RunError> {
    let fail = |e| cases::Error::Database {
        path: store.path().to_path_buf(),
        doing: "listing the tasks without a key image".into(),
        source: e,
    };
    let mut stmt = store
        .read()
        .prepare(
            "SELECT c.case_id || '/' || t.task_id
             FROM tasks t JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
             WHERE st.study_id = ?1 AND json_array_length(t.key_images_json) = 0
               AND EXISTS (SELECT 1 FROM series s WHERE s.case_ref = c.id)
             ORDER BY c.case_id, t.task_id",
        )
        .map_err(fail)?;
    let tasks = stmt
        .query_map([study_id], |r| r.get::<_, String>(0))
        .map_err(fail)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    Ok(tasks
        .into_iter()
        .map(|task| {
            (
                task,
                "the task names no key image, so the model would answer without seeing the scan; \
                 give the task its key_images (the case's images are there) and run again"
                    .to_owned(),
            )
        })
        .collect())
}

/// Stores one model response with its run metadata and audit entry in one transaction.
pub fn save_answer(
    store: &mut Store,
    spec: &Spec,
    item: &Question,
    answer: &Answer,
    meta: &RunMeta,
) -> Result<bool, RunError> {
    Ok(store.write(|w| {
        let stored = outputs::add_response(
            w,
            &outputs::NewResponse {
                task: item.task,
                model: &spec.name,
                sample: i64::from(item.key.sample),
                answer: &answer.answer,
                rationale: answer.rationale.as_deref(),
                turns_json: answer.turns.as_ref().map(to_json),
                extra_json: "{}".to_owned(),
                respondent: outputs::Respondent::Model,
            },
        )?;
        let Some(id) = stored else {
            return Ok(false);
        };
        insert_run_result(w, spec, ("response", id), meta)?;
        w.audit(&Entry {
            actor: RUN_ACTOR,
            action: "model response",
            entity: &format!("response:{id}"),
            before: None,
            after: Some(&json!({
                "model": spec.name, "case_id": item.key.case_id, "task_id": item.key.task_id,
                "sample": item.key.sample, "spec_sha256": spec.content_hash(),
            })),
        })?;
        Ok(true)
    })?)
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
