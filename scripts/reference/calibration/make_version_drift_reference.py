#!/usr/bin/env python3
"""Two grader versions' scores and the drift between them, for calibration/tests/version_drift.rs.

Run once; the output is committed as calibration/tests/data/version_drift_reference.json.
Rerunning with the same library versions reproduces it byte for byte (fixed seed).

    python3 -m venv /tmp/wb-ref && /tmp/wb-ref/bin/pip install numpy scipy
    /tmp/wb-ref/bin/python scripts/reference/calibration/make_version_drift_reference.py \
        > calibration/tests/data/version_drift_reference.json

Six models, 12 cases × 2 tasks × 2 samples each, scores 1-5 in steps of 1. Version "before"
scores every item; "after" is "before" shifted and perturbed, scoring all but every seventh item
(so only the common items count); two models are scored higher after. Two seeds give two
studies; in the second, vlm-e and vlm-f score 3 on every item under both versions, so their
means tie in both rankings (scipy's tie-corrected tau-b). Expected values:
- the mean shift: numpy mean of after - before over common items;
- verdict flips: items on either side of the threshold (score >= 3 passes);
- each model's mean over the common items (numpy), and Kendall's tau-b between the two vectors
  of model means with scipy.stats.kendalltau (variant "b", the default), with its p-value.
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from scipy.stats import kendalltau

PASS_AT_OR_ABOVE = 3.0
MODELS = [f"vlm-{c}" for c in "abcdef"]


def study(seed, ties):
    rng = np.random.default_rng(seed)
    quality = {m: q for m, q in zip(MODELS, rng.uniform(1.5, 4.5, len(MODELS)))}
    before, after = [], []
    n = 0
    for case in range(12):
        for task in ("dx", "loc"):
            for model in MODELS:
                for sample in range(2):
                    item = f"c{case:02d}/{task}/{model}/{sample}"
                    b = float(np.clip(np.round(quality[model] + rng.normal(0, 0.8)), 1, 5))
                    bias = 0.6 if model in ("vlm-c", "vlm-d") else -0.2
                    a = float(np.clip(np.round(b + bias + rng.normal(0, 0.7)), 1, 5))
                    if ties and model in ("vlm-e", "vlm-f"):
                        b = a = 3.0
                    before.append({"item": item, "model": model, "score": b})
                    if n % 7 != 3:
                        after.append({"item": item, "model": model, "score": a})
                    n += 1
    common = {s["item"] for s in before} & {s["item"] for s in after}
    b_of = {s["item"]: s for s in before}
    a_of = {s["item"]: s for s in after}
    items = sorted(common)
    shift = float(np.mean([a_of[i]["score"] - b_of[i]["score"] for i in items]))
    to_pass = [i for i in items if b_of[i]["score"] < PASS_AT_OR_ABOVE <= a_of[i]["score"]]
    to_fail = [i for i in items if a_of[i]["score"] < PASS_AT_OR_ABOVE <= b_of[i]["score"]]
    means = []
    for model in MODELS:
        mine = [i for i in items if b_of[i]["model"] == model]
        means.append({
            "model": model,
            "n_items": len(mine),
            "mean_before": float(np.mean([b_of[i]["score"] for i in mine])),
            "mean_after": float(np.mean([a_of[i]["score"] for i in mine])),
        })
    tau = kendalltau([m["mean_before"] for m in means], [m["mean_after"] for m in means])
    return {
        "seed": seed,
        "before": before,
        "after": after,
        "pass_at_or_above": PASS_AT_OR_ABOVE,
        "expected": {
            "n_common": len(items),
            "mean_shift": shift,
            "flips_to_pass": to_pass,
            "flips_to_fail": to_fail,
            "models": means,
            "tau": float(tau.statistic),
            "tau_p": float(tau.pvalue),
        },
    }


out = {
    "made_by": "scripts/reference/calibration/make_version_drift_reference.py",
    "versions": {
        "python": sys.version.split()[0],
        "numpy": version("numpy"),
        "scipy": version("scipy"),
    },
    "studies": [study(20261124, False), study(20261125, True)],
}
json.dump(out, sys.stdout, indent=1)
print()
