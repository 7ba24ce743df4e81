//! Deterministic pseudo-randomness: the demo must be byte-identical on every run and platform, so
//! it uses SplitMix64 (Steele, Lea & Flood 2014) rather than a generator whose stream may change
//! between crate versions.

/// A small sequential generator; every consumer seeds its own from a label so that adding a case
/// does not shift the random stream of the others.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose stream depends only on `label`.
    pub(crate) fn from_label(label: &str) -> Self {
        SplitMix64(fnv1a(label.as_bytes()))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal by Box–Muller.
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    pub(crate) fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }

    /// Uniform index below `n` (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n.saturating_sub(1))
    }
}

/// The SplitMix64 finaliser: a bijective avalanche of all 64 bits.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, to turn labels into seeds and UIDs.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01B3)
    })
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
