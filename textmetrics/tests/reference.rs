//! all-MiniLM-L6-v2, BERTScore and ROUGE-L against the Python packages they come from, on the
//! same model files: `scripts/reference/metrics/make_text_metrics_reference.py` (torch,
//! transformers, sentence-transformers, bert_score, rouge-score; versions in the data file) wrote
//! `tests/data/text_metrics_reference.json`. The texts cover the study's shapes and the edges:
//! identical texts, case only, symbols and accents the ROUGE tokenizer drops, a reference over
//! sentence-transformers' 256 tokens and a rationale over the model's 512.
//!
//! The model's files come from `scripts/setup.sh` (or `NEURORATER_MINILM_DIR`); without them
//! these tests fail with the message that names that command.

use serde::Deserialize;
use textmetrics::bertscore::bertscore;
use textmetrics::compute::cosine;
use textmetrics::rouge::rouge_l;
use textmetrics::MiniLm;

/// float32 network against float32 network on different kernels: the brief's bound.
const EMBEDDING_TOLERANCE: f64 = 1e-4;
/// Scores are sums over hundreds of token cosines: the same bound on the result.
const SCORE_TOLERANCE: f64 = 1e-4;
/// ROUGE-L is counting: only floating-point division differs.
const ROUGE_TOLERANCE: f64 = 1e-12;

#[derive(Deserialize)]
struct Reference {
    texts: Vec<String>,
    token_ids: Vec<Vec<u32>>,
    sentence_embeddings: Vec<Vec<f64>>,
    hidden_state_text: usize,
    hidden_state: Vec<Vec<f64>>,
    pairs: Vec<Pair>,
}

#[derive(Deserialize)]
struct Pair {
    reference: usize,
    candidate: usize,
    cosine: f64,
    bertscore: BertScore,
    rouge_l: Rouge,
}

#[derive(Deserialize)]
struct BertScore {
    precision: f64,
    recall: f64,
    f1: f64,
}

#[derive(Deserialize)]
struct Rouge {
    precision: f64,
    recall: f64,
    f: f64,
}

fn reference() -> Reference {
    let text = include_str!("data/text_metrics_reference.json");
    serde_json::from_str(text).expect("reference data parses")
}

fn model() -> MiniLm {
    let dir = textmetrics::weights::locate().unwrap_or_else(|e| panic!("{e}"));
    MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_close(what: &str, got: f64, want: f64, tolerance: f64) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got} against the reference {want} (tolerance {tolerance})"
    );
}

#[test]
fn embeddings_and_scores_match_the_python_packages() {
    let reference = reference();
    let model = model();
    let texts: Vec<&str> = reference.texts.iter().map(String::as_str).collect();

    for (text, want) in texts.iter().zip(&reference.token_ids) {
        assert_eq!(
            &model.tokenize(text).unwrap(),
            want,
            "token ids of {text:?}"
        );
    }

    let tokens = model.token_embeddings(&texts).unwrap();
    let hidden = &tokens[reference.hidden_state_text];
    assert_eq!(hidden.tokens(), reference.hidden_state.len());
    for (i, row) in reference.hidden_state.iter().enumerate() {
        for (d, want) in row.iter().enumerate() {
            let got = f64::from(hidden.row(i)[d]);
            assert_close(
                &format!("hidden state {i},{d}"),
                got,
                *want,
                EMBEDDING_TOLERANCE,
            );
        }
    }

    let sentences = model.sentence_embeddings(&texts).unwrap();
    for (i, (got, want)) in sentences
        .iter()
        .zip(&reference.sentence_embeddings)
        .enumerate()
    {
        assert_eq!(got.len(), want.len());
        for (d, (g, w)) in got.iter().zip(want).enumerate() {
            assert_close(
                &format!("sentence embedding of text {i}, dimension {d}"),
                f64::from(*g),
                *w,
                EMBEDDING_TOLERANCE,
            );
        }
    }

    for (n, pair) in reference.pairs.iter().enumerate() {
        let what = |m: &str| format!("pair {n} ({} vs {}): {m}", pair.candidate, pair.reference);
        assert_close(
            &what("cosine"),
            cosine(&sentences[pair.candidate], &sentences[pair.reference]),
            pair.cosine,
            SCORE_TOLERANCE,
        );
        let bert = bertscore(&tokens[pair.candidate], &tokens[pair.reference]).unwrap();
        assert_close(
            &what("BERTScore P"),
            bert.precision,
            pair.bertscore.precision,
            SCORE_TOLERANCE,
        );
        assert_close(
            &what("BERTScore R"),
            bert.recall,
            pair.bertscore.recall,
            SCORE_TOLERANCE,
        );
        assert_close(
            &what("BERTScore F1"),
            bert.f,
            pair.bertscore.f1,
            SCORE_TOLERANCE,
        );
        let rouge = rouge_l(texts[pair.reference], texts[pair.candidate]);
        assert_close(
            &what("ROUGE-L P"),
            rouge.precision,
            pair.rouge_l.precision,
            ROUGE_TOLERANCE,
        );
        assert_close(
            &what("ROUGE-L R"),
            rouge.recall,
            pair.rouge_l.recall,
            ROUGE_TOLERANCE,
        );
        assert_close(&what("ROUGE-L F"), rouge.f, pair.rouge_l.f, ROUGE_TOLERANCE);
    }
}

#[test]
fn a_missing_model_folder_names_the_setup_command() {
    let empty = tempfile::tempdir().unwrap();
    let message = match MiniLm::load(empty.path()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("an empty folder loaded as a model"),
    };
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(message.contains("scripts/setup.sh"), "{message}");
}
