#!/usr/bin/env python3
"""Make a study of a real study's size from the demo: the demo multiplied (issue 18).

    neurorater demo --out /tmp/demo
    python3 scripts/bench/make_scale_study.py /tmp/demo /tmp/scale-2304 --responses 2304
    neurorater import /tmp/scale-2304 --db scale.sqlite
    neurorater import-ratings /tmp/scale-2304/ratings.csv --db scale.sqlite

Every case is copied (`ms-01`, `ms-01-x2`, `ms-01-x3`, ...) with its tasks, ground truth and every
rubric dimension; its image series are symbolic links to the original case's folders (inside the
bundle, which import allows), so the copies cost no disk. Past `--max-case-copies` copies, each
response is repeated under further sample numbers instead (`sample + 100 * j`), so the 50,000-
response study does not need 170 copies of every image. Responses, grader scores and ratings keep
every grouping column (disease group, modality, task family, level, model).

Copies are not identical: each copied item gets a shift of one scale step shared by the clinicians
and the grader (as a harder or easier answer would), and each score a little noise of its own, from
a seeded generator. The demo's own items (copy 1, sample stride 0) are left exactly as they are.

Prints one JSON line: the counts written.
"""

import argparse
import csv
import io
import json
import math
import os
import random
import shutil
import sys
from pathlib import Path

SAMPLE_STRIDE = 100
# Share of copied items whose quality moves one step, and of single scores that move on their own.
SHARED_SHIFT = 0.35
OWN_NOISE = 0.12


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def copy_id(case_id, copy):
    return case_id if copy == 0 else f"{case_id}-x{copy + 1}"


class Shifts:
    """The shared shift of a copied item, drawn once per (item, dimension)."""

    def __init__(self, seed):
        self.seed = seed
        self.drawn = {}

    def shared(self, item, dimension):
        key = (item, dimension)
        if key not in self.drawn:
            rng = random.Random(f"{self.seed}/{item}/{dimension}")
            u = rng.random()
            self.drawn[key] = -1 if u < SHARED_SHIFT / 2 else 1 if u < SHARED_SHIFT else 0
        return self.drawn[key]

    def score(self, item, dimension, rater, score, scale, original):
        if original:
            return score
        lo, hi, step = scale
        rng = random.Random(f"{self.seed}/{item}/{dimension}/{rater}")
        own = 0
        if rng.random() < OWN_NOISE:
            own = rng.choice((-1, 1))
        moved = score + step * (self.shared(item, dimension) + own)
        return min(hi, max(lo, moved))


def number(value):
    """A score as the files wrote it: 3 rather than 3.0."""
    return int(value) if float(value).is_integer() else value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("demo", type=Path, help="a bundle written by `neurorater demo --out`")
    parser.add_argument("out", type=Path, help="the new bundle's folder (must not exist)")
    parser.add_argument("--responses", type=int, required=True, help="about how many responses")
    parser.add_argument("--max-case-copies", type=int, default=36)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    if args.out.exists():
        sys.exit(f"{args.out}: exists; give a new folder")
    study = json.loads((args.demo / "study.json").read_text(encoding="utf-8"))
    responses = read_jsonl(args.demo / "responses.jsonl")
    grader = read_jsonl(args.demo / "grader.jsonl")
    base = len(responses)
    if base == 0 or args.responses < base:
        sys.exit(f"--responses: at least the demo's {base}")
    case_copies = min(math.ceil(args.responses / base), args.max_case_copies)
    sample_copies = math.ceil(args.responses / (base * case_copies))

    rubric = study["rubric"]
    scales = {"overall": (rubric["overall"]["min"], rubric["overall"]["max"], rubric["overall"]["step"])}
    for d in rubric.get("dimensions", []):
        scales[d["id"]] = (d["min"], d["max"], d["step"])
    shifts = Shifts(args.seed)

    args.out.mkdir(parents=True)
    shutil.copy(args.demo / "study.json", args.out / "study.json")
    if (args.demo / "NOTICE").exists():
        shutil.copy(args.demo / "NOTICE", args.out / "NOTICE")
    cases_dir = args.out / "cases"
    cases_dir.mkdir()
    case_ids = sorted(p.name for p in (args.demo / "cases").iterdir() if p.is_dir())
    for case_id in case_ids:
        shutil.copytree(args.demo / "cases" / case_id, cases_dir / case_id)
    for copy in range(1, case_copies):
        for case_id in case_ids:
            case = json.loads((cases_dir / case_id / "case.json").read_text(encoding="utf-8"))
            new_id = copy_id(case_id, copy)
            folder = cases_dir / new_id
            folder.mkdir()
            case["id"] = new_id
            for series in case["series"]:
                link = folder / series["path"]
                link.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.path.relpath(cases_dir / case_id / series["path"], link.parent), link)
            (folder / "case.json").write_text(json.dumps(case, ensure_ascii=False, indent=1), encoding="utf-8")

    def copies():
        for copy in range(case_copies):
            for j in range(sample_copies):
                yield copy, j

    def item_of(row, copy, j):
        return f"{copy_id(row['case_id'], copy)}/{row['task_id']}/{row['model']}/{row['sample'] + SAMPLE_STRIDE * j}"

    out_responses = []
    out_grader = []
    for copy, j in copies():
        for row in responses:
            moved = dict(row, case_id=copy_id(row["case_id"], copy), sample=row["sample"] + SAMPLE_STRIDE * j)
            out_responses.append(moved)
        for row in grader:
            original = copy == 0 and j == 0
            item = item_of(row, copy, j)
            moved = dict(row, case_id=copy_id(row["case_id"], copy), sample=row["sample"] + SAMPLE_STRIDE * j)
            moved["score"] = number(shifts.score(item, "overall", row["grader"], row["score"], scales["overall"], original))
            if isinstance(row.get("dimensions"), dict):
                moved["dimensions"] = {
                    d: number(shifts.score(item, d, row["grader"], s, scales.get(d, scales["overall"]), original))
                    for d, s in row["dimensions"].items()
                }
            out_grader.append(moved)
    write_jsonl(args.out / "responses.jsonl", out_responses)
    write_jsonl(args.out / "grader.jsonl", out_grader)

    with open(args.demo / "ratings.csv", encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        ratings = list(reader)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    written = 0
    for copy, j in copies():
        for row in ratings:
            case_id, task_id, model, sample = row["item"].split("/")
            item = f"{copy_id(case_id, copy)}/{task_id}/{model}/{int(sample) + SAMPLE_STRIDE * j}"
            dimension = row.get("dimension") or "overall"
            moved = dict(row, item=item)
            if "case" in moved:
                moved["case"] = copy_id(case_id, copy)
            score = float(row["score"])
            moved["score"] = number(
                shifts.score(item, dimension, row["rater"], score, scales.get(dimension, scales["overall"]), copy == 0 and j == 0)
            )
            writer.writerow(moved)
            written += 1
    (args.out / "ratings.csv").write_text(text.getvalue(), encoding="utf-8")
    print(
        json.dumps(
            {
                "cases": len(case_ids) * case_copies,
                "case_copies": case_copies,
                "sample_copies": sample_copies,
                "responses": len(out_responses),
                "grader_scores": len(out_grader),
                "rating_rows": written,
            }
        )
    )


if __name__ == "__main__":
    main()
