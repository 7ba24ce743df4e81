#!/usr/bin/env python3
"""Generate clinicians' scores with case, item, rater and case x rater effects and their variance
components as statsmodels' linear mixed model estimates them (REML, crossed random effects).

Run once; the output is committed as calibration/tests/data/variance_reference.json and read by
calibration/tests/variance.rs.

    /tmp/verdict-ref/bin/python scripts/reference/calibration/make_variance_reference.py \
        > calibration/tests/data/variance_reference.json

Two studies, continuous scores so that every component is clearly positive (where the report's
ANOVA estimators equal REML):
- balanced: 14 cases x 4 items x 4 clinicians; statsmodels.formula.api.mixedlm("score ~ 1",
  groups = one group, re_formula = "0", vc_formula = {case, item, rater, case_rater} as
  "0 + C(...)"), fit(reml=True); the residual is the model's scale;
- one study without case structure (each item its own case): vc_formula {item, rater}.
"""

import json
import sys
import warnings
from importlib.metadata import version

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

SEED = 20261129
rng = np.random.default_rng(SEED)


def generate(cases, items, raters, sd):
    rows = []
    rater_effect = rng.normal(scale=sd["rater"], size=raters)
    for c in range(cases):
        case_effect = rng.normal(scale=sd["case"])
        case_rater = rng.normal(scale=sd["case_rater"], size=raters)
        for i in range(items):
            item_effect = rng.normal(scale=sd["item"])
            for r in range(raters):
                score = (3 + case_effect + item_effect + rater_effect[r] + case_rater[r]
                         + rng.normal(scale=sd["residual"]))
                rows.append({"case": f"case-{c:02d}", "item": f"case-{c:02d}/t{i}",
                             "rater": f"dr_{r}", "score": float(score)})
    return pd.DataFrame(rows)


def fit(data, components):
    data = data.assign(group=1, case_rater=data["case"] + "|" + data["rater"])
    vc = {name: f"0 + C({name})" for name in components}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = smf.mixedlm("score ~ 1", data, groups="group", re_formula="0", vc_formula=vc)
        result = model.fit(reml=True, method=["lbfgs"])
    estimates = dict(zip(model.exog_vc.names, (float(v) for v in result.vcomp)))
    estimates["residual"] = float(result.scale)
    return estimates, bool(result.converged)


studies = []
balanced = generate(14, 4, 4, {"case": 0.8, "item": 0.6, "rater": 0.5, "case_rater": 0.35,
                               "residual": 0.4})
estimates, converged = fit(balanced, ["case", "item", "rater", "case_rater"])
studies.append({"name": "balanced", "scores": balanced.to_dict(orient="records"),
                "expected": estimates, "converged": converged})
flat = generate(40, 1, 3, {"case": 0.0, "item": 0.9, "rater": 0.5, "case_rater": 0.0,
                           "residual": 0.5})
# Each item its own case: the case level is the item level.
flat["case"] = flat["item"]
estimates, converged = fit(flat, ["item", "rater"])
studies.append({"name": "items only", "scores": flat.to_dict(orient="records"),
                "expected": estimates, "converged": converged})

document = {
    "origin": f"scripts/reference/calibration/make_variance_reference.py (seed {SEED})",
    "licence": "generated data, MIT like the repository",
    "versions": {name: version(name) for name in ["numpy", "pandas", "statsmodels"]},
    "python": sys.version.split()[0],
    "studies": studies,
}
json.dump(document, sys.stdout, indent=1)
sys.stdout.write("\n")
