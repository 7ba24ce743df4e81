//! The server crate's one error type, and how each crosses HTTP: a status and a JSON body
//! `{code, message}` (plus the fields of a refused edit). Clients branch on `code`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cases::app::team::{CurationRefusal, EditRefusal};
use serde_json::json;

/// The `Retry-After` of a 503: about the time PostgreSQL takes to restart.
const UNAVAILABLE_RETRY_SECONDS: u64 = 5;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("the database failed: {0}")]
    Database(#[from] tokio_postgres::Error),
    #[error("no database connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("{0}")]
    Config(String),
    #[error(
        "the database was migrated by a newer NeuroRater server (schema version {found}; this \
         build knows up to {known}): update the server"
    )]
    SchemaTooNew { found: i32, known: i32 },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Too many refused logins for the account or from the address (`store::accounts`).
    #[error(
        "too many wrong passwords: try again in {retry_after_seconds} s, or ask the study lead \
         to reset the password"
    )]
    Throttled { retry_after_seconds: u64 },
    /// No session, or an expired one.
    #[error("log in first (POST /api/login): {0}")]
    Unauthenticated(&'static str),
    /// The caller's role in the study does not allow this (decided in `cases::app::team`).
    #[error("{0}")]
    Forbidden(String),
    /// Not there, or not the caller's: another rater's work is "not found", never "forbidden".
    #[error("{0} was not found")]
    NotFound(String),
    /// An argument of the wrong shape; names the field.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{}", refusal_message(.0))]
    EditRefused(EditRefusal),
    /// A curation step the rules refuse (`cases::app::team::decide_save` and its siblings).
    #[error("{}", .0.message())]
    CurationRefused(CurationRefusal),
    /// An import brought a rubric version the server holds with other content: the lead's
    /// database changed that version after the server received it. Nothing is imported.
    #[error(
        "study {study:?}: rubric version {version} in this database differs from version \
         {version} on the team server, which raters there may have rated under: it was changed \
         here after the server received it. Nothing was imported. Make version {version} here \
         what the server holds again (the server keeps it in its table study_rubrics), then \
         make the change again: it becomes a new version, which the next import copies"
    )]
    RubricVersionDiffers { study: String, version: u32 },
    #[error(transparent)]
    Domain(#[from] cases::Error),
}

fn refusal_message(refusal: &EditRefusal) -> &str {
    match refusal {
        EditRefusal::Conflict { message, .. }
        | EditRefusal::Invalid { message, .. }
        | EditRefusal::Incomplete { message, .. }
        | EditRefusal::Refused { message } => message,
    }
}

pub(crate) fn invalid(field: &str, message: impl Into<String>) -> ServerError {
    ServerError::Invalid {
        field: field.to_owned(),
        message: message.into(),
    }
}

impl ServerError {
    /// Whether the person who started the command can fix this by changing what they gave (an
    /// argument, the database URL, a study id): the command-line front ends exit 2 for these, 1
    /// for the rest. Served over HTTP, `status_and_code` decides instead.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            ServerError::Invalid { .. }
                | ServerError::Config(_)
                | ServerError::NotFound(_)
                | ServerError::SchemaTooNew { .. }
                | ServerError::RubricVersionDiffers { .. }
                | ServerError::Domain(
                    cases::Error::NotFound { .. } | cases::Error::SchemaTooNew { .. }
                )
        )
    }

    /// PostgreSQL is restarting or out of reach, or asked for the transaction again: a client
    /// should send again shortly, so it is a 503 with `Retry-After`, not a final 500.
    fn is_transient(&self) -> bool {
        match self {
            ServerError::Pool(_) => true,
            ServerError::Database(error) => {
                error.is_closed()
                    || match error.code() {
                        Some(state) => {
                            let code = state.code();
                            // 08: connection exception; 57P01–57P03: shutdown, crash, starting;
                            // 40001/40P01: serialisation failure, deadlock (retry the whole).
                            code.starts_with("08")
                                || matches!(code, "57P01" | "57P02" | "57P03" | "40001" | "40P01")
                        }
                        // No SQLSTATE: the connection itself failed (an I/O error, a reset).
                        None => true,
                    }
            }
            _ => false,
        }
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        if self.is_transient() {
            return (StatusCode::SERVICE_UNAVAILABLE, "unavailable");
        }
        match self {
            ServerError::Throttled { .. } => (StatusCode::TOO_MANY_REQUESTS, "too_many_attempts"),
            ServerError::Unauthenticated(_) => (StatusCode::UNAUTHORIZED, "unauthenticated"),
            ServerError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ServerError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ServerError::Invalid { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
            ServerError::Conflict(_) | ServerError::RubricVersionDiffers { .. } => {
                (StatusCode::CONFLICT, "conflict")
            }
            ServerError::EditRefused(refusal) => match refusal {
                EditRefusal::Conflict { .. } => (StatusCode::CONFLICT, "conflict"),
                EditRefusal::Refused { .. } => (StatusCode::CONFLICT, "refused"),
                EditRefusal::Invalid { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
                EditRefusal::Incomplete { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "incomplete"),
            },
            ServerError::CurationRefused(refusal) => match refusal {
                CurationRefusal::Conflict { .. } => (StatusCode::CONFLICT, "conflict"),
                CurationRefusal::Refused { .. } => (StatusCode::CONFLICT, "refused"),
                CurationRefusal::Invalid { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
                CurationRefusal::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
            },
            ServerError::Domain(cases::Error::NotFound { .. }) => {
                (StatusCode::NOT_FOUND, "not_found")
            }
            // An uploaded package that is not one, or breaks its format: the body names the
            // member, line and field.
            ServerError::Domain(cases::Error::Package { .. }) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid")
            }
            ServerError::Domain(cases::Error::Rating(cases::rating::RatingError::Refused(_))) => {
                (StatusCode::CONFLICT, "refused")
            }
            ServerError::Database(_)
            | ServerError::Pool(_)
            | ServerError::Config(_)
            | ServerError::SchemaTooNew { .. }
            | ServerError::Io(_)
            | ServerError::Domain(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let message = self.to_string();
        if status.is_server_error() {
            // The operator's log gets the cause; the body says the same without internals.
            eprintln!("error: {message}");
        }
        let mut body = match &self {
            ServerError::EditRefused(refusal) => {
                serde_json::to_value(refusal).expect("a refusal serialises")
            }
            ServerError::CurationRefused(refusal) => {
                serde_json::to_value(refusal).expect("a refusal serialises")
            }
            ServerError::Invalid { field, .. } => json!({ "field": field }),
            _ => json!({}),
        };
        body["code"] = json!(code);
        body["message"] = json!(message);
        let retry_after = match &self {
            ServerError::Throttled {
                retry_after_seconds,
            } => Some(*retry_after_seconds),
            // PostgreSQL restarts in a few seconds; a client that waits this long finds it back.
            _ if status == StatusCode::SERVICE_UNAVAILABLE => Some(UNAVAILABLE_RETRY_SECONDS),
            _ => None,
        };
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}
