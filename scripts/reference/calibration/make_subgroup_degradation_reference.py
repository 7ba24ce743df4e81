#!/usr/bin/env python3
"""The "as good as one more clinician?" figures of every subgroup section: leave-one-rater-out
and the degradation table (grader-human minus human-human) with their case-bootstrap intervals,
computed independently on the study of subgroup_reference.json.

Run once; the output is committed as calibration/tests/data/subgroup_degradation_reference.json
and read by calibration/tests/subgroups.rs. Rerunning with the same library versions reproduces
it byte for byte.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_subgroup_degradation_reference.py \
        > calibration/tests/data/subgroup_degradation_reference.json

Input: the items of calibration/tests/data/subgroup_reference.json (18 cases of 4 items, three
clinicians, dr_c partial, a grader noisier on model-b; `model` cuts across cases, `site` is
constant within a case). For each subgroup (and the dimension as a whole), on its items only:
- leave one rater out: for each held-out clinician j, the items scored by the grader, j and at
  least one other clinician; scipy.stats.pearsonr of the grader and of j with the others' mean,
  and numpy's mean absolute differences;
- degradation: the mean over held-out clinicians, weighted by the items each shares, (for r those with an r on both sides, for the
  mean absolute difference those with any item) of each side and their difference; quadratic κ
  from sklearn.metrics.cohen_kappa_score(weights="quadratic", labels = the values observed in the
  study), the grader against each clinician beside every clinician pair, each side averaged;
- case-bootstrap intervals of the r and mean-absolute-difference rows (each side and the
  difference): the report's resample indices mirrored by case_bootstrap.py, cases numbered in
  order of first appearance among the section's items sorted by id, every figure recomputed on
  the resampled items, the included held-out clinicians fixed from the section's own data;
- the r row's sides as the report quotes them (correlations): the delete-one-case jackknife on
  Fisher's z (case_bootstrap.jackknife_fisher), each side recomputed on the items without each case.
"""

import json
import os
import sys
from importlib.metadata import version

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

import case_bootstrap

BOOT_SEED = 5
RESAMPLES = 400
RATERS = ["dr_a", "dr_b", "dr_c"]
HERE = os.path.dirname(os.path.abspath(__file__))
STUDY = os.path.join(HERE, "..", "..", "..", "calibration", "tests", "data",
                     "subgroup_reference.json")


def pearson(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(stats.pearsonr(x, y).statistic)


def loo_rows(items, j):
    out = []
    for it in items:
        s = it["scores"]
        rest = [s[r] for r in RATERS if r != j and r in s]
        if "grader" in s and j in s and rest:
            out.append((s["grader"], s[j], float(np.mean(rest))))
    return out


def sides(items, j):
    rows = loo_rows(items, j)
    g, h, m = ([r[k] for r in rows] for k in range(3))
    return {
        "n": len(rows),
        "r": (pearson(g, m), pearson(h, m)),
        "mad": ((float(np.mean(np.abs(np.subtract(g, m)))),
                 float(np.mean(np.abs(np.subtract(h, m))))) if rows else None),
    }


def averaged(items, included_r, included_mad):
    out = {}
    for name, included in [("r", included_r), ("mad", included_mad)]:
        values = [sides(items, j)[name] for j in included]
        if not values or any(v is None or None in v for v in values):
            out[f"{name}_grader"] = out[f"{name}_human"] = out[f"{name}_difference"] = None
            continue
        # Each held-out clinician weighted by the items they share with the others.
        weights = [sides(items, j)["n"] for j in included]
        a = float(np.average([v[0] for v in values], weights=weights))
        b = float(np.average([v[1] for v in values], weights=weights))
        out[f"{name}_grader"], out[f"{name}_human"], out[f"{name}_difference"] = a, b, a - b
    return out


def quadratic_kappa(x, y, labels):
    if len(x) == 0:
        return None
    value = cohen_kappa_score(x, y, weights="quadratic", labels=labels)
    return None if np.isnan(value) else float(value)


def section(items, labels):
    per_rater = {j: sides(items, j) for j in RATERS}
    included_r = [j for j in RATERS if None not in per_rater[j]["r"]]
    included_mad = [j for j in RATERS if per_rater[j]["n"] > 0]
    figures = averaged(items, included_r, included_mad)
    grader_kappas, human_kappas = [], []
    for j in RATERS:
        pairs = [(it["scores"]["grader"], it["scores"][j]) for it in items
                 if "grader" in it["scores"] and j in it["scores"]]
        grader_kappas.append(quadratic_kappa([p[0] for p in pairs], [p[1] for p in pairs], labels))
    for a in range(len(RATERS)):
        for b in range(a + 1, len(RATERS)):
            pairs = [(it["scores"][RATERS[a]], it["scores"][RATERS[b]]) for it in items
                     if RATERS[a] in it["scores"] and RATERS[b] in it["scores"]]
            human_kappas.append(
                quadratic_kappa([p[0] for p in pairs], [p[1] for p in pairs], labels))
    grader_kappas = [k for k in grader_kappas if k is not None]
    human_kappas = [k for k in human_kappas if k is not None]
    kappa = {"grader": float(np.mean(grader_kappas)), "human": float(np.mean(human_kappas))}
    kappa["difference"] = kappa["grader"] - kappa["human"]
    cases = list(dict.fromkeys(it["case"] for it in items))
    by_case = {c: [it for it in items if it["case"] == c] for c in cases}
    intervals = case_bootstrap.intervals(
        cases, by_case, lambda drawn: averaged(drawn, included_r, included_mad),
        BOOT_SEED, RESAMPLES)
    without = [averaged([it for d in cases if d != c for it in by_case[d]], included_r, included_mad)
               for c in cases]
    jackknife = {f"r_{side}": case_bootstrap.jackknife_fisher(figures[f"r_{side}"],
                                                             [w[f"r_{side}"] for w in without])
                 for side in ["grader", "human"]}
    return {
        "n_items": len(items),
        "n_cases": len(cases),
        "leave_one_rater_out": {
            j: {"n": v["n"], "grader_vs_rest_r": v["r"][0], "held_out_vs_rest_r": v["r"][1],
                "grader_vs_rest_mad": v["mad"][0] if v["mad"] else None,
                "held_out_vs_rest_mad": v["mad"][1] if v["mad"] else None}
            for j, v in per_rater.items()
        },
        "included_r": included_r,
        "included_mad": included_mad,
        "degradation": {**figures, "kappa_grader": kappa["grader"],
                        "kappa_human": kappa["human"], "kappa_difference": kappa["difference"],
                        "kappa_comparisons": min(len(grader_kappas), len(human_kappas))},
        "intervals": intervals,
        "jackknife_fisher": jackknife,
    }


def main():
    with open(STUDY) as f:
        study = json.load(f)
    items = sorted(study["items"], key=lambda it: it["item"])
    labels = sorted({s for it in items for s in it["scores"].values()})
    sections = {"": section(items, labels)}
    for column in ["model", "site"]:
        for value in sorted({it["groups"][column] for it in items}):
            sections[f"{column}={value}"] = section(
                [it for it in items if it["groups"][column] == value], labels)
    document = {
        "origin": "scripts/reference/calibration/make_subgroup_degradation_reference.py "
                  "(the study of subgroup_reference.json)",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scipy", "scikit-learn"]},
        "python": sys.version.split()[0],
        "bootstrap": {"seed": BOOT_SEED, "resamples": RESAMPLES},
        "sections": sections,
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
