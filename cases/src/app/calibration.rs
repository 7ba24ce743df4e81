//! The calibration report of a stored study, the one way both front ends build it: read the
//! study in one snapshot (under the store's lock), then bootstrap without it.

use super::LeadSession;
use crate::analysis::study_data;
use crate::automatic_metrics::automatic_metrics_input;
use crate::rating::RatingError;
use crate::store::Store;
use crate::{Error, Result};
use calibration::automatic_metrics::{automatic_metrics_report, AutomaticMetricsInput};
use calibration::bootstrap::Progress;
use calibration::input::{CalibrationInput, ReportOptions};
use calibration::report::{build_report, Report, ReportError};

/// A study read for its report, with the options completed from it; [`StudyReport::build`]
/// computes the report and needs no store.
pub struct StudyReport {
    pub input: CalibrationInput,
    pub options: ReportOptions,
    /// Every grader that scored a response of the study.
    pub graders: Vec<String>,
    /// The stored text metrics, answer lengths and grader runs the report's "automatic metrics
    /// against the clinicians" section reads.
    pub automatic: AutomaticMetricsInput,
}

/// Reads `study_id` for its calibration report. `options` is completed from the study: the
/// rubric's overall scale, and every grader that scored it other than `options.grader` is
/// compared as another version of the grader (drift), never counted as a clinician. A named
/// grader must have scored the study.
pub fn study_report(
    store: &Store,
    _lead: &LeadSession,
    study_id: &str,
    options: ReportOptions,
) -> Result<StudyReport> {
    let data = study_data(store, study_id, options.grader.as_deref())?;
    if let Some(grader) = options.grader.as_deref() {
        if !data.graders.iter().any(|g| g == grader) {
            return Err(Error::Rating(RatingError::Invalid {
                field: "grader".into(),
                message: format!(
                    "`{grader}` scored no response of study {study_id} (graders: {})",
                    if data.graders.is_empty() {
                        "none".to_owned()
                    } else {
                        data.graders.join(", ")
                    }
                ),
            }));
        }
    }
    let automatic = automatic_metrics_input(store, study_id, options.grader.as_deref())?;
    let mut other_grader_versions = options.other_grader_versions.clone();
    for grader in &data.graders {
        if Some(grader.as_str()) != options.grader.as_deref()
            && !other_grader_versions.contains(grader)
        {
            other_grader_versions.push(grader.clone());
        }
    }
    Ok(StudyReport {
        input: data.input,
        options: ReportOptions {
            other_grader_versions,
            scale: Some(data.scale),
            ..options
        },
        graders: data.graders,
        automatic,
    })
}

/// The graders that scored a response of the study, for a grader picker.
pub fn graders(store: &Store, _lead: &LeadSession, study_id: &str) -> Result<Vec<String>> {
    Ok(study_data(store, study_id, None)?.graders)
}

impl StudyReport {
    /// Bootstraps and builds the report; long, so it reports `progress`.
    pub fn build(&self, progress: &dyn Progress) -> std::result::Result<Report, ReportError> {
        let mut report = build_report(&self.input, &self.options, progress)?;
        report.automatic_metrics =
            automatic_metrics_report(&self.automatic, &self.input, &self.options);
        Ok(report)
    }
}
