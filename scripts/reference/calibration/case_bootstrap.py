"""The report's case bootstrap, mirrored for the reference scripts: the same resample indices
(SplitMix64 seeded by (seed, resample) as calibration/src/bootstrap.rs draws them), every
statistic recomputed by the caller on the resampled items themselves (not from per-case sums),
percentile by numpy.quantile (linear) and BCa by Efron's formula with scipy.stats.norm (ties with
the estimate within 1e-9 relative counted half; acceleration from the leave-one-case-out
jackknife). Also the correlations' interval the report quotes: the delete-one-case jackknife on
Fisher's z with t(cases - 1) (calibration/src/jackknife.rs)."""

import numpy as np
from scipy import stats

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, state):
        self.state = state & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, bound):
        return (self.next() * bound) >> 64


def generator_for(seed, resample):
    mixer = SplitMix64(seed ^ ((resample * 0xD1B54A32D192ED03) & MASK))
    return SplitMix64(mixer.next())


def bca(sorted_values, estimate, jackknife):
    values = np.asarray(sorted_values)
    # Ties with the estimate (within 1e-9 relative: the same content summed in another order)
    # count half.
    tolerance = 1e-9 * max(1.0, abs(estimate))
    below = np.sum(values < estimate - tolerance)
    tied = np.sum(np.abs(values - estimate) <= tolerance)
    share = (below + tied / 2) / len(values)
    z0 = stats.norm.ppf(share)
    jack = np.asarray(jackknife)
    d = jack.mean() - jack
    acceleration = np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5)

    def adjusted(alpha):
        z = stats.norm.ppf(alpha)
        return stats.norm.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))

    return (float(np.quantile(values, adjusted(0.025))),
            float(np.quantile(values, adjusted(0.975))))


def intervals(cases, by_case, statistics, seed, resamples):
    """`statistics(items) -> {name: value | None}`; `cases` in the report's cluster order."""
    full = statistics([it for c in cases for it in by_case[c]])
    replicates = []
    for b in range(resamples):
        generator = generator_for(seed, b)
        drawn = [cases[generator.below(len(cases))] for _ in cases]
        replicates.append(statistics([it for c in drawn for it in by_case[c]]))
    jackknife = [statistics([it for d in cases if d != c for it in by_case[d]]) for c in cases]
    out = {}
    for name, estimate in full.items():
        if estimate is None:
            out[name] = None
            continue
        values = sorted(v[name] for v in replicates if v[name] is not None)
        jack = [v[name] for v in jackknife if v[name] is not None]
        low, high = bca(values, estimate, jack)
        out[name] = {
            "estimate": estimate,
            "percentile_low": float(np.quantile(values, 0.025)),
            "percentile_high": float(np.quantile(values, 0.975)),
            "bca_low": low,
            "bca_high": high,
            "resamples_defined": len(values),
        }
    return out


def jackknife_fisher(estimate, without_each_case):
    """The delete-one-case jackknife interval of a correlation on Fisher's z: `estimate` on all
    cases, `without_each_case` the correlation recomputed on the items without each case in turn.
    Tukey's interval from the pseudo-values G*z - (G-1)*z_g: their mean -+ t(0.975, G-1) * their
    standard error, mapped back with tanh (Tukey 1958; Wolter 2007, ch. 4; Efron & Tibshirani
    1993, ch. 11). None where some value is undefined."""
    if estimate is None or any(v is None for v in without_each_case):
        return None
    n_cases = len(without_each_case)
    pseudo = n_cases * np.arctanh(estimate) - (n_cases - 1) * np.arctanh(without_each_case)
    centre = float(pseudo.mean())
    se = float(pseudo.std(ddof=1) / np.sqrt(n_cases))
    t = float(stats.t.ppf(0.975, n_cases - 1))
    return {
        "estimate": estimate,
        "bias_corrected": float(np.tanh(centre)),
        "low": float(np.tanh(centre - t * se)),
        "high": float(np.tanh(centre + t * se)),
        "standard_error_z": se,
        "degrees_of_freedom": n_cases - 1,
    }
