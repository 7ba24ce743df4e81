//! A study's missing or stale text metrics, computed and stored a batch at a time: a run stopped
//! at any moment (Ctrl-C, a crash) keeps every finished batch, and the next run computes only
//! what is still missing.

use crate::bertscore::bertscore;
use crate::minilm::{truncate_for_sentence, MiniLm, TokenEmbeddings};
use crate::rouge::rouge_l;
use crate::Result;
use cases::progress::Progress;
use cases::store::Store;
use cases::text_metrics::{self, text_sha256, SentenceEmbedding, TextMetrics, TextPair};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Responses per stored batch: what a stop can lose, and how often progress moves.
const PAIRS_PER_BATCH: usize = 32;

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Responses measured and stored by this run.
    pub computed: usize,
    /// Responses that were still missing when the run stopped.
    pub left: usize,
    pub cancelled: bool,
}

/// Computes what [`text_metrics::to_compute`] lists, checking `cancel` between batches. Each
/// stored batch's audit entry names `actor`: the front end computing them.
pub fn compute_study(
    store: &mut Store,
    study_id: &str,
    model: &MiniLm,
    progress: &dyn Progress,
    cancel: &AtomicBool,
    actor: &str,
) -> Result<Summary> {
    let pairs = text_metrics::to_compute(store, study_id, model.identity())?;
    progress.phase("text metrics", pairs.len() as u64);
    // References repeat across a case's responses: each is run through the model once.
    let mut references: HashMap<String, Measured> = HashMap::new();
    let mut computed = 0;
    for batch in pairs.chunks(PAIRS_PER_BATCH) {
        if cancel.load(Ordering::Relaxed) {
            return Ok(Summary {
                computed,
                left: pairs.len() - computed,
                cancelled: true,
            });
        }
        let new_references: Vec<&str> = unique(
            batch
                .iter()
                .map(|p| p.reference.as_str())
                .filter(|r| !references.contains_key(&text_sha256(r))),
        );
        for (text, measured) in new_references.iter().zip(measure(model, &new_references)?) {
            references.insert(text_sha256(text), measured);
        }
        let rationales: Vec<&str> = unique(batch.iter().map(|p| p.rationale.as_str()));
        let measured: HashMap<String, Measured> = rationales
            .iter()
            .map(|t| text_sha256(t))
            .zip(measure(model, &rationales)?)
            .collect();
        let mut results: Vec<(TextPair, TextMetrics)> = Vec::with_capacity(batch.len());
        for pair in batch {
            let candidate = &measured[&pair.rationale_sha256()];
            let reference = &references[&pair.reference_sha256()];
            let Some(bert) = bertscore(&candidate.tokens, &reference.tokens) else {
                // Whitespace-only texts are left out by `pairs`; a text of only characters the
                // tokenizer drops has nothing to match.
                continue;
            };
            results.push((
                pair.clone(),
                TextMetrics {
                    cosine: cosine(&candidate.sentence.vector, &reference.sentence.vector),
                    bertscore: bert,
                    rouge_l: rouge_l(&pair.reference, &pair.rationale),
                },
            ));
        }
        let embeddings: Vec<SentenceEmbedding> = measured
            .values()
            .chain(batch.iter().map(|p| &references[&p.reference_sha256()]))
            .map(|m| m.sentence.clone())
            .collect();
        text_metrics::save(store, model.identity(), &results, &embeddings, actor)?;
        computed += batch.len();
        progress.advance(computed as u64);
    }
    Ok(Summary {
        computed,
        left: 0,
        cancelled: false,
    })
}

/// A text's token embeddings and its sentence embedding.
struct Measured {
    tokens: TokenEmbeddings,
    sentence: SentenceEmbedding,
}

fn measure(model: &MiniLm, texts: &[&str]) -> Result<Vec<Measured>> {
    let tokens = model.token_embeddings(texts)?;
    // A text longer than sentence-transformers reads needs its own, truncated, pass.
    let long: Vec<usize> = (0..texts.len())
        .filter(|&i| tokens[i].sentence().is_none())
        .collect();
    let long_ids = long
        .iter()
        .map(|&i| model.tokenize(texts[i]).map(truncate_for_sentence))
        .collect::<Result<Vec<_>>>()?;
    let mut long_sentences: HashMap<usize, Vec<f32>> = long
        .iter()
        .copied()
        .zip(model.embed_ids(&long_ids)?.iter().map(|t| {
            t.sentence()
                .expect("truncated to sentence-transformers' length")
        }))
        .collect();
    Ok(tokens
        .into_iter()
        .enumerate()
        .map(|(i, tokens)| {
            let vector = tokens
                .sentence()
                .or_else(|| long_sentences.remove(&i))
                .expect("every long text ran again");
            Measured {
                sentence: SentenceEmbedding {
                    text_sha256: text_sha256(texts[i]),
                    tokens: tokens.tokens(),
                    vector,
                },
                tokens,
            }
        })
        .collect())
}

/// Cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

fn unique<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = std::collections::HashSet::new();
    texts.filter(|t| seen.insert(*t)).collect()
}
