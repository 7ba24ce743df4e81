//! The one-sided error of the verdict's two claims (issue 33, item 2), by simulation: studies
//! generated exactly at each claim's null, and the share in which the claim is made (2.5 %
//! nominal). A simulation run by hand, not a test:
//!
//! ```text
//! CARGO_INCREMENTAL=0 cargo bench -p neurorater-calibration --bench verdict_error_rates
//! ```
//!
//! (`STUDIES=n` sets the studies per cell and claim, default 1,000; `RESAMPLES=b` the case
//! resamples and null simulations of each test, default 999; `CELLS=12x4x5,…` runs only those
//! cases × tasks × clinicians cells.)
//!
//! Grid: 12, 20, 40 cases × 4, 10 tasks per case × 3, 5 clinicians × two data-generating
//! models:
//! - **continuous**: truth = case (var 0.5) + item (var 0.5); clinician j = truth + error of
//!   variance s²ⱼ; grader = truth + case-shared error + item error (half and half);
//! - **Likert**: truth mostly at the case (case var 0.8, item 0.2), every score the latent
//!   value rounded onto 1–5 around 3.8, so about a quarter of scores sit at the ceiling of 5.
//!
//! The bar's null: the clinicians fixed (s = 0.40, 0.50, 0.60 or 0.40 … 0.60 in five steps), the
//! grader's error set so that the population r with the clinicians' mean is the bar (0.90).
//! Non-inferiority's null: each study draws its clinicians (s² log-normal around 0.25, SD of
//! log 0.5), and the grader's error is set so that the expected ψ̄ over such panels, the
//! grader's r with the others' mean minus a clinician's, is −0.05 (the margin). Population
//! values are analytic for the continuous model and from a large simulated population (common
//! random numbers, bisection) for the Likert one.
//!
//! Rules compared: the bar by the old rule (delete-one-case jackknife on Fisher's z, t(G − 1),
//! lower end ≥ bar) and by the new case bootstrap-t test; non-inferiority by t on Hillis's df
//! alone (the readers-random interval's lower end > −margin), by the null-imposed simulation
//! alone, by t on min(Hillis df, cases − 1) alone, and by the last two together (the new rule).

use calibration::error_rates::{bar_test, non_inferiority_test, StudySums};
use calibration::jackknife::case_jackknife_fisher;
use rayon::prelude::*;
use seeded::SplitMix64;

const BAR: f64 = 0.90;
const MARGIN: f64 = 0.05;

fn normal(rng: &mut SplitMix64) -> f64 {
    let u = rng.unit().max(1e-300);
    let v = rng.unit();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[derive(Clone, Copy, PartialEq)]
enum Model {
    Continuous,
    Likert,
}

impl Model {
    fn name(self) -> &'static str {
        match self {
            Model::Continuous => "continuous",
            Model::Likert => "Likert 1–5",
        }
    }
    /// (case, item) variance of the truth.
    fn truth(self) -> (f64, f64) {
        match self {
            Model::Continuous => (0.5, 0.5),
            Model::Likert => (0.8, 0.2),
        }
    }
    fn observe(self, latent: f64) -> f64 {
        match self {
            Model::Continuous => latent,
            Model::Likert => (3.8 + latent).round().clamp(1.0, 5.0),
        }
    }
}

/// The fixed panel of the bar's null: error SDs from 0.40 to 0.60.
fn fixed_panel(k: usize) -> Vec<f64> {
    (0..k)
        .map(|j| 0.4 + 0.2 * j as f64 / (k - 1) as f64)
        .collect()
}

fn random_panel(rng: &mut SplitMix64, k: usize) -> Vec<f64> {
    (0..k)
        .map(|_| (0.25f64.ln() + 0.5 * normal(rng)).exp().sqrt())
        .collect()
}

/// One study: `cases` × `tasks`, clinicians of error SDs `sds`, the grader's error variance
/// `grader` (half shared by a case's tasks).
fn study(
    rng: &mut SplitMix64,
    model: Model,
    cases: usize,
    tasks: usize,
    sds: &[f64],
    grader: f64,
) -> StudySums {
    let (vc, vi) = model.truth();
    let half = (grader / 2.0).sqrt();
    let mut sums = StudySums::new(cases, sds.len());
    let mut scores = vec![0.0; sds.len()];
    for c in 0..cases {
        let case = vc.sqrt() * normal(rng);
        let shared = half * normal(rng);
        for _ in 0..tasks {
            let truth = case + vi.sqrt() * normal(rng);
            for (s, sd) in scores.iter_mut().zip(sds) {
                *s = model.observe(truth + sd * normal(rng));
            }
            let g = model.observe(truth + shared + half * normal(rng));
            sums.add(c, g, &scores);
        }
    }
    sums
}

fn r_of(s: &[f64]) -> f64 {
    let n = s[0];
    let (gg, mm) = (s[3] - s[1] * s[1] / n, s[4] - s[2] * s[2] / n);
    (s[5] - s[1] * s[2] / n) / (gg * mm).sqrt()
}

/// Population r of grader and clinicians' mean, and population ψ̄, at grader error variance
/// `grader`: analytic (continuous) or from one large population with fixed draws (Likert).
struct Population {
    model: Model,
    /// Per unit: case draw, grader shared draw, item draw, grader item draw, clinician draws.
    draws: Vec<[f64; 9]>,
}

impl Population {
    fn new(model: Model) -> Self {
        let mut rng = SplitMix64::new(20261129);
        let n = if model == Model::Likert { 400_000 } else { 0 };
        let draws = (0..n)
            .map(|_| std::array::from_fn(|_| normal(&mut rng)))
            .collect();
        Population { model, draws }
    }

    fn sums(&self, sds: &[f64], grader: f64, draws: &[[f64; 9]]) -> Vec<f64> {
        let (vc, vi) = self.model.truth();
        let half = (grader / 2.0).sqrt();
        let mut sums = StudySums::new(1, sds.len());
        let mut scores = vec![0.0; sds.len()];
        for d in draws {
            let truth = vc.sqrt() * d[0] + vi.sqrt() * d[2];
            for (j, (s, sd)) in scores.iter_mut().zip(sds).enumerate() {
                *s = self.model.observe(truth + sd * d[4 + j]);
            }
            let g = self.model.observe(truth + half * d[1] + half * d[3]);
            sums.add(0, g, &scores);
        }
        let mut out = sums.pair[0].to_vec();
        for j in &sums.held_out {
            let s = j[0];
            out.push(r_of(&s[..6]) - r_of(&[s[0], s[6], s[2], s[7], s[4], s[8]]));
        }
        out
    }

    fn r(&self, sds: &[f64], grader: f64) -> f64 {
        match self.model {
            Model::Continuous => {
                let (vc, vi) = self.model.truth();
                let t = vc + vi;
                let k = sds.len() as f64;
                let e = sds.iter().map(|s| s * s).sum::<f64>() / (k * k);
                t / ((t + grader) * (t + e)).sqrt()
            }
            Model::Likert => r_of(&self.sums(sds, grader, &self.draws)[..6]),
        }
    }

    /// ψ̄ over `panels` (each its clinicians' error SDs).
    fn psi(&self, panels: &[Vec<f64>], grader: f64) -> f64 {
        let (vc, vi) = self.model.truth();
        let t = vc + vi;
        let per_panel = |p: &Vec<f64>, draws: &[[f64; 9]]| -> f64 {
            match self.model {
                Model::Continuous => {
                    let k = p.len();
                    let total: f64 = p.iter().map(|s| s * s).sum();
                    p.iter()
                        .map(|s| {
                            let vm = t + (total - s * s) / ((k - 1) as f64).powi(2);
                            t / ((t + grader) * vm).sqrt() - t / ((t + s * s) * vm).sqrt()
                        })
                        .sum::<f64>()
                        / k as f64
                }
                Model::Likert => {
                    let out = self.sums(p, grader, draws);
                    out[6..].iter().sum::<f64>() / p.len() as f64
                }
            }
        };
        let chunk = (self.draws.len() / panels.len().max(1)).max(1);
        panels
            .par_iter()
            .enumerate()
            .map(|(i, p)| {
                let lo = (i * chunk).min(self.draws.len());
                let hi = ((i + 1) * chunk).min(self.draws.len());
                per_panel(p, &self.draws[lo..hi])
            })
            .sum::<f64>()
            / panels.len() as f64
    }
}

/// The grader error variance at which `f` (decreasing) equals `target`.
fn solve(f: impl Fn(f64) -> f64, target: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 4.0);
    assert!(f(lo) > target && f(hi) < target, "target out of range");
    for _ in 0..45 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `TIMING=1`: the time `error_rates` takes (the report's added cost) at the demo's size (288
/// items in 96 cases, 3 clinicians, Likert) and at 10,000 items in 5,000 cases with 4 clinicians
/// (the report benchmark's size), median of 5 runs each.
fn timing() {
    use calibration::error_rates::error_rates;
    for (cases, tasks, k) in [(96, 3, 3), (5000, 2, 4)] {
        let mut rng = SplitMix64::new(5);
        let sums = study(&mut rng, Model::Likert, cases, tasks, &fixed_panel(k), 0.3);
        let design = vec![tasks; cases];
        let mut times: Vec<f64> = (0..5)
            .map(|run| {
                let started = std::time::Instant::now();
                let rates = error_rates(&sums.pair, &sums, &design, BAR, MARGIN, 999, run);
                let took = started.elapsed().as_secs_f64();
                if run == 0 {
                    println!(
                        "{cases} cases × {tasks} items, {k} clinicians: bar {:?} ({} sims, note {:?}), non-inferiority {:?} ({} sims, note {:?})",
                        rates.bar.estimated,
                        rates.bar.simulations,
                        rates.bar.note,
                        rates.non_inferiority.estimated,
                        rates.non_inferiority.simulations,
                        rates.non_inferiority.note
                    );
                }
                took
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "  error_rates: median {:.3} s (min {:.3}, max {:.3})",
            times[2], times[0], times[4]
        );
    }
}

fn main() {
    if std::env::var("TIMING").is_ok() {
        timing();
        return;
    }
    let studies = env("STUDIES", 1000);
    let resamples = env("RESAMPLES", 999);
    let started = std::time::Instant::now();
    println!("{studies} studies per cell and claim, {resamples} case resamples per test; one-sided error in % (nominal 2.5; simulation SE ≈ {:.2} points at 2.5 %)\n", 100.0 * (0.025f64 * 0.975 / studies as f64).sqrt());
    println!("| model | cases × tasks | clinicians | bar: old (jackknife, t(G−1)) | bar: bootstrap-t (new) | non-inferior: t on Hillis df (old) | non-inferior: null-imposed simulation | non-inferior: t on min(Hillis df, G − 1) | non-inferior: both (new) |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for model in [Model::Continuous, Model::Likert] {
        let population = Population::new(model);
        for k in [3, 5] {
            let fixed = fixed_panel(k);
            let bar_grader = solve(|v| population.r(&fixed, v), BAR);
            let mut prng = SplitMix64::new(77 + k as u64);
            let panels: Vec<Vec<f64>> = (0..if model == Model::Likert { 400 } else { 20_000 })
                .map(|_| random_panel(&mut prng, k))
                .collect();
            let ni_grader = solve(|v| population.psi(&panels, v), -MARGIN);
            for cases in [12, 20, 40] {
                for tasks in [4, 10] {
                    // CELLS="12x4x5,20x10x3" runs those cells alone.
                    if let Ok(only) = std::env::var("CELLS") {
                        if !only.split(',').any(|c| c == format!("{cases}x{tasks}x{k}")) {
                            continue;
                        }
                    }
                    let cell = (cases * 1000 + tasks * 10 + k) as u64
                        + if model == Model::Likert { 1 << 32 } else { 0 };
                    let bar: Vec<(bool, bool)> = (0..studies)
                        .into_par_iter()
                        .map(|s| {
                            let mut rng = SplitMix64::new(seeded::mix(cell ^ (s as u64) << 20));
                            let sums = study(&mut rng, model, cases, tasks, &fixed, bar_grader);
                            let rows: Vec<Vec<f64>> =
                                sums.pair.iter().map(|p| p.to_vec()).collect();
                            let old = case_jackknife_fisher(&rows, |s| {
                                Some(r_of(s)).filter(|r| r.is_finite())
                            })
                            .is_ok_and(|j| j.low >= BAR);
                            let new = bar_test(&sums.pair, BAR, resamples, s as u64)
                                .is_ok_and(|t| t.claimed);
                            (old, new)
                        })
                        .collect();
                    let ni: Vec<(bool, bool, bool, bool)> = (0..studies)
                        .into_par_iter()
                        .map(|s| {
                            let mut rng =
                                SplitMix64::new(seeded::mix(cell ^ (s as u64) << 20 ^ 0xABCD));
                            let panel = random_panel(&mut rng, k);
                            let sums = study(&mut rng, model, cases, tasks, &panel, ni_grader);
                            let design = vec![tasks; cases];
                            match non_inferiority_test(&sums, &design, MARGIN, resamples, s as u64)
                            {
                                Ok(t) => (
                                    t.p_t <= 0.025,
                                    t.p_null.is_some_and(|p| p <= 0.025),
                                    t.p_t_cases <= 0.025,
                                    t.claimed,
                                ),
                                Err(_) => (false, false, false, false),
                            }
                        })
                        .collect();
                    let pct = |n: usize| format!("{:.1}", 100.0 * n as f64 / studies as f64);
                    println!(
                        "| {} | {cases} × {tasks} | {k} | {} | {} | {} | {} | {} | {} |",
                        model.name(),
                        pct(bar.iter().filter(|b| b.0).count()),
                        pct(bar.iter().filter(|b| b.1).count()),
                        pct(ni.iter().filter(|b| b.0).count()),
                        pct(ni.iter().filter(|b| b.1).count()),
                        pct(ni.iter().filter(|b| b.2).count()),
                        pct(ni.iter().filter(|b| b.3).count()),
                    );
                }
            }
        }
    }
    println!("\n{:.0} s", started.elapsed().as_secs_f64());
}
