//! The grader workbench's data: a study's clinician-rated items split into development and test
//! (seeded, stratified by case, stored), a grader version's agreement on each part, the
//! development items ordered by disagreement, one item side by side, confirmation of a version
//! (which alone opens its test agreement, and is audited), and drift between two versions.
//!
//! The statistics are `calibration`'s (`dev_test_split`, `grader_items`, `version_drift`); this
//! module reads the store and writes the split and confirmations. Who may see it (never a blinded
//! reader) is decided by the caller, as for the calibration report.

use crate::model::{GraderError, SliceRef, Turn};
use crate::store::audit::Entry;
use crate::store::{Store, NOW_SQL};
use crate::{Error, Result};
use calibration::dev_test_split::{place_new_items, Part, SplitItem};
use calibration::grader_items::{agreement, by_disagreement, Agreement, ItemComparison};
use calibration::version_drift::{version_drift, VersionDrift, VersionScore};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;

/// One clinician-rated response of the study.
struct RatedItem {
    response: i64,
    /// `case/task/model/sample`.
    item: String,
    case: String,
    disease_group: String,
    clinician_scores: Vec<f64>,
}

impl RatedItem {
    fn split_item(&self) -> SplitItem {
        SplitItem {
            item: self.item.clone(),
            case: self.case.clone(),
            stratum: self.disease_group.clone(),
        }
    }
}

/// A grader version on the split: agreement on the development items always, on the test items
/// only once the version is confirmed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GraderOnSplit {
    pub grader: String,
    /// Drawn from all 64 bits: a string across IPC (`crate::wide`).
    #[serde(with = "crate::wide::u64_string")]
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub seed: u64,
    pub development_items: usize,
    pub test_items: usize,
    /// Development items the grader has scored so far.
    pub development_graded: usize,
    pub development: Agreement,
    /// `None` until the version is confirmed.
    pub test: Option<Agreement>,
    pub confirmed: Option<Confirmation>,
    /// While this version is unconfirmed: a later version's confirmation, which closed the test
    /// items to this one (`confirm_grader`).
    pub closed_by: Option<LaterConfirmation>,
}

/// A confirmation of a version made after this one (the workbench lists versions oldest first):
/// from then on, earlier versions are never judged on the test items, so the lead cannot see
/// several versions' test agreement and keep the best.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LaterConfirmation {
    pub grader: String,
    pub by: String,
    pub at: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Confirmation {
    pub by: String,
    pub at: String,
}

/// One row of the disagreement browser.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
// Its name in the generated TypeScript bindings (ui/src/bindings.ts), beside curation's
// `Disagreement`; JSON never writes a container's name.
#[serde(rename = "WorkbenchDisagreement")]
pub struct Disagreement {
    pub response: i64,
    pub item: String,
    /// Read from stored scores (SQLite holds no NaN), so finite, as their difference is.
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub clinician_mean: f64,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub grader_score: f64,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub gap: f64,
}

/// One item side by side: what the model answered, what the clinicians and the grader said.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ItemSideBySide {
    pub response: i64,
    pub case_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub task_prompt: String,
    pub key_images: Vec<SliceRef>,
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Option<Vec<Turn>>,
    pub clinicians: Vec<ClinicianReading>,
    pub grader_score: Option<f64>,
    pub grader_rationale: Option<String>,
    pub grader_errors: Vec<GraderError>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ClinicianReading {
    pub rater: String,
    /// A stored, submitted rating's overall score: finite.
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub overall: f64,
    pub errors: Vec<ClinicianError>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ClinicianError {
    pub category: String,
    pub severity: u8,
    pub comment: String,
}

/// A seed for a study's first split, drawn at random: whoever tunes the prompt cannot choose
/// which items are held out.
pub fn fresh_seed() -> u64 {
    uuid::Uuid::new_v4().as_u64_pair().0
}

fn study_key(store: &Store, study_id: &str) -> Result<i64> {
    store
        .read()
        .query_row(
            "SELECT id FROM studies WHERE study_id = ?1",
            [study_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "finding the study", e))?
        .ok_or_else(|| Error::NotFound {
            what: format!("study {study_id:?}"),
        })
}

/// The study's responses with at least one submitted first-read overall score.
fn rated_items(store: &Store, study: i64) -> Result<Vec<RatedItem>> {
    let fail = |e| Error::database(store.path(), "reading the clinicians' scores", e);
    let mut stmt = store
        .read()
        .prepare(
            "SELECT r.id, c.case_id, t.task_id, r.model, r.sample, g.overall, c.disease_group
             FROM ratings g JOIN responses r ON g.response = r.id JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id JOIN raters ra ON g.rater = ra.id
             WHERE c.study = ?1 AND g.status = 'submitted' AND g.read_no = 1
               AND g.overall IS NOT NULL
             ORDER BY r.id, ra.name",
        )
        .map_err(fail)?;
    let mut rows = stmt.query([study]).map_err(fail)?;
    let mut items: Vec<RatedItem> = Vec::new();
    while let Some(row) = rows.next().map_err(fail)? {
        let response: i64 = row.get(0).map_err(fail)?;
        let overall: f64 = row.get(5).map_err(fail)?;
        match items.last_mut() {
            Some(last) if last.response == response => last.clinician_scores.push(overall),
            _ => {
                let case: String = row.get(1).map_err(fail)?;
                let task: String = row.get(2).map_err(fail)?;
                let model: String = row.get(3).map_err(fail)?;
                let sample: u32 = row.get(4).map_err(fail)?;
                items.push(RatedItem {
                    response,
                    item: format!("{case}/{task}/{model}/{sample}"),
                    case,
                    disease_group: row.get(6).map_err(fail)?,
                    clinician_scores: vec![overall],
                });
            }
        }
    }
    Ok(items)
}

/// Every score `grader` gave a response of the study: response → score.
fn grader_scores(store: &Store, study: i64, grader: &str) -> Result<BTreeMap<i64, f64>> {
    let fail = |e| Error::database(store.path(), "reading the grader's scores", e);
    let mut stmt = store
        .read()
        .prepare(
            "SELECT s.response, s.score FROM grader_scores s JOIN responses r ON s.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 AND s.grader = ?2",
        )
        .map_err(fail)?;
    let rows = stmt
        .query_map(params![study, grader], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(fail)?;
    rows.collect::<rusqlite::Result<_>>().map_err(fail)
}

/// The study's split as stored: its seed (`None` before the workbench first opened the study),
/// the rated items, and those of them placed so far with their parts.
struct StoredSplit {
    seed: Option<u64>,
    items: Vec<RatedItem>,
    placed: Vec<(SplitItem, Part)>,
}

fn stored_split(store: &Store, study: i64) -> Result<StoredSplit> {
    let items = rated_items(store, study)?;
    let fail = |e| Error::database(store.path(), "reading the development/test split", e);
    let seed: Option<i64> = store
        .read()
        .query_row(
            "SELECT seed FROM grader_splits WHERE study = ?1",
            [study],
            |r| r.get(0),
        )
        .optional()
        .map_err(fail)?;
    let mut stmt = store
        .read()
        .prepare(
            "SELECT s.response, s.part FROM grader_split_items s JOIN responses r
               ON s.response = r.id JOIN tasks t ON r.task = t.id
               JOIN cases c ON t.case_ref = c.id WHERE c.study = ?1",
        )
        .map_err(fail)?;
    let rows: Vec<(i64, String)> = stmt
        .query_map([study], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(fail)?
        .collect::<rusqlite::Result<_>>()
        .map_err(fail)?;
    let by_response: BTreeMap<i64, &RatedItem> = items.iter().map(|i| (i.response, i)).collect();
    let mut placed = Vec::new();
    for (response, part) in rows {
        let part = Part::parse(&part).ok_or_else(|| Error::Corrupt {
            what: format!("split part {part:?} of response {response}"),
        })?;
        // A placed item whose rating was reopened keeps its row, and its part when it returns.
        if let Some(item) = by_response.get(&response) {
            placed.push((item.split_item(), part));
        }
    }
    Ok(StoredSplit {
        seed: seed.map(|s| s as u64),
        items,
        placed,
    })
}

/// What the calibration verdict of a study reads when the workbench split it: the test part's
/// items (`case/task/model/sample`, the rated items placed or, placed the same way without
/// writing, still to be placed), and how many grader versions were confirmed on them. `None` when
/// the workbench never split the study: the verdict then reads every item.
pub struct HeldOutItems {
    pub items: std::collections::BTreeSet<String>,
    pub cases: usize,
    pub versions_confirmed: usize,
}

pub fn held_out_items(store: &Store, study: i64) -> Result<Option<HeldOutItems>> {
    let stored = stored_split(store, study)?;
    let Some(seed) = stored.seed else {
        return Ok(None);
    };
    let new: Vec<SplitItem> = stored.items.iter().map(RatedItem::split_item).collect();
    let mut part_of: BTreeMap<String, Part> = place_new_items(seed, &stored.placed, &new);
    part_of.extend(stored.placed.into_iter().map(|(i, part)| (i.item, part)));
    let test: Vec<&RatedItem> = stored
        .items
        .iter()
        .filter(|i| part_of.get(&i.item) == Some(&Part::Test))
        .collect();
    let versions_confirmed: i64 = store
        .read()
        .query_row(
            "SELECT COUNT(DISTINCT grader) FROM grader_confirmations WHERE study = ?1",
            [study],
            |r| r.get(0),
        )
        .map_err(|e| Error::database(store.path(), "counting confirmed grader versions", e))?;
    Ok(Some(HeldOutItems {
        cases: test
            .iter()
            .map(|i| i.case.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        items: test.into_iter().map(|i| i.item.clone()).collect(),
        versions_confirmed: versions_confirmed as usize,
    }))
}

/// The study's split, made on first use with `seed_if_new` and extended by the items rated
/// since (one transaction, audited when anything was placed). Returns the seed and each rated
/// item's part.
fn split(
    store: &mut Store,
    study: i64,
    study_id: &str,
    seed_if_new: u64,
    actor: &str,
) -> Result<(u64, Vec<(RatedItem, Part)>)> {
    let StoredSplit {
        seed: stored_seed,
        items,
        placed,
    } = stored_split(store, study)?;
    let seed = stored_seed.unwrap_or(seed_if_new);
    let new: Vec<SplitItem> = items.iter().map(RatedItem::split_item).collect();
    let placements = place_new_items(seed, &placed, &new);
    if stored_seed.is_none() || !placements.is_empty() {
        let response_of: BTreeMap<&str, i64> = items
            .iter()
            .map(|i| (i.item.as_str(), i.response))
            .collect();
        store.write(|w| {
            if stored_seed.is_none() {
                w.tx()
                    .execute(
                        &format!(
                            "INSERT INTO grader_splits (study, seed, created_at)
                             VALUES (?1, ?2, {NOW_SQL})"
                        ),
                        params![study, seed as i64],
                    )
                    .map_err(|e| w.fail("storing the split's seed", e))?;
            }
            for (item, part) in &placements {
                w.tx()
                    .execute(
                        "INSERT INTO grader_split_items (response, part) VALUES (?1, ?2)",
                        params![response_of[item.as_str()], part.as_str()],
                    )
                    .map_err(|e| w.fail("placing an item in the split", e))?;
            }
            let count = |p| placements.values().filter(|v| **v == p).count();
            w.audit(&Entry {
                actor,
                action: "place grader split items",
                entity: &format!("study:{study_id}"),
                before: None,
                after: Some(&json!({
                    "seed": seed,
                    "development": count(Part::Development),
                    "test": count(Part::Test),
                })),
            })
        })?;
    }
    let mut part_of: BTreeMap<String, Part> =
        placed.into_iter().map(|(i, part)| (i.item, part)).collect();
    part_of.extend(placements);
    let parted = items
        .into_iter()
        .map(|i| {
            let part = part_of[&i.item];
            (i, part)
        })
        .collect();
    Ok((seed, parted))
}

fn comparisons<'a>(
    items: impl Iterator<Item = &'a RatedItem>,
    scores: &BTreeMap<i64, f64>,
) -> Vec<ItemComparison> {
    items
        .filter_map(|i| {
            Some(ItemComparison {
                item: i.item.clone(),
                case: i.case.clone(),
                clinician_scores: i.clinician_scores.clone(),
                grader_score: *scores.get(&i.response)?,
            })
        })
        .collect()
}

/// The first confirmation on `study` of a grader version later than `grader`, in the order the
/// workbench lists versions (`run_specs` by first run, then name, as `runner::versions` lists
/// them); scores of a grader with no spec (imported with the bundle) come before every spec.
fn later_confirmation(
    store: &Store,
    study: i64,
    grader: &str,
) -> Result<Option<LaterConfirmation>> {
    store
        .read()
        .query_row(
            "SELECT c.grader, c.confirmed_by, c.at
             FROM grader_confirmations c
             JOIN run_specs later ON later.name = c.grader AND later.kind = 'grader'
             LEFT JOIN run_specs this ON this.name = ?2
             WHERE c.study = ?1 AND c.grader <> ?2
               AND (this.name IS NULL
                    OR later.first_run_at > this.first_run_at
                    OR (later.first_run_at = this.first_run_at AND later.name > this.name))
             ORDER BY c.at, c.id
             LIMIT 1",
            params![study, grader],
            |r| {
                Ok(LaterConfirmation {
                    grader: r.get(0)?,
                    by: r.get(1)?,
                    at: r.get(2)?,
                })
            },
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "reading later confirmations", e))
}

fn confirmation(store: &Store, study: i64, grader: &str) -> Result<Option<Confirmation>> {
    store
        .read()
        .query_row(
            "SELECT confirmed_by, at FROM grader_confirmations WHERE study = ?1 AND grader = ?2",
            params![study, grader],
            |r| {
                Ok(Confirmation {
                    by: r.get(0)?,
                    at: r.get(1)?,
                })
            },
        )
        .optional()
        .map_err(|e| Error::database(store.path(), "reading the grader's confirmation", e))
}

/// `grader` on the study's split: development agreement, and test agreement once confirmed.
/// The first call makes the split with `seed_if_new`; later ones keep its stored seed.
pub fn grader_on_split(
    store: &mut Store,
    study_id: &str,
    grader: &str,
    seed_if_new: u64,
    actor: &str,
) -> Result<GraderOnSplit> {
    let study = study_key(store, study_id)?;
    let (seed, parted) = split(store, study, study_id, seed_if_new, actor)?;
    let scores = grader_scores(store, study, grader)?;
    let of_part = |p: Part| {
        parted
            .iter()
            .filter(move |(_, part)| *part == p)
            .map(|(i, _)| i)
    };
    let development = comparisons(of_part(Part::Development), &scores);
    let confirmed = confirmation(store, study, grader)?;
    let closed_by = match confirmed {
        Some(_) => None,
        None => later_confirmation(store, study, grader)?,
    };
    Ok(GraderOnSplit {
        grader: grader.to_owned(),
        seed,
        development_items: of_part(Part::Development).count(),
        test_items: of_part(Part::Test).count(),
        development_graded: development.len(),
        development: agreement(&development),
        test: confirmed
            .is_some()
            .then(|| agreement(&comparisons(of_part(Part::Test), &scores))),
        confirmed,
        closed_by,
    })
}

/// Confirms `grader` as the version judged on the test items: recorded once, in the same
/// transaction as its audit entry (which carries both agreements as they stood), and from then
/// on its test agreement is shown. Confirming again changes nothing. A version earlier than one
/// already confirmed is refused: the test items are judged once per line of versions, forward,
/// so the best test score cannot be picked after the fact.
pub fn confirm_grader(
    store: &mut Store,
    study_id: &str,
    grader: &str,
    seed_if_new: u64,
    actor: &str,
) -> Result<GraderOnSplit> {
    let study = study_key(store, study_id)?;
    if confirmation(store, study, grader)?.is_none() {
        if let Some(later) = later_confirmation(store, study, grader)? {
            return Err(crate::rating::refused(format!(
                "grader {grader:?} cannot be confirmed on study {study_id}: {:?}, a later \
                 version, was confirmed by {} at {}, which closed the test items to earlier \
                 versions",
                later.grader, later.by, later.at
            )));
        }
        let (_, parted) = split(store, study, study_id, seed_if_new, actor)?;
        let scores = grader_scores(store, study, grader)?;
        if scores.is_empty() {
            return Err(crate::rating::refused(format!(
                "grader {grader:?} has scored no response of study {study_id}: run it before \
                 confirming it"
            )));
        }
        let summary = |p: Part| {
            let a = agreement(&comparisons(
                parted.iter().filter(|(_, part)| *part == p).map(|(i, _)| i),
                &scores,
            ));
            json!({"n_items": a.n_items, "pearson_r": a.pearson.value().map(|p| p.r),
                   "mean_difference": a.mean_difference})
        };
        store.write(|w| {
            w.tx()
                .execute(
                    &format!(
                        "INSERT INTO grader_confirmations (study, grader, confirmed_by, at)
                         VALUES (?1, ?2, ?3, {NOW_SQL})"
                    ),
                    params![study, grader, actor],
                )
                .map_err(|e| w.fail("recording the confirmation", e))?;
            w.audit(&Entry {
                actor,
                action: "confirm grader version",
                entity: &format!("study:{study_id}/grader:{grader}"),
                before: None,
                after: Some(&json!({
                    "development": summary(Part::Development),
                    "test": summary(Part::Test),
                })),
            })
        })?;
    }
    grader_on_split(store, study_id, grader, seed_if_new, actor)
}

/// The development items `grader` scored, largest |grader − clinicians' mean| first. Test items
/// are never listed: looking at them while revising the prompt is what the split prevents.
pub fn development_disagreements(
    store: &mut Store,
    study_id: &str,
    grader: &str,
    seed_if_new: u64,
    actor: &str,
) -> Result<Vec<Disagreement>> {
    let study = study_key(store, study_id)?;
    let (_, parted) = split(store, study, study_id, seed_if_new, actor)?;
    let scores = grader_scores(store, study, grader)?;
    let development: Vec<&RatedItem> = parted
        .iter()
        .filter(|(_, p)| *p == Part::Development)
        .map(|(i, _)| i)
        .collect();
    let response_of: BTreeMap<&str, i64> = development
        .iter()
        .map(|i| (i.item.as_str(), i.response))
        .collect();
    let compared = comparisons(development.iter().copied(), &scores);
    Ok(by_disagreement(&compared)
        .into_iter()
        .map(|c| Disagreement {
            response: response_of[c.item.as_str()],
            item: c.item.clone(),
            clinician_mean: c.clinician_mean(),
            grader_score: c.grader_score,
            gap: c.gap(),
        })
        .collect())
}

/// One response with the clinicians' scores and error labels and `grader`'s score, rationale
/// and claimed errors. A test item is refused until the grader is confirmed.
pub fn item_side_by_side(store: &Store, grader: &str, response: i64) -> Result<ItemSideBySide> {
    let fail = |e| Error::database(store.path(), "reading the item", e);
    let conn = store.read();
    let row = conn
        .query_row(
            "SELECT c.study, c.case_id, t.task_id, r.model, r.sample, t.prompt,
                    t.key_images_json, r.answer, r.rationale, r.turns_json,
                    (SELECT part FROM grader_split_items WHERE response = r.id)
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE r.id = ?1",
            [response],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, u32>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, Option<String>>(8)?,
                    r.get::<_, Option<String>>(9)?,
                    r.get::<_, Option<String>>(10)?,
                ))
            },
        )
        .optional()
        .map_err(fail)?
        .ok_or_else(|| Error::NotFound {
            what: format!("response {response}"),
        })?;
    let (study, case_id, task_id, model, sample, task_prompt, key_images, answer, rationale) = (
        row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8,
    );
    if row.10.as_deref() == Some(Part::Test.as_str())
        && confirmation(store, study, grader)?.is_none()
    {
        return Err(crate::rating::refused(format!(
            "{case_id}/{task_id}/{model}/{sample} is a test item: it opens once grader \
             {grader:?} is confirmed, so that revising the prompt cannot fit the test items"
        )));
    }
    let corrupt = |what: &str, e: serde_json::Error| Error::Corrupt {
        what: format!("the {what} of response {response}: {e}"),
    };
    let mut clinicians: Vec<ClinicianReading> = Vec::new();
    let mut ratings: Vec<i64> = Vec::new();
    {
        let mut stmt = conn
            .prepare(
                "SELECT g.id, ra.name, g.overall FROM ratings g JOIN raters ra ON g.rater = ra.id
                 WHERE g.response = ?1 AND g.status = 'submitted' AND g.read_no = 1
                   AND g.overall IS NOT NULL ORDER BY ra.name",
            )
            .map_err(fail)?;
        let mut rows = stmt.query([response]).map_err(fail)?;
        while let Some(r) = rows.next().map_err(fail)? {
            ratings.push(r.get(0).map_err(fail)?);
            clinicians.push(ClinicianReading {
                rater: r.get(1).map_err(fail)?,
                overall: r.get(2).map_err(fail)?,
                errors: Vec::new(),
            });
        }
    }
    let mut stmt = conn
        .prepare(
            "SELECT category, severity, comment FROM error_labels WHERE rating = ?1 ORDER BY id",
        )
        .map_err(fail)?;
    for (rating, reading) in ratings.iter().zip(&mut clinicians) {
        let rows = stmt
            .query_map([rating], |r| {
                Ok(ClinicianError {
                    category: r.get(0)?,
                    severity: r.get(1)?,
                    comment: r.get(2)?,
                })
            })
            .map_err(fail)?;
        reading.errors = rows.collect::<rusqlite::Result<_>>().map_err(fail)?;
    }
    let graded: Option<(f64, Option<String>, Option<String>)> = conn
        .query_row(
            "SELECT score, rationale, errors_json FROM grader_scores
             WHERE response = ?1 AND grader = ?2",
            params![response, grader],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(fail)?;
    let (grader_score, grader_rationale, grader_errors) = match graded {
        Some((score, rationale, errors)) => (
            Some(score),
            rationale,
            errors
                .map(|e| serde_json::from_str(&e).map_err(|e| corrupt("grader's errors", e)))
                .transpose()?
                .unwrap_or_default(),
        ),
        None => (None, None, Vec::new()),
    };
    Ok(ItemSideBySide {
        response,
        case_id,
        task_id,
        model,
        sample,
        task_prompt,
        key_images: serde_json::from_str(&key_images).map_err(|e| corrupt("key images", e))?,
        answer,
        rationale,
        turns: row
            .9
            .map(|t| serde_json::from_str(&t).map_err(|e| corrupt("turns", e)))
            .transpose()?,
        clinicians,
        grader_score,
        grader_rationale,
        grader_errors,
    })
}

/// Drift from grader `before` to `after` over every response of the study both scored; a
/// verdict passes at the overall scale's midpoint or above.
pub fn grader_drift(
    store: &Store,
    study_id: &str,
    before: &str,
    after: &str,
) -> Result<VersionDrift> {
    let study = study_key(store, study_id)?;
    let fail = |e| Error::database(store.path(), "reading the versions' scores", e);
    let rubric: String = store
        .read()
        .query_row(
            "SELECT rubric_json FROM studies WHERE id = ?1",
            [study],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let rubric: crate::model::Rubric =
        serde_json::from_str(&rubric).map_err(|e| Error::Corrupt {
            what: format!("rubric of study {study_id:?}: {e}"),
        })?;
    let mut stmt = store
        .read()
        .prepare(
            "SELECT c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample, r.model,
                    s.score
             FROM grader_scores s JOIN responses r ON s.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 AND s.grader = ?2 ORDER BY r.id",
        )
        .map_err(fail)?;
    let mut read = |grader: &str| -> Result<Vec<VersionScore>> {
        stmt.query_map(params![study, grader], |r| {
            Ok(VersionScore {
                item: r.get(0)?,
                model: r.get(1)?,
                score: r.get(2)?,
            })
        })
        .map_err(fail)?
        .collect::<rusqlite::Result<_>>()
        .map_err(fail)
    };
    let (before, after) = (read(before)?, read(after)?);
    Ok(version_drift(
        &before,
        &after,
        (rubric.overall.min + rubric.overall.max) / 2.0,
    ))
}
