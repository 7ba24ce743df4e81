//! The automatic-metrics section as HTML and as a CSV table (the renderings `html.rs` and
//! `tables.rs` add to the report's; kept here so the section is one place to read).

use crate::automatic_metrics::AutomaticMetricsReport;
use crate::estimate::Estimate;
use crate::html::{escape, num};
use crate::report::CaseInterval;
use std::fmt::Write;

fn interval(i: Option<&CaseInterval>) -> String {
    i.map_or("—".to_string(), |i| {
        format!("{}–{}", num(i.low, 2), num(i.high, 2))
    })
}

fn na<T>(e: &Estimate<T>) -> String {
    format!(
        "<p class=\"na\">Not estimable: {}</p>",
        escape(e.reason().unwrap_or(""))
    )
}

/// The section's HTML (`<section id="automatic-metrics">`).
pub fn html_section(s: &AutomaticMetricsReport) -> String {
    let mut h = String::new();
    h.push_str("<section id=\"automatic-metrics\"><h2>Automatic metrics against the clinicians</h2><p>Each response's rationale against its case's expected reasoning: cosine of all-MiniLM-L6-v2 sentence embeddings, BERTScore (greedy matching of its token embeddings, no idf, no rescaling) and ROUGE-L; each correlated with the clinicians' mean overall score, with the grader's correlation on the same items below them. Intervals of r resample cases (95 %).</p>");
    if let Some(why) = &s.metrics_missing {
        let _ = write!(h, "<p class=\"na\">{}</p>", escape(why));
    }
    h.push_str("<table><tr><th class=\"text\">Metric</th><th>items</th><th>cases</th><th>Pearson r (95 % CI)</th><th>case bootstrap</th><th>Spearman ρ</th></tr>");
    for row in &s.against_clinicians {
        let r = row.pearson.value().map_or("—".to_string(), |p| {
            format!(
                "{} ({}–{})",
                num(p.r, 3),
                num(p.ci_low, 2),
                num(p.ci_high, 2)
            )
        });
        let rho = row
            .spearman
            .value()
            .map_or("—".to_string(), |p| num(p.rho, 3));
        let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&row.metric), row.n_items, row.n_cases, r, interval(row.pearson_case_interval.as_ref()), rho);
    }
    h.push_str("</table>");
    if let Some(threshold) = s.grader_pass_score {
        let _ = write!(h, "<h3>pass@k: grader verdicts beside the clinicians'</h3><p>The grader passes a sample when its overall score is at least {}; the clinicians when most of them judge it correct. Same samples on both sides.</p>", num(threshold, 2));
        h.push_str("<table><tr><th class=\"text\">Model</th><th class=\"text\">Task family</th><th>level</th><th>k</th><th>tasks</th><th>clinicians</th><th>grader</th></tr>");
        for row in &s.pass_at_k {
            let cell = |v: Option<f64>| v.map_or("—".to_string(), |v| num(v, 3));
            let _ = write!(h, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(&row.model), escape(&row.task_family), escape(&row.level), row.k, row.n_tasks, cell(row.clinicians), cell(row.grader));
        }
        h.push_str("</table>");
        match s.verdict_agreement.value() {
            Some(a) => {
                let kappa = a
                    .cohen_kappa
                    .value()
                    .map_or("not estimable".to_string(), |k| {
                        format!(
                            "{} ({}–{})",
                            num(k.value, 3),
                            num(k.ci_low, 2),
                            num(k.ci_high, 2)
                        )
                    });
                let _ = write!(h, "<p>Verdicts agree on {}% of {} samples; Cohen's κ {}. Passed by the grader only: {}; by the clinicians only: {}.</p>",
                    num(100.0 * a.share_agreeing, 1), a.n, kappa, a.grader_only_pass, a.clinicians_only_pass);
            }
            None => h.push_str(&na(&s.verdict_agreement)),
        }
    }
    h.push_str("<h3>The grader's biases</h3>");
    match s.length_bias.value() {
        Some(b) => {
            let _ = write!(
                h,
                "<p><b>Length.</b> {} ({} items, {} cases).</p>",
                escape(&b.summary),
                b.n_items,
                b.n_cases
            );
        }
        None => h.push_str(&na(&s.length_bias)),
    }
    match s.self_preference.value() {
        Some(p) => {
            let _ = write!(
                h,
                "<p><b>Self-preference.</b> {} ({} own-family, {} other responses).</p>",
                escape(&p.summary),
                p.own_family_items,
                p.other_items
            );
        }
        None => h.push_str(&na(&s.self_preference)),
    }
    match &s.grader_test_retest {
        Some(t) => match t.pooled.reliability.value() {
            Some(r) => {
                let icc = r.icc.value().map_or("not estimable".to_string(), |v| {
                    format!(
                        "{} ({}–{})",
                        num(v.value, 3),
                        num(v.ci_low, 2),
                        num(v.ci_high, 2)
                    )
                });
                let _ = write!(h, "<p><b>Test-retest.</b> Repeat runs of one grader spec: ICC(A,1) {}, mean |difference| {} over {} responses.</p>",
                    icc, num(r.mean_absolute_difference, 2), t.pooled.n_pairs);
            }
            None => h.push_str(&na(&t.pooled.reliability)),
        },
        None => h.push_str(
            "<p class=\"na\"><b>Test-retest.</b> Not estimable: no grader spec ran twice.</p>",
        ),
    }
    h.push_str("</section>");
    h
}

/// `automatic_metrics.csv`: one row per metric (and the grader) against the clinicians.
pub fn csv_table(s: Option<&AutomaticMetricsReport>) -> Vec<Vec<String>> {
    let mut rows = vec![[
        "metric",
        "n_items",
        "n_cases",
        "pearson_r",
        "pearson_ci_low",
        "pearson_ci_high",
        "pearson_case_bootstrap_low",
        "pearson_case_bootstrap_high",
        "spearman_rho",
        "not_estimable",
    ]
    .map(String::from)
    .to_vec()];
    let number = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    for row in s
        .map(|s| s.against_clinicians.as_slice())
        .unwrap_or_default()
    {
        let p = row.pearson.value();
        let i = row.pearson_case_interval.as_ref();
        rows.push(vec![
            row.metric.clone(),
            row.n_items.to_string(),
            row.n_cases.to_string(),
            number(p.map(|p| p.r)),
            number(p.map(|p| p.ci_low)),
            number(p.map(|p| p.ci_high)),
            number(i.map(|i| i.low)),
            number(i.map(|i| i.high)),
            number(row.spearman.value().map(|s| s.rho)),
            row.pearson.reason().unwrap_or("").to_owned(),
        ]);
    }
    rows
}
