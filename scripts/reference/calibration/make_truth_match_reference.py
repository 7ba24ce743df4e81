"""Reference values for calibration/src/truth_match.rs (`group_scores`): accuracy and macro-F1
over disease groups, from scikit-learn.

Writes calibration/tests/data/truth_match_reference.json: fixed tables of (true group, predicted
group) pairs, the predicted side including the matcher's `unmatched` class, with
sklearn.metrics.accuracy_score, f1_score(average="macro") and f1_score(average=None) per class
(labels: the sorted union of true and predicted, sklearn's default), zero_division=0.

Run (from the repository root):
    python3 -m venv /tmp/sk-venv && /tmp/sk-venv/bin/pip install scikit-learn
    /tmp/sk-venv/bin/python scripts/reference/calibration/make_truth_match_reference.py
"""

import json
import platform
from importlib.metadata import version
from pathlib import Path

from sklearn.metrics import accuracy_score, f1_score

MS, STROKE, TUMOUR, OTHER, NORMAL, UNMATCHED = (
    "multiple_sclerosis",
    "stroke",
    "tumour",
    "other_abnormality",
    "normal",
    "unmatched",
)

TABLES = {
    # Three models' worth of answers over the demo's five groups, errors of every kind.
    "mixed": [
        (MS, MS), (MS, MS), (MS, MS), (MS, OTHER), (MS, UNMATCHED), (MS, MS),
        (STROKE, STROKE), (STROKE, STROKE), (STROKE, TUMOUR), (STROKE, STROKE), (STROKE, UNMATCHED),
        (TUMOUR, TUMOUR), (TUMOUR, TUMOUR), (TUMOUR, STROKE), (TUMOUR, TUMOUR), (TUMOUR, OTHER),
        (TUMOUR, TUMOUR), (TUMOUR, UNMATCHED),
        (OTHER, OTHER), (OTHER, TUMOUR), (OTHER, OTHER), (OTHER, NORMAL),
        (NORMAL, NORMAL), (NORMAL, NORMAL), (NORMAL, MS), (NORMAL, NORMAL), (NORMAL, UNMATCHED),
        (MS, MS), (STROKE, STROKE), (TUMOUR, TUMOUR), (OTHER, UNMATCHED), (NORMAL, NORMAL),
        (MS, STROKE), (STROKE, STROKE), (TUMOUR, TUMOUR), (OTHER, OTHER), (NORMAL, NORMAL),
        (MS, MS), (STROKE, NORMAL), (TUMOUR, MS),
    ],
    # A class only ever predicted (no true answer in it): F1 0, and it counts in the macro mean.
    "predicted_only_class": [
        (MS, MS), (MS, STROKE), (TUMOUR, TUMOUR), (TUMOUR, TUMOUR), (TUMOUR, STROKE),
    ],
    # A true class never predicted, and every answer undecided for one group.
    "never_predicted": [
        (NORMAL, UNMATCHED), (NORMAL, UNMATCHED), (MS, MS), (MS, MS), (STROKE, MS),
    ],
    "all_correct": [(MS, MS), (STROKE, STROKE), (NORMAL, NORMAL)],
}


def reference(pairs):
    truth = [t for t, _ in pairs]
    predicted = [p for _, p in pairs]
    labels = sorted(set(truth) | set(predicted))
    per_class = f1_score(truth, predicted, labels=labels, average=None, zero_division=0)
    return {
        "pairs": [list(p) for p in pairs],
        "accuracy": float(accuracy_score(truth, predicted)),
        "macro_f1": float(f1_score(truth, predicted, average="macro", zero_division=0)),
        "per_class": {label: float(f1) for label, f1 in zip(labels, per_class)},
    }


out = {
    "generated_by": "scripts/reference/calibration/make_truth_match_reference.py",
    "python": platform.python_version(),
    "scikit_learn": version("scikit-learn"),
    "tables": {name: reference(pairs) for name, pairs in TABLES.items()},
}
path = Path("calibration/tests/data/truth_match_reference.json")
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}")
