//! Where the clinicians' disagreement comes from: variance components of their scores, with
//! intervals, and what a different panel of clinicians would likely give.
//!
//! **Model.** On every clinician's score (missing ratings and unequal numbers of items per case
//! allowed), score = μ + case + item within case + rater + case × rater + residual (the residual
//! holds item × rater and error, which one score per item and rater cannot separate); all
//! effects random and crossed: the panel is one draw of clinicians, and another would differ.
//! lme4: `score ~ 1 + (1|case) + (1|item) + (1|rater) + (1|case:rater)`. When no two cases hold
//! two or more scored items the case level is confounded with the item level, and the model is
//! `score ~ 1 + (1|item) + (1|rater)`; `design` says which.
//!
//! **Estimator.** REML, lme4's profiled criterion (Bates, Mächler, Bolker & Walker 2015, J. Stat.
//! Softw. 67(1), eqs. 41–42) in its relative standard deviations θ, minimised by Nelder–Mead. The
//! criterion needs log det(Λ'Z'ZΛ + I) and two solves with that matrix; its blocks are eliminated
//! in the order items (diagonal), each case's (case, case × rater) block, the raters' block, so
//! the cost grows with the number of cases, not its square. Until 2026-11-29 the components were
//! the balanced ANOVA estimators on the complete panel: they left out every partial reader's
//! scores and every case with another number of items, and differ from REML on such a study
//! (`calibration/tests/variance.rs`).
//!
//! **Intervals.** 95 % profile-likelihood intervals for each component, as lme4's
//! `confint(method = "profile")`: the standard deviations σⱼ where the signed square root of the
//! REML deviance's rise, the others re-optimised, reaches ±z₀.₉₇₅; reported squared. A lower
//! limit the profile never reaches is 0.
//!
//! **Another panel.** The clinicians' absolute agreement a new panel of `k` clinicians from the
//! same population would likely reach: (case + item) / (case + item + (rater + case × rater +
//! residual) / k), for one clinician (k = 1) and for the mean of k.

use crate::dist;
use crate::estimate::Estimate;
use crate::optimise::minimise;
use crate::ratings::RatingMatrix;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarianceComponents {
    /// `cases, items within cases, raters` or `items, raters …` (cases not separated).
    pub design: String,
    /// How the components and intervals were estimated.
    pub estimator: String,
    /// Between cases; `None` when the case level is not separated.
    pub case: Option<f64>,
    /// Between items (within cases when the case level is separated).
    pub item: f64,
    /// Between clinicians: one scores higher than another on everything.
    pub rater: f64,
    /// Clinicians disagreeing on some cases more than others; `None` when not separated.
    pub case_by_rater: Option<f64>,
    /// Item × rater and error.
    pub residual: f64,
    /// Components whose REML estimate is on the boundary, 0.
    pub truncated_at_zero: Vec<String>,
    /// 95 % profile-likelihood interval of each component, in the order above; empty where
    /// they were not computed (a subgroup of the report).
    pub intervals: Vec<ComponentInterval>,
    /// lme4's REML criterion (−2 × the restricted log-likelihood) at the estimates.
    pub reml_criterion: f64,
    /// The share of the total variance that is the panel's (rater + case × rater + residual):
    /// what would change with other clinicians.
    pub panel_share: f64,
    pub n_scores: usize,
    pub n_items: usize,
    pub n_cases: usize,
    pub n_raters: usize,
    /// Absolute agreement a new panel would likely reach: one clinician, and the mean of the
    /// panel's size and of 3 and 5 clinicians.
    pub another_panel: Vec<PanelProjection>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentInterval {
    /// `case`, `item`, `rater`, `case_by_rater` or `residual`.
    pub component: String,
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PanelProjection {
    pub clinicians: usize,
    pub icc: f64,
}

/// Components in the order of θ: each one's standard deviation relative to the residual's.
const COMPONENTS: [&str; 4] = ["case", "item", "rater", "case_by_rater"];
const CASE: usize = 0;
const ITEM: usize = 1;
const RATER: usize = 2;
const CASE_BY_RATER: usize = 3;
/// A relative standard deviation below this is the boundary: its component is reported as 0
/// (Nelder–Mead approaches θ = 0 without reaching it; the criterion there is flat to ~1e-10).
const BOUNDARY: f64 = 1e-5;
/// The estimates' optimiser runs until the simplex's criterion values lie this close (absolute):
/// the components to ~1e-8 relative.
const FIT_TOLERANCE: f64 = 1e-11;
/// A profile point needs less: ζ = √(rise) near 1.96 moves by about rise error / 4.
const PROFILE_TOLERANCE: f64 = 1e-7;
const MAX_EVALUATIONS: usize = 20_000;
/// The criterion evaluations all the profile intervals of one fit may use together. A study the
/// size of the demo needs some tens of thousands; a flat or degenerate profile (a fuzzed table
/// of a few scores) could otherwise refit for minutes, and a very large study would hold the
/// report back for seconds. Past it the intervals are left out, and `estimator` says so.
const PROFILE_EVALUATIONS: usize = 400_000;

/// Which figures to compute: the profile intervals cost some hundred refits of the model
/// (docs/performance.md), so the report computes them for each dimension as a whole and leaves
/// them out of its subgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intervals {
    Profile,
    Omitted,
}

/// Variance components of every score in `ratings`, `cases` per row.
pub fn variance_components(
    ratings: &RatingMatrix,
    cases: &[&str],
    intervals: Intervals,
) -> Estimate<VarianceComponents> {
    let design = match Design::new(ratings, cases) {
        Ok(design) => design,
        Err((n, reason)) => return Estimate::not_estimable(n, reason),
    };
    let free: Vec<usize> = if design.with_case {
        vec![CASE, ITEM, RATER, CASE_BY_RATER]
    } else {
        vec![ITEM, RATER]
    };
    let theta_of = |x: &[f64]| {
        let mut theta = [0.0; 4];
        for (&j, v) in free.iter().zip(x) {
            theta[j] = v.abs();
        }
        theta
    };
    let mut criterion = |x: &[f64]| design.reml_criterion(&theta_of(x));
    let fit = minimise(
        &mut criterion,
        &vec![1.0; free.len()],
        0.5,
        FIT_TOLERANCE,
        MAX_EVALUATIONS,
    );
    let mut theta = theta_of(&fit.point);
    let mut truncated = Vec::new();
    for &j in &free {
        if theta[j] < BOUNDARY {
            theta[j] = 0.0;
            truncated.push(COMPONENTS[j].to_string());
        }
    }
    let Some(parts) = design.factor(&theta) else {
        return Estimate::not_estimable(design.n_items, "the scores have no variance");
    };
    let residual = parts.r2 / (design.n_scores - 1) as f64;
    let component = |j: usize| theta[j] * theta[j] * residual;
    let wanted = intervals;
    let intervals = match intervals {
        Intervals::Profile => {
            profile_intervals(&design, &free, &theta, residual, parts.criterion(&design))
                .unwrap_or_default()
        }
        Intervals::Omitted => Vec::new(),
    };
    let (case, case_by_rater) = if design.with_case {
        (Some(component(CASE)), Some(component(CASE_BY_RATER)))
    } else {
        (None, None)
    };
    let (item, rater) = (component(ITEM), component(RATER));
    let target = case.unwrap_or(0.0) + item;
    let panel = rater + case_by_rater.unwrap_or(0.0) + residual;
    if target + panel <= 0.0 || !(target + panel).is_finite() {
        return Estimate::not_estimable(design.n_items, "the scores have no variance");
    }
    let projection = |clinicians: usize| PanelProjection {
        clinicians,
        icc: target / (target + panel / clinicians as f64),
    };
    let k = design.n_raters;
    let mut sizes = vec![1, k, 3, 5];
    sizes.sort_unstable();
    sizes.dedup();
    Estimate::Value(VarianceComponents {
        design: if design.with_case {
            "cases, items within cases, raters".into()
        } else {
            "items, raters (no two cases hold two or more scored items: the case level is not separated)".into()
        },
        estimator: match (wanted, intervals.is_empty()) {
            (_, false) => "REML on every score (lme4's criterion); 95 % profile-likelihood intervals",
            (Intervals::Profile, true) => {
                "REML on every score (lme4's criterion); the profile-likelihood intervals left out: \
                 their refits ran past the report's budget"
            }
            (Intervals::Omitted, true) => "REML on every score (lme4's criterion)",
        }
        .into(),
        case,
        item,
        rater,
        case_by_rater,
        residual,
        truncated_at_zero: truncated,
        intervals,
        reml_criterion: parts.criterion(&design),
        panel_share: panel / (target + panel),
        n_scores: design.n_scores,
        n_items: design.n_items,
        n_cases: design.n_cases,
        n_raters: k,
        another_panel: sizes.into_iter().map(projection).collect(),
    })
}

/// The scores, grouped so that the criterion costs one step per case and pattern of raters:
/// the items of a case read by the same raters enter the criterion only through sums.
struct Design {
    groups: Vec<Group>,
    n_scores: usize,
    n_items: usize,
    n_cases: usize,
    n_raters: usize,
    /// Σ (score − mean)².
    centred_squares: f64,
    with_case: bool,
}

/// The items of one case scored by the same raters.
struct Group {
    case: usize,
    raters: Vec<usize>,
    items: f64,
    /// Per rater of `raters`: the sum of their centred scores over the group's items.
    rater_sums: Vec<f64>,
    /// Σ over items of the item's sum of centred scores, and of its square.
    total: f64,
    total_squares: f64,
}

/// What the REML criterion needs at one θ.
struct Factor {
    /// log det(Λ'Z'ZΛ + I).
    log_det: f64,
    /// The intercept's Schur complement (lme4's R_X'R_X).
    schur: f64,
    /// The penalised residual sum of squares at the conditional estimates.
    r2: f64,
}

impl Factor {
    fn criterion(&self, design: &Design) -> f64 {
        let df = (design.n_scores - 1) as f64;
        self.log_det
            + self.schur.ln()
            + df * (1.0 + (2.0 * std::f64::consts::PI * self.r2 / df).ln())
    }

    /// The criterion at a residual variance σ² not at its optimum (for the profile).
    fn criterion_at(&self, design: &Design, residual: f64) -> f64 {
        let df = (design.n_scores - 1) as f64;
        self.log_det
            + self.schur.ln()
            + df * (2.0 * std::f64::consts::PI * residual).ln()
            + self.r2 / residual
    }
}

impl Design {
    /// The design, or why the components cannot be estimated: `(items, reason)`.
    fn new(ratings: &RatingMatrix, cases: &[&str]) -> Result<Design, (usize, String)> {
        let k_all = ratings.n_raters();
        let scored: Vec<(usize, Vec<(usize, f64)>)> = (0..ratings.n_items())
            .map(|i| {
                let scores: Vec<(usize, f64)> = ratings
                    .row(i)
                    .iter()
                    .enumerate()
                    .filter_map(|(r, v)| Some((r, (*v)?)))
                    .collect();
                (i, scores)
            })
            .filter(|(_, s)| !s.is_empty())
            .collect();
        let n_items = scored.len();
        let mut has_scores = vec![false; k_all];
        for (_, scores) in &scored {
            for &(r, _) in scores {
                has_scores[r] = true;
            }
        }
        let raters: Vec<usize> = (0..k_all).filter(|&r| has_scores[r]).collect();
        let k = raters.len();
        let repeated = scored.iter().filter(|(_, s)| s.len() >= 2).count();
        if k < 2 || repeated < 3 {
            return Err((
                n_items,
                format!("needs at least 3 items scored by at least 2 clinicians, has {repeated} items and {k} clinicians"),
            ));
        }
        if scored
            .iter()
            .flat_map(|(_, s)| s)
            .any(|(_, v)| !v.is_finite())
        {
            return Err((n_items, "a score is not a finite number".into()));
        }
        let n_scores: usize = scored.iter().map(|(_, s)| s.len()).sum();
        let mean = scored
            .iter()
            .flat_map(|(_, s)| s)
            .map(|(_, v)| v)
            .sum::<f64>()
            / n_scores as f64;
        let centred_squares = scored
            .iter()
            .flat_map(|(_, s)| s)
            .map(|(_, v)| (v - mean).powi(2))
            .sum();
        let mut case_index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut items_per_case: Vec<usize> = Vec::new();
        for (i, _) in &scored {
            let next = case_index.len();
            let c = *case_index.entry(cases[*i]).or_insert(next);
            if c == items_per_case.len() {
                items_per_case.push(0);
            }
            items_per_case[c] += 1;
        }
        let with_case = items_per_case.iter().filter(|&&m| m >= 2).count() >= 2;
        let column: BTreeMap<usize, usize> =
            raters.iter().enumerate().map(|(j, &r)| (r, j)).collect();
        let mut groups: BTreeMap<(usize, Vec<usize>), Group> = BTreeMap::new();
        for (i, scores) in &scored {
            let case = if with_case { case_index[cases[*i]] } else { 0 };
            let pattern: Vec<usize> = scores.iter().map(|(r, _)| column[r]).collect();
            let group = groups
                .entry((case, pattern.clone()))
                .or_insert_with(|| Group {
                    case,
                    rater_sums: vec![0.0; pattern.len()],
                    raters: pattern,
                    items: 0.0,
                    total: 0.0,
                    total_squares: 0.0,
                });
            let item_total: f64 = scores.iter().map(|(_, v)| v - mean).sum();
            group.items += 1.0;
            group.total += item_total;
            group.total_squares += item_total * item_total;
            for (sum, (_, v)) in group.rater_sums.iter_mut().zip(scores) {
                *sum += v - mean;
            }
        }
        Ok(Design {
            groups: groups.into_values().collect(),
            n_scores,
            n_items,
            n_cases: case_index.len(),
            n_raters: k,
            centred_squares,
            with_case,
        })
    }

    fn reml_criterion(&self, theta: &[f64; 4]) -> f64 {
        self.factor(theta)
            .map_or(f64::INFINITY, |parts| parts.criterion(self))
    }

    /// Block elimination of Λ'Z'ZΛ + I beside the intercept: each item's effect (a diagonal
    /// pivot) into its case's block (case, case × rater for each rater) and the raters' block;
    /// each case's block into the raters'; then the raters'. With the pivots' logarithms summed
    /// and the right-hand sides (Λ'Z'y and Λ'Z'1) carried along, v'A⁻¹w is the sum over pivots of
    /// the eliminated v and w, so no back-substitution is needed. The groups are sorted by case,
    /// so one case's block is built, eliminated and reused for the next.
    fn factor(&self, theta: &[f64; 4]) -> Option<Factor> {
        let k = self.n_raters;
        let d = if self.with_case { 1 + k } else { 0 };
        let [tc, ti, tr, tcr] = *theta;
        let mut case = CaseBlock::new(d, k);
        let mut acc = Accumulated {
            global: vec![0.0; k * k],
            global_y: vec![0.0; k],
            global_x: vec![0.0; k],
            ..Accumulated::default()
        };
        for a in 0..k {
            acc.global[a * k + a] = 1.0;
        }
        let (mut wl, mut wg) = (vec![0.0; d], vec![0.0; k]);
        let mut current = None;
        for g in &self.groups {
            if d > 0 && current != Some(g.case) {
                if current.is_some() {
                    case.eliminate(&mut acc)?;
                }
                case.reset();
                current = Some(g.case);
            }
            let m = g.raters.len() as f64;
            let pivot = ti * ti * m + 1.0;
            acc.log_det += g.items * pivot.ln();
            acc.qyy += ti * ti * g.total_squares / pivot;
            acc.qxy += ti * m * ti * g.total / pivot;
            acc.qxx += g.items * (ti * m).powi(2) / pivot;
            // The item's coupling to its case's block and to the raters.
            wl.fill(0.0);
            wg.fill(0.0);
            if d > 0 {
                wl[0] = ti * tc * m;
                for &r in &g.raters {
                    wl[1 + r] = ti * tcr;
                }
            }
            for &r in &g.raters {
                wg[r] = ti * tr;
            }
            // Summed over the group's items: its right-hand sides' eliminated parts.
            let (sum_y, sum_x) = (ti * g.total / pivot, ti * m * g.items / pivot);
            let scale = g.items / pivot;
            if d > 0 {
                // Z'Z among the case, its case × rater cells and the raters, from these scores.
                case.block[0] += g.items * m * tc * tc;
                case.y[0] += tc * g.total;
                case.x[0] += tc * m * g.items;
                for (&r, &sum) in g.raters.iter().zip(&g.rater_sums) {
                    case.block[1 + r] += g.items * tc * tcr;
                    case.block[(1 + r) * d] += g.items * tc * tcr;
                    case.block[(1 + r) * d + 1 + r] += g.items * tcr * tcr;
                    case.cross[r] += g.items * tc * tr;
                    case.cross[(1 + r) * k + r] += g.items * tcr * tr;
                    case.y[1 + r] += tcr * sum;
                    case.x[1 + r] += tcr * g.items;
                }
                for (a, &wa) in wl.iter().enumerate() {
                    for (cell, &wb) in case.block[a * d..(a + 1) * d].iter_mut().zip(&wl) {
                        *cell -= scale * wa * wb;
                    }
                    for (cell, &wb) in case.cross[a * k..(a + 1) * k].iter_mut().zip(&wg) {
                        *cell -= scale * wa * wb;
                    }
                    case.y[a] -= wa * sum_y;
                    case.x[a] -= wa * sum_x;
                }
            }
            for (&r, &sum) in g.raters.iter().zip(&g.rater_sums) {
                acc.global[r * k + r] += g.items * tr * tr;
                acc.global_y[r] += tr * sum;
                acc.global_x[r] += tr * g.items;
            }
            for (a, &wa) in wg.iter().enumerate() {
                for (cell, &wb) in acc.global[a * k..(a + 1) * k].iter_mut().zip(&wg) {
                    *cell -= scale * wa * wb;
                }
                acc.global_y[a] -= wa * sum_y;
                acc.global_x[a] -= wa * sum_x;
            }
        }
        if current.is_some() {
            case.eliminate(&mut acc)?;
        }
        acc.log_det += cholesky(&mut acc.global, k)?;
        forward(&acc.global, k, &mut acc.global_y);
        forward(&acc.global, k, &mut acc.global_x);
        acc.qyy += dot(&acc.global_y, &acc.global_y);
        acc.qxy += dot(&acc.global_x, &acc.global_y);
        acc.qxx += dot(&acc.global_x, &acc.global_x);
        let schur = self.n_scores as f64 - acc.qxx;
        // The centred scores sum to 0, so the intercept's estimate is −qxy / schur.
        let intercept = -acc.qxy / schur;
        let r2 = self.centred_squares - acc.qyy - schur * intercept * intercept;
        (schur > 0.0 && r2 > 0.0 && acc.log_det.is_finite()).then_some(Factor {
            log_det: acc.log_det,
            schur,
            r2,
        })
    }
}

/// The sums the elimination carries to the end: log det, v'A⁻¹w for v, w in {Λ'Z'y, Λ'Z'1}, and
/// the raters' block with its two right-hand sides.
#[derive(Default)]
struct Accumulated {
    log_det: f64,
    qyy: f64,
    qxy: f64,
    qxx: f64,
    global: Vec<f64>,
    global_y: Vec<f64>,
    global_x: Vec<f64>,
}

/// One case's (case, case × rater) block after its items are eliminated: the block, its coupling
/// to the raters, and its right-hand sides.
struct CaseBlock {
    d: usize,
    k: usize,
    block: Vec<f64>,
    cross: Vec<f64>,
    y: Vec<f64>,
    x: Vec<f64>,
    /// C⁻¹ applied to each column of `cross`, C the block's Cholesky factor.
    columns: Vec<f64>,
}

impl CaseBlock {
    fn new(d: usize, k: usize) -> CaseBlock {
        CaseBlock {
            d,
            k,
            block: vec![0.0; d * d],
            cross: vec![0.0; d * k],
            y: vec![0.0; d],
            x: vec![0.0; d],
            columns: vec![0.0; k * d],
        }
    }

    fn reset(&mut self) {
        self.block.fill(0.0);
        for a in 0..self.d {
            self.block[a * self.d + a] = 1.0;
        }
        self.cross.fill(0.0);
        self.y.fill(0.0);
        self.x.fill(0.0);
    }

    /// Eliminates the block into the raters' block; `None` when it is not positive definite.
    fn eliminate(&mut self, acc: &mut Accumulated) -> Option<()> {
        let (d, k) = (self.d, self.k);
        acc.log_det += cholesky(&mut self.block, d)?;
        forward(&self.block, d, &mut self.y);
        forward(&self.block, d, &mut self.x);
        acc.qyy += dot(&self.y, &self.y);
        acc.qxy += dot(&self.x, &self.y);
        acc.qxx += dot(&self.x, &self.x);
        for b in 0..k {
            let column = &mut self.columns[b * d..(b + 1) * d];
            for (a, c) in column.iter_mut().enumerate() {
                *c = self.cross[a * k + b];
            }
            forward(&self.block, d, column);
        }
        for a in 0..k {
            let ca = &self.columns[a * d..(a + 1) * d];
            for b in 0..k {
                acc.global[a * k + b] -= dot(ca, &self.columns[b * d..(b + 1) * d]);
            }
            acc.global_y[a] -= dot(ca, &self.y);
            acc.global_x[a] -= dot(ca, &self.x);
        }
        Some(())
    }
}

/// In-place lower Cholesky factor of the n × n row-major `a`; returns log det, or `None` when
/// `a` is not positive definite.
fn cholesky(a: &mut [f64], n: usize) -> Option<f64> {
    let mut log_det = 0.0;
    for j in 0..n {
        let pivot = a[j * n + j] - (0..j).map(|p| a[j * n + p].powi(2)).sum::<f64>();
        if pivot <= 0.0 || !pivot.is_finite() {
            return None;
        }
        let root = pivot.sqrt();
        a[j * n + j] = root;
        log_det += 2.0 * root.ln();
        for i in j + 1..n {
            let s = a[i * n + j] - (0..j).map(|p| a[i * n + p] * a[j * n + p]).sum::<f64>();
            a[i * n + j] = s / root;
        }
    }
    Some(log_det)
}

/// Solves L x = b in place, L the lower factor `cholesky` left in `l`.
fn forward(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let s = b[i] - (0..i).map(|p| l[i * n + p] * b[p]).sum::<f64>();
        b[i] = s / l[i * n + i];
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Profile-likelihood intervals of every free component and the residual, on the variance scale.
/// Parameters are standard deviations (`free`'s components, then the residual's); the profile of
/// one holds it fixed and re-optimises the others. `None` when the refits would run past
/// [`PROFILE_EVALUATIONS`].
fn profile_intervals(
    design: &Design,
    free: &[usize],
    theta: &[f64; 4],
    residual: f64,
    minimum: f64,
) -> Option<Vec<ComponentInterval>> {
    let evaluations = std::cell::Cell::new(0usize);
    let sigma = residual.sqrt();
    let estimate: Vec<f64> = free
        .iter()
        .map(|&j| theta[j] * sigma)
        .chain([sigma])
        .collect();
    let deviance = |sds: &[f64]| -> f64 {
        evaluations.set(evaluations.get() + 1);
        let s = sds[free.len()].abs();
        let mut th = [0.0; 4];
        for (&j, v) in free.iter().zip(sds) {
            th[j] = v.abs() / s;
        }
        design
            .factor(&th)
            .map_or(f64::INFINITY, |parts| parts.criterion_at(design, s * s))
    };
    let z = dist::z_975();
    let total = estimate.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut intervals = Vec::with_capacity(estimate.len());
    for (p, &at) in estimate.iter().enumerate() {
        // ζ(v): signed root of the deviance's rise with parameter p held at v.
        let mut start: Vec<f64> = estimate
            .iter()
            .enumerate()
            .filter(|&(q, _)| q != p)
            .map(|(_, &v)| v)
            .collect();
        let mut previous = at;
        let mut zeta = |v: f64| -> f64 {
            // Past the budget every point is NaN: the searches below end at once, and the
            // intervals are dropped after the loop.
            if evaluations.get() > PROFILE_EVALUATIONS {
                return f64::NAN;
            }
            let mut profiled = |others: &[f64]| {
                let mut sds = others.to_vec();
                sds.insert(p, v);
                deviance(&sds)
            };
            // The others' optimum moves about as far as v did since the last point.
            let step = (v - previous).abs().max(1e-4 * total);
            previous = v;
            let m = minimise(
                &mut profiled,
                &start,
                step,
                PROFILE_TOLERANCE,
                MAX_EVALUATIONS,
            );
            if m.value.is_finite() {
                start = m.point;
            }
            (v - at).signum() * (m.value - minimum).max(0.0).sqrt()
        };
        let is_residual = p == free.len();
        let low = if at == 0.0 || (!is_residual && zeta(0.0) > -z) {
            0.0
        } else {
            let mut inner = if is_residual { at / 2.0 } else { 0.0 };
            while is_residual && zeta(inner) > -z && inner > 1e-8 * total {
                inner /= 2.0;
            }
            root(&mut zeta, inner, at, -z)
        };
        let mut outer = at + 0.5 * total.max(f64::MIN_POSITIVE);
        let mut inner = at;
        while zeta(outer) < z && outer < 1e6 * total {
            inner = outer;
            outer = at + 2.0 * (outer - at);
        }
        let high = root(&mut zeta, inner, outer, z);
        let component = free.get(p).map_or("residual", |&j| COMPONENTS[j]);
        intervals.push(ComponentInterval {
            component: component.into(),
            low: low * low,
            high: high * high,
        });
    }
    // The report lists components in the struct's order: case, item, rater, case × rater,
    // residual; `free` is already in that order.
    (evaluations.get() <= PROFILE_EVALUATIONS).then_some(intervals)
}

/// Where the increasing ζ crosses `target` between `a` and `b` (Illinois false position).
fn root(zeta: &mut dyn FnMut(f64) -> f64, mut a: f64, mut b: f64, target: f64) -> f64 {
    let (mut fa, mut fb) = (zeta(a) - target, zeta(b) - target);
    if fa.signum() == fb.signum() {
        return if fa.abs() < fb.abs() { a } else { b };
    }
    let mut side = 0;
    for _ in 0..100 {
        let c = (a * fb - b * fa) / (fb - fa);
        let fc = zeta(c) - target;
        if fc.abs() < 1e-7 || (b - a).abs() < 1e-10 * (a.abs() + b.abs()) {
            return c;
        }
        if fc.signum() == fb.signum() {
            b = c;
            fb = fc;
            if side == -1 {
                fa /= 2.0;
            }
            side = -1;
        } else {
            a = c;
            fa = fc;
            if side == 1 {
                fb /= 2.0;
            }
            side = 1;
        }
    }
    (a + b) / 2.0
}
