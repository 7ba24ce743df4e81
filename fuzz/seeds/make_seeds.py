#!/usr/bin/env python3
"""Writes the seed corpora into fuzz/corpus/<target>/ from the repository's own test data.

Run from the repository root: python3 fuzz/seeds/make_seeds.py
"""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parents[2]
corpus = root / "fuzz" / "corpus"
imaging = root / "imaging" / "tests" / "data"
helpers = (root / "tests" / "src" / "lib.rs").read_text()


def const(name):
    return re.search(r'pub const %s: &str = r#"(.*?)"#;' % name, helpers, re.S).group(1).encode()


def write(target, name, data):
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


# Files above 70 kB slow every execution and add no new structure.
for path in sorted(imaging.iterdir()):
    if path.is_file() and path.stat().st_size <= 70000:
        if path.suffix == ".dcm":
            write("dicom", path.name, path.read_bytes())
        if ".nii" in path.name:
            write("nifti", path.name, path.read_bytes())
write("study_bundle", "small", const("STUDY_JSON") + b"\0" + const("CASE_JSON"))
write("bundle_jsonl", "small", const("RESPONSES_JSONL") + b"\0" + const("GRADER_JSONL"))
write("ratings_csv", "plain", b"item,rater,score\na,r1,3\na,r2,3\nb,r1,3\nb,r2,3\na,g,4\nb,g,2\n")
write(
    "ratings_csv",
    "grouped",
    "\ufeffitem,rater,score,dimension,case,task_family\r\n"
    "i1,g,4,overall,c1,dx\r\ni1,r1,5,overall,c1,dx\r\ni1,r2,4,overall,c1,dx\r\n"
    'i2,g,2,overall,c2,"lesion, id"\r\ni2,r1,1,overall,c2,"lesion, id"\r\n'
    "i2,r2,2.5,overall,c2,\"lesion, id\"\r\ni3,g,3,diagnosis,c3,dx\r\ni3,r1,,diagnosis,c3,dx\r\n".encode(),
)
