//! Prediction-powered estimates of a mean (PPI++: Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
//! Prediction-Powered Inference", 2023): the grader scores every answer, clinicians a random
//! subset, and the estimate is unbiased like the clinicians' mean while its interval is as tight
//! as the grader's agreement with them allows.
//!
//! With Y the clinicians' value of an answer (their mean score, or 1/0 for "judged correct"), Ŷ
//! the grader's, n answers read by clinicians (labelled, L) and N scored by the grader only
//! (unlabelled, U):
//!
//! θ̂(λ) = λ · mean_U(Ŷ) + mean_L(Y − λŶ).
//!
//! Any λ gives an unbiased estimate; λ = 0 is the clinicians' mean, λ = 1 plain PPI. The power
//! tuning picks λ as `ppi_py` (the authors' package, `ppi_mean_ci` with `lam=None`) does:
//! λ = Ĉov_L(Y, Ŷ) / ((1 + n/N) · V̂ar_{L∪U}(Ŷ)), the covariance with divisor n and the variance
//! with divisor n + N − 1, clipped to [0, 1].
//!
//! **Intervals by case.** Answers to the tasks of one case (and the samples of one task) are not
//! independent, and `ppi_py` assumes they are. The variance here is cluster-robust: each case c
//! sums the influence of its answers, labelled and unlabelled together,
//!
//! ψ_c = Σ_{i ∈ L∩c} [(Y_i − Ȳ_L) − λ(Ŷ_i − Ŷ̄_L)] / n + λ Σ_{j ∈ U∩c} (Ŷ_j − Ŷ̄_U) / N,
//!
//! and V̂ar(θ̂) = Σ_c ψ_c². λ is tuned by the same formula with the covariance and variance summed
//! within cases first, Ĉov = Σ_c (Σ_{L∩c}(Y − Ȳ_L))(Σ_{L∩c}(Ŷ − Ŷ̄_L)) / n and
//! V̂ar = Σ_c (Σ_{c}(Ŷ − Ŷ̄_{L∪U}))² / (n + N − 1): with one answer per case both are exactly
//! `ppi_py`'s, and with several they are the per-answer (long-run) covariances that the variance
//! of a mean of clustered answers is made of. The interval is θ̂ ± z_{0.975} √V̂ar. The
//! clinicians-only and grader-only intervals beside it are the same by-case variance of a plain
//! mean (with one answer per case, `ppi_py.classical_mean_ci`).
//!
//! PPI is valid only if the answers clinicians read are a random subset of the answers (or drawn
//! with known probabilities); answers chosen for being hard, or read in order, bias it.

use crate::dist::z_975;
use crate::estimate::Estimate;
use crate::input::{CalibrationInput, ReportOptions};
use crate::proportions::pass_at_k;
use serde::Serialize;
use std::collections::BTreeMap;

/// How [`ppi_mean`] estimates, for the report's `method`.
pub const METHOD: &str = "PPI++ mean (Angelopoulos, Duchi & Zrnic 2023; power-tuned λ as ppi_py, clipped to [0, 1]); 95 % normal interval with the variance summed by case (cluster-robust); valid when the answers clinicians read are a random subset";

/// One answer: the case it belongs to (dense index), the grader's value, and the clinicians'
/// value when they read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    pub case: usize,
    pub grader: f64,
    pub clinicians: Option<f64>,
}

/// A point estimate with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    fn normal(estimate: f64, variance: f64) -> Self {
        let half = z_975() * variance.sqrt();
        Interval {
            estimate,
            low: estimate - half,
            high: estimate + half,
        }
    }
}

/// The PPI++ estimate of a mean with the two figures it improves on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PpiMean {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Answers a clinician read (and the grader scored).
    pub n_labelled: usize,
    /// Answers only the grader scored.
    pub n_unlabelled: usize,
    pub n_cases: usize,
    /// The power-tuning weight on the grader (0: clinicians only; 1: plain PPI).
    pub lambda: f64,
    /// The clinicians' mean over the labelled answers.
    pub clinicians_only: Interval,
    /// The grader's mean over every answer: tight, but biased by however the grader differs.
    pub grader_only: Interval,
    /// Clinician reads a clinicians-only estimate would need for an interval as narrow as this
    /// one, at this data's variances: n_labelled · Var(clinicians only) / Var(PPI).
    pub effective_n: f64,
}

/// Running sums of one case's answers.
#[derive(Clone, Copy, Default)]
struct CaseSums {
    labelled_y: f64,
    labelled_grader: f64,
    unlabelled_grader: f64,
    all_grader: f64,
    seen: bool,
}

/// The PPI++ estimate of the mean of the clinicians' value over all answers, its interval by case,
/// and the clinicians-only and grader-only intervals. Not estimable with fewer than two labelled
/// answers or no unlabelled one (then there is nothing for the grader to add).
pub fn ppi_mean(answers: &[Answer]) -> Estimate<PpiMean> {
    let labelled: Vec<(usize, f64, f64)> = answers
        .iter()
        .filter_map(|a| Some((a.case, a.clinicians?, a.grader)))
        .collect();
    let n = labelled.len();
    let big_n = answers.len() - n;
    if n < 2 {
        return Estimate::not_estimable(
            n,
            format!("{n} answer(s) read by clinicians; PPI needs at least 2"),
        );
    }
    if big_n == 0 {
        return Estimate::not_estimable(
            n,
            "every answer was read by clinicians: the grader has nothing to add",
        );
    }
    let (nf, big_nf) = (n as f64, big_n as f64);
    let mean = |values: &mut dyn Iterator<Item = f64>, count: f64| values.sum::<f64>() / count;
    let y_bar = mean(&mut labelled.iter().map(|l| l.1), nf);
    let grader_labelled_bar = mean(&mut labelled.iter().map(|l| l.2), nf);
    let grader_unlabelled_bar = mean(
        &mut answers
            .iter()
            .filter(|a| a.clinicians.is_none())
            .map(|a| a.grader),
        big_nf,
    );
    let grader_all_bar = mean(&mut answers.iter().map(|a| a.grader), nf + big_nf);

    let cases = answers.iter().map(|a| a.case + 1).max().unwrap_or(0);
    let mut sums = vec![CaseSums::default(); cases];
    for a in answers {
        let s = &mut sums[a.case];
        s.seen = true;
        s.all_grader += a.grader - grader_all_bar;
        match a.clinicians {
            Some(y) => {
                s.labelled_y += y - y_bar;
                s.labelled_grader += a.grader - grader_labelled_bar;
            }
            None => s.unlabelled_grader += a.grader - grader_unlabelled_bar,
        }
    }
    let sums: Vec<CaseSums> = sums.into_iter().filter(|s| s.seen).collect();

    let covariance = sums
        .iter()
        .map(|s| s.labelled_y * s.labelled_grader)
        .sum::<f64>()
        / nf;
    let grader_variance =
        sums.iter().map(|s| s.all_grader.powi(2)).sum::<f64>() / (nf + big_nf - 1.0);
    // A grader that gives every answer the same value carries no information: clinicians only.
    let lambda = if grader_variance > 0.0 {
        (covariance / ((1.0 + nf / big_nf) * grader_variance)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let estimate = lambda * grader_unlabelled_bar + y_bar - lambda * grader_labelled_bar;
    let variance: f64 = sums
        .iter()
        .map(|s| {
            ((s.labelled_y - lambda * s.labelled_grader) / nf
                + lambda * s.unlabelled_grader / big_nf)
                .powi(2)
        })
        .sum();
    let clinicians_variance: f64 = sums.iter().map(|s| (s.labelled_y / nf).powi(2)).sum();
    let grader_only_variance: f64 = sums
        .iter()
        .map(|s| (s.all_grader / (nf + big_nf)).powi(2))
        .sum();
    let ppi = Interval::normal(estimate, variance);
    Estimate::Value(PpiMean {
        estimate,
        low: ppi.low,
        high: ppi.high,
        n_labelled: n,
        n_unlabelled: big_n,
        n_cases: sums.len(),
        lambda,
        clinicians_only: Interval::normal(y_bar, clinicians_variance),
        grader_only: Interval::normal(grader_all_bar, grader_only_variance),
        effective_n: if variance > 0.0 {
            nf * clinicians_variance / variance
        } else {
            nf
        },
    })
}

/// The report's `ppi` section: one row per model × target, and where asked
/// ([`ReportOptions::ppi_by_task_family_and_level`]) per model × task family × level × target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PpiRow {
    /// The item's `model` grouping value; `all` when the input has no `model` column.
    pub model: String,
    /// The task family and level of a row within the model; absent on the model's own rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_family: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// `mean_score` (the clinicians' mean on the primary dimension), `correct` (the share of
    /// answers most of their clinicians judged correct) or `pass@k` with k a number of the
    /// report's `pass_at` (e.g. `pass@5`: the mean over tasks of the unbiased pass@k).
    pub target: String,
    #[serde(flatten)]
    pub result: Estimate<PpiMean>,
    pub method: String,
}

/// One task's case, and per sample the grader's verdict and the clinicians' judgement if any.
type TaskSamples = (usize, Vec<(bool, Option<bool>)>);

/// What a row covers: a model, and within it a task family and level or all of them.
type RowKey<'a> = (&'a str, Option<(&'a str, &'a str)>);

/// A row's answers: on the mean score, on correctness, and whether any answer was judged.
#[derive(Default)]
struct RowAnswers<'a> {
    scores: Vec<Answer>,
    correct: Vec<Answer>,
    judged: bool,
    /// The task's item prefix `case/task/model` → its samples, for pass@k.
    tasks: BTreeMap<&'a str, TaskSamples>,
}

/// The model every answer without a `model` column belongs to.
const ALL_MODELS: &str = "all";

/// PPI++ per model for the report: on `dimension` (the primary one), the clinicians' mean score
/// (Y: their mean on the answer, Ŷ: the grader's score), and where clinicians judged correctness,
/// the share correct (Y: most of the answer's judgements say correct, as for pass@k; Ŷ: the
/// grader's score at or above the pass score of the automatic-metrics section) and pass@k for each
/// k of `pass_at` (see [`pass_at_k_answers`]); and, when asked, the same per task family and
/// level within each model. An answer is one the grader scored on `dimension`; answers it did not
/// score are left out. Empty without a grader.
pub fn ppi_table(
    input: &CalibrationInput,
    options: &ReportOptions,
    dimension: Option<&str>,
) -> Vec<PpiRow> {
    let (Some(grader), Some(dimension)) = (options.grader.as_deref(), dimension) else {
        return Vec::new();
    };
    let table = &input.table;
    let is_grader =
        |rater: &str| rater == grader || options.other_grader_versions.iter().any(|v| v == rater);
    let mut grader_scores: BTreeMap<&str, f64> = BTreeMap::new();
    let mut clinician_sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for s in table.scores.iter().filter(|s| s.dimension == dimension) {
        if s.rater == grader {
            grader_scores.insert(&s.item, s.score);
        } else if !is_grader(&s.rater) {
            let sum = clinician_sums.entry(&s.item).or_default();
            sum.0 += s.score;
            sum.1 += 1;
        }
    }
    // Items of a study are `case/task/model/sample`, the key the correctness judgements carry.
    let mut votes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for j in &input.correctness {
        let vote = votes
            .entry(format!("{}/{}/{}", j.task, j.model, j.sample))
            .or_default();
        vote.0 += usize::from(j.correct);
        vote.1 += 1;
    }
    let pass_score = crate::automatic_metrics::pass_threshold(options, &grader_scores);

    let mut case_index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rows_of: BTreeMap<RowKey, RowAnswers> = BTreeMap::new();
    for (&item, &grader_score) in &grader_scores {
        let info = table.items.get(item);
        let case = info.and_then(|i| i.case.as_deref()).unwrap_or(item);
        let next = case_index.len();
        let case = *case_index.entry(case).or_insert(next);
        let group = |column: &str| info.and_then(|i| i.groups.get(column)).map(String::as_str);
        let model = group("model").unwrap_or(ALL_MODELS);
        let within = match (group("task_family"), group("level")) {
            (Some(family), Some(level)) if options.ppi_by_task_family_and_level => {
                Some((family, level))
            }
            _ => None,
        };
        let scored = Answer {
            case,
            grader: grader_score,
            clinicians: clinician_sums.get(item).map(|(sum, n)| sum / *n as f64),
        };
        let judged = votes.get(item).map(|&(yes, total)| 2 * yes > total);
        for key in [Some((model, None)), within.map(|w| (model, Some(w)))]
            .into_iter()
            .flatten()
        {
            let row = rows_of.entry(key).or_default();
            row.scores.push(scored);
            let Some(pass_score) = pass_score else {
                continue;
            };
            let grader_passes = grader_score >= pass_score;
            row.judged |= judged.is_some();
            row.correct.push(Answer {
                case,
                grader: f64::from(u8::from(grader_passes)),
                clinicians: judged.map(|correct| f64::from(u8::from(correct))),
            });
            if let Some((task, _sample)) = item.rsplit_once('/') {
                row.tasks
                    .entry(task)
                    .or_insert_with(|| (case, Vec::new()))
                    .1
                    .push((grader_passes, judged));
            }
        }
    }
    let mut rows = Vec::new();
    for ((model, within), answers) in &rows_of {
        let row = |target: String, of: &[Answer]| PpiRow {
            model: model.to_string(),
            task_family: within.map(|(family, _)| family.to_owned()),
            level: within.map(|(_, level)| level.to_owned()),
            target,
            result: ppi_mean(of),
            method: METHOD.to_owned(),
        };
        rows.push(row("mean_score".into(), &answers.scores));
        if answers.judged {
            rows.push(row("correct".into(), &answers.correct));
            for &k in &options.pass_at {
                let tasks = pass_at_k_answers(answers.tasks.values(), k);
                if tasks.iter().any(|a| a.clinicians.is_some()) {
                    rows.push(row(format!("pass@{k}"), &tasks));
                }
            }
        }
    }
    rows
}

/// pass@k as a PPI target, one answer per task with at least k samples the grader scored: Ŷ is
/// the unbiased pass@k (Chen et al. 2021) of the grader's verdicts on the task's samples, Y that
/// of the clinicians' (a sample is correct when most of its judgements say so), known when they
/// judged every sample of the task. A task, not a sample, is what clinicians must have read at
/// random for the estimate to hold.
fn pass_at_k_answers<'a>(tasks: impl Iterator<Item = &'a TaskSamples>, k: usize) -> Vec<Answer> {
    tasks
        .filter_map(|(case, samples)| {
            let n = samples.len();
            let grader_passes = samples.iter().filter(|(pass, _)| *pass).count();
            let judged: Option<Vec<bool>> = samples.iter().map(|(_, judged)| *judged).collect();
            let clinicians = judged.and_then(|j| pass_at_k(n, j.iter().filter(|c| **c).count(), k));
            Some(Answer {
                case: *case,
                grader: pass_at_k(n, grader_passes, k)?,
                clinicians,
            })
        })
        .collect()
}
