//! Runs models and LLM graders over a study through the OpenAI Chat Completions API
//! (docs/formats.md §6), and stores what they answer in the `cases` store as it arrives.
//!
//! A crate of its own because it is the only part of NeuroRater that talks to a network and needs
//! an async runtime (tokio, reqwest): `cases` and `calibration` stay synchronous and offline, and
//! the app and CLI link this only where they run models. It calls the `cases` store; `cases`
//! knows nothing of it.

pub mod client;
pub mod grader;
pub mod record;
pub mod run;
pub mod spec;
pub mod versions;

pub use run::{grade, RunProgress, RunSummary};
pub use spec::Spec;

/// The one error type of the runner; messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The spec file is wrong; each problem is `FILE:LINE: field: message`.
    #[error("{}", problems.join("\n"))]
    Spec { problems: Vec<String> },
    #[error(
        "the name {name:?} is bound to another spec (content hash {stored}, this one {given}): \
         a changed prompt or setting is a new version, so give the spec a new name"
    )]
    SpecChanged {
        name: String,
        stored: String,
        given: String,
    },
    #[error("the name {name:?} cannot be used for this run: {why}; give the spec a new name")]
    NameInUse { name: String, why: String },
    #[error(
        "the environment variable {var} named by api_key_env is not set or empty: set it to the \
         API key (the key itself never goes into the spec)"
    )]
    MissingKey { var: String },
    /// 401/403, or no server at the endpoint: the run stopped at once; nothing more was sent.
    #[error("{0}; the run stopped, results stored so far are kept")]
    Stopped(String),
    #[error(transparent)]
    Store(#[from] cases::Error),
    #[error("{0}")]
    Internal(String),
}

impl RunError {
    /// Whether the user can fix this by changing their input (a spec, a name, a key).
    pub fn is_input(&self) -> bool {
        !matches!(self, RunError::Store(_) | RunError::Internal(_))
    }
}
