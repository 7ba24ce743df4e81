#!/usr/bin/env python3
"""Generate a study in which the grader uses levels no clinician gave, and the grader's Cohen's κ
against the clinicians' consensus: their per-item mean rounded to the nearest level a clinician
can give (ties upward), never a level only the grader used.

Run once; the output is committed as calibration/tests/data/consensus_reference.json and read by
calibration/tests/verdict.rs. Rerunning with the same library versions reproduces it.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_consensus_reference.py \
        > calibration/tests/data/consensus_reference.json

The study: 40 items, three clinicians who gave only even scores 2-8 and a grader that gives any
integer 1-9 (no scale declared, so the levels are the values observed): a mean of 4.67 is 4 by
the clinicians' levels but 5, a level only the grader used, by every value observed. Two consensus sets: `clinician_levels`
(the values the clinicians gave: the report's rule without a scale) and, for contrast,
`all_levels` (every value observed, the grader's included: the rule the report no longer uses).
Expected values: the consensus by numpy (nearest level, the higher on a tie), κ unweighted,
linear and quadratic by sklearn.metrics.cohen_kappa_score with labels = every value observed
(1-9, equally spaced, so weights by position are weights by value).
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from sklearn.metrics import cohen_kappa_score

SEED = 20261131
rng = np.random.default_rng(SEED)


def nearest(value, levels):
    levels = np.asarray(sorted(levels), float)
    distance = np.abs(levels - value)
    best = distance.min()
    return float(levels[np.nonzero(np.isclose(distance, best, rtol=0, atol=1e-12))[0][-1]])


def main():
    items = []
    for i in range(40):
        truth = 5 + 1.8 * rng.normal()
        scores = {r: 2 * int(np.clip(np.round((truth + 0.9 * rng.normal()) / 2), 1, 4))
                  for r in ["dr_a", "dr_b", "dr_c"]}
        scores["grader"] = int(np.clip(np.round(truth + 1.0 * rng.normal()), 1, 9))
        items.append({"item": f"i{i:02d}", "scores": scores})
    clinician_levels = sorted({s for it in items for r, s in it["scores"].items() if r != "grader"})
    all_levels = sorted({s for it in items for s in it["scores"].values()})
    grader = [it["scores"]["grader"] for it in items]
    means = [float(np.mean([s for r, s in it["scores"].items() if r != "grader"])) for it in items]
    expected = {}
    for name, levels in [("clinician_levels", clinician_levels), ("all_levels", all_levels)]:
        consensus = [nearest(m, levels) for m in means]
        expected[name] = {
            "levels": levels,
            "consensus": consensus,
            "kappa": {w: float(cohen_kappa_score(grader, consensus, labels=all_levels,
                                                 weights=None if w == "unweighted" else w))
                      for w in ["unweighted", "linear", "quadratic"]},
        }
    document = {
        "origin": f"scripts/reference/calibration/make_consensus_reference.py (seed {SEED})",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scikit-learn"]},
        "python": sys.version.split()[0],
        "items": items,
        "expected": expected,
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
