"""Reference for calibration/tests/reliability.rs: random run records of three specs (two models,
one grader) and each spec's reliability computed here with the Python standard library only:
sums by hand, the median by `statistics.median`, the 95th percentile by
`statistics.quantiles(n=20, method="inclusive")[18]` (linear interpolation between order
statistics, numpy's default), the malformed-output rate of a grader as (requests - 1) summed over
requests summed, the cost as the sum of the records' costs when every record has one. Seed 20261129; MIT like the repository.

    python3 scripts/reference/calibration/make_reliability_reference.py \
        > calibration/tests/data/reliability_reference.json
"""
import json
import random
import statistics
import sys

rng = random.Random(20261129)
records = []
for name, kind, n in [("vlm-a", "model", 37), ("vlm-b", "model", 5), ("judge-v1", "grader", 23)]:
    for _ in range(n):
        requests = 1 + (rng.choice([0, 0, 0, 1, 2]) if kind == "grader" else rng.choice([0, 1]))
        records.append({
            "name": name,
            "kind": kind,
            "prompt_tokens": rng.randint(50, 4000),
            "completion_tokens": rng.randint(1, 900),
            "latency_ms": int(rng.lognormvariate(7, 0.8)),
            "requests": requests,
        })
rng.shuffle(records)

# What each record's tokens cost at its run's prices (no random draw, so the records above are
# the same as before costs were added): vlm-a and the grader were run with prices, vlm-b without,
# and one of the grader's records comes from a run without prices, so its spec has no total.
PRICES = {"vlm-a": (2.5e-6, 1e-5), "judge-v1": (1e-6, 4e-6)}
unpriced_grader_record = next(i for i, r in enumerate(records) if r["name"] == "judge-v1")
for i, r in enumerate(records):
    prices = PRICES.get(r["name"])
    r["cost"] = (r["prompt_tokens"] * prices[0] + r["completion_tokens"] * prices[1]
                 if prices and i != unpriced_grader_record else None)

expected = []
for name in sorted({r["name"] for r in records}):
    rows = [r for r in records if r["name"] == name]
    kind = rows[0]["kind"]
    latency = [r["latency_ms"] for r in rows]
    requests = sum(r["requests"] for r in rows)
    prompt = sum(r["prompt_tokens"] for r in rows)
    completion = sum(r["completion_tokens"] for r in rows)
    expected.append({
        "name": name,
        "kind": kind,
        "items": len(rows),
        "requests": requests,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "mean_tokens_per_item": (prompt + completion) / len(rows),
        "latency_ms_p50": float(statistics.median(latency)),
        "latency_ms_p95": statistics.quantiles(latency, n=20, method="inclusive")[18],
        "malformed_output_rate": (sum(r["requests"] - 1 for r in rows) / requests)
        if kind == "grader" else None,
        "cost": sum(r["cost"] for r in rows) if all(r["cost"] is not None for r in rows) else None,
    })

json.dump({"python": sys.version.split()[0], "records": records, "expected": expected},
          sys.stdout, indent=1)
sys.stdout.write("\n")
