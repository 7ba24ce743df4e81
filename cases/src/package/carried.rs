//! What an exported rater package carried, as digests the lead's database keeps (migration 21):
//! the rubric version it held and that version's definition, the taxonomy, and per item the
//! response, the task, the case's clinical context and its images. A results package is checked
//! against these, not the whole study: responses added and rubric versions made since leave it
//! mergeable; only a change to something it carried refuses it, naming the item and what changed.

use crate::model::{Rubric, Taxonomy};
use crate::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::path::Path;

/// SHA-256 over length-prefixed fields, so no two field lists hash alike.
fn fields_sha256(fields: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for field in fields {
        hasher.update((field.len() as u64).to_le_bytes());
        hasher.update(field.as_bytes());
    }
    crate::digest::hex(&hasher.finalize())
}

/// A rubric's definition, as the parsed rubric serialises (so two spellings of one rubric agree).
pub(crate) fn rubric_sha256(rubric: &Rubric) -> String {
    fields_sha256(&[&serde_json::to_string(rubric).expect("a rubric serialises")])
}

pub(crate) fn taxonomy_sha256(taxonomy: &Taxonomy) -> String {
    fields_sha256(&[&serde_json::to_string(taxonomy).expect("a taxonomy serialises")])
}

/// What one item of a rater package showed its rater, as digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CarriedItem {
    /// Model, sample, answer, rationale and turns.
    pub response: String,
    /// Family, level, prompt and key images.
    pub task: String,
    /// Modality, age, sex, EHR fields and clinical note.
    pub case: String,
    /// Every series (id, label, kind) and every image's SHA-256 in display order.
    pub images: String,
}

impl CarriedItem {
    /// What differs from `now`, in words, for a message.
    pub(crate) fn changes(&self, now: &CarriedItem) -> Vec<&'static str> {
        let mut changed = Vec::new();
        if self.response != now.response {
            changed.push("the response's text");
        }
        if self.task != now.task {
            changed.push("the task's prompt or key images");
        }
        if self.case != now.case {
            changed.push("the case's clinical context");
        }
        if self.images != now.images {
            changed.push("the case's images");
        }
        changed
    }
}

/// The digests of what the assignment's item shows now; `None` when its assignment or response
/// is gone.
pub(crate) fn carried_item(
    conn: &Connection,
    path: &Path,
    assignment: i64,
) -> Result<Option<CarriedItem>> {
    let fail = |e| Error::database(path, "reading what a package item carried", e);
    type Row = (
        i64,
        i64,
        String,
        i64,
        String,
        Option<String>,
        Option<String>,
    );
    let row: Option<Row> = conn
        .query_row(
            "SELECT t.id, t.case_ref, r.model, r.sample, r.answer, r.rationale, r.turns_json
             FROM assignments a JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id WHERE a.id = ?1",
            [assignment],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .optional()
        .map_err(fail)?;
    let Some((task, case, model, sample, answer, rationale, turns)) = row else {
        return Ok(None);
    };
    // A missing rationale or turns differs from an empty one.
    let optional = |text: &Option<String>| match text {
        Some(text) => format!("1{text}"),
        None => "0".to_owned(),
    };
    let response = fields_sha256(&[
        &model,
        &sample.to_string(),
        &answer,
        &optional(&rationale),
        &optional(&turns),
    ]);
    let task: String = conn
        .query_row(
            "SELECT family, level, prompt, key_images_json FROM tasks WHERE id = ?1",
            [task],
            |r| {
                let (family, level, prompt, key_images): (String, i64, String, String) =
                    (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
                Ok(fields_sha256(&[
                    &family,
                    &level.to_string(),
                    &prompt,
                    &key_images,
                ]))
            },
        )
        .map_err(fail)?;
    let clinical: String = conn
        .query_row(
            "SELECT modality, age, sex, ehr_json, clinical_note FROM cases WHERE id = ?1",
            [case],
            |r| {
                let (modality, age, sex, ehr, note): (String, i64, String, String, String) =
                    (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
                Ok(fields_sha256(&[
                    &modality,
                    &age.to_string(),
                    &sex,
                    &ehr,
                    &note,
                ]))
            },
        )
        .map_err(fail)?;
    let image_rows: Vec<(String, String, String, Option<String>)> = conn
        .prepare(
            "SELECT s.series_id, s.label, s.kind, i.sha256 FROM series s
             LEFT JOIN images i ON i.series = s.id
             WHERE s.case_ref = ?1 ORDER BY s.id, i.position",
        )
        .and_then(|mut stmt| {
            stmt.query_map([case], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect()
        })
        .map_err(fail)?;
    let mut image_fields: Vec<String> = Vec::with_capacity(image_rows.len() * 4);
    for (series, label, kind, sha256) in image_rows {
        image_fields.extend([series, label, kind, sha256.unwrap_or_default()]);
    }
    let images = fields_sha256(&image_fields.iter().map(String::as_str).collect::<Vec<_>>());
    Ok(Some(CarriedItem {
        response,
        task,
        case: clinical,
        images,
    }))
}

/// The digests recorded for an item at export; `None` for a package exported by a build before
/// migration 21.
pub(crate) fn recorded_item(
    conn: &Connection,
    path: &Path,
    package: i64,
    item: u32,
) -> Result<Option<CarriedItem>> {
    type Row = (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let row: Option<Row> = conn
        .query_row(
            "SELECT response_sha256, task_sha256, case_sha256, images_sha256
             FROM rater_package_items WHERE package = ?1 AND item = ?2",
            params![package, item],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()
        .map_err(|e| Error::database(path, "reading what a package item carried", e))?;
    Ok(match row {
        Some((Some(response), Some(task), Some(case), Some(images))) => Some(CarriedItem {
            response,
            task,
            case,
            images,
        }),
        _ => None,
    })
}
