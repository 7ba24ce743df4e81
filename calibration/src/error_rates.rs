//! Error rates that hold (issue 33, item 2): the verdict's two claims as one-sided tests whose
//! error is checked by simulation, and the error each has at the study's own design.
//!
//! - **The bar**, H₀: ρ ≤ bar, ρ the Pearson r of the grader with the clinicians' mean. A case
//!   bootstrap-t on Fisher's z (Hall 1992, *The Bootstrap and Edgeworth Expansion*, §3.10;
//!   Efron & Tibshirani 1993, ch. 12; for clusters, Cameron, Gelbach & Miller 2008, Rev Econ
//!   Stat 90:414–427): t = (z(r̂) − z(bar)) / SE, SE the delete-one-case jackknife SE of z; its
//!   null distribution is that of t* = (z(r̂*) − z(r̂)) / SE* over case resamples, each with its
//!   own jackknife SE. Centring t* on the estimate imposes the null on the pivot (Hall & Wilson
//!   1991, Biometrics 47:757–762, "two guidelines for bootstrap hypothesis testing"). The claim
//!   is p ≤ 0.025, which is the same as the bootstrap-t interval's lower end ≥ bar.
//! - **Non-inferiority to a clinician**, H₀: ψ ≤ −margin, ψ the grader's r with the others'
//!   mean minus a clinician's, clinicians and cases random ([`crate::readers_random`]). The
//!   statistic is Obuchowski–Rockette's (ψ̄ + margin) / SE with Hillis's SE. The null is imposed
//!   by simulation: studies at the study's own design from its fitted variance components, the
//!   grader's error set so that E ψ̄ = −margin over clinicians drawn like the study's; the
//!   statistic's share among them that is at least the study's is p_null. The claim needs
//!   p_null ≤ 0.025 and also t on min(Hillis's df, cases − 1) to reject (a conservative
//!   intersection: t alone on Hillis's df claimed 4–9 % of the time at 12–20 cases, the
//!   simulation alone up to 4 %; benches/verdict_error_rates.rs).
//! - **Error rates at this design** (`verdict.error_rates`): a parametric bootstrap. The study's
//!   variance components (case, item, each clinician's error, the grader's slope and its case-
//!   and item-level error) are fitted by moments from per-case sums; the grader's error is then
//!   scaled so the claim's null holds exactly (ρ = bar; E ψ = −margin over clinicians drawn
//!   like the study's), studies of the same cases, items per case and clinicians are simulated,
//!   and the share in which the claim is made is the one-sided error this design has.
//!
//! Everything works on per-case sums, so a test costs O(resamples · cases) whatever the items.

use crate::dist;
use crate::mrmc::fixed_reader_vs_random_readers;
use crate::report::r_from_sums;
use seeded::SplitMix64;
use serde::Serialize;

/// The one-sided error every claim is made at.
pub const NOMINAL: f64 = 0.025;

/// Per case: n, Σg, Σm, Σg², Σm², Σgm of the grader g and the clinicians' mean m.
pub type PairSums = [f64; 6];
/// Per case and held-out clinician j: n, Σg, Σm, Σg², Σm², Σgm, Σh, Σh², Σhm, with h j's score
/// and m the other clinicians' mean (the layout of [`crate::readers_random`]).
pub type HeldOutSums = [f64; 9];

/// The bar as a one-sided test (`verdict.error_rates.bar.test`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarTest {
    /// (z(r) − z(bar)) / SE, SE the delete-one-case jackknife SE of Fisher's z.
    pub statistic: f64,
    /// One-sided p: the share of case resamples whose t* is at least `statistic` (+1 / +1).
    pub p: f64,
    /// The bootstrap-t 95 % interval of r: its lower end ≥ bar exactly when p ≤ 0.025.
    pub low: f64,
    pub high: f64,
    pub resamples: usize,
    pub cases: usize,
    /// p ≤ 0.025: the bar is claimed.
    pub claimed: bool,
}

/// Non-inferiority to a clinician as a one-sided test at −margin
/// (`verdict.error_rates.non_inferiority.test`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NonInferiorityTest {
    /// (ψ̄ + margin) / SE, SE Obuchowski–Rockette's with Hillis's MS_den.
    pub statistic: f64,
    /// Hillis's degrees of freedom; `null` in JSON when infinite.
    pub df: f64,
    /// One-sided p of `statistic` on t(df): the readers-random interval's own test.
    pub p_t: f64,
    /// One-sided p of `statistic` on t(min(df, cases − 1)): a jackknife variance from G cases
    /// carries at most G − 1 degrees of freedom, which Hillis's df (from the clinicians' spread
    /// alone) does not bound.
    pub p_t_cases: f64,
    /// One-sided p from studies simulated at the null (the study's fitted variance components,
    /// its design, clinicians drawn like its own, the grader's error set so that E ψ̄ =
    /// −margin): the share whose statistic is at least this one (+1 / +1). `None` where the
    /// components cannot be fitted.
    pub p_null: Option<f64>,
    /// Studies simulated for `p_null`.
    pub simulations: usize,
    /// p_t_cases ≤ 0.025 and p_null ≤ 0.025: non-inferiority to a clinician is claimed.
    pub claimed: bool,
}

/// Fisher's z of r and its delete-one-case jackknife SE, from the sums of the cases in `idx`
/// (indices into `cases`, repeats allowed). `None` where r is undefined or ±1 on all or without
/// some case, or the SE is 0.
fn jackknife_z(cases: &[PairSums], idx: &[usize], total: &mut [f64; 6]) -> Option<(f64, f64)> {
    *total = [0.0; 6];
    for &c in idx {
        for (t, v) in total.iter_mut().zip(&cases[c]) {
            *t += v;
        }
    }
    let z = |s: &[f64; 6]| r_from_sums(s).filter(|r| r.abs() < 1.0).map(f64::atanh);
    let full = z(total)?;
    let g = idx.len() as f64;
    let (mut sum, mut sum2) = (0.0, 0.0);
    let mut without = [0.0; 6];
    for &c in idx {
        for ((w, t), v) in without.iter_mut().zip(total.iter()).zip(&cases[c]) {
            *w = t - v;
        }
        let zi = z(&without)?;
        sum += zi;
        sum2 += zi * zi;
    }
    let mean = sum / g;
    let variance = ((g - 1.0) / g * (sum2 - g * mean * mean)).max(0.0);
    let se = variance.sqrt();
    (se > 0.0 && se.is_finite()).then_some((full, se))
}

/// The `q`-quantile of sorted `values` as the ⌈q (B + 1)⌉-th order statistic (clamped), so that
/// "statistic above the 0.975 quantile" is "p ≤ 0.025" with p = (1 + #{t* ≥ t}) / (B + 1).
fn order_statistic(sorted: &[f64], q: f64) -> f64 {
    let b = sorted.len();
    let k = ((q * (b + 1) as f64).ceil() as usize).clamp(1, b);
    sorted[k - 1]
}

/// The bar as a case bootstrap-t test of H₀: ρ ≤ `bar` on Fisher's z (see the module). `Err`
/// says why not: fewer than 3 cases, r undefined or ±1 with a case left out, or a jackknife SE
/// of 0.
pub fn bar_test(
    cases: &[PairSums],
    bar: f64,
    resamples: usize,
    seed: u64,
) -> Result<BarTest, String> {
    let g = cases.len();
    if g < 3 {
        return Err(format!(
            "needs at least 3 cases holding a grader–clinician pair (has {g})"
        ));
    }
    if resamples < 39 {
        return Err(format!(
            "needs at least 39 resamples for a one-sided test at 2.5 % (has {resamples})"
        ));
    }
    let all: Vec<usize> = (0..g).collect();
    let mut total = [0.0; 6];
    let (z, se) = jackknife_z(cases, &all, &mut total).ok_or(
        "r is undefined or ±1 on all cases or with some case left out, or its jackknife SE is 0",
    )?;
    let statistic = (z - bar.atanh()) / se;
    let mut rng = SplitMix64::new(seeded::mix(seed ^ 0x6261_725f_7465_7374));
    let mut idx = vec![0; g];
    // A resample whose r or SE is undefined counts as t* = +∞: against the claim.
    let mut t_star: Vec<f64> = (0..resamples)
        .map(|_| {
            idx.iter_mut().for_each(|i| *i = rng.below(g));
            jackknife_z(cases, &idx, &mut total).map_or(f64::INFINITY, |(zb, seb)| (zb - z) / seb)
        })
        .collect();
    t_star.sort_by(f64::total_cmp);
    let exceed = t_star.iter().filter(|&&t| t >= statistic).count();
    let p = (1 + exceed) as f64 / (resamples + 1) as f64;
    let upper = order_statistic(&t_star, 1.0 - NOMINAL);
    let lower = order_statistic(&t_star, NOMINAL);
    let clip = |x: f64| if x.is_finite() { x.tanh() } else { x.signum() };
    Ok(BarTest {
        statistic,
        p,
        low: clip(z - upper * se),
        high: clip(z - lower * se),
        resamples,
        cases: g,
        claimed: p <= NOMINAL,
    })
}

/// ψ of one clinician from its sums.
fn psi(s: &[f64; 9]) -> Option<f64> {
    let grader = r_from_sums(&s[..6])?;
    let clinician = r_from_sums(&[s[0], s[6], s[2], s[7], s[4], s[8]])?;
    Some(grader - clinician)
}

/// Each clinician's ψ and its delete-one-case values over the cases in `idx`; `None` when any is
/// undefined.
fn psi_jackknife(
    clinicians: &[Vec<HeldOutSums>],
    idx: &[usize],
) -> Option<(Vec<f64>, Vec<Vec<f64>>)> {
    let mut psis = Vec::with_capacity(clinicians.len());
    let mut jackknife = Vec::with_capacity(clinicians.len());
    for cases in clinicians {
        let mut total = [0.0; 9];
        for &c in idx {
            total.iter_mut().zip(&cases[c]).for_each(|(t, v)| *t += v);
        }
        psis.push(psi(&total)?);
        let mut rest = [0.0; 9];
        let values: Option<Vec<f64>> = idx
            .iter()
            .map(|&c| {
                rest.iter_mut()
                    .zip(&total)
                    .zip(&cases[c])
                    .for_each(|((r, t), v)| *r = t - v);
                // A clinician without items in the case keeps ψ.
                if cases[c][0] == 0.0 {
                    Some(*psis.last().expect("pushed"))
                } else {
                    psi(&rest)
                }
            })
            .collect();
        jackknife.push(values?);
    }
    Some((psis, jackknife))
}

/// The OR/Hillis statistic (ψ̄ + margin) / SE and its df, from each clinician's per-case sums.
fn ni_statistic(clinicians: &[Vec<HeldOutSums>], margin: f64) -> Result<(f64, f64), String> {
    let g = clinicians.first().map_or(0, Vec::len);
    let all: Vec<usize> = (0..g).collect();
    let (psis, jackknife) = psi_jackknife(clinicians, &all)
        .ok_or("a clinician's r is undefined on all cases or with some case left out")?;
    let or = fixed_reader_vs_random_readers(&psis, &jackknife)?;
    Ok(((or.estimate + margin) / or.std_err, or.df))
}

/// Non-inferiority to a clinician as a test of H₀: ψ ≤ −`margin`, null imposed (see the
/// module): the OR/Hillis statistic referred to t on Hillis's df and to its distribution in
/// `simulations` studies simulated at the null from the study's own fitted components and
/// design (`items_per_case`, in the order of `sums`' cases). Claimed when both reject.
pub fn non_inferiority_test(
    sums: &StudySums,
    items_per_case: &[usize],
    margin: f64,
    simulations: usize,
    seed: u64,
) -> Result<NonInferiorityTest, String> {
    let clinicians = &sums.held_out;
    let g = clinicians.first().map_or(0, Vec::len);
    if clinicians.len() < 3 || g < 3 {
        return Err(format!(
            "needs at least 3 clinicians and 3 cases (has {} and {g})",
            clinicians.len()
        ));
    }
    let (statistic, df) = ni_statistic(clinicians, margin)?;
    let upper_p = |df: f64| -> Result<f64, String> {
        Ok(if df.is_finite() && df < 1e4 {
            1.0 - dist::t_cdf(statistic, df).ok_or("no t distribution at these df")?
        } else {
            1.0 - dist::normal_cdf(statistic)
        })
    };
    let p_t = upper_p(df)?;
    let p_t_cases = upper_p(df.min((g - 1) as f64))?;
    let p_null = Components::fit(sums).and_then(|c| {
        let null = NiNull::of(&c, clinicians.len(), margin, seed)?;
        use rayon::prelude::*;
        let exceed = (0..simulations)
            .into_par_iter()
            .filter(|&s| {
                let mut rng = SplitMix64::new(seeded::mix(seed ^ 0x6e75_6c6c ^ (s as u64) << 24));
                let study = null.simulate(items_per_case, &mut rng);
                // A simulated study without a statistic counts against the claim.
                ni_statistic(&study.held_out, margin).map_or(true, |(t, _)| t >= statistic)
            })
            .count();
        Some((1 + exceed) as f64 / (simulations + 1) as f64)
    });
    Ok(NonInferiorityTest {
        statistic,
        df,
        p_t,
        p_t_cases,
        p_null,
        simulations,
        claimed: p_t_cases <= NOMINAL && p_null.is_some_and(|p| p <= NOMINAL),
    })
}

/// Clinician panels the expected ψ̄ at the null is averaged over.
const PANELS: usize = 250;

/// Studies at non-inferiority's null under fitted components: clinicians drawn with log-normal
/// error variances like the study's, the grader's error scaled so E ψ̄ = −margin.
struct NiNull {
    c: Components,
    lambda: f64,
    log_mean: f64,
    log_sd: f64,
    clinicians: usize,
}

impl NiNull {
    fn of(c: &Components, clinicians: usize, margin: f64, seed: u64) -> Option<Self> {
        let cautious = Components {
            grader_case: c.grader_case_upper,
            ..c.clone()
        };
        let c = &cautious;
        let (log_mean, log_sd) = c.clinician_spread();
        let mut rng = SplitMix64::new(seeded::mix(seed ^ 0x7061_6e65_6c73));
        let panels: Vec<Vec<f64>> = (0..PANELS)
            .map(|_| {
                (0..clinicians)
                    .map(|_| (log_mean + log_sd * normal(&mut rng)).exp())
                    .collect()
            })
            .collect();
        let expected =
            |l: f64| panels.iter().map(|p| c.psi_bar(p, l)).sum::<f64>() / panels.len() as f64;
        let lambda = solve(expected, -margin)?;
        Some(NiNull {
            c: cautious,
            lambda,
            log_mean,
            log_sd,
            clinicians,
        })
    }

    fn simulate(&self, items_per_case: &[usize], rng: &mut SplitMix64) -> StudySums {
        let errors: Vec<f64> = (0..self.clinicians)
            .map(|_| (self.log_mean + self.log_sd * normal(rng)).exp())
            .collect();
        simulate(&self.c, self.lambda, &errors, items_per_case, rng)
    }
}

/// Per-case sums of one study, built item by item: what both tests read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StudySums {
    pub pair: Vec<PairSums>,
    /// `held_out[j][case]`.
    pub held_out: Vec<Vec<HeldOutSums>>,
}

impl StudySums {
    /// Empty sums for `cases` cases and `clinicians` clinicians.
    pub fn new(cases: usize, clinicians: usize) -> Self {
        StudySums {
            pair: vec![[0.0; 6]; cases],
            held_out: vec![vec![[0.0; 9]; cases]; clinicians],
        }
    }

    /// One item of `case`, scored by the grader and by every clinician (`clinicians[j]`).
    pub fn add(&mut self, case: usize, grader: f64, clinicians: &[f64]) {
        let k = clinicians.len() as f64;
        let total: f64 = clinicians.iter().sum();
        let m = total / k;
        let p = &mut self.pair[case];
        for (s, v) in p
            .iter_mut()
            .zip([1.0, grader, m, grader * grader, m * m, grader * m])
        {
            *s += v;
        }
        for (j, &h) in clinicians.iter().enumerate() {
            let rest = (total - h) / (k - 1.0);
            let s = &mut self.held_out[j][case];
            for (s, v) in s.iter_mut().zip([
                1.0,
                grader,
                rest,
                grader * grader,
                rest * rest,
                grader * rest,
                h,
                h * h,
                h * rest,
            ]) {
                *s += v;
            }
        }
    }
}

/// The normal-model variance components of a study (moments from its per-case sums), what the
/// parametric bootstrap draws from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Components {
    /// Variance of the true score between cases and between items of a case.
    pub case: f64,
    pub item: f64,
    /// Each clinician's error variance.
    pub clinicians: Vec<f64>,
    /// grader = slope · truth + case error + item error.
    pub grader_slope: f64,
    pub grader_case: f64,
    /// The grader's case error at its one-sided 75 % upper confidence limit: what
    /// non-inferiority's null simulation uses, since a grader error shared by a case's items,
    /// underestimated on few cases, would make that simulation too narrow.
    pub grader_case_upper: f64,
    pub grader_item: f64,
}

/// One-way ANOVA of a per-case quantity from its per-case n, Σx, Σx²: (between-case variance
/// component, within-case variance, the between-case component's one-sided 75 % upper
/// confidence limit from the F distribution of MSB / MSW).
fn one_way(cases: &[(f64, f64, f64)]) -> Option<(f64, f64, f64)> {
    let n: f64 = cases.iter().map(|c| c.0).sum();
    let g = cases.iter().filter(|c| c.0 > 0.0).count() as f64;
    if g < 2.0 || n - g < 1.0 {
        return None;
    }
    let grand = cases.iter().map(|c| c.1).sum::<f64>() / n;
    let within: f64 = cases
        .iter()
        .filter(|c| c.0 > 0.0)
        .map(|c| c.2 - c.1 * c.1 / c.0)
        .sum::<f64>()
        / (n - g);
    let between: f64 = cases
        .iter()
        .filter(|c| c.0 > 0.0)
        .map(|c| c.0 * (c.1 / c.0 - grand).powi(2))
        .sum::<f64>()
        / (g - 1.0);
    let n0 = (n - cases.iter().map(|c| c.0 * c.0).sum::<f64>() / n) / (g - 1.0);
    let within = within.max(0.0);
    let component = ((between - within) / n0).max(0.0);
    // σ²_b / σ²_w ≤ (F / F₀.₂₅ − 1) / n0 with 75 % confidence (the one-way ANOVA's exact
    // interval for the variance ratio).
    let upper = match dist::f_quantile(0.25, g - 1.0, n - g) {
        Some(f_low) if within > 0.0 => {
            (within * ((between / within) / f_low - 1.0) / n0).max(component)
        }
        _ => component,
    };
    Some((component, within, upper))
}

impl Components {
    /// Fitted by moments from a study's sums (complete panel assumed): the clinicians' error
    /// variances from var(h_j − mean of the others), the truth's case and item parts from a
    /// one-way ANOVA of the clinicians' mean less their error, the grader's slope from
    /// cov(g, m) / var(truth) and its case and item error from a one-way ANOVA of g − slope · m.
    pub fn fit(sums: &StudySums) -> Option<Components> {
        let k = sums.held_out.len();
        if k < 3 {
            return None;
        }
        let kf = k as f64;
        let d: Vec<f64> = sums
            .held_out
            .iter()
            .map(|cases| {
                let t = cases.iter().fold([0.0; 9], |mut t, c| {
                    t.iter_mut().zip(c).for_each(|(t, v)| *t += v);
                    t
                });
                let n = t[0];
                // Σ(h − m)² − (Σ(h − m))² / n, over n − 1.
                let ss = t[7] - 2.0 * t[8] + t[4] - (t[6] - t[2]).powi(2) / n;
                ss / (n - 1.0)
            })
            .collect();
        let total_s = (kf - 1.0) / kf * d.iter().sum::<f64>();
        let c = 1.0 / (kf - 1.0).powi(2);
        let clinicians: Vec<f64> = d
            .iter()
            .map(|dj| ((dj - total_s * c) / (1.0 - c)).max(1e-6 * total_s.max(1e-12)))
            .collect();
        let mean_error = clinicians.iter().sum::<f64>() / (kf * kf);
        let pooled = |f: &dyn Fn(&PairSums) -> (f64, f64, f64)| {
            one_way(&sums.pair.iter().map(f).collect::<Vec<_>>())
        };
        let (case_m, within_m, _) = pooled(&|s| (s[0], s[2], s[4]))?;
        let item = (within_m - mean_error).max(0.01 * within_m);
        let case = case_m;
        let t = sums.pair.iter().fold([0.0; 6], |mut t, c| {
            t.iter_mut().zip(c).for_each(|(t, v)| *t += v);
            t
        });
        let n = t[0];
        let cov_gm = (t[5] - t[1] * t[2] / n) / (n - 1.0);
        let truth = case + item;
        let slope = cov_gm / truth;
        let (grader_case, within_w, grader_case_upper) = pooled(&|s| {
            (
                s[0],
                s[1] - slope * s[2],
                s[3] - 2.0 * slope * s[5] + slope * slope * s[4],
            )
        })?;
        let grader_item = (within_w - slope * slope * mean_error).max(0.0);
        [case, item, slope, grader_case, grader_item]
            .iter()
            .chain(&clinicians)
            .all(|v| v.is_finite())
            .then_some(Components {
                case,
                item,
                clinicians,
                grader_slope: slope,
                grader_case,
                grader_case_upper,
                grader_item,
            })
    }

    fn truth(&self) -> f64 {
        self.case + self.item
    }

    /// The grader's error variance (case + item).
    fn grader_error(&self) -> f64 {
        self.grader_case + self.grader_item
    }

    /// Population r of the grader with the mean of clinicians of error variances `errors`, the
    /// grader's error scaled by `lambda`.
    fn r_grader(&self, errors: &[f64], lambda: f64) -> f64 {
        let t = self.truth();
        let k = errors.len() as f64;
        let mean_error = errors.iter().sum::<f64>() / (k * k);
        let b = self.grader_slope;
        b * t / ((b * b * t + lambda * self.grader_error()) * (t + mean_error)).sqrt()
    }

    /// Population ψ̄ over the clinicians of error variances `errors`.
    fn psi_bar(&self, errors: &[f64], lambda: f64) -> f64 {
        let t = self.truth();
        let k = errors.len();
        let total: f64 = errors.iter().sum();
        let psi: f64 = errors
            .iter()
            .map(|&e| {
                let others = (total - e) / ((k - 1) as f64).powi(2);
                let vm = t + others;
                let b = self.grader_slope;
                let rg = b * t / ((b * b * t + lambda * self.grader_error()) * vm).sqrt();
                let rh = t / ((t + e) * vm).sqrt();
                rg - rh
            })
            .sum();
        psi / k as f64
    }

    /// The clinicians' log error variances: mean and SD (how a new clinician is drawn).
    fn clinician_spread(&self) -> (f64, f64) {
        let logs: Vec<f64> = self.clinicians.iter().map(|v| v.ln()).collect();
        let k = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / k;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0))
            .sqrt()
            .min(1.0);
        (mean, sd)
    }
}

/// A normal draw (Box–Muller, one of the pair).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u = rng.unit().max(1e-300);
    let v = rng.unit();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The smallest λ ≥ 0 in [0, hi] with f(λ) ≤ target, f decreasing; `None` when even λ = 0 is
/// below the target (no grader reaches it) or λ = hi stays above.
fn solve(f: impl Fn(f64) -> f64, target: f64) -> Option<f64> {
    if f(0.0) < target {
        return None;
    }
    let mut hi = 1.0;
    while f(hi) > target {
        hi *= 2.0;
        if hi > 1e12 {
            return None;
        }
    }
    let mut lo = 0.0;
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Simulates one study from `c` with the grader's error scaled by `lambda`, the clinicians'
/// error variances `errors`, `items_per_case[case]` items per case.
fn simulate(
    c: &Components,
    lambda: f64,
    errors: &[f64],
    items_per_case: &[usize],
    rng: &mut SplitMix64,
) -> StudySums {
    let mut sums = StudySums::new(items_per_case.len(), errors.len());
    let sd = |v: f64| v.max(0.0).sqrt();
    let (case_sd, item_sd) = (sd(c.case), sd(c.item));
    let (gc_sd, gi_sd) = (sd(lambda * c.grader_case), sd(lambda * c.grader_item));
    let error_sd: Vec<f64> = errors.iter().map(|&e| sd(e)).collect();
    let mut scores = vec![0.0; errors.len()];
    // Box–Muller gives two normals a draw; both are used.
    let mut spare: Option<f64> = None;
    let mut normal = |rng: &mut SplitMix64| -> f64 {
        if let Some(v) = spare.take() {
            return v;
        }
        let radius = (-2.0 * rng.unit().max(1e-300).ln()).sqrt();
        let angle = std::f64::consts::TAU * rng.unit();
        spare = Some(radius * angle.sin());
        radius * angle.cos()
    };
    for (case, &n) in items_per_case.iter().enumerate() {
        let truth_case = case_sd * normal(rng);
        let grader_case = gc_sd * normal(rng);
        for _ in 0..n {
            let truth = truth_case + item_sd * normal(rng);
            for (s, e) in scores.iter_mut().zip(&error_sd) {
                *s = truth + e * normal(rng);
            }
            let grader = c.grader_slope * truth + grader_case + gi_sd * normal(rng);
            sums.add(case, grader, &scores);
        }
    }
    sums
}

/// The one-sided error of one claim at this design (`verdict.error_rates.bar` /
/// `.non_inferiority`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorRate {
    /// 0.025.
    pub nominal: f64,
    /// The share of studies simulated under the claim's null in which it was made; `null`
    /// where the null cannot be imposed (no grader reaches the bar against this panel).
    pub estimated: Option<f64>,
    /// Its simulation standard error, √(p(1 − p)/n) at p = max(estimated, nominal).
    pub simulation_se: Option<f64>,
    pub simulations: usize,
    /// Case resamples inside each simulated study's test.
    pub resamples: usize,
    /// The test on the study itself.
    pub test: Option<ClaimTest>,
    /// Why `estimated` or `test` is missing.
    pub note: Option<String>,
}

/// The study's own test of one claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ClaimTest {
    Bar(BarTest),
    NonInferior(NonInferiorityTest),
}

/// `verdict.error_rates`: each claim's test on the study and its one-sided error at the
/// study's design, by parametric bootstrap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorRates {
    pub bar: ErrorRate,
    pub non_inferiority: ErrorRate,
    /// Studies simulated in all, both claims (each rate's own `simulations` says how many were
    /// its; 0 where it was not estimated).
    pub simulations: usize,
    /// How the tests and the rates were made, in words.
    pub method: String,
    /// The fitted variance components the simulations draw from.
    pub components: Option<Components>,
    pub cases: usize,
    /// Mean items per case of the simulated design (items the grader and the whole panel
    /// scored).
    pub items_per_case: f64,
    pub clinicians: usize,
    /// Below 30 cases: the rates are themselves uncertain (the components are fitted on few
    /// cases), and the summary says so.
    pub few_cases: bool,
}

/// How much simulation a study of `cases` cases and `scores` item scores (grader and clinicians)
/// gets, so the error rates stay well under a second (docs/performance.md). Every count of
/// resamples or null simulations is one with (B + 1) · 0.025 a whole number, so that a test with
/// B of them holds its level exactly under exchangeability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Simulated studies for the bar's rate, and the case resamples of the test inside each;
    /// (0, 0) when that would be too slow at this size and the rate is not estimated.
    pub bar: (usize, usize),
    /// Simulated studies for non-inferiority's rate, and the null simulations of the test
    /// inside each; (0, 0) when too slow.
    pub non_inferiority: (usize, usize),
    /// Case resamples of the bar's test on the study itself (the report's, at most this).
    pub own_bar_resamples: usize,
    /// Null simulations of non-inferiority's test on the study itself.
    pub own_ni_simulations: usize,
}

/// Jackknife correlations (bar) or simulated item scores (non-inferiority) at most, for each
/// rate's nested simulation.
const NESTED_WORK: usize = 8_000_000;

pub fn simulation_budget(cases: usize, scores: usize) -> Budget {
    let pick = |per: usize, options: &[(usize, usize)]| {
        options
            .iter()
            .copied()
            .find(|(outer, inner)| outer * inner * per.max(1) <= NESTED_WORK)
            .unwrap_or((0, 0))
    };
    Budget {
        bar: pick(cases, &[(200, 199), (200, 79), (200, 39), (100, 39)]),
        non_inferiority: pick(scores, &[(200, 79), (200, 39), (100, 39)]),
        own_bar_resamples: if cases <= 1000 { 999 } else { 199 },
        own_ni_simulations: match scores {
            0..=2_000 => 999,
            2_001..=10_000 => 399,
            10_001..=25_000 => 199,
            _ => 79,
        },
    }
}

fn test_note(error: Option<&String>) -> Option<String> {
    error.map(|e| format!("no test on this study: {e}"))
}

/// The study's tests and their error rates at its design (see the module): the bar's test on
/// `pair` (the verdict's per-case sums), the components and non-inferiority's test on `panel`
/// (items the grader and the whole complete panel scored; `items_per_case` in its case order).
pub fn error_rates(
    pair: &[PairSums],
    panel: &StudySums,
    items_per_case: &[usize],
    bar: f64,
    margin: f64,
    resamples: usize,
    seed: u64,
) -> ErrorRates {
    use rayon::prelude::*;
    let cases = pair.len();
    let clinicians = panel.held_out.len();
    let scores = items_per_case.iter().sum::<usize>() * (clinicians + 1);
    let budget = simulation_budget(items_per_case.len(), scores);
    let (simulations, inner) = budget.bar;
    let bar_test_here = bar_test(pair, bar, resamples.min(budget.own_bar_resamples), seed);
    let ni_test_here = non_inferiority_test(
        panel,
        items_per_case,
        margin,
        budget.own_ni_simulations,
        seed,
    );
    let components = Components::fit(panel);
    let mean_items =
        items_per_case.iter().sum::<usize>() as f64 / items_per_case.len().max(1) as f64;
    let empty = |test: Option<ClaimTest>, note: String| ErrorRate {
        nominal: NOMINAL,
        estimated: None,
        simulation_se: None,
        simulations: 0,
        resamples: inner,
        test,
        note: Some(note),
    };
    // A claim made in `claims` of `simulations` studies, each test drawing `resamples`.
    let rate = |claims: usize,
                simulations: usize,
                resamples: usize,
                note: Option<String>,
                test: Option<ClaimTest>| {
        let p = claims as f64 / simulations as f64;
        let q = p.max(NOMINAL);
        ErrorRate {
            nominal: NOMINAL,
            estimated: Some(p),
            simulation_se: Some((q * (1.0 - q) / simulations as f64).sqrt()),
            simulations,
            resamples,
            test,
            note,
        }
    };
    let bar_claim = bar_test_here.as_ref().ok().cloned().map(ClaimTest::Bar);
    let ni_claim = ni_test_here
        .as_ref()
        .ok()
        .cloned()
        .map(ClaimTest::NonInferior);
    let Some(c) = components.clone() else {
        let why = "the variance components could not be fitted (needs 3 clinicians on every item, 2 cases and items within cases)".to_string();
        return ErrorRates {
            bar: empty(bar_claim, why.clone()),
            non_inferiority: empty(ni_claim, why),
            simulations: 0,
            method: METHOD.to_string(),
            components,
            cases,
            items_per_case: mean_items,
            clinicians,
            few_cases: cases < FEW_CASES,
        };
    };
    let seed_of = |claim: u64, s: usize| {
        seeded::mix(
            seed ^ claim.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ (s as u64).wrapping_mul(0xD1B5_4A32_D192_ED03),
        )
    };
    // The bar: these clinicians, the grader's error scaled so ρ = bar.
    let bar_rate = match solve(|l| c.r_grader(&c.clinicians, l), bar) {
        _ if inner == 0 => empty(
            bar_claim,
            format!("not simulated at this size ({cases} cases): each simulated study would run its own case bootstrap; the benchmark's rates at 40 cases apply (docs/performance.md)"),
        ),
        None => empty(
            bar_claim,
            format!("no grader reaches r = {bar:.2} against this panel's mean under the fitted components, so the bar cannot be wrongly claimed at its boundary"),
        ),
        Some(lambda) => {
            let claims = (0..simulations)
                .into_par_iter()
                .filter(|&s| {
                    let mut rng = SplitMix64::new(seed_of(1, s));
                    let study = simulate(&c, lambda, &c.clinicians, items_per_case, &mut rng);
                    bar_test(&study.pair, bar, inner, seed_of(2, s)).is_ok_and(|t| t.claimed)
                })
                .count();
            rate(
                claims,
                simulations,
                inner,
                test_note(bar_test_here.as_ref().err()),
                bar_claim,
            )
        }
    };
    // Non-inferiority: clinicians drawn like these, the grader's error scaled so that
    // E ψ̄ = −margin over such panels; each simulated study runs the whole test, its own
    // null-imposed simulation included.
    let ni_rate = match NiNull::of(&c, clinicians, margin, seed) {
        _ if budget.non_inferiority.1 == 0 => empty(
            ni_claim,
            format!("not simulated at this size ({scores} item scores): each simulated study would run its own null simulation; the benchmark's rates at 40 cases apply (docs/performance.md)"),
        ),
        None => empty(
            ni_claim,
            format!("under the fitted components no grader is exactly {margin:.2} worse than a clinician"),
        ),
        Some(null) => {
            let (simulations, nested) = budget.non_inferiority;
            let claims = (0..simulations)
                .into_par_iter()
                .filter(|&s| {
                    let mut rng = SplitMix64::new(seed_of(4, s));
                    let study = null.simulate(items_per_case, &mut rng);
                    non_inferiority_test(
                        &study,
                        items_per_case,
                        margin,
                        nested,
                        seed_of(5, s),
                    )
                    .is_ok_and(|t| t.claimed)
                })
                .count();
            rate(
                claims,
                simulations,
                nested,
                test_note(ni_test_here.as_ref().err()),
                ni_claim,
            )
        }
    };
    ErrorRates {
        simulations: bar_rate.simulations + ni_rate.simulations,
        bar: bar_rate,
        non_inferiority: ni_rate,
        method: METHOD.to_string(),
        components,
        cases,
        items_per_case: mean_items,
        clinicians,
        few_cases: cases < FEW_CASES,
    }
}

/// `ErrorRates::method`.
const METHOD: &str = "the bar: case bootstrap-t on Fisher's z with the delete-one-case jackknife SE (H0: r <= bar); non-inferiority to a clinician: Obuchowski-Rockette statistic at -margin on t(min(Hillis df, cases - 1)) and against studies simulated at the margin from the fitted components (both must reject); error rates: parametric bootstrap of the fitted case, item, clinician and grader variances at the study's cases, items per case and clinicians, each claim's null imposed";

/// Below this many cases the summary says plainly how sure it can be.
pub const FEW_CASES: usize = 30;

impl ErrorRates {
    /// The rates in plain words, for the verdict's summary.
    pub fn sentence(&self, bar: f64, margin: f64) -> String {
        let rate = |r: &ErrorRate| match (r.estimated, r.simulation_se) {
            (Some(p), Some(se)) => format!(
                "{:.1} % (simulation error ± {:.1}, {} studies)",
                100.0 * p,
                100.0 * se,
                r.simulations
            ),
            _ => format!(
                "not estimated ({})",
                r.note.as_deref().unwrap_or("no simulation")
            ),
        };
        let mut words = String::new();
        if self.bar.estimated.is_some() || self.non_inferiority.estimated.is_some() {
            words.push_str(&format!(
                " How often these claims would be made wrongly at this design (studies simulated from this study's own fitted case, item, clinician and grader variances at its {} cases, {:.1} items per case and {} clinicians; 2.5 % is nominal): the bar, when r is exactly {bar:.2}, {}; non-inferiority to a clinician, when the grader is exactly {margin:.2} worse than one, {}.",
                self.cases,
                self.items_per_case,
                self.clinicians,
                rate(&self.bar),
                rate(&self.non_inferiority)
            ));
        }
        if self.few_cases {
            words.push_str(&format!(
                " With only {} cases, read every claim here as provisional: the variances these rates are simulated from are themselves estimated from {} cases, so the true error rates can be further from the figures above than their simulation error says, and the intervals are wide for the same reason; 30 cases or more make a verdict firm.",
                self.cases, self.cases
            ));
        }
        words
    }
}
