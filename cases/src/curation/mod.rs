//! Curation: structured ground truth per case, kept in versions (draft → in review → final),
//! reviewed by a second curator, compared and merged, exported and imported as a ground-truth
//! bundle; plus what ground truth makes checkable (missed findings), when a rater may see it, and
//! clinicians answering tasks blind as a human baseline. `docs/curation.md` is the user's guide.
//!
//! # API
//! - [`versions`]: [`history`], [`current`], [`save_draft`] (optimistic concurrency through
//!   `based_on`), [`submit_for_review`], [`review`].
//! - [`rules`]: the version rules, pure, which the local store and the team server both obey;
//!   [`truth_problems`] checks a version against a case ([`CaseShape`]).
//! - [`diff`]: [`diff_versions`] (field level), [`compare`] and [`merge`] (two independent
//!   curations → disagreements, each lesion's saying whether the marks overlap → consensus).
//! - [`bundle`]: [`export_bundle`] and [`import_bundle`] (JSON per case, PNG key images).
//! - [`findings`]: [`missed_findings`] for the calibration report.
//! - [`reveal`]: [`ground_truth_for_rater`], only after the rater submitted.
//! - [`baseline`]: [`baseline_tasks`], [`blind_task`] and [`submit_human_answer`] (human-baseline
//!   reader mode; curators and clinicians who have seen the case's model answers are refused).

pub mod baseline;
pub mod bundle;
mod context;
pub mod diff;
pub mod findings;
pub mod reveal;
pub mod rules;
pub mod versions;

pub use baseline::{
    baseline_tasks, blind_task, submit_human_answer, BaselineState, BaselineTask, BlindTask,
    HumanAnswer, HumanRole,
};
pub use bundle::{export_bundle, import_bundle, key_image_source, BundleExport};
pub use context::{truth_problems, CaseContext, CaseShape};
pub use diff::{compare, diff_versions, merge, Change, Disagreement, Side};
pub use findings::{missed_findings, MissedFinding};
pub use reveal::{ground_truth_for_rater, RevealedTruth};
pub use versions::{
    check_edit, current, history, imported_final, review, save_consensus, save_draft,
    submit_for_review, Decision, Edit, ReceivedVersions, ReviewEntry, Source, Status, Version,
    MAIN_BRANCH,
};

use crate::marks::{Mark, Plane};
use crate::model::{DifferentialItem, SliceRef, TaskFamily};
use serde::{Deserialize, Serialize};

/// A case's ground truth as curators establish it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct CuratedTruth {
    pub diagnosis: String,
    /// E.g. an ICD-10 code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis_code: Option<String>,
    /// Ranked, most likely first.
    #[serde(default)]
    pub differential: Vec<DifferentialItem>,
    #[serde(default)]
    pub lesions: Vec<CuratedLesion>,
    #[serde(default)]
    pub expected_reasoning: String,
    /// 1 direct, 2 complex, 3 multi-turn: how hard a clinician finds the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<u8>,
    /// Per task of the case: its family and the key images it shows the model.
    #[serde(default)]
    pub tasks: Vec<TaskTruth>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct CuratedLesion {
    /// Unique within the case.
    pub id: String,
    pub description: String,
    /// Where it is, in patient coordinates (DICOM LPS, mm).
    #[serde(default)]
    pub marks: Vec<Mark>,
    /// The series and slices that show it.
    #[serde(default)]
    pub shown_on: Vec<SliceRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct TaskTruth {
    pub task_id: String,
    pub family: TaskFamily,
    #[serde(default)]
    pub key_images: Vec<SliceRef>,
}

impl CuratedTruth {
    /// The bundle's form (`case.json`'s `ground_truth`), stored in the `ground_truth` table so
    /// exports and re-imports read the current ground truth the way they always did.
    pub fn to_bundle_form(&self) -> crate::model::GroundTruth {
        use crate::marks::MarkKind;
        use crate::model::{Lesion, Mark as BundleMark, MarkShape};
        crate::model::GroundTruth {
            diagnosis: self.diagnosis.clone(),
            diagnosis_code: self.diagnosis_code.clone(),
            differential: self.differential.clone(),
            lesions: self
                .lesions
                .iter()
                .map(|lesion| Lesion {
                    id: lesion.id.clone(),
                    description: lesion.description.clone(),
                    marks: lesion
                        .marks
                        .iter()
                        .map(|mark| BundleMark {
                            series: mark.series_id.clone(),
                            shape: match mark.kind {
                                MarkKind::Point => MarkShape::Point,
                                MarkKind::Arrow => MarkShape::Arrow,
                                MarkKind::Ellipse => MarkShape::Ellipse,
                                MarkKind::Freehand => MarkShape::Freehand,
                            },
                            points_mm: mark.points_lps_mm.clone(),
                        })
                        .collect(),
                })
                .collect(),
            expected_reasoning: self.expected_reasoning.clone(),
            difficulty: self.difficulty,
        }
    }
}

/// The plane a bundle mark was drawn in, which the bundle format does not record: the one its
/// points share (equal z: axial, equal y: coronal, equal x: sagittal); axial for a single point,
/// the plane readers mark on by default.
fn plane_of(points: &[[f64; 3]]) -> Plane {
    const SAME_MM: f64 = 1e-6;
    let shared = |axis: usize| {
        points
            .iter()
            .all(|p| (p[axis] - points[0][axis]).abs() < SAME_MM)
    };
    if points.len() < 2 || shared(2) {
        Plane::Axial
    } else if shared(1) {
        Plane::Coronal
    } else if shared(0) {
        Plane::Sagittal
    } else {
        Plane::Axial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plane_is_the_one_the_points_share() {
        let axial = [[1.0, 2.0, 5.0], [3.0, -2.0, 5.0], [0.0, 0.0, 5.0]];
        assert_eq!(plane_of(&axial), Plane::Axial);
        let coronal = [[1.0, 7.0, 5.0], [3.0, 7.0, 9.0]];
        assert_eq!(plane_of(&coronal), Plane::Coronal);
        let sagittal = [[4.0, 7.0, 5.0], [4.0, 1.0, 9.0]];
        assert_eq!(plane_of(&sagittal), Plane::Sagittal);
        assert_eq!(plane_of(&[[1.0, 2.0, 3.0]]), Plane::Axial);
    }
}
