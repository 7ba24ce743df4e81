#!/usr/bin/env python3
"""all-MiniLM-L6-v2 sentence embeddings of 2,000 rationales of about 100 tokens: the Rust crate
(candle, textmetrics/examples/embed_speed.rs) beside sentence-transformers (torch) on the same
texts, in one run, on the same machine, best of ROUNDS each. scripts/bench/minilm_speed.sh
installs what this needs (a venv with torch and sentence-transformers), builds the example and
runs this:

    python scripts/bench/minilm_speed.py TARGET/release/examples/embed_speed [ROUNDS]

The texts are built here from a fixed vocabulary of neuroradiology phrases with a fixed seed, so
every run embeds the same 2,000 texts. Both sides load the model before the clock starts; both
tokenize inside it; both use the machine's cores (torch.set_num_threads to os.cpu_count()). The
rounds alternate (Python, Rust, Python, Rust, ...), so a load that changes during the run (a
shared machine) weighs on both sides alike; the load average is printed with the figures.
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer

MODEL_DIR = os.environ.get("NEURORATER_MINILM_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "neurorater" / "all-MiniLM-L6-v2"
)
TEXTS = 2000

PHRASES = [
    "periventricular white matter lesions oriented perpendicular to the ventricles",
    "restricted diffusion in the left middle cerebral artery territory",
    "no corresponding FLAIR hyperintensity, suggesting onset within 4.5 hours",
    "a ring-enhancing mass with central necrosis and vasogenic oedema",
    "juxtacortical and infratentorial lesions satisfy dissemination in space",
    "the ventricles and sulci are normal for age",
    "there is no haemorrhage, mass effect or midline shift",
    "cardioembolism from atrial fibrillation is the most likely mechanism",
    "multiple enhancing lesions at the grey-white junction suggest metastases",
    "T1 black holes indicate axonal loss in a progressive course",
    "the differential includes NMOSD and ADEM, which are less likely",
    "a hyperdense middle cerebral artery sign on the non-contrast CT",
]


def texts():
    rng = random.Random(12)
    out = []
    for _ in range(TEXTS):
        # ~100 word pieces: eight phrases of ~12 pieces each.
        out.append(". ".join(rng.choice(PHRASES) for _ in range(8)).capitalize() + ".")
    return out


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    data = texts()
    torch.set_num_threads(os.cpu_count())
    model = SentenceTransformer(MODEL_DIR, device="cpu")
    lengths = [len(model.tokenizer(t)["input_ids"]) for t in data]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(data) + "\n")
        path = f.name
    load_before = os.getloadavg()[0]
    best_python = float("inf")
    rust = None
    for _ in range(rounds):
        start = time.perf_counter()
        model.encode(data, batch_size=16)
        best_python = min(best_python, time.perf_counter() - start)
        # One timed round per process; the model loads before its clock starts.
        this = json.loads(subprocess.run([binary, path, "1"], check=True, capture_output=True, text=True).stdout)
        if rust is None or this["seconds"] < rust["seconds"]:
            rust = this
    os.unlink(path)
    print(json.dumps({
        "texts": TEXTS,
        "mean_tokens": sum(lengths) / len(lengths),
        "cores": os.cpu_count(),
        "load_average_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "sentence_transformers": {"seconds": round(best_python, 3), "texts_per_second": round(TEXTS / best_python, 1),
                                  "torch": torch.__version__},
        "rust_candle": rust,
        "rust_over_python_throughput": round(rust["texts_per_second"] / (TEXTS / best_python), 2),
    }, indent=1))


if __name__ == "__main__":
    main()
