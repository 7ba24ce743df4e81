#!/usr/bin/env python3
"""Correctness judgements and their expected pass@k with the report's case-aware interval.

Run once; the output is committed as calibration/tests/data/pass_at_k_reference.json and read by
calibration/tests/verdict.rs. Rerunning with the same library versions reproduces it byte for
byte (fixed seed).

    /tmp/verdict-ref/bin/pip install numpy scipy statsmodels
    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_pass_at_k_reference.py \
        > calibration/tests/data/pass_at_k_reference.json

Two models on the same tasks: cases c1 (1 task), c2 (2 tasks) and c3 (5 tasks), task ids reused
across cases (a task id names a task within its case), 5 samples per task judged by one
clinician. Model "always" is correct on every sample; model "mixed" at random.
- pass@k per task: 1 - C(n - c, k) / C(n, k) with math.comb (Chen et al. 2021), averaged over
  tasks;
- Kish's effective number of cases (sum of tasks per case)^2 / sum of (tasks per case)^2;
- the interval: statsmodels proportion_confint(value * n_eff, n_eff, method="wilson").
"""

import json
import math
import sys
from importlib.metadata import version

import numpy as np
from statsmodels.stats.proportion import proportion_confint

SEED = 20261126
rng = np.random.default_rng(SEED)
TASKS = {"c1": ["t1"], "c2": ["t1", "t2"], "c3": ["t1", "t2", "t3", "t4", "t5"]}
SAMPLES = 5

judgements = []
for model in ["always", "mixed"]:
    for case, tasks in TASKS.items():
        for task in tasks:
            for sample in range(SAMPLES):
                correct = True if model == "always" else bool(rng.uniform() < 0.4)
                judgements.append({"case": case, "task": task, "model": model,
                                   "sample": sample, "correct": correct})

expected = []
for model in ["always", "mixed"]:
    for k in [1, 5]:
        values, per_case = [], {}
        for case, tasks in TASKS.items():
            for task in tasks:
                c = sum(j["correct"] for j in judgements
                        if j["model"] == model and j["case"] == case and j["task"] == task)
                n = SAMPLES
                values.append(1 - math.comb(n - c, k) / math.comb(n, k))
                per_case[case] = per_case.get(case, 0) + 1
        value = float(np.mean(values))
        n_eff = sum(per_case.values()) ** 2 / sum(t * t for t in per_case.values())
        low, high = proportion_confint(value * n_eff, n_eff, alpha=0.05, method="wilson")
        expected.append({"model": model, "k": k, "value": value, "n": len(values),
                         "n_cases": len(per_case), "effective_cases": n_eff,
                         "ci_low": float(low), "ci_high": float(high)})

json.dump({
    "origin": f"scripts/reference/calibration/make_pass_at_k_reference.py (seed {SEED})",
    "licence": "generated data, MIT like the repository",
    "versions": {name: version(name) for name in ["numpy", "statsmodels"]},
    "python": sys.version.split()[0],
    "judgements": judgements,
    "expected": expected,
}, sys.stdout, indent=1)
sys.stdout.write("\n")
