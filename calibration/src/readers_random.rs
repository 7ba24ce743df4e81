//! "As good as a clinician", with clinicians and cases random: the grader as a fixed reader
//! against random readers ([`crate::mrmc::fixed_reader_vs_random_readers`], Hillis 2007's
//! single-treatment form, RJafroc's 1T-RRRC).
//!
//! Why: the like-for-like ceiling ([`crate::report::Ceiling`]) holds the study's clinicians fixed,
//! so its claim is about *these* clinicians. With three clinicians whose agreement with the others
//! differs, the reader term alone can be several times the margin; a claim about *a* clinician
//! has to carry it.
//!
//! Figure of merit of held-out clinician j: Pearson r of j with the mean of the other clinicians,
//! on the items the grader, j and another clinician scored; the grader's counterpart is its r with
//! that same mean on the same items. ψⱼ = r(grader, mean₋ⱼ) − r(j, mean₋ⱼ). Case covariances come
//! from the delete-one-case jackknife (a case's items leave together). Each clinician's items are
//! summed per case (n, Σ, Σ², cross-products), so leaving a case out is a subtraction: the whole
//! analysis is O(items + clinicians² · cases).

use crate::estimate::Estimate;
use crate::mrmc::fixed_reader_vs_random_readers;
use crate::report::r_from_sums;
use serde::Serialize;
use std::collections::BTreeMap;

/// One item of held-out clinician j: the grader's score, j's score and the other clinicians'
/// mean on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldOutItem {
    pub item: usize,
    pub grader: f64,
    pub held_out: f64,
    pub others_mean: f64,
}

/// The grader minus a typical clinician, readers and cases random (`verdict.readers_random`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadersRandom {
    /// Mean over clinicians of r(grader, mean of the others) − r(clinician, mean of the others).
    pub estimate: f64,
    /// Its 95 % interval with clinicians and cases random.
    pub low: f64,
    pub high: f64,
    /// Hillis's degrees of freedom of the interval's t; `null` in JSON when infinite (the
    /// clinicians' differences do not vary at all, so only the cases' variance is left).
    pub df: f64,
    /// Clinicians whose difference is estimable on all cases and with each case left out.
    pub n_readers: usize,
    /// Cases holding an item of one of those clinicians.
    pub n_cases: usize,
    pub method: String,
    /// `low` > −margin: the grader is not worse than a clinician by more than the margin
    /// (one-sided α = 0.025), the margin of the fixed-clinician comparison.
    pub non_inferior: bool,
}

impl ReadersRandom {
    /// The claim in plain words, for the verdict's summary.
    pub fn sentence(&self, margin: f64) -> String {
        format!(
            " Taking the clinicians as a sample of clinicians (a clinician, not these {} clinicians; {} cases), the grader's r minus a clinician's is {:+.2} ({:+.2} to {:+.2}): {}.",
            self.n_readers,
            self.n_cases,
            self.estimate,
            self.low,
            self.high,
            if self.non_inferior {
                format!("non-inferior to a clinician at a margin of {margin:.2}")
            } else {
                format!("non-inferiority to a clinician at a margin of {margin:.2} is not shown")
            }
        )
    }
}

/// Sums of one clinician's items: n, Σg, Σm, Σg², Σm², Σgm, Σh, Σh², Σhm (g grader, h held-out
/// clinician, m the others' mean), centred on that clinician's means for accuracy.
const SUMS: usize = 9;

fn add(s: &mut [f64; SUMS], g: f64, h: f64, m: f64) {
    for (slot, v) in s
        .iter_mut()
        .zip([1.0, g, m, g * g, m * m, g * m, h, h * h, h * m])
    {
        *slot += v;
    }
}

/// ψ from sums: r(grader, mean) − r(clinician, mean), `None` where either r is undefined.
fn psi(s: &[f64; SUMS]) -> Option<f64> {
    let grader = r_from_sums(&[s[0], s[1], s[2], s[3], s[4], s[5]])?;
    let clinician = r_from_sums(&[s[0], s[6], s[2], s[7], s[4], s[8]])?;
    Some(grader - clinician)
}

/// ψ on all of a clinician's cases and without each of them.
struct Clinician {
    psi: f64,
    without: BTreeMap<usize, f64>,
}

fn clinician(
    rows: &[HeldOutItem],
    case_of: &BTreeMap<&str, usize>,
    cases: &[&str],
) -> Option<Clinician> {
    let n = rows.len() as f64;
    let mean = |f: fn(&HeldOutItem) -> f64| rows.iter().map(f).sum::<f64>() / n;
    let (gc, hc, mc) = (
        mean(|r| r.grader),
        mean(|r| r.held_out),
        mean(|r| r.others_mean),
    );
    let mut per_case: BTreeMap<usize, [f64; SUMS]> = BTreeMap::new();
    let mut total = [0.0; SUMS];
    for r in rows {
        let (g, h, m) = (r.grader - gc, r.held_out - hc, r.others_mean - mc);
        add(
            per_case
                .entry(case_of[cases[r.item]])
                .or_insert([0.0; SUMS]),
            g,
            h,
            m,
        );
        add(&mut total, g, h, m);
    }
    let without = per_case
        .iter()
        .map(|(&case, s)| {
            let mut rest = total;
            rest.iter_mut().zip(s).for_each(|(t, c)| *t -= c);
            Some((case, psi(&rest)?))
        })
        .collect::<Option<BTreeMap<_, _>>>()?;
    Some(Clinician {
        psi: psi(&total)?,
        without,
    })
}

/// The readers-random comparison from each held-out clinician's items (`rows[j]`), the case of
/// every item (`cases[item]`) and the non-inferiority margin. Not estimable, with the reason,
/// below 3 clinicians or 3 cases.
pub fn readers_random(
    rows: &[Vec<HeldOutItem>],
    cases: &[&str],
    margin: f64,
) -> Estimate<ReadersRandom> {
    let case_of: BTreeMap<&str, usize> = rows
        .iter()
        .flatten()
        .map(|r| cases[r.item])
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .enumerate()
        .map(|(i, c)| (c, i))
        .collect();
    let clinicians: Vec<Clinician> = rows
        .iter()
        .filter_map(|r| clinician(r, &case_of, cases))
        .collect();
    let left_out = rows.len() - clinicians.len();
    // Only cases holding an item of an included clinician count.
    let used: Vec<usize> = clinicians
        .iter()
        .flat_map(|c| c.without.keys().copied())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let n_items = rows
        .iter()
        .flatten()
        .map(|r| r.item)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if clinicians.len() < 3 {
        return Estimate::not_estimable(
            n_items,
            format!(
                "needs at least 3 clinicians whose r with the others' mean (and the grader's on the same items) is estimable on all cases and with any one case left out (has {})",
                clinicians.len()
            ),
        );
    }
    if used.len() < 3 {
        return Estimate::not_estimable(
            n_items,
            format!(
                "needs at least 3 cases holding a grader–clinician pair (has {})",
                used.len()
            ),
        );
    }
    let psi: Vec<f64> = clinicians.iter().map(|c| c.psi).collect();
    // A clinician without items in a case keeps ψ when that case is left out.
    let jackknife: Vec<Vec<f64>> = clinicians
        .iter()
        .map(|c| {
            used.iter()
                .map(|k| *c.without.get(k).unwrap_or(&c.psi))
                .collect()
        })
        .collect();
    match fixed_reader_vs_random_readers(&psi, &jackknife) {
        Ok(a) => Estimate::Value(ReadersRandom {
            estimate: a.estimate,
            low: a.low,
            high: a.high,
            df: a.df,
            n_readers: a.n_readers,
            n_cases: a.n_cases,
            method: format!(
                "Obuchowski–Rockette, the grader a fixed reader against random clinicians (Hillis 2007), delete-one-case jackknife, t({:.1}) by Hillis's df, {} clinicians{}, {} cases",
                a.df,
                a.n_readers,
                match left_out {
                    0 => String::new(),
                    n => format!(" ({n} left out: r not estimable without one of their cases)"),
                },
                a.n_cases
            ),
            non_inferior: a.low > -margin,
        }),
        Err(reason) => Estimate::not_estimable(n_items, reason),
    }
}
