//! The report as JSON and as CSV tables (one file per table).

use crate::estimate::Estimate;
use crate::report::{Report, Section};

/// The report as pretty-printed JSON (schema: docs/report-schema.md).
pub fn to_json(report: &Report) -> String {
    // Serialising plain data with string keys cannot fail.
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// RFC 4180 quoting where needed.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn number(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map(|v| format!("{v}"))
        .unwrap_or_default()
}

fn line(fields: &[String]) -> String {
    let mut s = fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

fn reason<T>(e: &Estimate<T>) -> String {
    e.reason().unwrap_or("").to_string()
}

/// CSV tables: agreement per dimension and group, per rater, degradation, pass@k, the error
/// distribution, intra-rater reliability, the prediction-powered estimates, missed findings, model
/// reliability and the answers against the ground truth (header only when absent). Empty cells are not-estimable figures; the `not_estimable` column says why.
pub fn to_csv_tables(report: &Report) -> Vec<(String, String)> {
    let mut agreement = line(
        &[
            "dimension",
            "group_column",
            "group_value",
            "n_items",
            "n_cases",
            "human_icc2",
            "human_icc2_ci_low",
            "human_icc2_ci_high",
            "human_krippendorff_alpha_interval",
            "grader_n",
            "pearson_r",
            "pearson_ci_low",
            "pearson_ci_high",
            "pearson_p",
            "bootstrap_r_bca_low",
            "bootstrap_r_bca_high",
            "spearman_rho",
            "kendall_tau_b",
            "bias",
            "loa_low",
            "loa_high",
            "grader_icc2",
            "not_estimable",
        ]
        .map(String::from),
    );
    let mut per_rater = line(
        &[
            "dimension",
            "rater",
            "n",
            "pearson_r",
            "pearson_ci_low",
            "pearson_ci_high",
            "spearman_rho",
            "bias",
            "loa_low",
            "loa_high",
            "kappa_quadratic",
            "held_out_r_vs_rest",
            "grader_r_vs_rest",
        ]
        .map(String::from),
    );
    let mut degradation = line(
        &[
            "dimension",
            "statistic",
            "grader_human",
            "human_human",
            "difference",
            "comparisons",
            "grader_human_ci_low",
            "grader_human_ci_high",
            "human_human_ci_low",
            "human_human_ci_high",
            "difference_ci_low",
            "difference_ci_high",
            "ci_method",
        ]
        .map(String::from),
    );
    for d in &report.dimensions {
        let sections = std::iter::once(("", "", &d.overall)).chain(
            d.groups
                .iter()
                .map(|g| (g.column.as_str(), g.value.as_str(), &g.section)),
        );
        for (column, value, s) in sections {
            agreement.push_str(&agreement_row(&d.dimension, column, value, s));
        }
        if let Some(g) = &d.overall.grader {
            for r in &g.vs_each_rater {
                let loo = g.leave_one_rater_out.iter().find(|l| l.held_out == r.rater);
                let p = r.pearson.value();
                let ba = r.bland_altman.value();
                per_rater.push_str(&line(&[
                    d.dimension.clone(),
                    r.rater.clone(),
                    r.n.to_string(),
                    number(p.map(|p| p.r)),
                    number(p.map(|p| p.ci_low)),
                    number(p.map(|p| p.ci_high)),
                    number(r.spearman.value().map(|s| s.rho)),
                    number(ba.map(|b| b.bias)),
                    number(ba.map(|b| b.loa_low)),
                    number(ba.map(|b| b.loa_high)),
                    number(r.cohen_kappa.quadratic.value().map(|k| k.value)),
                    number(loo.and_then(|l| l.held_out_vs_rest.pearson.value().map(|p| p.r))),
                    number(loo.and_then(|l| l.grader_vs_rest.pearson.value().map(|p| p.r))),
                ]));
            }
            for row in &g.degradation {
                degradation.push_str(&line(&[
                    d.dimension.clone(),
                    row.statistic.clone(),
                    number(row.grader_human.value().copied()),
                    number(row.human_human.value().copied()),
                    number(row.difference.value().copied()),
                    row.comparisons.to_string(),
                    number(row.grader_human_interval.as_ref().map(|i| i.low)),
                    number(row.grader_human_interval.as_ref().map(|i| i.high)),
                    number(row.human_human_interval.as_ref().map(|i| i.low)),
                    number(row.human_human_interval.as_ref().map(|i| i.high)),
                    number(row.difference_interval.as_ref().map(|i| i.low)),
                    number(row.difference_interval.as_ref().map(|i| i.high)),
                    row.difference_interval
                        .as_ref()
                        .map(|i| i.describe())
                        .unwrap_or_default(),
                ]));
            }
        }
    }
    let mut pass = line(
        &[
            "model",
            "task_family",
            "level",
            "k",
            "pass_at_k",
            "ci_low",
            "ci_high",
            "n_tasks",
            "not_estimable",
        ]
        .map(String::from),
    );
    for row in &report.pass_at_k {
        let v = row.pass_at_k.value();
        pass.push_str(&line(&[
            row.model.clone(),
            row.task_family.clone(),
            row.level.clone(),
            row.k.to_string(),
            number(v.map(|v| v.value)),
            number(v.map(|v| v.ci_low)),
            number(v.map(|v| v.ci_high)),
            v.map(|v| v.n.to_string()).unwrap_or_default(),
            reason(&row.pass_at_k),
        ]));
    }
    let mut errors = line(
        &[
            "level", "name", "count", "total", "share", "ci_low", "ci_high",
        ]
        .map(String::from),
    );
    if let Some(dist) = &report.error_distribution {
        for (level, shares) in [("bucket", &dist.by_bucket), ("category", &dist.by_category)] {
            for s in shares {
                errors.push_str(&line(&[
                    level.to_string(),
                    s.name.clone(),
                    s.share.count.to_string(),
                    s.share.n.to_string(),
                    number(Some(s.share.share)),
                    number(Some(s.share.ci_low)),
                    number(Some(s.share.ci_high)),
                ]));
            }
        }
    }
    let mut errors_by_model = line(
        &[
            "model", "category", "count", "reviewed", "share", "ci_low", "ci_high",
        ]
        .map(String::from),
    );
    for m in report.error_distribution.iter().flat_map(|d| &d.by_model) {
        for s in &m.by_category {
            errors_by_model.push_str(&line(&[
                m.model.clone(),
                s.name.clone(),
                s.share.count.to_string(),
                m.reviewed.to_string(),
                number(Some(s.share.share)),
                number(Some(s.share.ci_low)),
                number(Some(s.share.ci_high)),
            ]));
        }
    }
    let (missed, missed_by_model) = missed_findings_tables(report);
    vec![
        ("agreement.csv".to_string(), agreement),
        ("per_rater.csv".to_string(), per_rater),
        ("degradation.csv".to_string(), degradation),
        ("pass_at_k.csv".to_string(), pass),
        ("error_distribution.csv".to_string(), errors),
        (
            "error_distribution_by_model.csv".to_string(),
            errors_by_model,
        ),
        ("intra_rater.csv".to_string(), intra_rater_table(report)),
        ("ppi.csv".to_string(), ppi_table(report)),
        ("missed_findings.csv".to_string(), missed),
        ("missed_findings_by_model.csv".to_string(), missed_by_model),
        (
            "automatic_metrics.csv".to_string(),
            crate::automatic_metrics_render::csv_table(report.automatic_metrics.as_ref())
                .iter()
                .map(|row| line(row))
                .collect(),
        ),
        (
            "dimension_coverage.csv".to_string(),
            crate::coverage::csv_rows(report.dimension_coverage.as_deref())
                .iter()
                .map(|row| line(row))
                .collect(),
        ),
        (
            "rubric_versions.csv".to_string(),
            crate::coverage::version_csv_rows(report.rubric_versions.as_deref())
                .iter()
                .map(|row| line(row))
                .collect(),
        ),
        (
            "model_reliability.csv".to_string(),
            model_reliability_table(report.model_reliability.as_deref().unwrap_or_default()),
        ),
        (
            "answer_accuracy.csv".to_string(),
            answer_accuracy_table(report.answer_accuracy.as_deref().unwrap_or_default()),
        ),
    ]
}

/// One row per `answer_accuracy` row (task family and level empty on a model's own row); its
/// pass@k as the JSON's `{k: value}`, agreement as each side's κ, the undecided spans left to the
/// JSON.
fn answer_accuracy_table(rows: &[crate::truth_match::AnswerAccuracyRow]) -> String {
    use crate::truth_match::{AnswerAccuracyRow, Share};
    fn share(e: &Estimate<Share>, f: fn(&Share) -> f64) -> String {
        number(e.value().map(f))
    }
    fn kappa(row: &AnswerAccuracyRow, against: &str) -> String {
        let agreement = row.agreement.iter().find(|a| a.against == against);
        number(agreement.and_then(|a| a.kappa.value()).map(|k| k.value))
    }
    let columns: &[Column<AnswerAccuracyRow>] = &[
        ("model", |r| r.model.clone()),
        ("task_family", |r| r.task_family.clone().unwrap_or_default()),
        ("level", |r| r.level.clone().unwrap_or_default()),
        ("n", |r| r.n.to_string()),
        ("unmatched", |r| r.unmatched.to_string()),
        ("exact", |r| r.exact.to_string()),
        ("contradicted_findings", |r| {
            r.contradicted_findings.to_string()
        }),
        ("top1", |r| share(&r.top1, |v| v.value)),
        ("top1_low", |r| share(&r.top1, |v| v.low)),
        ("top1_high", |r| share(&r.top1, |v| v.high)),
        ("top3", |r| share(&r.top3, |v| v.value)),
        ("top3_low", |r| share(&r.top3, |v| v.low)),
        ("top3_high", |r| share(&r.top3, |v| v.high)),
        ("pass_at", |r| {
            let values: serde_json::Map<String, serde_json::Value> = r
                .pass_at
                .iter()
                .filter_map(|(k, e)| e.value().map(|v| (k.clone(), v.value.into())))
                .collect();
            serde_json::Value::Object(values).to_string()
        }),
        ("group_accuracy", |r| {
            number(r.group_accuracy.value().copied())
        }),
        ("macro_f1", |r| number(r.macro_f1.value().copied())),
        ("kappa_clinicians", |r| kappa(r, "clinicians")),
        ("kappa_grader", |r| kappa(r, "grader")),
        ("not_estimable", |r| reason(&r.top1)),
    ];
    table(columns, rows)
}

/// A column of a table: its header and how a row fills it. One list per table keeps the header
/// and the rows in step.
type Column<T> = (&'static str, fn(&T) -> String);

fn table<T>(columns: &[Column<T>], rows: &[T]) -> String {
    let mut out = line(
        &columns
            .iter()
            .map(|(name, _)| (*name).to_owned())
            .collect::<Vec<_>>(),
    );
    for row in rows {
        out.push_str(&line(
            &columns
                .iter()
                .map(|(_, cell)| cell(row))
                .collect::<Vec<_>>(),
        ));
    }
    out
}

/// One row per model or grader spec of `model_reliability` (header only without run records).
fn model_reliability_table(rows: &[crate::reliability::ModelReliability]) -> String {
    let columns: &[Column<crate::reliability::ModelReliability>] = &[
        ("name", |r| r.name.clone()),
        ("kind", |r| r.kind.clone()),
        ("items", |r| r.items.to_string()),
        ("requests", |r| r.requests.to_string()),
        ("prompt_tokens", |r| r.prompt_tokens.to_string()),
        ("completion_tokens", |r| r.completion_tokens.to_string()),
        ("mean_tokens_per_item", |r| {
            number(Some(r.mean_tokens_per_item))
        }),
        ("latency_ms_p50", |r| number(Some(r.latency_ms_p50))),
        ("latency_ms_p95", |r| number(Some(r.latency_ms_p95))),
        ("malformed_output_rate", |r| number(r.malformed_output_rate)),
        ("cost", |r| number(r.cost)),
    ];
    table(columns, rows)
}

/// The prediction-powered estimates, one row per `ppi` row of the JSON (task family and level
/// empty on a model's own rows); the clinicians-only and grader-only intervals flattened into
/// their own columns.
fn ppi_table(report: &Report) -> String {
    use crate::ppi::{PpiMean, PpiRow};
    // A figure or a count of an estimable row; empty where the row is not estimable.
    fn figure(row: &PpiRow, f: fn(&PpiMean) -> f64) -> String {
        number(row.result.value().map(f))
    }
    fn count(row: &PpiRow, n: fn(&PpiMean) -> usize) -> String {
        row.result
            .value()
            .map(|v| n(v).to_string())
            .unwrap_or_default()
    }
    let columns: &[Column<PpiRow>] = &[
        ("model", |r| r.model.clone()),
        ("task_family", |r| r.task_family.clone().unwrap_or_default()),
        ("level", |r| r.level.clone().unwrap_or_default()),
        ("target", |r| r.target.clone()),
        ("estimate", |r| figure(r, |v| v.estimate)),
        ("low", |r| figure(r, |v| v.low)),
        ("high", |r| figure(r, |v| v.high)),
        ("n_labelled", |r| count(r, |v| v.n_labelled)),
        ("n_unlabelled", |r| count(r, |v| v.n_unlabelled)),
        ("n_cases", |r| count(r, |v| v.n_cases)),
        ("lambda", |r| figure(r, |v| v.lambda)),
        ("clinicians_only", |r| {
            figure(r, |v| v.clinicians_only.estimate)
        }),
        ("clinicians_only_low", |r| {
            figure(r, |v| v.clinicians_only.low)
        }),
        ("clinicians_only_high", |r| {
            figure(r, |v| v.clinicians_only.high)
        }),
        ("grader_only", |r| figure(r, |v| v.grader_only.estimate)),
        ("grader_only_low", |r| figure(r, |v| v.grader_only.low)),
        ("grader_only_high", |r| figure(r, |v| v.grader_only.high)),
        ("effective_n", |r| figure(r, |v| v.effective_n)),
        ("not_estimable", |r| reason(&r.result)),
        ("method", |r| r.method.clone()),
    ];
    table(columns, &report.ppi)
}

/// One row for the pooled reads, then one per clinician.
fn intra_rater_table(report: &Report) -> String {
    let mut table = line(
        &[
            "rater",
            "n_pairs",
            "n_cases",
            "icc_a1",
            "icc_a1_ci_low",
            "icc_a1_ci_high",
            "icc_a1_bootstrap_low",
            "icc_a1_bootstrap_high",
            "quadratic_kappa",
            "quadratic_kappa_ci_low",
            "quadratic_kappa_ci_high",
            "quadratic_kappa_bootstrap_low",
            "quadratic_kappa_bootstrap_high",
            "linear_kappa",
            "mean_absolute_difference",
            "mean_absolute_difference_bootstrap_low",
            "mean_absolute_difference_bootstrap_high",
            "mean_difference",
            "not_estimable",
        ]
        .map(String::from),
    );
    let Some(section) = &report.intra_rater else {
        return table;
    };
    for entry in std::iter::once(&section.pooled).chain(&section.raters) {
        let t = entry.reliability.value();
        let icc = t.and_then(|t| t.icc.value());
        let quadratic = t.and_then(|t| t.cohen_kappa.quadratic.value());
        let percentile = |e: Option<&Estimate<crate::bootstrap::BootstrapInterval>>| {
            let b = e.and_then(Estimate::value);
            (
                number(b.map(|b| b.percentile_low)),
                number(b.map(|b| b.percentile_high)),
            )
        };
        let (icc_low, icc_high) = percentile(t.map(|t| &t.bootstrap.icc));
        let (kappa_low, kappa_high) = percentile(t.map(|t| &t.bootstrap.quadratic_kappa));
        let (mad_low, mad_high) = percentile(t.map(|t| &t.bootstrap.mean_absolute_difference));
        let mut reasons = vec![reason(&entry.reliability)];
        if let Some(t) = t {
            reasons.push(reason(&t.icc));
            reasons.push(reason(&t.cohen_kappa.quadratic));
        }
        reasons.retain(|r| !r.is_empty());
        table.push_str(&line(&[
            entry.rater.clone().unwrap_or_else(|| "pooled".into()),
            entry.n_pairs.to_string(),
            entry.n_cases.to_string(),
            number(icc.map(|v| v.value)),
            number(icc.map(|v| v.ci_low)),
            number(icc.map(|v| v.ci_high)),
            icc_low,
            icc_high,
            number(quadratic.map(|k| k.value)),
            number(quadratic.map(|k| k.ci_low)),
            number(quadratic.map(|k| k.ci_high)),
            kappa_low,
            kappa_high,
            number(t.and_then(|t| t.cohen_kappa.linear.value().map(|k| k.value))),
            number(t.map(|t| t.mean_absolute_difference)),
            mad_low,
            mad_high,
            number(t.map(|t| t.mean_difference)),
            reasons.join("; "),
        ]));
    }
    table
}

/// The missed lesions one by one, and their counts per model.
fn missed_findings_tables(report: &Report) -> (String, String) {
    let mut findings = line(
        &[
            "item",
            "case",
            "model",
            "lesion_id",
            "description",
            "location",
        ]
        .map(String::from),
    );
    let mut by_model = line(
        &[
            "model",
            "responses",
            "lesions",
            "missed",
            "responses_with_miss",
            "share_missed",
            "ci_low",
            "ci_high",
        ]
        .map(String::from),
    );
    let Some(section) = &report.missed_findings else {
        return (findings, by_model);
    };
    for f in &section.findings {
        findings.push_str(&line(&[
            f.item.clone(),
            f.case.clone(),
            f.model.clone(),
            f.lesion_id.clone(),
            f.description.clone(),
            f.location.clone(),
        ]));
    }
    for m in &section.by_model {
        let share = m.share_missed.as_ref();
        by_model.push_str(&line(&[
            m.model.clone(),
            m.responses.to_string(),
            m.lesions.to_string(),
            m.missed.to_string(),
            m.responses_with_miss.to_string(),
            number(share.map(|s| s.share)),
            number(share.map(|s| s.ci_low)),
            number(share.map(|s| s.ci_high)),
        ]));
    }
    (findings, by_model)
}

fn agreement_row(dimension: &str, column: &str, value: &str, s: &Section) -> String {
    let icc2 = s.human_human.icc.icc2.value();
    let grader = s.grader.as_ref().map(|g| &g.vs_human_mean);
    let p = grader.and_then(|g| g.pearson.value());
    let boot = grader.and_then(|g| g.bootstrap.pearson_r.value());
    let ba = grader.and_then(|g| g.bland_altman.value());
    let mut reasons: Vec<String> = Vec::new();
    if let Some(r) = s.human_human.icc.icc2.reason() {
        reasons.push(format!("human ICC2: {r}"));
    }
    if let Some(r) = grader.and_then(|g| g.pearson.reason()) {
        reasons.push(format!("pearson: {r}"));
    }
    line(&[
        dimension.to_string(),
        column.to_string(),
        value.to_string(),
        s.n_items.to_string(),
        s.n_cases.to_string(),
        number(icc2.map(|v| v.value)),
        number(icc2.map(|v| v.ci_low)),
        number(icc2.map(|v| v.ci_high)),
        number(s.human_human.krippendorff_alpha.interval.value().copied()),
        grader.map(|g| g.n.to_string()).unwrap_or_default(),
        number(p.map(|p| p.r)),
        number(p.map(|p| p.ci_low)),
        number(p.map(|p| p.ci_high)),
        number(p.map(|p| p.p)),
        number(boot.and_then(|b| b.bca_low)),
        number(boot.and_then(|b| b.bca_high)),
        number(grader.and_then(|g| g.spearman.value().map(|s| s.rho))),
        number(grader.and_then(|g| g.kendall_tau_b.value().map(|k| k.tau))),
        number(ba.map(|b| b.bias)),
        number(ba.map(|b| b.loa_low)),
        number(ba.map(|b| b.loa_high)),
        number(grader.and_then(|g| g.icc.icc2.value().map(|v| v.value))),
        reasons.join("; "),
    ])
}
