//! How long work reports where it is, without knowing who listens: the CLI draws a progress bar,
//! the app emits events. The one progress trait of the workspace: `cases` re-exports it for
//! imports and packages, this crate's bootstrap reports through it.

/// Receives progress of a long operation. Implementations must be cheap: they are called per file
/// or per block of resamples, and from worker threads in no fixed order.
pub trait Progress: Sync {
    /// A new phase starts (`"validating"`, `"bootstrapping"`, …) with `total` steps.
    fn phase(&self, name: &str, total: u64);
    /// `done` steps of the current phase are complete.
    fn advance(&self, done: u64);
    /// Whether whoever listens has asked the work to stop. Long work asks between its steps and
    /// stops with its crate's "cancelled" error, having written nothing; the default never stops.
    fn cancelled(&self) -> bool {
        false
    }
}

/// For callers that do not care.
pub struct NoProgress;

impl Progress for NoProgress {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self, _done: u64) {}
}
