//! `GET /api/studies/{study}/curation-package`: the curator's copy of the study
//! (docs/team-server.md, "A curator"). A thin handler: the session from
//! `TeamMember::unblinded` (the lead and curators: `Action::ReadGroundTruth`), the server's
//! rows read into `cases::app::team::curation_package`, written by
//! `cases::package::write_curation_package` on a blocking thread into a temporary file with the
//! images fetched one at a time, then streamed.

use crate::api::{download, forbidden, member_of};
use crate::auth::Caller;
use crate::error::ServerError;
use crate::store::{audit, case_series, from_json, image_fetcher, BuiltPackage, NOW_TEXT};
use crate::AppState;
use axum::extract::{Path, State};
use axum::response::Response;
use cases::app::team::{
    curation_package as package_contents, CurationSource, CurationSourceCase, TeamUnblindedSession,
};
use cases::model::StudyMeta;
use deadpool_postgres::Pool;
use serde_json::json;

#[utoipa::path(get, path = "/api/studies/{study}/curation-package", security(("bearer" = [])),
    params(("study" = String, Path)),
    responses((status = 200, description = "the curation package (a tar file, docs/team-server.md \
                                            \"A curator\"): every case with its images, tasks \
                                            and current ground truth, no model answer",
               content_type = "application/octet-stream", body = String),
              (status = 403, description = "the lead's and curators'")))]
pub(crate) async fn curation_package(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
) -> Result<Response, ServerError> {
    let session = member_of(&state, &caller, &study)
        .await?
        .unblinded()
        .map_err(forbidden)?;
    Ok(download(build(&state.pool, &session).await?))
}

/// Reads the study's cases, writes the package and records who took the copy (the audit log:
/// it holds the ground truth).
async fn build(pool: &Pool, session: &TeamUnblindedSession) -> Result<BuiltPackage, ServerError> {
    let member = session.member();
    let source = read_source(pool, member.study, member.account).await?;
    let contents = package_contents(session, source, image_fetcher(pool))?;
    let package_id = contents.package_id.clone();
    let n_cases = contents.cases.len();
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("curation-package.tar");
    let written_to = out.clone();
    tokio::task::spawn_blocking(move || {
        cases::package::write_curation_package(contents, &written_to, &cases::progress::NoProgress)
    })
    .await
    .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))??;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    audit(
        &tx,
        &member.username,
        "build curation package",
        &format!("curation_package:{package_id}"),
        None,
        Some(&json!({ "cases": n_cases })),
    )
    .await?;
    tx.commit().await?;
    BuiltPackage::open(package_id, &out, dir)
}

/// The study and every case of it as the server stores them, images by their SHA-256.
async fn read_source(pool: &Pool, study: i64, account: i64) -> Result<CurationSource, ServerError> {
    let client = pool.get().await?;
    let row = client
        .query_one(
            &format!(
                "SELECT s.study_id, s.title, s.description, s.rubric, s.taxonomy, a.site, {NOW_TEXT}
                 FROM studies s, accounts a WHERE s.id = $1 AND a.id = $2"
            ),
            &[&study, &account],
        )
        .await?;
    let mut cases = Vec::new();
    for case in client
        .query(
            "SELECT id, body, ground_truth FROM cases WHERE study = $1 ORDER BY case_id",
            &[&study],
        )
        .await?
    {
        let case_key: i64 = case.get(0);
        let tasks = client
            .query(
                "SELECT body FROM tasks WHERE case_ref = $1 ORDER BY task_id",
                &[&case_key],
            )
            .await?
            .into_iter()
            .map(|task| from_json(task.get(0), "a task"))
            .collect::<Result<_, _>>()?;
        let series = case_series(&client, case_key).await?;
        cases.push(CurationSourceCase {
            case: from_json(case.get(1), "a case")?,
            ground_truth: case.get(2),
            tasks,
            series,
        });
    }
    Ok(CurationSource {
        study: StudyMeta {
            id: row.get(0),
            title: row.get(1),
            description: row.get(2),
        },
        rubric: from_json(row.get(3), "the study's rubric")?,
        taxonomy: from_json(row.get(4), "the study's taxonomy")?,
        site: row.get(5),
        created_at: row.get(6),
        cases,
    })
}
