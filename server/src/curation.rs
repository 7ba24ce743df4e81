//! The curation handlers (docs/team-server.md "Curation"): thin adapters. Reading takes the
//! unblinded session (lead and curators), every step the curator session
//! (`cases::app::team::Action::Curate`); a rater is refused (403), a case of another study is
//! not found. What a step may do is decided in `cases::app::team` and stored by `store`.

use crate::api::{check_segment, forbidden, member_of};
use crate::auth::Caller;
use crate::error::ServerError;
use crate::store;
use crate::wire::{
    CurationCases, CurationHistory, CurationReviewBody, CurationSaveBody, CurationSubmitBody,
    SavedVersionBody, VersionBody,
};
use crate::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;

#[utoipa::path(get, path = "/api/studies/{study}/curation", security(("bearer" = [])),
    params(("study" = String, Path)),
    responses((status = 200, body = CurationCases), (status = 403, description = "the lead's and curators'")))]
pub(crate) async fn list_cases(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
) -> Result<Json<CurationCases>, ServerError> {
    let unblinded = member_of(&state, &caller, &study)
        .await?
        .unblinded()
        .map_err(forbidden)?;
    Ok(Json(CurationCases(
        store::curation_cases(&state.pool, &unblinded).await?,
    )))
}

#[utoipa::path(get, path = "/api/studies/{study}/cases/{case_id}/curation", security(("bearer" = [])),
    params(("study" = String, Path), ("case_id" = String, Path)),
    responses((status = 200, body = CurationHistory), (status = 403, description = "the lead's and curators'"),
              (status = 404, description = "no such case in the study")))]
pub(crate) async fn history(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, case_id)): Path<(String, String)>,
) -> Result<Json<CurationHistory>, ServerError> {
    let unblinded = member_of(&state, &caller, &study)
        .await?
        .unblinded()
        .map_err(forbidden)?;
    check_segment("case_id", &case_id)?;
    Ok(Json(CurationHistory(
        store::curation_history(&state.pool, &unblinded, &case_id).await?,
    )))
}

#[utoipa::path(post, path = "/api/studies/{study}/cases/{case_id}/curation/versions", security(("bearer" = [])),
    params(("study" = String, Path), ("case_id" = String, Path)), request_body = CurationSaveBody,
    responses((status = 201, body = SavedVersionBody),
              (status = 403, description = "the lead's and curators'"),
              (status = 409, description = "`conflict`: the branch moved on since `based_on` (the message names who saved which version when, `latest` is it); `refused`: an edit id used for another step"),
              (status = 422, description = "`invalid`: the ground truth contradicts the case; `problems` names each field")))]
pub(crate) async fn save(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, case_id)): Path<(String, String)>,
    Json(CurationSaveBody(request)): Json<CurationSaveBody>,
) -> Result<(StatusCode, Json<SavedVersionBody>), ServerError> {
    let curator = member_of(&state, &caller, &study)
        .await?
        .curator()
        .map_err(forbidden)?;
    check_segment("case_id", &case_id)?;
    let saved = store::save_version(&state.pool, &curator, &case_id, &request).await?;
    Ok((StatusCode::CREATED, Json(SavedVersionBody(saved))))
}

#[utoipa::path(post, path = "/api/studies/{study}/cases/{case_id}/curation/versions/{version}/submit", security(("bearer" = [])),
    params(("study" = String, Path), ("case_id" = String, Path), ("version" = i64, Path)),
    request_body = CurationSubmitBody,
    responses((status = 200, body = VersionBody),
              (status = 403, description = "the lead's and curators'"),
              (status = 404, description = "no such case or version"),
              (status = 409, description = "`conflict`: not the latest of its branch; `refused`: not a draft of main")))]
pub(crate) async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, case_id, version)): Path<(String, String, i64)>,
    Json(CurationSubmitBody(request)): Json<CurationSubmitBody>,
) -> Result<Json<VersionBody>, ServerError> {
    let curator = member_of(&state, &caller, &study)
        .await?
        .curator()
        .map_err(forbidden)?;
    check_segment("case_id", &case_id)?;
    Ok(Json(VersionBody(
        store::submit_version(&state.pool, &curator, &case_id, version, &request).await?,
    )))
}

#[utoipa::path(post, path = "/api/studies/{study}/cases/{case_id}/curation/versions/{version}/review", security(("bearer" = [])),
    params(("study" = String, Path), ("case_id" = String, Path), ("version" = i64, Path)),
    request_body = CurationReviewBody,
    responses((status = 200, body = VersionBody),
              (status = 403, description = "the lead's and curators'"),
              (status = 404, description = "no such case or version"),
              (status = 409, description = "`conflict`: not the latest of its branch; `refused`: not in review, reviewed by its author, or changes requested without a comment")))]
pub(crate) async fn review(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, case_id, version)): Path<(String, String, i64)>,
    Json(CurationReviewBody(request)): Json<CurationReviewBody>,
) -> Result<Json<VersionBody>, ServerError> {
    let curator = member_of(&state, &caller, &study)
        .await?
        .curator()
        .map_err(forbidden)?;
    check_segment("case_id", &case_id)?;
    Ok(Json(VersionBody(
        store::review_version(&state.pool, &curator, &case_id, version, &request).await?,
    )))
}
