#!/usr/bin/env python3
"""Generate clinicians' error labels on three models' responses and the expected per-model error
counts of the report (`error_distribution.by_model`), with statsmodels' Wilson intervals.

Run once; the output is committed as calibration/tests/data/errors_by_model_reference.json and
read by calibration/tests/error_categories.rs.

    /tmp/records-ref/bin/python scripts/reference/calibration/make_errors_by_model_reference.py \
        > calibration/tests/data/errors_by_model_reference.json

The study: 10 cases of 3 tasks, each task answered by three models; each response reviewed by one
to three clinicians. One model anchors (R4, docs/taxonomy.md) on most multi-turn tasks, the
others rarely; P1 and R1 are spread evenly. Some responses were reviewed by nobody: they must not
count. Expected values, written out from the rule in docs/calibration.md ("Errors per model"):
- reviewed = the model's responses with at least one reviewer;
- count = of those, the responses with at least one clinician's label of the category (any
  reviewer: the distribution counts what clinicians found, not a consensus);
- every category any clinician used anywhere is listed for every model, zero counts included;
- interval: statsmodels.stats.proportion.proportion_confint(count, reviewed, alpha=0.05,
  method="wilson").
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from statsmodels.stats.proportion import proportion_confint

SEED = 20261126
MODELS = ["alpha", "beta", "gamma"]
RATERS = ["dr_a", "dr_b", "dr_c"]
# (category, chance per model): beta anchors; the rest are shared.
CHANCES = {"P1": [0.3, 0.3, 0.3], "R1": [0.2, 0.25, 0.2], "R4": [0.05, 0.7, 0.0]}

rng = np.random.default_rng(SEED)


def study():
    items = []
    for c in range(10):
        case = f"case-{c:02d}"
        for t in range(3):
            for m, model in enumerate(MODELS):
                reviewers = [] if rng.random() < 0.1 else RATERS[: int(rng.integers(1, 4))]
                labels = [{"rater": r, "category": cat, "severity": int(rng.integers(1, 4))}
                          for r in reviewers for cat, chances in CHANCES.items()
                          if rng.random() < chances[m]]
                items.append({"item": f"{case}/t{t}/{model}/0", "case": case, "model": model,
                              "reviewers": reviewers, "labels": labels})
    return items


def expected(items):
    categories = sorted({l["category"] for i in items for l in i["labels"]})
    rows = []
    for model in MODELS:
        reviewed = [i for i in items if i["model"] == model and i["reviewers"]]
        by_category = []
        for cat in categories:
            count = sum(1 for i in reviewed if any(l["category"] == cat for l in i["labels"]))
            low, high = proportion_confint(count, len(reviewed), alpha=0.05, method="wilson")
            by_category.append({"name": cat, "count": count, "share": count / len(reviewed),
                                "ci_low": float(low), "ci_high": float(high)})
        rows.append({"model": model, "reviewed": len(reviewed), "by_category": by_category})
    return rows


items = study()
json.dump({
    "source": "scripts/reference/calibration/make_errors_by_model_reference.py",
    "versions": {"python": sys.version.split()[0], "numpy": version("numpy"),
                 "statsmodels": version("statsmodels")},
    "seed": SEED,
    "items": items,
    "by_model": expected(items),
}, sys.stdout, indent=1)
sys.stdout.write("\n")
