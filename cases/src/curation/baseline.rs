//! Human-baseline reader mode: a clinician answers a task as the models did, blind to the ground
//! truth and to the models' answers. The answer is stored as a response (respondent kind
//! `human`), so it is assigned and rated like a model's; its `model` column reads
//! `human:<role>` and its `sample` counts the clinicians of that role who answered the task, so
//! pass@k over `human:<role>` is the share of tasks where at least one of k such readers was
//! right, and the pass@k table shows one baseline row per role. Who answered, with role and
//! experience, is kept in `human_answers` and never reaches raters.

use crate::model::{SliceRef, TaskFamily};
use crate::rating::SHOWN_TO_RATER_SQL;
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum HumanRole {
    MedicalStudent,
    Resident,
    Neurologist,
    Neuroradiologist,
}

/// Where a task stands for one clinician in the baseline screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum BaselineState {
    /// They may answer it.
    Open,
    /// They answered it (once per clinician and task).
    Answered,
    /// They have been shown (opened in Reading or rated) a model answer of its case: not blind.
    /// Being assigned one, unopened, leaves them blind.
    NotBlind,
}

/// A task of the study as the baseline screen lists it: no prompt, no answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BaselineTask {
    pub case_id: String,
    pub task_id: String,
    pub family: TaskFamily,
    pub level: i64,
    pub state: BaselineState,
}

/// Longer than a career: a typing slip.
const MAX_YEARS_EXPERIENCE: u32 = 70;

/// What the clinician sees: what the model saw, nothing more.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BlindTask {
    pub study_id: String,
    pub case_id: String,
    pub task_id: String,
    pub prompt: String,
    pub age: i64,
    pub sex: String,
    pub clinical_note: String,
    pub ehr: BTreeMap<String, serde_json::Value>,
    /// (series id, label) of every series of the case.
    pub series: Vec<(String, String)>,
    pub key_images: Vec<SliceRef>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanAnswer {
    pub study_id: String,
    pub case_id: String,
    pub task_id: String,
    /// The clinician (a rater's key).
    pub rater: i64,
    pub role: HumanRole,
    pub years_experience: Option<u32>,
    pub diagnosis: String,
    /// Ranked, most likely first.
    #[serde(default)]
    pub differential: Vec<String>,
    pub reasoning: String,
    pub seconds_on_task: f64,
}

/// The task as the model saw it, for `rater` to answer. Refused when the rater has already been
/// shown a model answer of this case (opened in Reading, or rated) or has answered the task: the
/// baseline must be blind.
pub fn blind_task(
    store: &Store,
    rater: i64,
    study_id: &str,
    case_id: &str,
    task_id: &str,
) -> Result<BlindTask> {
    let (task_key, case_key) = task_keys(store, study_id, case_id, task_id)?;
    refuse_if_not_blind(store, rater, case_key, task_key)?;
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "reading a task for a blind answer", e);
    let (prompt, key_images, age, sex, note, ehr): (String, String, i64, String, String, String) =
        conn.query_row(
            "SELECT t.prompt, t.key_images_json, c.age, c.sex, c.clinical_note, c.ehr_json
             FROM tasks t JOIN cases c ON t.case_ref = c.id WHERE t.id = ?1",
            [task_key],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                ))
            },
        )
        .map_err(fail)?;
    let mut stmt = conn
        .prepare("SELECT series_id, label FROM series WHERE case_ref = ?1 ORDER BY id")
        .map_err(fail)?;
    let series = stmt
        .query_map([case_key], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(fail)?;
    let corrupt = |what: &str, e: serde_json::Error| Error::Corrupt {
        what: format!("{what} of case {case_id}: {e}"),
    };
    Ok(BlindTask {
        study_id: study_id.to_owned(),
        case_id: case_id.to_owned(),
        task_id: task_id.to_owned(),
        prompt,
        age,
        sex,
        clinical_note: note,
        ehr: serde_json::from_str(&ehr).map_err(|e| corrupt("EHR", e))?,
        series,
        key_images: serde_json::from_str(&key_images).map_err(|e| corrupt("key images", e))?,
    })
}

/// Every task of the study, case by case, with whether `rater` may answer it blind. Refused to a
/// curator, who knows the ground truth.
pub fn baseline_tasks(store: &Store, rater: i64, study_id: &str) -> Result<Vec<BaselineTask>> {
    refuse_curator(store, rater)?;
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "listing the tasks for a baseline answer", e);
    let mut stmt = conn
        .prepare(&format!(
            "WITH shown AS ({SHOWN_TO_RATER_SQL}),
                  seen_cases AS (SELECT DISTINCT u.case_ref FROM shown s
                                 JOIN responses r ON r.id = s.response JOIN tasks u ON r.task = u.id
                                 WHERE r.respondent_kind = 'model')
             SELECT c.case_id, t.task_id, t.family, t.level,
                EXISTS (SELECT 1 FROM human_answers h WHERE h.task = t.id AND h.rater = ?1),
                c.id IN (SELECT case_ref FROM seen_cases)
             FROM tasks t JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
             WHERE st.study_id = ?2 ORDER BY c.id, t.id"
        ))
        .map_err(fail)?;
    let rows: Vec<(String, String, String, i64, bool, bool)> = stmt
        .query_map(params![rater, study_id], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        })
        .and_then(Iterator::collect)
        .map_err(fail)?;
    rows.into_iter()
        .map(|(case_id, task_id, family, level, answered, seen)| {
            let family = serde_json::from_value(serde_json::Value::String(family.clone()))
                .map_err(|_| Error::Corrupt {
                    what: format!("task family {family:?} of case {case_id} task {task_id}"),
                })?;
            let state = if answered {
                BaselineState::Answered
            } else if seen {
                BaselineState::NotBlind
            } else {
                BaselineState::Open
            };
            Ok(BaselineTask {
                case_id,
                task_id,
                family,
                level,
                state,
            })
        })
        .collect()
}

/// Stores a clinician's blind answer as a response and returns its key.
pub fn submit_human_answer(store: &mut Store, answer: &HumanAnswer) -> Result<i64> {
    let (task_key, case_key) =
        task_keys(store, &answer.study_id, &answer.case_id, &answer.task_id)?;
    refuse_if_not_blind(store, answer.rater, case_key, task_key)?;
    if let Some(years) = answer
        .years_experience
        .filter(|&y| y > MAX_YEARS_EXPERIENCE)
    {
        return Err(Error::CurationRefused(format!(
            "years_experience: {years} is more than {MAX_YEARS_EXPERIENCE}"
        )));
    }
    if let Some(rank) = answer.differential.iter().position(|d| d.trim().is_empty()) {
        return Err(Error::CurationRefused(format!(
            "differential[{rank}]: an empty diagnosis; remove it or name one"
        )));
    }
    if answer.diagnosis.trim().is_empty() {
        return Err(Error::CurationRefused(
            "diagnosis: the answer names no diagnosis".into(),
        ));
    }
    if !(answer.seconds_on_task.is_finite() && answer.seconds_on_task >= 0.0) {
        return Err(Error::CurationRefused(format!(
            "seconds_on_task: {} is not a duration",
            answer.seconds_on_task
        )));
    }
    let name = super::versions::rater_name(store, answer.rater)?;
    let role = crate::store::enum_text(&answer.role);
    let label = format!("human:{role}");
    // Read as a model's answer is: the diagnosis, then the ranked differential.
    let mut text = answer.diagnosis.trim().to_owned();
    if !answer.differential.is_empty() {
        let ranked: Vec<String> = answer
            .differential
            .iter()
            .enumerate()
            .map(|(i, d)| format!("{}. {}", i + 1, d.trim()))
            .collect();
        text.push_str(&format!("\nDifferential: {}", ranked.join("; ")));
    }
    store.write(|w| {
        let fail = |e| w.fail("storing a human-baseline answer", e);
        let sample: i64 = w
            .tx()
            .query_row(
                "SELECT coalesce(max(sample) + 1, 0) FROM responses WHERE task = ?1 AND model = ?2",
                params![task_key, label],
                |row| row.get(0),
            )
            .map_err(fail)?;
        let response = crate::store::outputs::add_response(
            w,
            &crate::store::outputs::NewResponse {
                task: task_key,
                model: &label,
                sample,
                answer: &text,
                rationale: Some(answer.reasoning.trim()),
                turns_json: None,
                extra_json: "{}".to_owned(),
                respondent: crate::store::outputs::Respondent::Human,
            },
        )?
        .ok_or_else(|| Error::Corrupt {
            what: format!("a {label} answer numbered {sample} for a task that already had it"),
        })?;
        let at = crate::store::now(w.tx()).map_err(fail)?;
        w.tx()
            .execute(
                "INSERT INTO human_answers (response, task, rater, role, years_experience,
                     diagnosis, differential_json, reasoning, seconds_on_task, answered_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    response,
                    task_key,
                    answer.rater,
                    role,
                    answer.years_experience,
                    answer.diagnosis.trim(),
                    serde_json::to_string(&answer.differential).unwrap_or_default(),
                    answer.reasoning.trim(),
                    answer.seconds_on_task,
                    at
                ],
            )
            .map_err(fail)?;
        w.audit(&Entry {
            actor: &name,
            action: "baseline.answered",
            entity: &format!(
                "task:{}/{}/{}",
                answer.study_id, answer.case_id, answer.task_id
            ),
            before: None,
            after: Some(&serde_json::json!({
                "response": response,
                "model": label,
                "sample": sample,
            })),
        })?;
        Ok(response)
    })
}

fn task_keys(store: &Store, study_id: &str, case_id: &str, task_id: &str) -> Result<(i64, i64)> {
    store
        .read()
        .query_row(
            "SELECT t.id, c.id FROM tasks t JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id
             WHERE st.study_id = ?1 AND c.case_id = ?2 AND t.task_id = ?3",
            [study_id, case_id, task_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "finding a task", e))?
        .ok_or_else(|| Error::NotFound {
            what: format!("task {task_id:?} of case {case_id:?} in study {study_id:?}"),
        })
}

/// Curators build the ground truth: nothing they answer is blind to it.
fn refuse_curator(store: &Store, rater: i64) -> Result<()> {
    let who = store.rater(rater)?;
    if who.role.reads_blinded() {
        return Ok(());
    }
    Err(Error::CurationRefused(format!(
        "{} is a curator and knows the ground truth, so their answer would not be a blind \
         baseline; a clinician who has not curated or rated this study should answer",
        who.name
    )))
}

fn refuse_if_not_blind(store: &Store, rater: i64, case_key: i64, task_key: i64) -> Result<()> {
    refuse_curator(store, rater)?;
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "checking that a reader is blind", e);
    let (first_shown, answered): (Option<String>, i64) = conn
        .query_row(
            &format!(
                "WITH shown AS ({SHOWN_TO_RATER_SQL})
                 SELECT
                   (SELECT min(s.at) FROM shown s JOIN responses r ON r.id = s.response
                      JOIN tasks t ON r.task = t.id
                    WHERE t.case_ref = ?2 AND r.respondent_kind = 'model'),
                   (SELECT count(*) FROM human_answers WHERE rater = ?1 AND task = ?3)"
            ),
            params![rater, case_key, task_key],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map_err(fail)?;
    if answered > 0 {
        return Err(Error::CurationRefused(
            "this clinician has already answered the task".into(),
        ));
    }
    if let Some(at) = first_shown {
        return Err(Error::CurationRefused(format!(
            "this clinician has been shown a model's answer on this case (opened in Reading or \
             rated, first at {at}): a baseline answer must be blind to the models' answers (and \
             to the ground truth, which opens after rating), so another clinician should answer \
             it"
        )));
    }
    Ok(())
}
