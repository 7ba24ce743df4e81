#!/usr/bin/env python3
"""Generate random complete score tables and the mean-of-k ICC forms (ICC1k, ICC2k, ICC3k) with
their 95 % intervals, unrounded.

Run once; the output is committed as calibration/tests/data/icc_k_reference.json and read by
calibration/tests/intervals.rs. Rerunning with the same library versions reproduces it.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_icc_k_reference.py \
        > calibration/tests/data/icc_k_reference.json

Sources: the values and intervals from irr_icc.py's average forms (irr 0.84.1's icc(unit =
"average"): McGraw & Wong 1996's closed forms of ICC(1,k), ICC(C,k) and ICC(A,k), the last with
the Satterthwaite degrees of freedom) on the two-way ANOVA mean squares; the values and
two-decimal intervals also from pingouin.intraclass_corr (ICC1k, ICC2k, ICC3k) as a cross-check.
"""

import json
import sys
from importlib.metadata import version

import numpy as np
import pandas as pd
import pingouin

import irr_icc

SEED = 20261130
rng = np.random.default_rng(SEED)


def case(n, k, continuous):
    truth = rng.normal(size=n)
    rater_shift = rng.normal(scale=0.5, size=k)
    x = 3 + 1.1 * truth[:, None] + rater_shift[None, :] + rng.normal(scale=0.8, size=(n, k))
    x = np.round(x, 2) if continuous else np.clip(np.round(x), 1, 5)
    ms_rows, ms_within, ms_cols, ms_error = irr_icc.mean_squares(x)
    forms = {
        "ICC1k": irr_icc.oneway_average(ms_rows, ms_within, n, k),
        "ICC2k": irr_icc.agreement_average(ms_rows, ms_cols, ms_error, n, k),
        "ICC3k": irr_icc.consistency_average(ms_rows, ms_error, n, k),
    }
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(n) for j in range(k)],
                        columns=["target", "rater", "score"])
    table = pingouin.intraclass_corr(long, targets="target", raters="rater", ratings="score")
    names = {"ICC(1,k)": "ICC1k", "ICC(A,k)": "ICC2k", "ICC(C,k)": "ICC3k"}
    rows = {names[r["Type"]]: r for _, r in table.iterrows() if r["Type"] in names}
    return {
        "scores": x.tolist(),
        "icc": {name: {"value": float(v), "ci_low": float(lo), "ci_high": float(hi),
                       "pingouin_value": float(rows[name]["ICC"]),
                       "pingouin_ci_rounded": [float(c) for c in rows[name]["CI95"]]}
                for name, (v, lo, hi) in forms.items()},
    }


document = {
    "origin": f"scripts/reference/calibration/make_icc_k_reference.py (seed {SEED})",
    "licence": "generated data, MIT like the repository",
    "versions": {name: version(name) for name in ["numpy", "scipy", "pandas", "pingouin"]},
    "python": sys.version.split()[0],
    "cases": [case(8, 3, False), case(30, 4, False), case(25, 2, True), case(60, 5, True)],
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
