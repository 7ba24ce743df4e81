//! The database as the input of the report's "automatic metrics against the clinicians"
//! ([`calibration::automatic_metrics`]): the stored text metrics, each response's length and
//! model, the model behind each grader that NeuroRater ran, and the scores of repeated runs of
//! one grader spec.

use crate::store::Store;
use crate::{Error, Result};
use calibration::automatic_metrics::AutomaticMetricsInput;
use calibration::input::RepeatRead;
use std::collections::BTreeMap;

/// What a grader run's stored spec must share with another's to count as a repeat of it: the
/// request that decides the score. The name, seed, concurrency, prices and retries may differ.
const SAME_GRADER_FIELDS: [&str; 5] = ["endpoint", "model", "prompt", "temperature", "max_tokens"];

/// Reads the section's input for `study_id`; `grader` is the report's grader.
pub fn automatic_metrics_input(
    store: &Store,
    study_id: &str,
    grader: Option<&str>,
) -> Result<AutomaticMetricsInput> {
    let fail = |e| Error::database(store.path(), "reading the automatic metrics' input", e);
    let conn = store.read();
    let mut metrics: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (item, m) in crate::text_metrics::stored(store, study_id)? {
        metrics.insert(
            item,
            BTreeMap::from([
                ("cosine_minilm".to_owned(), m.cosine),
                ("bertscore_precision".to_owned(), m.bertscore.precision),
                ("bertscore_recall".to_owned(), m.bertscore.recall),
                ("bertscore_f1".to_owned(), m.bertscore.f),
                ("rouge_l_f".to_owned(), m.rouge_l.f),
            ]),
        );
    }
    let metrics_missing = metrics.is_empty().then(|| {
        "No text metrics are stored for this study: compute them in the app (Workbench → \
         Metrics) or run `neurorater metrics --db FILE` (after `bash scripts/setup.sh` has \
         fetched all-MiniLM-L6-v2)."
            .to_owned()
    });

    let mut answer_words = BTreeMap::new();
    let mut response_model = BTreeMap::new();
    let mut item_of = BTreeMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT r.id, c.case_id || '/' || t.task_id || '/' || r.model || '/' || r.sample,
                    r.model, r.answer, coalesce(r.rationale, '')
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id WHERE st.study_id = ?1",
        )
        .map_err(fail)?;
    let mut rows = stmt.query([study_id]).map_err(fail)?;
    while let Some(row) = rows.next().map_err(fail)? {
        let id: i64 = row.get(0).map_err(fail)?;
        let item: String = row.get(1).map_err(fail)?;
        let answer: String = row.get(3).map_err(fail)?;
        let rationale: String = row.get(4).map_err(fail)?;
        let words = answer.split_whitespace().count() + rationale.split_whitespace().count();
        answer_words.insert(item.clone(), words);
        response_model.insert(item.clone(), row.get(2).map_err(fail)?);
        item_of.insert(id, item);
    }
    drop(rows);

    let specs: Vec<(String, String)> = conn
        .prepare("SELECT name, spec_json FROM run_specs WHERE kind = 'grader' ORDER BY name")
        .and_then(|mut stmt| {
            stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect()
        })
        .map_err(fail)?;
    let mut grader_models = BTreeMap::new();
    let mut request_of = BTreeMap::new();
    for (name, json) in &specs {
        let spec: serde_json::Value = serde_json::from_str(json).map_err(|e| Error::Corrupt {
            what: format!("stored spec of grader {name:?}: {e}"),
        })?;
        if let Some(model) = spec.get("model").and_then(|m| m.as_str()) {
            grader_models.insert(name.clone(), model.to_owned());
        }
        let request: Vec<String> = SAME_GRADER_FIELDS
            .iter()
            .map(|field| spec.get(*field).map(|v| v.to_string()).unwrap_or_default())
            .collect();
        request_of.insert(name.clone(), request);
    }

    // Repeats of the report's grader: every other run of the same request.
    let mut grader_repeats = Vec::new();
    if let Some(grader) = grader {
        if let Some(request) = request_of.get(grader) {
            let scores_of = |name: &str| -> Result<BTreeMap<i64, f64>> {
                conn.prepare("SELECT response, score FROM grader_scores WHERE grader = ?1")
                    .and_then(|mut stmt| {
                        stmt.query_map([name], |row| Ok((row.get(0)?, row.get(1)?)))?
                            .collect()
                    })
                    .map_err(fail)
            };
            let first = scores_of(grader)?;
            for (other, other_request) in &request_of {
                if other == grader || other_request != request {
                    continue;
                }
                for (response, repeat) in scores_of(other)? {
                    let (Some(&first), Some(item)) = (first.get(&response), item_of.get(&response))
                    else {
                        continue;
                    };
                    grader_repeats.push(RepeatRead {
                        rater: format!("{grader} / {other}"),
                        item: item.clone(),
                        first,
                        repeat,
                    });
                }
            }
        }
    }
    Ok(AutomaticMetricsInput {
        metrics,
        metrics_missing,
        answer_words,
        response_model,
        grader_models,
        grader_repeats,
    })
}
