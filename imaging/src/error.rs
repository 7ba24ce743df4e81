//! The one error type of imaging: which file, which transfer syntax, what went wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of failure, so a caller (the UI, the CLI's exit code) can branch without parsing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImagingErrorKind {
    /// The file could not be opened or read.
    Io,
    /// Not a DICOM, NIfTI, PNG or JPEG file.
    UnrecognisedFormat,
    /// A header field is missing or holds an impossible value.
    InvalidHeader,
    /// A valid file using something we cannot decode (codec, photometric interpretation, datatype).
    Unsupported,
    /// The pixel data is shorter than the header declares.
    Truncated,
    /// The declared image is larger than [`super::MAX_DECODED_BYTES`]; refused before allocating.
    TooLarge,
    /// The codec failed on the compressed data.
    Decode,
    /// The requested frame or window is outside what the file holds.
    InvalidRequest,
    /// Encoding the rendered picture failed.
    Encode,
}

/// A failure naming the file, the DICOM transfer syntax when there is one, and the reason.
#[derive(Debug, Clone)]
pub struct ImagingError {
    pub path: PathBuf,
    /// `UID (name)` of the DICOM transfer syntax, when the file got that far.
    pub transfer_syntax: Option<String>,
    pub kind: ImagingErrorKind,
    pub reason: String,
}

impl ImagingError {
    pub(crate) fn new(path: &Path, kind: ImagingErrorKind, reason: impl Into<String>) -> Self {
        ImagingError {
            path: path.to_path_buf(),
            transfer_syntax: None,
            kind,
            reason: reason.into(),
        }
    }

    pub(crate) fn with_transfer_syntax(mut self, uid: &str) -> Self {
        self.transfer_syntax = Some(describe_transfer_syntax(uid));
        self
    }
}

impl fmt::Display for ImagingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(ts) = &self.transfer_syntax {
            write!(f, " [transfer syntax {ts}]")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for ImagingError {}

/// `1.2.840.10008.1.2.4.50 (JPEG Baseline (Process 1))`, or the bare UID when unknown to dicom-rs.
pub(crate) fn describe_transfer_syntax(uid: &str) -> String {
    use dicom_encoding::transfer_syntax::TransferSyntaxIndex;
    use dicom_transfer_syntax_registry::TransferSyntaxRegistry;
    let uid = uid.trim_end_matches(['\0', ' ']);
    match TransferSyntaxRegistry.get(uid) {
        Some(ts) => format!("{uid} ({})", ts.name()),
        None => format!("{uid} (unknown to this build)"),
    }
}
