#!/usr/bin/env python3
"""Generate random test-retest reads and their expected intra-rater statistics.

Run once; the output is committed as calibration/tests/data/intra_rater_reference.json and read
by calibration/tests/intra_rater.rs. Rerunning with the same library versions reproduces it byte
for byte (fixed seed).

    python3 -m venv /tmp/calref
    /tmp/calref/bin/pip install numpy pandas pingouin scikit-learn statsmodels
    /tmp/calref/bin/python scripts/reference/calibration/make_intra_rater_reference.py \
        > calibration/tests/data/intra_rater_reference.json

Each read is (rater, item, case, first, repeat) on a 1-5 scale. Expected values per rater and
pooled over raters (every (rater, item) pair one target):
- icc: pingouin.intraclass_corr, row "ICC(A,1)" (= Shrout & Fleiss ICC2), targets = item,
  raters = read (first / repeat); value unrounded, CI as pingouin gives it (2 decimals)
- cohen_kappa: sklearn.metrics.cohen_kappa_score(first, repeat, weights=None/"linear"/
  "quadratic", labels=[1..5]) for the value and statsmodels cohens_kappa (std_kappa) for the SE
- mean_absolute_difference, mean_difference (repeat - first): numpy
"""

import json
import sys
from importlib.metadata import version

import numpy as np
import pandas as pd
import pingouin
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

rng = np.random.default_rng(20261122)
LEVELS = [1, 2, 3, 4, 5]


def reads_of(rater, n_cases, items_per_case, noise, shift):
    """A clinician's first reads and their repeats: the repeat is the first read plus rounded
    normal noise and a systematic shift (a stricter or milder second session), kept on the
    scale."""
    reads = []
    for c in range(n_cases):
        case = f"case-{c:02d}"
        for t in range(items_per_case):
            truth = rng.normal()
            first = int(np.clip(np.round(3 + 1.2 * truth + rng.normal(scale=0.5)), 1, 5))
            repeat = int(np.clip(np.round(first + shift + rng.normal(scale=noise)), 1, 5))
            reads.append({"rater": rater, "item": f"{case}/t{t}", "case": case,
                          "first": first, "repeat": repeat})
    return reads


def expected(reads):
    first = np.array([r["first"] for r in reads])
    repeat = np.array([r["repeat"] for r in reads])
    targets = [f'{r["rater"]}|{r["item"]}' for r in reads]
    long = pd.DataFrame(
        [(t, "first", x) for t, x in zip(targets, first)]
        + [(t, "repeat", y) for t, y in zip(targets, repeat)],
        columns=["target", "read", "score"])
    table = pingouin.intraclass_corr(long, targets="target", raters="read", ratings="score")
    row = table[table["Type"] == "ICC(A,1)"].iloc[0]
    contingency = np.zeros((5, 5))
    for x, y in zip(first, repeat):
        contingency[x - 1, y - 1] += 1
    kappa = {}
    for name, weights in [("unweighted", None), ("linear", "linear"),
                          ("quadratic", "quadratic")]:
        value = cohen_kappa_score(first, repeat, weights=weights, labels=LEVELS)
        sm = cohens_kappa(contingency, wt=weights) if weights else cohens_kappa(contingency)
        kappa[name] = {"value": float(value), "se": float(sm.std_kappa)}
    return {
        "n_pairs": len(reads),
        "icc": {"value": float(row["ICC"]), "ci_low": float(row["CI95"][0]),
                "ci_high": float(row["CI95"][1])},
        "cohen_kappa": kappa,
        "mean_absolute_difference": float(np.mean(np.abs(repeat - first))),
        "mean_difference": float(np.mean(repeat - first)),
    }


reads = (reads_of("rater-a", 10, 3, noise=0.5, shift=0.0)
         + reads_of("rater-b", 6, 2, noise=0.7, shift=-0.6)
         + reads_of("rater-c", 3, 1, noise=0.5, shift=0.0))
raters = sorted({r["rater"] for r in reads})
document = {
    "origin": "scripts/reference/calibration/make_intra_rater_reference.py (seed 20261122)",
    "licence": "generated data, MIT like the repository",
    "versions": {name: version(name) for name in
                 ["numpy", "pandas", "pingouin", "scikit-learn", "statsmodels"]},
    "python": sys.version.split()[0],
    "reads": reads,
    # rater-c has 3 pairs, fewer than the report's minimum of 5: no expected values.
    "raters": {r: expected([x for x in reads if x["rater"] == r]) for r in raters
               if sum(x["rater"] == r for x in reads) >= 5},
    "pooled": expected(reads),
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
