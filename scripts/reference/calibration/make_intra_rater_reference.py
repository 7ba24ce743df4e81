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
- icc, per rater: pingouin.intraclass_corr, row "ICC(A,1)" (= Shrout & Fleiss ICC2), targets =
  item, raters = read (first / repeat), for the value; the interval unrounded from irr's formulas
  (irr_icc.py) on pingouin's own mean squares is in icc.ci_low/ci_high, pingouin's rounded one in
  icc.pingouin_ci
- icc, pooled: the clinicians' differences are not variance between targets. The sums of squares
  come from statsmodels' comparison of nested least-squares fits (anova_lm(m1, m2, m3)) of
  score ~ C(rater), + C(target), + C(read): targets within raters (N - C df), read (1 df),
  residual (N - 1 df); ICC(A,1) and its interval from irr's formulas with df_rows = N - C (irr_icc.py).
  pingouin's figure on the same data, which counts the clinicians' differences as target
  variance, is kept as icc.naive_pingouin to show the difference.
- cohen_kappa: sklearn.metrics.cohen_kappa_score(first, repeat, weights=None/"linear"/
  "quadratic", labels=[1..5]) for the value and statsmodels cohens_kappa (std_kappa) for the SE
- mean_absolute_difference, mean_difference (repeat - first): numpy
"""

import json
import sys
import warnings
from importlib.metadata import version

import numpy as np
import pandas as pd
import pingouin
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

import irr_icc
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


def pooled_icc(reads):
    long = pd.DataFrame(
        [(r["rater"], f'{r["rater"]}|{r["item"]}', "first", r["first"]) for r in reads]
        + [(r["rater"], f'{r["rater"]}|{r["item"]}', "repeat", r["repeat"]) for r in reads],
        columns=["rater", "target", "read", "score"])
    # Targets are nested in raters, so the dummy design of one model is rank-deficient and
    # anova_lm's typ=1 table misattributes the sums of squares; the sequential sums of squares
    # are taken instead as the drops in residual sum of squares between nested fits (least
    # squares through the pseudo-inverse, exact whatever the rank).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [smf.ols(f, data=long).fit() for f in [
            "score ~ C(rater)", "score ~ C(rater) + C(target)",
            "score ~ C(rater) + C(target) + C(read)"]]
        table = anova_lm(*fits)
    # Nested in C raters the N targets have N - C df.
    df_targets = long["target"].nunique() - long["rater"].nunique()
    ms_rows = table.loc[1, "ss_diff"] / df_targets
    ms_cols = table.loc[2, "ss_diff"] / 1
    ms_error = table.loc[2, "ssr"] / table.loc[2, "df_resid"]
    value, low, high = irr_icc.agreement_single(
        ms_rows, ms_cols, ms_error, len(reads), 2, df_rows=df_targets)
    return {"value": float(value), "ci_low": float(low), "ci_high": float(high),
            "df_targets": float(df_targets), "df_residual": float(table.loc[2, "df_resid"])}


def expected(reads, pooled=False):
    first = np.array([r["first"] for r in reads])
    repeat = np.array([r["repeat"] for r in reads])
    targets = [f'{r["rater"]}|{r["item"]}' for r in reads]
    long = pd.DataFrame(
        [(t, "first", x) for t, x in zip(targets, first)]
        + [(t, "repeat", y) for t, y in zip(targets, repeat)],
        columns=["target", "read", "score"])
    table = pingouin.intraclass_corr(long, targets="target", raters="read", ratings="score")
    row = table[table["Type"] == "ICC(A,1)"].iloc[0]
    ms_rows, _, ms_cols, ms_error = irr_icc.mean_squares([[x, y] for x, y in zip(first, repeat)])
    _, irr_low, irr_high = irr_icc.agreement_single(ms_rows, ms_cols, ms_error, len(reads), 2)
    if pooled:
        icc = pooled_icc(reads)
        icc["naive_pingouin"] = float(row["ICC"])
    else:
        icc = {"value": float(row["ICC"]), "ci_low": float(irr_low), "ci_high": float(irr_high),
               "pingouin_ci": [float(row["CI95"][0]), float(row["CI95"][1])]}
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
        "icc": icc,
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
    "pooled": expected(reads, pooled=True),
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
