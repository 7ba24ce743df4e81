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
    /// Ratings saved under a rubric version that defined the dimension otherwise (other levels)
    /// or not at all: a score they hold of it is left out, `RubricVersionCount::left_out` says
    /// why. Additive (issue 41).
    pub other_definition: usize,
}

impl DimensionCoverage {
    /// Every rating the report reads, once: the five counts partition it.
    pub fn ratings(&self) -> usize {
        self.rated + self.not_applicable + self.not_applied + self.missing + self.other_definition
    }
}

/// One rubric version's share of the study's submitted first reads. The analyses read, per
/// dimension, every rating whose version defines that dimension as the current version does
/// (the same levels; wording, descriptions, "not applicable" and added families or dimensions
/// leave it comparable: `cases::rubric::comparable`); what a version's ratings hold that is left
/// out is listed in `left_out`, with why (`docs/report-schema.md`, "Rubric versions").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RubricVersionCount {
    pub version: u32,
    /// Submitted first reads last saved under this version.
    pub ratings: usize,
    /// Whether this is the study's current version.
    pub current: bool,
    /// The scores of this version's ratings the analyses leave out, per dimension, with why.
    /// Empty for the current version. Additive (issue 41).
    pub left_out: Vec<LeftOutScores>,
}

/// Scores of one dimension given under an earlier rubric version and left out of the analyses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOutScores {
    pub dimension: String,
    pub scores: usize,
    /// E.g. `version 1 scored it 1–5 by 1, the current version 1–3 by 1`.
    pub reason: String,
}

/// The rows of `rubric_versions.csv`, header first.
pub(crate) fn version_csv_rows(versions: Option<&[RubricVersionCount]>) -> Vec<Vec<String>> {
    std::iter::once(vec![
        "rubric_version".to_owned(),
        "ratings".to_owned(),
        "current".to_owned(),
        "left_out".to_owned(),
    ])
    .chain(versions.into_iter().flatten().map(|v| {
        vec![
            v.version.to_string(),
            v.ratings.to_string(),
            v.current.to_string(),
            v.left_out
                .iter()
                .map(|l| format!("{}: {} ({})", l.dimension, l.scores, l.reason))
                .collect::<Vec<_>>()
                .join("; "),
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
        "other_definition",
    ];
    std::iter::once(header.iter().map(|h| h.to_string()).collect())
        .chain(coverage.into_iter().flatten().map(|c| {
            vec![
                c.dimension.clone(),
                c.rated.to_string(),
                c.not_applicable.to_string(),
                c.not_applied.to_string(),
                c.missing.to_string(),
                c.other_definition.to_string(),
            ]
        }))
        .collect()
}
