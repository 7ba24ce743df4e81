//! Owned by the imaging work; replaced soon.

#[derive(Debug, thiserror::Error)]
#[error("imaging not implemented yet")]
pub struct ImagingError;
