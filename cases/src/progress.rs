//! How long work reports where it is, without knowing who listens: the CLI draws a progress bar,
//! the app emits events. The trait is the workspace's one, defined beside the bootstrap that is
//! the other long computation (`calibration::progress`), and re-exported here for the domain.

pub use calibration::progress::{NoProgress, Progress};
