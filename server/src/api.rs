//! The HTTP handlers: thin adapters. Each checks the shape of its arguments, turns the caller's
//! membership into the session `cases::app::team` allows for what it does (403 otherwise), calls
//! one function of `store`, and returns its value as JSON.

use crate::auth::{Caller, Peer};
use crate::curation;
use crate::error::{invalid, ServerError};
use crate::store;
use crate::wire::*;
use crate::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::header;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use cases::app::permissions::Action;
use cases::app::team::{PackageExchange, TeamMember};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// A results package is text (ratings and their audit trail); larger is not one.
const MAX_RESULTS_BYTES: usize = 64 << 20;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "NeuroRater team server",
        description = "One study on PostgreSQL, raters at many sites. Every path but this \
                       document, login and accepting an invitation needs `Authorization: Bearer \
                       TOKEN`. docs/team-server.md describes the flows."
    ),
    paths(
        login, accept_invitation, logout, me, change_password, sessions, end_session,
        accept_password_reset, queue, item, edit, progress, invite, invitations,
        revoke_invitation, reset_password, top_up, reveal_lock, ground_truth, ratings, package, results, crate::curation::list_cases,
        crate::curation::history, crate::curation::save, crate::curation::submit,
        crate::curation::review, crate::curation_package::curation_package
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
        .route("/api/password", post(change_password))
        .route("/api/sessions", get(sessions))
        .route("/api/sessions/{id}", delete(end_session))
        .route("/api/password-resets/accept", post(accept_password_reset))
        .route("/api/studies/{study}/queue", get(queue))
        .route("/api/studies/{study}/items/{assignment}", get(item))
        .route("/api/studies/{study}/items/{assignment}/edits", post(edit))
        .route("/api/studies/{study}/progress", get(progress))
        .route("/api/studies/{study}/ratings", get(ratings))
        .route(
            "/api/studies/{study}/invitations",
            post(invite).get(invitations),
        )
        .route(
            "/api/studies/{study}/invitations/{id}",
            delete(revoke_invitation),
        )
        .route(
            "/api/studies/{study}/members/{username}/password-reset",
            post(reset_password),
        )
        .route("/api/studies/{study}/top-up", post(top_up))
        .route(
            "/api/studies/{study}/raters/{username}/reveal-lock",
            put(reveal_lock),
        )
        .route(
            "/api/studies/{study}/cases/{case_id}/ground-truth",
            get(ground_truth),
        )
        .route("/api/studies/{study}/curation", get(curation::list_cases))
        .route(
            "/api/studies/{study}/cases/{case_id}/curation",
            get(curation::history),
        )
        .route(
            "/api/studies/{study}/cases/{case_id}/curation/versions",
            post(curation::save),
        )
        .route(
            "/api/studies/{study}/cases/{case_id}/curation/versions/{version}/submit",
            post(curation::submit),
        )
        .route(
            "/api/studies/{study}/cases/{case_id}/curation/versions/{version}/review",
            post(curation::review),
        )
        .route("/api/studies/{study}/package", get(package))
        .route(
            "/api/studies/{study}/curation-package",
            get(crate::curation_package::curation_package),
        )
        .route(
            "/api/studies/{study}/results",
            post(results).layer(DefaultBodyLimit::max(MAX_RESULTS_BYTES)),
        )
        .with_state(state)
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// A path segment naming a study, case or person: short and printable, never a path
/// (`cases::ids`: the rule of usernames, which ids also meet).
pub(crate) fn check_segment(field: &str, value: &str) -> Result<(), ServerError> {
    match cases::ids::username_problem(value) {
        None => Ok(()),
        Some(problem) => Err(invalid(field, problem)),
    }
}

pub(crate) async fn member_of(
    state: &AppState,
    caller: &Caller,
    study: &str,
) -> Result<TeamMember, ServerError> {
    check_segment("study", study)?;
    store::member(&state.pool, caller, study).await
}

/// The application layer's refusal of a role is a 403; every other error keeps its own status.
pub(crate) fn forbidden(error: cases::Error) -> ServerError {
    ServerError::Forbidden(error.to_string())
}

#[utoipa::path(post, path = "/api/login", request_body = LoginRequest,
    responses((status = 200, body = LoginReply), (status = 401, description = "unknown username or wrong password"),
        (status = 429, description = "too many wrong passwords for this account or from this address: `Retry-After` says when to try again")))]
async fn login(
    State(state): State<AppState>,
    peer: Peer,
    Json(request): Json<LoginRequest>,
) -> Result<Json<LoginReply>, ServerError> {
    crate::auth::check_username("username", &request.username)?;
    Ok(Json(
        store::login(&state.pool, &request.username, request.password, &peer).await?,
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

#[utoipa::path(post, path = "/api/password", security(("bearer" = [])), request_body = PasswordChange,
    responses((status = 204, description = "changed; every other session of the account has ended"),
        (status = 403, description = "the current password is not right"),
        (status = 429, description = "too many wrong passwords: `Retry-After` says when to try again")))]
async fn change_password(
    State(state): State<AppState>,
    caller: Caller,
    peer: Peer,
    Json(request): Json<PasswordChange>,
) -> Result<StatusCode, ServerError> {
    store::change_password(
        &state.pool,
        &caller,
        request.current_password,
        request.new_password,
        &peer,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/sessions", security(("bearer" = [])),
    responses((status = 200, body = Vec<AccountSession>, description = "the caller's own sessions, newest first")))]
async fn sessions(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<AccountSession>>, ServerError> {
    Ok(Json(store::sessions(&state.pool, &caller).await?))
}

#[utoipa::path(delete, path = "/api/sessions/{id}", security(("bearer" = [])),
    params(("id" = i64, Path)),
    responses((status = 204, description = "the session is ended"), (status = 404, description = "not one of your sessions")))]
async fn end_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<StatusCode, ServerError> {
    store::end_session(&state.pool, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/password-resets/accept", request_body = AcceptPasswordReset,
    responses((status = 204, description = "the new password is set; log in with it"),
        (status = 404, description = "no open password reset with this code")))]
async fn accept_password_reset(
    State(state): State<AppState>,
    Json(request): Json<AcceptPasswordReset>,
) -> Result<StatusCode, ServerError> {
    if request.code.is_empty() || request.code.len() > 128 {
        return Err(invalid("code", "the code the study lead gave you"));
    }
    store::accept_password_reset(&state.pool, &request.code, request.password).await?;
    Ok(StatusCode::NO_CONTENT)
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
        .lead(Action::SeeProgress)
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
        .lead(Action::ExportRatings)
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
        .lead(Action::Invite)
        .map_err(forbidden)?;
    Ok(Json(store::invite(&state.pool, &lead, &request).await?))
}

#[utoipa::path(get, path = "/api/studies/{study}/invitations", security(("bearer" = [])),
    params(("study" = String, Path)),
    responses((status = 200, body = Vec<InvitationSummary>, description = "every invitation of the study, newest first"),
        (status = 403, description = "the study lead's")))]
async fn invitations(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
) -> Result<Json<Vec<InvitationSummary>>, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(Action::Invite)
        .map_err(forbidden)?;
    Ok(Json(store::invitations(&state.pool, &lead).await?))
}

#[utoipa::path(delete, path = "/api/studies/{study}/invitations/{id}", security(("bearer" = [])),
    params(("study" = String, Path), ("id" = i64, Path)),
    responses((status = 204, description = "revoked: its code no longer works"),
        (status = 403, description = "the study lead's"), (status = 404, description = "no such invitation in this study"),
        (status = 409, description = "already accepted")))]
async fn revoke_invitation(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, id)): Path<(String, i64)>,
) -> Result<StatusCode, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(Action::Invite)
        .map_err(forbidden)?;
    store::revoke_invitation(&state.pool, &lead, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/studies/{study}/members/{username}/password-reset", security(("bearer" = [])),
    params(("study" = String, Path), ("username" = String, Path)),
    responses((status = 200, body = Invitation, description = "a one-time code for the member to set a new password; their sessions have ended and the old password no longer works"),
        (status = 403, description = "the study lead's, for members of studies they lead only"),
        (status = 404, description = "no such member of this study")))]
async fn reset_password(
    State(state): State<AppState>,
    caller: Caller,
    Path((study, username)): Path<(String, String)>,
) -> Result<Json<Invitation>, ServerError> {
    let lead = member_of(&state, &caller, &study)
        .await?
        .lead(Action::ResetPassword)
        .map_err(forbidden)?;
    check_segment("username", &username)?;
    Ok(Json(
        store::reset_password(&state.pool, &lead, &username).await?,
    ))
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
        .lead(Action::TopUp)
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
        .lead(Action::LockReveal)
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

#[utoipa::path(get, path = "/api/studies/{study}/package", security(("bearer" = [])),
    params(("study" = String, Path), PackageQuery),
    responses((status = 200, description = "the rater package (a tar file, docs/multisite.md): \
                                            a rater's own queue, or with `rater` the lead's \
                                            package for that rater",
               content_type = "application/octet-stream", body = String),
              (status = 403, description = "a curator"),
              (status = 404, description = "`rater` is not a rater of this study (for a rater: \
                                            not themselves)"),
              (status = 422, description = "the lead did not name `rater`"),
              (status = 409, description = "the queue is empty")))]
async fn package(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
    Query(query): Query<PackageQuery>,
) -> Result<Response, ServerError> {
    let member = member_of(&state, &caller, &study).await?;
    let exchange = member.clone().exchange_packages().map_err(forbidden)?;
    let rater = match (&query.rater, &exchange) {
        (Some(username), _) => {
            check_segment("rater", username)?;
            store::study_member(&state.pool, member.study, username).await?
        }
        (None, PackageExchange::Own(_)) => member,
        (None, PackageExchange::AnyRater(_)) => {
            return Err(invalid(
                "rater",
                "name the rater whose package to build: ?rater=USERNAME",
            ))
        }
    };
    let recipient = exchange.recipient(rater)?;
    Ok(download(
        store::build_package(&state.pool, &exchange, &recipient).await?,
    ))
}

/// A package the server wrote, streamed as a tar download named by its id (a rater's package
/// and a curator's copy alike).
pub(crate) fn download(built: store::BuiltPackage) -> Response {
    let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(built.file));
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (header::CONTENT_LENGTH, built.bytes.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}.tar\"", built.package_id),
            ),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

#[utoipa::path(post, path = "/api/studies/{study}/results", security(("bearer" = [])),
    params(("study" = String, Path)),
    request_body(content = String, content_type = "application/octet-stream",
                 description = "a results package (docs/multisite.md) answering a rater package \
                                this server built"),
    responses((status = 200, body = ResultsReport),
              (status = 403, description = "a curator"),
              (status = 404, description = "no rater package of yours (a lead: of this study) \
                                            with that id"),
              (status = 422, description = "not a results package; `message` names the member, \
                                            line and field")))]
async fn results(
    State(state): State<AppState>,
    caller: Caller,
    Path(study): Path<String>,
    body: Bytes,
) -> Result<Json<ResultsReport>, ServerError> {
    let exchange = member_of(&state, &caller, &study)
        .await?
        .exchange_packages()
        .map_err(forbidden)?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("results.tar");
    tokio::fs::write(&file, &body).await?;
    Ok(Json(
        store::upload_results(&state.pool, &exchange, &file).await?,
    ))
}
