//! The one error type of the `cases` crate.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Imaging(#[from] crate::imaging::ImagingError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The demo study could not be synthesised or written; the message names the file or step.
    #[error("demo study: {0}")]
    Demo(String),
}
