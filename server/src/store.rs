//! Reads and writes of the server's PostgreSQL. Every function that touches a study takes the
//! session `cases::app::team` made for the caller, so the role check cannot be skipped; every
//! change runs in one transaction with its audit entry.

mod accounts;
mod curation;

pub use accounts::{
    accept_invitation, accept_password_reset, change_password, end_session, invitations, login,
    logout, reset_password, revoke_invitation, sessions,
};
pub use curation::{
    curation_cases, curation_history, review_version, save_version, submit_version,
};

use crate::auth::{self, Caller};
use crate::error::{invalid, ServerError};
use crate::wire::{
    EditAck, EditRequest, ImportReport, Invitation, InviteRequest, Me, Membership, Progress,
    QueueEntry, RaterProgress, ResultsItem, ResultsReport, SiteProgress, TopUpAdded, TopUpReport,
    TopUpRequest,
};
use cases::app::permissions::StudyRole;
use cases::app::team::{
    decide_edit, rater_item, rater_package, results_edits, PackageExchange, PackageRecipient,
    PackageSource, QueuedItem, RaterItem, StoredImage, StoredItem, TeamLeadSession, TeamMember,
    TeamRaterSession, TeamRating, TeamSeries, TeamSeriesFiles, TeamStudy, TeamStudyRating,
    TeamUnblindedSession,
};
use cases::case_codes::CaseCodes;
use cases::model::{Rubric, StudyMeta};
use cases::package::ImageSource;
use cases::rating::{RaterRole, RatingStatus};
use cases::rubric::RubricVersion;
use deadpool_postgres::{GenericClient, Pool, Transaction};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// ISO 8601 UTC with milliseconds, as the desktop store writes times.
pub(crate) const NOW_TEXT: &str =
    r#"to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#;

fn time_text(column: &str) -> String {
    format!(r#"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#)
}

/// `pg_advisory_xact_lock` keys of topping up a study's queues ("NRTOPUP" + the study's key).
const TOP_UP_LOCK: i64 = 0x4E52_544F_5055_0000;

pub(crate) fn from_json<T: DeserializeOwned>(value: Value, what: &str) -> Result<T, ServerError> {
    serde_json::from_value(value).map_err(|e| {
        ServerError::Domain(cases::Error::Corrupt {
            what: format!("{what}: {e}"),
        })
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("the server's values serialise")
}

fn role_text(role: StudyRole) -> String {
    match to_json(&role) {
        Value::String(text) => text,
        other => unreachable!("a role serialises as a string, got {other}"),
    }
}

pub(crate) async fn audit(
    tx: &Transaction<'_>,
    actor: &str,
    action: &str,
    entity: &str,
    before: Option<&Value>,
    after: Option<&Value>,
) -> Result<(), ServerError> {
    tx.execute(
        "INSERT INTO audit_log (actor, action, entity, before, after) VALUES ($1, $2, $3, $4, $5)",
        &[&actor, &action, &entity, &before, &after],
    )
    .await?;
    Ok(())
}

/// Copies a study into the server, or adds what a later import brings (new cases, tasks,
/// responses, grader scores); what is stored never changes. With `lead`, invites that username
/// as the study's lead unless someone already leads it.
pub async fn import_study(
    pool: &Pool,
    study: &TeamStudy,
    lead: Option<(&str, &str)>,
) -> Result<ImportReport, ServerError> {
    if let Some((username, _)) = lead {
        auth::check_username("lead", username)?;
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let rubric_version = rubric_number(study.rubric_version)?;
    let study_key: i64 = tx
        .query_one(
            "INSERT INTO studies (study_id, title, description, rubric, taxonomy, rubric_version)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (study_id) DO UPDATE SET study_id = EXCLUDED.study_id
             RETURNING id",
            &[
                &study.study_id,
                &study.title,
                &study.description,
                &to_json(&study.rubric),
                &to_json(&study.taxonomy),
                &rubric_version,
            ],
        )
        .await?
        .get(0);
    let (rubric_versions_added, rubric_version) =
        import_rubric_versions(&tx, study_key, study).await?;
    // The key that salts the replaced DICOM UIDs of this study's images: drawn at the first
    // import, kept on the server, never sent, so a rater cannot map a UID back.
    let deid_key: String = tx
        .query_one(
            "UPDATE studies SET deid_key = coalesce(deid_key, $2) WHERE id = $1
             RETURNING deid_key",
            &[&study_key, &auth::new_secret()?],
        )
        .await?
        .get(0);
    let (mut cases_added, mut responses_added, mut grader_scores_added, mut images_added) =
        (0, 0, 0, 0);
    let mut curation_versions_added = 0;
    for case in &study.cases {
        let inserted = tx
            .query_opt(
                "INSERT INTO cases (study, case_id, body, ground_truth) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (study, case_id) DO NOTHING RETURNING id",
                &[
                    &study_key,
                    &case.case.case_id,
                    &to_json(&case.case),
                    &case.ground_truth,
                ],
            )
            .await?;
        cases_added += u64::from(inserted.is_some());
        let case_key: i64 = tx
            .query_one(
                "SELECT id FROM cases WHERE study = $1 AND case_id = $2",
                &[&study_key, &case.case.case_id],
            )
            .await?
            .get(0);
        for series in &case.series {
            tx.execute(
                "INSERT INTO series (case_ref, series_id, body) VALUES ($1, $2, $3)
                 ON CONFLICT (case_ref, series_id) DO NOTHING",
                &[&case_key, &series.series_id, &to_json(series)],
            )
            .await?;
        }
        for files in &case.images {
            images_added += import_series_images(&tx, case_key, &deid_key, files).await?;
        }
        curation_versions_added += curation::import_case(&tx, case_key, case).await?;
        for task in &case.tasks {
            let task_key: i64 = tx
                .query_one(
                    "INSERT INTO tasks (case_ref, task_id, body) VALUES ($1, $2, $3)
                     ON CONFLICT (case_ref, task_id) DO UPDATE SET task_id = EXCLUDED.task_id
                     RETURNING id",
                    &[&case_key, &task.task.task_id, &to_json(&task.task)],
                )
                .await?
                .get(0);
            for response in &task.responses {
                let sample = i32::try_from(response.response.sample)
                    .map_err(|_| invalid("sample", "larger than the server stores"))?;
                let inserted = tx
                    .execute(
                        "INSERT INTO responses (task, model, sample, body) VALUES ($1, $2, $3, $4)
                         ON CONFLICT (task, model, sample) DO NOTHING",
                        &[
                            &task_key,
                            &response.response.model,
                            &sample,
                            &to_json(&response.response),
                        ],
                    )
                    .await?;
                responses_added += inserted;
                let response_key: i64 = tx
                    .query_one(
                        "SELECT id FROM responses WHERE task = $1 AND model = $2 AND sample = $3",
                        &[&task_key, &response.response.model, &sample],
                    )
                    .await?
                    .get(0);
                for score in &response.grader_scores {
                    grader_scores_added += tx
                        .execute(
                            "INSERT INTO grader_scores (response, grader, body) VALUES ($1, $2, $3)
                             ON CONFLICT (response, grader) DO NOTHING",
                            &[&response_key, &score.grader, &to_json(score)],
                        )
                        .await?;
                }
            }
        }
    }
    let lead_invitation = match lead {
        Some((username, site)) => {
            let led: bool = tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM memberships WHERE study = $1 AND role = 'lead')",
                    &[&study_key],
                )
                .await?
                .get(0);
            if led {
                None
            } else {
                let lead = Invitee {
                    username,
                    role: StudyRole::Lead,
                    site,
                    clinical_role: None,
                    years_experience: None,
                };
                Some(create_invitation(&tx, study_key, "import", &lead).await?)
            }
        }
        None => None,
    };
    audit(
        &tx,
        "import",
        "import study",
        &format!("study:{}", study.study_id),
        None,
        Some(&json!({
            "cases_added": cases_added,
            "responses_added": responses_added,
            "grader_scores_added": grader_scores_added,
            "images_added": images_added,
            "curation_versions_added": curation_versions_added,
            "rubric_versions_added": rubric_versions_added,
            "rubric_version": rubric_version,
        })),
    )
    .await?;
    tx.commit().await?;
    Ok(ImportReport {
        study_id: study.study_id.clone(),
        cases_added,
        responses_added,
        grader_scores_added,
        images_added,
        curation_versions_added,
        rubric_versions_added,
        rubric_version,
        lead_invitation,
    })
}

fn rubric_number(version: u32) -> Result<i32, ServerError> {
    i32::try_from(version).map_err(|_| invalid("rubric_version", "larger than the server stores"))
}

/// Adds the rubric versions the server does not number yet and moves the study's current
/// version forward to the lead's (never back: an import from an older copy of the lead's
/// database leaves it). A version the server holds with other content is refused, nothing
/// imported: ratings on the server were made under the server's. Returns the versions added
/// and the current version's number.
async fn import_rubric_versions(
    tx: &Transaction<'_>,
    study_key: i64,
    study: &TeamStudy,
) -> Result<(u64, u32), ServerError> {
    let mut added = 0;
    for RubricVersion { version, rubric } in study.rubric_versions() {
        let number = rubric_number(version)?;
        let held = tx
            .query_opt(
                "SELECT rubric FROM study_rubrics WHERE study = $1 AND version = $2",
                &[&study_key, &number],
            )
            .await?;
        match held {
            // Compared as rubrics, not as JSON text: the same rubric spelled otherwise is the same.
            Some(row) => {
                let held: Rubric = from_json(row.get(0), "a rubric version")?;
                if held != rubric {
                    return Err(ServerError::RubricVersionDiffers {
                        study: study.study_id.clone(),
                        version,
                    });
                }
            }
            None => {
                tx.execute(
                    "INSERT INTO study_rubrics (study, version, rubric) VALUES ($1, $2, $3)",
                    &[&study_key, &number, &to_json(&rubric)],
                )
                .await?;
                added += 1;
            }
        }
    }
    let current: i32 = tx
        .query_one(
            "UPDATE studies s SET rubric = v.rubric, rubric_version = v.version
             FROM study_rubrics v
             WHERE s.id = $1 AND v.study = s.id
               AND v.version = greatest(s.rubric_version, $2)
             RETURNING s.rubric_version",
            &[&study_key, &rubric_number(study.rubric_version)?],
        )
        .await?
        .get(0);
    Ok((added, current as u32))
}

/// Copies the image files of one series the server does not place yet, one file at a time (read,
/// checked, de-identified on a blocking thread, then stored): never the whole study in memory.
/// An image already stored under the same content is placed, not stored again.
async fn import_series_images(
    tx: &Transaction<'_>,
    case_key: i64,
    deid_key: &str,
    files: &TeamSeriesFiles,
) -> Result<u64, ServerError> {
    let series_key: i64 = tx
        .query_one(
            "SELECT id FROM series WHERE case_ref = $1 AND series_id = $2",
            &[&case_key, &files.series_id],
        )
        .await?
        .get(0);
    let placed: i64 = tx
        .query_one(
            "SELECT count(*) FROM series_images WHERE series = $1",
            &[&series_key],
        )
        .await?
        .get(0);
    let mut added = 0;
    for (index, file) in files.files.iter().enumerate().skip(placed as usize) {
        let position = index as i32 + 1;
        let (kind, path, sha256, key) = (
            files.kind,
            file.path.clone(),
            file.sha256.clone(),
            deid_key.to_owned(),
        );
        let bytes = tokio::task::spawn_blocking(move || {
            cases::package::deidentified_image(kind, &path, &sha256, &key)
        })
        .await
        .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))??;
        let image: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        tx.execute(
            "INSERT INTO images (sha256, bytes) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING",
            &[&image, &bytes],
        )
        .await?;
        tx.execute(
            "INSERT INTO series_images (series, position, source_sha256, image, extension)
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &series_key,
                &position,
                &file.sha256,
                &image,
                &file.extension,
            ],
        )
        .await?;
        added += 1;
    }
    Ok(added)
}

/// Who an invitation is for, and as what.
struct Invitee<'a> {
    username: &'a str,
    role: StudyRole,
    site: &'a str,
    clinical_role: Option<RaterRole>,
    years_experience: Option<u32>,
}

async fn create_invitation(
    tx: &Transaction<'_>,
    study: i64,
    invited_by: &str,
    invitee: &Invitee<'_>,
) -> Result<Invitation, ServerError> {
    let Invitee {
        username,
        role,
        site,
        clinical_role,
        years_experience,
    } = *invitee;
    let code = auth::new_secret()?;
    let role_text = role_text(role);
    let clinical_text = clinical_role.map(|r| match to_json(&r) {
        Value::String(text) => text,
        other => other.to_string(),
    });
    let years = years_experience.map(|y| y as i32);
    let expires_at: String = tx
        .query_one(
            &format!(
                "INSERT INTO invitations (code_sha256, study, username, role, site, invited_by,
                                          expires_at, clinical_role, years_experience)
                 VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(days => $7), $8, $9)
                 RETURNING {}",
                time_text("expires_at")
            ),
            &[
                &auth::secret_sha256(&code),
                &study,
                &username,
                &role_text,
                &site,
                &invited_by,
                &auth::INVITATION_DAYS,
                &clinical_text,
                &years,
            ],
        )
        .await?
        .get(0);
    audit(
        tx,
        invited_by,
        "invite",
        &format!("invitation:{username}"),
        None,
        Some(&json!({
            "username": username, "role": role_text, "site": site,
            "clinical_role": clinical_text, "years_experience": years_experience,
        })),
    )
    .await?;
    Ok(Invitation { code, expires_at })
}

pub async fn me(pool: &Pool, caller: &Caller) -> Result<Me, ServerError> {
    let client = pool.get().await?;
    let site: String = client
        .query_one(
            "SELECT site FROM accounts WHERE id = $1",
            &[&caller.account],
        )
        .await?
        .get(0);
    let mut studies = Vec::new();
    for row in client
        .query(
            "SELECT s.study_id, s.title, m.role, m.reveal_locked, s.rubric_version
             FROM memberships m JOIN studies s ON s.id = m.study
             WHERE m.account = $1 ORDER BY s.study_id",
            &[&caller.account],
        )
        .await?
    {
        let rubric_version: i32 = row.get(4);
        studies.push(Membership {
            study_id: row.get(0),
            title: row.get(1),
            role: from_json(Value::String(row.get(2)), "a membership's role")?,
            reveal_locked: row.get(3),
            rubric_version: u32::try_from(rubric_version).ok(),
        });
    }
    Ok(Me {
        username: caller.username.clone(),
        site,
        studies,
    })
}

/// The caller's membership of `study_id`, for `cases::app::team` to turn into a session. A
/// study the caller has no role in is "not found": its existence is not confirmed.
pub async fn member(
    pool: &Pool,
    caller: &Caller,
    study_id: &str,
) -> Result<TeamMember, ServerError> {
    let row = pool
        .get()
        .await?
        .query_opt(
            "SELECT s.id, m.role, m.reveal_locked FROM memberships m
             JOIN studies s ON s.id = m.study WHERE s.study_id = $1 AND m.account = $2",
            &[&study_id, &caller.account],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("study {study_id:?}")))?;
    Ok(TeamMember {
        account: caller.account,
        username: caller.username.clone(),
        study: row.get(0),
        role: from_json(Value::String(row.get(1)), "a membership's role")?,
        reveal_locked: row.get(2),
    })
}

pub async fn queue(pool: &Pool, rater: &TeamRaterSession) -> Result<Vec<QueueEntry>, ServerError> {
    let member = rater.member();
    let rows = pool
        .get()
        .await?
        .query(
            &format!(
                "SELECT a.id, a.position, count(*) OVER (), coalesce(r.status, 'not_started'),
                        coalesce(r.version, 0), to_char(a.due_on, 'YYYY-MM-DD'), {}
                 FROM assignments a LEFT JOIN ratings r ON r.assignment = a.id
                 WHERE a.study = $1 AND a.account = $2 ORDER BY a.position",
                time_text("r.revealed_at")
            ),
            &[&member.study, &member.account],
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| QueueEntry {
            assignment: row.get(0),
            position: row.get(1),
            total: row.get(2),
            status: row.get(3),
            version: row.get(4),
            due_on: row.get(5),
            revealed_at: row.get(6),
        })
        .collect())
}

/// Everything stored about one of the member's own assignments; anyone else's is "not found".
/// With `lock`, the assignment row is locked until the transaction ends: edits of one rating
/// are decided one at a time, by whichever server process receives them.
async fn stored_item(
    client: &impl GenericClient,
    member: &TeamMember,
    assignment: i64,
    lock: bool,
) -> Result<StoredItem, ServerError> {
    let sql = format!(
        "SELECT a.position, (SELECT count(*) FROM assignments q
                              WHERE q.study = a.study AND q.account = a.account),
                c.id, c.body, c.ground_truth, t.body, r.body, s.rubric, s.taxonomy,
                g.state, g.status, g.version, {}, {},
                -- The current ground truth's number: the latest final version of main (a
                -- study whose versions were never stored has the bundle's, version 1).
                CASE WHEN c.ground_truth IS NOT NULL THEN
                    coalesce((SELECT max(v.version) FROM curation_versions v
                              WHERE v.case_ref = c.id AND v.branch = $4
                                AND v.status = 'final'), 1)
                END,
                s.rubric_version, g.rubric_version, s.case_code_secret
         FROM assignments a
         JOIN responses r ON r.id = a.response JOIN tasks t ON t.id = r.task
         JOIN cases c ON c.id = t.case_ref JOIN studies s ON s.id = a.study
         LEFT JOIN ratings g ON g.assignment = a.id
         WHERE a.id = $1 AND a.account = $2 AND a.study = $3 {}",
        time_text("g.updated_at"),
        time_text("g.revealed_at"),
        if lock { "FOR UPDATE OF a" } else { "" }
    );
    let row = client
        .query_opt(
            &sql,
            &[
                &assignment,
                &member.account,
                &member.study,
                &cases::curation::MAIN_BRANCH,
            ],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("assignment {assignment} in your queue")))?;
    let case_key: i64 = row.get(2);
    let mut series = Vec::new();
    for s in client
        .query(
            "SELECT body FROM series WHERE case_ref = $1 ORDER BY id",
            &[&case_key],
        )
        .await?
    {
        series.push(from_json(s.get(0), "a series")?);
    }
    let state: Option<Value> = row.get(9);
    let rating = match state {
        Some(state) => Some(TeamRating {
            state: from_json(state, "a rating's state")?,
            status: from_json(Value::String(row.get(10)), "a rating's status")?,
            version: row.get(11),
            updated_at: row.get(12),
            revealed_at: row.get(13),
            rubric_version: Some(row.get::<_, i32>(16) as u32),
        }),
        None => None,
    };
    let position: i32 = row.get(0);
    let total: i64 = row.get(1);
    let geometry = curation::case_geometry(client, case_key).await?;
    Ok(StoredItem {
        assignment,
        position: position as u32,
        total: total as u32,
        case: from_json(row.get(3), "a case")?,
        ground_truth: row.get(4),
        ground_truth_version: row.get(14),
        task: from_json(row.get(5), "a task")?,
        response: from_json(row.get(6), "a response")?,
        rubric: from_json(row.get(7), "the study's rubric")?,
        rubric_version: row.get::<_, i32>(15) as u32,
        taxonomy: from_json(row.get(8), "the study's taxonomy")?,
        series,
        geometry,
        rating,
        case_codes: CaseCodes::new(row.get(17)),
    })
}

pub async fn item(
    pool: &Pool,
    rater: &TeamRaterSession,
    assignment: i64,
) -> Result<RaterItem, ServerError> {
    let client = pool.get().await?;
    let stored = stored_item(&client, rater.member(), assignment, false).await?;
    Ok(rater_item(rater, stored))
}

fn check_edit_id(edit_id: &str) -> Result<(), ServerError> {
    let ok = (1..=64).contains(&edit_id.len())
        && edit_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(invalid("edit_id", "1 to 64 letters, digits, - or _"))
    }
}

/// Where `value` (found at `path`) holds a string with the NUL character, which PostgreSQL's
/// `jsonb` refuses: the path of the first, as `edit.rating.labels[0].comment`.
fn text_with_nul(path: &str, value: &Value) -> Option<String> {
    match value {
        Value::String(text) => text.contains('\0').then(|| path.to_owned()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| text_with_nul(&format!("{path}[{i}]"), item)),
        Value::Object(fields) => fields
            .iter()
            .find_map(|(name, field)| text_with_nul(&format!("{path}.{name}"), field)),
        _ => None,
    }
}

/// Applies one edit of the rater's own rating, once: a resent edit id gets the acknowledgement
/// of the first; an edit from a stale version is refused (409) and overwrites nothing. The
/// acknowledgement is sent after the commit, so an acknowledged edit survives a crash.
pub async fn apply_edit(
    pool: &Pool,
    rater: &TeamRaterSession,
    assignment: i64,
    request: &EditRequest,
) -> Result<EditAck, ServerError> {
    check_edit_id(&request.edit_id)?;
    if let Some(field) = text_with_nul("edit", &to_json(&request.edit)) {
        return Err(invalid(
            &field,
            "the NUL character (U+0000) cannot be stored; remove it",
        ));
    }
    let member = rater.member();
    let request_sha256: String = Sha256::digest(to_json(request).to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    // Locks the assignment first, so a resend racing its original waits and then finds it.
    let stored = stored_item(&tx, member, assignment, true).await?;
    if let Some(row) = tx
        .query_opt(
            "SELECT request_sha256, ack FROM applied_edits WHERE account = $1 AND edit_id = $2",
            &[&member.account, &request.edit_id],
        )
        .await?
    {
        let first_sha256: String = row.get(0);
        if first_sha256 != request_sha256 {
            return Err(ServerError::Conflict(format!(
                "edit id {:?} was used for a different edit; give each edit its own id",
                request.edit_id
            )));
        }
        return from_json(row.get(1), "a stored acknowledgement");
    }
    let outcome = decide_edit(rater, &stored, request.base_version, &request.edit)
        .map_err(ServerError::EditRefused)?;
    let version = request.base_version + 1;
    // Recorded with the rating in the statement that stores it: the version of the rubric the
    // edit was checked against, read with it in `stored_item`. A reveal changes nothing rated,
    // so the rating keeps the version it was saved under.
    let rubric_version = match (&request.edit, &stored.rating) {
        (
            cases::app::team::TeamEdit::Reveal,
            Some(TeamRating {
                rubric_version: Some(v),
                ..
            }),
        ) => *v,
        _ => stored.rubric_version,
    } as i32;
    let status = match outcome.status {
        RatingStatus::Draft => "draft",
        RatingStatus::Submitted => "submitted",
    };
    let saved_at: String = tx
        .query_one(
            &format!(
                "INSERT INTO ratings (assignment, version, status, state, seconds_on_task,
                                      updated_at, submitted_at, revealed_at, rubric_version)
                 VALUES ($1, $2, $3, $4, $5, now(),
                         CASE WHEN $3 = 'submitted' THEN now() END,
                         CASE WHEN $6 THEN now() END, $7)
                 ON CONFLICT (assignment) DO UPDATE SET
                     version = EXCLUDED.version, status = EXCLUDED.status,
                     state = EXCLUDED.state, seconds_on_task = EXCLUDED.seconds_on_task,
                     rubric_version = EXCLUDED.rubric_version,
                     updated_at = now(),
                     submitted_at = CASE WHEN EXCLUDED.status = 'submitted'
                                         THEN coalesce(ratings.submitted_at, now()) END,
                     revealed_at = coalesce(ratings.revealed_at, EXCLUDED.revealed_at)
                 RETURNING {NOW_TEXT}"
            ),
            &[
                &assignment,
                &version,
                &status,
                &to_json(&outcome.state),
                &outcome.state.scores.seconds_on_task,
                &outcome.revealed,
                &rubric_version,
            ],
        )
        .await?
        .get(0);
    let ack = EditAck {
        assignment,
        version,
        status: status.to_owned(),
        saved_at,
    };
    tx.execute(
        "INSERT INTO applied_edits (account, edit_id, request_sha256, assignment, ack)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &member.account,
            &request.edit_id,
            &request_sha256,
            &assignment,
            &to_json(&ack),
        ],
    )
    .await?;
    let before = stored.rating.as_ref().map(to_json);
    audit(
        &tx,
        &member.username,
        edit_action(&request.edit),
        &format!("assignment:{assignment}"),
        before.as_ref(),
        Some(&json!({
            "version": version,
            "status": status,
            "state": outcome.state,
            "revealed": outcome.revealed,
            "rubric_version": rubric_version,
            "edit_id": request.edit_id,
        })),
    )
    .await?;
    tx.commit().await?;
    Ok(ack)
}

fn edit_action(edit: &cases::app::team::TeamEdit) -> &'static str {
    use cases::app::team::TeamEdit;
    match edit {
        TeamEdit::Save { .. } => "save rating",
        TeamEdit::Submit => "submit rating",
        TeamEdit::Reopen => "reopen rating",
        TeamEdit::Reveal => "reveal ground truth",
    }
}

pub async fn progress(pool: &Pool, lead: &TeamLeadSession) -> Result<Progress, ServerError> {
    let rows = pool
        .get()
        .await?
        .query(
            &format!(
                "SELECT ac.username, ac.site, m.reveal_locked, count(a.id),
                        count(*) FILTER (WHERE g.status = 'submitted'),
                        count(*) FILTER (WHERE g.status = 'draft'),
                        count(*) FILTER (WHERE a.due_on < current_date
                                         AND g.status IS DISTINCT FROM 'submitted'),
                        coalesce(sum(g.seconds_on_task), 0)::double precision,
                        {}
                 FROM memberships m JOIN accounts ac ON ac.id = m.account
                 LEFT JOIN assignments a ON a.account = m.account AND a.study = m.study
                 LEFT JOIN ratings g ON g.assignment = a.id
                 WHERE m.study = $1 AND m.role = 'rater'
                 GROUP BY ac.username, ac.site, m.reveal_locked ORDER BY ac.username",
                time_text("max(g.updated_at)")
            ),
            &[&lead.member().study],
        )
        .await?;
    let raters: Vec<RaterProgress> = rows
        .into_iter()
        .map(|row| RaterProgress {
            username: row.get(0),
            site: row.get(1),
            reveal_locked: row.get(2),
            assigned: row.get(3),
            submitted: row.get(4),
            drafts: row.get(5),
            overdue: row.get(6),
            seconds_on_task: row.get(7),
            last_saved_at: row.get(8),
        })
        .collect();
    let mut sites: BTreeMap<&str, SiteProgress> = BTreeMap::new();
    for rater in &raters {
        let site = sites.entry(&rater.site).or_insert_with(|| SiteProgress {
            site: rater.site.clone(),
            raters: 0,
            assigned: 0,
            submitted: 0,
            overdue: 0,
            seconds_on_task: 0.0,
        });
        site.raters += 1;
        site.assigned += rater.assigned;
        site.submitted += rater.submitted;
        site.overdue += rater.overdue;
        site.seconds_on_task += rater.seconds_on_task;
    }
    let sites = sites.into_values().collect();
    Ok(Progress { raters, sites })
}

pub async fn invite(
    pool: &Pool,
    lead: &TeamLeadSession,
    request: &InviteRequest,
) -> Result<Invitation, ServerError> {
    auth::check_username("username", &request.username)?;
    if request.site.chars().count() > 200 || request.site.chars().any(char::is_control) {
        return Err(invalid(
            "site",
            "at most 200 characters, no control characters",
        ));
    }
    cases::app::team::check_invitation_reading(
        request.role,
        request.clinical_role,
        request.years_experience,
    )
    .map_err(|e| match e {
        cases::rating::RatingError::Invalid { field, message } => invalid(&field, message),
        other => ServerError::Domain(other.into()),
    })?;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let invitation = create_invitation(
        &tx,
        lead.member().study,
        &lead.member().username,
        &Invitee {
            username: &request.username,
            role: request.role,
            site: &request.site,
            clinical_role: request.clinical_role,
            years_experience: request.years_experience,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(invitation)
}

/// A calendar date as YYYY-MM-DD, one PostgreSQL's `date` reads: year 1 to 9999, the month's
/// own number of days. PostgreSQL refuses any other date, and that is the caller's 422, not a 500.
fn check_date(field: &str, text: &str) -> Result<(), ServerError> {
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = text.get(range)?;
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let shaped = text.len() == 10 && &text[4..5] == "-" && &text[7..8] == "-";
    let in_calendar = shaped
        && match (number(0..4), number(5..7), number(8..10)) {
            (Some(year), Some(month), Some(day)) => {
                let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
                let days = match month {
                    1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
                    4 | 6 | 9 | 11 => 30,
                    2 if leap => 29,
                    2 => 28,
                    _ => 0,
                };
                year >= 1 && (1..=days).contains(&day)
            }
            _ => false,
        };
    if in_calendar {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("a date as YYYY-MM-DD, got {text:?}"),
        ))
    }
}

/// Gives each named rater responses of the study they do not have yet, after the end of their
/// queue, in an order fixed per rater (a hash of username and response): nobody's existing
/// positions move, and two leads topping up at once take turns.
pub async fn top_up(
    pool: &Pool,
    lead: &TeamLeadSession,
    request: &TopUpRequest,
) -> Result<TopUpReport, ServerError> {
    if let Some(due_on) = &request.due_on {
        check_date("due_on", due_on)?;
    }
    for (i, username) in request.raters.iter().enumerate() {
        auth::check_username(&format!("raters[{i}]"), username)?;
    }
    let per_rater = request.per_rater.map_or(i64::MAX, i64::from);
    let study = lead.member().study;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&(TOP_UP_LOCK + study)],
    )
    .await?;
    let mut report = Vec::new();
    for username in &request.raters {
        let account: i64 = tx
            .query_opt(
                "SELECT a.id FROM accounts a JOIN memberships m ON m.account = a.id
                 WHERE a.username = $1 AND m.study = $2 AND m.role = 'rater'",
                &[username, &study],
            )
            .await?
            .ok_or_else(|| {
                invalid(
                    "raters",
                    format!("{username:?} is not a rater of this study (invite them first)"),
                )
            })?
            .get(0);
        let added = tx
            .execute(
                "INSERT INTO assignments (study, account, response, position, due_on)
                 SELECT $1::bigint, $2::bigint, missing.id,
                        (SELECT coalesce(max(position), 0) FROM assignments
                          WHERE study = $1 AND account = $2)
                        + row_number() OVER (ORDER BY missing.turn),
                        $4::text::date
                 FROM (SELECT r.id, md5($5::text || ':' || r.id::text) AS turn
                       FROM responses r JOIN tasks t ON t.id = r.task
                       JOIN cases c ON c.id = t.case_ref
                       WHERE c.study = $1 AND NOT EXISTS (
                           SELECT 1 FROM assignments x WHERE x.account = $2 AND x.response = r.id)
                       ORDER BY turn LIMIT $3) missing",
                &[&study, &account, &per_rater, &request.due_on, username],
            )
            .await?;
        report.push(TopUpAdded {
            username: username.clone(),
            added: added as i64,
        });
    }
    audit(
        &tx,
        &lead.member().username,
        "top up assignments",
        &format!("study:{study}"),
        None,
        Some(&to_json(
            &report
                .iter()
                .map(|r| (&r.username, r.added))
                .collect::<Vec<_>>(),
        )),
    )
    .await?;
    tx.commit().await?;
    Ok(TopUpReport { raters: report })
}

pub async fn set_reveal_lock(
    pool: &Pool,
    lead: &TeamLeadSession,
    username: &str,
    locked: bool,
) -> Result<(), ServerError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let changed = tx
        .execute(
            "UPDATE memberships m SET reveal_locked = $3 FROM accounts a
             WHERE a.id = m.account AND a.username = $1 AND m.study = $2 AND m.role = 'rater'",
            &[&username, &lead.member().study, &locked],
        )
        .await?;
    if changed == 0 {
        return Err(ServerError::NotFound(format!(
            "rater {username:?} in this study"
        )));
    }
    audit(
        &tx,
        &lead.member().username,
        if locked {
            "lock reveal"
        } else {
            "unlock reveal"
        },
        &format!("membership:{}/{username}", lead.member().study),
        None,
        Some(&json!({ "reveal_locked": locked })),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

pub async fn ground_truth(
    pool: &Pool,
    unblinded: &TeamUnblindedSession,
    case_id: &str,
) -> Result<Option<Value>, ServerError> {
    let row = pool
        .get()
        .await?
        .query_opt(
            "SELECT ground_truth FROM cases WHERE study = $1 AND case_id = $2",
            &[&unblinded.member().study, &case_id],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("case {case_id:?}")))?;
    Ok(row.get(0))
}

/// A study member by username, for the lead's `?rater=` and for the rater a package was built
/// for; `cases::app::team::PackageExchange::recipient` decides whether the caller reaches them.
pub async fn study_member(
    pool: &Pool,
    study: i64,
    username: &str,
) -> Result<TeamMember, ServerError> {
    let row = pool
        .get()
        .await?
        .query_opt(
            "SELECT a.id, m.role, m.reveal_locked FROM memberships m
             JOIN accounts a ON a.id = m.account WHERE m.study = $1 AND a.username = $2",
            &[&study, &username],
        )
        .await?
        .ok_or_else(|| ServerError::NotFound(format!("rater {username:?} in this study")))?;
    Ok(TeamMember {
        account: row.get(0),
        username: username.to_owned(),
        study,
        role: from_json(Value::String(row.get(1)), "a membership's role")?,
        reveal_locked: row.get(2),
    })
}

/// Each stored image's bytes for a package writer, fetched on the writer's blocking thread when
/// it reaches the image, so a package never holds its images in memory together.
pub(crate) fn image_fetcher(pool: &Pool) -> impl Fn(&StoredImage) -> ImageSource {
    let runtime = tokio::runtime::Handle::current();
    let pool = pool.clone();
    move |image: &StoredImage| {
        let (runtime, pool, sha256) = (runtime.clone(), pool.clone(), image.sha256.clone());
        ImageSource::Deidentified(Box::new(move || {
            runtime
                .block_on(async {
                    let row = pool
                        .get()
                        .await
                        .map_err(|e| e.to_string())?
                        .query_one("SELECT bytes FROM images WHERE sha256 = $1", &[&sha256])
                        .await
                        .map_err(|e| e.to_string())?;
                    Ok::<Vec<u8>, String>(row.get(0))
                })
                .map_err(|message| cases::Error::ImageMissing {
                    path: format!("team server image {sha256}").into(),
                    source: std::io::Error::other(message),
                })
        }))
    }
}

/// A rater package the server wrote, opened for streaming; the file itself is already deleted
/// (the open handle keeps its bytes until the stream ends).
pub struct BuiltPackage {
    pub package_id: String,
    pub file: std::fs::File,
    pub bytes: u64,
}

impl BuiltPackage {
    /// Opens the package written at `path` inside `dir`, then deletes `dir`: the open handle
    /// keeps the bytes for the stream, and nothing is left on disk whatever happens to it.
    pub(crate) fn open(
        package_id: String,
        path: &std::path::Path,
        dir: tempfile::TempDir,
    ) -> Result<Self, ServerError> {
        let file = std::fs::File::open(path)?;
        let bytes = file.metadata()?.len();
        drop(dir);
        Ok(BuiltPackage {
            package_id,
            file,
            bytes,
        })
    }
}

/// A case's series in order, each with its stored images in position order: what a package the
/// server builds (a rater's or a curator's) carries of the case.
pub(crate) async fn case_series(
    client: &deadpool_postgres::Client,
    case_key: i64,
) -> Result<Vec<(TeamSeries, Vec<StoredImage>)>, ServerError> {
    let mut of_case = Vec::new();
    for row in client
        .query(
            "SELECT id, body FROM series WHERE case_ref = $1 ORDER BY id",
            &[&case_key],
        )
        .await?
    {
        let series_key: i64 = row.get(0);
        let images = client
            .query(
                "SELECT image, extension FROM series_images WHERE series = $1
                 ORDER BY position",
                &[&series_key],
            )
            .await?
            .into_iter()
            .map(|image| StoredImage {
                sha256: image.get(0),
                extension: image.get(1),
            })
            .collect();
        of_case.push((from_json(row.get(1), "a series")?, images));
    }
    Ok(of_case)
}

/// Builds the rater package of `recipient`'s queue (docs/multisite.md): the server's rows read
/// into `cases::app::team::rater_package`, written by `cases::package::write_rater_package` on a
/// blocking thread into a temporary file, images fetched one at a time; then recorded with each
/// item's assignment and the rating version the rater starts from, so its results can be
/// uploaded.
pub async fn build_package(
    pool: &Pool,
    exchange: &PackageExchange,
    recipient: &PackageRecipient,
) -> Result<BuiltPackage, ServerError> {
    let rater = recipient.rater();
    let client = pool.get().await?;
    let study = client
        .query_one(
            &format!(
                "SELECT s.study_id, s.title, s.description, s.rubric, s.taxonomy, a.site, {NOW_TEXT},
                        m.clinical_role, m.years_experience, s.case_code_secret
                 FROM studies s JOIN memberships m ON m.study = s.id
                 JOIN accounts a ON a.id = m.account
                 WHERE s.id = $1 AND a.id = $2"
            ),
            &[&rater.study, &rater.account],
        )
        .await?;
    let mut queue = Vec::new();
    let mut versions = Vec::new();
    let mut case_keys: Vec<(i64, String)> = Vec::new();
    for row in client
        .query(
            "SELECT a.id, a.position, r.id, c.id, c.body, t.body, r.body, coalesce(g.version, 0)
             FROM assignments a JOIN responses r ON r.id = a.response
             JOIN tasks t ON t.id = r.task JOIN cases c ON c.id = t.case_ref
             LEFT JOIN ratings g ON g.assignment = a.id
             WHERE a.study = $1 AND a.account = $2 ORDER BY a.position",
            &[&rater.study, &rater.account],
        )
        .await?
    {
        let case: cases::app::team::TeamCase = from_json(row.get(4), "a case")?;
        let case_key: i64 = row.get(3);
        if !case_keys.iter().any(|(key, _)| *key == case_key) {
            case_keys.push((case_key, case.case_id.clone()));
        }
        let position: i32 = row.get(1);
        versions.push((row.get::<_, i64>(0), row.get::<_, i64>(7)));
        queue.push(QueuedItem {
            assignment: row.get(0),
            position: position as u32,
            response_key: row.get(2),
            case,
            task: from_json(row.get(5), "a task")?,
            response: from_json(row.get(6), "a response")?,
        });
    }
    let mut series = BTreeMap::new();
    for (case_key, case_id) in case_keys {
        series.insert(case_id, case_series(&client, case_key).await?);
    }
    drop(client);
    let source = PackageSource {
        study: StudyMeta {
            id: study.get(0),
            title: study.get(1),
            description: study.get(2),
        },
        rubric: from_json(study.get(3), "the study's rubric")?,
        taxonomy: from_json(study.get(4), "the study's taxonomy")?,
        site: study.get(5),
        clinical_role: study
            .get::<_, Option<String>>(7)
            .map(|role| from_json(Value::String(role), "a rater's clinical role"))
            .transpose()?,
        years_experience: study.get::<_, Option<i32>>(8).map(|y| y as u32),
        created_at: study.get(6),
        queue,
        series,
        case_codes: CaseCodes::new(study.get(9)),
    };
    let contents = rater_package(recipient, source, image_fetcher(pool))?;
    let package_id = contents.package_id.clone();
    let items: Vec<(i32, i64, i64)> = contents
        .items
        .iter()
        .zip(&versions)
        .map(|(item, (assignment, version))| (item.item as i32, *assignment, *version))
        .collect();
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("rater-package.tar");
    let written_to = out.clone();
    tokio::task::spawn_blocking(move || {
        cases::package::write_rater_package(
            contents,
            &written_to,
            &cases::progress::NoProgress,
            || Ok(()),
        )
    })
    .await
    .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))??;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let package: i64 = tx
        .query_one(
            "INSERT INTO rater_packages (package_id, study, account, built_by)
             VALUES ($1, $2, $3, $4) RETURNING id",
            &[
                &package_id,
                &rater.study,
                &rater.account,
                &exchange.member().username,
            ],
        )
        .await?
        .get(0);
    for (item, assignment, version) in &items {
        tx.execute(
            "INSERT INTO rater_package_items (package, item, assignment, base_version)
             VALUES ($1, $2, $3, $4)",
            &[&package, item, assignment, version],
        )
        .await?;
    }
    audit(
        &tx,
        &exchange.member().username,
        "build rater package",
        &format!("rater_package:{package_id}"),
        None,
        Some(&json!({ "rater": rater.username, "items": items.len() })),
    )
    .await?;
    tx.commit().await?;
    BuiltPackage::open(package_id, &out, dir)
}

/// An error reading an upload, naming it as the client knows it rather than by the server's
/// temporary file.
fn as_uploaded(error: cases::Error) -> cases::Error {
    let upload = std::path::PathBuf::from("the uploaded results package");
    match error {
        cases::Error::Package { problems, .. } => cases::Error::Package {
            package: upload,
            problems,
        },
        cases::Error::Io { source, .. } => cases::Error::Io {
            path: upload,
            source,
        },
        other => other,
    }
}

/// Applies an uploaded results package (docs/multisite.md) to the ratings of the server-built
/// rater package it answers: each rating becomes the edits the app would send
/// (`cases::app::team::results_edits`), decided by `decide_edit` through [`apply_edit`] under
/// the rater's own session, with ids derived from the package, item and content, so an upload
/// sent again is stored once. A rating whose server version moved on since the rater's package
/// (or their last upload) is listed, never overwritten.
pub async fn upload_results(
    pool: &Pool,
    exchange: &PackageExchange,
    file: &std::path::Path,
) -> Result<ResultsReport, ServerError> {
    let path = file.to_path_buf();
    let (manifest, ratings) =
        tokio::task::spawn_blocking(move || cases::package::read_uploaded_results(&path))
            .await
            .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))?
            .map_err(as_uploaded)?;
    let answers = manifest.answers_package.clone().unwrap_or_default();
    let study = exchange.member().study;
    let row = pool
        .get()
        .await?
        .query_opt(
            "SELECT p.id, a.username FROM rater_packages p JOIN accounts a ON a.id = p.account
             WHERE p.package_id = $1 AND p.study = $2",
            &[&answers, &study],
        )
        .await?
        .ok_or_else(|| {
            ServerError::NotFound(format!("rater package {answers:?} built by this server"))
        })?;
    let (package, username): (i64, String) = (row.get(0), row.get(1));
    let recipient = exchange
        .recipient(study_member(pool, study, &username).await?)
        .map_err(|_| {
            ServerError::NotFound(format!("rater package {answers:?} built by this server"))
        })?;
    if manifest.rater.name != username {
        return Err(invalid(
            "manifest.json: rater.name",
            format!("the rater package was built for {username:?}"),
        ));
    }
    let rater = recipient.into_rater_session();
    let mut report = ResultsReport {
        package_id: answers.clone(),
        rater: username,
        applied: 0,
        unchanged: 0,
        conflicts: Vec::new(),
        refused: Vec::new(),
    };
    for uploaded in &ratings {
        let outcome = |code: &str, assignment: Option<i64>, message: String| ResultsItem {
            item: uploaded.item,
            line: uploaded.line,
            assignment,
            code: code.to_owned(),
            message,
        };
        let item = i32::try_from(uploaded.item).unwrap_or(i32::MAX);
        let Some(row) = pool
            .get()
            .await?
            .query_opt(
                "SELECT assignment, base_version FROM rater_package_items
                 WHERE package = $1 AND item = $2",
                &[&package, &item],
            )
            .await?
        else {
            report.refused.push(outcome(
                "unknown_item",
                None,
                format!(
                    "ratings.jsonl:{}: item {} is not in the rater package",
                    uploaded.line, uploaded.item
                ),
            ));
            continue;
        };
        let (assignment, base_version): (i64, i64) = (row.get(0), row.get(1));
        let stored = stored_item(&pool.get().await?, rater.member(), assignment, false).await?;
        let current = stored.rating.as_ref();
        let edits = results_edits(&answers, uploaded, current);
        if edits.is_empty() {
            report.unchanged += 1;
            continue;
        }
        let ids: Vec<String> = edits.iter().map(|(id, _)| id.clone()).collect();
        let stored_before: i64 = pool
            .get()
            .await?
            .query_one(
                "SELECT count(*) FROM applied_edits WHERE account = $1 AND edit_id = ANY($2)",
                &[&rater.member().account, &ids],
            )
            .await?
            .get(0);
        if stored_before == ids.len() as i64 {
            // This upload's edits of the item are stored already (a resend, or a later change
            // the rater made on the server since): nothing to do.
            report.unchanged += 1;
            continue;
        }
        let current_version = current.map_or(0, |r| r.version);
        if current_version != base_version {
            report.conflicts.push(outcome(
                "conflict",
                Some(assignment),
                format!(
                    "item {}: the rating on the server is at version {current_version}, the \
                     package's rater worked from version {base_version}; kept as it is",
                    uploaded.item
                ),
            ));
            continue;
        }
        let mut version = base_version;
        let mut stopped = None;
        for (edit_id, edit) in edits {
            let request = EditRequest {
                edit_id,
                base_version: version,
                edit,
            };
            match apply_edit(pool, &rater, assignment, &request).await {
                Ok(ack) => version = ack.version,
                Err(ServerError::EditRefused(refusal)) => {
                    let value = to_json(&refusal);
                    let code = value["code"].as_str().unwrap_or("refused").to_owned();
                    let field = value["field"]
                        .as_str()
                        .map(|f| format!("{f}: "))
                        .unwrap_or_default();
                    let message = value["message"].as_str().unwrap_or_default();
                    stopped = Some((
                        code,
                        format!("ratings.jsonl:{}: {field}{message}", uploaded.line),
                    ));
                    break;
                }
                // Text PostgreSQL cannot store (a NUL character): this item only.
                Err(ServerError::Invalid { field, message }) => {
                    stopped = Some((
                        "invalid".to_owned(),
                        format!("ratings.jsonl:{}: {field}: {message}", uploaded.line),
                    ));
                    break;
                }
                // The edit id was stored for another request: another upload of this item raced
                // this one from another version. Listed, nothing overwritten.
                Err(ServerError::Conflict(message)) => {
                    stopped = Some(("conflict".to_owned(), message));
                    break;
                }
                Err(other) => return Err(other),
            }
        }
        if version != base_version {
            // What was stored is where the rater's next upload of this package starts from.
            pool.get()
                .await?
                .execute(
                    "UPDATE rater_package_items SET base_version = $3
                     WHERE package = $1 AND item = $2",
                    &[&package, &item, &version],
                )
                .await?;
        }
        match stopped {
            None => report.applied += 1,
            Some((code, message)) if code == "conflict" => {
                report
                    .conflicts
                    .push(outcome(&code, Some(assignment), message));
            }
            Some((code, message)) => {
                report
                    .refused
                    .push(outcome(&code, Some(assignment), message));
            }
        }
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    audit(
        &tx,
        &exchange.member().username,
        "upload results package",
        &format!("rater_package:{answers}"),
        None,
        Some(&json!({
            "results_package": manifest.package_id,
            "applied": report.applied,
            "unchanged": report.unchanged,
            "conflicts": report.conflicts.len(),
            "refused": report.refused.len(),
        })),
    )
    .await?;
    tx.commit().await?;
    Ok(report)
}

/// Every rating of the lead's study, with who made it and which response it rates, for the
/// lead's own database (`cases::app::team::pull_ratings`), in assignment order.
pub async fn study_ratings(
    pool: &Pool,
    lead: &TeamLeadSession,
) -> Result<Vec<TeamStudyRating>, ServerError> {
    let rows = pool
        .get()
        .await?
        .query(
            &format!(
                "SELECT g.assignment, ac.username, ac.site, c.case_id, t.task_id, r.model,
                        r.sample, g.status, g.version, g.state, {}, {}, g.rubric_version,
                        m.clinical_role, m.years_experience
                 FROM ratings g JOIN assignments a ON a.id = g.assignment
                 JOIN accounts ac ON ac.id = a.account
                 LEFT JOIN memberships m ON m.account = a.account AND m.study = a.study
                 JOIN responses r ON r.id = a.response
                 JOIN tasks t ON t.id = r.task JOIN cases c ON c.id = t.case_ref
                 WHERE a.study = $1 ORDER BY g.assignment",
                time_text("g.updated_at"),
                time_text("g.submitted_at")
            ),
            &[&lead.member().study],
        )
        .await?;
    let mut ratings = Vec::with_capacity(rows.len());
    for row in rows {
        let sample: i32 = row.get(6);
        ratings.push(TeamStudyRating {
            assignment: row.get(0),
            rater: row.get(1),
            site: row.get(2),
            case_id: row.get(3),
            task_id: row.get(4),
            model: row.get(5),
            sample: sample as u32,
            status: from_json(Value::String(row.get(7)), "a rating's status")?,
            version: row.get(8),
            state: from_json(row.get(9), "a rating's state")?,
            updated_at: row.get(10),
            submitted_at: row.get(11),
            rubric_version: Some(row.get::<_, i32>(12) as u32),
            clinical_role: row
                .get::<_, Option<String>>(13)
                .map(|role| from_json(Value::String(role), "a rater's clinical role"))
                .transpose()?,
            years_experience: row.get::<_, Option<i32>>(14).map(|years| years as u32),
        });
    }
    Ok(ratings)
}
