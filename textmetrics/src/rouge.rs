//! ROUGE-L as Google's `rouge-score` package computes it (`RougeScorer(["rougeL"])`, no
//! stemming): lower-case, every run of characters other than `a–z`/`0–9` a separator, then the
//! longest common subsequence of the two token lists. Precision is LCS over the prediction's
//! length, recall LCS over the target's, F their harmonic mean (0 when both are 0).

use cases::text_metrics::Prf;

/// `rouge-score`'s `DefaultTokenizer(use_stemmer=False)`.
pub fn tokenize(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .collect()
}

/// ROUGE-L of `prediction` (the response's rationale) against `target` (the expected
/// reasoning).
pub fn rouge_l(target: &str, prediction: &str) -> Prf {
    let (target, prediction) = (tokenize(target), tokenize(prediction));
    if target.is_empty() || prediction.is_empty() {
        return Prf {
            precision: 0.0,
            recall: 0.0,
            f: 0.0,
        };
    }
    let lcs = lcs_length(&target, &prediction) as f64;
    let precision = lcs / prediction.len() as f64;
    let recall = lcs / target.len() as f64;
    let f = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Prf {
        precision,
        recall,
        f,
    }
}

/// The classic dynamic programme, one row at a time.
fn lcs_length(a: &[String], b: &[String]) -> usize {
    let mut previous = vec![0usize; b.len() + 1];
    let mut current = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            current[j + 1] = if x == y {
                previous[j] + 1
            } else {
                current[j].max(previous[j + 1])
            };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_keeps_only_ascii_letters_and_digits() {
        // rouge-score: "T2-FLAIR, 3 lesions!" -> ["t2", "flair", "3", "lesions"]; "é" splits.
        assert_eq!(
            tokenize("T2-FLAIR, 3 lesions! café"),
            ["t2", "flair", "3", "lesions", "caf"]
        );
    }

    #[test]
    fn lcs_is_a_subsequence_not_a_substring() {
        // target a b c d, prediction a c d: LCS 3, P 3/3, R 3/4.
        let score = rouge_l("a b c d", "a x c d");
        assert_eq!(score.precision, 0.75);
        assert_eq!(score.recall, 0.75);
        let score = rouge_l("a b c d", "a c d");
        assert_eq!((score.precision, score.recall), (1.0, 0.75));
    }
}
