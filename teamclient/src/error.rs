//! The crate's one error: what the caller can do about a failed request decides its variant.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server could not be reached, timed out or failed (5xx): nothing was decided, and the
    /// same request may be sent again later.
    #[error("the team server at {server} cannot be reached: {reason}")]
    Unreachable { server: String, reason: String },
    /// No session, or it expired or was ended: log in again.
    #[error("not logged in to the team server (or the session expired): log in again")]
    Unauthorised,
    /// The rating moved on since the edit's base version (another device, or the rater on a
    /// second machine): nothing was overwritten.
    #[error("{message}")]
    Conflict {
        current_version: Option<i64>,
        message: String,
    },
    /// The server refused the request for a reason the user can read (`code` as the server's
    /// error bodies carry it: `forbidden`, `not_found`, `invalid`, `incomplete`, `refused`, …).
    #[error("{message}")]
    Refused {
        status: u16,
        code: String,
        /// The field an `invalid` answer names.
        field: Option<String>,
        message: String,
    },
    /// An argument of the wrong shape, refused before anything is sent; names it.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// A server URL the client will not use (not http/https, credentials in it, …).
    #[error("server URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// The session file could not be read or written.
    #[error("{}: {source}", path.display())]
    SessionFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A download's file could not be written.
    #[error("{}: {source}", path.display())]
    Download {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The server answered with a body this client does not understand (a different version).
    #[error("the team server answered {what} in an unexpected form: {reason}")]
    Unexpected { what: String, reason: String },
    /// Whoever listens to the progress asked the download to stop; nothing was kept.
    #[error("cancelled")]
    Cancelled,
}

impl ClientError {
    /// Whether sending the same request again later may succeed without anyone doing anything.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ClientError::Unreachable { .. })
    }

    /// A stable code for front ends to branch on (the text may change).
    pub fn code(&self) -> &str {
        match self {
            ClientError::Unreachable { .. } => "unreachable",
            ClientError::Unauthorised => "unauthorised",
            ClientError::Conflict { .. } => "conflict",
            ClientError::Refused { code, .. } => code,
            ClientError::Invalid { .. } => "invalid",
            ClientError::InvalidUrl { .. } => "invalid_url",
            ClientError::SessionFile { .. } | ClientError::Download { .. } => "io",
            ClientError::Unexpected { .. } => "unexpected",
            ClientError::Cancelled => "cancelled",
        }
    }
}

pub type Result<T> = std::result::Result<T, ClientError>;
