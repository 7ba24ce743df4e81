#!/usr/bin/env python3
"""Generate random inputs and their expected statistics from independent implementations.

Run once; the output is committed as calibration/tests/data/reference.json and read by
calibration/tests/scipy_reference.rs. Rerunning with the same library versions reproduces it
byte for byte (fixed seed).

    python3 -m venv /tmp/calref
    /tmp/calref/bin/pip install scipy pingouin krippendorff numpy pandas scikit-learn statsmodels
    /tmp/calref/bin/python scripts/reference/calibration/make_reference.py \
        > calibration/tests/data/reference.json

Sources of each expected value:
- pearson: scipy.stats.pearsonr (r, p, confidence_interval() = Fisher z)
- spearman: scipy.stats.spearmanr (rho, p)
- kendall_tau_b: scipy.stats.kendalltau (tau-b, p with method='auto')
- icc: pingouin.intraclass_corr (values unrounded; pingouin rounds its CI to 2 decimals)
- krippendorff_alpha: krippendorff.alpha (nominal, ordinal, interval)
- cohen_kappa: sklearn.metrics.cohen_kappa_score (value) and statsmodels cohens_kappa (SE)
- fleiss_kappa: statsmodels.stats.inter_rater.fleiss_kappa
- wilson: statsmodels.stats.proportion.proportion_confint(method='wilson')
- pass_at_k: 1 - scipy.special.comb(n - c, k, exact=True) / comb(n, k, exact=True)
"""

import json
import sys
from importlib.metadata import version

import krippendorff
import numpy as np
import pandas as pd
import pingouin
from scipy import stats
from scipy.special import comb
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

rng = np.random.default_rng(20261121)


def paired_cases():
    cases = []
    for n, kind in [(12, "scale"), (25, "continuous"), (40, "scale"), (200, "scale"),
                    (300, "continuous"), (30, "continuous")]:
        truth = rng.normal(size=n)
        if kind == "scale":
            x = np.clip(np.round(3 + 1.2 * truth + rng.normal(scale=0.8, size=n)), 1, 5)
            y = np.clip(np.round(3 + 1.2 * truth + rng.normal(scale=0.8, size=n)), 1, 5)
        else:
            x = truth + rng.normal(scale=0.6, size=n)
            y = 0.5 + truth + rng.normal(scale=0.6, size=n)
        pr = stats.pearsonr(x, y)
        ci = pr.confidence_interval(0.95)
        sr = stats.spearmanr(x, y)
        kt = stats.kendalltau(x, y)
        cases.append({
            "kind": kind,
            "x": x.tolist(),
            "y": y.tolist(),
            "pearson": {"r": float(pr.statistic), "p": float(pr.pvalue),
                        "ci_low": float(ci.low), "ci_high": float(ci.high)},
            "spearman": {"rho": float(sr.statistic), "p": float(sr.pvalue)},
            "kendall_tau_b": {"tau": float(kt.statistic), "p": float(kt.pvalue)},
        })
    return cases


def icc_cases():
    cases = []
    for n, k in [(8, 3), (30, 4), (120, 5)]:
        truth = rng.normal(size=n)
        rater_bias = rng.normal(scale=0.5, size=k)
        scores = np.round(3 + truth[:, None] + rater_bias[None, :]
                          + rng.normal(scale=0.7, size=(n, k)), 1)
        long = pd.DataFrame([(i, j, scores[i, j]) for i in range(n) for j in range(k)],
                            columns=["item", "rater", "score"])
        table = pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score")
        expected = {}
        # pingouin 0.7 names the forms after McGraw & Wong; map them to Shrout & Fleiss.
        names = {"ICC(1,1)": "ICC1", "ICC(A,1)": "ICC2", "ICC(C,1)": "ICC3",
                 "ICC(1,k)": "ICC1k", "ICC(A,k)": "ICC2k", "ICC(C,k)": "ICC3k"}
        for _, row in table.iterrows():
            expected[names[row["Type"]]] = {"value": float(row["ICC"]),
                                            "ci_low": float(row["CI95"][0]),
                                            "ci_high": float(row["CI95"][1])}
        cases.append({"rows": scores.tolist(), "icc": expected})
    return cases


def krippendorff_cases():
    cases = []
    for n, k, missing in [(15, 3, 0.2), (60, 4, 0.35), (200, 6, 0.5)]:
        truth = rng.integers(1, 6, size=n)
        data = np.clip(truth[None, :] + rng.integers(-1, 2, size=(k, n)), 1, 5).astype(float)
        data[rng.random(size=(k, n)) < missing] = np.nan
        cases.append({
            # items × raters, null for missing
            "rows": [[None if np.isnan(v) else float(v) for v in data[:, i]] for i in range(n)],
            "krippendorff_alpha": {
                level: float(krippendorff.alpha(reliability_data=data,
                                                level_of_measurement=level))
                for level in ["nominal", "ordinal", "interval"]
            },
        })
    return cases


def kappa_cases():
    cases = []
    for n in [20, 80, 400]:
        truth = rng.integers(1, 6, size=n)
        a = np.clip(truth + rng.integers(-1, 2, size=n), 1, 5)
        b = np.clip(truth + rng.integers(-1, 2, size=n), 1, 5)
        table = np.zeros((5, 5))
        for x, y in zip(a, b):
            table[x - 1, y - 1] += 1
        expected = {}
        for name, weights, wt in [("unweighted", None, None), ("linear", "linear", "linear"),
                                  ("quadratic", "quadratic", "quadratic")]:
            value = cohen_kappa_score(a, b, weights=weights, labels=[1, 2, 3, 4, 5])
            sm = cohens_kappa(table, wt=wt) if wt else cohens_kappa(table)
            expected[name] = {"value": float(value), "se": float(sm.std_kappa)}
        cases.append({"a": a.tolist(), "b": b.tolist(), "cohen_kappa": expected})
    return cases


def fleiss_cases():
    cases = []
    for n, m in [(25, 3), (100, 5)]:
        truth = rng.integers(1, 5, size=n)
        rows = np.clip(truth[:, None] + rng.integers(-1, 2, size=(n, m)), 1, 4)
        counts, _ = aggregate_raters(rows, n_cat=None)
        cases.append({"rows": rows.tolist(),
                      "fleiss_kappa": float(fleiss_kappa(counts, method="fleiss"))})
    return cases


def proportion_cases():
    wilson = []
    for count, n in [(0, 10), (3, 10), (51, 100), (270, 1000), (7, 7)]:
        low, high = proportion_confint(count, n, alpha=0.05, method="wilson")
        wilson.append({"count": count, "n": n, "ci_low": float(low), "ci_high": float(high)})
    pass_at_k = []
    for n, c, k in [(5, 0, 1), (5, 1, 1), (5, 2, 5), (10, 3, 5), (20, 1, 5), (200, 37, 10)]:
        pass_at_k.append({"n": n, "c": c, "k": k,
                          "value": 1 - comb(n - c, k, exact=True) / comb(n, k, exact=True)})
    return wilson, pass_at_k


wilson, pass_at_k = proportion_cases()
document = {
    "origin": "scripts/reference/calibration/make_reference.py (seed 20261121)",
    "licence": "generated data, MIT like the repository",
    "versions": {name: version(name) for name in
                 ["numpy", "scipy", "pandas", "pingouin", "krippendorff", "scikit-learn",
                  "statsmodels"]},
    "python": sys.version.split()[0],
    "paired": paired_cases(),
    "icc": icc_cases(),
    "krippendorff": krippendorff_cases(),
    "cohen": kappa_cases(),
    "fleiss": fleiss_cases(),
    "wilson": wilson,
    "pass_at_k": pass_at_k,
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
