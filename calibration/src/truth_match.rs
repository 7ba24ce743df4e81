//! The report's `answer_accuracy` section (issue 39, docs/formats.md §5): model answers scored
//! against the curated diagnosis by the ground-truth matcher (`truthmatch`, run by `cases`),
//! beside the clinicians' and the grader's correctness. One row per model, then one per model ×
//! task family × level:
//!
//! - answers, how many the matcher could not decide (`unmatched`, left out of every figure but
//!   the disease groups'), exact matches, answers with a contradicted finding, and top-1 and top-3
//!   accuracy, each with the 95 % Wilson interval at Kish's effective number of cases (answers of
//!   one case are not independent);
//! - pass@k for each k of the report's `pass_at`: the clinicians' estimator
//!   (`report::pass_at_k_rows`, Chen et al.'s unbiased pass@k with the same case-clustered
//!   interval) over each task's decided samples, a sample correct when the matcher ranks the
//!   curated diagnosis first;
//! - accuracy and macro-F1 over disease groups as scikit-learn computes them (`accuracy_score`,
//!   `f1_score(average="macro", zero_division=0)`: the classes are those among the true or the
//!   predicted groups). The predicted group is the case's own when the matcher ranks the curated
//!   diagnosis first, else the group of the answer's primary diagnosis in the matcher's table,
//!   else `unmatched`, a class of its own (so an undecidable answer costs its true group recall);
//! - the matcher's top-1 correctness against the clinicians' (most of an answer's judgements)
//!   and the grader's (its score on the primary dimension at or above the pass score of the
//!   automatic-metrics section): percent agreement and Cohen's κ.

use crate::estimate::Estimate;
use crate::input::{CalibrationInput, ReportOptions};
use crate::kappa::{cohen_kappa, Categories, KappaValue};
use crate::proportions::wilson_interval;
use crate::report::{kish_effective_cases, pass_at_k_rows, PassAtK, PassAtKKey, PassAtKTask};
use serde::Serialize;
use std::collections::BTreeMap;

/// The class of an answer whose primary diagnosis maps to no disease group.
pub const UNMATCHED_GROUP: &str = "unmatched";

/// One answer as the matcher judged it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchedAnswer {
    /// The report's item, `case/task/model/sample`.
    pub item: String,
    pub case: String,
    /// `case/task`.
    pub task: String,
    pub model: String,
    pub task_family: String,
    pub level: String,
    /// The case's disease group.
    pub true_group: String,
    /// The curated diagnosis ranked first (unhedged); `None` when the matcher could not decide.
    pub top1: Option<bool>,
    /// Within the first three; `None` when the matcher could not decide.
    pub top3: Option<bool>,
    /// See the module's documentation; [`UNMATCHED_GROUP`] when none.
    pub predicted_group: String,
    pub exact: bool,
    /// Findings (side, lobe, territory, signal, diffusion, enhancement) the answer contradicts.
    pub contradictions: usize,
    /// What the matcher could not decide (the answer's diagnosis statement), for the curator.
    pub unmatched_span: Option<String>,
}

/// One row of the section: a model, or a model's task family and level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerAccuracyRow {
    pub model: String,
    /// Absent on the model's own row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_family: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// Answers.
    pub n: usize,
    pub unmatched: usize,
    pub exact: usize,
    /// Decided answers with at least one contradicted finding.
    pub contradicted_findings: usize,
    pub top1: Estimate<Share>,
    pub top3: Estimate<Share>,
    /// pass@k per k of the report's `pass_at` (keys are the k's in decimal).
    pub pass_at: BTreeMap<String, Estimate<PassAtK>>,
    /// Over every answer of the row, undecided ones in the `unmatched` class.
    pub group_accuracy: Estimate<f64>,
    pub macro_f1: Estimate<f64>,
    pub groups: Vec<GroupF1>,
    /// Against the clinicians, then the grader.
    pub agreement: Vec<MatchAgreement>,
    /// On the model's own row only: each undecided answer and the span the matcher could not
    /// decide, for the curator to read (and to add a synonym for).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<Undecided>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Undecided {
    pub item: String,
    pub span: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Share {
    pub value: f64,
    /// 95 % Wilson interval at `effective_cases`.
    pub low: f64,
    pub high: f64,
    /// Decided answers.
    pub n: usize,
    pub n_cases: usize,
    pub effective_cases: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupF1 {
    pub group: String,
    /// Answers whose case is in the group.
    pub support: usize,
    /// Answers predicted in the group.
    pub predicted: usize,
    pub f1: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchAgreement {
    /// `clinicians` or `grader`.
    pub against: String,
    /// Answers the matcher decided and the other side judged.
    pub n: usize,
    pub percent_agreement: Estimate<f64>,
    pub kappa: Estimate<KappaValue>,
}

/// The section; `dimension` is the report's primary one (the grader's correctness is read on
/// it).
pub fn answer_accuracy(
    answers: &[MatchedAnswer],
    input: &CalibrationInput,
    options: &ReportOptions,
    dimension: Option<&str>,
) -> Vec<AnswerAccuracyRow> {
    let judged = Judged::read(input, options, dimension);
    type RowKey<'a> = (&'a str, Option<(&'a str, &'a str)>);
    let mut rows: BTreeMap<RowKey, Vec<&MatchedAnswer>> = BTreeMap::new();
    for a in answers {
        rows.entry((&a.model, None)).or_default().push(a);
        rows.entry((&a.model, Some((&a.task_family, &a.level))))
            .or_default()
            .push(a);
    }
    rows.into_iter()
        .map(|((model, within), of)| {
            let decided: Vec<&MatchedAnswer> =
                of.iter().copied().filter(|a| a.top1.is_some()).collect();
            let pairs: Vec<(&str, &str)> = of
                .iter()
                .map(|a| (a.true_group.as_str(), a.predicted_group.as_str()))
                .collect();
            let (group_accuracy, macro_f1, groups) = if pairs.is_empty() {
                let none = || Estimate::not_estimable(0, "no answer");
                (none(), none(), Vec::new())
            } else {
                let (accuracy, macro_f1, groups) = group_scores(&pairs);
                (Estimate::Value(accuracy), Estimate::Value(macro_f1), groups)
            };
            AnswerAccuracyRow {
                model: model.to_owned(),
                task_family: within.map(|(family, _)| family.to_owned()),
                level: within.map(|(_, level)| level.to_owned()),
                n: of.len(),
                unmatched: of.len() - decided.len(),
                exact: of.iter().filter(|a| a.exact).count(),
                contradicted_findings: decided.iter().filter(|a| a.contradictions > 0).count(),
                top1: share(&decided, |a| a.top1),
                top3: share(&decided, |a| a.top3),
                pass_at: pass_at(&decided, &options.pass_at),
                group_accuracy,
                macro_f1,
                groups,
                agreement: judged.agreement(&decided),
                undecided: match within {
                    Some(_) => Vec::new(),
                    None => of
                        .iter()
                        .filter_map(|a| {
                            Some(Undecided {
                                item: a.item.clone(),
                                span: a.unmatched_span.clone()?,
                            })
                        })
                        .collect(),
                },
            }
        })
        .collect()
}

fn share(
    decided: &[&MatchedAnswer],
    correct: impl Fn(&MatchedAnswer) -> Option<bool>,
) -> Estimate<Share> {
    if decided.is_empty() {
        return Estimate::not_estimable(0, "the matcher decided no answer");
    }
    let mut per_case: BTreeMap<&str, usize> = BTreeMap::new();
    let mut hits = 0;
    for a in decided {
        *per_case.entry(&a.case).or_default() += 1;
        hits += usize::from(correct(a) == Some(true));
    }
    let value = hits as f64 / decided.len() as f64;
    let effective_cases = kish_effective_cases(per_case.values().copied());
    let (low, high) = wilson_interval(value, effective_cases);
    Estimate::Value(Share {
        value,
        low,
        high,
        n: decided.len(),
        n_cases: per_case.len(),
        effective_cases,
    })
}

/// The row's pass@k through the report's one estimator, its decided samples per task (an
/// undecided sample is left out of its task's n, never counted as wrong or right).
fn pass_at(decided: &[&MatchedAnswer], ks: &[usize]) -> BTreeMap<String, Estimate<PassAtK>> {
    let mut per_task: BTreeMap<PassAtKTask, (usize, usize)> = BTreeMap::new();
    for a in decided {
        let t = per_task.entry((&a.case, &a.task)).or_default();
        t.0 += 1;
        t.1 += usize::from(a.top1 == Some(true));
    }
    let tasks: BTreeMap<PassAtKKey, _> = BTreeMap::from([(("", "", ""), per_task)]);
    pass_at_k_rows(&tasks, ks)
        .into_iter()
        .map(|row| (row.k.to_string(), row.pass_at_k))
        .collect()
}

/// Accuracy, macro-F1 and each class's F1 over (true, predicted) pairs, as scikit-learn's
/// `accuracy_score` and `f1_score(average="macro"|None, zero_division=0)` give them (classes: the
/// sorted union of true and predicted); 0 without pairs.
pub fn group_scores(pairs: &[(&str, &str)]) -> (f64, f64, Vec<GroupF1>) {
    // (true positives, support, predicted) per class.
    let mut classes: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for &(truth, predicted) in pairs {
        classes.entry(truth).or_default().1 += 1;
        let p = classes.entry(predicted).or_default();
        p.2 += 1;
        if truth == predicted {
            p.0 += 1;
        }
    }
    let correct = pairs.iter().filter(|(t, p)| t == p).count();
    let accuracy = correct as f64 / pairs.len().max(1) as f64;
    let groups: Vec<GroupF1> = classes
        .into_iter()
        .map(|(group, (tp, support, predicted))| GroupF1 {
            group: group.to_owned(),
            support,
            predicted,
            // 2TP / (2TP + FP + FN) = 2TP / (predicted + support); every class listed has one.
            f1: 2.0 * tp as f64 / (support + predicted) as f64,
        })
        .collect();
    let macro_f1 = groups.iter().map(|c| c.f1).sum::<f64>() / groups.len().max(1) as f64;
    (accuracy, macro_f1, groups)
}

/// Each answer's correctness as the clinicians and the grader judged it.
struct Judged {
    clinicians: BTreeMap<String, bool>,
    grader: BTreeMap<String, bool>,
}

impl Judged {
    fn read(input: &CalibrationInput, options: &ReportOptions, dimension: Option<&str>) -> Self {
        // The clinicians' majority per answer, keyed like the report's items (a tie: incorrect).
        let mut votes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for j in &input.correctness {
            let vote = votes
                .entry(format!("{}/{}/{}", j.task, j.model, j.sample))
                .or_default();
            vote.0 += usize::from(j.correct);
            vote.1 += 1;
        }
        let clinicians = votes
            .into_iter()
            .map(|(item, (yes, total))| (item, 2 * yes > total))
            .collect();
        let scores: BTreeMap<&str, f64> = match (options.grader.as_deref(), dimension) {
            (Some(grader), Some(dimension)) => input
                .table
                .scores
                .iter()
                .filter(|s| s.rater == grader && s.dimension == dimension)
                .map(|s| (s.item.as_str(), s.score))
                .collect(),
            _ => BTreeMap::new(),
        };
        let grader = match crate::automatic_metrics::pass_threshold(options, &scores) {
            Some(pass) => scores
                .iter()
                .map(|(item, score)| (item.to_string(), *score >= pass))
                .collect(),
            None => BTreeMap::new(),
        };
        Judged { clinicians, grader }
    }

    fn agreement(&self, decided: &[&MatchedAnswer]) -> Vec<MatchAgreement> {
        [("clinicians", &self.clinicians), ("grader", &self.grader)]
            .into_iter()
            .map(|(against, judged)| {
                let (matcher, other): (Vec<f64>, Vec<f64>) = decided
                    .iter()
                    .filter_map(|a| {
                        let theirs = *judged.get(&a.item)?;
                        Some((f64::from(u8::from(a.top1?)), f64::from(u8::from(theirs))))
                    })
                    .unzip();
                let n = matcher.len();
                let percent_agreement = if n == 0 {
                    Estimate::not_estimable(0, format!("no decided answer the {against} judged"))
                } else {
                    let same = matcher.iter().zip(&other).filter(|(a, b)| a == b).count();
                    Estimate::Value(100.0 * same as f64 / n as f64)
                };
                let kappa =
                    cohen_kappa(&matcher, &other, &Categories::from_values([0.0, 1.0])).unweighted;
                MatchAgreement {
                    against: against.to_owned(),
                    n,
                    percent_agreement,
                    kappa,
                }
            })
            .collect()
    }
}
