//! Deterministic pseudo-randomness: the demo must be byte-identical on every run and platform, so
//! it draws from the workspace's one seeded generator (`seeded`), whose stream never changes.

pub(crate) use seeded::fnv1a;
use seeded::mix;

/// The demo's draws over the shared generator, each seeded from a label so that adding a case
/// does not shift the random stream of the others.
pub(crate) struct DemoRng(seeded::SplitMix64);

impl DemoRng {
    /// A generator whose stream depends only on `label`.
    pub(crate) fn from_label(label: &str) -> Self {
        DemoRng(seeded::SplitMix64::from_label(label))
    }

    /// Standard normal by Box–Muller.
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.0.unit();
        let u2 = self.0.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    pub(crate) fn chance(&mut self, probability: f64) -> bool {
        self.0.unit() < probability
    }

    /// An index below `n` (n > 0), scaled from [`seeded::SplitMix64::unit`] rather than by
    /// multiply-shift: the demo's bytes are pinned, and this is how they were drawn.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.0.unit() * n as f64) as usize).min(n.saturating_sub(1))
    }
}

/// Approximately standard-normal noise for voxel `index` of a stream `seed`, without sequential
/// state so that each voxel's noise is independent of evaluation order. The sum of four uniforms
/// (Irwin–Hall, rescaled to unit variance) is close enough to Gaussian for image noise and far
/// cheaper than Box–Muller in unoptimised builds.
pub(crate) fn voxel_noise(seed: u64, index: u64) -> f32 {
    let bits = mix(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let sum: u32 = (0..4)
        .map(|lane| ((bits >> (16 * lane)) & 0xFFFF) as u32)
        .sum();
    // Four uniforms on [0, 65535]: mean 2 * 65535, variance 4 * 65536^2 / 12.
    (sum as f32 - 131_070.0) / 37_837.2
}

/// A DICOM UID under the 2.25 root (ITU-T X.667): the decimal form of a 128-bit value derived
/// from `label`, so the same label always yields the same UID.
pub(crate) fn uid(label: &str) -> String {
    let high = mix(fnv1a(label.as_bytes()));
    let low = mix(high ^ fnv1a(format!("{label}#low").as_bytes()));
    let value = (u128::from(high) << 64) | u128::from(low);
    format!("2.25.{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voxel_noise_has_unit_variance_and_zero_mean() {
        let samples: Vec<f64> = (0..200_000).map(|i| f64::from(voxel_noise(7, i))).collect();
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        let variance =
            samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / samples.len() as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((variance - 1.0).abs() < 0.02, "variance {variance}");
    }

    #[test]
    fn uids_are_valid_and_distinct() {
        let a = uid("case-1/series-1");
        let b = uid("case-1/series-2");
        assert_ne!(a, b);
        for u in [&a, &b] {
            assert!(u.len() <= 64, "{u}");
            assert!(u.starts_with("2.25."));
            let tail = &u[5..];
            assert!(tail.chars().all(|c| c.is_ascii_digit()));
            // No leading zero in a UID component (PS3.5 §9.1).
            assert!(!tail.starts_with('0') || tail == "0");
        }
    }
}
