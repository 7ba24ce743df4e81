//! The stored automatic text metrics (tables `text_embeddings` and `text_metrics`, migration 6):
//! which responses need them, and the values once computed. The model that computes them lives in
//! the `textmetrics` crate, so that nothing here pays for candle; the report reads the values
//! through [`stored`].
//!
//! A response is measured when it has a rationale and its case's current ground truth has an
//! expected reasoning. Its row carries both texts' SHA-256: when either text changes the row is
//! stale and [`to_compute`] offers the response again.

use crate::store::{audit, Store, NOW_SQL};
use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// A response's rationale and the text it is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct TextPair {
    pub response: i64,
    /// `case/task/model/sample`, the report's item key.
    pub item: String,
    pub rationale: String,
    /// The case's expected reasoning (current ground truth).
    pub reference: String,
}

impl TextPair {
    pub fn rationale_sha256(&self) -> String {
        text_sha256(&self.rationale)
    }

    pub fn reference_sha256(&self) -> String {
        text_sha256(&self.reference)
    }
}

/// The hex SHA-256 of a text's UTF-8 bytes: the key embeddings are cached under.
pub fn text_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Precision, recall and their harmonic mean.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Prf {
    pub precision: f64,
    pub recall: f64,
    pub f: f64,
}

/// One response's metrics against its case's expected reasoning.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TextMetrics {
    /// Cosine of the two sentence embeddings.
    pub cosine: f64,
    pub bertscore: Prf,
    pub rouge_l: Prf,
}

/// A sentence embedding to cache: the text's hash, its token count and the unit vector.
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceEmbedding {
    pub text_sha256: String,
    pub tokens: usize,
    pub vector: Vec<f32>,
}

/// Every measurable response of the study whose metrics under `model` are missing or stale, in
/// response order.
pub fn to_compute(store: &Store, study_id: &str, model: &str) -> Result<Vec<TextPair>> {
    let fail = |e| Error::database(store.path(), "reading what the text metrics lack", e);
    let stored: HashMap<i64, (String, String)> = store
        .read()
        .prepare(
            "SELECT response, rationale_sha256, reference_sha256 FROM text_metrics
             WHERE model = ?1",
        )
        .and_then(|mut stmt| {
            stmt.query_map([model], |row| Ok((row.get(0)?, (row.get(1)?, row.get(2)?))))?
                .collect()
        })
        .map_err(fail)?;
    Ok(pairs(store, study_id)?
        .into_iter()
        .filter(|pair| {
            stored.get(&pair.response) != Some(&(pair.rationale_sha256(), pair.reference_sha256()))
        })
        .collect())
}

/// Every response of the study with a rationale, paired with its case's expected reasoning.
pub fn pairs(store: &Store, study_id: &str) -> Result<Vec<TextPair>> {
    let fail = |e| Error::database(store.path(), "reading rationales for the text metrics", e);
    let rows: Vec<(i64, String, String, String, String)> = store
        .read()
        .prepare(
            "SELECT r.id, c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample,
                    c.case_id, r.rationale, g.body_json
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id JOIN ground_truth g ON g.case_ref = c.id
             WHERE st.study_id = ?1 AND r.rationale IS NOT NULL ORDER BY r.id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([study_id], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })?
            .collect()
        })
        .map_err(fail)?;
    let mut reference_of: HashMap<String, String> = HashMap::new();
    let mut pairs = Vec::new();
    for (response, item, case, rationale, truth_json) in rows {
        if !reference_of.contains_key(&case) {
            let truth: crate::model::GroundTruth =
                serde_json::from_str(&truth_json).map_err(|e| Error::Corrupt {
                    what: format!("ground truth of case {case:?}: {e}"),
                })?;
            reference_of.insert(case.clone(), truth.expected_reasoning);
        }
        let reference = &reference_of[&case];
        if rationale.trim().is_empty() || reference.trim().is_empty() {
            continue;
        }
        pairs.push(TextPair {
            response,
            item,
            rationale,
            reference: reference.clone(),
        });
    }
    Ok(pairs)
}

/// The cached sentence embeddings among `hashes` (text hash → unit vector).
pub fn cached_embeddings(
    store: &Store,
    model: &str,
    hashes: &[String],
) -> Result<HashMap<String, Vec<f32>>> {
    let fail = |e| Error::database(store.path(), "reading cached sentence embeddings", e);
    let mut stmt = store
        .read()
        .prepare("SELECT embedding FROM text_embeddings WHERE model = ?1 AND text_sha256 = ?2")
        .map_err(fail)?;
    let mut found = HashMap::new();
    for hash in hashes {
        let blob: Option<Vec<u8>> = match stmt.query_row([model, hash], |row| row.get(0)) {
            Ok(blob) => Some(blob),
            Err(rusqlite::Error::QueryReturnedNoRows) => None,
            Err(e) => return Err(fail(e)),
        };
        if let Some(blob) = blob {
            if blob.len() % 4 != 0 {
                return Err(Error::Corrupt {
                    what: format!("sentence embedding of text {hash}: {} bytes", blob.len()),
                });
            }
            let vector = blob
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            found.insert(hash.clone(), vector);
        }
    }
    Ok(found)
}

/// Stores a batch of computed metrics and the new sentence embeddings behind them in one
/// transaction, audited as `actor`'s (the front end that computed them); a stale row of the same
/// response and model is replaced.
pub fn save(
    store: &mut Store,
    model: &str,
    computed: &[(TextPair, TextMetrics)],
    embeddings: &[SentenceEmbedding],
    actor: &str,
) -> Result<()> {
    store.write(|w| {
        for embedding in embeddings {
            let blob: Vec<u8> = embedding
                .vector
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            w.tx()
                .execute(
                    "INSERT OR IGNORE INTO text_embeddings (model, text_sha256, tokens, embedding)
                     VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![model, embedding.text_sha256, embedding.tokens as i64, blob],
                )
                .map_err(|e| w.fail("caching a sentence embedding", e))?;
        }
        for (pair, m) in computed {
            w.tx()
                .execute(
                    &format!(
                        "INSERT OR REPLACE INTO text_metrics (response, model, rationale_sha256,
                            reference_sha256, cosine, bertscore_precision, bertscore_recall,
                            bertscore_f1, rouge_l_precision, rouge_l_recall, rouge_l_f,
                            computed_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, {NOW_SQL})"
                    ),
                    rusqlite::params![
                        pair.response,
                        model,
                        pair.rationale_sha256(),
                        pair.reference_sha256(),
                        m.cosine,
                        m.bertscore.precision,
                        m.bertscore.recall,
                        m.bertscore.f,
                        m.rouge_l.precision,
                        m.rouge_l.recall,
                        m.rouge_l.f,
                    ],
                )
                .map_err(|e| w.fail("storing text metrics", e))?;
        }
        let after = serde_json::json!({
            "model": model,
            "responses": computed.iter().map(|(p, _)| p.response).collect::<Vec<_>>(),
        });
        w.audit(&audit::Entry {
            actor,
            action: "compute text metrics",
            entity: "text_metrics",
            before: None,
            after: Some(&after),
        })
    })
}

/// The study's current metrics per item (rows whose texts changed since are left out).
pub fn stored(store: &Store, study_id: &str) -> Result<BTreeMap<String, TextMetrics>> {
    let fail = |e| Error::database(store.path(), "reading text metrics", e);
    let current: HashMap<i64, TextPair> = pairs(store, study_id)?
        .into_iter()
        .map(|p| (p.response, p))
        .collect();
    let mut stmt = store
        .read()
        .prepare(
            "SELECT response, rationale_sha256, reference_sha256, cosine, bertscore_precision,
                    bertscore_recall, bertscore_f1, rouge_l_precision, rouge_l_recall, rouge_l_f
             FROM text_metrics ORDER BY response, model",
        )
        .map_err(fail)?;
    let mut rows = stmt.query([]).map_err(fail)?;
    let mut out = BTreeMap::new();
    while let Some(row) = rows.next().map_err(fail)? {
        let response: i64 = row.get(0).map_err(fail)?;
        let Some(pair) = current.get(&response) else {
            continue;
        };
        let hashes: (String, String) = (row.get(1).map_err(fail)?, row.get(2).map_err(fail)?);
        if hashes != (pair.rationale_sha256(), pair.reference_sha256()) {
            continue;
        }
        let prf = |at: usize| -> rusqlite::Result<Prf> {
            Ok(Prf {
                precision: row.get(at)?,
                recall: row.get(at + 1)?,
                f: row.get(at + 2)?,
            })
        };
        out.insert(
            pair.item.clone(),
            TextMetrics {
                cosine: row.get(3).map_err(fail)?,
                bertscore: prf(4).map_err(fail)?,
                rouge_l: prf(7).map_err(fail)?,
            },
        );
    }
    Ok(out)
}
