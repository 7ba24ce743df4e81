#!/usr/bin/env python3
"""Run the alternative annotator test with its authors' own code on the study of
alt_test_reference.json, section by section.

The authors' `alt_test` (Calderon, Reichart & Dror, ACL 2025) lives in the notebook
`alt_test_example.ipynb` of github.com/nitaytech/AltTest; that repository carries no licence, so
it is not copied here: this script reads the notebook from a clone given on the command line,
executes the cells that define `alt_test` and its helpers as they are, and records what they
return. Run once; the output is committed as
calibration/tests/data/alt_test_authors_reference.json and read by calibration/tests/alt_test.rs.

    git clone https://github.com/nitaytech/AltTest /tmp/AltTest   # commit 18428b1 was used
    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_alt_test_authors_reference.py \
        /tmp/AltTest > calibration/tests/data/alt_test_authors_reference.json

Per section (dimension x all items / site A / site B): their `alt_test(llm, humans,
scoring_function="neg_rmse", epsilon=0.2, q_fdr=0.05)` returns the winning rate (omega) and the
average advantage probability (rho-bar) with Benjamini-Yekutieli over that section's p-values;
each p-value is recorded as their `ttest` returns it (the notebook's function wrapped, not
changed). Their default minimum of 30 instances per annotator and 2 annotators per instance
applies, so dr_d (20 items) is skipped as in the report.
"""

import contextlib
import io
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

clone = Path(sys.argv[1])
notebook = json.loads((clone / "alt_test_example.ipynb").read_text())
commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True,
                        text=True, check=True).stdout.strip()
here = Path(__file__).resolve().parent
study = json.loads((here / "../../../calibration/tests/data/alt_test_reference.json").read_text())

namespace = {}
exec("import json\nimport numpy as np\nfrom scipy.stats import ttest_1samp\n"
     "from typing import Any, Callable, Dict, List, Union", namespace)
for cell in notebook["cells"]:
    source = "".join(cell["source"])
    if cell["cell_type"] == "code" and "def alt_test(" in source:
        exec(source, namespace)
        break
else:
    sys.exit("alt_test_example.ipynb defines no alt_test")

recorded = []
authors_ttest = namespace["ttest"]


def recording_ttest(indicators, epsilon):
    p = authors_ttest(indicators, epsilon)
    recorded.append(float(p))
    return p


namespace["ttest"] = recording_ttest

sections = []
for dimension in ["overall", "reasoning"]:
    for site in [None, "A", "B"]:
        rows = [r for r in study["scores"] if r["dimension"] == dimension
                and (site is None or r["site"] == site)]
        llm = {r["item"]: r["score"] for r in rows if r["rater"] == "grader"}
        humans = {}
        for r in rows:
            if r["rater"] != "grader":
                humans.setdefault(r["rater"], {})[r["item"]] = r["score"]
        recorded.clear()
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            winning_rate, advantage_prob = namespace["alt_test"](
                llm, humans, scoring_function="neg_rmse", epsilon=study["epsilon"],
                q_fdr=study["q"])
        tested = [h for h in humans
                  if f"Skipping annotator {h} " not in printed.getvalue()]
        sections.append({"dimension": dimension, "group": site,
                         "winning_rate": winning_rate,
                         "average_advantage_probability": advantage_prob,
                         "p": dict(zip(tested, recorded)),
                         "printed": printed.getvalue().splitlines()})

document = {
    "origin": "scripts/reference/calibration/make_alt_test_authors_reference.py",
    "authors_code": f"github.com/nitaytech/AltTest alt_test_example.ipynb at {commit}",
    "data": "the scores of calibration/tests/data/alt_test_reference.json",
    "versions": {name: version(name) for name in ["numpy", "scipy"]},
    "python": sys.version.split()[0],
    "sections": sections,
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
