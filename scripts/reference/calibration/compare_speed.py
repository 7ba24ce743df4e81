#!/usr/bin/env python3
"""Time the calibration report in Rust against the same statistics in scipy + pingouin +
krippendorff (+ statsmodels, scikit-learn), alternating runs in one process, and print the ratio.

    /tmp/calref/bin/python scripts/reference/calibration/make_study_csv.py 10000 /tmp/study10k.csv
    cargo build --release -p neurorater-calibration --example report_from_csv
    /tmp/calref/bin/python scripts/reference/calibration/compare_speed.py /tmp/study10k.csv \
        target/release/examples/report_from_csv [ROUNDS]

Both sides exclude reading the CSV. Per section (all items, then each subgroup of each grouping
column) both compute: clinicians' ICC (6 forms), Krippendorff's alpha (3 levels), Fleiss' kappa;
grader vs clinicians' mean: Pearson (with CI), Spearman, Kendall, Bland-Altman, ICC with the
grader, Cohen's kappa (3 weightings) vs consensus and vs each clinician, leave-one-rater-out, and
2,000 cluster-bootstrap resamples of r, bias and ICC2. The Python bootstrap is vectorised numpy
(not pingouin in a loop, which would be far slower and an unfair baseline); the alternative
annotator test is left out of the Python side, so the ratio understates Rust's advantage slightly.
"""

import statistics
import subprocess
import sys
import time

import krippendorff
import numpy as np
import pandas as pd
import pingouin
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

GRADER = "gpt-4o-neuro-v1"
RESAMPLES = 2000


def icc2_from_matrix(x):
    n, k = x.shape
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_err = ((x - grand) ** 2).sum() - ss_rows - ss_cols
    msb, msj, mse = ss_rows / (n - 1), ss_cols / (k - 1), ss_err / ((n - 1) * (k - 1))
    return (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)


def section(wide, cases, rng):
    humans = wide.drop(columns=[GRADER])
    long = humans.stack().rename("score").reset_index()
    long.columns = ["item", "rater", "score"]
    pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score")
    for level in ["nominal", "ordinal", "interval"]:
        krippendorff.alpha(reliability_data=humans.to_numpy().T, level_of_measurement=level)
    fleiss_kappa(aggregate_raters(humans.to_numpy().astype(int))[0])
    g = wide[GRADER].to_numpy()
    h = humans.mean(axis=1).to_numpy()
    stats.pearsonr(g, h).confidence_interval()
    stats.spearmanr(g, h)
    stats.kendalltau(g, h)
    d = g - h
    d.mean(), d.std(ddof=1)
    with_grader = wide.stack().rename("score").reset_index()
    with_grader.columns = ["item", "rater", "score"]
    pingouin.intraclass_corr(with_grader, targets="item", raters="rater", ratings="score")
    consensus = np.clip(np.floor(h + 0.5), 1, 5)
    for weights in [None, "linear", "quadratic"]:
        cohen_kappa_score(g, consensus, weights=weights)
    for rater in humans.columns:
        x = humans[rater].to_numpy()
        stats.pearsonr(g, x).confidence_interval()
        stats.spearmanr(g, x)
        stats.kendalltau(g, x)
        for weights in [None, "linear", "quadratic"]:
            cohen_kappa_score(g, x, weights=weights)
        rest = humans.drop(columns=[rater]).mean(axis=1).to_numpy()
        stats.pearsonr(g, rest)
        stats.pearsonr(x, rest)
    # Cluster bootstrap of r, bias and ICC2 (grader + clinicians), resampling cases.
    codes, _ = pd.factorize(cases)
    members = [np.flatnonzero(codes == c) for c in range(codes.max() + 1)]
    matrix = wide.to_numpy()
    for _ in range(RESAMPLES):
        picked = rng.integers(0, len(members), size=len(members))
        rows = np.concatenate([members[c] for c in picked])
        np.corrcoef(g[rows], h[rows])
        (g[rows] - h[rows]).mean()
        icc2_from_matrix(matrix[rows])


def python_report(table, rng):
    wide = table.pivot(index="item", columns="rater", values="score")
    info = table.drop_duplicates("item").set_index("item").loc[wide.index]
    section(wide, info["case"].to_numpy(), rng)
    for column in ["disease_group", "modality"]:
        for value in info[column].unique():
            mask = (info[column] == value).to_numpy()
            section(wide[mask], info["case"].to_numpy()[mask], rng)


def main():
    csv, binary = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    table = pd.read_csv(csv)
    rng = np.random.default_rng(1)
    rust, python = [], []
    for _ in range(rounds):
        out = subprocess.run([binary, csv, GRADER, "/tmp/compare_speed_report.json",
                              str(RESAMPLES), "1", "5", "1"],
                             check=True, capture_output=True, text=True)
        rust.append(float(out.stdout.strip()))
        started = time.perf_counter()
        python_report(table, rng)
        python.append(time.perf_counter() - started)
        print(f"round: rust {rust[-1]:.3f} s, python {python[-1]:.3f} s", flush=True)
    r, p = statistics.median(rust), statistics.median(python)
    print(f"median rust {r:.3f} s, median python {p:.3f} s, ratio {p / r:.1f}x")


main()
