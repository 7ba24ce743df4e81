//! Drift between two versions of a grader: how far the scores moved, which verdicts flipped, and
//! whether the ranking of the models they grade survived (Kendall's τ-b of the models' means).
//!
//! Only items both versions scored are compared, so a version that has graded half the study is
//! not mistaken for a harsher one.

use crate::correlation::{kendall_tau_b, KendallTauB};
use crate::estimate::Estimate;
use serde::Serialize;
use std::collections::BTreeMap;

/// One score of one version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionScore {
    /// `case/task/model/sample`.
    pub item: String,
    /// The model whose response was scored.
    pub model: String,
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelMeans {
    pub model: String,
    pub n_items: usize,
    pub mean_before: f64,
    pub mean_after: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct VersionDrift {
    /// Items both versions scored.
    pub n_common: usize,
    /// Mean of after − before over the common items.
    pub mean_shift: Option<f64>,
    /// A verdict passes when the score is at least this.
    pub pass_at_or_above: f64,
    /// Items that failed before and pass after, and the reverse.
    pub flips_to_pass: Vec<String>,
    pub flips_to_fail: Vec<String>,
    pub models: Vec<ModelMeans>,
    /// τ-b between the models' mean scores under the two versions (needs three models).
    pub ranking_tau: Estimate<KendallTauB>,
}

/// Drift from `before` to `after`; each lists an item at most once (a repeated item keeps its
/// first score).
pub fn version_drift(
    before: &[VersionScore],
    after: &[VersionScore],
    pass_at_or_above: f64,
) -> VersionDrift {
    let mut earlier: BTreeMap<&str, &VersionScore> = BTreeMap::new();
    for score in before {
        earlier.entry(&score.item).or_insert(score);
    }
    let mut later: BTreeMap<&str, &VersionScore> = BTreeMap::new();
    for score in after {
        later.entry(&score.item).or_insert(score);
    }
    let mut shifts = Vec::new();
    let (mut flips_to_pass, mut flips_to_fail) = (Vec::new(), Vec::new());
    let mut per_model: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    for (item, b) in &earlier {
        let Some(a) = later.get(item) else { continue };
        shifts.push(a.score - b.score);
        match (b.score >= pass_at_or_above, a.score >= pass_at_or_above) {
            (false, true) => flips_to_pass.push(item.to_string()),
            (true, false) => flips_to_fail.push(item.to_string()),
            _ => {}
        }
        let model = per_model.entry(&b.model).or_default();
        model.0 += 1;
        model.1 += b.score;
        model.2 += a.score;
    }
    let models: Vec<ModelMeans> = per_model
        .into_iter()
        .map(|(model, (n, sum_before, sum_after))| ModelMeans {
            model: model.to_owned(),
            n_items: n,
            mean_before: sum_before / n as f64,
            mean_after: sum_after / n as f64,
        })
        .collect();
    let means_before: Vec<f64> = models.iter().map(|m| m.mean_before).collect();
    let means_after: Vec<f64> = models.iter().map(|m| m.mean_after).collect();
    VersionDrift {
        n_common: shifts.len(),
        mean_shift: (!shifts.is_empty()).then(|| shifts.iter().sum::<f64>() / shifts.len() as f64),
        pass_at_or_above,
        flips_to_pass,
        flips_to_fail,
        ranking_tau: if models.len() < 3 {
            Estimate::not_estimable(
                models.len(),
                format!(
                    "a ranking needs at least 3 models both versions scored, there are {}",
                    models.len()
                ),
            )
        } else {
            kendall_tau_b(&means_before, &means_after)
        },
        models,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(rows: &[(&str, &str, f64)]) -> Vec<VersionScore> {
        rows.iter()
            .map(|&(item, model, score)| VersionScore {
                item: item.into(),
                model: model.into(),
                score,
            })
            .collect()
    }

    #[test]
    fn shift_and_flips_over_the_common_items_only() {
        let before = scores(&[
            ("a/m1", "m1", 2.0),
            ("b/m1", "m1", 4.0),
            ("c/m2", "m2", 3.0),
            ("only-before", "m2", 1.0),
        ]);
        let after = scores(&[
            ("a/m1", "m1", 3.0),
            ("b/m1", "m1", 2.0),
            ("c/m2", "m2", 3.0),
            ("only-after", "m2", 5.0),
        ]);
        let drift = version_drift(&before, &after, 3.0);
        assert_eq!(drift.n_common, 3);
        assert_eq!(drift.mean_shift, Some(-1.0 / 3.0));
        assert_eq!(drift.flips_to_pass, ["a/m1"]);
        assert_eq!(drift.flips_to_fail, ["b/m1"]);
        assert_eq!(drift.models.len(), 2);
        assert_eq!(
            (drift.models[0].mean_before, drift.models[0].mean_after),
            (3.0, 2.5)
        );
        assert!(drift
            .ranking_tau
            .reason()
            .unwrap()
            .contains("at least 3 models"));
    }

    #[test]
    fn a_reversed_ranking_is_tau_minus_one() {
        let before = scores(&[("1", "m1", 1.0), ("2", "m2", 2.0), ("3", "m3", 3.0)]);
        let after = scores(&[("1", "m1", 3.0), ("2", "m2", 2.0), ("3", "m3", 1.0)]);
        let drift = version_drift(&before, &after, 2.0);
        assert_eq!(drift.ranking_tau.value().unwrap().tau, -1.0);
    }
}
