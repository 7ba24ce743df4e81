"""Reference values for the report's "automatic metrics against the clinicians"
(calibration/src/automatic_metrics.rs), from scipy, numpy and scikit-learn on a synthetic study.

Writes calibration/tests/data/automatic_metrics_reference.json: the input (clinicians' and the
grader's overall scores, correctness judgements, text metrics, answer lengths, models) and what
the packages compute from it:
  - Pearson r (scipy.stats.pearsonr) and Spearman rho (scipy.stats.spearmanr) of each metric and
    of the grader with the clinicians' mean per item,
  - the length coefficient c of grader = a + b * mean + c * words/100 (numpy.linalg.lstsq),
  - self-preference: mean(grader - mean) on the grader's family's responses minus on the others',
  - verdict agreement (share, sklearn.metrics.cohen_kappa_score) and pass@k of both sides with
    the unbiased estimator 1 - C(n-c, k) / C(n, k) (Chen et al. 2021), written out here.

    python scripts/reference/metrics/make_automatic_metrics_reference.py
"""

import json
import math
import random
from pathlib import Path

import numpy as np
import scipy
import sklearn
from scipy import stats
from sklearn.metrics import cohen_kappa_score

OUT = Path(__file__).resolve().parents[3] / "calibration" / "tests" / "data" / "automatic_metrics_reference.json"
GRADER = "gpt-4o-grader-v1"
GRADER_MODEL = "gpt-4o-2024-08-06"
MODELS = ["gpt-4o-mini", "llava-med-7b"]
PASS_SCORE = 3.0  # the 1..5 scale's midpoint
KS = [1, 3]


def pass_at_k(n, c, k):
    if n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def main():
    rng = random.Random(7)
    scores, judgements, items = [], [], []
    metrics, words, response_model = {}, {}, {}
    for case in range(14):
        case_id = f"c{case:02d}"
        for model in MODELS:
            for sample in range(3):
                item = f"{case_id}/dx/{model}/{sample}"
                quality = rng.uniform(1, 5)
                n_words = rng.randint(20, 260)
                raters = {}
                for rater in ("dr-a", "dr-b"):
                    raters[rater] = float(min(5, max(1, round(quality + rng.gauss(0, 0.7)))))
                    scores.append({"item": item, "rater": rater, "score": raters[rater]})
                    judgements.append({"case": case_id, "model": model, "task_family": "differential_diagnosis",
                                       "level": "1", "task": f"{case_id}/dx", "sample": sample, "rater": rater,
                                       "correct": raters[rater] >= 3.5 or (raters[rater] == 3 and rng.random() < 0.5)})
                own = model.startswith("gpt")
                grader = quality + 0.004 * n_words + (0.4 if own else 0.0) + rng.gauss(0, 0.6)
                grader = float(min(5, max(1, round(grader * 2) / 2)))
                scores.append({"item": item, "rater": GRADER, "score": grader})
                metrics[item] = {
                    "bertscore_f1": 0.3 + 0.08 * quality + rng.gauss(0, 0.05),
                    "cosine_minilm": 0.2 + 0.1 * quality + rng.gauss(0, 0.1),
                    "rouge_l_f": 0.05 + 0.02 * quality + rng.gauss(0, 0.05),
                }
                words[item] = n_words
                response_model[item] = model
                items.append({"item": item, "case": case_id, "model": model})

    mean = {}
    for it in items:
        s = [x["score"] for x in scores if x["item"] == it["item"] and x["rater"] != GRADER]
        mean[it["item"]] = sum(s) / len(s)
    grader = {x["item"]: x["score"] for x in scores if x["rater"] == GRADER}
    order = [it["item"] for it in items]
    y = np.array([mean[i] for i in order])
    correlations = {}
    for name in ["bertscore_f1", "cosine_minilm", "rouge_l_f"]:
        x = np.array([metrics[i][name] for i in order])
        correlations[name] = {"r": stats.pearsonr(x, y)[0], "rho": stats.spearmanr(x, y)[0]}
    g = np.array([grader[i] for i in order])
    correlations["grader"] = {"r": stats.pearsonr(g, y)[0], "rho": stats.spearmanr(g, y)[0]}

    design = np.column_stack([np.ones(len(order)), y, np.array([words[i] / 100 for i in order])])
    coef = np.linalg.lstsq(design, g, rcond=None)[0]

    d = g - y
    own = np.array([response_model[i].startswith("gpt") for i in order])
    self_pref = d[own].mean() - d[~own].mean()

    votes = {}
    for j in judgements:
        key = f"{j['task']}/{j['model']}/{j['sample']}"
        votes.setdefault(key, []).append(j["correct"])
    clin_pass = {k: 2 * sum(v) > len(v) for k, v in votes.items()}
    grader_pass = {k: grader[k] >= PASS_SCORE for k in votes}
    keys = sorted(votes)
    a = [int(grader_pass[k]) for k in keys]
    b = [int(clin_pass[k]) for k in keys]
    pass_rows = []
    for model in MODELS:
        for k in KS:
            cv, gv = [], []
            for case in range(14):
                task = f"c{case:02d}/dx"
                samples = [f"{task}/{model}/{s}" for s in range(3)]
                cv.append(pass_at_k(3, sum(clin_pass[s] for s in samples), k))
                gv.append(pass_at_k(3, sum(grader_pass[s] for s in samples), k))
            pass_rows.append({"model": model, "k": k, "clinicians": float(np.mean(cv)), "grader": float(np.mean(gv))})

    out = {
        "source": "scripts/reference/metrics/make_automatic_metrics_reference.py",
        "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__},
        "grader": GRADER,
        "grader_model": GRADER_MODEL,
        "pass_score": PASS_SCORE,
        "pass_at": KS,
        "items": items,
        "scores": scores,
        "judgements": judgements,
        "metrics": metrics,
        "words": words,
        "expected": {
            "correlations": correlations,
            "slope_on_clinicians": coef[1],
            "score_per_100_words": coef[2],
            "self_preference": self_pref,
            "own_family_items": int(own.sum()),
            "share_agreeing": float(np.mean(np.array(a) == np.array(b))),
            "cohen_kappa": cohen_kappa_score(a, b),
            "pass_at_k": pass_rows,
        },
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
