//! The encoder's element-wise steps, each one pass over a matrix product's rows in place.
//!
//! Profiled on all-MiniLM-L6-v2 (docs/performance.md, "Automatic text metrics"): once the matrix
//! products ran on AVX-512, about half of the time went to candle's generic element-wise path: the
//! exact GELU through a scalar `erf` call per value, the softmax through a scalar `exp`, and a new
//! tensor allocated and zeroed for every bias, residual, scale and layer norm. Here each step runs
//! over the rows a product has just written, while they are still in cache, with `erf` and `exp`
//! as branch-free polynomials the compiler vectorises for the CPU found at run time (pulp's
//! dispatch: AVX-512, AVX2+FMA or SSE2). The caller (`bert.rs`) splits the work across the cores.
//!
//! Accuracy: [`erf`] is within 4e-7 (3 f32 ulp at 1) and [`exp`] within 2 ulp of the exact functions over the ranges
//! used (tests below); the model's outputs stay within the 1e-4 of the Python references
//! (tests/reference.rs).

/// Adds `bias` to every row of a (rows, width) product and applies BERT's exact GELU,
/// x · Φ(x) = x/2 · (1 + erf(x/√2)).
pub fn bias_then_gelu(rows: &mut [f32], bias: &[f32]) {
    pulp::Arch::new().dispatch(BiasGeluRows { rows, bias })
}

/// Adds `bias` to every row of a (rows, width) product.
pub fn add_bias(rows: &mut [f32], bias: &[f32]) {
    pulp::Arch::new().dispatch(BiasRows { rows, bias })
}

/// One text's self-attention, every head, over its `tokens` rows of `query_key_value` (each row
/// the token's query, key and value side by side, `3 · hidden` wide); each head's output is written
/// into its columns of `context` (`tokens` rows of `hidden`). A query row's scores, softmax and
/// weighted sum of values are made one row at a time, so the row stays in L1: as two matrix
/// products per head this was a dozen small gemm calls per text and layer, each packing its
/// operands.
pub fn attention(
    query_key_value: &[f32],
    tokens: usize,
    heads: usize,
    context: &mut [f32],
    scratch: &mut AttentionScratch,
) {
    let hidden = context.len() / tokens.max(1);
    let size = hidden / heads.max(1);
    let wide = tokens.next_multiple_of(LANES);
    for (buffer, len) in [
        (&mut scratch.keys, size * wide),
        (&mut scratch.values, tokens * size),
        (&mut scratch.scores, wide),
    ] {
        if buffer.len() < len {
            buffer.resize(len, 0.0);
        }
    }
    pulp::Arch::new().dispatch(Attention {
        query_key_value,
        tokens,
        heads,
        hidden,
        context,
        keys: &mut scratch.keys[..size * wide],
        values: &mut scratch.values[..tokens * size],
        scores: &mut scratch.scores[..wide],
    })
}

/// Scores per vector on AVX-512: a query's row of scores is made this many keys at a time, the
/// keys padded with zeros to a multiple of it so that no row ends in a scalar remainder.
const LANES: usize = 16;

/// [`attention`]'s buffers, kept between calls: one head's keys transposed and its values, one
/// row's scores.
#[derive(Default)]
pub struct AttentionScratch {
    keys: Vec<f32>,
    values: Vec<f32>,
    scores: Vec<f32>,
}

struct Attention<'a> {
    query_key_value: &'a [f32],
    tokens: usize,
    heads: usize,
    hidden: usize,
    context: &'a mut [f32],
    /// (size, wide): the head's keys transposed, zero beyond `tokens`.
    keys: &'a mut [f32],
    /// (tokens, size): the head's values, contiguous.
    values: &'a mut [f32],
    /// (wide): one query's scores.
    scores: &'a mut [f32],
}

impl pulp::WithSimd for Attention<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let (n, h) = (self.tokens, self.hidden);
        let size = h / self.heads;
        let wide = self.scores.len();
        let scale = 1.0 / (size as f32).sqrt();
        let rows = self.query_key_value.chunks_exact(3 * h);
        for head in 0..self.heads {
            let columns = head * size..(head + 1) * size;
            // The head's keys as (size, wide): a query's scores are then `size` multiply-adds
            // of whole rows, which vectorise, rather than a dot product per key.
            self.keys.fill(0.0);
            for ((token, row), values) in rows
                .clone()
                .enumerate()
                .zip(self.values.chunks_exact_mut(size))
            {
                for (d, k) in row[h + columns.start..h + columns.end].iter().enumerate() {
                    self.keys[d * wide + token] = *k;
                }
                values.copy_from_slice(&row[2 * h + columns.start..2 * h + columns.end]);
            }
            for (row, out) in rows.clone().zip(self.context.chunks_exact_mut(h)) {
                self.scores.fill(0.0);
                for (q, keys) in row[columns.clone()]
                    .iter()
                    .zip(self.keys.chunks_exact(wide))
                {
                    for (s, k) in self.scores.iter_mut().zip(keys) {
                        *s = q.mul_add(*k, *s);
                    }
                }
                let scores = &mut self.scores[..n];
                softmax_row(scores, scale);
                let out = &mut out[columns.clone()];
                // MiniLM's heads are 32 wide: at a size known when compiling, the sum stays in
                // registers instead of going through memory once per key.
                if size == 32 {
                    weighted_sum::<32>(scores, self.values, out);
                } else {
                    out.fill(0.0);
                    for (weight, value) in scores.iter().zip(self.values.chunks_exact(size)) {
                        for (o, v) in out.iter_mut().zip(value) {
                            *o = weight.mul_add(*v, *o);
                        }
                    }
                }
            }
        }
    }
}

/// `out` = Σ weights[j] · values[j], the values `N` wide; even and odd keys summed apart, so that
/// two chains of multiply-adds run at once instead of each waiting on the last.
#[inline(always)]
fn weighted_sum<const N: usize>(weights: &[f32], values: &[f32], out: &mut [f32]) {
    let (mut even, mut odd) = ([0f32; N], [0f32; N]);
    let pairs = weights.chunks_exact(2);
    let last = pairs
        .remainder()
        .first()
        .map(|w| (w, &values[(weights.len() - 1) * N..]));
    for (w, v) in pairs.zip(values.chunks_exact(2 * N)) {
        let (first, second) = v.split_at(N);
        for ((e, o), (a, b)) in even
            .iter_mut()
            .zip(odd.iter_mut())
            .zip(first.iter().zip(second))
        {
            *e = w[0].mul_add(*a, *e);
            *o = w[1].mul_add(*b, *o);
        }
    }
    if let Some((w, v)) = last {
        for (e, a) in even.iter_mut().zip(v) {
            *e = w.mul_add(*a, *e);
        }
    }
    for ((out, e), o) in out.iter_mut().zip(even).zip(odd) {
        *out = e + o;
    }
}

/// A layer norm's learned scale and shift, and its epsilon.
pub struct Norm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
    pub eps: f32,
}

/// BERT's "add and norm" in place: each row becomes LayerNorm(row + bias + residual row).
pub fn residual_then_norm(rows: &mut [f32], bias: &[f32], residual: &[f32], norm: &Norm) {
    pulp::Arch::new().dispatch(ResidualNormRows {
        rows,
        bias,
        residual,
        norm,
    })
}

/// LayerNorm of each row in place.
pub fn layer_norm(rows: &mut [f32], norm: &Norm) {
    pulp::Arch::new().dispatch(NormRows { rows, norm })
}

// The kernels' loops, as `WithSimd` types: pulp compiles `with_simd` once per instruction set
// and runs the one the CPU has; everything it calls is `inline(always)`, so that it is compiled
// inside that instruction set too (a call out would reach a generic `fmaf`).

struct BiasGeluRows<'a> {
    rows: &'a mut [f32],
    bias: &'a [f32],
}

impl pulp::WithSimd for BiasGeluRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for row in self.rows.chunks_exact_mut(self.bias.len()) {
            for (v, b) in row.iter_mut().zip(self.bias) {
                *v = gelu(*v + b);
            }
        }
    }
}

struct BiasRows<'a> {
    rows: &'a mut [f32],
    bias: &'a [f32],
}

impl pulp::WithSimd for BiasRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for row in self.rows.chunks_exact_mut(self.bias.len()) {
            for (v, b) in row.iter_mut().zip(self.bias) {
                *v += b;
            }
        }
    }
}

struct ResidualNormRows<'a> {
    rows: &'a mut [f32],
    bias: &'a [f32],
    residual: &'a [f32],
    norm: &'a Norm,
}

impl pulp::WithSimd for ResidualNormRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let width = self.bias.len();
        for (row, residual) in self
            .rows
            .chunks_exact_mut(width)
            .zip(self.residual.chunks_exact(width))
        {
            for ((v, b), r) in row.iter_mut().zip(self.bias).zip(residual) {
                *v += b + r;
            }
            norm_row(row, self.norm);
        }
    }
}

struct NormRows<'a> {
    rows: &'a mut [f32],
    norm: &'a Norm,
}

impl pulp::WithSimd for NormRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for row in self.rows.chunks_exact_mut(self.norm.gamma.len()) {
            norm_row(row, self.norm);
        }
    }
}

/// (x − mean) / √(variance + eps) · gamma + beta, the variance over the row (biased, as
/// torch's `layer_norm`), from the deviations rather than the squares (no cancellation).
#[inline(always)]
fn norm_row(row: &mut [f32], norm: &Norm) {
    let n = row.len() as f32;
    let mean = sum_in_lanes(row) / n;
    for v in row.iter_mut() {
        *v -= mean;
    }
    let variance = sum_of_squares_in_lanes(row) / n;
    let inverse = 1.0 / (variance + norm.eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
        *v = (*v * inverse).mul_add(*g, *b);
    }
}

/// Each step a loop of its own without a carried dependency (the max and the sum kept in 16
/// lanes), so that the compiler vectorises every one.
#[inline(always)]
fn softmax_row(row: &mut [f32], scale: f32) {
    for v in row.iter_mut() {
        *v *= scale;
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

// A float reduction the compiler may not reorder itself (it would change the rounding), spelled
// out in 16 independent lanes that it can vectorise, then the lanes together.

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

#[inline(always)]
fn sum_of_squares_in_lanes(values: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let chunks = values.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane = v.mul_add(*v, *lane);
        }
    }
    let mut sum: f32 = lanes.iter().sum();
    for v in rest {
        sum = v.mul_add(*v, sum);
    }
    sum
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
    fn softmax_of_a_scaled_row() {
        let mut row = [1.0, 2.0, 3.0];
        softmax_row(&mut row, 0.5);
        let e: Vec<f64> = [0.5f64, 1.0, 1.5].iter().map(|x| x.exp()).collect();
        let sum: f64 = e.iter().sum();
        for (got, want) in row.iter().zip(e.iter().map(|v| v / sum)) {
            assert!((*got as f64 - want).abs() < 1e-7, "{got} against {want}");
        }
    }

    /// Against the definition in f64, on a row with a large offset (where the mean of the
    /// squares minus the square of the mean would lose the variance).
    #[test]
    fn layer_norm_of_a_row_with_an_offset() {
        let values: Vec<f32> = (0..40).map(|i| 1000.0 + (i as f32 * 0.37).sin()).collect();
        let norm = Norm {
            gamma: (0..40).map(|i| 1.0 + i as f32 / 40.0).collect(),
            beta: (0..40).map(|i| i as f32 / 80.0 - 0.25).collect(),
            eps: 1e-12,
        };
        let mut row = values.clone();
        layer_norm(&mut row, &norm);
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        let variance = values
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        for (i, got) in row.iter().enumerate() {
            let want = (values[i] as f64 - mean) / (variance + 1e-12).sqrt() * norm.gamma[i] as f64
                + norm.beta[i] as f64;
            assert!(
                (*got as f64 - want).abs() < 1e-3,
                "{i}: {got} against {want}"
            );
        }
    }

    /// Two heads over a few tokens against the definition in f64, softmax(q·kᵀ/√d)·v per head:
    /// heads 4 wide (the general path) and 32 wide (MiniLM's, summed in registers).
    #[test]
    fn attention_of_a_text_against_the_definition() {
        for (tokens, heads, hidden) in [(5, 2, 8), (19, 2, 64)] {
            check_attention(tokens, heads, hidden);
        }
    }

    fn check_attention(tokens: usize, heads: usize, hidden: usize) {
        let size = hidden / heads;
        let qkv: Vec<f32> = (0..tokens * 3 * hidden)
            .map(|i| ((i * 37 % 23) as f32 - 11.0) / 7.0)
            .collect();
        let mut context = vec![f32::NAN; tokens * hidden];
        attention(
            &qkv,
            tokens,
            heads,
            &mut context,
            &mut AttentionScratch::default(),
        );
        let at = |token: usize, part: usize, head: usize, d: usize| {
            qkv[token * 3 * hidden + part * hidden + head * size + d] as f64
        };
        for head in 0..heads {
            for query in 0..tokens {
                let scores: Vec<f64> = (0..tokens)
                    .map(|key| {
                        (0..size)
                            .map(|d| at(query, 0, head, d) * at(key, 1, head, d))
                            .sum::<f64>()
                            / (size as f64).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f64::MIN, f64::max);
                let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                let total: f64 = weights.iter().sum();
                for d in 0..size {
                    let want: f64 = (0..tokens)
                        .map(|key| weights[key] / total * at(key, 2, head, d))
                        .sum();
                    let got = context[query * hidden + head * size + d] as f64;
                    assert!(
                        (got - want).abs() < 1e-5,
                        "head {head} query {query} d {d}: {got} against {want}"
                    );
                }
            }
        }
    }
}
