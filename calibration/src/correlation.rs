//! Pearson, Spearman and Kendall correlation with their intervals and p-values.

use crate::dist;
use crate::estimate::Estimate;
use serde::Serialize;

/// Pearson's r with a 95 % Fisher-z interval and the two-sided p of the t test (df = n − 2).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Pearson {
    pub r: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p: f64,
    pub n: usize,
}

/// Spearman's ρ (Pearson on average ranks) with a 95 % Fisher-z interval using the
/// Bonett–Wright (2000) standard error sqrt((1 + ρ²/2)/(n − 3)); p from the t approximation with
/// n − 2 df (as scipy.stats.spearmanr).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spearman {
    pub rho: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p: f64,
    pub n: usize,
}

/// Kendall's τ-b and its two-sided p: exact (permutation distribution) without ties when n ≤ 33,
/// otherwise the normal approximation with the tie-corrected variance (as scipy.stats.kendalltau).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct KendallTauB {
    pub tau: f64,
    pub p: f64,
    pub n: usize,
    pub p_method: PMethod,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum PMethod {
    Exact,
    Asymptotic,
}

fn check_pairs(x: &[f64], y: &[f64], min_n: usize) -> Result<usize, Estimate<()>> {
    let n = x.len().min(y.len());
    if x.len() != y.len() {
        return Err(Estimate::not_estimable(
            n,
            format!(
                "paired series differ in length ({} vs {})",
                x.len(),
                y.len()
            ),
        ));
    }
    if x.iter().chain(y).any(|v| !v.is_finite()) {
        return Err(Estimate::not_estimable(n, "a score is not a finite number"));
    }
    if n < min_n {
        return Err(Estimate::not_estimable(
            n,
            format!("needs at least {min_n} paired items, has {n}"),
        ));
    }
    Ok(n)
}

fn fail<T>(e: Estimate<()>) -> Estimate<T> {
    match e {
        Estimate::NotEstimable { n, not_estimable } => Estimate::NotEstimable { n, not_estimable },
        Estimate::Value(()) => unreachable!("check_pairs only returns NotEstimable as an error"),
    }
}

/// The raw correlation coefficient, or `None` when either series has zero variance.
pub(crate) fn correlation_coefficient(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

fn fisher_interval(r: f64, se: f64) -> (f64, f64) {
    if r.abs() >= 1.0 {
        return (r, r);
    }
    let z = r.atanh();
    let half = dist::z_975() * se;
    ((z - half).tanh(), (z + half).tanh())
}

fn correlation_t_p(r: f64, n: usize) -> f64 {
    if r.abs() >= 1.0 {
        return 0.0;
    }
    let df = (n - 2) as f64;
    let t = r * (df / (1.0 - r * r)).sqrt();
    dist::t_two_sided_p(t, df).unwrap_or(f64::NAN)
}

/// Pearson's r of paired scores. Needs n ≥ 4 (the Fisher-z SE is 1/sqrt(n − 3)).
pub fn pearson(x: &[f64], y: &[f64]) -> Estimate<Pearson> {
    let n = match check_pairs(x, y, 4) {
        Ok(n) => n,
        Err(e) => return fail(e),
    };
    let Some(r) = correlation_coefficient(x, y) else {
        return Estimate::not_estimable(n, "one of the two series has zero variance");
    };
    let (ci_low, ci_high) = fisher_interval(r, 1.0 / ((n - 3) as f64).sqrt());
    Estimate::Value(Pearson {
        r,
        ci_low,
        ci_high,
        p: correlation_t_p(r, n),
        n,
    })
}

/// Average ranks (1-based), ties sharing the mean of the ranks they span.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold equal values: ranks start+1..=end, mean (start+1+end)/2.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// Spearman's ρ of paired scores. Needs n ≥ 4.
pub fn spearman(x: &[f64], y: &[f64]) -> Estimate<Spearman> {
    let n = match check_pairs(x, y, 4) {
        Ok(n) => n,
        Err(e) => return fail(e),
    };
    let (rx, ry) = (average_ranks(x), average_ranks(y));
    let Some(rho) = correlation_coefficient(&rx, &ry) else {
        return Estimate::not_estimable(n, "one of the two series is constant");
    };
    let se = ((1.0 + rho * rho / 2.0) / (n - 3) as f64).sqrt();
    let (ci_low, ci_high) = fisher_interval(rho, se);
    Estimate::Value(Spearman {
        rho,
        ci_low,
        ci_high,
        p: correlation_t_p(rho, n),
        n,
    })
}

/// Number of tied pairs Σ t(t−1)/2 and the sums scipy's variance needs, over runs of equal
/// values in an already sorted sequence.
struct TieSums {
    pairs: f64,
    v1: f64,
    v2: f64,
}

fn tie_sums(sorted: &[f64]) -> TieSums {
    let mut sums = TieSums {
        pairs: 0.0,
        v1: 0.0,
        v2: 0.0,
    };
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && sorted[end] == sorted[start] {
            end += 1;
        }
        let t = (end - start) as f64;
        sums.pairs += t * (t - 1.0) / 2.0;
        sums.v1 += t * (t - 1.0) * (t - 2.0);
        sums.v2 += t * (t - 1.0) * (2.0 * t + 5.0);
        start = end;
    }
    sums
}

/// Sorts `values` in place by merge sort and returns the number of inversions (swaps), which is
/// the count of discordant pairs once the partner series is in order (Knight 1966).
fn merge_count(values: &mut [f64], buffer: &mut [f64]) -> u64 {
    let n = values.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut swaps = {
        let (left, right) = values.split_at_mut(mid);
        let (bl, br) = buffer.split_at_mut(mid);
        merge_count(left, bl) + merge_count(right, br)
    };
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < mid && j < n {
        if values[j] < values[i] {
            buffer[k] = values[j];
            swaps += (mid - i) as u64;
            j += 1;
        } else {
            buffer[k] = values[i];
            i += 1;
        }
        k += 1;
    }
    buffer[k..k + mid - i].copy_from_slice(&values[i..mid]);
    k += mid - i;
    buffer[k..k + n - j].copy_from_slice(&values[j..n]);
    values.copy_from_slice(&buffer[..n]);
    swaps
}

/// Kendall's τ-b in O(n log n) (Knight's algorithm). Needs n ≥ 3.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Estimate<KendallTauB> {
    let n = match check_pairs(x, y, 3) {
        Ok(n) => n,
        Err(e) => return fail(e),
    };
    let mut pairs: Vec<(f64, f64)> = x.iter().copied().zip(y.iter().copied()).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));

    // Pairs tied on both x and y.
    let mut joint_ties = 0.0;
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && pairs[end] == pairs[start] {
            end += 1;
        }
        let t = (end - start) as f64;
        joint_ties += t * (t - 1.0) / 2.0;
        start = end;
    }
    let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let x_ties = tie_sums(&xs);
    let mut ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let mut buffer = vec![0.0; n];
    let swaps = merge_count(&mut ys, &mut buffer) as f64;
    let y_ties = tie_sums(&ys);

    let total = (n * (n - 1) / 2) as f64;
    let denominator = ((total - x_ties.pairs) * (total - y_ties.pairs)).sqrt();
    if denominator <= 0.0 {
        return Estimate::not_estimable(n, "one of the two series is constant");
    }
    let concordant_minus_discordant =
        total - x_ties.pairs - y_ties.pairs + joint_ties - 2.0 * swaps;
    let tau = (concordant_minus_discordant / denominator).clamp(-1.0, 1.0);

    let no_ties = x_ties.pairs == 0.0 && y_ties.pairs == 0.0;
    let discordant = swaps;
    let closest_tail = discordant.min(total - discordant);
    let (p, p_method) = if no_ties && (n <= 33 || closest_tail <= 1.0) {
        (kendall_exact_p(n, closest_tail as usize), PMethod::Exact)
    } else {
        let nf = n as f64;
        let m = nf * (nf - 1.0);
        let variance = (m * (2.0 * nf + 5.0) - x_ties.v2 - y_ties.v2) / 18.0
            + 2.0 * x_ties.pairs * y_ties.pairs / m
            + x_ties.v1 * y_ties.v1 / (9.0 * m * (nf - 2.0));
        if variance <= 0.0 {
            return Estimate::not_estimable(n, "the variance of the Kendall statistic is zero");
        }
        (
            dist::normal_two_sided_p(concordant_minus_discordant / variance.sqrt()),
            PMethod::Asymptotic,
        )
    };
    Estimate::Value(KendallTauB {
        tau,
        p,
        n,
        p_method,
    })
}

/// Two-sided exact p for `c` = min(discordant, concordant) pairs among n untied items: twice the
/// probability of at most `c` inversions in a uniformly random permutation (Mahonian numbers).
fn kendall_exact_p(n: usize, c: usize) -> f64 {
    let total = n * (n - 1) / 2;
    if n <= 2 || 2 * c == total {
        return 1.0;
    }
    // probabilities[k] = P(k inversions) among permutations of j items, built up j = 1..=n;
    // only counts up to c matter.
    let mut probabilities = vec![0.0f64; c + 1];
    probabilities[0] = 1.0;
    for j in 2..=n {
        // Inserting item j adds 0..j-1 inversions with equal probability.
        let mut next = vec![0.0f64; c + 1];
        let mut window = 0.0;
        for k in 0..=c {
            window += probabilities[k];
            if k >= j {
                window -= probabilities[k - j];
            }
            next[k] = window / j as f64;
        }
        probabilities = next;
    }
    (2.0 * probabilities.iter().sum::<f64>()).min(1.0)
}
