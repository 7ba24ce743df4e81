//! The study in the field's own formats (docs/formats.md §9): exports that carry ground truth,
//! every rater's marks and every model's name, so each takes a [`LeadSession`] (a blinded reader
//! never reaches them).

use super::LeadSession;
use crate::dicom_sr::{self, SrSummary};
use crate::store::Store;
use crate::Result;
use std::path::Path;

/// One DICOM SR per case of `study_id` with its lesion marks and image-anchored error labels,
/// beside de-identified copies of the series they lie on, in the folder `out`
/// (`export --what sr`; docs/dicom-sr.md).
pub fn dicom_sr(
    store: &Store,
    _lead: &LeadSession,
    study_id: &str,
    out: &Path,
) -> Result<SrSummary> {
    dicom_sr::write_reports(store, study_id, out)
}
