//! Curation's reads and writes in PostgreSQL: each series' geometry and the case's versions and
//! reviews copied at import; a curator's save, submit and review decided by
//! `cases::app::team::{decide_save, decide_submit, decide_review}` under a lock on the case row
//! (two server processes take turns), written with its audit entry in one transaction, and
//! stored once per edit id.

use super::{audit, from_json, text_with_nul, time_text, to_json};
use crate::error::{invalid, ServerError};
use cases::app::team::{
    decide_review, decide_save, decide_submit, summarise, CurationCase, CurationCaseSummary,
    CurationReview, CurationSave, CurationSubmit, NewVersion, SavedVersion, ServerVersion,
    StatusChange, TeamCuratorSession, TeamStudyCase, TeamUnblindedSession,
};
use cases::curation::{imported_final, ReviewEntry, Version};
use deadpool_postgres::{GenericClient, Pool, Transaction};
use imaging::SeriesGeometry;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

fn enum_text<T: Serialize>(value: &T) -> String {
    match to_json(value) {
        Value::String(text) => text,
        other => unreachable!("an enum of the curation serialises as a string, got {other}"),
    }
}

/// Copies a case's series geometry, and the versions and reviews of its ground truth the server
/// does not hold yet (by version number), from the lead's database. Returns the versions added.
/// A re-import adds nothing: a version the server already numbers is kept as the server has it.
pub(super) async fn import_case(
    tx: &Transaction<'_>,
    case_key: i64,
    case: &TeamStudyCase,
) -> Result<u64, ServerError> {
    for geometry in &case.geometry {
        let [columns, rows, slices] = geometry.dims.map(|n| {
            i32::try_from(n).map_err(|_| {
                invalid(
                    "geometry",
                    format!(
                        "series {:?} has more voxels than the server stores",
                        geometry.series_id
                    ),
                )
            })
        });
        let (columns, rows, slices) = (columns?, rows?, slices?);
        let affine: Vec<f64> = geometry.voxel_to_patient[..3]
            .iter()
            .flatten()
            .copied()
            .collect();
        tx.execute(
            "INSERT INTO series_geometry (series, columns, rows, slices, voxel_to_patient)
             SELECT id, $3, $4, $5, $6 FROM series WHERE case_ref = $1 AND series_id = $2
             ON CONFLICT (series) DO NOTHING",
            &[
                &case_key,
                &geometry.series_id,
                &columns,
                &rows,
                &slices,
                &affine,
            ],
        )
        .await?;
    }
    let mut added = 0;
    for version in &case.curation {
        let last_review = version.reviews.last();
        let inserted = tx
            .query_opt(
                "INSERT INTO curation_versions (case_ref, version, branch, based_on, status,
                     source, author_name, body, created_at, status_by, status_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9::text::timestamptz, now()),
                         $10, $11::text::timestamptz)
                 ON CONFLICT (case_ref, version) DO NOTHING RETURNING id",
                &[
                    &case_key,
                    &version.version,
                    &version.branch,
                    &version.based_on,
                    &enum_text(&version.status),
                    &enum_text(&version.source),
                    &version.author,
                    &to_json(&version.truth),
                    &version.created_at,
                    &last_review.map(|r| r.by.clone()),
                    &last_review.map(|r| r.at.clone()),
                ],
            )
            .await?;
        let Some(row) = inserted else { continue };
        let id: i64 = row.get(0);
        for review in &version.reviews {
            tx.execute(
                "INSERT INTO curation_reviews (version, reviewer, decision, comment, at)
                 VALUES ($1, $2, $3, $4, $5::text::timestamptz)",
                &[
                    &id,
                    &review.by,
                    &review.decision,
                    &review.comment,
                    &review.at,
                ],
            )
            .await?;
        }
        added += 1;
    }
    Ok(added)
}

/// Each series' geometry of a case, by series id (a series imported before the server copied
/// geometry has none).
pub(super) async fn case_geometry(
    client: &impl GenericClient,
    case_key: i64,
) -> Result<BTreeMap<String, SeriesGeometry>, ServerError> {
    let mut geometry = BTreeMap::new();
    for row in client
        .query(
            "SELECT s.series_id, g.columns, g.rows, g.slices, g.voxel_to_patient
             FROM series s JOIN series_geometry g ON g.series = s.id WHERE s.case_ref = $1",
            &[&case_key],
        )
        .await?
    {
        let series_id: String = row.get(0);
        let affine: Vec<f64> = row.get(4);
        let corrupt = || {
            ServerError::Domain(cases::Error::Corrupt {
                what: format!("the stored geometry of series {series_id:?}"),
            })
        };
        if affine.len() != 12 {
            return Err(corrupt());
        }
        let mut voxel_to_patient = [[0.0; 4], [0.0; 4], [0.0; 4], [0.0, 0.0, 0.0, 1.0]];
        for (index, value) in affine.into_iter().enumerate() {
            voxel_to_patient[index / 4][index % 4] = value;
        }
        let size =
            |column: usize| usize::try_from(row.get::<_, i32>(column)).map_err(|_| corrupt());
        let dims = [size(1)?, size(2)?, size(3)?];
        geometry.insert(
            series_id,
            SeriesGeometry {
                dims,
                voxel_to_patient,
            },
        );
    }
    Ok(geometry)
}

/// The case's key and what its versions are checked against; with `lock`, the case row is
/// locked until the transaction ends, so curation steps on one case are decided one at a time
/// by whichever server process receives them.
async fn curation_case(
    client: &impl GenericClient,
    study: i64,
    case_id: &str,
    lock: bool,
) -> Result<(i64, CurationCase), ServerError> {
    let sql = format!(
        "SELECT id FROM cases WHERE study = $1 AND case_id = $2 {}",
        if lock { "FOR UPDATE" } else { "" }
    );
    let case_key: i64 = client
        .query_opt(&sql, &[&study, &case_id])
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("case {case_id:?}")))?
        .get(0);
    let geometry = case_geometry(client, case_key).await?;
    let mut series = BTreeMap::new();
    for row in client
        .query(
            "SELECT series_id FROM series WHERE case_ref = $1",
            &[&case_key],
        )
        .await?
    {
        let id: String = row.get(0);
        let known = geometry.get(&id).copied();
        series.insert(id, known);
    }
    let mut tasks = BTreeMap::new();
    for row in client
        .query(
            "SELECT task_id, body->>'family' FROM tasks WHERE case_ref = $1",
            &[&case_key],
        )
        .await?
    {
        tasks.insert(
            row.get(0),
            from_json(Value::String(row.get(1)), "a task's family")?,
        );
    }
    Ok((
        case_key,
        CurationCase {
            case_id: case_id.to_owned(),
            series,
            tasks,
        },
    ))
}

/// Every version of a case with its reviews, oldest first.
async fn versions(
    client: &impl GenericClient,
    case_key: i64,
) -> Result<Vec<ServerVersion>, ServerError> {
    let mut reviews: BTreeMap<i64, Vec<ReviewEntry>> = BTreeMap::new();
    for row in client
        .query(
            &format!(
                "SELECT r.version, r.reviewer, r.decision, r.comment, {}
                 FROM curation_reviews r JOIN curation_versions v ON v.id = r.version
                 WHERE v.case_ref = $1 ORDER BY r.id",
                time_text("r.at")
            ),
            &[&case_key],
        )
        .await?
    {
        reviews.entry(row.get(0)).or_default().push(ReviewEntry {
            by: row.get(1),
            decision: row.get(2),
            comment: row.get(3),
            at: row.get(4),
        });
    }
    let mut found = Vec::new();
    for row in client
        .query(
            &format!(
                "SELECT id, version, branch, based_on, status, source, author, author_name, body,
                        {}
                 FROM curation_versions WHERE case_ref = $1 ORDER BY version",
                time_text("created_at")
            ),
            &[&case_key],
        )
        .await?
    {
        let id: i64 = row.get(0);
        let status = from_json(Value::String(row.get(4)), "a version's status")?;
        let source = from_json(Value::String(row.get(5)), "a version's source")?;
        found.push(ServerVersion {
            author_account: row.get(6),
            version: Version {
                version: row.get(1),
                branch: row.get(2),
                based_on: row.get(3),
                status,
                source,
                author: row.get(7),
                created_at: Some(row.get(9)),
                reviews: reviews.remove(&id).unwrap_or_default(),
                imported_final: imported_final(status, source),
                truth: from_json(row.get(8), "a version's ground truth")?,
            },
        });
    }
    Ok(found)
}

/// Per case of the study: how many versions, the latest of main and its status, the current
/// final version.
pub async fn curation_cases(
    pool: &Pool,
    unblinded: &TeamUnblindedSession,
) -> Result<Vec<CurationCaseSummary>, ServerError> {
    let client = pool.get().await?;
    let cases = client
        .query(
            "SELECT id, case_id FROM cases WHERE study = $1 ORDER BY id",
            &[&unblinded.member().study],
        )
        .await?;
    let mut summaries = Vec::with_capacity(cases.len());
    for row in cases {
        let case_id: String = row.get(1);
        let versions: Vec<Version> = versions(&client, row.get(0))
            .await?
            .into_iter()
            .map(|v| v.version)
            .collect();
        summaries.push(summarise(&case_id, &versions));
    }
    Ok(summaries)
}

/// Every version of one case, oldest first.
pub async fn curation_history(
    pool: &Pool,
    unblinded: &TeamUnblindedSession,
    case_id: &str,
) -> Result<Vec<Version>, ServerError> {
    let client = pool.get().await?;
    let (case_key, _) = curation_case(&client, unblinded.member().study, case_id, false).await?;
    Ok(versions(&client, case_key)
        .await?
        .into_iter()
        .map(|v| v.version)
        .collect())
}

/// One curation step as it arrives: what identifies it for a resend, and what it asks.
enum Step<'a> {
    Save(&'a CurationSave),
    Submit(i64, &'a CurationSubmit),
    Review(i64, &'a CurationReview),
}

impl Step<'_> {
    fn edit_id(&self) -> &str {
        match self {
            Step::Save(save) => &save.edit_id,
            Step::Submit(_, submit) => &submit.edit_id,
            Step::Review(_, review) => &review.edit_id,
        }
    }

    /// The body as the client sent it.
    fn body(&self) -> Value {
        match self {
            Step::Save(save) => to_json(save),
            Step::Submit(_, submit) => to_json(submit),
            Step::Review(_, review) => to_json(review),
        }
    }

    /// The request as a whole, hashed: the same edit id with other content is refused.
    fn request(&self, case_id: &str) -> Value {
        let (kind, version) = match self {
            Step::Save(_) => ("save", None),
            Step::Submit(version, _) => ("submit", Some(*version)),
            Step::Review(version, _) => ("review", Some(*version)),
        };
        json!({ "case": case_id, "kind": kind, "version": version, "body": self.body() })
    }
}

/// Saves a new draft of a case's ground truth; 409 when the branch moved on, 422 naming each
/// field the version breaks.
pub async fn save_version(
    pool: &Pool,
    curator: &TeamCuratorSession,
    case_id: &str,
    save: &CurationSave,
) -> Result<SavedVersion, ServerError> {
    apply(pool, curator, case_id, Step::Save(save)).await
}

/// The latest draft of main goes to review.
pub async fn submit_version(
    pool: &Pool,
    curator: &TeamCuratorSession,
    case_id: &str,
    version: i64,
    submit: &CurationSubmit,
) -> Result<Version, ServerError> {
    apply(pool, curator, case_id, Step::Submit(version, submit)).await
}

/// A second curator's review; a version of main finalised becomes the case's ground truth.
pub async fn review_version(
    pool: &Pool,
    curator: &TeamCuratorSession,
    case_id: &str,
    version: i64,
    review: &CurationReview,
) -> Result<Version, ServerError> {
    apply(pool, curator, case_id, Step::Review(version, review)).await
}

async fn apply<R: Serialize + DeserializeOwned>(
    pool: &Pool,
    curator: &TeamCuratorSession,
    case_id: &str,
    step: Step<'_>,
) -> Result<R, ServerError> {
    super::check_edit_id(step.edit_id())?;
    if let Some(field) = text_with_nul("", &step.body()) {
        return Err(invalid(
            field.trim_start_matches('.'),
            "the NUL character (U+0000) cannot be stored; remove it",
        ));
    }
    let request_sha256: String = Sha256::digest(step.request(case_id).to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let member = curator.member();
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    // Locks the case first, so a resend racing its original waits and then finds it.
    let (case_key, case) = curation_case(&tx, member.study, case_id, true).await?;
    if let Some(row) = tx
        .query_opt(
            "SELECT request_sha256, reply FROM applied_curation_edits
             WHERE account = $1 AND edit_id = $2",
            &[&member.account, &step.edit_id()],
        )
        .await?
    {
        let first_sha256: String = row.get(0);
        if first_sha256 != request_sha256 {
            return Err(ServerError::Conflict(format!(
                "edit id {:?} was used for a different curation step; give each its own id",
                step.edit_id()
            )));
        }
        return from_json(row.get(1), "a stored curation reply");
    }
    let stored = versions(&tx, case_key).await?;
    let entity = format!("ground_truth:{}/{case_id}", member.study);
    let reply = match &step {
        Step::Save(save) => {
            let planned =
                decide_save(curator, &case, &stored, save).map_err(ServerError::CurationRefused)?;
            insert_version(&tx, case_key, &member.username, member.account, &planned).await?;
            audit(
                &tx,
                &member.username,
                "ground_truth.version",
                &entity,
                None,
                Some(&json!({
                    "version": planned.version,
                    "branch": planned.branch,
                    "based_on": planned.based_on,
                    "status": planned.status,
                    "source": planned.source,
                    "truth": planned.truth,
                    "edit_id": save.edit_id,
                })),
            )
            .await?;
            to_json(&SavedVersion {
                version: planned.version,
            })
        }
        Step::Submit(version, _) | Step::Review(version, _) => {
            let change = match &step {
                Step::Review(_, review) => {
                    decide_review(curator, case_id, &stored, *version, review)
                }
                _ => decide_submit(curator, case_id, &stored, *version),
            }
            .map_err(ServerError::CurationRefused)?;
            set_status(&tx, case_key, &member.username, &change).await?;
            audit(
                &tx,
                &member.username,
                "ground_truth.review",
                &entity,
                Some(&json!({ "version": change.version, "status": change.before })),
                Some(&json!({
                    "version": change.version,
                    "status": change.status,
                    "decision": change.decision,
                    "comment": change.comment,
                    "edit_id": step.edit_id(),
                })),
            )
            .await?;
            let after = versions(&tx, case_key)
                .await?
                .into_iter()
                .find(|v| v.version.version == change.version)
                .ok_or_else(|| ServerError::NotFound(format!("version {}", change.version)))?;
            to_json(&after.version)
        }
    };
    tx.execute(
        "INSERT INTO applied_curation_edits (account, edit_id, request_sha256, case_ref, reply)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &member.account,
            &step.edit_id(),
            &request_sha256,
            &case_key,
            &reply,
        ],
    )
    .await?;
    tx.commit().await?;
    from_json(reply, "a curation reply")
}

async fn insert_version(
    tx: &Transaction<'_>,
    case_key: i64,
    author_name: &str,
    author: i64,
    planned: &NewVersion,
) -> Result<(), ServerError> {
    tx.execute(
        "INSERT INTO curation_versions (case_ref, version, branch, based_on, status, source,
             author, author_name, body, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())",
        &[
            &case_key,
            &planned.version,
            &planned.branch,
            &planned.based_on,
            &enum_text(&planned.status),
            &enum_text(&planned.source),
            &author,
            &author_name,
            &to_json(&planned.truth),
        ],
    )
    .await?;
    Ok(())
}

async fn set_status(
    tx: &Transaction<'_>,
    case_key: i64,
    by: &str,
    change: &StatusChange,
) -> Result<(), ServerError> {
    let id: i64 = tx
        .query_one(
            "UPDATE curation_versions SET status = $3, status_by = $4, status_at = now()
             WHERE case_ref = $1 AND version = $2 RETURNING id",
            &[&case_key, &change.version, &enum_text(&change.status), &by],
        )
        .await?
        .get(0);
    tx.execute(
        "INSERT INTO curation_reviews (version, reviewer, decision, comment, at)
         VALUES ($1, $2, $3, $4, now())",
        &[&id, &by, &change.decision, &change.comment],
    )
    .await?;
    if let Some(ground_truth) = &change.ground_truth {
        tx.execute(
            "UPDATE cases SET ground_truth = $2 WHERE id = $1",
            &[&case_key, &to_json(ground_truth)],
        )
        .await?;
    }
    Ok(())
}
