//! Typed reads of the study catalogue: what the overview, the case view and the viewer show.
//!
//! **Invariant:** nothing returned here carries a model name, a grader score or another rater's
//! work: these payloads go to raters, who read blinded.

use super::Store;
use crate::model::{
    DiseaseGroup, Modality, SeriesKind, Sex, SliceRef, TaskFamily, ToComplete, Turn,
};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StudySummary {
    pub id: String,
    pub title: String,
    pub description: String,
    pub n_cases: u32,
    pub n_tasks: u32,
    pub n_responses: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CaseSummary {
    /// The case id; for a blinded reader its pseudonymous code instead (`cases::app::catalog`).
    pub id: String,
    /// `None` for a blinded reader: the group is what they are asked to recognise.
    pub disease_group: Option<DiseaseGroup>,
    pub modality: Modality,
    pub age: u32,
    pub sex: Sex,
    pub series_labels: Vec<String>,
    pub n_tasks: u32,
    pub n_responses: u32,
    /// What a curator still has to complete (the bundle's `to_complete`); empty when finished.
    pub to_complete: Vec<ToComplete>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CaseView {
    #[serde(flatten)]
    pub summary: CaseSummary,
    pub ehr: BTreeMap<String, serde_json::Value>,
    pub clinical_note: String,
    pub series: Vec<SeriesView>,
    pub tasks: Vec<TaskView>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SeriesView {
    /// The store's key, for `series_files`.
    pub key: i64,
    pub id: String,
    pub label: String,
    pub kind: SeriesKind,
    pub n_images: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TaskView {
    pub key: i64,
    pub id: String,
    pub family: TaskFamily,
    pub level: u8,
    pub prompt: String,
    pub key_images: Vec<SliceRef>,
}

/// A response as a rater sees it: no model name, no sample index, no grader output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ResponseView {
    pub key: i64,
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Option<Vec<Turn>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeriesFiles {
    pub kind: SeriesKind,
    pub label: String,
    /// In display order.
    pub files: Vec<SeriesFile>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeriesFile {
    pub path: PathBuf,
    pub sha256: String,
}

impl SeriesFiles {
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    /// Re-hashes every file: a moved or changed image is an error naming it, never a silently
    /// different picture.
    pub fn verify(&self) -> Result<()> {
        for file in &self.files {
            let bytes = std::fs::read(&file.path).map_err(|source| Error::ImageMissing {
                path: file.path.clone(),
                source,
            })?;
            let actual = crate::digest::sha256_hex(&bytes);
            if actual != file.sha256 {
                return Err(Error::ImageChanged {
                    path: file.path.clone(),
                });
            }
        }
        Ok(())
    }
}

impl Store {
    pub fn studies(&self) -> Result<Vec<StudySummary>> {
        let mut stmt = self
            .read()
            .prepare(
                "SELECT s.study_id, s.title, s.description,
                    (SELECT count(*) FROM cases c WHERE c.study = s.id),
                    (SELECT count(*) FROM tasks t JOIN cases c ON t.case_ref = c.id
                       WHERE c.study = s.id),
                    (SELECT count(*) FROM responses r JOIN tasks t ON r.task = t.id
                       JOIN cases c ON t.case_ref = c.id WHERE c.study = s.id)
                 FROM studies s ORDER BY s.study_id",
            )
            .map_err(|e| self.failed("listing studies", e))?;
        let rows = stmt
            .query_map([], |row| {
                Ok(StudySummary {
                    id: row.get(0)?,
                    title: row.get(1)?,
                    description: row.get(2)?,
                    n_cases: row.get(3)?,
                    n_tasks: row.get(4)?,
                    n_responses: row.get(5)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.failed("listing studies", e))?;
        Ok(rows)
    }

    pub fn cases(&self, study_id: &str) -> Result<Vec<CaseSummary>> {
        let study = self.study_key(study_id)?;
        let mut stmt = self
            .read()
            .prepare(&format!(
                "{CASE_SUMMARY_SELECT} WHERE c.study = ?1 ORDER BY c.case_id"
            ))
            .map_err(|e| self.failed("listing cases", e))?;
        let rows = stmt
            .query_map([study], case_summary_from_row)
            .and_then(Iterator::collect)
            .map_err(|e| self.failed("listing cases", e))?;
        Ok(rows)
    }

    pub fn case(&self, study_id: &str, case_id: &str) -> Result<CaseView> {
        let study = self.study_key(study_id)?;
        let conn = self.read();
        let found = conn
            .query_row(
                &format!("{CASE_SUMMARY_SELECT} WHERE c.study = ?1 AND c.case_id = ?2"),
                params![study, case_id],
                |row| {
                    let key: i64 = row.get(8)?;
                    let ehr: String = row.get(9)?;
                    let note: String = row.get(10)?;
                    Ok((case_summary_from_row(row)?, key, ehr, note))
                },
            )
            .optional()
            .map_err(|e| self.failed("reading a case", e))?;
        let (summary, case_key, ehr_json, clinical_note) =
            found.ok_or_else(|| Error::NotFound {
                what: format!("case {case_id:?} in study {study_id:?}"),
            })?;

        let mut stmt = conn
            .prepare(
                "SELECT s.id, s.series_id, s.label, s.kind,
                        (SELECT count(*) FROM images i WHERE i.series = s.id)
                 FROM series s WHERE s.case_ref = ?1 ORDER BY s.id",
            )
            .map_err(|e| self.failed("listing a case's series", e))?;
        let series = stmt
            .query_map([case_key], |row| {
                Ok(SeriesView {
                    key: row.get(0)?,
                    id: row.get(1)?,
                    label: row.get(2)?,
                    kind: enum_column(row, 3)?,
                    n_images: row.get(4)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.failed("listing a case's series", e))?;

        let mut stmt = conn
            .prepare(
                "SELECT id, task_id, family, level, prompt, key_images_json
                 FROM tasks WHERE case_ref = ?1 ORDER BY task_id",
            )
            .map_err(|e| self.failed("listing a case's tasks", e))?;
        let tasks = stmt
            .query_map([case_key], |row| {
                Ok(TaskView {
                    key: row.get(0)?,
                    id: row.get(1)?,
                    family: enum_column(row, 2)?,
                    level: row.get(3)?,
                    prompt: row.get(4)?,
                    key_images: json_column(row, 5)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.failed("listing a case's tasks", e))?;

        Ok(CaseView {
            summary,
            ehr: serde_json::from_str(&ehr_json).map_err(|e| Error::Corrupt {
                what: format!("EHR fields of case {case_id:?}: {e}"),
            })?,
            clinical_note,
            series,
            tasks,
        })
    }

    pub fn series_files(&self, series_key: i64) -> Result<SeriesFiles> {
        let conn = self.read();
        let (kind, label, bundle_dir): (String, String, String) = conn
            .query_row(
                "SELECT s.kind, s.label, st.bundle_dir FROM series s
                 JOIN cases c ON s.case_ref = c.id JOIN studies st ON c.study = st.id
                 WHERE s.id = ?1",
                [series_key],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(|e| self.failed("reading a series", e))?
            .ok_or_else(|| Error::NotFound {
                what: format!("series {series_key}"),
            })?;
        let mut stmt = conn
            .prepare("SELECT path, sha256 FROM images WHERE series = ?1 ORDER BY position")
            .map_err(|e| self.failed("listing a series' images", e))?;
        let bundle_dir = PathBuf::from(bundle_dir);
        let files = stmt
            .query_map([series_key], |row| {
                Ok(SeriesFile {
                    path: bundle_dir.join(row.get::<_, String>(0)?),
                    sha256: row.get(1)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.failed("listing a series' images", e))?;
        Ok(SeriesFiles {
            kind: parse_enum(&kind).ok_or_else(|| Error::Corrupt {
                what: format!("series {series_key} has kind {kind:?}"),
            })?,
            label,
            files,
        })
    }

    pub fn responses(&self, task_key: i64) -> Result<Vec<ResponseView>> {
        // Ordered by key, not by model: the order must not hint at who wrote what.
        let mut stmt = self
            .read()
            .prepare(
                "SELECT id, answer, rationale, turns_json FROM responses
                 WHERE task = ?1 ORDER BY id",
            )
            .map_err(|e| self.failed("listing responses", e))?;
        let rows = stmt
            .query_map([task_key], |row| {
                let turns: Option<String> = row.get(3)?;
                Ok(ResponseView {
                    key: row.get(0)?,
                    answer: row.get(1)?,
                    rationale: row.get(2)?,
                    turns: turns
                        .map(|t| serde_json::from_str(&t))
                        .transpose()
                        .map_err(|e| {
                            rusqlite::Error::FromSqlConversionFailure(
                                3,
                                rusqlite::types::Type::Text,
                                Box::new(e),
                            )
                        })?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.failed("listing responses", e))?;
        Ok(rows)
    }

    pub(crate) fn study_key(&self, study_id: &str) -> Result<i64> {
        self.read()
            .query_row(
                "SELECT id FROM studies WHERE study_id = ?1",
                [study_id],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.failed("finding a study", e))?
            .ok_or_else(|| Error::NotFound {
                what: format!("study {study_id:?}"),
            })
    }

    /// The study's pseudonymous case codes, keyed by its secret (migration 9 makes one with each
    /// study); a study read here from a rater package holds its cases under the lead's codes
    /// already, which stay as they are.
    pub fn case_codes(&self, study_id: &str) -> Result<crate::case_codes::CaseCodes> {
        let study = self.study_key(study_id)?;
        let from_package: bool = self
            .read()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM rater_packages
                                WHERE study = ?1 AND direction = 'imported')",
                [study],
                |row| row.get(0),
            )
            .map_err(|e| self.failed("reading where the study came from", e))?;
        if from_package {
            return Ok(crate::case_codes::CaseCodes::already_coded());
        }
        self.study_secret(study)
            .map(crate::case_codes::CaseCodes::new)
    }

    /// The secret the study keeps (its key `study`): it keys the case codes, and only digests of
    /// it leave (the DICOM SR's UID salt).
    pub(crate) fn study_secret(&self, study: i64) -> Result<Vec<u8>> {
        self.read()
            .query_row(
                "SELECT salt FROM study_secrets WHERE study = ?1",
                [study],
                |row| row.get(0),
            )
            .map_err(|e| self.failed("reading the study's secret", e))
    }

    fn failed(&self, doing: &str, source: rusqlite::Error) -> Error {
        Error::database(self.path(), doing, source)
    }
}

const CASE_SUMMARY_SELECT: &str = "SELECT c.case_id, c.disease_group, c.modality, c.age, c.sex,
        (SELECT json_group_array(label) FROM (SELECT label FROM series s
            WHERE s.case_ref = c.id ORDER BY s.id)),
        (SELECT count(*) FROM tasks t WHERE t.case_ref = c.id),
        (SELECT count(*) FROM responses r JOIN tasks t ON r.task = t.id
            WHERE t.case_ref = c.id),
        c.id, c.ehr_json, c.clinical_note, c.to_complete_json
     FROM cases c";

fn case_summary_from_row(row: &Row<'_>) -> rusqlite::Result<CaseSummary> {
    Ok(CaseSummary {
        id: row.get(0)?,
        disease_group: Some(enum_column(row, 1)?),
        modality: enum_column(row, 2)?,
        age: row.get(3)?,
        sex: enum_column(row, 4)?,
        series_labels: json_column(row, 5)?,
        n_tasks: row.get(6)?,
        n_responses: row.get(7)?,
        to_complete: json_column(row, 11)?,
    })
}

/// Enums are stored as their serde spelling (the bundle's), checked by the schema.
pub(crate) fn parse_enum<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).ok()
}

pub(crate) fn enum_text<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => text,
        other => unreachable!("enums serialise as strings, got {other:?}"),
    }
}

pub(crate) fn enum_column<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    parse_enum(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("unexpected value {text:?}").into(),
        )
    })
}

fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, index: usize) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e))
    })
}
