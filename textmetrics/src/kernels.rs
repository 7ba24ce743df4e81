//! The encoder's element-wise steps as in-place kernels over the matrix products' outputs.
//!
//! Profiled on all-MiniLM-L6-v2 (docs/performance.md, "Automatic text metrics"): once the matrix
//! products ran on AVX-512, about half of the time went to candle's generic element-wise path: the
//! exact GELU through a scalar `erf` call per value, the softmax through a scalar `exp`, and a new
//! tensor allocated and zeroed for every bias, scale and mask step. Here each step is one pass over
//! the product's own buffer, split across the cores, with `erf` and `exp` as branch-free
//! polynomials the compiler vectorises for the CPU found at run time (pulp's dispatch: AVX-512,
//! AVX2+FMA or SSE2).
//!
//! Accuracy: [`erf`] is within 4e-7 (3 f32 ulp at 1) and [`exp`] within 2 ulp of the exact functions over the ranges
//! used (tests below); the model's outputs stay within the 1e-4 of the Python references
//! (tests/reference.rs).

use candle_core::{bail, CpuStorage, InplaceOp1, Layout, Result};
use rayon::prelude::*;

/// Values per task handed to a core: large enough that scheduling costs nothing beside the work.
const CHUNK: usize = 16 * 1024;

/// Adds a bias row to every row of a (rows, width) product and, for the intermediate layer,
/// applies BERT's exact GELU, x · Φ(x) = x/2 · (1 + erf(x/√2)).
pub struct BiasThenActivation {
    pub bias: Vec<f32>,
    pub gelu: bool,
}

impl InplaceOp1 for BiasThenActivation {
    fn name(&self) -> &'static str {
        "bias-then-activation"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let values = contiguous_f32(storage, layout)?;
        let width = self.bias.len();
        if width == 0 || values.len() % width != 0 {
            bail!("{} values are not rows of {width}", values.len());
        }
        let rows_per_task = (CHUNK / width).max(1);
        values
            .par_chunks_mut(rows_per_task * width)
            .for_each(|rows| {
                pulp::Arch::new().dispatch(BiasRows {
                    rows,
                    bias: &self.bias,
                    gelu: self.gelu,
                })
            });
        Ok(())
    }
}

/// Self-attention's weights from the raw scores q·kᵀ, in place: scaled by `scale`, the padding's
/// additive mask added (one value per key position and text), then a softmax over each row.
pub struct MaskedSoftmax {
    pub scale: f32,
    /// (texts, keys): 0 for a real token, the most negative f32 for padding.
    pub mask: Vec<f32>,
    /// Rows (heads × queries) per text.
    pub rows_per_text: usize,
}

impl InplaceOp1 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "masked-softmax"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let values = contiguous_f32(storage, layout)?;
        let keys = *layout.dims().last().unwrap_or(&0);
        let texts = self.mask.len() / keys.max(1);
        if keys == 0 || values.len() != texts * self.rows_per_text * keys {
            bail!(
                "{} scores are not {texts} texts × {} rows × {keys} keys",
                values.len(),
                self.rows_per_text
            );
        }
        values
            .par_chunks_mut(self.rows_per_text * keys)
            .zip(self.mask.par_chunks(keys))
            .for_each(|(rows, mask)| {
                pulp::Arch::new().dispatch(SoftmaxRows {
                    rows,
                    mask,
                    scale: self.scale,
                })
            });
        Ok(())
    }
}

// The two kernels' loops, as `WithSimd` types: pulp compiles `with_simd` once per instruction set
// and runs the one the CPU has; everything it calls is `inline(always)`, so that it is compiled
// inside that instruction set too (a call out would reach a generic `fmaf`).

struct BiasRows<'a> {
    rows: &'a mut [f32],
    bias: &'a [f32],
    gelu: bool,
}

impl pulp::WithSimd for BiasRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        // Two loops rather than a test per value, so that each vectorises.
        for row in self.rows.chunks_exact_mut(self.bias.len()) {
            if self.gelu {
                for (v, b) in row.iter_mut().zip(self.bias) {
                    *v = gelu(*v + b);
                }
            } else {
                for (v, b) in row.iter_mut().zip(self.bias) {
                    *v += b;
                }
            }
        }
    }
}

struct SoftmaxRows<'a> {
    rows: &'a mut [f32],
    mask: &'a [f32],
    scale: f32,
}

impl pulp::WithSimd for SoftmaxRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for row in self.rows.chunks_exact_mut(self.mask.len()) {
            softmax_row(row, self.mask, self.scale)
        }
    }
}

/// Each step a loop of its own without a carried dependency (the max and the sum kept in 16
/// lanes), so that the compiler vectorises every one.
#[inline(always)]
fn softmax_row(row: &mut [f32], mask: &[f32], scale: f32) {
    for (v, m) in row.iter_mut().zip(mask) {
        *v = v.mul_add(scale, *m);
    }
    let max = max_in_lanes(row);
    for v in row.iter_mut() {
        *v = exp(*v - max);
    }
    let inverse = 1.0 / sum_in_lanes(row);
    for v in row.iter_mut() {
        *v *= inverse;
    }
}

// A float reduction the compiler may not reorder itself, spelled out in 16 independent lanes
// that it can vectorise, then the lanes together.

#[inline(always)]
fn max_in_lanes(values: &[f32]) -> f32 {
    let mut lanes = [f32::MIN; 16];
    let chunks = values.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane = if *v > *lane { *v } else { *lane };
        }
    }
    let mut max = f32::MIN;
    for v in lanes.iter().chain(rest) {
        max = if *v > max { *v } else { max };
    }
    max
}

#[inline(always)]
fn sum_in_lanes(values: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let chunks = values.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    let mut sum = 0.0;
    for v in lanes.iter().chain(rest) {
        sum += v;
    }
    sum
}

fn contiguous_f32<'a>(storage: &'a mut CpuStorage, layout: &Layout) -> Result<&'a mut [f32]> {
    let CpuStorage::F32(values) = storage else {
        bail!("the encoder's kernels take f32 values");
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        bail!("the encoder's kernels take contiguous values");
    };
    Ok(&mut values[start..end])
}

/// x · Φ(x), Φ the standard normal distribution function.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function as the rational approximation Eigen and XLA use for f32
/// (`generic_fast_erf_float`): an odd polynomial of degree 13 over an even one of degree 8, on x
/// clamped to [−4, 4], beyond which erf is ±1 in f32.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2.mul_add(-2.726_142_3e-10, 2.770_681_4e-8);
    p = x2.mul_add(p, -2.101_024e-6);
    p = x2.mul_add(p, -5.692_506_4e-5);
    p = x2.mul_add(p, -7.349_906e-4);
    p = x2.mul_add(p, -2.954_600_3e-3);
    p = x2.mul_add(p, -1.609_603_3e-2);
    let mut q = x2.mul_add(-1.456_607_2e-5, -2.133_740_6e-4);
    q = x2.mul_add(q, -1.682_827e-3);
    q = x2.mul_add(q, -7.373_329e-3);
    q = x2.mul_add(q, -1.426_474e-2);
    x * p / q
}

/// e^x for x ≤ 0 (a softmax's shifted scores): x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r by a
/// degree-7 polynomial (Cephes' `expf` coefficients), 2^n put into the exponent bits. Below −87.3
/// (where e^x leaves f32's normal range) the result is 0, so that padding gets no weight at all.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let clamped = x.max(-87.33);
    // Ties to even: the one rounding with a vector instruction.
    let n = (clamped * std::f32::consts::LOG2_E).round_ties_even();
    // ln 2 in two parts, so that n · ln 2 is subtracted exactly.
    let r = n.mul_add(-0.693_359_4, clamped);
    let r = n.mul_add(2.121_944_4e-4, r);
    let mut p = r.mul_add(1.987_569_1e-4, 1.398_199_9e-3);
    p = r.mul_add(p, 8.333_452e-3);
    p = r.mul_add(p, 4.166_579_6e-2);
    p = r.mul_add(p, 0.166_666_66);
    p = r.mul_add(p, 0.5);
    let e_r = (r * r).mul_add(p, r + 1.0);
    let two_n = f32::from_bits(((n as i32 + 127) as u32) << 23);
    // A select, not a branch: the loop that calls this stays vectorised.
    if x < -87.33 {
        0.0
    } else {
        e_r * two_n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 1/4096 over [−8, 8], against the f64 erf of the libm crate (a port of FreeBSD's).
    #[test]
    fn erf_is_within_4e_7_of_the_exact_function() {
        let worst = (-32768..=32768)
            .map(|i| i as f32 / 4096.0)
            .map(|x| (erf(x) as f64 - libm::erf(x as f64)).abs())
            .fold(0.0, f64::max);
        assert!(worst < 4e-7, "largest error {worst:e}");
    }

    /// Every 1/1024 over [−87, 0], relative to the f64 exp.
    #[test]
    fn exp_is_within_2_ulp_over_a_softmax_range() {
        let worst = (0..=87 * 1024)
            .map(|i| -(i as f32) / 1024.0)
            .map(|x| ((exp(x) as f64 - (x as f64).exp()) / (x as f64).exp()).abs())
            .fold(0.0, f64::max);
        assert!(
            worst < 2.0 * f32::EPSILON as f64,
            "largest relative error {worst:e}"
        );
        assert_eq!(exp(-87.34), 0.0);
        assert_eq!(exp(f32::MIN), 0.0);
    }

    #[test]
    fn softmax_of_a_row_with_padding() {
        let mut row = [1.0, 2.0, 3.0, 50.0];
        let mask = [0.0, 0.0, 0.0, f32::MIN];
        softmax_row(&mut row, &mask, 0.5);
        let e: Vec<f64> = [0.5f64, 1.0, 1.5].iter().map(|x| x.exp()).collect();
        let sum: f64 = e.iter().sum();
        for (got, want) in row.iter().zip(e.iter().map(|v| v / sum)) {
            assert!((*got as f64 - want).abs() < 1e-7, "{got} against {want}");
        }
        assert_eq!(row[3], 0.0);
    }
}
