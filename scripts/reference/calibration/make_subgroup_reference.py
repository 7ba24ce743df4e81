#!/usr/bin/env python3
"""Generate a clustered study with two grouping columns and the expected test of whether a
subgroup differs from the rest: its r (grader vs the clinicians' per-item mean) minus the r of
the dimension's other items, with a case-bootstrap interval.

Run once; the output is committed as calibration/tests/data/subgroup_reference.json and read by
calibration/tests/subgroups.rs.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_subgroup_reference.py \
        > calibration/tests/data/subgroup_reference.json

The study: 18 cases of 4 items, three clinicians (dr_c scores only some items) and a grader on a
1-5 scale. `model` cuts across cases (two items of each case per model; the grader is noisier on
model-b); `site` is constant within a case. Expected values, computed here on the items
themselves: scipy.stats.pearsonr of each subgroup and of the other items, their difference, and
the case bootstrap of it with the report's resample indices (case_bootstrap.py; cases numbered in
order of first appearance among the compared items sorted by item id, as the report numbers them).
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from scipy import stats

import case_bootstrap

SEED = 20261128
BOOT_SEED = 5
RESAMPLES = 400
RATERS = ["dr_a", "dr_b", "dr_c"]

rng = np.random.default_rng(SEED)


def study():
    items = []
    for c in range(18):
        case = f"case-{c:02d}"
        site = ["north", "south", "east"][c % 3]
        shared = rng.normal(scale=0.4)
        for t in range(4):
            model = "model-a" if t < 2 else "model-b"
            truth = 3 + 1.2 * rng.normal()
            scores = {}
            for rater in RATERS:
                if rater == "dr_c" and rng.random() < 0.4:
                    continue
                scores[rater] = int(np.clip(np.round(truth + 0.5 * rng.normal()), 1, 5))
            noise = 0.4 if model == "model-a" else 1.3
            scores["grader"] = int(np.clip(np.round(truth + shared + noise * rng.normal()), 1, 5))
            items.append({"item": f"{case}/t{t}", "case": case,
                          "groups": {"model": model, "site": site}, "scores": scores})
    return sorted(items, key=lambda it: it["item"])


def pair(it):
    humans = [it["scores"][r] for r in RATERS if r in it["scores"]]
    return it["scores"]["grader"], float(np.mean(humans))


def r_of(items):
    if len(items) < 4:
        return None
    g, m = zip(*(pair(it) for it in items))
    if np.ptp(g) == 0 or np.ptp(m) == 0:
        return None
    return float(stats.pearsonr(g, m).statistic)


def differences(column, values):
    def statistics(items):
        out = {}
        for v in values:
            own = r_of([it for it in items if it["groups"][column] == v])
            rest = r_of([it for it in items if it["groups"][column] != v])
            out[v] = None if own is None or rest is None else own - rest
        return out
    return statistics


def main():
    items = study()
    cases = list(dict.fromkeys(it["case"] for it in items))
    by_case = {c: [it for it in items if it["case"] == c] for c in cases}
    expected = {}
    for column in ["model", "site"]:
        values = sorted({it["groups"][column] for it in items})
        statistics = differences(column, values)
        expected[column] = {
            "r": {v: r_of([it for it in items if it["groups"][column] == v]) for v in values},
            "difference": statistics(items),
            "intervals": case_bootstrap.intervals(cases, by_case, statistics, BOOT_SEED,
                                                  RESAMPLES),
        }
    document = {
        "origin": f"scripts/reference/calibration/make_subgroup_reference.py (seed {SEED})",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scipy"]},
        "python": sys.version.split()[0],
        "bootstrap": {"seed": BOOT_SEED, "resamples": RESAMPLES},
        "items": items,
        "expected": expected,
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
