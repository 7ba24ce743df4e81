#!/usr/bin/env python3
"""Generate a study and the expected alternative annotator test of every report section.

Run once; the output is committed as calibration/tests/data/alt_test_reference.json and read by
calibration/tests/alt_test.rs. Rerunning with the same library versions reproduces it byte for
byte (fixed seed).

    python3 -m venv /tmp/verdict-ref
    /tmp/verdict-ref/bin/pip install numpy scipy
    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_alt_test_reference.py \
        > calibration/tests/data/alt_test_reference.json

The procedure is the authors' (Calderon, Reichart & Dror, ACL 2025; their `alt_test` in
github.com/nitaytech/AltTest), written out here from the paper and their README: for each
held-out annotator, the items they, the grader and at least one other annotator scored; the
alignment of a score with the others is -RMSE; W_f = [S_f >= S_h], W_h = [S_h >= S_f];
scipy.stats.ttest_1samp(W_h - W_f, epsilon, alternative="less") (no variance: p = 0 when the
constant is below epsilon, else 1); annotators with fewer than 30 items are skipped; ω = share of
tested annotators whose null is rejected, rho-bar = mean of rho_f over them. The Benjamini-
Yekutieli correction is scipy.stats.false_discovery_control(method="by"), applied once over every
p-value of every section (both dimensions, overall and each subgroup), as the report does.

The study: 75 items on a 1-5 scale in two dimensions, grouping column `site` (A: 40 items, B: 35),
clinicians dr_a, dr_b, dr_c on every item, dr_d on 20 items of site A only (left out everywhere:
20 items in A and overall, none in B), a grader close to the clinicians' consensus.
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from scipy import stats

SEED = 20261124
EPSILON = 0.2
Q = 0.05
MIN_ITEMS = 30
CLINICIANS = ["dr_a", "dr_b", "dr_c", "dr_d"]
DIMENSIONS = ["overall", "reasoning"]

rng = np.random.default_rng(SEED)


def study():
    rows = []
    for i in range(75):
        item = f"i{i:03d}"
        site = "A" if i < 40 else "B"
        for dimension in DIMENSIONS:
            truth = 3 + rng.normal()
            for rater in CLINICIANS:
                if rater == "dr_d" and i >= 20:
                    continue
                score = int(np.clip(np.round(truth + 0.8 * rng.normal()), 1, 5))
                rows.append({"item": item, "site": site, "dimension": dimension,
                             "rater": rater, "score": score})
            grader = int(np.clip(np.round(truth + 0.5 * rng.normal()), 1, 5))
            rows.append({"item": item, "site": site, "dimension": dimension,
                         "rater": "grader", "score": grader})
    return rows


def alignment(score, others):
    return -float(np.sqrt(np.mean((score - np.asarray(others, float)) ** 2)))


def section_test(rows):
    by_item = {}
    for r in rows:
        by_item.setdefault(r["item"], {})[r["rater"]] = r["score"]
    tested, left_out = [], []
    for j in CLINICIANS:
        d, wins_f, wins_h = [], 0, 0
        for scores in by_item.values():
            others = [scores[o] for o in CLINICIANS if o != j and o in scores]
            if j not in scores or "grader" not in scores or not others:
                continue
            sf, sh = alignment(scores["grader"], others), alignment(scores[j], others)
            wf, wh = int(sf >= sh), int(sh >= sf)
            wins_f += wf
            wins_h += wh
            d.append(wh - wf)
        n = len(d)
        if n < MIN_ITEMS:
            left_out.append({"rater": j, "n": n})
            continue
        d = np.asarray(d, float)
        if np.all(d == d[0]):
            p = 0.0 if d[0] < EPSILON else 1.0
        else:
            p = float(stats.ttest_1samp(d, EPSILON, alternative="less").pvalue)
        tested.append({"rater": j, "n": n, "grader_advantage": wins_f / n,
                       "annotator_advantage": wins_h / n, "p": p})
    return {"annotators": tested, "left_out": left_out}


def main():
    rows = study()
    sections = []
    for dimension in DIMENSIONS:
        in_dimension = [r for r in rows if r["dimension"] == dimension]
        sections.append({"dimension": dimension, "group": None,
                         **section_test(in_dimension)})
        for site in ["A", "B"]:
            sections.append({"dimension": dimension, "group": site,
                             **section_test([r for r in in_dimension if r["site"] == site])})
    family = [a["p"] for s in sections for a in s["annotators"]]
    adjusted = stats.false_discovery_control(family, method="by")
    k = 0
    for s in sections:
        for a in s["annotators"]:
            a["p_by_adjusted"] = float(adjusted[k])
            a["grader_wins"] = bool(adjusted[k] <= Q)
            k += 1
        tested = s["annotators"]
        s["winning_rate"] = sum(a["grader_wins"] for a in tested) / len(tested)
        s["average_advantage_probability"] = float(np.mean([a["grader_advantage"]
                                                            for a in tested]))
        s["passed"] = s["winning_rate"] >= 0.5
    document = {
        "origin": f"scripts/reference/calibration/make_alt_test_reference.py (seed {SEED})",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scipy"]},
        "python": sys.version.split()[0],
        "epsilon": EPSILON,
        "q": Q,
        "min_items": MIN_ITEMS,
        "scores": rows,
        "fdr_family": len(family),
        "sections": sections,
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
