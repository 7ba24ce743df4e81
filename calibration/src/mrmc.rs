//! Multi-reader multi-case (MRMC) analysis with readers and cases random: Obuchowski–Rockette
//! (OR) with Hillis's denominator degrees of freedom, generic over the figure of merit (FOM).
//!
//! Why: a claim about "a clinician" (not "these clinicians") has to carry the spread between
//! readers as well as the sampling of cases. The OR model treats the FOM of reader j in
//! treatment i as θᵢⱼ = μ + τᵢ + Rⱼ + (τR)ᵢⱼ + εᵢⱼ, readers random, the errors εᵢⱼ correlated
//! through the shared cases; their covariances come from the delete-one-case jackknife.
//!
//! Sources, each formula from them:
//! - Obuchowski NA, Rockette HE (1995), "Hypothesis testing of diagnostic accuracy for multiple
//!   readers and multiple tests: an ANOVA approach with dependent observations", Commun Stat
//!   Simul Comput 24:285–308 (the model; Var, Cov1, Cov2, Cov3).
//! - Hillis SL (2007), "A comparison of denominator degrees of freedom methods for multiple
//!   observer ROC analysis", Stat Med 26:596–619 (the single-treatment form on p. 607, used for a
//!   fixed reader, e.g. CAD, against random readers).
//! - Hillis SL, Berbaum KS, Metz CE (2008), "Recent developments in the Dorfman-Berbaum-Metz
//!   procedure for multireader ROC study analysis", Acad Radiol 15:647–661 (MS_den, ddf, the
//!   treatment difference's interval).
//! - Chakraborty DP, RJafroc (`St(..., method = "OR")`, `StCadVsRad(..., method = "1T-RRRC")`):
//!   the jackknife covariances scaled by (K − 1)²/K. `calibration/tests/mrmc.rs` checks both
//!   analyses against RJafroc's stored output on the Van Dyke 1993 and Hupse 2013 data.
//!
//! Only the FOM estimates and their jackknife values enter, so any FOM works: the Wilcoxon AUC
//! in the tests, agreement with the other clinicians' mean in [`crate::readers_random`].

use crate::dist;
use serde::Serialize;

/// The OR analysis of I ≥ 2 treatments read by J ≥ 2 readers on K ≥ 2 cases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrAnalysis {
    /// The error variance: mean of the jackknife variances of each θᵢⱼ.
    pub var: f64,
    /// Error covariance, same reader, different treatments.
    pub cov1: f64,
    /// Error covariance, different readers, same treatment.
    pub cov2: f64,
    /// Error covariance, different readers, different treatments.
    pub cov3: f64,
    pub ms_t: f64,
    pub ms_r: f64,
    pub ms_tr: f64,
    /// Reader variance σ²_R and treatment × reader variance σ²_TR (method of moments).
    pub var_r: f64,
    pub var_tr: f64,
    /// MS_TR + J · max(Cov2 − Cov3, 0): the F test's denominator.
    pub ms_den: f64,
    /// F = MS_T / MS_den on (I − 1, ddf) degrees of freedom, ddf Hillis's.
    pub f: f64,
    pub ndf: f64,
    pub ddf: f64,
    pub p: f64,
    /// Every pair of treatments (first < second), first − second.
    pub differences: Vec<TreatmentDifference>,
}

/// The reader-averaged difference of two treatments with its 95 % interval (readers and cases
/// random).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreatmentDifference {
    pub first: usize,
    pub second: usize,
    pub estimate: f64,
    pub std_err: f64,
    pub low: f64,
    pub high: f64,
    pub t: f64,
    pub p: f64,
}

/// A fixed reader (CAD, an LLM grader) against random readers in one treatment: the mean over
/// readers of ψⱼ, the per-reader difference of FOMs, with its 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixedReaderComparison {
    /// Mean of ψⱼ over readers.
    pub estimate: f64,
    pub std_err: f64,
    pub low: f64,
    pub high: f64,
    /// Hillis's degrees of freedom; infinite when the readers' ψ do not vary at all.
    pub df: f64,
    pub t: f64,
    pub p: f64,
    /// The variance of ψⱼ over readers (MS_R of the single-treatment model).
    pub ms_r: f64,
    /// Jackknife error variance and covariance (different readers) of ψⱼ.
    pub var: f64,
    pub cov2: f64,
    pub n_readers: usize,
    pub n_cases: usize,
}

/// The case covariance of two readers' jackknife FOMs, scaled as OR and Hillis do for the
/// jackknife: the sample covariance times (K − 1)²/K, i.e. (K − 1)/K · Σ (a − ā)(b − b̄).
fn jackknife_covariance(a: &[f64], b: &[f64]) -> f64 {
    let k = a.len() as f64;
    let (ma, mb) = (mean(a), mean(b));
    let cross: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    (k - 1.0) / k * cross
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Above this many degrees of freedom t is the normal distribution plus a correction that the
/// expansion below gives to 3e-12 or better; statrs's inverse t (an iterative inverse of the
/// regularised beta) loses accuracy from about 1e4 (3e-7 off R's `qt` at 5e4) and does not return
/// at all at the df Hillis's formula reaches when the readers' FOM differences hardly vary
/// (MS_R → 0, df → ∞).
const LARGE_DF: f64 = 1e4;

/// The two-sided 95 % t quantile; beyond [`LARGE_DF`] the Cornish–Fisher expansion of t about the
/// normal quantile (Abramowitz & Stegun 26.7.5, two terms: the next is O(df⁻³)).
fn t_975(df: f64) -> Option<f64> {
    if df > LARGE_DF {
        Some(t_975_expansion(df))
    } else {
        dist::t_quantile(0.975, df)
    }
}

fn t_975_expansion(df: f64) -> f64 {
    let z = dist::z_975();
    z + (z.powi(3) + z) / (4.0 * df)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * df * df)
}

/// Two-sided p of t; the normal one beyond [`LARGE_DF`] (relative error below 1e-3 there).
fn t_two_sided_p(t: f64, df: f64) -> Option<f64> {
    if df > LARGE_DF {
        Some(dist::normal_two_sided_p(t))
    } else {
        dist::t_two_sided_p(t, df)
    }
}

/// OR/Hillis analysis from `foms[i][j]` (treatment i, reader j) and `jackknife[i][j][k]`, the
/// FOM with case k left out. `Err` says why not: too few treatments, readers or cases, ragged
/// input, or no variation to test against.
pub fn obuchowski_rockette(
    foms: &[Vec<f64>],
    jackknife: &[Vec<Vec<f64>>],
) -> Result<OrAnalysis, String> {
    let n_t = foms.len();
    let n_r = foms.first().map_or(0, Vec::len);
    let n_c = jackknife
        .first()
        .and_then(|t| t.first())
        .map_or(0, Vec::len);
    if n_t < 2 || n_r < 2 || n_c < 2 {
        return Err(format!(
            "needs at least 2 treatments, 2 readers and 2 cases (has {n_t}, {n_r}, {n_c})"
        ));
    }
    let rectangular = foms.iter().all(|t| t.len() == n_r)
        && jackknife.len() == n_t
        && jackknife
            .iter()
            .all(|t| t.len() == n_r && t.iter().all(|r| r.len() == n_c));
    if !rectangular {
        return Err(
            "every treatment needs every reader's FOM and jackknife FOMs on every case".into(),
        );
    }
    let (i_f, j_f) = (n_t as f64, n_r as f64);

    // Average the jackknife covariances by kind of pair.
    let (mut var, mut cov1, mut cov2, mut cov3) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..n_t {
        for j in 0..n_r {
            for ip in 0..n_t {
                for jp in 0..n_r {
                    let c = jackknife_covariance(&jackknife[i][j], &jackknife[ip][jp]);
                    match (i == ip, j == jp) {
                        (true, true) => var += c,
                        (false, true) => cov1 += c,
                        (true, false) => cov2 += c,
                        (false, false) => cov3 += c,
                    }
                }
            }
        }
    }
    var /= i_f * j_f;
    cov1 /= i_f * (i_f - 1.0) * j_f;
    cov2 /= i_f * j_f * (j_f - 1.0);
    cov3 /= i_f * (i_f - 1.0) * j_f * (j_f - 1.0);

    let trt_means: Vec<f64> = foms.iter().map(|t| mean(t)).collect();
    let rdr_means: Vec<f64> = (0..n_r)
        .map(|j| foms.iter().map(|t| t[j]).sum::<f64>() / i_f)
        .collect();
    let grand = mean(&trt_means);
    let ms_t = j_f * trt_means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (i_f - 1.0);
    let ms_r = i_f * rdr_means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (j_f - 1.0);
    let ms_tr = (0..n_t)
        .flat_map(|i| (0..n_r).map(move |j| (i, j)))
        .map(|(i, j)| (foms[i][j] - trt_means[i] - rdr_means[j] + grand).powi(2))
        .sum::<f64>()
        / ((i_f - 1.0) * (j_f - 1.0));
    // Expected mean squares of the OR model (Hillis 2008, Table 1) solved for σ²_TR and σ²_R.
    let var_tr = ms_tr - var + cov1 + cov2 - cov3;
    let var_r = (ms_r - var_tr - var - (i_f - 1.0) * cov1 + cov2 + (i_f - 1.0) * cov3) / i_f;

    let ms_den = ms_tr + j_f * (cov2 - cov3).max(0.0);
    if ms_den <= 0.0 {
        return Err("no variation between readers or cases to test against (MS_den = 0)".into());
    }
    let ndf = i_f - 1.0;
    let ddf = if ms_tr > 0.0 {
        ms_den.powi(2) / (ms_tr.powi(2) / ((i_f - 1.0) * (j_f - 1.0)))
    } else {
        f64::INFINITY
    };
    let f = ms_t / ms_den;
    let p = f_upper_tail(f, ndf, ddf).ok_or("the F distribution is undefined at these df")?;
    let std_err = (2.0 * ms_den / j_f).sqrt();
    let q = t_975(ddf).ok_or("the t quantile is undefined at these df")?;
    let mut differences = Vec::new();
    for first in 0..n_t {
        for second in first + 1..n_t {
            let estimate = trt_means[first] - trt_means[second];
            let t = estimate / std_err;
            differences.push(TreatmentDifference {
                first,
                second,
                estimate,
                std_err,
                low: estimate - q * std_err,
                high: estimate + q * std_err,
                t,
                p: t_two_sided_p(t, ddf).ok_or("the t distribution is undefined at these df")?,
            });
        }
    }
    Ok(OrAnalysis {
        var,
        cov1,
        cov2,
        cov3,
        ms_t,
        ms_r,
        ms_tr,
        var_r,
        var_tr,
        ms_den,
        f,
        ndf,
        ddf,
        p,
        differences,
    })
}

/// P(F > f) on (ndf, ddf); beyond [`LARGE_DF`] ndf · F is χ²(ndf).
fn f_upper_tail(f: f64, ndf: f64, ddf: f64) -> Option<f64> {
    use statrs::distribution::{ChiSquared, ContinuousCDF, FisherSnedecor};
    if ddf > LARGE_DF {
        return ChiSquared::new(ndf).ok().map(|c| c.sf(ndf * f));
    }
    FisherSnedecor::new(ndf, ddf).ok().map(|d| d.sf(f))
}

/// The single-treatment OR analysis of a fixed reader against J ≥ 2 random readers (Hillis 2007,
/// p. 607; RJafroc's 1T-RRRC): `psi[j]` = FOM difference between the fixed reader and reader j,
/// `jackknife_psi[j][k]` the same with case k left out. MS_den = MS_R + max(J · Cov2, 0),
/// df = MS_den² / (MS_R² / (J − 1)), interval ψ̄ ± t₀.₉₇₅,df · √(MS_den / J).
pub fn fixed_reader_vs_random_readers(
    psi: &[f64],
    jackknife_psi: &[Vec<f64>],
) -> Result<FixedReaderComparison, String> {
    let n_r = psi.len();
    let n_c = jackknife_psi.first().map_or(0, Vec::len);
    if n_r < 2 || n_c < 2 {
        return Err(format!(
            "needs at least 2 readers and 2 cases (has {n_r} and {n_c})"
        ));
    }
    if jackknife_psi.len() != n_r || jackknife_psi.iter().any(|r| r.len() != n_c) {
        return Err("every reader needs a jackknife value for every case".into());
    }
    let j_f = n_r as f64;
    let (mut var, mut cov2) = (0.0, 0.0);
    for j in 0..n_r {
        for jp in 0..n_r {
            let c = jackknife_covariance(&jackknife_psi[j], &jackknife_psi[jp]);
            if j == jp {
                var += c;
            } else {
                cov2 += c;
            }
        }
    }
    var /= j_f;
    cov2 /= j_f * (j_f - 1.0);
    let estimate = mean(psi);
    let ms_r = psi.iter().map(|p| (p - estimate).powi(2)).sum::<f64>() / (j_f - 1.0);
    let ms_den = ms_r + (j_f * cov2).max(0.0);
    if ms_den <= 0.0 {
        return Err(
            "the readers' differences vary neither between readers nor between cases".into(),
        );
    }
    let df = if ms_r > 0.0 {
        ms_den.powi(2) / (ms_r.powi(2) / (j_f - 1.0))
    } else {
        f64::INFINITY
    };
    let std_err = (ms_den / j_f).sqrt();
    let q = t_975(df).ok_or("the t quantile is undefined at these df")?;
    let t = estimate / std_err;
    Ok(FixedReaderComparison {
        estimate,
        std_err,
        low: estimate - q * std_err,
        high: estimate + q * std_err,
        df,
        t,
        p: t_two_sided_p(t, df).ok_or("the t distribution is undefined at these df")?,
        ms_r,
        var,
        cov2,
        n_readers: n_r,
        n_cases: n_c,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_that_hardly_differ_give_huge_df_and_still_an_interval() {
        // ψ equal but for rounding: MS_R ≈ 1e-30, df ≈ 1e50; the case covariance remains.
        let psi = [0.1, 0.1 + 1e-15, 0.1 - 1e-15];
        let case = [0.01, -0.02, 0.015, -0.005];
        let jackknife: Vec<Vec<f64>> = psi
            .iter()
            .map(|p| case.iter().map(|c| p + c).collect())
            .collect();
        let a = fixed_reader_vs_random_readers(&psi, &jackknife).expect("estimable");
        assert!(a.df > LARGE_DF);
        let half = (a.high - a.low) / 2.0;
        assert!((half / a.std_err - dist::z_975()).abs() < 1e-9);
    }

    #[test]
    fn the_t_expansion_matches_r_qt_beyond_large_df() {
        // R 4.x: sprintf("%.17g", qt(0.975, df)).
        for (df, r) in [
            (1e4, 1.9602012398906257),
            (5e4, 1.9600114310936796),
            (1e6, 1.9599663568141066),
        ] {
            let expansion = t_975_expansion(df);
            assert!(
                (expansion - r).abs() < 1e-11,
                "df {df}: {expansion} vs R {r}"
            );
        }
    }
}
