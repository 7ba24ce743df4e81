//! How long work reports where it is, without knowing who listens: the CLI draws a progress bar,
//! the app emits events. The trait is the workspace's one, defined beside the bootstrap that is
//! the other long computation (`calibration::progress`), and re-exported here for the domain.

pub use calibration::progress::{NoProgress, Progress};

/// Stops `doing` with [`crate::Error::Cancelled`] when whoever follows `progress` asked to cancel.
/// Long work calls it between its steps, before its one write, so a cancel writes nothing.
pub fn stop_if_cancelled(progress: &dyn Progress, doing: &str) -> crate::Result<()> {
    if progress.cancelled() {
        Err(crate::Error::Cancelled {
            doing: doing.to_owned(),
        })
    } else {
        Ok(())
    }
}
