//! The one error type of the `cases` crate.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an import (a study bundle, a ground-truth bundle, a ratings file) wrote nothing: problems
/// in what was given, or a failure of the store.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Problems in the input, each `FILE:LINE: field: message`; nothing was written.
    #[error(
        "nothing was imported: {} problem(s), the first: {}",
        .0.len(),
        .0.first().map(ToString::to_string).unwrap_or_default()
    )]
    Invalid(Vec<crate::bundle::Problem>),
    #[error(transparent)]
    Store(#[from] Error),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Imaging(#[from] imaging::ImagingError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {doing} failed: {source}")]
    Database {
        path: PathBuf,
        doing: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "{path} was written by a newer NeuroRater (schema version {found}; this build knows up to \
         {supported}): update NeuroRater, or open another file with --db"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("no data directory could be found for this user: set NEURORATER_DB or pass --db")]
    NoDataDirectory,
    #[error("{what} was not found")]
    NotFound { what: String },
    #[error("the database holds an unexpected value: {what}")]
    Corrupt { what: String },
    #[error(
        "{path}: the image was moved or cannot be read ({source}); put the bundle back where it \
         was imported from, or import it again from its new place"
    )]
    ImageMissing {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: the image changed since it was imported (its content hash differs); it is not \
         shown, because it may not be the picture the study was built on. Re-import the bundle \
         if the change was intended"
    )]
    ImageChanged { path: PathBuf },
    /// A rating operation was refused or its arguments are invalid; the message says which.
    #[error(transparent)]
    Rating(#[from] crate::rating::RatingError),
    /// The demo study could not be synthesised or written; the message names the file or step.
    #[error("demo study: {0}")]
    Demo(String),
    /// A curator's edit started from a version of the ground truth that is no longer the latest.
    #[error(
        "the ground truth of case {case_id} moved on: version {latest} was saved by {by} at {at}, \
         after {based_on}, which this edit started from; nothing was saved. Reload the case, look \
         at what changed, and apply the edit again"
    )]
    StaleGroundTruth {
        case_id: String,
        /// "version N" or "no version".
        based_on: String,
        latest: i64,
        by: String,
        at: String,
    },
    /// A curation or reader-mode step that the rules forbid; the message says which rule.
    #[error("{0}")]
    CurationRefused(String),
    /// A rater or results package that is damaged, incomplete or not for this database; each
    /// problem names the member of the package, its line and field. Nothing was written.
    #[error("{}: the package was refused, nothing was written:\n{}", package.display(),
        problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Package {
        package: PathBuf,
        problems: Vec<crate::bundle::Problem>,
    },
    /// Ratings from the team server that cannot be written into this database (a rater or
    /// response it does not have, a rating the rules refuse); each problem names the server's
    /// assignment and the field. Nothing was written.
    #[error("the team server's ratings were refused, nothing was written:\n{}",
        problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    ServerRatings {
        problems: Vec<crate::bundle::Problem>,
    },
    /// A harness's responses file that cannot be read through its column map, or names cases,
    /// tasks or key images that do not exist; each problem names the file, line and field.
    #[error("the responses were refused, nothing was written:\n{}",
        problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Responses {
        problems: Vec<crate::bundle::Problem>,
    },
    /// Long work the user cancelled stopped before it wrote anything.
    #[error("{doing} was cancelled; nothing was written")]
    Cancelled { doing: String },
}

impl Error {
    pub(crate) fn database(path: &std::path::Path, doing: &str, source: rusqlite::Error) -> Error {
        Error::Database {
            path: path.to_path_buf(),
            doing: doing.to_owned(),
            source,
        }
    }
}
