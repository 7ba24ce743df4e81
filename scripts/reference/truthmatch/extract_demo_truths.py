#!/usr/bin/env python3
"""Copies the demo study's curated truths and its correct answer phrases out of
demo/src/catalogue.rs into truthmatch/tests/data/demo_truths.json, the input of the matcher's
perturbation suite (truthmatch/tests/perturbation.rs).

The truthmatch crate sits below the domain and cannot depend on the demo; rerun this after
changing the catalogue:  python3 scripts/reference/truthmatch/extract_demo_truths.py
"""
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[3]
SRC = (ROOT / "demo/src/catalogue.rs").read_text()
STR = r'"((?:[^"\\]|\\.)*)"'


def field(block, name):
    m = re.search(r"\b" + name + r": " + STR, block)
    return m.group(1).replace('\\"', '"') if m else None


def opt_field(block, name):
    m = re.search(r"\b" + name + r": Some\(" + STR + r"\)", block)
    return m.group(1) if m else None


normal_text = SRC[SRC.index("fn normal_text("):SRC.index("fn normal_headache")]
cases = []
for m in re.finditer(r"\n(?:fn \w+\(\) -> CaseDef \{)(.*?)\n\}\n", SRC, re.S):
    block = m.group(1)
    case_id = field(block, "id")
    diagnosis = re.search(r"\bdiagnosis: " + STR + r",\n", block).group(1)
    code = opt_field(block, "diagnosis_code")
    diff_block = re.search(r"differential: &\[\n(.*?)\n        \],", block, re.S)
    differential = (
        [re.match(r'\s*\("([^"]*)"', line).group(1) for line in diff_block.group(1).splitlines()]
        if diff_block else []
    )
    lesions = re.findall(r'truth\("L\d", ' + STR, block)
    text = block if "text: AnswerText {" in block else normal_text
    answer = {
        key: field(text, key) or opt_field(text, key)
        for key in ["sequence", "finding", "location", "secondary", "differential", "answer", "lesion_answer"]
    }
    cases.append({
        "id": case_id,
        "diagnosis": diagnosis,
        "code": code,
        "differential": differential,
        "descriptions": [field(block, "expected_reasoning")] + lesions,
        "correct_answer": answer,
    })

out = ROOT / "truthmatch/tests/data/demo_truths.json"
out.write_text(json.dumps({"source": "demo/src/catalogue.rs", "cases": cases}, indent=1, ensure_ascii=False) + "\n")
print(f"{len(cases)} cases -> {out}")
