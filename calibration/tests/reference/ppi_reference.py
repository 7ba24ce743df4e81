"""Reference values for calibration/src/ppi.rs from the PPI++ authors' package.

Writes calibration/tests/data/ppi_reference.json: seeded data sets (continuous scores, 0/1
targets, small n, lambda clipped at 1 and at 0) with ppi_py's point estimate, power-tuned lambda
and 95 % intervals (PPI++, classical on the clinicians, classical on the grader over all answers);
and a clustered data set with the by-case (cluster-robust) figures computed independently in numpy.

Package: ppi-python 0.2.3 (PyPI), MIT licence, https://github.com/aangelopoulos/ppi_py.
Citation: A. N. Angelopoulos, J. C. Duchi, T. Zrnic. PPI++: Efficient Prediction-Powered
Inference. arXiv:2311.01453, 2023.

Run (from the repository root):
    python3 -m venv /tmp/ppi-venv && /tmp/ppi-venv/bin/pip install ppi-python==0.2.3
    /tmp/ppi-venv/bin/python calibration/tests/reference/ppi_reference.py
"""

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from ppi_py.ppi import _calc_lam_glm
from scipy.special import comb
from scipy.stats import norm

ALPHA = 0.05


def tuned_lambda(y, yhat, yhat_unlabelled):
    """lambda exactly as ppi_mean_ci(lam=None) computes it (ppi_py does not return it)."""
    y, yhat, yhat_unlabelled = (a.reshape(-1, 1) for a in (y, yhat, yhat_unlabelled))
    pointest = ppi_mean_pointestimate(y, yhat, yhat_unlabelled, lam=1)
    return float(
        _calc_lam_glm(
            y - pointest,
            yhat - pointest,
            yhat_unlabelled - pointest,
            np.eye(1),
            coord=None,
            clip=True,
            optim_mode="overall",
        )
    )


def case(name, y, yhat, yhat_unlabelled):
    y, yhat, yhat_unlabelled = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    low, high = ppi_mean_ci(y, yhat, yhat_unlabelled, alpha=ALPHA)
    estimate = ppi_mean_pointestimate(y, yhat, yhat_unlabelled)
    c_low, c_high = classical_mean_ci(y, alpha=ALPHA)
    everything = np.concatenate([yhat, yhat_unlabelled])
    g_low, g_high = classical_mean_ci(everything, alpha=ALPHA)
    scalar = lambda v: float(np.asarray(v).reshape(-1)[0])
    return {
        "name": name,
        "y": y.tolist(),
        "yhat": yhat.tolist(),
        "yhat_unlabelled": yhat_unlabelled.tolist(),
        "estimate": scalar(estimate),
        "lambda": tuned_lambda(y, yhat, yhat_unlabelled),
        "low": scalar(low),
        "high": scalar(high),
        "clinicians_only": {"estimate": float(y.mean()), "low": scalar(c_low), "high": scalar(c_high)},
        "grader_only": {"estimate": float(everything.mean()), "low": scalar(g_low), "high": scalar(g_high)},
    }


def by_case(name, y, yhat, case_labelled, yhat_unlabelled, case_unlabelled):
    """The cluster-robust PPI++ of calibration/src/ppi.rs, written independently in numpy (ppi_py
    has no clustered variance): influence summed within each case, lambda from by-case sums."""
    y, yhat, yhat_unlabelled = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    case_labelled, case_unlabelled = np.asarray(case_labelled), np.asarray(case_unlabelled)
    n, big_n = len(y), len(yhat_unlabelled)
    cases = int(max(case_labelled.max(), case_unlabelled.max())) + 1
    per_case = lambda values, which: np.bincount(which, weights=values, minlength=cases)
    everything = np.concatenate([yhat, yhat_unlabelled])
    every_case = np.concatenate([case_labelled, case_unlabelled])
    cov = (per_case(y - y.mean(), case_labelled) * per_case(yhat - yhat.mean(), case_labelled)).sum() / n
    var = (per_case(everything - everything.mean(), every_case) ** 2).sum() / (n + big_n - 1)
    lam = float(np.clip(cov / ((1 + n / big_n) * var), 0, 1))
    estimate = lam * yhat_unlabelled.mean() + (y - lam * yhat).mean()
    psi = per_case((y - y.mean()) - lam * (yhat - yhat.mean()), case_labelled) / n + lam * per_case(
        yhat_unlabelled - yhat_unlabelled.mean(), case_unlabelled
    ) / big_n
    z = norm.ppf(1 - ALPHA / 2)
    half = z * np.sqrt((psi**2).sum())
    c_half = z * np.sqrt(((per_case(y - y.mean(), case_labelled) / n) ** 2).sum())
    g_half = z * np.sqrt(((per_case(everything - everything.mean(), every_case) / (n + big_n)) ** 2).sum())
    return {
        "name": name,
        "y": y.tolist(),
        "yhat": yhat.tolist(),
        "case_labelled": case_labelled.tolist(),
        "yhat_unlabelled": yhat_unlabelled.tolist(),
        "case_unlabelled": case_unlabelled.tolist(),
        "estimate": float(estimate),
        "lambda": lam,
        "low": float(estimate - half),
        "high": float(estimate + half),
        "clinicians_only": {"estimate": float(y.mean()), "low": float(y.mean() - c_half), "high": float(y.mean() + c_half)},
        "grader_only": {
            "estimate": float(everything.mean()),
            "low": float(everything.mean() - g_half),
            "high": float(everything.mean() + g_half),
        },
    }


def unbiased_pass_at_k(n, c, k):
    """Chen et al. (2021): 1 - C(n - c, k) / C(n, k), with exact binomial coefficients."""
    return 1.0 - comb(n - c, k, exact=True) / comb(n, k, exact=True)


def pass_at_k_case(name, rng, tasks, read, samples, k):
    """pass@k as a PPI target: per task, the clinicians' and the grader's pass@k of `samples`
    answers (each task its own case, so ppi_py's independent answers hold). The per-sample
    verdicts are kept, for the Rust test to build the same study from them."""
    skill = rng.uniform(0, 1, tasks)
    correct = rng.uniform(0, 1, (tasks, samples)) < skill[:, None]
    grader_passes = np.where(correct, rng.uniform(0, 1, (tasks, samples)) < 0.85, rng.uniform(0, 1, (tasks, samples)) < 0.2)
    y = np.array([unbiased_pass_at_k(samples, int(c.sum()), k) for c in correct[:read]])
    yhat_all = np.array([unbiased_pass_at_k(samples, int(g.sum()), k) for g in grader_passes])
    out = case(name, y, yhat_all[:read], yhat_all[read:])
    out.update({
        "k": k,
        "correct": correct[:read].astype(int).tolist(),
        "grader_passes": grader_passes.astype(int).tolist(),
    })
    return out


def scores(rng, n, noise, slope=1.0):
    """Clinicians' mean of three 1-5 scores, and a grader's 1-5 score that follows it."""
    truth = rng.normal(3.0, 1.0, n)
    clinicians = np.clip(np.round(truth[:, None] + rng.normal(0, 0.5, (n, 3))), 1, 5).mean(1)
    grader = np.clip(np.round(3.0 + slope * (truth - 3.0) + rng.normal(0, noise, n)), 1, 5)
    return clinicians, grader


def main():
    rng = np.random.default_rng(20261128)
    cases = []

    y, yhat = scores(rng, 600, 0.6)
    cases.append(case("continuous scores, good grader", y[:60], yhat[:60], yhat[60:]))

    y, yhat = scores(rng, 400, 1.5)
    cases.append(case("continuous scores, poor grader", y[:80], yhat[:80], yhat[80:]))

    y, yhat = scores(rng, 25, 0.8)
    cases.append(case("small n", y[:5], yhat[:5], yhat[5:]))

    p = rng.uniform(0, 1, 1000)
    correct = (rng.uniform(0, 1, 1000) < p).astype(float)
    grader_says = (rng.uniform(0, 1, 1000) < np.where(correct == 1, 0.85, 0.2)).astype(float)
    cases.append(case("binary target, binary grader", correct[:100], grader_says[:100], grader_says[100:]))
    cases.append(case("binary target, grader's probability", correct[:150], p[:150], p[150:]))

    # A grader on a compressed scale: the tuned lambda is above 1 and clipped.
    truth = rng.normal(0, 1, 300)
    cases.append(case("lambda clipped at 1", truth[:40], 0.3 * truth[:40] + rng.normal(0, 0.05, 40), 0.3 * truth[40:]))

    # A grader that disagrees: the tuned lambda is below 0 and clipped.
    truth = rng.normal(0, 1, 300)
    cases.append(case("lambda clipped at 0", truth[:50], -truth[:50] + rng.normal(0, 0.5, 50), -truth[50:]))

    # Clustered: 40 cases of 5 answers sharing a case effect; clinicians read 2 answers in some
    # cases, so a case mixes labelled and unlabelled answers.
    case_of = np.repeat(np.arange(40), 5)
    truth = rng.normal(0, 1, 40)[case_of] + rng.normal(0, 0.7, 200)
    grader = truth + rng.normal(0, 0.4, 40)[case_of] + rng.normal(0, 0.4, 200)
    read = np.zeros(200, dtype=bool)
    read[rng.choice(200, 60, replace=False)] = True
    clustered = [
        by_case("clustered, 40 cases of 5", truth[read], grader[read], case_of[read], grader[~read], case_of[~read])
    ]

    # pass@2 over 5 samples per task, 300 tasks, clinicians judged every sample of the first 60.
    cases.append(pass_at_k_case("pass@2, 5 samples per task", np.random.default_rng(20261129), 300, 60, 5, 2))

    out = {
        "source": "calibration/tests/reference/ppi_reference.py",
        "package": "ppi-python",
        "version": version("ppi-python"),
        "licence": "MIT",
        "citation": "A. N. Angelopoulos, J. C. Duchi, T. Zrnic. PPI++: Efficient Prediction-Powered Inference. arXiv:2311.01453, 2023.",
        "alpha": ALPHA,
        "cases": cases,
        "clustered_source": "by_case() in this script (numpy; ppi_py has no clustered variance)",
        "clustered": clustered,
    }
    path = Path(__file__).resolve().parents[1] / "data" / "ppi_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    for c in cases + clustered:
        print(f"{c['name']}: estimate {c['estimate']:.4f} lambda {c['lambda']:.4f} [{c['low']:.4f}, {c['high']:.4f}]")


if __name__ == "__main__":
    main()
