//! The database as the calibration report's input: clinicians' submitted ratings and the
//! graders' scores, one item per model response.
//!
//! Item ids are `case/task/model/sample`, the key of `responses.jsonl`, so a report's rows join
//! with the pipeline's files. Only submitted ratings count: a draft is work in progress. Only
//! first reads (`read_no = 1`) count: a repeat read by the same rater measures intra-rater
//! reliability, and counting it would weigh that rater twice in inter-rater statistics.
//!
//! Ratings of every rubric version are read, dimension by dimension: a score enters when the
//! version it was saved under defines its dimension as the current version does
//! ([`crate::rubric::comparable`]: the same levels); the others are left out and counted, with
//! why, per version ([`RubricVersionCount::left_out`]).

use crate::store::Store;
use crate::{Error, Result};
use calibration::coverage::{DimensionCoverage, LeftOutScores, RubricVersionCount};
use calibration::input::{
    CalibrationInput, CheckedResponse, CorrectnessJudgement, ErrorLabel, ItemErrors, ItemInfo,
    ItemsUsed, LongTable, MissedFindingsInput, MissedLesion, RaterScale, RepeatRead, ScaleSpec,
    ScoreRow,
};
use calibration::manifest::{endpoint_host, SpecEntry, StudyProvenance};
use rusqlite::OptionalExtension;
use std::collections::{BTreeMap, BTreeSet};

/// What a study's report is built from, and what the caller needs to set its options.
pub struct StudyData {
    pub input: CalibrationInput,
    /// The rubric's overall scale.
    pub scale: ScaleSpec,
    /// Every grader name that scored a response of the study.
    pub graders: Vec<String>,
    /// Per rubric dimension, what the clinicians' submitted first reads hold.
    pub coverage: Vec<DimensionCoverage>,
    /// Per rubric version, the submitted first reads saved under it and the scores of them the
    /// analyses leave out, with why.
    pub rubric_versions: Vec<RubricVersionCount>,
    /// The specs, rubric version, taxonomy and text-metric models behind the report, for its
    /// manifest; read in the same snapshot as the scores.
    pub provenance: StudyProvenance,
}

/// The study's rubric versions, to say which stored scores compare with the current rubric.
struct Rubrics {
    current: crate::model::Rubric,
    current_version: u32,
    by_version: BTreeMap<u32, crate::model::Rubric>,
}

impl Rubrics {
    fn read(
        conn: &rusqlite::Connection,
        path: &std::path::Path,
        study_id: &str,
        current: crate::model::Rubric,
        current_version: u32,
    ) -> Result<Rubrics> {
        let by_version = crate::rubric::versions(conn, path, study_id)?
            .into_iter()
            .map(|v| (v.version, v.rubric))
            .collect();
        Ok(Rubrics {
            current,
            current_version,
            by_version,
        })
    }

    /// Whether a score of `dimension` saved under `version` on a task of `family` is read.
    fn comparable(
        &self,
        version: u32,
        dimension: &str,
        family: Option<crate::model::TaskFamily>,
    ) -> std::result::Result<(), String> {
        match self.by_version.get(&version) {
            _ if version == self.current_version => {
                crate::rubric::comparable(&self.current, version, &self.current, dimension, family)
            }
            Some(rubric) => {
                crate::rubric::comparable(rubric, version, &self.current, dimension, family)
            }
            None => Err(format!("rubric version {version} is not stored")),
        }
    }
}

/// Scores left out, per (rubric version, dimension, why).
type LeftOut = BTreeMap<(u32, String, String), usize>;

pub const GROUPING_COLUMNS: [&str; 5] =
    ["disease_group", "modality", "task_family", "level", "model"];

/// Reads a study; `grader` decides whose error claims are compared with the clinicians'.
pub fn study_data(store: &Store, study_id: &str, grader: Option<&str>) -> Result<StudyData> {
    study_data_then(store, study_id, grader, |_| Ok(()))
}

/// [`study_data`], calling `scores_read` in the same snapshot once everything but the missed
/// findings is read: they need every case's ground truth (each lesion's slices from its series'
/// stored geometry) and every lesion-identification answer's text, so a caller can show the
/// figures that need only the scores meanwhile (the app's headline). `scores_read` sees the
/// missed findings as not checked yet.
pub fn study_data_then(
    store: &Store,
    study_id: &str,
    grader: Option<&str>,
    scores_read: impl FnOnce(&StudyData) -> Result<()>,
) -> Result<StudyData> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "reading ratings for the report", e);
    // One read snapshot, opened by reading the audit head: the head names exactly the data the
    // report is built from, even while the app or another process writes.
    let snapshot = conn.unchecked_transaction().map_err(fail)?;
    let audit_head = crate::store::audit::head(conn).map_err(fail)?;
    let (study_key, rubric_json, taxonomy_json, rubric_version): (i64, String, String, u32) = conn
        .query_row(
            "SELECT id, rubric_json, taxonomy_json, rubric_version FROM studies
             WHERE study_id = ?1",
            [study_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Error::NotFound {
                what: format!("study {study_id:?}"),
            },
            other => fail(other),
        })?;
    let rubric = crate::store::stored_rubric(study_id, &rubric_json)?;
    let taxonomy = crate::store::stored_taxonomy(study_id, &taxonomy_json)?;
    let rubrics = Rubrics::read(conn, store.path(), study_id, rubric.clone(), rubric_version)?;

    let responses = read_responses(conn, study_key).map_err(fail)?;
    let mut scores = Vec::new();
    let mut left_out = LeftOut::new();
    let clinicians = read_clinician_ratings(conn, &rubrics, &responses, &mut scores, &mut left_out)
        .map_err(fail)?;
    let graders = read_grader_scores(conn, &responses, grader, &mut scores).map_err(fail)?;
    // A study the grader workbench split: every grader figure reads only the test cases, which
    // no prompt was tuned on (issue 33); the clinicians' own figures keep every item.
    let held_out = crate::grader_workbench::held_out_items(store, study_key)?;
    let items_used = match &held_out {
        None => ItemsUsed::All,
        Some(held_out) => {
            scores
                .retain(|s| !graders.names.contains(&s.rater) || held_out.items.contains(&s.item));
            ItemsUsed::TestCases {
                cases: held_out.cases,
                items: held_out.items.len(),
                versions_confirmed: held_out.versions_confirmed,
            }
        }
    };
    let provenance = study_provenance(
        conn,
        study_key,
        &taxonomy_json,
        rubric_version,
        &graders.names,
        &responses,
    )
    .map_err(fail)?;
    let labels = read_error_labels(conn, &responses).map_err(fail)?;
    // Error comparison needs both sides: items the grader scored and clinicians reviewed.
    let errors = clinicians
        .reviewers
        .iter()
        .filter(|(item, _)| held_out.as_ref().is_none_or(|h| h.items.contains(*item)))
        .filter_map(|(item, who)| {
            Some(ItemErrors {
                item: item.clone(),
                grader_claims: graders.claims.get(item)?.clone(),
                reviewers: who.clone(),
                clinician_labels: labels.get(item).cloned().unwrap_or_default(),
            })
        })
        .collect();

    let repeat_reads = comparable_repeat_pairs(store, study_id, &rubrics)?
        .into_iter()
        .filter_map(|pair| {
            Some(RepeatRead {
                first: pair.first_overall?,
                repeat: pair.repeat_overall?,
                rater: pair.rater,
                item: pair.item,
            })
        })
        .collect();
    let mut data = StudyData {
        input: CalibrationInput {
            table: LongTable {
                scores,
                grouping_columns: GROUPING_COLUMNS.map(String::from).to_vec(),
                items: responses.items,
                scales: rubric_scales(&rubric),
            },
            errors,
            correctness: clinicians.correctness,
            category_buckets: taxonomy
                .categories
                .iter()
                .map(|c| (c.code.clone(), crate::store::enum_text(&c.bucket)))
                .collect(),
            repeat_reads,
            missed_findings: MissedFindingsInput {
                not_checked: Some("not read yet".into()),
                ..MissedFindingsInput::default()
            },
            audit_head: Some(audit_head.to_string()),
            items_used,
        },
        scale: ScaleSpec {
            min: rubric.overall.min,
            max: rubric.overall.max,
            step: rubric.overall.step,
        },
        graders: graders.names.into_iter().collect(),
        coverage: clinicians.coverage,
        rubric_versions: rubric_version_counts(conn, study_key, rubric_version, &left_out)
            .map_err(fail)?,
        provenance,
    };
    scores_read(&data)?;
    // A ground truth that cannot be read (a bundle's images moved) leaves this one section
    // unchecked, with the reason, rather than the whole report unbuilt.
    data.input.missed_findings =
        missed_findings_input(store, study_id, &responses.item_of_response).unwrap_or_else(|e| {
            MissedFindingsInput {
                not_checked: Some(format!("the ground truth could not be read: {e}")),
                ..MissedFindingsInput::default()
            }
        });
    drop(snapshot);
    Ok(data)
}

/// The manifest's view of the study: a spec entry for every grader that scored a response of it
/// and every model that answered (with `None`s where the results were imported, without a
/// spec), the taxonomy's SHA-256 over its stored text, and the identities its text metrics were
/// computed with.
fn study_provenance(
    conn: &rusqlite::Connection,
    study_key: i64,
    taxonomy_json: &str,
    rubric_version: u32,
    graders: &BTreeSet<String>,
    responses: &Responses,
) -> rusqlite::Result<StudyProvenance> {
    use sha2::{Digest, Sha256};
    let models: BTreeSet<&str> = responses.meta.values().map(|m| m.model.as_str()).collect();
    let mut stored_spec =
        conn.prepare("SELECT spec_sha256, spec_json FROM run_specs WHERE name = ?1 AND kind = ?2")?;
    let mut specs = Vec::new();
    let named = graders
        .iter()
        .map(|g| ("grader", g.as_str()))
        .chain(models.iter().map(|m| ("model", *m)));
    for (kind, name) in named {
        let stored: Option<(String, String)> = stored_spec
            .query_row([name, kind], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let mut entry = SpecEntry {
            kind: kind.to_owned(),
            name: name.to_owned(),
            sha256: None,
            model: None,
            endpoint_host: None,
            seed: None,
            temperature: None,
        };
        if let Some((sha256, json)) = stored {
            // The spec as the runner stored it; only these fields leave the database (never
            // the key's variable, the full endpoint or the prompt).
            // A spec JSON that does not parse leaves these fields null: the stored hash still
            // names the spec, and the report is not refused over its provenance.
            let spec: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            let text = |field: &str| spec.get(field).and_then(|v| v.as_str()).map(str::to_owned);
            entry.sha256 = Some(sha256);
            entry.model = text("model");
            entry.endpoint_host = text("endpoint").as_deref().and_then(endpoint_host);
            entry.seed = spec
                .get("seed")
                .and_then(|v| v.as_i64())
                .map(|s| s.to_string());
            entry.temperature = spec
                .get("temperature")
                .and_then(|v| v.as_f64())
                .map(|t| t.to_string());
        }
        specs.push(entry);
    }
    let text_metric_models = conn
        .prepare(
            "SELECT DISTINCT m.model FROM text_metrics m JOIN responses r ON m.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 ORDER BY m.model",
        )?
        .query_map([study_key], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(StudyProvenance {
        specs,
        rubric_version,
        taxonomy_sha256: format!("{:x}", Sha256::digest(taxonomy_json.as_bytes())),
        text_metric_models,
    })
}

/// What the report needs of one response besides its scores.
struct ResponseMeta {
    model: String,
    family: String,
    level: String,
    /// `case/task`.
    task: String,
    sample: u32,
    case: String,
}

/// Every response of the study as a report item (`case/task/model/sample`) with its groups.
struct Responses {
    items: BTreeMap<String, ItemInfo>,
    item_of_response: BTreeMap<i64, String>,
    meta: BTreeMap<i64, ResponseMeta>,
}

fn read_responses(conn: &rusqlite::Connection, study_key: i64) -> rusqlite::Result<Responses> {
    let mut responses = Responses {
        items: BTreeMap::new(),
        item_of_response: BTreeMap::new(),
        meta: BTreeMap::new(),
    };
    let mut stmt = conn.prepare(
        "SELECT r.id, c.case_id, t.task_id, r.model, r.sample, c.disease_group, c.modality,
                t.family, t.level
         FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
         WHERE c.study = ?1 ORDER BY r.id",
    )?;
    let mut rows = stmt.query([study_key])?;
    while let Some(row) = rows.next()? {
        let response: i64 = row.get(0)?;
        let case: String = row.get(1)?;
        let task: String = row.get(2)?;
        let model: String = row.get(3)?;
        let sample: u32 = row.get(4)?;
        let family: String = row.get(7)?;
        let level: i64 = row.get(8)?;
        let item = format!("{case}/{task}/{model}/{sample}");
        let groups = BTreeMap::from([
            ("disease_group".to_owned(), row.get::<_, String>(5)?),
            ("modality".to_owned(), row.get::<_, String>(6)?),
            ("task_family".to_owned(), family.clone()),
            ("level".to_owned(), level.to_string()),
            ("model".to_owned(), model.clone()),
        ]);
        responses.items.insert(
            item.clone(),
            ItemInfo {
                case: Some(case.clone()),
                groups,
            },
        );
        responses.item_of_response.insert(response, item);
        responses.meta.insert(
            response,
            ResponseMeta {
                model,
                family,
                level: level.to_string(),
                task: format!("{case}/{task}"),
                sample,
                case,
            },
        );
    }
    Ok(responses)
}

/// An overall score and a dimensions map (stored JSON) as score rows of `item` by `rater`, those
/// `read` accepts.
fn push_scores(
    scores: &mut Vec<ScoreRow>,
    item: &str,
    rater: &str,
    overall: Option<f64>,
    dimensions: &str,
    mut read: impl FnMut(&str) -> bool,
) {
    if let Some(score) = overall.filter(|_| read(crate::rubric::OVERALL)) {
        scores.push(ScoreRow {
            item: item.to_owned(),
            rater: rater.to_owned(),
            dimension: crate::rubric::OVERALL.into(),
            score,
        });
    }
    let dimensions: BTreeMap<String, f64> = serde_json::from_str(dimensions).unwrap_or_default();
    for (dimension, score) in dimensions {
        if !read(&dimension) {
            continue;
        }
        scores.push(ScoreRow {
            item: item.to_owned(),
            rater: rater.to_owned(),
            dimension,
            score,
        });
    }
}

/// The clinicians' submitted first reads, beyond their scores.
struct ClinicianRatings {
    coverage: Vec<DimensionCoverage>,
    /// Per item, who reviewed it.
    reviewers: BTreeMap<String, BTreeSet<String>>,
    correctness: Vec<CorrectnessJudgement>,
}

/// Every submitted first read, each score read where its rubric version defines the dimension
/// as the current one does ([`Rubrics::comparable`]), the others counted in `left_out`.
fn read_clinician_ratings(
    conn: &rusqlite::Connection,
    rubrics: &Rubrics,
    responses: &Responses,
    scores: &mut Vec<ScoreRow>,
    left_out: &mut LeftOut,
) -> rusqlite::Result<ClinicianRatings> {
    let rubric = &rubrics.current;
    let mut stmt = conn.prepare(
        "SELECT g.response, ra.name, g.overall, g.dimensions_json, g.correctness,
                g.not_applicable_json, g.rubric_version
         FROM ratings g JOIN raters ra ON g.rater = ra.id
         WHERE g.status = 'submitted' AND g.read_no = 1
         ORDER BY g.response, ra.name",
    )?;
    let mut rows = stmt.query([])?;
    let mut read = ClinicianRatings {
        coverage: rubric
            .dimensions
            .iter()
            .map(|d| DimensionCoverage {
                dimension: d.id.clone(),
                rated: 0,
                not_applicable: 0,
                not_applied: 0,
                missing: 0,
                other_definition: 0,
            })
            .collect(),
        reviewers: BTreeMap::new(),
        correctness: Vec::new(),
    };
    while let Some(row) = rows.next()? {
        let response: i64 = row.get(0)?;
        let Some(item) = responses.item_of_response.get(&response) else {
            continue;
        };
        let meta = &responses.meta[&response];
        let rater: String = row.get(1)?;
        let dimensions: String = row.get(3)?;
        let not_applicable: String = row.get(5)?;
        let version: u32 = row.get(6)?;
        let family = task_family(&meta.family);
        count_coverage(
            &mut read.coverage,
            rubric,
            family,
            &dimensions,
            &not_applicable,
            |dimension| rubrics.comparable(version, dimension, family).is_ok(),
        );
        push_scores(
            scores,
            item,
            &rater,
            row.get(2)?,
            &dimensions,
            |dimension| match rubrics.comparable(version, dimension, family) {
                Ok(()) => true,
                Err(reason) => {
                    *left_out
                        .entry((version, dimension.to_owned(), reason))
                        .or_default() += 1;
                    false
                }
            },
        );
        read.reviewers
            .entry(item.clone())
            .or_default()
            .insert(rater.clone());
        if let Some(judgement) = row.get::<_, Option<String>>(4)? {
            read.correctness.push(CorrectnessJudgement {
                case: meta.case.clone(),
                model: meta.model.clone(),
                task_family: meta.family.clone(),
                level: meta.level.clone(),
                task: meta.task.clone(),
                sample: meta.sample,
                rater,
                correct: judgement == "correct",
            });
        }
    }
    Ok(read)
}

/// Every grader that scored a response of the study, and `grader`'s error claims per item.
struct GraderScores {
    names: BTreeSet<String>,
    claims: BTreeMap<String, BTreeSet<String>>,
}

fn read_grader_scores(
    conn: &rusqlite::Connection,
    responses: &Responses,
    grader: Option<&str>,
    scores: &mut Vec<ScoreRow>,
) -> rusqlite::Result<GraderScores> {
    let mut read = GraderScores {
        names: BTreeSet::new(),
        claims: BTreeMap::new(),
    };
    let mut stmt = conn.prepare(
        "SELECT response, grader, score, dimensions_json, errors_json FROM grader_scores
         ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let response: i64 = row.get(0)?;
        let Some(item) = responses.item_of_response.get(&response) else {
            continue;
        };
        let name: String = row.get(1)?;
        let dimensions: Option<String> = row.get(3)?;
        push_scores(
            scores,
            item,
            &name,
            Some(row.get(2)?),
            dimensions.as_deref().unwrap_or("{}"),
            |_| true,
        );
        if Some(name.as_str()) == grader {
            let errors: Option<String> = row.get(4)?;
            let claims: Vec<crate::model::GraderError> = errors
                .and_then(|e| serde_json::from_str(&e).ok())
                .unwrap_or_default();
            // An empty set is a claim too: the grader found no error in this item.
            read.claims
                .entry(item.clone())
                .or_default()
                .extend(claims.into_iter().map(|c| c.category));
        }
        read.names.insert(name);
    }
    Ok(read)
}

/// The clinicians' error labels of their submitted first reads, per item. Labels name the
/// study's error taxonomy, which a rubric version does not change: every version's are read.
fn read_error_labels(
    conn: &rusqlite::Connection,
    responses: &Responses,
) -> rusqlite::Result<BTreeMap<String, Vec<ErrorLabel>>> {
    let mut labels: BTreeMap<String, Vec<ErrorLabel>> = BTreeMap::new();
    let mut stmt = conn.prepare(
        "SELECT g.response, ra.name, e.category, e.severity FROM error_labels e
         JOIN ratings g ON e.rating = g.id JOIN raters ra ON g.rater = ra.id
         WHERE g.status = 'submitted' AND g.read_no = 1
         ORDER BY e.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let response: i64 = row.get(0)?;
        let Some(item) = responses.item_of_response.get(&response) else {
            continue;
        };
        labels.entry(item.clone()).or_default().push(ErrorLabel {
            rater: row.get(1)?,
            category: row.get(2)?,
            severity: row.get(3)?,
        });
    }
    Ok(labels)
}

/// Every rubric version of the study with its submitted first reads, current marked, and the
/// scores of them left out.
fn rubric_version_counts(
    conn: &rusqlite::Connection,
    study_key: i64,
    current: u32,
    left_out: &LeftOut,
) -> rusqlite::Result<Vec<RubricVersionCount>> {
    let mut stmt = conn.prepare(
        "SELECT v.version, (SELECT count(*) FROM ratings g JOIN responses r ON g.response = r.id
                JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
                WHERE c.study = v.study AND g.rubric_version = v.version
                  AND g.status = 'submitted' AND g.read_no = 1)
         FROM rubric_versions v WHERE v.study = ?1 ORDER BY v.version",
    )?;
    let counts = stmt
        .query_map([study_key], |row| {
            let version: u32 = row.get(0)?;
            Ok(RubricVersionCount {
                version,
                ratings: row.get::<_, i64>(1)? as usize,
                current: version == current,
                left_out: left_out
                    .iter()
                    .filter(|((v, _, _), _)| *v == version)
                    .map(|((_, dimension, reason), scores)| LeftOutScores {
                        dimension: dimension.clone(),
                        scores: *scores,
                        reason: reason.clone(),
                    })
                    .collect(),
            })
        })?
        .collect();
    counts
}

/// A task family as stored; `None` for a value this build does not know.
fn task_family(stored: &str) -> Option<crate::model::TaskFamily> {
    serde_json::from_value(serde_json::Value::String(stored.to_owned())).ok()
}

/// Adds one rating of a task of `family` to each current dimension's counts; `comparable` says
/// whether the rating's rubric version defines a dimension as the current one does.
fn count_coverage(
    coverage: &mut [DimensionCoverage],
    rubric: &crate::model::Rubric,
    family: Option<crate::model::TaskFamily>,
    dimensions_json: &str,
    not_applicable_json: &str,
    comparable: impl Fn(&str) -> bool,
) {
    let scored: BTreeMap<String, f64> = serde_json::from_str(dimensions_json).unwrap_or_default();
    let not_applicable: BTreeSet<String> =
        serde_json::from_str(not_applicable_json).unwrap_or_default();
    for (counts, dimension) in coverage.iter_mut().zip(&rubric.dimensions) {
        let applies = family.is_none_or(|f| dimension.applies_to(f));
        let count = if !applies {
            &mut counts.not_applied
        } else if !comparable(&dimension.id) {
            &mut counts.other_definition
        } else if scored.contains_key(&dimension.id) {
            &mut counts.rated
        } else if not_applicable.contains(&dimension.id) {
            &mut counts.not_applicable
        } else {
            &mut counts.missing
        };
        *count += 1;
    }
}

/// The rubric's scales as the report's declarations: every rater of a stored study scored each
/// dimension on that dimension's scale (import and rating refuse anything off it).
fn rubric_scales(rubric: &crate::model::Rubric) -> Vec<RaterScale> {
    let spec = |s: &crate::model::Scale| ScaleSpec {
        min: s.min,
        max: s.max,
        step: s.step,
    };
    std::iter::once(("overall".to_owned(), spec(&rubric.overall)))
        .chain(
            rubric
                .dimensions
                .iter()
                .map(|d| (d.id.clone(), spec(&d.scale))),
        )
        .map(|(dimension, scale)| RaterScale {
            rater: None,
            dimension: Some(dimension),
            scale,
        })
        .collect()
}

/// The study's lesion-identification responses, each with its case's count of ground-truth
/// lesions, and the lesions [`crate::curation::missed_findings`] says each missed, with where the
/// lesion is.
fn missed_findings_input(
    store: &Store,
    study_id: &str,
    item_of_response: &BTreeMap<i64, String>,
) -> Result<MissedFindingsInput> {
    let fail = |e| Error::database(store.path(), "reading responses for missed findings", e);
    let family = crate::store::enum_text(&crate::model::TaskFamily::LesionIdentification);
    let responses: Vec<(i64, String, String)> = store
        .read()
        .prepare(
            "SELECT r.id, c.case_id, r.model
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id
             WHERE st.study_id = ?1 AND t.family = ?2 ORDER BY r.id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([study_id, family.as_str()], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?
            .collect()
        })
        .map_err(fail)?;
    let mut lesions_of: BTreeMap<String, Vec<crate::curation::CuratedLesion>> = BTreeMap::new();
    let mut checked = Vec::new();
    for (response, case, model) in responses {
        let Some(item) = item_of_response.get(&response) else {
            continue;
        };
        if !lesions_of.contains_key(&case) {
            let lesions = crate::curation::versions::current(store, study_id, &case)?
                .map(|v| v.truth.lesions)
                .unwrap_or_default();
            lesions_of.insert(case.clone(), lesions);
        }
        checked.push(CheckedResponse {
            item: item.clone(),
            lesions: lesions_of[&case].len(),
            case,
            model,
        });
    }
    let missed =
        crate::curation::findings::missed_findings_given(store, study_id, &mut lesions_of)?
            .into_iter()
            .filter_map(|miss| {
                let item = item_of_response.get(&miss.response)?.clone();
                let location = lesions_of
                    .get(&miss.case_id)
                    .and_then(|lesions| lesions.iter().find(|l| l.id == miss.lesion_id))
                    .map(location_of)
                    .unwrap_or_default();
                Some(MissedLesion {
                    item,
                    lesion_id: miss.lesion_id,
                    description: miss.description,
                    location,
                })
            })
            .collect();
    Ok(MissedFindingsInput {
        checked,
        missed,
        not_checked: None,
    })
}

/// Where a lesion is, in words: the series and slices that show it, then its first mark's centre
/// in patient coordinates, e.g. `FLAIR slices 11, 12; marked at (−23.0, 10.5, 41.0) mm LPS`.
fn location_of(lesion: &crate::curation::CuratedLesion) -> String {
    let mut slices: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for shown in &lesion.shown_on {
        slices.entry(&shown.series).or_default().push(shown.slice);
    }
    let mut parts: Vec<String> = slices
        .into_iter()
        .map(|(series, mut numbers)| {
            numbers.sort_unstable();
            numbers.dedup();
            let list: Vec<String> = numbers.iter().map(u32::to_string).collect();
            let noun = if numbers.len() == 1 {
                "slice"
            } else {
                "slices"
            };
            format!("{series} {noun} {}", list.join(", "))
        })
        .collect();
    if let Some(mark) = lesion.marks.first() {
        // An ellipse's first point is its centre; the others end its semi-axes.
        let points = match mark.kind {
            crate::marks::MarkKind::Ellipse => {
                &mark.points_lps_mm[..1.min(mark.points_lps_mm.len())]
            }
            _ => &mark.points_lps_mm[..],
        };
        let n = points.len().max(1) as f64;
        let centre: Vec<String> = (0..3)
            .map(|axis| {
                let mean = points.iter().map(|p| p[axis]).sum::<f64>() / n;
                format!("{mean:.1}")
            })
            .collect();
        parts.push(format!(
            "marked on {} at ({}) mm LPS",
            mark.series_id,
            centre.join(", ")
        ));
    }
    parts.join("; ")
}

/// A response a rater read twice (first read and repeat), both submitted: the pairs intra-rater
/// reliability is computed from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RepeatPair {
    pub rater: String,
    /// `case/task/model/sample`, as in the report.
    pub item: String,
    pub first_overall: Option<f64>,
    pub repeat_overall: Option<f64>,
    pub first_correctness: Option<String>,
    pub repeat_correctness: Option<String>,
}

/// Every submitted first read of the study paired with the same rater's submitted repeat read,
/// both overall scores defined as the current rubric defines the overall score (the same levels,
/// [`crate::rubric::comparable`]), whichever versions they were saved under.
pub fn repeat_pairs(store: &Store, study_id: &str) -> Result<Vec<RepeatPair>> {
    let conn = store.read();
    let (rubric_json, version): (String, u32) = conn
        .query_row(
            "SELECT rubric_json, rubric_version FROM studies WHERE study_id = ?1",
            [study_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Error::NotFound {
                what: format!("study {study_id:?}"),
            },
            other => Error::database(store.path(), "reading the study's rubric", other),
        })?;
    let rubric = crate::store::stored_rubric(study_id, &rubric_json)?;
    let rubrics = Rubrics::read(conn, store.path(), study_id, rubric, version)?;
    comparable_repeat_pairs(store, study_id, &rubrics)
}

fn comparable_repeat_pairs(
    store: &Store,
    study_id: &str,
    rubrics: &Rubrics,
) -> Result<Vec<RepeatPair>> {
    let fail = |e| Error::database(store.path(), "reading repeat reads", e);
    let mut stmt = store
        .read()
        .prepare(
            "SELECT ra.name, c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample,
                    g1.overall, g2.overall, g1.correctness, g2.correctness,
                    g1.rubric_version, g2.rubric_version
             FROM ratings g1
             JOIN ratings g2 ON g2.response = g1.response AND g2.rater = g1.rater
                 AND g2.read_no = 2 AND g2.status = 'submitted'
             JOIN raters ra ON g1.rater = ra.id JOIN responses r ON g1.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id
             WHERE g1.read_no = 1 AND g1.status = 'submitted' AND st.study_id = ?1
             ORDER BY ra.name, r.id",
        )
        .map_err(fail)?;
    let rows: Vec<(RepeatPair, u32, u32)> = stmt
        .query_map([study_id], |row| {
            Ok((
                RepeatPair {
                    rater: row.get(0)?,
                    item: row.get(1)?,
                    first_overall: row.get(2)?,
                    repeat_overall: row.get(3)?,
                    first_correctness: row.get(4)?,
                    repeat_correctness: row.get(5)?,
                },
                row.get(6)?,
                row.get(7)?,
            ))
        })
        .map_err(fail)?
        .collect::<rusqlite::Result<_>>()
        .map_err(fail)?;
    let overall_read = |version| {
        rubrics
            .comparable(version, crate::rubric::OVERALL, None)
            .is_ok()
    };
    Ok(rows
        .into_iter()
        .filter(|(_, first, repeat)| overall_read(*first) && overall_read(*repeat))
        .map(|(pair, _, _)| pair)
        .collect())
}

/// Every answer of the study matched against its case's current final curated truth
/// (`truthmatch`), for the report's `answer_accuracy` section. A case without a final curated
/// diagnosis contributes nothing. The text matched is the final answer, marked as such so the
/// matcher takes it as the primary statement, then the rationale; an answer that is a JSON
/// object is read as structured output (no task records that it asked for JSON).
pub fn matched_answers(
    store: &Store,
    study_id: &str,
) -> Result<Vec<calibration::truth_match::MatchedAnswer>> {
    let fail = |e| {
        Error::database(
            store.path(),
            "reading answers for the ground-truth match",
            e,
        )
    };
    type Row = (
        String,
        String,
        String,
        u32,
        String,
        String,
        i64,
        String,
        Option<String>,
    );
    let rows: Vec<Row> = store
        .read()
        .prepare(
            "SELECT c.case_id, t.task_id, r.model, r.sample, c.disease_group, t.family, t.level,
                    r.answer, r.rationale
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies s ON c.study = s.id
             WHERE s.study_id = ?1 ORDER BY r.id",
        )
        .and_then(|mut stmt| stmt.query_map([study_id], |row| row.try_into())?.collect())
        .map_err(fail)?;
    let mut truths: BTreeMap<String, Option<truthmatch::PreparedTruth>> = BTreeMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for (case, task, model, sample, group, family, level, answer, rationale) in rows {
        if !truths.contains_key(&case) {
            let truth = crate::curation::versions::current(store, study_id, &case)?
                .map(|v| v.truth)
                .filter(|t| !t.diagnosis.trim().is_empty())
                .map(|t| truthmatch::PreparedTruth::new(&match_truth(&t)));
            truths.insert(case.clone(), truth);
        }
        let Some(truth) = &truths[&case] else {
            continue;
        };
        let structured = answer.trim_start().starts_with('{');
        let m = if structured {
            truth.match_answer(&answer, truthmatch::AnswerFormat::Json)
        } else {
            let text = match &rationale {
                Some(r) => format!("Final answer: {answer}\n{r}"),
                None => format!("Final answer: {answer}"),
            };
            truth.match_answer(&text, truthmatch::AnswerFormat::FreeText)
        };
        let top1 = m.within(1);
        let predicted_group = match (top1, m.primary_group) {
            (Some(true), _) => group.clone(),
            (_, Some(predicted)) => crate::store::enum_text(&disease_group(predicted)),
            _ => calibration::truth_match::UNMATCHED_GROUP.to_owned(),
        };
        out.push(calibration::truth_match::MatchedAnswer {
            item: format!("{case}/{task}/{model}/{sample}"),
            task: format!("{case}/{task}"),
            case,
            model,
            task_family: family,
            level: level.to_string(),
            true_group: group,
            top1,
            top3: m.within(3),
            predicted_group,
            exact: m.exact,
            contradictions: m.findings.contradictions(),
            unmatched_span: m.unmatched_spans.first().cloned(),
        });
    }
    Ok(out)
}

/// The matcher's view of a curated truth: its findings are the expected reasoning and each
/// lesion's description. Curated truths hold no synonyms yet; the matcher's table has the
/// common ones.
fn match_truth(t: &crate::curation::CuratedTruth) -> truthmatch::Truth {
    truthmatch::Truth {
        diagnosis: t.diagnosis.clone(),
        code: t.diagnosis_code.clone(),
        synonyms: Vec::new(),
        differential: t.differential.iter().map(|d| d.diagnosis.clone()).collect(),
        descriptions: std::iter::once(t.expected_reasoning.clone())
            .chain(t.lesions.iter().map(|l| l.description.clone()))
            .collect(),
    }
}

fn disease_group(group: truthmatch::DxGroup) -> crate::model::DiseaseGroup {
    use crate::model::DiseaseGroup as G;
    match group {
        truthmatch::DxGroup::MultipleSclerosis => G::MultipleSclerosis,
        truthmatch::DxGroup::Stroke => G::Stroke,
        truthmatch::DxGroup::Tumour => G::Tumour,
        truthmatch::DxGroup::OtherAbnormality => G::OtherAbnormality,
        truthmatch::DxGroup::Normal => G::Normal,
    }
}
