//! Which scale each rater scored each dimension on, and what may be compared across scales.
//!
//! Raters on different scales (a grader scoring 0–10 beside clinicians on 1–5) can be compared
//! by their ordering: a correlation or a consistency ICC (ICC3) means the same on any linear
//! scale. Everything that compares values does not: a difference of scores (bias, Bland–Altman,
//! mean absolute difference, the calibration line's b = 1 and a = 0), an absolute-agreement ICC
//! (ICC1, ICC2 and their k forms), κ (whose categories are levels), Krippendorff's α, the
//! variance components (rater variance) and the alternative annotator test (an RMSE). A 6 on
//! 0–10 is not a 6 on 1–5, and κ on pooled levels would treat 5→6 as agreement. Those figures
//! are refused between raters on different scales, each with the reason, unless the analyst
//! declares a mapping: [`ReportOptions::linear_rescale`] maps a rater's scale linearly onto the
//! clinicians' (min to min, max to max) before any comparison.
//!
//! The rule lives here once: [`plan`] resolves every rater's scale per dimension (the most
//! specific declaration wins), checks every score against its rater's own scale, decides what is
//! refused, and [`ScalePlan::mapped`] applies the declared mappings; [`refuse_absolute`] is the
//! one list of the figures that compare values.

use crate::estimate::Estimate;
use crate::input::{CalibrationInput, RaterScale, ReportOptions, ScaleSpec};
use crate::kappa::{Categories, CohenKappa};
use crate::report::{DriftEntry, ReportError, Section};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One rater's scale on a dimension, as the report used it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaterScaleUse {
    pub rater: String,
    /// The scale the rater scored on; `None` when nobody declared it.
    pub scale: Option<ScaleSpec>,
    /// Its scores were mapped linearly from `scale` onto the clinicians' scale.
    pub mapped_linearly: bool,
}

/// A dimension's scales and what they allow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionScales {
    /// The scale the clinicians share (after any mapping), the one values are compared on;
    /// `None` when it is not declared or not shared.
    pub clinicians: Option<ScaleSpec>,
    /// Every rater who scored the dimension, clinicians and graders.
    pub raters: Vec<RaterScaleUse>,
    /// Why the clinicians' absolute agreement with each other is not computed; `None` when it is.
    pub clinicians_absolute_refused: Option<String>,
    /// Why the grader's absolute agreement with the clinicians is not computed; `None` when it
    /// is (or without a grader).
    pub grader_absolute_refused: Option<String>,
}

impl DimensionScales {
    /// The scale `rater`'s scores are on after any mapping.
    pub fn effective(&self, rater: &str) -> Option<ScaleSpec> {
        let used = self.raters.iter().find(|r| r.rater == rater)?;
        if used.mapped_linearly {
            self.clinicians
        } else {
            used.scale
        }
    }

    /// The categories κ and the consensus use: the clinicians' scale's levels, else `None`
    /// (the caller falls back to the values observed).
    pub fn categories(&self) -> Option<Categories> {
        self.clinicians
            .and_then(|s| Categories::from_scale(s.min, s.max, s.step))
    }
}

/// Every dimension's scales and the declared mappings, resolved once for the report.
pub(crate) struct ScalePlan {
    pub dimensions: BTreeMap<String, DimensionScales>,
    /// (rater, dimension) → (a, b) of the mapping a + b · score.
    maps: BTreeMap<(String, String), (f64, f64)>,
}

impl ScalePlan {
    /// The input with the declared mappings applied (`None` when nothing is mapped).
    pub fn mapped(&self, input: &CalibrationInput) -> Option<CalibrationInput> {
        if self.maps.is_empty() {
            return None;
        }
        let mut mapped = input.clone();
        for s in &mut mapped.table.scores {
            if let Some((a, b)) = self.maps.get(&(s.rater.clone(), s.dimension.clone())) {
                s.score = a + b * s.score;
            }
        }
        // Repeat reads are on the overall scale.
        for r in &mut mapped.repeat_reads {
            if let Some((a, b)) = self.maps.get(&(r.rater.clone(), "overall".to_owned())) {
                r.first = a + b * r.first;
                r.repeat = a + b * r.repeat;
            }
        }
        Some(mapped)
    }
}

fn describe(scale: Option<ScaleSpec>) -> String {
    scale.map_or_else(|| "an undeclared scale".to_owned(), |s| s.describe())
}

fn check_scale(s: ScaleSpec) -> Result<ScaleSpec, ReportError> {
    Categories::from_scale(s.min, s.max, s.step)
        .map(|_| s)
        .ok_or(ReportError::BadScale {
            min: s.min,
            max: s.max,
            step: s.step,
        })
}

/// Resolves every rater's scale on every dimension and checks the scores against them.
/// `humans` are the clinicians; `graders` the primary grader (first) and other versions.
pub(crate) fn plan(
    input: &CalibrationInput,
    options: &ReportOptions,
    humans: &[String],
    graders: &[&str],
    dimensions: &[String],
) -> Result<ScalePlan, ReportError> {
    let default = options.scale.map(check_scale).transpose()?;
    // Each declaration keyed by (rater, dimension); two different scales for one key conflict.
    let mut declared: BTreeMap<(Option<&str>, Option<&str>), ScaleSpec> = BTreeMap::new();
    let declarations: Vec<&RaterScale> = input
        .table
        .scales
        .iter()
        .chain(&options.rater_scales)
        .collect();
    for d in declarations {
        let scale = check_scale(d.scale)?;
        let key = (d.rater.as_deref(), d.dimension.as_deref());
        match declared.get(&key) {
            Some(first) if *first != scale => {
                return Err(ReportError::ConflictingScales {
                    rater: d.rater.clone().unwrap_or_else(|| "every rater".into()),
                    dimension: d
                        .dimension
                        .clone()
                        .unwrap_or_else(|| "every dimension".into()),
                    first: first.describe(),
                    second: scale.describe(),
                })
            }
            _ => {
                declared.insert(key, scale);
            }
        }
    }
    let scale_of = |rater: &str, dimension: &str| -> Option<ScaleSpec> {
        [
            (Some(rater), Some(dimension)),
            (Some(rater), None),
            (None, Some(dimension)),
        ]
        .iter()
        .find_map(|key| declared.get(key).copied())
        .or(default)
    };

    let raters: BTreeSet<&str> = input
        .table
        .scores
        .iter()
        .map(|s| s.rater.as_str())
        .collect();
    for name in &options.linear_rescale {
        if !raters.contains(name.as_str()) {
            return Err(ReportError::MappedRaterNotFound {
                name: name.clone(),
                known: raters.iter().copied().collect::<Vec<_>>().join(", "),
            });
        }
    }

    // A score off its rater's scale is a data error (a typo, a 0–10 file read as 1–5), never a
    // figure to average silently.
    let mut scored: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in &input.table.scores {
        scored.entry(&s.dimension).or_default().insert(&s.rater);
        if let Some(scale) = scale_of(&s.rater, &s.dimension) {
            let tolerance = 1e-9 * (scale.max - scale.min).abs().max(1.0);
            if s.score < scale.min - tolerance || s.score > scale.max + tolerance {
                return Err(ReportError::ScoreOutsideScale {
                    item: s.item.clone(),
                    rater: s.rater.clone(),
                    dimension: s.dimension.clone(),
                    score: s.score,
                    min: scale.min,
                    max: scale.max,
                });
            }
        }
    }

    let mapped = |rater: &str| options.linear_rescale.iter().any(|r| r == rater);
    let mut plan = ScalePlan {
        dimensions: BTreeMap::new(),
        maps: BTreeMap::new(),
    };
    for dimension in dimensions {
        let present = scored.get(dimension.as_str()).cloned().unwrap_or_default();
        let clinicians: Vec<&str> = humans
            .iter()
            .map(String::as_str)
            .filter(|h| present.contains(h))
            .collect();
        // The clinicians' scale: the one those not mapped share.
        let unmapped: BTreeMap<&str, Option<ScaleSpec>> = clinicians
            .iter()
            .filter(|h| !mapped(h))
            .map(|&h| (h, scale_of(h, dimension)))
            .collect();
        let mut distinct: Vec<Option<ScaleSpec>> = Vec::new();
        for scale in unmapped.values() {
            if !distinct.contains(scale) {
                distinct.push(*scale);
            }
        }
        let (reference, clinicians_refused) = match distinct.as_slice() {
            [] | [_] => (distinct.first().copied().flatten(), None),
            _ => (
                None,
                Some(format!(
                    "the clinicians scored '{dimension}' on different scales ({}); their values are not comparable without a declared mapping (e.g. a linear rescale of a clinician's scale), so only orderings (correlations, ICC3) are compared",
                    unmapped
                        .iter()
                        .map(|(h, s)| format!("{h}: {}", describe(*s)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ),
        };
        let mut uses = Vec::new();
        for rater in clinicians
            .iter()
            .copied()
            .chain(graders.iter().copied().filter(|g| present.contains(g)))
        {
            let own = scale_of(rater, dimension);
            // Mapping onto the scale one already scores on changes nothing; mapping from an
            // undeclared scale is impossible, and ignoring the request would hide that.
            let is_mapped = mapped(rater) && (own != reference || own.is_none());
            if is_mapped {
                let (Some(from), Some(to)) = (own, reference) else {
                    return Err(ReportError::ScaleMappingUndefined {
                        rater: rater.to_owned(),
                        dimension: dimension.clone(),
                        reason: if own.is_none() {
                            "its scale is not declared (a CSV's scale_min/scale_max columns, or --rater-scale)".into()
                        } else {
                            "the clinicians do not share one declared scale to map onto".into()
                        },
                    });
                };
                if from.max <= from.min {
                    return Err(ReportError::ScaleMappingUndefined {
                        rater: rater.to_owned(),
                        dimension: dimension.clone(),
                        reason: format!("its scale {} has a single level", from.describe()),
                    });
                }
                let b = (to.max - to.min) / (from.max - from.min);
                plan.maps.insert(
                    (rater.to_owned(), dimension.clone()),
                    (to.min - b * from.min, b),
                );
            }
            uses.push(RaterScaleUse {
                rater: rater.to_owned(),
                scale: own,
                mapped_linearly: is_mapped,
            });
        }
        let mut scales = DimensionScales {
            clinicians: reference,
            raters: uses,
            clinicians_absolute_refused: clinicians_refused.clone(),
            grader_absolute_refused: None,
        };
        if let Some(grader) = graders.first().filter(|g| present.contains(*g)) {
            let grader_scale = scales.effective(grader);
            scales.grader_absolute_refused = match clinicians_refused {
                Some(reason) => Some(reason),
                None if grader_scale != reference => Some(format!(
                    "the grader {grader} scored '{dimension}' on {}, the clinicians on {}; a value on one is not a value on the other, so only orderings (correlations, ICC3) are compared. Declare a mapping (calibrate --map-scale {grader}: a linear rescale onto the clinicians' scale) to compare values",
                    describe(grader_scale),
                    describe(reference)
                )),
                None => None,
            };
        }
        plan.dimensions.insert(dimension.clone(), scales);
    }
    Ok(plan)
}

fn refuse<T>(estimate: &mut Estimate<T>, n: usize, reason: &str) {
    *estimate = Estimate::not_estimable(n, format!("not computed: {reason}"));
}

fn refuse_kappa(kappa: &mut CohenKappa, reason: &str) {
    let n = kappa.n;
    refuse(&mut kappa.unweighted, n, reason);
    refuse(&mut kappa.linear, n, reason);
    refuse(&mut kappa.quadratic, n, reason);
}

/// Replaces every figure of `section` that compares values across scales `scales` says differ
/// with its refusal. Orderings (Pearson, Spearman, Kendall, ICC3, the like-for-like r) stay.
pub(crate) fn refuse_absolute(section: &mut Section, scales: &DimensionScales) {
    if let Some(reason) = &scales.clinicians_absolute_refused {
        let human = &mut section.human_human;
        let n = human.icc.n;
        refuse(&mut human.icc.icc1, n, reason);
        refuse(&mut human.icc.icc2, n, reason);
        refuse(&mut human.icc.icc1k, n, reason);
        refuse(&mut human.icc.icc2k, n, reason);
        let n = human.krippendorff_alpha.n_values;
        refuse(&mut human.krippendorff_alpha.nominal, n, reason);
        refuse(&mut human.krippendorff_alpha.ordinal, n, reason);
        refuse(&mut human.krippendorff_alpha.interval, n, reason);
        refuse(&mut human.fleiss_kappa, n, reason);
        refuse(&mut human.variance_components, n, reason);
        if let Some(grader) = &mut section.grader {
            for loo in &mut grader.leave_one_rater_out {
                let side = &mut loo.held_out_vs_rest;
                refuse(&mut side.mean_absolute_difference, side.n, reason);
                refuse(&mut side.bland_altman, side.n, reason);
            }
            for row in &mut grader.degradation {
                if row.statistic != "pearson_r_vs_mean_of_others" {
                    refuse(&mut row.human_human, row.comparisons, reason);
                    row.human_human_interval = None;
                }
            }
        }
    }
    let (Some(reason), Some(grader)) = (&scales.grader_absolute_refused, &mut section.grader)
    else {
        return;
    };
    let mean = &mut grader.vs_human_mean;
    let n = mean.n;
    refuse(&mut mean.bland_altman, n, reason);
    refuse(&mut mean.calibration_line, n, reason);
    refuse(&mut mean.proportional_bias, n, reason);
    refuse_kappa(&mut mean.cohen_kappa, reason);
    let n = mean.icc.n;
    refuse(&mut mean.icc.icc1, n, reason);
    refuse(&mut mean.icc.icc2, n, reason);
    refuse(&mut mean.icc.icc1k, n, reason);
    refuse(&mut mean.icc.icc2k, n, reason);
    let boot = &mut mean.bootstrap;
    for interval in [
        &mut boot.bias,
        &mut boot.icc2,
        &mut boot.calibration_slope,
        &mut boot.calibration_intercept,
        &mut boot.proportional_bias_slope,
    ] {
        refuse(interval, n, reason);
    }
    for each in &mut grader.vs_each_rater {
        refuse(&mut each.bland_altman, each.n, reason);
        refuse_kappa(&mut each.cohen_kappa, reason);
    }
    for loo in &mut grader.leave_one_rater_out {
        let side = &mut loo.grader_vs_rest;
        refuse(&mut side.mean_absolute_difference, side.n, reason);
        refuse(&mut side.bland_altman, side.n, reason);
    }
    for row in &mut grader.degradation {
        if row.statistic != "pearson_r_vs_mean_of_others" {
            refuse(&mut row.grader_human, row.comparisons, reason);
            refuse(&mut row.difference, row.comparisons, reason);
            row.grader_human_interval = None;
            row.difference_interval = None;
        }
    }
    let n = match &grader.alt_test {
        Estimate::Value(test) => test.annotators.iter().map(|a| a.n).sum(),
        Estimate::NotEstimable { n, .. } => *n,
    };
    refuse(&mut grader.alt_test, n, reason);
}

/// Refuses the value comparisons of a drift entry whose version scored on another scale than
/// the primary grader.
pub(crate) fn refuse_drift(entry: &mut DriftEntry, scales: &DimensionScales, primary: &str) {
    let (version, primary_scale) = (scales.effective(&entry.version), scales.effective(primary));
    if version == primary_scale {
        return;
    }
    let reason = format!(
        "{} scored '{}' on {}, the grader {primary} on {}; only orderings are compared without a declared mapping",
        entry.version,
        entry.dimension,
        describe(version),
        describe(primary_scale)
    );
    let side = &mut entry.vs_primary;
    refuse(&mut side.mean_absolute_difference, side.n, &reason);
    refuse(&mut side.bland_altman, side.n, &reason);
}
