//! A grader version against the clinicians, item by item: the agreement the grader workbench
//! shows on the development (and, once confirmed, the test) items, and the items ordered by how
//! far the grader is from the clinicians' mean, the disagreement browser's order.

use crate::bootstrap::BootstrapConfig;
use crate::correlation::{pearson, Pearson};
use crate::estimate::Estimate;
use crate::input::ReportOptions;
use crate::report::{pearson_case_interval, CaseInterval};
use serde::Serialize;
use std::collections::BTreeSet;

/// One clinician-rated item the grader scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemComparison {
    /// `case/task/model/sample`.
    pub item: String,
    pub case: String,
    /// Every clinician's overall score of the item (first reads, submitted).
    pub clinician_scores: Vec<f64>,
    pub grader_score: f64,
}

impl ItemComparison {
    pub fn clinician_mean(&self) -> f64 {
        self.clinician_scores.iter().sum::<f64>() / self.clinician_scores.len() as f64
    }

    /// |grader − clinicians' mean|.
    pub fn gap(&self) -> f64 {
        (self.grader_score - self.clinician_mean()).abs()
    }
}

/// How a grader version agrees with the clinicians' mean on a set of items.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Agreement {
    pub n_items: usize,
    pub n_cases: usize,
    /// Pearson r of the grader against the clinicians' mean, as the paper reports it (its
    /// Fisher-z interval counts items as independent: quoted for comparison only).
    pub pearson: Estimate<Pearson>,
    /// r's 95 % interval from resampling whole cases, made as the calibration report makes the
    /// verdict's ([`pearson_case_interval`]): the interval the workbench quotes.
    pub pearson_case_interval: Estimate<CaseInterval>,
    /// Mean of grader − clinicians' mean: positive is a lenient grader.
    pub mean_difference: Option<f64>,
    pub mean_absolute_difference: Option<f64>,
}

/// Agreement on `items`; items without a clinician score are left out.
pub fn agreement(items: &[ItemComparison]) -> Agreement {
    let rated: Vec<&ItemComparison> = items
        .iter()
        .filter(|i| !i.clinician_scores.is_empty())
        .collect();
    let grader: Vec<f64> = rated.iter().map(|i| i.grader_score).collect();
    let clinicians: Vec<f64> = rated.iter().map(|i| i.clinician_mean()).collect();
    let n = rated.len();
    let cases: Vec<&str> = rated.iter().map(|i| i.case.as_str()).collect();
    let n_cases = cases.iter().collect::<BTreeSet<_>>().len();
    // The report's default resamples and seed, so the two intervals of one grader agree.
    let defaults = ReportOptions::default();
    let config = BootstrapConfig {
        resamples: defaults.bootstrap_resamples,
        seed: defaults.seed,
    };
    let mean =
        |values: &mut dyn Iterator<Item = f64>| (n > 0).then(|| values.sum::<f64>() / n as f64);
    Agreement {
        n_items: n,
        n_cases,
        pearson: pearson(&grader, &clinicians),
        pearson_case_interval: match pearson_case_interval(&grader, &clinicians, &cases, config) {
            Ok(interval) => Estimate::Value(interval),
            Err(reason) => Estimate::not_estimable(n_cases, reason),
        },
        mean_difference: mean(&mut grader.iter().zip(&clinicians).map(|(g, c)| g - c)),
        mean_absolute_difference: mean(
            &mut grader.iter().zip(&clinicians).map(|(g, c)| (g - c).abs()),
        ),
    }
}

/// The items with a clinician score, largest |grader − clinicians' mean| first; equal gaps in
/// item order, so the list does not reshuffle between two looks.
pub fn by_disagreement(items: &[ItemComparison]) -> Vec<&ItemComparison> {
    let mut rated: Vec<&ItemComparison> = items
        .iter()
        .filter(|i| !i.clinician_scores.is_empty())
        .collect();
    rated.sort_by(|a, b| {
        b.gap()
            .total_cmp(&a.gap())
            .then_with(|| a.item.cmp(&b.item))
    });
    rated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, case: &str, clinicians: &[f64], grader: f64) -> ItemComparison {
        ItemComparison {
            item: id.into(),
            case: case.into(),
            clinician_scores: clinicians.to_vec(),
            grader_score: grader,
        }
    }

    #[test]
    fn disagreements_come_largest_gap_first_ties_by_item() {
        let items = [
            item("a/1", "a", &[4.0, 5.0], 4.5),
            item("b/1", "b", &[1.0, 2.0], 5.0),
            item("c/1", "c", &[3.0], 1.0),
            item("c/0", "c", &[3.0], 5.0),
            item("d/1", "d", &[], 5.0),
        ];
        let order: Vec<(&str, f64)> = by_disagreement(&items)
            .iter()
            .map(|i| (i.item.as_str(), i.gap()))
            .collect();
        assert_eq!(
            order,
            [("b/1", 3.5), ("c/0", 2.0), ("c/1", 2.0), ("a/1", 0.0)]
        );
    }

    #[test]
    fn agreement_counts_items_and_cases_and_signs_the_difference() {
        let items = [
            item("a/1", "a", &[4.0, 5.0], 5.0),
            item("a/2", "a", &[2.0], 3.0),
            item("b/1", "b", &[1.0, 1.0], 2.0),
            item("c/1", "c", &[3.0, 4.0], 4.5),
            item("d/1", "d", &[], 1.0),
        ];
        let a = agreement(&items);
        assert_eq!((a.n_items, a.n_cases), (4, 3));
        // Differences 0.5, 1, 1, 1: lenient by 0.875 on average.
        assert_eq!(a.mean_difference, Some(0.875));
        assert_eq!(a.mean_absolute_difference, Some(0.875));
        // Grader 5, 3, 2, 4.5 against means 4.5, 2, 1, 3.5: a shift by about one, r near 1.
        let r = a.pearson.value().expect("four items").r;
        assert!(r > 0.99, "{r}");
    }

    #[test]
    fn too_few_items_say_why_instead_of_a_number() {
        let a = agreement(&[item("a/1", "a", &[4.0], 5.0)]);
        assert_eq!(a.n_items, 1);
        assert!(a.pearson.reason().unwrap().contains("at least 4"));
        assert_eq!(agreement(&[]).mean_difference, None);
    }
}
