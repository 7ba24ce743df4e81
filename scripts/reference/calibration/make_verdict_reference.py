#!/usr/bin/env python3
"""Generate a clustered study and the expected figures of the report's verdict.

Run once; the output is committed as calibration/tests/data/verdict_reference.json and read by
calibration/tests/verdict.rs. Rerunning with the same library versions reproduces it byte for
byte (fixed seed).

    python3 -m venv /tmp/verdict-ref
    /tmp/verdict-ref/bin/pip install numpy scipy
    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_verdict_reference.py \
        > calibration/tests/data/verdict_reference.json

The study: 14 cases of 4 items, three clinicians and a grader on a 1-5 scale; the grader's error
has a part shared by the items of a case (what makes items of one case dependent); clinician
dr_c scored only some items, so each held-out clinician's comparison has its own items.

Expected values, computed here without the report's per-case sums:
- pearson r of the grader with the clinicians' per-item mean: scipy.stats.pearsonr;
- leave-one-rater-out (for each held-out clinician j, items scored by the grader, j and another
  clinician): scipy.stats.pearsonr of the grader and of j with the others' mean, averaged over j;
  mean absolute differences with numpy;
- calibration line (grader = a + b * clinicians' mean) and proportional bias (grader - mean
  regressed on their average): scipy.stats.linregress (slope, intercept, p);
- case bootstrap: the report's resample indices, mirrored (SplitMix64 seeded by (seed, resample)
  as calibration/src/bootstrap.rs draws them), every statistic recomputed on the resampled items
  themselves; percentile with numpy.quantile (linear), BCa by Efron's formula (bias correction
  from the share of replicates below the estimate, ties within 1e-9 relative counted half;
  acceleration from the leave-one-case-out jackknife recomputed on the items) with
  scipy.stats.norm;
- the correlations' quoted intervals (the verdict's r, each like-for-like side): the
  delete-one-case jackknife on Fisher's z, every statistic recomputed on the items without the
  case, variance (G-1)/G * sum((z_g - mean z)^2), interval tanh(atanh(r) -+ t * se) with
  scipy.stats.t.ppf(0.975, G - 1) (Wolter 2007, ch. 4; Efron & Tibshirani 1993, ch. 11).
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from scipy import stats

from case_bootstrap import bca, generator_for, jackknife_fisher

SEED = 20261123
BOOT_SEED = 7
RESAMPLES = 500
RATERS = ["dr_a", "dr_b", "dr_c"]

rng = np.random.default_rng(SEED)


def study():
    rows = []
    for c in range(14):
        case = f"case{c:02d}"
        shared = rng.normal(scale=0.6)  # the grader's error common to the case's items
        for t in range(4):
            item = f"{case}/t{t}"
            truth = 3 + 1.1 * rng.normal()
            scores = {}
            for rater in RATERS:
                if rater == "dr_c" and rng.uniform() < 0.35:
                    continue
                scores[rater] = int(np.clip(np.round(truth + 0.5 * rng.normal()), 1, 5))
            scores["grader"] = int(np.clip(np.round(truth + 0.3 + shared
                                                    + 0.4 * rng.normal()), 1, 5))
            rows.append({"item": item, "case": case, "scores": scores})
    return rows


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


def statistics(items, included_r, included_mad):
    """Every bootstrapped figure on a list of items (a resample repeats items)."""
    g, m = [], []
    for it in items:
        s = it["scores"]
        humans = [s[r] for r in RATERS if r in s]
        if "grader" in s and humans:
            g.append(s["grader"])
            m.append(float(np.mean(humans)))
    g, m = np.array(g, float), np.array(m, float)
    out = {"pearson_r": pearson(g, m)}
    if len(g) >= 4 and np.ptp(m) > 0:
        line = stats.linregress(m, g)
        out["slope"], out["intercept"] = float(line.slope), float(line.intercept)
        diff, avg = g - m, (g + m) / 2
        out["proportional_bias_slope"] = (float(stats.linregress(avg, diff).slope)
                                          if np.ptp(avg) > 0 else None)
    else:
        out["slope"] = out["intercept"] = out["proportional_bias_slope"] = None
    for name, included, of in [("r", included_r, None), ("mad", included_mad, None)]:
        sides = []
        for j in included:
            rows = loo_rows(items, j)
            gg = [r[0] for r in rows]
            hh = [r[1] for r in rows]
            mm = [r[2] for r in rows]
            if name == "r":
                a, b = pearson(gg, mm), pearson(hh, mm)
                sides.append(None if a is None or b is None else (a, b, len(rows)))
            else:
                sides.append((float(np.mean(np.abs(np.subtract(gg, mm)))),
                              float(np.mean(np.abs(np.subtract(hh, mm)))), len(rows))
                             if rows else None)
        if not sides or any(v is None for v in sides):
            out[f"loo_{name}_grader"] = out[f"loo_{name}_human"] = None
            out[f"loo_{name}_difference"] = None
        else:
            # Each held-out clinician weighted by the items they share with the others.
            weights = [v[2] for v in sides]
            a = float(np.average([v[0] for v in sides], weights=weights))
            b = float(np.average([v[1] for v in sides], weights=weights))
            out[f"loo_{name}_grader"], out[f"loo_{name}_human"] = a, b
            out[f"loo_{name}_difference"] = a - b
    return out


def main():
    items = sorted(study(), key=lambda it: it["item"])
    # Clusters numbered in order of first appearance among items sorted by id, as the report does.
    cases = list(dict.fromkeys(it["case"] for it in items))
    by_case = {c: [it for it in items if it["case"] == c] for c in cases}

    included_r, included_mad = [], []
    for j in RATERS:
        rows = loo_rows(items, j)
        if (pearson([r[0] for r in rows], [r[2] for r in rows]) is not None
                and pearson([r[1] for r in rows], [r[2] for r in rows]) is not None):
            included_r.append(j)
        if rows:
            included_mad.append(j)

    full = statistics(items, included_r, included_mad)
    replicates = []
    for b in range(RESAMPLES):
        generator = generator_for(BOOT_SEED, b)
        drawn = [cases[generator.below(len(cases))] for _ in cases]
        replicates.append(statistics([it for c in drawn for it in by_case[c]],
                                     included_r, included_mad))
    jackknife = [statistics([it for it in items if it["case"] != c], included_r, included_mad)
                 for c in cases]

    intervals = {}
    for name, estimate in full.items():
        values = sorted(v[name] for v in replicates if v[name] is not None)
        jack = [v[name] for v in jackknife if v[name] is not None]
        low, high = bca(values, estimate, jack)
        intervals[name] = {
            "estimate": estimate,
            "percentile_low": float(np.quantile(values, 0.025)),
            "percentile_high": float(np.quantile(values, 0.975)),
            "bca_low": low,
            "bca_high": high,
            "resamples_defined": len(values),
        }

    g = [it["scores"]["grader"] for it in items]
    m = [float(np.mean([it["scores"][r] for r in RATERS if r in it["scores"]])) for it in items]
    line = stats.linregress(m, g)
    diff, avg = np.subtract(g, m), (np.add(g, m)) / 2
    proportional = stats.linregress(avg, diff)
    loo = {}
    for j in RATERS:
        rows = loo_rows(items, j)
        loo[j] = {
            "n": len(rows),
            "grader_vs_rest_r": pearson([r[0] for r in rows], [r[2] for r in rows]),
            "held_out_vs_rest_r": pearson([r[1] for r in rows], [r[2] for r in rows]),
        }
    ceiling_items = {it["item"] for it in items for j in RATERS
                     if "grader" in it["scores"] and j in it["scores"]
                     and any(r in it["scores"] for r in RATERS if r != j)}
    quoted = {name: jackknife_fisher(full[name], [v[name] for v in jackknife])
              for name in ["pearson_r", "loo_r_grader", "loo_r_human"]}

    document = {
        "origin": f"scripts/reference/calibration/make_verdict_reference.py (seed {SEED})",
        "licence": "generated data, MIT like the repository",
        "versions": {name: version(name) for name in ["numpy", "scipy"]},
        "python": sys.version.split()[0],
        "bootstrap": {"seed": BOOT_SEED, "resamples": RESAMPLES},
        "scores": [{"item": it["item"], "case": it["case"], "rater": r, "score": s}
                   for it in items for r, s in sorted(it["scores"].items())],
        "expected": {
            "n_items": len(items),
            "n_cases": len(cases),
            "pearson_r": float(stats.pearsonr(g, m).statistic),
            "calibration_slope": float(line.slope),
            "calibration_intercept": float(line.intercept),
            "calibration_slope_stderr": float(line.stderr),
            "calibration_intercept_stderr": float(line.intercept_stderr),
            "proportional_bias_slope": float(proportional.slope),
            "proportional_bias_p": float(proportional.pvalue),
            "leave_one_rater_out": loo,
            "ceiling_n_items": len(ceiling_items),
            "ceiling_n_cases": len({i.split("/")[0] for i in ceiling_items}),
            "held_out_included_r": included_r,
            "intervals": intervals,
            "jackknife_fisher": quoted,
        },
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()
