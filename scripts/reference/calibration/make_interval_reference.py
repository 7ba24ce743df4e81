#!/usr/bin/env python3
"""Generate random paired scores and score tables with the intervals the report quotes, unrounded,
from independent code: the ICC intervals of R's irr package (written out in irr_icc.py: pingouin,
the reference of make_reference.py, rounds its intervals to two decimals), Spearman's ρ with the
Bonett & Wright (2000) interval, Bland & Altman's (1999) intervals of the bias and of the limits,
and Cohen's κ weighted by the categories' values rather than their positions.

Run once; the output is committed as calibration/tests/data/interval_reference.json and read by
calibration/tests/intervals.rs. Rerunning with the same library versions reproduces it.

    python3 -m venv /tmp/verdict-ref
    /tmp/verdict-ref/bin/pip install numpy scipy pandas pingouin statsmodels
    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_interval_reference.py \
        > calibration/tests/data/interval_reference.json

Sources of each expected value:
- icc: irr_icc.py (irr 0.84.1's icc(): oneway single, twoway consistency single, twoway
  agreement single) on the two-way ANOVA mean squares; the values also from
  pingouin.intraclass_corr (ICC1, ICC3, ICC2) as a cross-check of the mean squares
- spearman: rho from scipy.stats.spearmanr; interval tanh(atanh(rho) -/+ z * sqrt((1 + rho^2/2) /
  (n - 3))), z = scipy.stats.norm.ppf(0.975) (Bonett & Wright 2000, Psychometrika 65:23-28)
- bland_altman: differences a - b; bias = mean, sd with ddof 1, limits bias -/+ z sd; bias
  interval bias -/+ t(0.975, n-1) sd / sqrt(n); each limit's interval -/+ t(0.975, n-1)
  sqrt(3 sd^2 / n) (Bland & Altman 1999, Stat Methods Med Res 8:135-160, section 4)
- kappa_by_value: statsmodels.stats.inter_rater.cohens_kappa(table, weights=values, wt=
  "linear" | "quadratic"): with a one-dimensional `weights`, statsmodels takes them as the
  categories' values and weights by their differences (value and std_kappa)
"""

import json
import sys
from importlib.metadata import version

import numpy as np
import pandas as pd
import pingouin
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

import irr_icc

rng = np.random.default_rng(20261126)
Z = stats.norm.ppf(0.975)


def icc_case(n, k):
    truth = rng.normal(size=n)
    rater_shift = rng.normal(scale=0.4, size=k)
    x = np.clip(np.round(3 + 1.1 * truth[:, None] + rater_shift[None, :]
                         + rng.normal(scale=0.7, size=(n, k))), 1, 5)
    ms_rows, ms_within, ms_cols, ms_error = irr_icc.mean_squares(x)
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(n) for j in range(k)],
                        columns=["target", "rater", "score"])
    table = pingouin.intraclass_corr(long, targets="target", raters="rater", ratings="score")
    # pingouin names the forms ICC(1,1), ICC(A,1), ICC(C,1).
    names = {"ICC(1,1)": "ICC1", "ICC(A,1)": "ICC2", "ICC(C,1)": "ICC3"}
    pingouin_value = {names[row["Type"]]: float(row["ICC"]) for _, row in table.iterrows()
                      if row["Type"] in names}
    forms = {
        "ICC1": irr_icc.oneway_single(ms_rows, ms_within, n, k),
        "ICC2": irr_icc.agreement_single(ms_rows, ms_cols, ms_error, n, k),
        "ICC3": irr_icc.consistency_single(ms_rows, ms_error, n, k),
    }
    return {
        "scores": x.tolist(),
        "icc": {name: {"value": float(v), "ci_low": float(lo), "ci_high": float(hi),
                       "pingouin_value": pingouin_value[name]}
                for name, (v, lo, hi) in forms.items()},
    }


def paired_case(n, discrete):
    truth = rng.normal(size=n)
    a = 3 + 1.2 * truth + rng.normal(scale=0.6, size=n)
    b = 2.8 + 1.1 * truth + rng.normal(scale=0.6, size=n)
    if discrete:
        a, b = np.clip(np.round(a), 1, 5), np.clip(np.round(b), 1, 5)
    rho = stats.spearmanr(a, b).statistic
    se = np.sqrt((1 + rho ** 2 / 2) / (n - 3))
    d = a - b
    bias, sd = d.mean(), d.std(ddof=1)
    t = stats.t.ppf(0.975, n - 1)
    limit_half = t * np.sqrt(3 * sd ** 2 / n)
    return {
        "a": a.tolist(), "b": b.tolist(),
        "spearman": {"rho": float(rho), "ci_low": float(np.tanh(np.arctanh(rho) - Z * se)),
                     "ci_high": float(np.tanh(np.arctanh(rho) + Z * se))},
        "bland_altman": {
            "bias": float(bias), "sd": float(sd),
            "loa_low": float(bias - Z * sd), "loa_high": float(bias + Z * sd),
            "bias_ci_low": float(bias - t * sd / np.sqrt(n)),
            "bias_ci_high": float(bias + t * sd / np.sqrt(n)),
            "loa_low_ci_low": float(bias - Z * sd - limit_half),
            "loa_low_ci_high": float(bias - Z * sd + limit_half),
            "loa_high_ci_low": float(bias + Z * sd - limit_half),
            "loa_high_ci_high": float(bias + Z * sd + limit_half),
        },
    }


def kappa_by_value_case(n):
    # Observed values 5, 6, 8, 10 (a 0-10 grader that never gave the others): weights by value
    # count 6 -> 8 as two steps of 5 -> 6, by position as one.
    values = np.array([5.0, 6.0, 8.0, 10.0])
    truth = rng.integers(0, 4, size=n)
    a = values[np.clip(truth + rng.integers(-1, 2, size=n), 0, 3)]
    b = values[np.clip(truth + rng.integers(-1, 2, size=n), 0, 3)]
    table = np.zeros((4, 4))
    for x, y in zip(a, b):
        table[np.searchsorted(values, x), np.searchsorted(values, y)] += 1
    expected = {}
    for name in ["linear", "quadratic"]:
        result = cohens_kappa(table, weights=values, wt=name)
        expected[name] = {"value": float(result.kappa), "se": float(result.std_kappa)}
    by_position = cohens_kappa(table, wt="linear")
    return {"a": a.tolist(), "b": b.tolist(), "levels": values.tolist(), "kappa": expected,
            "linear_by_position": float(by_position.kappa)}


document = {
    "origin": "scripts/reference/calibration/make_interval_reference.py (seed 20261126)",
    "licence": "generated data, MIT like the repository",
    "versions": {name: version(name) for name in
                 ["numpy", "scipy", "pandas", "pingouin", "statsmodels"]},
    "python": sys.version.split()[0],
    "icc": [icc_case(n, k) for n, k in [(8, 3), (30, 4), (120, 2)]],
    "paired": [paired_case(n, discrete) for n, discrete in
               [(10, True), (40, False), (150, True)]],
    "kappa_by_value": [kappa_by_value_case(n) for n in [25, 200]],
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
