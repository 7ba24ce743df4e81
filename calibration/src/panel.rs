//! Which clinicians the complete-table statistics (ICC, Fleiss' κ) use.
//!
//! The ANOVA of the ICC and Fleiss' κ need every rater's score on every item. In a real study some
//! readers are always part-way: one reader with a single rating would leave one complete item and
//! make every ICC "not estimable". So these statistics use the **largest complete panel**: the set
//! of at least two clinicians whose commonly scored items hold the most scores (items × raters;
//! a tie goes to the panel with more raters). A reader
//! left out this way is named in the report with how many items they scored. Krippendorff's α and
//! every pairwise or mean-based figure keep all the data; they handle missing scores themselves.

use crate::ratings::RatingMatrix;
use serde::Serialize;

/// Up to this many raters every subset is tried; beyond, raters are dropped greedily (2^16
/// subsets of distinct presence patterns stays well under a millisecond per section).
const EXHAUSTIVE_RATERS: usize = 16;

/// The panel a section's ICC and Fleiss' κ were computed on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Panel {
    /// Clinicians in the panel, in name order.
    pub raters: Vec<String>,
    /// Clinicians left out of it, each with the items they scored in this section.
    pub left_out: Vec<LeftOutRater>,
    /// Items every panel member scored.
    pub n_items: usize,
    /// The choice in plain words.
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOutRater {
    pub rater: String,
    pub items_scored: usize,
}

/// The columns of the largest complete panel of `ratings` (all columns when fewer than two raters
/// or no panel has two complete items).
pub fn largest_complete_panel(ratings: &RatingMatrix) -> Vec<usize> {
    let k = ratings.n_raters();
    let all: Vec<usize> = (0..k).collect();
    if k <= 2 {
        return all;
    }
    // Items grouped by which raters scored them: each subset's complete items are the counts of
    // the patterns that contain it.
    let mut patterns: std::collections::BTreeMap<Vec<bool>, usize> = Default::default();
    for i in 0..ratings.n_items() {
        let present: Vec<bool> = ratings.row(i).iter().map(Option::is_some).collect();
        *patterns.entry(present).or_default() += 1;
    }
    let complete = |columns: &[usize]| -> usize {
        patterns
            .iter()
            .filter(|(p, _)| columns.iter().all(|&c| p[c]))
            .map(|(_, n)| n)
            .sum()
    };
    // Better: more scores, then more raters.
    let score = |columns: &[usize]| {
        let n = complete(columns);
        (if n >= 2 { n * columns.len() } else { 0 }, columns.len())
    };
    let mut best = all.clone();
    let mut best_score = score(&all);
    if k <= EXHAUSTIVE_RATERS {
        for mask in 1u32..(1 << k) {
            if mask.count_ones() < 2 {
                continue;
            }
            let columns: Vec<usize> = (0..k).filter(|c| mask & (1 << c) != 0).collect();
            let s = score(&columns);
            if s > best_score {
                best_score = s;
                best = columns;
            }
        }
    } else {
        while best.len() > 2 {
            let candidate = (0..best.len())
                .map(|drop| {
                    let mut columns = best.clone();
                    columns.remove(drop);
                    let s = score(&columns);
                    (s, columns)
                })
                .max_by(|a, b| a.0.cmp(&b.0))
                .filter(|(s, _)| *s > best_score);
            match candidate {
                Some((s, columns)) => {
                    best_score = s;
                    best = columns;
                }
                None => break,
            }
        }
    }
    best
}

/// Describes the panel `columns` of `ratings`, whose raters are `names`.
pub fn describe_panel(ratings: &RatingMatrix, names: &[String], columns: &[usize]) -> Panel {
    let scored = |c: usize| {
        (0..ratings.n_items())
            .filter(|&i| ratings.row(i)[c].is_some())
            .count()
    };
    let n_items = (0..ratings.n_items())
        .filter(|&i| columns.iter().all(|&c| ratings.row(i)[c].is_some()))
        .count();
    let left_out: Vec<LeftOutRater> = (0..ratings.n_raters())
        .filter(|c| !columns.contains(c))
        .map(|c| LeftOutRater {
            rater: names[c].clone(),
            items_scored: scored(c),
        })
        .collect();
    let note = if left_out.is_empty() {
        format!(
            "all {} clinicians, on the {} items every one of them scored",
            columns.len(),
            n_items
        )
    } else {
        let named: Vec<String> = left_out
            .iter()
            .map(|l| format!("{} ({} items scored)", l.rater, l.items_scored))
            .collect();
        format!(
            "the largest complete panel: {} of {} clinicians on the {} items all of them scored; left out as partial readers: {}",
            columns.len(),
            ratings.n_raters(),
            n_items,
            named.join(", ")
        )
    };
    Panel {
        raters: columns.iter().map(|&c| names[c].clone()).collect(),
        left_out,
        n_items,
        note,
    }
}
