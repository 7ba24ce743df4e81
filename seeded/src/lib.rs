//! Seeded pseudo-random streams that are the same on every platform, Rust version and release.
//!
//! Reproducibility is part of what these streams produce: a bootstrap interval is reported with
//! its seed, a dev/test split must put an item on the same side next year, the demo study is
//! byte-identical on every run, and two load runs send the same edits. A generator from a crate
//! whose stream may change between versions cannot promise that, so the one generator
//! (SplitMix64, Steele, Lea & Flood 2014) and the one string hash (FNV-1a) live here, once.

/// SplitMix64's increment, the golden ratio in 64 bits.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A small sequential generator. Seed each consumer from its own label or number so that adding
/// a consumer does not shift the stream of the others.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream of `seed`.
    pub const fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The stream of a label (its FNV-1a hash as the seed).
    pub fn from_label(label: &str) -> Self {
        SplitMix64(fnv1a(label.as_bytes()))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        mix(self.0)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..bound` by the multiply-shift method (bias below 2⁻³² for any bound this
    /// program meets); 0 when `bound` is 0.
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }
}

/// SplitMix64's finaliser: a bijective avalanche of all 64 bits.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a (64-bit) over `bytes`: labels and ids into seeds.
pub fn fnv1a<'a>(bytes: impl IntoIterator<Item = &'a u8>) -> u64 {
    bytes.into_iter().fold(0xCBF2_9CE4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of SplitMix64 seeded with 1234567, from the reference C code
    /// (Vigna, <https://prng.di.unimi.it/splitmix64.c>), as quoted in the test vectors of
    /// several independent ports.
    #[test]
    fn the_stream_is_the_reference_one() {
        let mut generator = SplitMix64::new(1_234_567);
        let first: Vec<u64> = (0..5).map(|_| generator.next_u64()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    /// FNV-1a's published test vectors (Fowler, Noll & Vo, draft-eastlake-fnv: "", "a", "foobar").
    #[test]
    fn the_hash_is_fnv1a() {
        assert_eq!(fnv1a(b""), 0xCBF2_9CE4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xAF63_DC4C_8601_EC8C);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_F739_67E8);
    }

    #[test]
    fn unit_and_below_stay_in_range() {
        let mut generator = SplitMix64::from_label("range");
        for bound in [1, 2, 7, 1000] {
            for _ in 0..1000 {
                assert!(generator.below(bound) < bound);
                let u = generator.unit();
                assert!((0.0..1.0).contains(&u));
            }
        }
        assert_eq!(generator.below(0), 0);
    }
}
