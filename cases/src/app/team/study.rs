//! A study read from a local database for the team server (`neurorater-server import`).

use super::{TeamCase, TeamGraderScore, TeamResponse, TeamSeries, TeamTask};
use crate::app::LeadSession;
use crate::model::{Rubric, SeriesKind, Taxonomy};
use crate::rubric::RubricVersion;
use crate::store::Store;
use crate::{Error, Result};
use imaging::SeriesGeometry;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A study as it goes onto the team server: everything a local database holds of it that the
/// server serves (cases, series metadata, tasks, responses, grader scores, ground truth, rubric,
/// taxonomy), and where each series' image files are, for the server's import to de-identify and
/// copy one by one (`cases::package::deidentified_image`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStudy {
    pub study_id: String,
    pub title: String,
    pub description: String,
    /// The current rubric, version `rubric_version`.
    pub rubric: Rubric,
    /// The current rubric's number in the lead's database, which the server's numbering mirrors
    /// (a study read before rubric versions: 1).
    #[serde(default = "first_version")]
    pub rubric_version: u32,
    /// Every version of the rubric, oldest first, the current one included (a study read before
    /// rubric versions: none, and [`TeamStudy::rubric_versions`] gives `rubric` as version 1).
    #[serde(default)]
    pub rubric_versions: Vec<RubricVersion>,
    pub taxonomy: Taxonomy,
    pub cases: Vec<TeamStudyCase>,
}

fn first_version() -> u32 {
    1
}

impl TeamStudy {
    /// Every version of the rubric, oldest first, with the current one among them.
    pub fn rubric_versions(&self) -> Vec<RubricVersion> {
        let mut versions = self.rubric_versions.clone();
        if !versions.iter().any(|v| v.version == self.rubric_version) {
            versions.push(RubricVersion {
                version: self.rubric_version,
                rubric: self.rubric.clone(),
            });
            versions.sort_by_key(|v| v.version);
        }
        versions
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStudyCase {
    pub case: TeamCase,
    pub series: Vec<TeamSeries>,
    /// Each series' image files, in the order of `series`.
    pub images: Vec<TeamSeriesFiles>,
    pub tasks: Vec<TeamStudyTask>,
    pub ground_truth: Option<serde_json::Value>,
    /// Each series' geometry (`store::geometry`), so the server checks marks inside the volume.
    pub geometry: Vec<TeamSeriesGeometry>,
    /// Every curation version of the case with its reviews, oldest first, the bundle's version 1
    /// included (`curation::history`).
    pub curation: Vec<crate::curation::Version>,
}

/// A series' grid and voxel → patient LPS mm affine, as `store::geometry` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamSeriesGeometry {
    pub series_id: String,
    /// [columns, rows, slices].
    pub dims: [usize; 3],
    pub voxel_to_patient: [[f64; 4]; 4],
}

impl TeamSeriesGeometry {
    pub fn geometry(&self) -> SeriesGeometry {
        SeriesGeometry {
            dims: self.dims,
            voxel_to_patient: self.voxel_to_patient,
        }
    }
}

/// A series' image files at the lead's site, in display order. The files may still carry
/// identifying headers: only their de-identified copies leave for the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamSeriesFiles {
    pub series_id: String,
    pub kind: SeriesKind,
    pub files: Vec<TeamImageFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamImageFile {
    pub path: PathBuf,
    /// As imported: a file changed since is refused, naming it.
    pub sha256: String,
    /// Its extension in a rater package (`cases::package::package_extension`).
    pub extension: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStudyTask {
    pub task: TeamTask,
    pub responses: Vec<TeamStudyResponse>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStudyResponse {
    pub response: TeamResponse,
    pub grader_scores: Vec<TeamGraderScore>,
}

/// Reads `study_id` from a local database for the team server: the lead's decision, since the
/// copy holds every model's answer, grader output and the ground truth. First records every
/// rubric version it carries as published (`crate::rubric::publish`, audited under the lead's
/// name), so that none of them is edited in place afterwards: raters on the server may rate
/// under it while this database holds no rating under it. Recorded before the copy is made, so
/// a copy that fails leaves a version frozen that need not be (its next change is a new version),
/// never one the server holds unfrozen.
pub fn study_for_server(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
) -> Result<TeamStudy> {
    let actor = lead.audit_name().to_owned();
    store.write(|w| crate::rubric::publish(w, &actor, study_id).map(|_| ()))?;
    let store = &*store;
    let conn = store.read();
    let fail =
        |doing: &'static str| move |e: rusqlite::Error| Error::database(store.path(), doing, e);
    let crate::store::StudyRow {
        key: study_key,
        title,
        description,
        rubric_json,
        taxonomy_json,
        bundle_dir,
    } = crate::store::study_row(store, study_id)?;
    type CaseRow = (
        i64,
        String,
        String,
        String,
        u32,
        String,
        String,
        String,
        Option<String>,
    );
    let case_rows: Vec<CaseRow> = conn
        .prepare(
            "SELECT c.id, c.case_id, c.disease_group, c.modality, c.age, c.sex, c.ehr_json,
                    c.clinical_note, g.body_json
             FROM cases c LEFT JOIN ground_truth g ON g.case_ref = c.id
             WHERE c.study = ?1 ORDER BY c.id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([study_key], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })?
            .collect()
        })
        .map_err(fail("reading the cases"))?;
    let mut cases = Vec::with_capacity(case_rows.len());
    for (key, case_id, disease_group, modality, age, sex, ehr, clinical_note, ground_truth) in
        case_rows
    {
        let what = |field: &str| format!("case {case_id:?}: {field}");
        let series = read_series(store, key)?;
        cases.push(TeamStudyCase {
            images: read_images(store, key, &bundle_dir)?,
            geometry: read_geometry(store, key)?,
            curation: crate::curation::history(store, study_id, &case_id)?,
            series,
            tasks: read_tasks(store, key)?,
            ground_truth: ground_truth
                .map(|text| json(&text, &what("ground_truth")))
                .transpose()?,
            case: TeamCase {
                disease_group,
                age,
                modality: stored_enum(&modality, &what("modality"))?,
                sex: stored_enum(&sex, &what("sex"))?,
                ehr: json(&ehr, &what("ehr_json"))?,
                clinical_note,
                case_id,
            },
        });
    }
    let rubric_version = crate::rubric::current(conn, store.path(), study_id)?.version;
    Ok(TeamStudy {
        study_id: study_id.to_owned(),
        title,
        description,
        rubric: crate::store::stored_rubric(study_id, &rubric_json)?,
        rubric_version,
        rubric_versions: crate::rubric::versions(conn, store.path(), study_id)?,
        taxonomy: crate::store::stored_taxonomy(study_id, &taxonomy_json)?,
        cases,
    })
}

fn read_series(store: &Store, case_key: i64) -> Result<Vec<TeamSeries>> {
    let rows: Vec<(String, String, String, u32)> = store
        .read()
        .prepare(
            "SELECT s.series_id, s.label, s.kind,
                    (SELECT count(*) FROM images i WHERE i.series = s.id)
             FROM series s WHERE s.case_ref = ?1 ORDER BY s.id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([case_key], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect()
        })
        .map_err(|e| Error::database(store.path(), "reading the series", e))?;
    rows.into_iter()
        .map(|(series_id, label, kind, n_images)| {
            Ok(TeamSeries {
                kind: stored_enum(&kind, &format!("series {series_id:?}: kind"))?,
                series_id,
                label,
                n_images,
            })
        })
        .collect()
}

fn read_geometry(store: &Store, case_key: i64) -> Result<Vec<TeamSeriesGeometry>> {
    let series: Vec<(i64, String)> = store
        .read()
        .prepare("SELECT id, series_id FROM series WHERE case_ref = ?1 ORDER BY id")
        .and_then(|mut stmt| {
            stmt.query_map([case_key], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(|e| Error::database(store.path(), "reading the series", e))?;
    series
        .into_iter()
        .map(|(key, series_id)| {
            let SeriesGeometry {
                dims,
                voxel_to_patient,
            } = store.series_geometry(key)?;
            Ok(TeamSeriesGeometry {
                series_id,
                dims,
                voxel_to_patient,
            })
        })
        .collect()
}

fn read_images(store: &Store, case_key: i64, bundle_dir: &Path) -> Result<Vec<TeamSeriesFiles>> {
    let fail = |e| Error::database(store.path(), "reading the image files", e);
    let series: Vec<(i64, String, String)> = store
        .read()
        .prepare("SELECT id, series_id, kind FROM series WHERE case_ref = ?1 ORDER BY id")
        .and_then(|mut stmt| {
            stmt.query_map([case_key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .map_err(fail)?;
    let mut files_of = store
        .read()
        .prepare("SELECT path, sha256 FROM images WHERE series = ?1 ORDER BY position")
        .map_err(fail)?;
    let mut out = Vec::with_capacity(series.len());
    for (key, series_id, kind) in series {
        let kind: SeriesKind = stored_enum(&kind, &format!("series {series_id:?}: kind"))?;
        let files = files_of
            .query_map([key], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(fail)?
            .into_iter()
            .map(|(file, sha256)| TeamImageFile {
                extension: crate::package::package_extension(kind, &file),
                path: bundle_dir.join(file),
                sha256,
            })
            .collect();
        out.push(TeamSeriesFiles {
            series_id,
            kind,
            files,
        });
    }
    Ok(out)
}

fn read_tasks(store: &Store, case_key: i64) -> Result<Vec<TeamStudyTask>> {
    type TaskRow = (i64, String, String, u8, String, String);
    let rows: Vec<TaskRow> = store
        .read()
        .prepare(
            "SELECT id, task_id, family, level, prompt, key_images_json FROM tasks
             WHERE case_ref = ?1 ORDER BY id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([case_key], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect()
        })
        .map_err(|e| Error::database(store.path(), "reading the tasks", e))?;
    rows.into_iter()
        .map(|(key, task_id, family, level, prompt, key_images)| {
            let what = |field: &str| format!("task {task_id:?}: {field}");
            Ok(TeamStudyTask {
                responses: read_responses(store, key)?,
                task: TeamTask {
                    family: stored_enum(&family, &what("family"))?,
                    level,
                    prompt,
                    key_images: json(&key_images, &what("key_images_json"))?,
                    task_id,
                },
            })
        })
        .collect()
}

fn read_responses(store: &Store, task_key: i64) -> Result<Vec<TeamStudyResponse>> {
    let fail =
        |doing: &'static str| move |e: rusqlite::Error| Error::database(store.path(), doing, e);
    type ResponseRow = (i64, String, u32, String, Option<String>, Option<String>);
    let rows: Vec<ResponseRow> = store
        .read()
        .prepare(
            "SELECT id, model, sample, answer, rationale, turns_json FROM responses
             WHERE task = ?1 ORDER BY id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([task_key], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect()
        })
        .map_err(fail("reading the responses"))?;
    let mut scores_of = store
        .read()
        .prepare(
            "SELECT grader, score, dimensions_json, errors_json, rationale FROM grader_scores
             WHERE response = ?1 ORDER BY id",
        )
        .map_err(fail("reading the grader scores"))?;
    let mut responses = Vec::with_capacity(rows.len());
    for (key, model, sample, answer, rationale, turns) in rows {
        type ScoreRow = (String, f64, Option<String>, Option<String>, Option<String>);
        let score_rows: Vec<ScoreRow> = scores_of
            .query_map([key], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(fail("reading the grader scores"))?;
        let what = |field: &str| format!("response of {model:?} sample {sample}: {field}");
        let grader_scores = score_rows
            .into_iter()
            .map(|(grader, score, dimensions, errors, rationale)| {
                Ok(TeamGraderScore {
                    dimensions: dimensions
                        .map(|t| json(&t, &what("grader dimensions_json")))
                        .transpose()?,
                    errors: errors
                        .map(|t| json(&t, &what("grader errors_json")))
                        .transpose()?,
                    grader,
                    score,
                    rationale,
                })
            })
            .collect::<Result<_>>()?;
        responses.push(TeamStudyResponse {
            response: TeamResponse {
                turns: turns.map(|t| json(&t, &what("turns_json"))).transpose()?,
                model,
                sample,
                answer,
                rationale,
            },
            grader_scores,
        });
    }
    Ok(responses)
}

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt {
        what: format!("{what}: {e}"),
    })
}

/// Enums are stored as their serde spelling, checked by the schema.
fn stored_enum<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| Error::Corrupt {
        what: format!("{what}: {text:?}"),
    })
}
