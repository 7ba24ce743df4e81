#!/usr/bin/env python3
"""Check the report's sample size counted in cases by simulation: a pilot study with errors
shared within a case, and the power of new studies of C cases drawn from it.

Run once; the output is committed as calibration/tests/data/cases_power_reference.json and read
by calibration/tests/verdict.rs. Rerunning with the same library versions reproduces it.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_cases_power_reference.py \
        > calibration/tests/data/cases_power_reference.json

The report says how many cases a new study needs for an 80 % chance that its 95 % lower bound
clears the bar "if r is truly as observed": Fisher's n for power times a design effect from the
case bootstrap, divided by the items per case. This script checks that claim without any of
those formulas, by a plasmode simulation: the pilot's cases are the population (so r is truly the
pilot's r, and a case's items stay together with whatever they share). For each C on a grid,
STUDIES new studies draw C cases with replacement from the pilot; each study's r (grader vs the
clinicians' per-item mean) gets a case-bootstrap 95 % percentile interval (BOOT resamples, numpy);
the power is the share of studies whose lower bound is at least the bar. (The report's verdict
uses BCa where defined; with C of 40 or more cases the two lower bounds differ little.)

The pilot: 40 cases of 4 items, three clinicians and a grader on a continuous 1-5 scale; the
grader's error has a part shared by a case's items (SD 0.35) and a part per item (SD 0.3).
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from scipy import stats

SEED = 20261201
BAR = 0.80
STUDIES = 2000
BOOT = 400
CHUNK = 50
GRID = [20, 30, 40, 50, 60, 70, 80, 100, 120, 150]
RATERS = ["dr_a", "dr_b", "dr_c"]

rng = np.random.default_rng(SEED)


def pilot():
    items = []
    for c in range(40):
        shared = rng.normal(scale=0.35)
        for t in range(4):
            truth = 3 + 0.8 * rng.normal()
            scores = {r: round(float(np.clip(truth + 0.3 * rng.normal(), 1, 5)), 3)
                      for r in RATERS}
            scores["grader"] = round(float(np.clip(truth + shared + 0.3 * rng.normal(), 1, 5)), 3)
            items.append({"item": f"case{c:02d}/t{t}", "case": f"case{c:02d}", "scores": scores})
    return items


def r_of(sums):
    """Pearson r from per-study sums (n, Σx, Σy, Σx², Σy², Σxy) along the last axis."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(sums, -1, 0)
    cxy = sxy - sx * sy / n
    return cxy / np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))


def main():
    items = pilot()
    cases = sorted({it["case"] for it in items})
    g = np.array([it["scores"]["grader"] for it in items])
    m = np.array([np.mean([it["scores"][r] for r in RATERS]) for it in items])
    case_index = np.array([cases.index(it["case"]) for it in items])
    per_case = np.zeros((len(cases), 6))
    for i, c in enumerate(case_index):
        per_case[c] += [1, g[i], m[i], g[i] ** 2, m[i] ** 2, g[i] * m[i]]
    power = []
    for size in GRID:
        cleared = 0
        for _ in range(STUDIES // CHUNK):  # CHUNK studies at a time bounds the memory
            studies = rng.integers(0, len(cases), size=(CHUNK, size))
            study_sums = per_case[studies]                  # CHUNK x C x 6
            draws = rng.integers(0, size, size=(CHUNK, BOOT, size))
            resampled = np.take_along_axis(study_sums[:, None, :, :],
                                           draws[..., None], axis=2).sum(axis=2)
            low = np.quantile(r_of(resampled), 0.025, axis=1)
            cleared += int(np.sum(low >= BAR))
        power.append(cleared / STUDIES)
    document = {
        "origin": f"scripts/reference/calibration/make_cases_power_reference.py (seed {SEED})",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scipy"]},
        "python": sys.version.split()[0],
        "bar": BAR,
        "studies": STUDIES,
        "bootstrap_resamples": BOOT,
        "scores": [{"item": it["item"], "case": it["case"], "rater": r, "score": s}
                   for it in items for r, s in sorted(it["scores"].items())],
        "pilot_r": float(stats.pearsonr(g, m).statistic),
        "power_by_cases": [{"cases": c, "power": p} for c, p in zip(GRID, power)],
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
