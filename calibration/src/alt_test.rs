//! The alternative annotator test (Calderon, Reichart & Dror, ACL 2025, "The Alternative
//! Annotator Test for LLM-as-a-Judge").
//!
//! The procedure as the authors run it (their `alt_test` in github.com/nitaytech/AltTest), for
//! numeric scores:
//! 1. For each human annotator j (held out) and each item i scored by j, the grader, and at least
//!    one other human: the alignment of a score s with the rest is −RMSE(s, scores of the other
//!    humans on i). S_f = alignment of the grader, S_h = alignment of annotator j.
//! 2. An annotator with fewer comparable items than the minimum (the authors' 30, which the
//!    t test's normality needs) is left out: not tested, not in the FDR family, not in ω's or ρ̄'s
//!    denominator, and listed as left out. An annotator with no comparable item is never counted
//!    as a loss.
//! 3. W_f = 1[S_f ≥ S_h], W_h = 1[S_h ≥ S_f] (ties count for both); ρ_f, ρ_h are their means
//!    (the advantage probabilities).
//! 4. d_i = W_h − W_f; one-sided one-sample t test of H0: mean(d) ≥ ε against H1: mean(d) < ε,
//!    i.e. "the grader's advantage is at least the annotator's minus ε". With no variance in d the
//!    p is 0 when mean(d) < ε and 1 otherwise (the t statistic is then ±∞).
//! 5. The p-values are corrected with Benjamini–Yekutieli at q; the winning rate ω is the share
//!    of tested annotators whose null is rejected; the grader passes when ω ≥ 0.5. Where the test
//!    is repeated (every dimension and subgroup of a report), [`correct_jointly`] makes all of its
//!    p-values one family, so that a subgroup is not called a pass by looking many times.
//!
//! ε is a cost–benefit allowance: the paper suggests 0.2 for experts, 0.15 for skilled
//! annotators, 0.1 for crowd workers. The paper asks for ≥ 3 annotators; fewer is flagged.

use crate::dist;
use crate::estimate::Estimate;
use crate::ratings::RatingMatrix;
use serde::Serialize;

/// The authors' minimum comparable items per annotator (the t test's normality); fewer and the
/// annotator is left out.
pub const ALT_TEST_MIN_ITEMS: usize = 30;
/// The paper's recommended minimum number of human annotators.
pub const ALT_TEST_MIN_ANNOTATORS: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AltTestAnnotator {
    pub rater: String,
    pub n: usize,
    /// ρ_f: share of items where the grader aligns with the others at least as well.
    pub grader_advantage: f64,
    /// ρ_h: share of items where the held-out annotator aligns at least as well.
    pub annotator_advantage: f64,
    pub p: Estimate<f64>,
    /// Null rejected after the Benjamini–Yekutieli correction: the grader "wins" this comparison.
    pub grader_wins: bool,
    /// Fewer than the authors' 30 items: only possible when a lower minimum was asked for.
    pub below_recommended_n: bool,
}

/// An annotator left out of the test for too few comparable items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AltTestLeftOut {
    pub rater: String,
    /// Items scored by this annotator, the grader and at least one other annotator.
    pub n: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AltTest {
    pub epsilon: f64,
    pub q: f64,
    /// The annotators tested (at least `min_items` comparable items each).
    pub annotators: Vec<AltTestAnnotator>,
    /// Comparable items an annotator needs to be tested.
    pub min_items: usize,
    /// Annotators left out for fewer than `min_items` comparable items.
    pub left_out: Vec<AltTestLeftOut>,
    /// p-values in the Benjamini–Yekutieli family this test was corrected in (its own
    /// annotators, or every test of the report: see [`correct_jointly`]).
    pub fdr_family: usize,
    /// ω: share of tested annotators the grader wins against.
    pub winning_rate: f64,
    /// Mean of ρ_f over tested annotators.
    pub average_advantage_probability: f64,
    pub passed: bool,
    /// Fewer than 3 annotators tested.
    pub fewer_annotators_than_recommended: bool,
}

fn alignment(score: f64, others: &[f64]) -> f64 {
    let mse = others.iter().map(|o| (score - o).powi(2)).sum::<f64>() / others.len() as f64;
    -mse.sqrt()
}

/// Runs the test. `humans` holds the human raters' scores (columns named by `rater_names`);
/// `grader` the grader's score per item (same rows); annotators with fewer than `min_items`
/// comparable items are left out.
pub fn alt_test(
    humans: &RatingMatrix,
    rater_names: &[String],
    grader: &[Option<f64>],
    epsilon: f64,
    q: f64,
    min_items: usize,
) -> Estimate<AltTest> {
    let m = humans.n_raters();
    if m < 2 {
        return Estimate::not_estimable(m, format!("needs at least 2 human raters, has {m}"));
    }
    if grader.len() != humans.n_items() || rater_names.len() != m {
        return Estimate::not_estimable(m, "grader scores and human scores are misaligned");
    }
    let mut annotators = Vec::with_capacity(m);
    let mut left_out = Vec::new();
    for j in 0..m {
        let mut differences = Vec::new();
        let (mut wins_f, mut wins_h) = (0usize, 0usize);
        for (i, grader_score) in grader.iter().enumerate() {
            let row = humans.row(i);
            let (Some(g), Some(h)) = (grader_score, row[j]) else {
                continue;
            };
            let others: Vec<f64> = row
                .iter()
                .enumerate()
                .filter(|&(other, _)| other != j)
                .filter_map(|(_, v)| *v)
                .collect();
            if others.is_empty() {
                continue;
            }
            let (sf, sh) = (alignment(*g, &others), alignment(h, &others));
            let wf = u8::from(sf >= sh);
            let wh = u8::from(sh >= sf);
            wins_f += usize::from(wf);
            wins_h += usize::from(wh);
            differences.push(f64::from(wh) - f64::from(wf));
        }
        let n = differences.len();
        if n == 0 || n < min_items {
            left_out.push(AltTestLeftOut {
                rater: rater_names[j].clone(),
                n,
            });
            continue;
        }
        annotators.push(AltTestAnnotator {
            rater: rater_names[j].clone(),
            n,
            grader_advantage: wins_f as f64 / n as f64,
            annotator_advantage: wins_h as f64 / n as f64,
            p: one_sided_t_below(&differences, epsilon),
            grader_wins: false,
            below_recommended_n: n < ALT_TEST_MIN_ITEMS,
        });
    }
    if annotators.is_empty() {
        let counts: Vec<String> = left_out
            .iter()
            .map(|l| format!("{} {}", l.rater, l.n))
            .collect();
        return Estimate::not_estimable(
            0,
            format!(
                "no clinician has the {min_items} comparable items the authors require (items scored by the clinician, the grader and another clinician: {})",
                counts.join(", ")
            ),
        );
    }
    let tested = annotators.len();
    let mut test = AltTest {
        epsilon,
        q,
        average_advantage_probability: annotators.iter().map(|a| a.grader_advantage).sum::<f64>()
            / tested as f64,
        annotators,
        min_items,
        left_out,
        fdr_family: 0,
        winning_rate: 0.0,
        passed: false,
        fewer_annotators_than_recommended: tested < ALT_TEST_MIN_ANNOTATORS,
    };
    correct_jointly(&mut [&mut test], q);
    Estimate::Value(test)
}

/// Benjamini–Yekutieli at `q` over the p-values of all `tests` as one family; sets each
/// annotator's `grader_wins`, each test's `winning_rate`, `passed` and `fdr_family`.
pub fn correct_jointly(tests: &mut [&mut AltTest], q: f64) {
    let p_values: Vec<Option<f64>> = tests
        .iter()
        .flat_map(|t| t.annotators.iter().map(|a| a.p.value().copied()))
        .collect();
    let mut rejected = benjamini_yekutieli(&p_values, q).into_iter();
    for test in tests.iter_mut() {
        for annotator in &mut test.annotators {
            annotator.grader_wins = rejected.next().unwrap_or(false);
        }
        let wins = test.annotators.iter().filter(|a| a.grader_wins).count();
        test.winning_rate = wins as f64 / test.annotators.len().max(1) as f64;
        test.passed = test.winning_rate >= 0.5;
        test.fdr_family = p_values.len();
        test.q = q;
    }
}

/// p of the one-sided one-sample t test of H1: mean(d) < epsilon.
fn one_sided_t_below(d: &[f64], epsilon: f64) -> Estimate<f64> {
    let n = d.len();
    if n < 2 {
        return Estimate::not_estimable(n, format!("needs at least 2 comparable items, has {n}"));
    }
    let nf = n as f64;
    let mean = d.iter().sum::<f64>() / nf;
    let variance = d.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    if variance <= 0.0 {
        return Estimate::Value(if mean < epsilon { 0.0 } else { 1.0 });
    }
    let t = (mean - epsilon) / (variance / nf).sqrt();
    match dist::t_cdf(t, nf - 1.0) {
        Some(p) => Estimate::Value(p),
        None => Estimate::not_estimable(n, "t distribution undefined"),
    }
}

/// Benjamini–Yekutieli step-up at FDR `q`; a missing p is never rejected but counts in m.
pub fn benjamini_yekutieli(p_values: &[Option<f64>], q: f64) -> Vec<bool> {
    let m = p_values.len();
    let harmonic: f64 = (1..=m).map(|i| 1.0 / i as f64).sum();
    let mut order: Vec<usize> = (0..m).filter(|&i| p_values[i].is_some()).collect();
    order.sort_by(|&a, &b| {
        p_values[a]
            .unwrap_or(1.0)
            .total_cmp(&p_values[b].unwrap_or(1.0))
    });
    let mut cutoff = 0;
    for (rank, &i) in order.iter().enumerate() {
        let threshold = (rank + 1) as f64 / (m as f64 * harmonic) * q;
        if p_values[i].unwrap_or(1.0) <= threshold {
            cutoff = rank + 1;
        }
    }
    let mut rejected = vec![false; m];
    for &i in &order[..cutoff] {
        rejected[i] = true;
    }
    rejected
}
