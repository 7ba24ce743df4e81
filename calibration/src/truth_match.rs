//! The report's `truth_match` section (issue 39): model answers scored against the curated
//! diagnosis by the ground-truth matcher (`truthmatch`, run by `cases`), beside the clinicians'
//! and the grader's correctness.
//!
//! - Per model × task family × level: answers, how many the matcher could not decide
//!   (`unmatched`, left out of every figure below), exact matches, answers with a contradicted
//!   finding, and top-1 and top-3 accuracy, each with the 95 % Wilson interval at Kish's
//!   effective number of cases (answers of one case are not independent).
//! - pass@k for each k of the report's `pass_at`: the clinicians' estimator
//!   (`report::pass_at_k_rows`, Chen et al.'s unbiased pass@k with the same case-clustered
//!   interval) over each task's decided samples, a sample correct when the matcher ranks the
//!   curated diagnosis first.
//! - Per model, accuracy and macro-F1 over disease groups as scikit-learn computes them
//!   (`accuracy_score`, `f1_score(average="macro")`: the classes are those in the true or the
//!   predicted groups, a class's F1 0 when it has no true and no predicted answer right). The
//!   predicted group is the case's own when the matcher ranks the curated diagnosis first, else
//!   the group of the answer's primary diagnosis in the matcher's table, else `unmatched`, a
//!   class of its own (so an undecidable answer costs recall of its true group).
//! - Per model, the matcher's top-1 correctness against the clinicians' (most of an answer's
//!   judgements) and the grader's (its score on the primary dimension at or above the pass
//!   score of the automatic-metrics section): percent agreement and Cohen's κ.

use crate::estimate::Estimate;
use crate::input::{CalibrationInput, ReportOptions};
use crate::kappa::{cohen_kappa, Categories, KappaValue};
use crate::proportions::wilson_interval;
use crate::report::{kish_effective_cases, pass_at_k_rows, PassAtKKey, PassAtKRow, PassAtKTask};
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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruthMatchReport {
    pub rows: Vec<TruthMatchRow>,
    /// The matcher's pass@k, per model × task family × level and k.
    pub pass_at_k: Vec<PassAtKRow>,
    pub disease_groups: Vec<DiseaseGroupScores>,
    pub agreement: Vec<MatchAgreement>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruthMatchRow {
    pub model: String,
    pub task_family: String,
    pub level: String,
    pub answers: usize,
    pub unmatched: usize,
    pub exact: usize,
    /// Decided answers with at least one contradicted finding.
    pub contradicted_findings: usize,
    pub top1: Estimate<Accuracy>,
    pub top3: Estimate<Accuracy>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    pub value: f64,
    /// 95 % Wilson interval at `effective_cases`.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Decided answers.
    pub n: usize,
    pub n_cases: usize,
    pub effective_cases: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiseaseGroupScores {
    pub model: String,
    /// Every answer of the model, undecided ones in the `unmatched` class.
    pub n: usize,
    pub accuracy: f64,
    pub macro_f1: f64,
    pub classes: Vec<GroupF1>,
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
    pub model: String,
    /// `clinicians` or `grader`.
    pub against: String,
    /// Answers the matcher decided and the other side judged.
    pub n: usize,
    pub percent_agreement: Estimate<f64>,
    pub kappa: Estimate<KappaValue>,
}

/// The section; `dimension` is the report's primary one (the grader's correctness is read on
/// it).
pub fn truth_match_report(
    answers: &[MatchedAnswer],
    input: &CalibrationInput,
    options: &ReportOptions,
    dimension: Option<&str>,
) -> TruthMatchReport {
    TruthMatchReport {
        rows: rows(answers),
        pass_at_k: pass_at_k(answers, &options.pass_at),
        disease_groups: disease_groups(answers),
        agreement: agreement(answers, input, options, dimension),
    }
}

fn rows(answers: &[MatchedAnswer]) -> Vec<TruthMatchRow> {
    let mut by_key: BTreeMap<PassAtKKey, Vec<&MatchedAnswer>> = BTreeMap::new();
    for a in answers {
        by_key
            .entry((&a.model, &a.task_family, &a.level))
            .or_default()
            .push(a);
    }
    by_key
        .into_iter()
        .map(|((model, family, level), of)| {
            let decided: Vec<&&MatchedAnswer> = of.iter().filter(|a| a.top1.is_some()).collect();
            TruthMatchRow {
                model: model.to_owned(),
                task_family: family.to_owned(),
                level: level.to_owned(),
                answers: of.len(),
                unmatched: of.len() - decided.len(),
                exact: of.iter().filter(|a| a.exact).count(),
                contradicted_findings: decided.iter().filter(|a| a.contradictions > 0).count(),
                top1: accuracy(&decided, |a| a.top1),
                top3: accuracy(&decided, |a| a.top3),
            }
        })
        .collect()
}

fn accuracy(
    decided: &[&&MatchedAnswer],
    correct: impl Fn(&MatchedAnswer) -> Option<bool>,
) -> Estimate<Accuracy> {
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
    let (ci_low, ci_high) = wilson_interval(value, effective_cases);
    Estimate::Value(Accuracy {
        value,
        ci_low,
        ci_high,
        n: decided.len(),
        n_cases: per_case.len(),
        effective_cases,
    })
}

fn pass_at_k(answers: &[MatchedAnswer], pass_at: &[usize]) -> Vec<PassAtKRow> {
    let mut tasks: BTreeMap<PassAtKKey, BTreeMap<PassAtKTask, (usize, usize)>> = BTreeMap::new();
    for a in answers {
        // An undecided sample is left out of its task's n, never counted as wrong or right.
        let Some(correct) = a.top1 else { continue };
        let t = tasks
            .entry((&a.model, &a.task_family, &a.level))
            .or_default()
            .entry((&a.case, &a.task))
            .or_default();
        t.0 += 1;
        t.1 += usize::from(correct);
    }
    pass_at_k_rows(&tasks, pass_at)
}

fn disease_groups(answers: &[MatchedAnswer]) -> Vec<DiseaseGroupScores> {
    let mut by_model: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for a in answers {
        by_model
            .entry(&a.model)
            .or_default()
            .push((&a.true_group, &a.predicted_group));
    }
    by_model
        .into_iter()
        .map(|(model, pairs)| {
            let (accuracy, macro_f1, classes) = group_scores(&pairs);
            DiseaseGroupScores {
                model: model.to_owned(),
                n: pairs.len(),
                accuracy,
                macro_f1,
                classes,
            }
        })
        .collect()
}

/// Accuracy, macro-F1 and each class's F1 over (true, predicted) pairs, as scikit-learn's
/// `accuracy_score` and `f1_score(average="macro", zero_division=0)` give them.
pub fn group_scores(pairs: &[(&str, &str)]) -> (f64, f64, Vec<GroupF1>) {
    let mut classes: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new(); // (tp, support, predicted)
    for &(truth, predicted) in pairs {
        classes.entry(truth).or_default().1 += 1;
        let p = classes.entry(predicted).or_default();
        p.2 += 1;
        if truth == predicted {
            p.0 += 1;
        }
    }
    let correct = pairs.iter().filter(|(t, p)| t == p).count();
    let accuracy = if pairs.is_empty() {
        0.0
    } else {
        correct as f64 / pairs.len() as f64
    };
    let f1s: Vec<GroupF1> = classes
        .into_iter()
        .map(|(group, (tp, support, predicted))| GroupF1 {
            group: group.to_owned(),
            support,
            predicted,
            // 2TP / (2TP + FP + FN) = 2TP / (predicted + support); 0 where both are 0.
            f1: if support + predicted == 0 {
                0.0
            } else {
                2.0 * tp as f64 / (support + predicted) as f64
            },
        })
        .collect();
    let macro_f1 = if f1s.is_empty() {
        0.0
    } else {
        f1s.iter().map(|c| c.f1).sum::<f64>() / f1s.len() as f64
    };
    (accuracy, macro_f1, f1s)
}

fn agreement(
    answers: &[MatchedAnswer],
    input: &CalibrationInput,
    options: &ReportOptions,
    dimension: Option<&str>,
) -> Vec<MatchAgreement> {
    // The clinicians' majority per answer, keyed like the report's items (a tie: incorrect).
    let mut votes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for j in &input.correctness {
        let vote = votes
            .entry(format!("{}/{}/{}", j.task, j.model, j.sample))
            .or_default();
        vote.0 += usize::from(j.correct);
        vote.1 += 1;
    }
    let clinicians: BTreeMap<&str, bool> = votes
        .iter()
        .map(|(item, (yes, total))| (item.as_str(), 2 * yes > *total))
        .collect();
    let grader_scores: BTreeMap<&str, f64> = match (options.grader.as_deref(), dimension) {
        (Some(grader), Some(dimension)) => input
            .table
            .scores
            .iter()
            .filter(|s| s.rater == grader && s.dimension == dimension)
            .map(|s| (s.item.as_str(), s.score))
            .collect(),
        _ => BTreeMap::new(),
    };
    let pass_score = crate::automatic_metrics::pass_threshold(options, &grader_scores);
    let grader: BTreeMap<&str, bool> = match pass_score {
        Some(pass) => grader_scores
            .iter()
            .map(|(item, score)| (*item, *score >= pass))
            .collect(),
        None => BTreeMap::new(),
    };

    let mut by_model: BTreeMap<&str, Vec<&MatchedAnswer>> = BTreeMap::new();
    for a in answers {
        by_model.entry(&a.model).or_default().push(a);
    }
    let mut out = Vec::new();
    for (model, of) in by_model {
        for (against, judged) in [("clinicians", &clinicians), ("grader", &grader)] {
            let (matcher, other): (Vec<f64>, Vec<f64>) = of
                .iter()
                .filter_map(|a| {
                    let theirs = judged.get(a.item.as_str())?;
                    Some((f64::from(u8::from(a.top1?)), f64::from(u8::from(*theirs))))
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
            out.push(MatchAgreement {
                model: model.to_owned(),
                against: against.to_owned(),
                n,
                percent_agreement,
                kappa,
            });
        }
    }
    out
}
