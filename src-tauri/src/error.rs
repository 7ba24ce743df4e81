//! What a failed command sends to the UI: a stable `code` the UI branches on and a message a
//! clinician or their IT person can act on (it names the file, field or id and the reason).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// An IPC argument failed validation (bad id, out-of-range key).
    InvalidArgument,
    /// The study, case, series or task does not exist in the open database.
    NotFound,
    /// The database is still being prepared (first start builds the demo study).
    NotReady,
    /// Preparing the database failed; the app cannot show studies until the cause is fixed.
    StartupFailed,
    /// An image file is missing, changed since import, or cannot be decoded.
    ImageUnavailable,
    /// The database could not be read or written.
    Database,
    /// A rating edit the item's state forbids (submitted, not open yet, assigned elsewhere).
    Refused,
    /// Submit without every required field; the message names the missing ones.
    Incomplete,
    /// An exported file could not be written where the user chose; the message names it.
    ExportFailed,
    /// Long work the user cancelled (or replaced with newer work) stopped; nothing was written.
    Cancelled,
    /// An edit made as one reader arrived after another (or nobody) took over this workstation:
    /// not written; the UI keeps it and writes it once its reader is chosen again.
    ReaderChanged,
    /// The team server cannot be reached (network, server down, a failure of its own): try again
    /// later; nothing was decided there.
    ServerUnreachable,
    /// No session with the team server, or it ended or expired: log in again.
    LoggedOut,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
}

impl CommandError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> CommandError {
        CommandError {
            code,
            message: message.into(),
        }
    }
}

impl From<cases::Error> for CommandError {
    fn from(error: cases::Error) -> CommandError {
        use cases::Error as E;
        let code = match &error {
            E::NotFound { .. } => ErrorCode::NotFound,
            E::Imaging(_) | E::ImageMissing { .. } | E::ImageChanged { .. } => {
                ErrorCode::ImageUnavailable
            }
            // Io covers both image files and the database's directory; the message names which.
            E::Io { .. }
            | E::Database { .. }
            | E::SchemaTooNew { .. }
            | E::NoDataDirectory
            | E::Corrupt { .. } => ErrorCode::Database,
            E::Demo(_) => ErrorCode::StartupFailed,
            E::StaleGroundTruth { .. } | E::CurationRefused(_) => ErrorCode::Refused,
            // A damaged or foreign rater/results package, or a harness's responses file that does
            // not fit the study; the message names the member or line and the field.
            E::Package { .. } | E::Responses { .. } | E::ServerRatings { .. } => {
                ErrorCode::InvalidArgument
            }
            E::Cancelled { .. } => ErrorCode::Cancelled,
            E::Rating(rating) => match rating {
                cases::rating::RatingError::Invalid { .. } => ErrorCode::InvalidArgument,
                cases::rating::RatingError::Refused(_) => ErrorCode::Refused,
                cases::rating::RatingError::Incomplete { .. } => ErrorCode::Incomplete,
                cases::rating::RatingError::ReaderChanged(_) => ErrorCode::ReaderChanged,
            },
        };
        CommandError::new(code, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crosses_to_the_ui_as_code_and_message() {
        let error = CommandError::new(ErrorCode::NotReady, "still preparing the demo study");
        let json = serde_json::to_value(&error).expect("serialisable");
        assert_eq!(
            json,
            serde_json::json!({"code": "not_ready", "message": "still preparing the demo study"})
        );
    }

    #[test]
    fn a_missing_image_is_image_unavailable_and_names_the_file() {
        let error = CommandError::from(cases::Error::ImageChanged {
            path: "/data/case-01/flair/IM0001.dcm".into(),
        });
        assert_eq!(error.code, ErrorCode::ImageUnavailable);
        assert!(error.message.contains("/data/case-01/flair/IM0001.dcm"));
    }

    #[test]
    fn an_unknown_case_is_not_found() {
        let error = CommandError::from(cases::Error::NotFound {
            what: "case ms-01 in study demo".into(),
        });
        assert_eq!(error.code, ErrorCode::NotFound);
        assert_eq!(error.message, "case ms-01 in study demo was not found");
    }
}
