//! Missed findings: ground-truth lesions a response did not mention and no rater flagged, listed
//! one by one and counted per model. The matching itself (which words mention a lesion, which
//! rater marks flag it) is the caller's: the report only arranges what it is given.
//!
//! The share missed is over (response, lesion) pairs with a Wilson interval; the pairs of one
//! case are not independent (the same lesion across samples and models), so the interval is
//! narrower than a cluster-aware one would be and is meant for orientation.

use crate::input::MissedFindingsInput;
use crate::proportions::{wilson, Proportion};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissedFindingsReport {
    pub responses_checked: usize,
    /// Σ over checked responses of their case's ground-truth lesions.
    pub lesions_checked: usize,
    pub missed: usize,
    pub by_model: Vec<ModelMisses>,
    /// Ordered by case, item, lesion.
    pub findings: Vec<MissedFindingRow>,
    /// Why no response was checked, when the caller could not check them.
    pub not_checked: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelMisses {
    pub model: String,
    pub responses: usize,
    pub lesions: usize,
    pub missed: usize,
    /// Responses that missed at least one lesion.
    pub responses_with_miss: usize,
    /// missed / lesions (Wilson); `None` when the model's cases have no lesions (or the input
    /// lists more misses than lesions).
    pub share_missed: Option<Proportion>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissedFindingRow {
    pub item: String,
    pub case: String,
    pub model: String,
    pub lesion_id: String,
    pub description: String,
    pub location: String,
}

/// The section, or `None` when nothing was checked (a CSV input, or no lesion tasks); an empty
/// section with the reason when the caller could not check.
pub fn missed_findings_report(input: &MissedFindingsInput) -> Option<MissedFindingsReport> {
    if let Some(reason) = &input.not_checked {
        return Some(MissedFindingsReport {
            responses_checked: 0,
            lesions_checked: 0,
            missed: 0,
            by_model: Vec::new(),
            findings: Vec::new(),
            not_checked: Some(reason.clone()),
        });
    }
    if input.checked.is_empty() {
        return None;
    }
    let model_of: BTreeMap<&str, (&str, &str)> = input
        .checked
        .iter()
        .map(|c| (c.item.as_str(), (c.model.as_str(), c.case.as_str())))
        .collect();
    let mut by_model: BTreeMap<&str, ModelMisses> = BTreeMap::new();
    for checked in &input.checked {
        let row = by_model
            .entry(checked.model.as_str())
            .or_insert_with(|| ModelMisses {
                model: checked.model.clone(),
                responses: 0,
                lesions: 0,
                missed: 0,
                responses_with_miss: 0,
                share_missed: None,
            });
        row.responses += 1;
        row.lesions += checked.lesions;
    }
    let mut findings = Vec::new();
    let mut items_with_miss: BTreeSet<&str> = BTreeSet::new();
    for miss in &input.missed {
        // A miss of a response that was not checked cannot be counted against a denominator;
        // the caller's two lists come from the same query, so this only guards bad input.
        let Some(&(model, case)) = model_of.get(miss.item.as_str()) else {
            continue;
        };
        if let Some(row) = by_model.get_mut(model) {
            row.missed += 1;
            if items_with_miss.insert(miss.item.as_str()) {
                row.responses_with_miss += 1;
            }
        }
        findings.push(MissedFindingRow {
            item: miss.item.clone(),
            case: case.to_owned(),
            model: model.to_owned(),
            lesion_id: miss.lesion_id.clone(),
            description: miss.description.clone(),
            location: miss.location.clone(),
        });
    }
    findings
        .sort_by(|a, b| (&a.case, &a.item, &a.lesion_id).cmp(&(&b.case, &b.item, &b.lesion_id)));
    let by_model: Vec<ModelMisses> = by_model
        .into_values()
        .map(|mut row| {
            row.share_missed = wilson(row.missed, row.lesions);
            row
        })
        .collect();
    Some(MissedFindingsReport {
        responses_checked: input.checked.len(),
        lesions_checked: input.checked.iter().map(|c| c.lesions).sum(),
        missed: findings.len(),
        by_model,
        findings,
        not_checked: None,
    })
}
