//! What the caller (CLI from a CSV or the database, the desktop app) hands to the report.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One score: `rater` scored `item` on `dimension`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreRow {
    pub item: String,
    pub rater: String,
    pub dimension: String,
    pub score: f64,
}

/// What is known about an item besides its scores.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ItemInfo {
    /// The case (cluster) the item belongs to; items of one case are resampled together.
    /// `None` makes the item its own cluster.
    pub case: Option<String>,
    /// Grouping column → value (e.g. `disease_group` → `stroke`).
    pub groups: BTreeMap<String, String>,
}

/// The long table of docs/formats.md §3: one score per (item, rater, dimension).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LongTable {
    pub scores: Vec<ScoreRow>,
    /// Grouping columns in the order they were given; each gets its own breakdown.
    pub grouping_columns: Vec<String>,
    pub items: BTreeMap<String, ItemInfo>,
    /// Scales declared with the data: the CSV's `scale_min`/`scale_max`/`scale_step` columns
    /// (per rater and dimension), a database's rubric (per dimension, every rater).
    pub scales: Vec<RaterScale>,
}

/// An error a clinician labelled on a response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorLabel {
    pub rater: String,
    /// Taxonomy code, e.g. `P1`.
    pub category: String,
    /// 1 clinically insignificant · 2 significant · 3 significant and urgent.
    pub severity: u8,
}

/// Error labels of one item: what the grader claimed and what clinicians found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemErrors {
    pub item: String,
    pub grader_claims: BTreeSet<String>,
    /// Clinicians who reviewed the item for errors, including those who found none. Empty means
    /// "the raters who appear in `clinician_labels`".
    pub reviewers: BTreeSet<String>,
    pub clinician_labels: Vec<ErrorLabel>,
}

/// The items a grader's figures read (`verdict.items_used`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemsUsed {
    /// Every item: no grader of the study was tuned on a part of it.
    #[default]
    All,
    /// Only the test part of the grader workbench's split, whole cases a prompt was never tuned
    /// on; `versions_confirmed` grader versions have been judged on them.
    TestCases {
        cases: usize,
        items: usize,
        versions_confirmed: usize,
    },
}

/// A clinician's judgement of whether one sample of a model's answer was correct (for pass@k).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorrectnessJudgement {
    /// The case the task belongs to: a task id names a task within its case, and the tasks of
    /// one case are not independent.
    pub case: String,
    pub model: String,
    pub task_family: String,
    pub level: String,
    pub task: String,
    pub sample: u32,
    pub rater: String,
    pub correct: bool,
}

/// Everything the report is built from. Items from a CSV simply have no error or pass@k data.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalibrationInput {
    pub table: LongTable,
    pub errors: Vec<ItemErrors>,
    pub correctness: Vec<CorrectnessJudgement>,
    /// Category code → bucket; empty means the default taxonomy's roll-up (docs/domain.md).
    pub category_buckets: BTreeMap<String, String>,
    /// First and repeat reads of the same item by the same clinician (intra-rater reliability).
    /// They are not in `table`, which holds first reads only.
    pub repeat_reads: Vec<RepeatRead>,
    /// Ground-truth lesions responses did not mention; empty `checked` means not checked.
    pub missed_findings: MissedFindingsInput,
    /// The study database's audit head (`N:HASH`) when the input was read, so a published report
    /// pins the data it came from; `None` for input without an audit log (a CSV).
    pub audit_head: Option<String>,
    /// Which items the grader's scores were read on (the caller filters them): all, or only the
    /// test cases of the workbench's split, where a grader prompt was tuned on the others.
    pub items_used: ItemsUsed,
}

/// A clinician's first read and repeat read (after the wash-out) of one item, overall scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatRead {
    pub rater: String,
    pub item: String,
    pub first: f64,
    pub repeat: f64,
}

/// The responses checked for missed findings and the lesions each missed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MissedFindingsInput {
    pub checked: Vec<CheckedResponse>,
    pub missed: Vec<MissedLesion>,
    /// Why nothing could be checked (e.g. the ground truth could not be read), shown in the report.
    pub not_checked: Option<String>,
}

/// A response whose answer was checked against its case's ground-truth lesions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckedResponse {
    pub item: String,
    pub case: String,
    pub model: String,
    /// Ground-truth lesions of the case.
    pub lesions: usize,
}

/// A ground-truth lesion that `item` did not mention and no rater flagged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissedLesion {
    pub item: String,
    pub lesion_id: String,
    pub description: String,
    /// Where it is, in words (series and slices, mark centre in LPS mm); empty when unknown.
    pub location: String,
}

/// The rubric scale, when known: scores are min, min+step, …, max.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScaleSpec {
    pub min: f64,
    pub max: f64,
    pub step: f64,
}

impl ScaleSpec {
    /// E.g. `1–5` or `0–1 in steps of 0.25`.
    pub fn describe(&self) -> String {
        if self.step == 1.0 {
            format!("{}–{}", self.min, self.max)
        } else {
            format!("{}–{} in steps of {}", self.min, self.max, self.step)
        }
    }
}

/// A scale declared for one rater (or every rater) on one dimension (or every dimension). The
/// most specific declaration wins: rater and dimension, then rater, then dimension, then
/// [`ReportOptions::scale`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaterScale {
    /// `None`: every rater.
    pub rater: Option<String>,
    /// `None`: every dimension.
    pub dimension: Option<String>,
    pub scale: ScaleSpec,
}

/// How the report is built. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportOptions {
    /// The LLM grader's rater name; `None` reports human–human agreement only.
    pub grader: Option<String>,
    /// Other versions of the grader that scored the same items: excluded from the humans and
    /// compared with `grader` (drift); without `grader`, only excluded (a grader is never a
    /// clinician).
    pub other_grader_versions: Vec<String>,
    /// Clinicians the analyst leaves out (a pilot reader, a trainee): none of their scores,
    /// labels, judgements or repeat reads enter; the report names them.
    pub excluded_raters: Vec<String>,
    pub seed: u64,
    pub bootstrap_resamples: usize,
    /// The verdict's bar on Pearson r (grader vs the clinicians' mean).
    pub bar_pearson_r: f64,
    /// How far below a held-out clinician's r (like for like) the grader's may be and still count
    /// as non-inferior; equivalence asks for the difference within ± this margin.
    pub non_inferiority_margin: f64,
    /// The scale of every rater and dimension without a declaration of its own.
    pub scale: Option<ScaleSpec>,
    /// Scales the analyst declares per rater (and dimension), besides those the data declare
    /// ([`LongTable::scales`]); e.g. a grader that scored 0–10 beside clinicians on 1–5.
    pub rater_scales: Vec<RaterScale>,
    /// Raters whose scores are mapped linearly from their own scale onto the clinicians'
    /// (min to min, max to max) before any comparison. Without a mapping, raters on different
    /// scales are compared only by association (correlations, ICC3), never by absolute agreement.
    pub linear_rescale: Vec<String>,
    /// ε of the alternative annotator test (0.2: the paper's value for expert annotators).
    pub alt_test_epsilon: f64,
    /// FDR level of the Benjamini–Yekutieli correction in the alternative annotator test.
    pub alt_test_q: f64,
    /// Comparable items a clinician needs to enter the alternative annotator test (the authors'
    /// 30); clinicians with fewer are left out and named.
    pub alt_test_min_items: usize,
    /// A grader score at or above this is "high" for the dangerous-case list; `None` means the
    /// top quarter of the scale (min + 0.75 (max − min)), or without a scale the 75th percentile
    /// of the grader's scores.
    pub high_score_threshold: Option<f64>,
    /// The k of pass@k.
    pub pass_at: Vec<usize>,
    /// Whether the variance components get their profile-likelihood intervals: some hundred
    /// refits of the model per dimension. Off only where a report is built for something other
    /// than reading it (the fuzz replay, which checks that odd tables do not panic, and would
    /// spend minutes refitting its two thousand tables).
    pub variance_component_intervals: bool,
    /// Whether the prediction-powered estimates are also given per task family and level within
    /// each model (from the items' `task_family` and `level` groups), besides per model.
    pub ppi_by_task_family_and_level: bool,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            grader: None,
            other_grader_versions: Vec::new(),
            excluded_raters: Vec::new(),
            seed: 1,
            bootstrap_resamples: 2000,
            bar_pearson_r: 0.90,
            non_inferiority_margin: 0.05,
            scale: None,
            rater_scales: Vec::new(),
            linear_rescale: Vec::new(),
            alt_test_epsilon: 0.2,
            alt_test_q: 0.05,
            alt_test_min_items: crate::alt_test::ALT_TEST_MIN_ITEMS,
            high_score_threshold: None,
            pass_at: vec![1, 5],
            variance_component_intervals: true,
            ppi_by_task_family_and_level: false,
        }
    }
}

/// The default taxonomy's roll-up to Neural-MedBench's buckets (docs/domain.md).
pub fn default_bucket(category: &str) -> &'static str {
    match category {
        "P1" | "P2" | "P4" | "P5" | "T1" => "perceptual",
        "P3" | "G2" => "hallucination",
        "G1" => "grounding",
        "R1" | "R2" | "R3" | "R4" => "reasoning",
        "K1" => "knowledge",
        "C1" => "confidence",
        _ => "other",
    }
}

impl CalibrationInput {
    /// The input without anything the `excluded` raters contributed.
    pub fn without_raters(&self, excluded: &[String]) -> CalibrationInput {
        let kept = |rater: &String| !excluded.contains(rater);
        let mut input = self.clone();
        input.table.scores.retain(|s| kept(&s.rater));
        for item in &mut input.errors {
            item.reviewers.retain(kept);
            item.clinician_labels.retain(|l| kept(&l.rater));
        }
        input.correctness.retain(|j| kept(&j.rater));
        input.repeat_reads.retain(|r| kept(&r.rater));
        input
    }
}
