//! The HTTP handlers: thin adapters. Each checks the shape of its arguments, turns the caller's
//! membership into the session `cases::app::team` allows for what it does (403 otherwise), calls
//! one function of `store`, and returns its value as JSON.

use crate::auth::Caller;
use crate::error::{invalid, ServerError};
use crate::store;
use crate::wire::*;
use crate::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use cases::app::team::{TeamAction, TeamMember};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "NeuroRater team server",
        description = "One study on PostgreSQL, raters at many sites. Every path but this \
                       document, login and accepting an invitation needs `Authorization: Bearer \
                       TOKEN`. docs/team-server.md describes the flows."
    ),
    paths(
        login, accept_invitation, logout, me, queue, item, edit, progress, invite, top_up,
        reveal_lock, ground_truth, ratings
    ),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
            );
    }
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/openapi.json", get(openapi))
        .route("/api/login", post(login))
        .route("/api/invitations/accept", post(accept_invitation))
        .route("/api/logout", post(logout))
        .route("/api/me", get(me))
        .route("/api/studies/{study}/queue", get(queue))
        .route("/api/studies/{study}/items/{assignment}", get(item))
        .route("/api/studies/{study}/items/{assignment}/edits", post(edit))
        .route("/api/studies/{study}/progress", get(progress))
        .route("/api/studies/{study}/ratings", get(ratings))
        .route("/api/studies/{study}/invitations", post(invite))
        .route("/api/studies/{study}/top-up", post(top_up))
        .route(
            "/api/studies/{study}/raters/{username}/reveal-lock",
            put(reveal_lock),
        )
        .route(
            "/api/studies/{study}/cases/{case_id}/ground-truth",
            get(ground_truth),
        )
        .with_state(state)
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// A path segment naming a study, case or person: short and printable, never a path.
fn check_segment(field: &str, value: &str) -> Result<(), ServerError> {
    let ok = (1..=128).contains(&value.len())
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(invalid(field, "1 to 128 letters, digits and . _ @ -"))
    }
}

async fn member_of(
    state: &AppState,
    caller: &Caller,
    study: &str,
) -> Result<TeamMember, ServerError> {
    check_segment("study", study)?;
    store::member(&state.pool, caller, study).await
}

/// The application layer's refusal of a role is a 403; every other error keeps its own status.
fn forbidden(error: cases::Error) -> ServerError {
    ServerError::Forbidden(error.to_string())
}

#[utoipa::path(post, path = "/api/login", request_body = LoginRequest,
    responses((status = 200, body = LoginReply), (status = 401, description = "unknown username or wrong password")))]
async fn login(
    State(state): State<AppState>,
    Json(request): Json<LoginRequest>,
) -> Result<Json<LoginReply>, ServerError> {
    crate::auth::check_username("username", &request.username)?;
    Ok(Json(
        store::login(&state.pool, &request.username, request.password).await?,
    ))
}

#[utoipa::path(post, path = "/api/invitations/accept", request_body = AcceptInvitation,
    responses((status = 200, body = Membership), (status = 404, description = "no open invitation with this code")))]
async fn accept_invitation(
    State(state): State<AppState>,
    Json(request): Json<AcceptInvitation>,
) -> Result<Json<Membership>, ServerError> {
    if request.code.is_empty() || request.code.len() > 128 {
        return Err(invalid("code", "the code the study lead gave you"));
    }
    Ok(Json(
        store::accept_invitation(&state.pool, &request.code, request.password).await?,
    ))
}

#[utoipa::path(post, path = "/api/logout", security(("bearer" = [])),
    responses((status = 204, description = "the session is ended")))]
async fn logout(State(state): State<AppState>, caller: Caller) -> Result<StatusCode, ServerError> {
    store::logout(&state.pool, &caller).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/me", security(("bearer" = [])),
    responses((status = 200, body = Me)))]
async fn me(State(state): State<AppState>, caller: Caller) -> Result<Json<Me>, ServerError> {
    Ok(Json(store::me(&state.pool, &caller).await?))
}

#[utoipa::path(get, path = "/api/studies/{study}/queue", security(("bearer" = [])),
    params(("study" = String, Path)),
    responses((status = 200, body = Vec<QueueEntry>), (status = 403, description = "not a rater of this study")))]
async fn queue(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
) -> Result<Json<Vec<QueueEntry>>, ServerError> {
    let rater = member_of(&state, &caller, &study)
        .await?
        .rater()
        .map_err(forbidden)?;
    Ok(Json(store::queue(&state.pool, &rater).await?))
}

#[utoipa::path(get, path = "/api/studies/{study}/items/{assignment}", security(("bearer" = [])),
    params(("study" = String, Path), ("assignment" = i64, Path)),
    responses((status = 200, body = Item), (status = 404, description = "not in your queue")))]
async fn item(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, assignment)): Path<(String, i64)>,
) -> Result<Json<Item>, ServerError> {
    let rater = member_of(&state, &caller, &study)
        .await?
        .rater()
        .map_err(forbidden)?;
    Ok(Json(Item(
        store::item(&state.pool, &rater, assignment).await?,
    )))
}

#[utoipa::path(post, path = "/api/studies/{study}/items/{assignment}/edits", security(("bearer" = [])),
    params(("study" = String, Path), ("assignment" = i64, Path)), request_body = EditRequest,
    responses((status = 200, body = EditAck),
              (status = 409, description = "the rating moved on since `base_version`, or its state forbids the edit"),
              (status = 422, description = "a field breaks the study's rules; `field` names it")))]
async fn edit(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, assignment)): Path<(String, i64)>,
    Json(request): Json<EditRequest>,
) -> Result<Json<EditAck>, ServerError> {
    let rater = member_of(&state, &caller, &study)
        .await?
        .rater()
        .map_err(forbidden)?;
    Ok(Json(
        store::apply_edit(&state.pool, &rater, assignment, &request).await?,
    ))
}

#[utoipa::path(get, path = "/api/studies/{study}/progress", security(("bearer" = [])),
    params(("study" = String, Path)),
    responses((status = 200, body = Progress), (status = 403, description = "the study lead's")))]
async fn progress(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
) -> Result<Json<Progress>, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(TeamAction::SeeProgress)
        .map_err(forbidden)?;
    Ok(Json(store::progress(&state.pool, &lead).await?))
}

#[utoipa::path(get, path = "/api/studies/{study}/ratings", security(("bearer" = [])),
    params(("study" = String, Path)),
    responses((status = 200, body = StudyRatings), (status = 403, description = "the study lead's")))]
async fn ratings(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
) -> Result<Json<StudyRatings>, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(TeamAction::ExportRatings)
        .map_err(forbidden)?;
    Ok(Json(StudyRatings(
        store::study_ratings(&state.pool, &lead).await?,
    )))
}

#[utoipa::path(post, path = "/api/studies/{study}/invitations", security(("bearer" = [])),
    params(("study" = String, Path)), request_body = InviteRequest,
    responses((status = 200, body = Invitation), (status = 403, description = "the study lead's")))]
async fn invite(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
    Json(request): Json<InviteRequest>,
) -> Result<Json<Invitation>, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(TeamAction::Invite)
        .map_err(forbidden)?;
    Ok(Json(store::invite(&state.pool, &lead, &request).await?))
}

#[utoipa::path(post, path = "/api/studies/{study}/top-up", security(("bearer" = [])),
    params(("study" = String, Path)), request_body = TopUpRequest,
    responses((status = 200, body = TopUpReport), (status = 403, description = "the study lead's")))]
async fn top_up(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
    Json(request): Json<TopUpRequest>,
) -> Result<Json<TopUpReport>, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(TeamAction::TopUp)
        .map_err(forbidden)?;
    Ok(Json(store::top_up(&state.pool, &lead, &request).await?))
}

#[utoipa::path(put, path = "/api/studies/{study}/raters/{username}/reveal-lock", security(("bearer" = [])),
    params(("study" = String, Path), ("username" = String, Path)), request_body = RevealLock,
    responses((status = 204, description = "set"), (status = 403, description = "the study lead's")))]
async fn reveal_lock(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, username)): Path<(String, String)>,
    Json(request): Json<RevealLock>,
) -> Result<StatusCode, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(TeamAction::LockReveal)
        .map_err(forbidden)?;
    check_segment("username", &username)?;
    store::set_reveal_lock(&state.pool, &lead, &username, request.locked).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/studies/{study}/cases/{case_id}/ground-truth", security(("bearer" = [])),
    params(("study" = String, Path), ("case_id" = String, Path)),
    responses((status = 200, body = GroundTruth), (status = 403, description = "the lead's and curators'")))]
async fn ground_truth(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, case_id)): Path<(String, String)>,
) -> Result<Json<GroundTruth>, ServerError> {
    let unblinded = member_of(&state, &caller, &study)
        .await?
        .unblinded()
        .map_err(forbidden)?;
    check_segment("case_id", &case_id)?;
    let ground_truth = store::ground_truth(&state.pool, &unblinded, &case_id).await?;
    Ok(Json(GroundTruth {
        case_id,
        ground_truth,
    }))
}
