//! Tolerances for every comparison, in one place.
#![allow(dead_code)] // each test binary uses a different subset

/// Published tables round to 2–3 decimals; half a unit of the last digit.
pub const HALF_OF_2_DECIMALS: f64 = 0.005 + 1e-9;
pub const HALF_OF_3_DECIMALS: f64 = 0.0005 + 1e-9;
pub const HALF_OF_4_DECIMALS: f64 = 0.00005 + 1e-9;
/// docs/domain.md's "about" figures (two decimals, loosely rounded).
pub const DOMAIN_ABOUT: f64 = 0.01;
/// R prints 7 significant digits.
pub const R_PRINTED: f64 = 5e-7;
/// Against scipy/pingouin/krippendorff computed in double precision.
pub const SCIPY_EXACT: f64 = 1e-9;
/// One figure computed by two paths of this crate from the same sums (summation order only).
pub const SAME_SUMS: f64 = 1e-12;
/// p-values and quantiles go through statrs's own special functions and root finder.
pub const DISTRIBUTION: f64 = 1e-6;

#[track_caller]
pub fn close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: got {actual}, expected {expected} (tolerance {tolerance})"
    );
}

/// For p-values spanning many orders of magnitude: relative, with an absolute floor.
#[track_caller]
pub fn close_relative(actual: f64, expected: f64, relative: f64, what: &str) {
    let tolerance = relative * expected.abs().max(1e-300) + 1e-300;
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: got {actual:e}, expected {expected:e} (relative tolerance {relative})"
    );
}
