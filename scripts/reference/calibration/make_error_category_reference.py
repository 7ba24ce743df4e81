#!/usr/bin/env python3
"""Generate error labels in clustered cases and the expected per-category precision and recall of
the grader's error claims, with case-bootstrap intervals.

Run once; the output is committed as calibration/tests/data/error_category_reference.json and
read by calibration/tests/error_categories.rs.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_error_category_reference.py \
        > calibration/tests/data/error_category_reference.json

The study: 12 cases of 3-5 items; each item reviewed by 1-3 clinicians (items with one reviewer
have no consensus and stay out); the error present in a case is shared by its items, which is why
items of one case are not independent. Expected values, written out here from the rule in
docs/calibration.md (a label counts when at least half of an item's reviewers, and at least two
reviewers, gave it):
- precision = confirmed claims / claims, recall = confirmed labels / labels, per category;
- their case-bootstrap intervals with the report's resample indices (case_bootstrap.py), the
  statistics recomputed on the resampled items; cases in order of first appearance among the
  items with a consensus, as the report numbers them.
"""

import json
import sys
from importlib.metadata import version

import numpy as np

import case_bootstrap

SEED = 20261127
BOOT_SEED = 11
RESAMPLES = 400
CATEGORIES = ["P1", "R1", "K1"]
RATERS = ["dr_a", "dr_b", "dr_c"]

rng = np.random.default_rng(SEED)


def study():
    items = []
    for c in range(12):
        case = f"case-{c:02d}"
        present = {cat for cat in CATEGORIES if rng.random() < 0.4}
        for t in range(int(rng.integers(3, 6))):
            reviewers = RATERS[: int(rng.integers(1, 4))]
            labels = [{"rater": r, "category": cat, "severity": int(rng.integers(1, 4))}
                      for r in reviewers for cat in CATEGORIES
                      if (cat in present and rng.random() < 0.8)
                      or (cat not in present and rng.random() < 0.1)]
            claims = sorted(cat for cat in CATEGORIES
                            if (cat in present and rng.random() < 0.7)
                            or (cat not in present and rng.random() < 0.15))
            items.append({"item": f"{case}/t{t}", "case": case, "reviewers": reviewers,
                          "labels": labels, "claims": claims})
    return items


def consensus(item, category):
    givers = {l["rater"] for l in item["labels"] if l["category"] == category}
    return bool(givers) and 2 * len(givers) >= len(item["reviewers"])


def statistics(items):
    out = {}
    for cat in CATEGORIES:
        claimed = [it for it in items if cat in it["claims"]]
        labelled = [it for it in items if consensus(it, cat)]
        both = [it for it in claimed if consensus(it, cat)]
        out[f"{cat}/precision"] = len(both) / len(claimed) if claimed else None
        out[f"{cat}/recall"] = len(both) / len(labelled) if labelled else None
    return out


def main():
    items = study()
    agreed = [it for it in items if len(it["reviewers"]) >= 2]
    cases = list(dict.fromkeys(it["case"] for it in agreed))
    by_case = {c: [it for it in agreed if it["case"] == c] for c in cases}
    full = statistics(agreed)
    document = {
        "origin": f"scripts/reference/calibration/make_error_category_reference.py (seed {SEED})",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scipy"]},
        "python": sys.version.split()[0],
        "bootstrap": {"seed": BOOT_SEED, "resamples": RESAMPLES},
        "items": items,
        "expected": {
            "items_with_consensus": len(agreed),
            "cases_with_consensus": len(cases),
            "point": full,
            "intervals": case_bootstrap.intervals(cases, by_case, statistics, BOOT_SEED,
                                                  RESAMPLES),
        },
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
