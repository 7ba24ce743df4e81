"""Reference values for the bar's case bootstrap-t test (calibration/src/error_rates.rs).

Writes calibration/tests/data/error_rates_reference.json: a clustered study (14 cases of 3 items,
three clinicians, a grader whose error is partly shared within a case) on which the verdict's
old rule (the delete-one-case jackknife interval on Fisher's z with t(G - 1): its lower end
>= bar) claims the bar while the case bootstrap-t test of H0: rho <= bar does not, with the bar
placed between the two lower ends; and the test's statistic, one-sided p and interval, computed
here from the raw scores, independently of the Rust code:

- r of the grader with the clinicians' per-item mean, per case sums, Fisher's z, the
  delete-one-case jackknife SE, sqrt((G-1)/G * sum (z_-g - mean)^2);
- the resamples drawn as the Rust code draws them: SplitMix64 (Steele, Lea & Flood 2014) seeded
  with mix(seed ^ 0x6261725f74657374), each case index (next_u64 * G) >> 64;
- t* = (z* - z) / SE*, SE* the jackknife SE on the resample (a resample whose r is undefined or
  +-1 counts as t* = +inf), p = (1 + #{t* >= t}) / (B + 1), the interval's ends
  tanh(z - t*_(k) SE) with k = ceil(q (B + 1)).

The t quantile of the jackknife interval is R's qt (Rscript, base R), the only outside value.
Standard library only (Python 3.11). Run from the repository root:

    python3 scripts/reference/calibration/make_error_rates_reference.py > calibration/tests/data/error_rates_reference.json
"""

import json
import math
import random
import subprocess

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
SEED = 1  # ReportOptions::default().seed
RESAMPLES = 999
CASES, PER_CASE = 14, 3


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + GAMMA) & MASK
        return mix(self.state)

    def below(self, bound):
        return (self.next_u64() * bound) >> 64


def r_of(pairs):
    n = len(pairs)
    if n < 4:
        return None
    mg = sum(g for g, _ in pairs) / n
    mm = sum(m for _, m in pairs) / n
    sgg = sum((g - mg) ** 2 for g, _ in pairs)
    smm = sum((m - mm) ** 2 for _, m in pairs)
    sgm = sum((g - mg) * (m - mm) for g, m in pairs)
    if sgg <= 0 or smm <= 0:
        return None
    return max(-1.0, min(1.0, sgm / math.sqrt(sgg * smm)))


def z_of(pairs):
    r = r_of(pairs)
    return None if r is None or abs(r) >= 1 else math.atanh(r)


def jackknife(cases, idx):
    """(z, SE, pseudo-value centre) over the cases idx, or None."""
    z = z_of([p for c in idx for p in cases[c]])
    if z is None:
        return None
    reps = []
    for leave in range(len(idx)):
        zi = z_of([p for i, c in enumerate(idx) if i != leave for p in cases[c]])
        if zi is None:
            return None
        reps.append(zi)
    g = len(idx)
    mean = sum(reps) / g
    se = math.sqrt((g - 1) / g * sum((v - mean) ** 2 for v in reps))
    if not se > 0:
        return None
    return z, se, g * z - (g - 1) * mean


def study(seed):
    rng = random.Random(seed)
    scores = []
    for c in range(CASES):
        case = rng.gauss(0, 0.8)
        shared = rng.gauss(0, 0.35)
        for t in range(PER_CASE):
            item = f"c{c:02}/t{t}"
            truth = case + rng.gauss(0, 0.6)
            for j, sd in enumerate([0.3, 0.35, 0.4]):
                scores.append((item, f"c{c:02}", f"dr_{j}", round(truth + rng.gauss(0, sd), 2)))
            scores.append((item, f"c{c:02}", "grader", round(truth + shared + rng.gauss(0, 0.25), 2)))
    return scores


def per_case(scores):
    items = {}
    for item, case, rater, score in scores:
        items.setdefault((case, item), {})[rater] = score
    cases = {}
    for (case, _), raters in sorted(items.items()):
        clin = [v for k, v in raters.items() if k != "grader"]
        cases.setdefault(case, []).append((raters["grader"], sum(clin) / len(clin)))
    return [cases[c] for c in sorted(cases)]


def bootstrap_t(cases, bar):
    g = len(cases)
    z, se, _ = jackknife(cases, list(range(g)))
    statistic = (z - math.atanh(bar)) / se
    rng = SplitMix64(mix(SEED ^ 0x6261725F74657374))
    t_star = []
    for _ in range(RESAMPLES):
        idx = [rng.below(g) for _ in range(g)]
        j = jackknife(cases, idx)
        t_star.append(math.inf if j is None else (j[0] - z) / j[1])
    t_star.sort()
    p = (1 + sum(1 for t in t_star if t >= statistic)) / (RESAMPLES + 1)

    def order(q):
        k = min(max(math.ceil(q * (RESAMPLES + 1)), 1), RESAMPLES)
        return t_star[k - 1]

    return {
        "statistic": statistic,
        "p": p,
        "low": math.tanh(z - order(0.975) * se),
        "high": math.tanh(z - order(0.025) * se),
    }


def main():
    qt = float(
        subprocess.run(
            ["Rscript", "-e", f"cat(sprintf('%.17g', qt(0.975, {CASES - 1})))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    r_version = subprocess.run(
        ["Rscript", "-e", "cat(R.version.string)"], check=True, capture_output=True, text=True
    ).stdout
    for seed in range(1, 200):
        scores = study(seed)
        cases = per_case(scores)
        z, se, centre = jackknife(cases, list(range(len(cases))))
        jack_low = math.tanh(centre - qt * se)
        # The bootstrap-t lower end does not depend on the bar.
        boot = bootstrap_t(cases, 0.5)
        if boot["low"] < jack_low - 0.01 and 0.3 < jack_low < 0.95:
            bar = round(math.tanh(0.5 * (math.atanh(boot["low"]) + math.atanh(jack_low))), 3)
            expected = bootstrap_t(cases, bar)
            assert jack_low >= bar and expected["p"] > 0.025
            print(
                json.dumps(
                    {
                        "generated_by": "scripts/reference/calibration/make_error_rates_reference.py",
                        "python": "3.11 standard library; qt from " + r_version,
                        "data_seed": seed,
                        "bar": bar,
                        "seed": SEED,
                        "resamples": RESAMPLES,
                        "scores": [
                            {"item": i, "case": c, "rater": r, "score": s}
                            for i, c, r, s in scores
                        ],
                        "expected": {
                            "r": math.tanh(z),
                            "jackknife_low": jack_low,
                            "qt_975": qt,
                            **expected,
                        },
                    },
                    indent=1,
                )
            )
            return
    raise SystemExit("no data set found")


if __name__ == "__main__":
    main()
