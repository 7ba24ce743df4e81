//! BERTScore (Zhang et al. 2020) as the `bert_score` package computes it with `idf=False` and no
//! baseline rescaling: each token embedding L2-normalised; precision is the mean over the
//! candidate's tokens of the best cosine with any reference token, recall the same the other
//! way, F1 their harmonic mean. `[CLS]` and `[SEP]` weigh nothing (the package gives them idf
//! weight 0) but remain tokens the others can match with, as in the package.

use crate::minilm::{normalised, TokenEmbeddings};
use cases::text_metrics::Prf;

/// BERTScore of `candidate` (the response's rationale) against `reference` (the expected
/// reasoning). `None` when either has no token between `[CLS]` and `[SEP]`.
pub fn bertscore(candidate: &TokenEmbeddings, reference: &TokenEmbeddings) -> Option<Prf> {
    if candidate.tokens() < 3 || reference.tokens() < 3 {
        return None;
    }
    let unit = |t: &TokenEmbeddings| -> Vec<Vec<f32>> {
        (0..t.tokens())
            .map(|i| normalised(t.row(i).to_vec()))
            .collect()
    };
    let (c, r) = (unit(candidate), unit(reference));
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let mut best_for_candidate = vec![f32::NEG_INFINITY; c.len()];
    let mut best_for_reference = vec![f32::NEG_INFINITY; r.len()];
    for (i, ci) in c.iter().enumerate() {
        for (j, rj) in r.iter().enumerate() {
            let sim = dot(ci, rj);
            best_for_candidate[i] = best_for_candidate[i].max(sim);
            best_for_reference[j] = best_for_reference[j].max(sim);
        }
    }
    let inner_mean = |best: &[f32]| -> f64 {
        let inner = &best[1..best.len() - 1];
        inner.iter().map(|&v| f64::from(v)).sum::<f64>() / inner.len() as f64
    };
    let precision = inner_mean(&best_for_candidate);
    let recall = inner_mean(&best_for_reference);
    Some(Prf {
        precision,
        recall,
        f: 2.0 * precision * recall / (precision + recall),
    })
}
