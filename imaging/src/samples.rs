//! Stored sample values kept in their own type, so a 16-bit series stays 16-bit in memory.

use std::ops::Range;

/// Samples of all frames (or slices), frame after frame, row after row; colour images hold
/// R, G, B interleaved.
#[derive(Debug, Clone, PartialEq)]
pub enum Samples {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Runs `$body` with `$v` bound to the typed vector inside `$samples`.
macro_rules! with_samples {
    ($samples:expr, $v:ident => $body:expr) => {
        match $samples {
            Samples::U8($v) => $body,
            Samples::I8($v) => $body,
            Samples::U16($v) => $body,
            Samples::I16($v) => $body,
            Samples::U32($v) => $body,
            Samples::I32($v) => $body,
            Samples::F32($v) => $body,
            Samples::F64($v) => $body,
        }
    };
}
pub(crate) use with_samples;

/// A sample type that converts to f64 without loss (f32 and integers up to 32 bits do).
pub(crate) trait Sample: Copy {
    /// Integers of at most 16 bits: every value is exactly an `i32` and the range is small.
    const SMALL_INTEGER: bool;
    fn value(self) -> f64;
    /// The value as an `i32`: exact when `SMALL_INTEGER`, saturating otherwise.
    fn small_integer(self) -> i32;
}
macro_rules! impl_sample {
    ($small:expr; $($t:ty),*) => { $(impl Sample for $t {
        const SMALL_INTEGER: bool = $small;
        #[inline] fn value(self) -> f64 { self as f64 }
        #[inline] fn small_integer(self) -> i32 { self as i32 }
    })* };
}
impl_sample!(true; u8, i8, u16, i16);
impl_sample!(false; u32, i32, f32, f64);

impl Samples {
    pub fn len(&self) -> usize {
        with_samples!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes_per_sample(&self) -> usize {
        match self {
            Samples::U8(_) | Samples::I8(_) => 1,
            Samples::U16(_) | Samples::I16(_) => 2,
            Samples::U32(_) | Samples::I32(_) | Samples::F32(_) => 4,
            Samples::F64(_) => 8,
        }
    }

    /// The samples in `range` (which must lie within them), as a new vector of the same type.
    pub fn sub_range(&self, range: Range<usize>) -> Samples {
        match self {
            Samples::U8(v) => Samples::U8(v[range].to_vec()),
            Samples::I8(v) => Samples::I8(v[range].to_vec()),
            Samples::U16(v) => Samples::U16(v[range].to_vec()),
            Samples::I16(v) => Samples::I16(v[range].to_vec()),
            Samples::U32(v) => Samples::U32(v[range].to_vec()),
            Samples::I32(v) => Samples::I32(v[range].to_vec()),
            Samples::F32(v) => Samples::F32(v[range].to_vec()),
            Samples::F64(v) => Samples::F64(v[range].to_vec()),
        }
    }

    /// Appends every sample to `out` in little-endian byte order.
    pub fn extend_le_bytes(&self, out: &mut Vec<u8>) {
        match self {
            Samples::U8(v) => out.extend_from_slice(v),
            Samples::I8(v) => put_le(out, v, |x| x.to_le_bytes()),
            Samples::U16(v) => put_le(out, v, |x| x.to_le_bytes()),
            Samples::I16(v) => put_le(out, v, |x| x.to_le_bytes()),
            Samples::U32(v) => put_le(out, v, |x| x.to_le_bytes()),
            Samples::I32(v) => put_le(out, v, |x| x.to_le_bytes()),
            Samples::F32(v) => put_le(out, v, |x| x.to_le_bytes()),
            Samples::F64(v) => put_le(out, v, |x| x.to_le_bytes()),
        }
    }

    /// The value at `index` as f64, `None` past the end.
    pub fn get(&self, index: usize) -> Option<f64> {
        with_samples!(self, v => v.get(index).map(|x| x.value()))
    }

    /// Smallest and largest finite value in `range`; `None` when it holds none.
    pub fn min_max(&self, range: Range<usize>) -> Option<(f64, f64)> {
        with_samples!(self, v => min_max_of(v.get(range)?))
    }
}

/// Writes into fixed-size chunks of a buffer grown once: this compiles to a copy, where pushing
/// each sample's bytes onto the vector took ~10 ms for a 512² × 32 series.
fn put_le<T: Copy, const N: usize>(out: &mut Vec<u8>, values: &[T], le: impl Fn(T) -> [u8; N]) {
    let start = out.len();
    out.resize(start + values.len() * N, 0);
    for (chunk, &x) in out[start..].chunks_exact_mut(N).zip(values) {
        chunk.copy_from_slice(&le(x));
    }
}

/// Compares in the samples' own type, which for integers vectorises (through f64 it did not).
/// NaN never compares, so it is skipped, including as the starting value.
fn min_max_of<T: Sample + PartialOrd>(values: &[T]) -> Option<(f64, f64)> {
    #[allow(clippy::eq_op)] // x == x is false only for NaN
    let start = values.iter().position(|x| x == x)?;
    let (mut lo, mut hi) = (values[start], values[start]);
    for &x in &values[start + 1..] {
        if x < lo {
            lo = x;
        }
        if x > hi {
            hi = x;
        }
    }
    Some((lo.value(), hi.value()))
}
