//! Cluster bootstrap: percentile and BCa intervals that resample cases, not items.
//!
//! One case carries several tasks and responses, so items of a case are not independent; each
//! resample draws whole clusters with replacement. Statistics are computed from additive
//! per-cluster sums (a resample's sums are the sum of its clusters' sums), which makes a resample
//! O(clusters × sums) and the jackknife for BCa's acceleration O(clusters).
//!
//! Reproducibility: resample b draws from its own generator seeded by (seed, b), so the numbers
//! depend on the seed alone, never on the thread count or scheduling.

use crate::dist;
use rayon::prelude::*;
use seeded::SplitMix64;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use crate::progress::{NoProgress, Progress};

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapConfig {
    pub resamples: usize,
    pub seed: u64,
}

/// A bootstrap interval of one statistic (95 %).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapInterval {
    pub estimate: f64,
    pub percentile_low: f64,
    pub percentile_high: f64,
    /// Absent when the acceleration or bias correction is undefined.
    pub bca_low: Option<f64>,
    pub bca_high: Option<f64>,
    pub resamples: usize,
    /// Resamples on which the statistic was undefined (e.g. zero variance), left out.
    pub resamples_undefined: usize,
    /// Clusters (cases) resampled.
    pub clusters: usize,
}

/// Resample `resample`'s own stream, so resamples can run in any order (in parallel) and each
/// draws the same clusters.
fn generator_for(seed: u64, resample: usize) -> SplitMix64 {
    let mut mixer = SplitMix64::new(seed ^ (resample as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    SplitMix64::new(mixer.next_u64())
}

/// Bootstraps `statistics` (computed from summed cluster sums; `None` when undefined) over
/// `cluster_sums` (one equal-length vector per cluster). Returns one interval per statistic, or
/// `None` for a statistic undefined on the full data or on every resample.
pub fn cluster_bootstrap<F>(
    cluster_sums: &[Vec<f64>],
    statistics: F,
    count: usize,
    config: BootstrapConfig,
    progress: &dyn Progress,
) -> Vec<Option<BootstrapInterval>>
where
    F: Fn(&[f64]) -> Vec<Option<f64>> + Sync,
{
    let clusters = cluster_sums.len();
    let width = cluster_sums.first().map_or(0, Vec::len);
    if clusters < 2 || config.resamples < 2 || cluster_sums.iter().any(|c| c.len() != width) {
        return vec![None; count];
    }
    let mut full = vec![0.0; width];
    for c in cluster_sums {
        add(&mut full, c);
    }
    let estimates = statistics(&full);
    let layout = TiledSums::new(cluster_sums, width);

    progress.phase("bootstrapping", config.resamples as u64);
    let done = AtomicUsize::new(0);
    let replicates: Vec<Vec<Option<f64>>> = (0..config.resamples)
        .into_par_iter()
        .map_init(
            || {
                let distinct = vec![0.0; layout.tiles.len() * TILE];
                (Vec::with_capacity(clusters), distinct, vec![0.0; width])
            },
            |(draws, distinct, sums), b| {
                let mut rng = generator_for(config.seed, b);
                draws.clear();
                draws.extend((0..clusters).map(|_| rng.below(clusters)));
                layout.resample(draws, distinct, sums);
                let values = statistics(sums);
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                if finished.is_multiple_of(64) || finished == config.resamples {
                    progress.advance(finished as u64);
                }
                values
            },
        )
        .collect();

    // Leave-one-cluster-out values for the BCa acceleration.
    let jackknife: Vec<Vec<Option<f64>>> = cluster_sums
        .par_iter()
        .map_init(
            || vec![0.0; width],
            |sums, c| {
                for ((s, f), v) in sums.iter_mut().zip(&full).zip(c) {
                    *s = f - v;
                }
                statistics(sums)
            },
        )
        .collect();

    (0..count)
        .map(|s| {
            let estimate = estimates
                .get(s)
                .copied()
                .flatten()
                .filter(|v| v.is_finite())?;
            let mut values: Vec<f64> = replicates
                .iter()
                .filter_map(|r| r.get(s).copied().flatten())
                .filter(|v| v.is_finite())
                .collect();
            if values.len() < 2 {
                return None;
            }
            values.sort_by(f64::total_cmp);
            let jack: Vec<f64> = jackknife
                .iter()
                .filter_map(|r| r.get(s).copied().flatten())
                .filter(|v| v.is_finite())
                .collect();
            let (bca_low, bca_high) =
                bca(&values, estimate, &jack).map_or((None, None), |(lo, hi)| (Some(lo), Some(hi)));
            Some(BootstrapInterval {
                estimate,
                percentile_low: quantile(&values, 0.025),
                percentile_high: quantile(&values, 0.975),
                bca_low,
                bca_high,
                resamples: config.resamples,
                resamples_undefined: config.resamples - values.len(),
                clusters,
            })
        })
        .collect()
}

/// Columns summed together per pass: 16 doubles are two cache lines, and their running sums
/// still fit in the registers (16 SSE registers of two doubles) while a resample's draws are
/// replayed; twice the columns per pass halves the passes over the draws (each reads the draw
/// and checks it) compared with one line per pass.
const TILE: usize = 16;

/// One cluster's values of one tile, aligned so that it occupies whole cache lines (unaligned,
/// every other cluster's line straddled one more).
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Line([f64; TILE]);

/// The per-cluster sums laid out for resampling. Columns that are identical in every cluster
/// (e.g. the item count, repeated for every held-out clinician) are summed once. The distinct
/// columns are cut into tiles of [`TILE`], each tile stored cluster by cluster in one cache line,
/// so that one pass over a resample's draws reads a block small enough to stay in cache.
///
/// Every column is still summed from 0.0 in the order of the draws, so a resample's sums are the
/// same to the last bit as adding whole clusters one after another.
struct TiledSums {
    /// For each column, its distinct column.
    distinct_of: Vec<usize>,
    /// Per tile: one line of [`TILE`] values per cluster (distinct columns, padded with zeros).
    tiles: Vec<Vec<Line>>,
}

impl TiledSums {
    fn new(cluster_sums: &[Vec<f64>], width: usize) -> TiledSums {
        let mut first_with: HashMap<Vec<u64>, usize> = HashMap::new();
        let mut distinct: Vec<usize> = Vec::new();
        let distinct_of = (0..width)
            .map(|column| {
                let bits: Vec<u64> = cluster_sums.iter().map(|c| c[column].to_bits()).collect();
                *first_with.entry(bits).or_insert_with(|| {
                    distinct.push(column);
                    distinct.len() - 1
                })
            })
            .collect();
        let tiles = distinct
            .chunks(TILE)
            .map(|columns| {
                cluster_sums
                    .iter()
                    .map(|sums| {
                        let mut line = [0.0; TILE];
                        for (value, &column) in line.iter_mut().zip(columns) {
                            *value = sums[column];
                        }
                        Line(line)
                    })
                    .collect()
            })
            .collect();
        TiledSums { distinct_of, tiles }
    }

    /// Writes into `sums` (one per column) the sums of the clusters in `draws`; `distinct` is
    /// scratch space of one [`TILE`] per tile.
    fn resample(&self, draws: &[usize], distinct: &mut [f64], sums: &mut [f64]) {
        for (tile, out) in self.tiles.iter().zip(distinct.chunks_exact_mut(TILE)) {
            // Draws are below the cluster count, so `get` never misses; unlike indexing it has
            // no panic path. Folding by value lets the running sums live in registers.
            let running = draws.iter().filter_map(|&c| tile.get(c)).fold(
                [0.0; TILE],
                |mut running, Line(line)| {
                    for i in 0..TILE {
                        running[i] += line[i];
                    }
                    running
                },
            );
            out.copy_from_slice(&running);
        }
        for (s, &d) in sums.iter_mut().zip(&self.distinct_of) {
            *s = distinct[d];
        }
    }
}

fn add(into: &mut [f64], values: &[f64]) {
    for (a, b) in into.iter_mut().zip(values) {
        *a += b;
    }
}

/// Linear interpolation between order statistics (numpy's default "linear" method).
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    let position = p * (sorted.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = position.ceil() as usize;
    let fraction = position - lower as f64;
    sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
}

/// Relative distance within which a replicate counts as equal to the estimate in BCa's bias
/// correction (far above double rounding of sums, far below any difference that matters).
const TIE_TOLERANCE: f64 = 1e-9;

/// Efron's BCa interval: bias correction z0 from the share of replicates below the estimate,
/// acceleration from the jackknife skewness.
fn bca(sorted: &[f64], estimate: f64, jackknife: &[f64]) -> Option<(f64, f64)> {
    let b = sorted.len() as f64;
    // A replicate is tied with the estimate within rounding: the same resampled content summed in
    // another order differs in the last bits, and must not count as below or above.
    let tolerance = TIE_TOLERANCE * estimate.abs().max(1.0);
    let below = sorted.partition_point(|&v| v < estimate - tolerance) as f64;
    let equal = sorted.partition_point(|&v| v <= estimate + tolerance) as f64 - below;
    // Ties with the estimate count half, so a discrete statistic is not pushed to one side.
    let share = (below + equal / 2.0) / b;
    if share <= 0.0 || share >= 1.0 || jackknife.len() < 3 {
        return None;
    }
    let z0 = dist::normal_quantile(share);
    let mean = jackknife.iter().sum::<f64>() / jackknife.len() as f64;
    let (mut cube, mut square) = (0.0, 0.0);
    for v in jackknife {
        let d = mean - v;
        cube += d * d * d;
        square += d * d;
    }
    if square <= 0.0 {
        return None;
    }
    let acceleration = cube / (6.0 * square.powf(1.5));
    let adjusted = |alpha: f64| {
        let z = dist::normal_quantile(alpha);
        dist::normal_cdf(z0 + (z0 + z) / (1.0 - acceleration * (z0 + z)))
    };
    let (lo, hi) = (adjusted(0.025), adjusted(0.975));
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    Some((
        quantile(sorted, lo.clamp(0.0, 1.0)),
        quantile(sorted, hi.clamp(0.0, 1.0)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiled_resample_gives_the_sums_of_adding_whole_clusters_to_the_bit() {
        // 20 columns (two tiles), columns 3 and 7 repeating 0 in every cluster, values of
        // mixed magnitude so that the order of additions shows in the last bits.
        let clusters: Vec<Vec<f64>> = (0..37)
            .map(|c| {
                let c = c as f64;
                let n = 1.0 + c % 3.0;
                vec![
                    n,
                    0.1 * c - 1.7,
                    1e6 / (c + 0.3),
                    n,
                    (c * 0.7).sin(),
                    c * c * 1e-3,
                    -c / 7.0,
                    n,
                    1.0 / 3.0 + c,
                    (c + 1.0).ln(),
                    2.5,
                ]
                .into_iter()
                .chain((0..9).map(|k| (c + k as f64).sqrt() * 1e3 / (k as f64 + 1.0)))
                .collect()
            })
            .collect();
        let width = clusters[0].len();
        let layout = TiledSums::new(&clusters, width);
        assert_eq!(layout.tiles.len(), 2, "18 distinct columns make two tiles");
        let mut rng = generator_for(7, 3);
        let draws: Vec<usize> = (0..clusters.len())
            .map(|_| rng.below(clusters.len()))
            .collect();
        let mut expected = vec![0.0; width];
        for &c in &draws {
            add(&mut expected, &clusters[c]);
        }
        let mut distinct = vec![0.0; layout.tiles.len() * TILE];
        let mut sums = vec![0.0; width];
        layout.resample(&draws, &mut distinct, &mut sums);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&sums), bits(&expected));
    }

    #[test]
    fn bca_counts_replicates_within_rounding_of_the_estimate_as_ties() {
        // Half of the replicates equal the estimate exactly, or one rounding step off it.
        let spread = [0.05, 0.07, 0.08, 0.12, 0.13, 0.15];
        let exact: Vec<f64> = spread.iter().copied().chain([0.1; 6]).collect();
        // The same ties one rounding step below, as sums added in another order come out.
        let noisy: Vec<f64> = spread
            .iter()
            .copied()
            .chain([0.1, 0.1])
            .chain([0.09999999999999999; 4])
            .collect();
        let sort = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let jackknife = [0.09, 0.1, 0.11, 0.1, 0.095, 0.108];
        let with_exact_ties = bca(&sort(exact), 0.1, &jackknife).expect("BCa");
        let with_rounding = bca(&sort(noisy), 0.1, &jackknife).expect("BCa");
        assert!(
            (with_exact_ties.0 - with_rounding.0).abs() < 1e-15
                && (with_exact_ties.1 - with_rounding.1).abs() < 1e-15,
            "{with_exact_ties:?} vs {with_rounding:?}"
        );
    }
}
