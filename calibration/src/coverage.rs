//! What each rubric dimension holds across the clinicians' ratings: how many ratings scored it,
//! how many marked it "not applicable", how many were of a task family it does not apply to, and
//! how many left it empty although it applied (a ratings file may give some dimensions only).
//! Agreement statistics use the scores alone; this says what they leave out and why.
//!
//! The counts come from the reader of the ratings (a database knows each task's family and
//! the rubric); a CSV carries none of it, and its report has no coverage.

use serde::Serialize;

/// One rubric dimension's share of the ratings the report reads (submitted first reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DimensionCoverage {
    pub dimension: String,
    /// Ratings with a score of the dimension: what its agreement statistics use.
    pub rated: usize,
    /// Ratings that marked it "not applicable" (where the rubric allows it).
    pub not_applicable: usize,
    /// Ratings of a task of a family the dimension does not apply to.
    pub not_applied: usize,
    /// Ratings of a task it applies to that neither score it nor mark it not applicable.
    pub missing: usize,
}

impl DimensionCoverage {
    /// Every rating the report reads, once: the four counts partition it.
    pub fn ratings(&self) -> usize {
        self.rated + self.not_applicable + self.not_applied + self.missing
    }
}

/// One rubric version's share of the study's submitted first reads. The analyses read the
/// current version's alone (`docs/report-schema.md`, "Rubric versions"); the others are counted
/// here so that none is left out silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RubricVersionCount {
    pub version: u32,
    /// Submitted first reads last saved under this version.
    pub ratings: usize,
    /// Whether this is the study's current version, the one the analyses read.
    pub current: bool,
}

/// The rows of `rubric_versions.csv`, header first.
pub(crate) fn version_csv_rows(versions: Option<&[RubricVersionCount]>) -> Vec<Vec<String>> {
    std::iter::once(vec![
        "rubric_version".to_owned(),
        "ratings".to_owned(),
        "current".to_owned(),
    ])
    .chain(versions.into_iter().flatten().map(|v| {
        vec![
            v.version.to_string(),
            v.ratings.to_string(),
            v.current.to_string(),
        ]
    }))
    .collect()
}

/// The rows of `dimension_coverage.csv`, header first.
pub(crate) fn csv_rows(coverage: Option<&[DimensionCoverage]>) -> Vec<Vec<String>> {
    let header = [
        "dimension",
        "rated",
        "not_applicable",
        "not_applied",
        "missing",
    ];
    std::iter::once(header.iter().map(|h| h.to_string()).collect())
        .chain(coverage.into_iter().flatten().map(|c| {
            vec![
                c.dimension.clone(),
                c.rated.to_string(),
                c.not_applicable.to_string(),
                c.not_applied.to_string(),
                c.missing.to_string(),
            ]
        }))
        .collect()
}
