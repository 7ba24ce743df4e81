//! Model reliability per model or grader spec, from the run records `neurorater respond` and
//! `grade` store with each result (table `run_results`): how many results, requests and tokens,
//! the latency of an item's conversation (p50, p95), their cost where the runs named prices, and,
//! for graders, the share of replies that could not be used (docs/report-schema.md, "Model
//! reliability"). Pure: the caller reads the records.

use serde::Serialize;

/// One stored result's run record.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// The spec's name (the model or grader name stored with the result).
    pub name: String,
    /// `model` or `grader`, as the spec was bound.
    pub kind: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The whole conversation of the item (follow-ups and re-asks included, retries' waits too).
    pub latency_ms: u64,
    /// Requests in the item's conversation: its follow-ups (models) or re-asks (graders), not
    /// retries.
    pub requests: u64,
    /// What the item's tokens cost at the prices its run's spec named; `None` without prices.
    pub cost: Option<f64>,
}

/// One spec's reliability over the study's stored results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelReliability {
    pub name: String,
    /// `model` or `grader`.
    pub kind: String,
    /// Stored results with a run record (imported results have none).
    pub items: usize,
    pub requests: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// (prompt + completion tokens) / items.
    pub mean_tokens_per_item: f64,
    /// Median and 95th percentile of an item's latency in ms, linear interpolation between order
    /// statistics (numpy's default).
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    /// Graders: replies that could not be used (asked again) / all replies of stored items.
    /// Items whose every reply was unusable were never stored and are not counted. `None` for
    /// models: their reply is free text, and their extra requests are follow-ups.
    pub malformed_output_rate: Option<f64>,
    /// What the spec's stored items cost, in the currency of its prices; `None` unless every item
    /// was run with prices (a partial sum would read as the whole).
    pub cost: Option<f64>,
    /// FORMATS §5's names for the figures above (`tokens` = prompt + completion), kept beside the
    /// report's own so pipelines written to the contract read them.
    pub tokens: u64,
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
    pub malformed_rate: Option<f64>,
    /// FORMATS §5's figures no stored record can say yet, `null` as the contract asks: whether an
    /// answer abstained, and a stated confidence to calibrate (Brier, ECE with its bins).
    pub abstention_rate: Option<f64>,
    pub brier: Option<f64>,
    pub ece: Option<f64>,
    pub bins: Option<u32>,
}

/// One row per spec (name order), from its records; specs without records have no row.
pub fn model_reliability(records: &[RunRecord]) -> Vec<ModelReliability> {
    let mut by_name: std::collections::BTreeMap<(&str, &str), Vec<&RunRecord>> =
        std::collections::BTreeMap::new();
    for record in records {
        by_name
            .entry((&record.name, &record.kind))
            .or_default()
            .push(record);
    }
    by_name
        .into_iter()
        .map(|((name, kind), rows)| {
            let items = rows.len();
            let requests: u64 = rows.iter().map(|r| r.requests).sum();
            let prompt_tokens: u64 = rows.iter().map(|r| r.prompt_tokens).sum();
            let completion_tokens: u64 = rows.iter().map(|r| r.completion_tokens).sum();
            let mut latency: Vec<f64> = rows.iter().map(|r| r.latency_ms as f64).collect();
            latency.sort_by(f64::total_cmp);
            let p50 = crate::bootstrap::quantile(&latency, 0.5);
            let p95 = crate::bootstrap::quantile(&latency, 0.95);
            let malformed_output_rate = (kind == "grader" && requests > 0).then(|| {
                let reasked: u64 = rows.iter().map(|r| r.requests.saturating_sub(1)).sum();
                reasked as f64 / requests as f64
            });
            ModelReliability {
                name: name.to_owned(),
                kind: kind.to_owned(),
                items,
                requests,
                prompt_tokens,
                completion_tokens,
                mean_tokens_per_item: (prompt_tokens + completion_tokens) as f64 / items as f64,
                latency_ms_p50: p50,
                latency_ms_p95: p95,
                malformed_output_rate,
                cost: rows.iter().map(|r| r.cost).sum(),
                tokens: prompt_tokens + completion_tokens,
                latency_p50_ms: p50,
                latency_p95_ms: p95,
                malformed_rate: malformed_output_rate,
                abstention_rate: None,
                brier: None,
                ece: None,
                bins: None,
            }
        })
        .collect()
}
