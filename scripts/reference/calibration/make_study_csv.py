#!/usr/bin/env python3
"""Write a synthetic long ratings CSV (docs/formats.md section 3) for benchmarks and for looking at
the report: N items in cases of two, 4 clinicians and a grader on a 1-5 scale, with a
disease_group and a modality grouping column. The grader is lenient (+0.4) and noisier on
multiple sclerosis, so the report has something to find.

    python3 make_study_csv.py ITEMS OUT.csv [SEED]
"""

import random
import sys


def main():
    items, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    groups = ["stroke", "multiple_sclerosis", "tumour", "other", "normal"]
    with open(out, "w", encoding="utf-8") as f:
        f.write("item,rater,score,case,disease_group,modality\n")
        for i in range(items):
            case = f"case{i // 2:05d}"
            group = groups[(i // 2) % len(groups)]
            modality = "MR" if (i // 2) % 3 else "CT"
            truth = rng.gauss(3.0, 1.1)
            for rater in ["dr_a", "dr_b", "dr_c", "dr_d"]:
                score = min(5, max(1, round(truth + rng.gauss(0, 0.55))))
                f.write(f"t{i:05d},{rater},{score},{case},{group},{modality}\n")
            noise = 1.1 if group == "multiple_sclerosis" else 0.5
            grader = min(5, max(1, round(truth + 0.4 + rng.gauss(0, noise))))
            f.write(f"t{i:05d},gpt-4o-neuro-v1,{grader},{case},{group},{modality}\n")


main()
