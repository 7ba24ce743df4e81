//! The report as one self-contained HTML page: inline CSS and SVG, no scripts, no remote content.

use crate::estimate::Estimate;
use crate::kappa::Categories;
use crate::report::{DimensionReport, GroupSection, Report, Section};
use std::fmt::Write;

const STYLE: &str = r#"
:root { --ink:#1f2a33; --muted:#5d6b76; --line:#d5dde3; --accent:#2f6f8f; --good:#2e7d4f; --warn:#a8641b; --bad:#a83232; --paper:#fbfcfd; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--paper); margin: 0; }
main { max-width: 1080px; margin: 0 auto; padding: 32px 40px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; font-weight: 600; }
h2 { font-size: 20px; margin: 40px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); font-weight: 600; }
h3 { font-size: 16px; margin: 24px 0 8px; font-weight: 600; }
p.sub { color: var(--muted); margin: 0 0 24px; }
.verdict { border-left: 6px solid var(--accent); background: #fff; padding: 16px 20px; margin: 16px 0 24px; box-shadow: 0 1px 2px rgba(0,0,0,.06); }
.verdict.pass { border-color: var(--good); } .verdict.partial { border-color: var(--warn); } .verdict.fail { border-color: var(--bad); } .verdict.not-estimable { border-color: var(--line); }
.verdict strong { font-size: 18px; display: block; margin-bottom: 6px; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 12px; margin: 12px 0 8px; }
.figure { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
.figure .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.figure .value { font-size: 22px; font-weight: 600; }
.figure .ci { color: var(--muted); font-size: 13px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; background: #fff; font-size: 13.5px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th:not(:first-child) { text-align: right; }
th.text { text-align: left; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.na { color: var(--muted); font-style: italic; }
.plots { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figcaption { color: var(--muted); font-size: 12.5px; padding: 4px 6px 0; }
svg text { font: 11px -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg text:not([fill]) { fill: var(--muted); }
.note { color: var(--muted); font-size: 13px; }
@media print {
  body { background: #fff; font-size: 11pt; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; } figure, table, .verdict, .figure { break-inside: avoid; }
  .plots { grid-template-columns: 1fr 1fr; }
}
"#;

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(crate) fn num(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}").replace('-', "−")
    } else {
        "—".into()
    }
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        num(p, 3)
    }
}

fn cell_na<T>(e: &Estimate<T>) -> String {
    format!(
        "<td class=\"na\" title=\"{}\">not estimable</td>",
        escape(e.reason().unwrap_or(""))
    )
}

fn estimate_cells<T>(e: &Estimate<T>, columns: usize, cells: impl Fn(&T) -> Vec<String>) -> String {
    match e.value() {
        Some(v) => cells(v)
            .into_iter()
            .map(|c| format!("<td class=\"num\">{c}</td>"))
            .collect(),
        None => {
            let mut s = cell_na(e);
            for _ in 1..columns {
                s.push_str("<td></td>");
            }
            s
        }
    }
}

/// The whole report as HTML.
pub fn to_html(report: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Calibration report</title><style>{STYLE}</style></head><body><main>"
    );
    let s = &report.summary;
    let _ = write!(
        h,
        "<h1>Calibration report</h1><p class=\"sub\">{} rated items in {} cases ({} unrated) · {} clinicians ({}) · grader: {} · dimensions: {}</p>",
        s.rated_items,
        s.rated_cases,
        s.unrated_items,
        s.human_raters.len(),
        escape(&s.human_raters.join(", ")),
        escape(s.grader.as_deref().unwrap_or("none (clinicians only)")),
        escape(&s.dimensions.join(", "))
    );
    if !s.excluded_raters.is_empty() {
        let _ = write!(
            h,
            "<p class=\"sub\">Left out by the analyst: {}</p>",
            escape(&s.excluded_raters.join(", "))
        );
    }
    let _ = write!(
        h,
        "<p class=\"sub\">Data: {}</p>",
        match &report.audit_head {
            Some(head) => format!(
                "audit head {} (check with <code>neurorater audit verify --expect-head</code>)",
                escape(head)
            ),
            None => "ratings file, no audit log".to_owned(),
        }
    );
    verdict(&mut h, report);
    if let Some(versions) = &report.rubric_versions {
        rubric_versions(&mut h, versions);
    }
    if let Some(coverage) = &report.dimension_coverage {
        dimension_coverage(&mut h, coverage);
    }
    for d in &report.dimensions {
        dimension(&mut h, d, report);
    }
    drift(&mut h, report);
    errors(&mut h, report);
    pass_at_k(&mut h, report);
    if let Some(rows) = &report.answer_accuracy {
        answer_accuracy(&mut h, rows, &report.options.pass_at);
    }
    ppi(&mut h, report);
    intra_rater(&mut h, report);
    missed_findings(&mut h, report);
    if let Some(rows) = &report.model_reliability {
        model_reliability(&mut h, rows);
    }
    if let Some(section) = &report.automatic_metrics {
        h.push_str(&crate::automatic_metrics_render::html_section(section));
    }
    methods(&mut h, report);
    provenance(&mut h, &report.manifest);
    h.push_str("</main></body></html>\n");
    h
}

/// The manifest, last: what the report was built from, to tell two reports' inputs apart.
fn provenance(h: &mut String, manifest: &crate::manifest::Manifest) {
    let or_unknown = |v: Option<&str>| v.map_or("—".to_owned(), escape);
    let _ =
        write!(
        h,
        "<section id=\"provenance\"><h2>Provenance</h2><p class=\"note\">NeuroRater {} · rubric \
         version {} · taxonomy SHA-256 <code>{}</code> · text-metric model {} · audit head {}. \
         Two reports with the same manifest were built from the same inputs.</p>",
        escape(&manifest.neurorater_version),
        manifest
            .rubric_version
            .map_or("—".to_owned(), |v| v.to_string()),
        or_unknown(manifest.taxonomy_sha256.as_deref()),
        manifest.text_metric_model.as_ref().map_or("none".to_owned(), |m| format!(
            "{} <code>{}</code>",
            escape(&m.id),
            or_unknown(m.sha256.as_deref())
        )),
        or_unknown(manifest.audit_head.as_deref()),
    );
    if !manifest.specs.is_empty() {
        h.push_str("<table><tr><th class=\"text\">Kind</th><th class=\"text\">Name</th><th class=\"text\">Spec SHA-256</th><th class=\"text\">Model</th><th class=\"text\">Endpoint host</th><th>Seed</th><th>Temperature</th></tr>");
        for spec in &manifest.specs {
            let _ = write!(
                h,
                "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\"><code>{}</code></td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td></tr>",
                escape(&spec.kind),
                escape(&spec.name),
                or_unknown(spec.sha256.as_deref()),
                or_unknown(spec.model.as_deref()),
                or_unknown(spec.endpoint_host.as_deref()),
                or_unknown(spec.seed.as_deref()),
                or_unknown(spec.temperature.as_deref()),
            );
        }
        h.push_str("</table><p class=\"note\">—: imported results, whose spec NeuroRater does not know.</p>");
    }
    let options = serde_json::to_string(&manifest.options).unwrap_or_default();
    let _ = write!(
        h,
        "<p class=\"note\">Options: <code>{}</code></p></section>",
        escape(&options)
    );
}

const SCATTER_CAPTION: &str =
    "Grader vs clinicians' mean per item. Dashed: identity; solid: least-squares line.";
const BLAND_ALTMAN_CAPTION: &str = "Bland–Altman: difference (grader − clinicians) against their mean, with bias and 95 % limits of agreement.";
const CONFUSION_CAPTION: &str = "Confusion: grader score (rows) against the clinicians' consensus (mean rounded to the scale), counts.";

fn forest_caption(report: &Report) -> String {
    format!(
        "Pearson r (95 % CI) per subgroup; the dashed line is the bar r = {}.",
        num(report.options.bar_pearson_r, 2)
    )
}

/// Which rubric version the ratings were made under; shown only once the rubric has changed
/// after ratings were made (one version needs no table).
fn rubric_versions(h: &mut String, versions: &[crate::coverage::RubricVersionCount]) {
    if versions.len() < 2 {
        return;
    }
    let current = versions.iter().find(|v| v.current).map_or(0, |v| v.version);
    let _ = write!(
        h,
        "<h2>Rubric versions</h2><p class=\"note\">Submitted first reads per version of the \
         rubric they were saved under (version {current} is current). Each dimension's statistics \
         read every rating whose version defines it as version {current} does (the same levels); \
         a score given on other levels is left out, as listed: a score means what its rubric \
         said when it was given.</p><table><tr><th>Version</th><th>Ratings</th>\
         <th>Left out</th></tr>"
    );
    for v in versions {
        let left_out = if v.left_out.is_empty() {
            "nothing".to_owned()
        } else {
            v.left_out
                .iter()
                .map(|l| {
                    format!(
                        "{}: {} score{} ({})",
                        escape(&l.dimension),
                        l.scores,
                        if l.scores == 1 { "" } else { "s" },
                        escape(&l.reason)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = write!(
            h,
            "<tr><td class=\"num\">{}{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            v.version,
            if v.current { " (current)" } else { "" },
            v.ratings,
            left_out
        );
    }
    h.push_str("</table>");
}

/// What each dimension's statistics rest on: scores only; "not applicable", ratings of other
/// task families and empty cells are counted, never averaged in.
fn dimension_coverage(h: &mut String, coverage: &[crate::coverage::DimensionCoverage]) {
    h.push_str(
        "<h2>What each dimension holds</h2><p class=\"note\">Submitted first reads. Agreement \
         uses the scores alone.</p><table><tr><th>Dimension</th><th>Scored</th>\
         <th>Not applicable</th><th>Other task family</th><th>Empty</th>\
         <th>Other rubric definition</th></tr>",
    );
    for c in coverage {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&c.dimension),
            c.rated,
            c.not_applicable,
            c.not_applied,
            c.missing,
            c.other_definition
        );
    }
    h.push_str("</table>");
}

/// One dimension's plots, each a standalone `<svg>` element (no scripts, no styles beyond
/// presentation attributes, labels escaped) and its caption as plain text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DimensionPlots {
    pub dimension: String,
    pub scatter: String,
    pub bland_altman: String,
    pub confusion: String,
    pub forest: String,
}

/// A plot with its caption (plain text).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Plot {
    pub svg: String,
    pub caption: String,
}

/// The report's plots, the very ones [`to_html`] draws, for a caller that lays out its own page
/// (the desktop app's calibration view).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Plots {
    /// Dimensions with a grader; a clinicians-only report has none.
    pub dimensions: Vec<DimensionPlots>,
    pub captions: PlotCaptions,
    /// Error shares by bucket and by category, when clinicians labelled errors.
    pub error_distribution: Vec<Plot>,
    /// ICC(A,1) per clinician and pooled, when clinicians read responses twice.
    pub intra_rater: Option<Plot>,
    /// Share of ground-truth lesions missed per model, when responses were checked.
    pub missed_findings: Option<Plot>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlotCaptions {
    pub scatter: String,
    pub bland_altman: String,
    pub confusion: String,
    pub forest: String,
}

/// The plots of `report`.
pub fn plots(report: &Report) -> Plots {
    Plots {
        dimensions: report
            .dimensions
            .iter()
            .filter(|d| d.overall.grader.is_some())
            .map(|d| dimension_plots(d, report))
            .collect(),
        captions: PlotCaptions {
            scatter: SCATTER_CAPTION.into(),
            bland_altman: BLAND_ALTMAN_CAPTION.into(),
            confusion: CONFUSION_CAPTION.into(),
            forest: forest_caption(report),
        },
        error_distribution: report
            .error_distribution
            .iter()
            .flat_map(|dist| {
                [("bucket", &dist.by_bucket), ("category", &dist.by_category)].map(
                    |(by, shares)| Plot {
                        svg: bars_svg(shares),
                        caption: error_share_caption(by),
                    },
                )
            })
            .collect(),
        intra_rater: intra_rater_plot(report),
        missed_findings: missed_findings_plot(report),
    }
}

/// Koo & Li (2016): ICC below 0.5 poor, 0.5–0.75 moderate, 0.75–0.9 good, above 0.9 excellent.
const GOOD_RELIABILITY_ICC: f64 = 0.75;

fn intra_rater_plot(report: &Report) -> Option<Plot> {
    let section = report.intra_rater.as_ref()?;
    let rows: Vec<ForestRow> = std::iter::once(&section.pooled)
        .chain(&section.raters)
        .map(|e| {
            let icc = e.reliability.value().and_then(|t| t.icc.value());
            (
                e.rater.clone().unwrap_or_else(|| "pooled".into()),
                icc.map(|v| (v.value, v.ci_low, v.ci_high)),
                e.n_pairs,
            )
        })
        .collect();
    Some(Plot {
        svg: forest_svg(&rows, GOOD_RELIABILITY_ICC),
        caption: format!(
            "Test-retest ICC(A,1) (95 % F interval) per clinician and pooled, n = repeat pairs; the dashed line is {}, \"good\" reliability after Koo & Li (2016), to be read only on rows of {} pairs or more (fewer are shown, not interpreted).",
            num(GOOD_RELIABILITY_ICC, 2),
            section.min_interpreted_pairs
        ),
    })
}

fn missed_findings_plot(report: &Report) -> Option<Plot> {
    let section = report.missed_findings.as_ref()?;
    let shares: Vec<crate::report::NamedShare> = section
        .by_model
        .iter()
        .filter_map(|m| {
            Some(crate::report::NamedShare {
                name: m.model.clone(),
                share: m.share_missed.clone()?,
            })
        })
        .collect();
    (!shares.is_empty()).then(|| Plot {
        svg: bars_svg(&shares),
        caption: "Share of ground-truth lesions missed per model (of response × lesion pairs), with 95 % Wilson intervals.".into(),
    })
}

fn error_share_caption(by: &str) -> String {
    format!("Share of errors by {by}, with 95 % Wilson intervals.")
}

fn dimension_plots(d: &DimensionReport, report: &Report) -> DimensionPlots {
    let empty = || empty_svg("no grader scores");
    let Some(g) = &d.overall.grader else {
        return DimensionPlots {
            dimension: d.dimension.clone(),
            scatter: empty(),
            bland_altman: empty(),
            confusion: empty(),
            forest: empty(),
        };
    };
    let m = &g.vs_human_mean;
    let forest: Vec<ForestRow> = std::iter::once(("all items".to_string(), &d.overall))
        .chain(
            d.groups
                .iter()
                .map(|g| (format!("{} = {}", g.column, g.value), &g.section)),
        )
        .map(|(label, s)| {
            let p = s
                .grader
                .as_ref()
                .and_then(|g| g.vs_human_mean.pearson.value());
            (label, p.map(|p| (p.r, p.ci_low, p.ci_high)), s.n_items)
        })
        .collect();
    DimensionPlots {
        dimension: d.dimension.clone(),
        scatter: scatter_svg(&m.pairs),
        bland_altman: bland_altman_svg(&m.pairs, m.bland_altman.value()),
        confusion: heatmap_svg(&m.pairs, &categories_of(d, &m.pairs)),
        forest: forest_svg(&forest, report.options.bar_pearson_r),
    }
}

fn verdict(h: &mut String, report: &Report) {
    let Some(v) = &report.verdict else {
        h.push_str("<div class=\"verdict\"><strong>Clinicians only</strong>No grader was named, so this report shows how clinicians agree with each other.</div>");
        return;
    };
    let (class, headline) = match v.standing {
        crate::report::Standing::MeetsBar => ("pass", "The grader meets the bar"),
        crate::report::Standing::EstimateMeetsBar => (
            "partial",
            "The grader reaches the bar, but not with confidence",
        ),
        crate::report::Standing::BelowBar => ("fail", "The grader does not meet the bar"),
        crate::report::Standing::NotEstimable => ("not-estimable", "Not estimable"),
    };
    let _ = write!(
        h,
        "<div class=\"verdict {class}\"><strong>{headline}</strong>{}</div>",
        escape(&v.summary)
    );
    h.push_str("<div class=\"figures\">");
    if let Some(p) = v.pearson.value() {
        let interval = match (v.low, v.high) {
            (Some(low), Some(high)) => format!("95 % {}–{}", num(low, 2), num(high, 2)),
            _ => "no interval".to_string(),
        };
        figure(
            h,
            "Pearson r vs clinicians' mean",
            &num(p.r, 2),
            &format!(
                "{interval} · {} · {} items, {} cases",
                v.method, v.n_items, v.n_cases
            ),
        );
    }
    match &v.ceiling {
        Estimate::Value(c) => {
            figure(
                h,
                "Like for like: held-out clinician (ceiling)",
                &num(c.value, 2),
                &format!(
                    "95 % {}–{} · {} items, {} cases · the grader on the same items {} ({}–{})",
                    num(c.low, 2),
                    num(c.high, 2),
                    c.n_items,
                    c.n_cases,
                    num(c.grader.estimate, 2),
                    num(c.grader.low, 2),
                    num(c.grader.high, 2)
                ),
            );
            figure(
                h,
                "Grader − clinician (like for like)",
                &num(c.difference.estimate, 2),
                &format!(
                    "95 % {}–{} · {} · margin {}: {}",
                    num(c.difference.low, 2),
                    num(c.difference.high, 2),
                    c.difference.method,
                    num(c.margin, 2),
                    match (c.equivalent, c.non_inferior) {
                        (true, _) => "equivalent",
                        (false, true) => "non-inferior",
                        (false, false) => "non-inferiority not shown",
                    }
                ),
            );
        }
        Estimate::NotEstimable { not_estimable, .. } => figure(
            h,
            "Like for like: held-out clinician (ceiling)",
            "—",
            not_estimable,
        ),
    }
    if let Some(b) = v.bias {
        figure(
            h,
            "Bias (grader − clinicians)",
            &num(b, 2),
            "points on the scale",
        );
    }
    if let Some(passed) = v.alt_test_passed {
        figure(
            h,
            "Alternative annotator test",
            if passed { "passed" } else { "not passed" },
            &format!("ε = {}", num(report.options.alt_test_epsilon, 2)),
        );
    }
    h.push_str("</div>");
}

fn figure(h: &mut String, label: &str, value: &str, ci: &str) {
    let _ = write!(
        h,
        "<div class=\"figure\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"ci\">{}</div></div>",
        escape(label),
        escape(value),
        escape(ci)
    );
}

fn categories_of(d: &DimensionReport, pairs: &[[f64; 2]]) -> Categories {
    d.scales
        .categories()
        .unwrap_or_else(|| Categories::from_values(pairs.iter().map(|p| p[0])))
}

/// Each rater's scale when any is declared, and why values are not compared across them.
fn scales_note(h: &mut String, d: &DimensionReport) {
    let s = &d.scales;
    if s.raters.iter().all(|r| r.scale.is_none()) {
        return;
    }
    let raters: Vec<String> = s
        .raters
        .iter()
        .map(|r| {
            let scale = r
                .scale
                .map_or_else(|| "not declared".to_owned(), |s| s.describe());
            match (r.mapped_linearly, s.clinicians) {
                (true, Some(to)) => format!(
                    "{} {} (mapped linearly onto {})",
                    escape(&r.rater),
                    escape(&scale),
                    escape(&to.describe())
                ),
                _ => format!("{} {}", escape(&r.rater), escape(&scale)),
            }
        })
        .collect();
    let _ = write!(
        h,
        "<p class=\"note\" id=\"scales-{}\">Scales: {}.",
        escape(&d.dimension),
        raters.join("; ")
    );
    for reason in s.clinicians_absolute_refused.iter().chain(
        s.grader_absolute_refused
            .iter()
            .filter(|g| Some(*g) != s.clinicians_absolute_refused.as_ref()),
    ) {
        let _ = write!(
            h,
            " <strong>Absolute agreement not computed:</strong> {}.",
            escape(reason)
        );
    }
    h.push_str("</p>");
}

fn dimension(h: &mut String, d: &DimensionReport, report: &Report) {
    let _ = write!(h, "<h2>Dimension: {}</h2>", escape(&d.dimension));
    scales_note(h, d);
    let o = &d.overall;
    let _ = write!(
        h,
        "<h3>1 · How well do clinicians agree with each other?</h3>"
    );
    human_table(h, o);
    let Some(g) = &o.grader else {
        return;
    };
    let m = &g.vs_human_mean;
    h.push_str("<h3>2 · How well does the grader agree with the clinicians?</h3>");
    h.push_str("<table><tr><th>Statistic (grader vs clinicians' mean)</th><th>value</th><th>95 % CI</th><th>p</th><th>n</th></tr>");
    row_estimate(h, "Pearson r (Fisher z)", &m.pearson, |p| {
        [
            num(p.r, 3),
            format!("{} to {}", num(p.ci_low, 3), num(p.ci_high, 3)),
            p_value(p.p),
            p.n.to_string(),
        ]
    });
    row_estimate(h, "Spearman ρ (Bonett–Wright)", &m.spearman, |p| {
        [
            num(p.rho, 3),
            format!("{} to {}", num(p.ci_low, 3), num(p.ci_high, 3)),
            p_value(p.p),
            p.n.to_string(),
        ]
    });
    row_estimate(h, "Kendall τ-b", &m.kendall_tau_b, |p| {
        [num(p.tau, 3), String::new(), p_value(p.p), p.n.to_string()]
    });
    row_estimate(h, "Bland–Altman bias", &m.bland_altman, |b| {
        [
            num(b.bias, 3),
            format!("{} to {}", num(b.bias_ci_low, 3), num(b.bias_ci_high, 3)),
            String::new(),
            b.n.to_string(),
        ]
    });
    row_estimate(h, "Limits of agreement", &m.bland_altman, |b| {
        [
            format!("{} to {}", num(b.loa_low, 2), num(b.loa_high, 2)),
            format!(
                "lower {} to {}; upper {} to {}",
                num(b.loa_low_ci_low, 2),
                num(b.loa_low_ci_high, 2),
                num(b.loa_high_ci_low, 2),
                num(b.loa_high_ci_high, 2)
            ),
            String::new(),
            b.n.to_string(),
        ]
    });
    row_estimate(
        h,
        "Calibration slope b (grader = a + b · mean; 1 if calibrated)",
        &m.calibration_line,
        |l| {
            [
                num(l.slope, 3),
                format!("{} to {}", num(l.slope_ci_low, 3), num(l.slope_ci_high, 3)),
                String::new(),
                l.n.to_string(),
            ]
        },
    );
    row_estimate(
        h,
        "Calibration intercept a (0 if calibrated)",
        &m.calibration_line,
        |l| {
            [
                num(l.intercept, 3),
                format!(
                    "{} to {}",
                    num(l.intercept_ci_low, 3),
                    num(l.intercept_ci_high, 3)
                ),
                String::new(),
                l.n.to_string(),
            ]
        },
    );
    row_estimate(
        h,
        "Proportional bias: slope of difference on mean",
        &m.proportional_bias,
        |b| {
            [
                num(b.slope, 3),
                String::new(),
                p_value(b.p),
                b.n.to_string(),
            ]
        },
    );
    row_estimate(
        h,
        "ICC2 with the grader as one more rater",
        &m.icc.icc2,
        |v| {
            [
                num(v.value, 3),
                format!("{} to {}", num(v.ci_low, 3), num(v.ci_high, 3)),
                String::new(),
                m.icc.n.to_string(),
            ]
        },
    );
    for (name, k) in [
        (
            "Cohen κ vs consensus, unweighted",
            &m.cohen_kappa.unweighted,
        ),
        ("Cohen κ, linear weights", &m.cohen_kappa.linear),
        ("Cohen κ, quadratic weights", &m.cohen_kappa.quadratic),
    ] {
        row_estimate(h, name, k, |v| {
            [
                num(v.value, 3),
                format!("{} to {}", num(v.ci_low, 3), num(v.ci_high, 3)),
                String::new(),
                m.cohen_kappa.n.to_string(),
            ]
        });
    }
    h.push_str("</table>");

    let plots = dimension_plots(d, report);
    h.push_str("<div class=\"plots\">");
    for (svg, caption) in [
        (&plots.scatter, SCATTER_CAPTION.to_string()),
        (&plots.bland_altman, BLAND_ALTMAN_CAPTION.to_string()),
        (&plots.confusion, CONFUSION_CAPTION.to_string()),
        (&plots.forest, forest_caption(report)),
    ] {
        let _ = write!(
            h,
            "<figure>{svg}<figcaption>{caption}</figcaption></figure>"
        );
    }
    h.push_str("</div>");

    h.push_str("<h3>3 · Is the grader as good as one more clinician?</h3>");
    h.push_str("<table><tr><th>Held-out clinician</th><th>grader vs rest: r</th><th>clinician vs rest: r</th><th>grader vs rest: mean |Δ|</th><th>clinician vs rest: mean |Δ|</th><th>n</th></tr>");
    for l in &g.leave_one_rater_out {
        let r = |e: &Estimate<crate::correlation::Pearson>| {
            e.value().map_or("—".into(), |p| num(p.r, 3))
        };
        let mad = |e: &Estimate<f64>| e.value().map_or("—".into(), |v| num(*v, 3));
        let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&l.held_out), r(&l.grader_vs_rest.pearson), r(&l.held_out_vs_rest.pearson), mad(&l.grader_vs_rest.mean_absolute_difference), mad(&l.held_out_vs_rest.mean_absolute_difference), l.grader_vs_rest.n);
    }
    h.push_str("</table><table><tr><th>Degradation</th><th>grader–human</th><th>human–human</th><th>difference</th></tr>");
    for row in &g.degradation {
        let v = |e: &Estimate<f64>, i: &Option<crate::report::CaseInterval>| {
            let value = e.value().map_or("—".into(), |v| num(*v, 3));
            match i {
                Some(i) => format!("{value} ({}–{})", num(i.low, 3), num(i.high, 3)),
                None => value,
            }
        };
        let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>", escape(&row.statistic.replace('_', " ")), v(&row.grader_human, &row.grader_human_interval), v(&row.human_human, &row.human_human_interval), v(&row.difference, &row.difference_interval));
    }
    h.push_str("</table><p class=\"note\">Intervals: 95 %, resampling cases (BCa where defined, else percentile); pairwise κ is not resampled.</p>");
    match g.alt_test.value() {
        Some(a) => {
            let _ = write!(h, "<p>Alternative annotator test (Calderon et al. 2025), ε = {}, Benjamini–Yekutieli q = {}: the grader wins against {} of {} clinicians (winning rate {}); average advantage probability {}. <strong>{}</strong>{}</p>",
                num(a.epsilon, 2), num(a.q, 2), a.annotators.iter().filter(|x| x.grader_wins).count(), a.annotators.len(), num(a.winning_rate, 2), num(a.average_advantage_probability, 2),
                if a.passed { "Passed." } else { "Not passed." },
                if a.fewer_annotators_than_recommended || a.annotators.iter().any(|x| x.below_recommended_n) { " <span class=\"note\">(Fewer clinicians or items than the paper recommends: at least 3 clinicians, 30 items each.)</span>" } else { "" });
            if !a.left_out.is_empty() {
                let names: Vec<String> = a
                    .left_out
                    .iter()
                    .map(|l| format!("{} ({} items)", escape(&l.rater), l.n))
                    .collect();
                let _ = write!(h, "<p class=\"note\">Left out for fewer than {} comparable items, as the authors require: {}.</p>", a.min_items, names.join(", "));
            }
            let _ = write!(h, "<p class=\"note\">Benjamini–Yekutieli over {} p-values: every clinician tested in every dimension and subgroup of this report.</p>", a.fdr_family);
        }
        None => {
            let _ = write!(
                h,
                "<p class=\"na\">Alternative annotator test not estimable: {}</p>",
                escape(g.alt_test.reason().unwrap_or(""))
            );
        }
    }

    h.push_str("<h3>4 · Where does it fail?</h3><p>A subgroup is better or worse than the rest only when the case-bootstrap interval of its r minus the other items' r excludes 0.</p><table><tr><th>Subgroup</th><th>n items</th><th>r</th><th>95 % CI</th><th>bias</th><th>clinicians' ICC2</th><th>r − rest (95 % CI)</th></tr>");
    subgroup_row(h, "all items", o, None);
    for g in &d.groups {
        subgroup_row(
            h,
            &format!("{} = {}", g.column, g.value),
            &g.section,
            Some(g),
        );
    }
    h.push_str("</table><table><tr><th>Grader vs clinician</th><th>n</th><th>r</th><th>bias</th><th>κ quadratic</th></tr>");
    for r in &g.vs_each_rater {
        let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>", escape(&r.rater), r.n,
            r.pearson.value().map_or("—".into(), |p| num(p.r, 3)), r.bland_altman.value().map_or("—".into(), |b| num(b.bias, 2)), r.cohen_kappa.quadratic.value().map_or("—".into(), |k| num(k.value, 3)));
    }
    h.push_str("</table>");

    h.push_str("<h3>5 · How sure are we?</h3>");
    if let Some(p) = &m.precision {
        let _ = write!(
            h,
            "<p>With {} items, r = {} has a 95 % Fisher interval {}–{} (width {}). {}</p>",
            p.n,
            num(p.r, 2),
            num(p.ci_low, 2),
            num(p.ci_high, 2),
            num(p.ci_width, 2),
            match (p.n_for_power, p.cases_for_power) {
                (Some(items), Some(cases)) => format!(
                    "For an {}&nbsp;% chance that a new study's lower bound reaches {} if r is truly {}, it needs about <strong>{cases} cases</strong> ({} items per case as here: {items} independent items times a design effect of {} from the case bootstrap). At {} items the lower bound reaches it only if r comes out exactly as observed, a chance of about one half.",
                    num(100.0 * p.power, 0),
                    num(p.target_lower_bound, 2),
                    num(p.r, 2),
                    num(p.items_per_case.unwrap_or(1.0), 1),
                    num(p.design_effect.unwrap_or(1.0), 2),
                    p.n_needed.map_or("—".into(), |n| n.to_string()),
                ),
                (Some(items), None) => format!(
                    "For an {}&nbsp;% chance that a new study's lower bound reaches {} if r is truly {}, it needs about {items} independent items (more when items share a case).",
                    num(100.0 * p.power, 0),
                    num(p.target_lower_bound, 2),
                    num(p.r, 2),
                ),
                _ => format!(
                    "At this r no number of items brings the lower bound to {}.",
                    num(p.target_lower_bound, 2)
                ),
            }
        );
    }
    h.push_str("<table><tr><th>Cluster bootstrap (cases resampled)</th><th>estimate</th><th>percentile 95 %</th><th>BCa 95 %</th><th>resamples</th><th>cases</th></tr>");
    for (name, b) in [
        ("Pearson r", &m.bootstrap.pearson_r),
        ("Bias", &m.bootstrap.bias),
        ("ICC2 (grader + clinicians)", &m.bootstrap.icc2),
    ] {
        let _ = write!(h, "<tr><td>{name}</td>");
        h.push_str(&estimate_cells(b, 5, |b| {
            vec![
                num(b.estimate, 3),
                format!(
                    "{} to {}",
                    num(b.percentile_low, 3),
                    num(b.percentile_high, 3)
                ),
                match (b.bca_low, b.bca_high) {
                    (Some(l), Some(u)) => format!("{} to {}", num(l, 3), num(u, 3)),
                    _ => "—".into(),
                },
                b.resamples.to_string(),
                b.clusters.to_string(),
            ]
        }));
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    h.push_str("<table><tr><th>Delete-one-case jackknife on Fisher's z (the verdict's interval)</th><th>estimate</th><th>95 %</th><th>SE of z</th><th>t df</th><th>cases</th></tr><tr><td>Pearson r</td>");
    h.push_str(&estimate_cells(&m.pearson_case_jackknife, 5, |j| {
        vec![
            num(j.estimate, 3),
            format!("{} to {}", num(j.low, 3), num(j.high, 3)),
            num(j.standard_error_z, 4),
            j.degrees_of_freedom.to_string(),
            j.cases.to_string(),
        ]
    }));
    h.push_str("</tr></table>");
}

fn human_table(h: &mut String, s: &Section) {
    let hh = &s.human_human;
    let _ = write!(h, "<p>{} clinicians; ICC and Fleiss κ use {} ({} items dropped); Krippendorff's α uses all {} items with two or more scores.</p>", hh.raters.len(), escape(&hh.panel.note), hh.icc.items_dropped, hh.krippendorff_alpha.n);
    h.push_str("<table><tr><th>Statistic</th><th>value</th><th>95 % CI</th></tr>");
    for (name, e) in [
        ("ICC1", &hh.icc.icc1),
        ("ICC2", &hh.icc.icc2),
        ("ICC3", &hh.icc.icc3),
        ("ICC1k", &hh.icc.icc1k),
        ("ICC2k", &hh.icc.icc2k),
        ("ICC3k", &hh.icc.icc3k),
    ] {
        let label = e
            .value()
            .map_or(name.to_string(), |v| format!("{name} — {}", v.description));
        let _ = write!(h, "<tr><td>{}</td>", escape(&label));
        h.push_str(&estimate_cells(e, 2, |v| {
            vec![
                num(v.value, 3),
                format!("{} to {}", num(v.ci_low, 3), num(v.ci_high, 3)),
            ]
        }));
        h.push_str("</tr>");
    }
    for (name, e) in [
        ("Krippendorff α, nominal", &hh.krippendorff_alpha.nominal),
        ("Krippendorff α, ordinal", &hh.krippendorff_alpha.ordinal),
        ("Krippendorff α, interval", &hh.krippendorff_alpha.interval),
    ] {
        let _ = write!(h, "<tr><td>{name}</td>");
        h.push_str(&estimate_cells(e, 2, |v| vec![num(*v, 3), String::new()]));
        h.push_str("</tr>");
    }
    h.push_str("<tr><td>Fleiss κ</td>");
    h.push_str(&estimate_cells(&hh.fleiss_kappa, 2, |v| {
        vec![num(v.value, 3), String::new()]
    }));
    h.push_str("</tr></table>");
    variance_table(h, &hh.variance_components);
}

/// Where the clinicians' score variance lies, each component with its profile interval.
fn variance_table(h: &mut String, e: &Estimate<crate::variance::VarianceComponents>) {
    let Some(v) = e.value() else {
        let _ = write!(h, "<p>Variance components: {}</p>", cell_na(e));
        return;
    };
    let _ = write!(h, "<p>Variance components of the clinicians' scores ({}; {} scores on {} items, {} cases, {} clinicians): {}.</p>",
        escape(&v.design), v.n_scores, v.n_items, v.n_cases, v.n_raters, escape(&v.estimator));
    h.push_str("<table><tr><th class=\"text\">Component</th><th>variance</th><th>95 % CI</th><th>share</th></tr>");
    let components: Vec<(&str, f64)> = [
        ("case", v.case),
        ("item", Some(v.item)),
        ("rater", Some(v.rater)),
        ("case_by_rater", v.case_by_rater),
        ("residual", Some(v.residual)),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value?)))
    .collect();
    let total: f64 = components.iter().map(|(_, value)| value).sum();
    for (name, value) in components {
        let interval = v
            .intervals
            .iter()
            .find(|i| i.component == name)
            .map_or("—".to_string(), |i| {
                format!("{} to {}", num(i.low, 3), num(i.high, 3))
            });
        let _ = write!(h, "<tr><td class=\"text\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} %</td></tr>",
            escape(&name.replace("_by_", " × ")), num(value, 3), interval, num(100.0 * value / total, 0));
    }
    h.push_str("</table>");
}

fn row_estimate<T>(h: &mut String, name: &str, e: &Estimate<T>, cells: impl Fn(&T) -> [String; 4]) {
    let _ = write!(h, "<tr><td>{}</td>", escape(name));
    h.push_str(&estimate_cells(e, 4, |v| cells(v).to_vec()));
    h.push_str("</tr>");
}

fn subgroup_row(h: &mut String, label: &str, s: &Section, group: Option<&GroupSection>) {
    let m = s.grader.as_ref().map(|g| &g.vs_human_mean);
    let p = m.and_then(|m| m.pearson.value());
    let vs_rest = group.map_or(String::new(), |g| match &g.r_vs_rest {
        Some(d) => format!(
            "{} ({} to {}): {}",
            num(d.estimate, 2),
            num(d.low, 2),
            num(d.high, 2),
            g.compared_with_rest
        ),
        None => g.compared_with_rest.clone(),
    });
    let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        escape(label), s.n_items,
        p.map_or("—".into(), |p| num(p.r, 3)),
        p.map_or("—".into(), |p| format!("{} to {}", num(p.ci_low, 2), num(p.ci_high, 2))),
        m.and_then(|m| m.bland_altman.value()).map_or("—".into(), |b| num(b.bias, 2)),
        s.human_human.icc.icc2.value().map_or("—".into(), |v| num(v.value, 3)), escape(&vs_rest));
}

/// A plot frame mapping data ranges onto a fixed SVG box.
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    fn new(x: (f64, f64), y: (f64, f64)) -> Frame {
        let pad = |(lo, hi): (f64, f64)| {
            let span = if hi > lo { hi - lo } else { 1.0 };
            (lo - span * 0.05, hi + span * 0.05)
        };
        Frame {
            width: 480.0,
            height: 340.0,
            left: 48.0,
            bottom: 36.0,
            x: pad(x),
            y: pad(y),
        }
    }
    fn px(&self, v: f64) -> f64 {
        self.left + (v - self.x.0) / (self.x.1 - self.x.0) * (self.width - self.left - 12.0)
    }
    fn py(&self, v: f64) -> f64 {
        12.0 + (self.y.1 - v) / (self.y.1 - self.y.0) * (self.height - self.bottom - 12.0)
    }
    fn open(&self, x_label: &str, y_label: &str) -> String {
        let mut s = format!("<svg viewBox=\"0 0 {} {}\" width=\"100%\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">", self.width, self.height);
        let (x0, x1, y0, y1) = (
            self.left,
            self.width - 12.0,
            12.0,
            self.height - self.bottom,
        );
        let _ = write!(s, "<rect x=\"{x0}\" y=\"{y0}\" width=\"{}\" height=\"{}\" fill=\"#fff\" stroke=\"#d5dde3\"/>", x1 - x0, y1 - y0);
        for i in 0..=4 {
            let fx = self.x.0 + (self.x.1 - self.x.0) * f64::from(i) / 4.0;
            let fy = self.y.0 + (self.y.1 - self.y.0) * f64::from(i) / 4.0;
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                self.px(fx),
                y1 + 14.0,
                num(fx, 1)
            );
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x0 - 4.0,
                self.py(fy) + 4.0,
                num(fy, 1)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            (x0 + x1) / 2.0,
            self.height - 4.0,
            escape(x_label)
        );
        let _ = write!(s, "<text x=\"12\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">{}</text>", (y0 + y1) / 2.0, (y0 + y1) / 2.0, escape(y_label));
        s
    }
    fn line(&self, (xa, ya): (f64, f64), (xb, yb): (f64, f64), style: &str) -> String {
        format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" {style}/>",
            self.px(xa),
            self.py(ya),
            self.px(xb),
            self.py(yb)
        )
    }
}

/// Plots show at most this many points, picked evenly, so a 10,000-item page stays light.
const MAX_POINTS: usize = 3000;

fn thinned(pairs: &[[f64; 2]]) -> impl Iterator<Item = &[f64; 2]> {
    let stride = pairs.len().div_ceil(MAX_POINTS).max(1);
    pairs.iter().step_by(stride)
}

fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

fn empty_svg(message: &str) -> String {
    format!("<svg viewBox=\"0 0 480 120\" width=\"100%\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"240\" y=\"60\" text-anchor=\"middle\">{}</text></svg>", escape(message))
}

fn scatter_svg(pairs: &[[f64; 2]]) -> String {
    let Some(r) = range(pairs.iter().flat_map(|p| [p[0], p[1]])) else {
        return empty_svg("no paired items");
    };
    let f = Frame::new(r, r);
    let mut s = f.open("clinicians' mean", "grader");
    s.push_str(&f.line(
        (r.0, r.0),
        (r.1, r.1),
        "stroke=\"#8a99a6\" stroke-dasharray=\"5 4\"",
    ));
    for p in thinned(pairs) {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#2f6f8f\" fill-opacity=\"0.35\"/>",
            f.px(p[1]),
            f.py(p[0])
        );
    }
    let n = pairs.len() as f64;
    let (mx, my) = (
        pairs.iter().map(|p| p[1]).sum::<f64>() / n,
        pairs.iter().map(|p| p[0]).sum::<f64>() / n,
    );
    let sxx: f64 = pairs.iter().map(|p| (p[1] - mx).powi(2)).sum();
    if sxx > 0.0 {
        let slope = pairs.iter().map(|p| (p[1] - mx) * (p[0] - my)).sum::<f64>() / sxx;
        let at = |x: f64| my + slope * (x - mx);
        s.push_str(&f.line(
            (r.0, at(r.0)),
            (r.1, at(r.1)),
            "stroke=\"#a8641b\" stroke-width=\"2\"",
        ));
    }
    s.push_str("</svg>");
    s
}

fn bland_altman_svg(pairs: &[[f64; 2]], ba: Option<&crate::bland_altman::BlandAltman>) -> String {
    let means: Vec<(f64, f64)> = pairs
        .iter()
        .map(|p| ((p[0] + p[1]) / 2.0, p[0] - p[1]))
        .collect();
    let (Some(xr), Some(ba)) = (range(means.iter().map(|m| m.0)), ba) else {
        return empty_svg("not enough paired items");
    };
    let yr =
        range(means.iter().map(|m| m.1).chain([ba.loa_low, ba.loa_high])).unwrap_or((-1.0, 1.0));
    let f = Frame::new(xr, yr);
    let mut s = f.open("mean of grader and clinicians", "grader − clinicians");
    let stride = means.len().div_ceil(MAX_POINTS).max(1);
    for m in means.iter().step_by(stride) {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#2f6f8f\" fill-opacity=\"0.35\"/>",
            f.px(m.0),
            f.py(m.1)
        );
    }
    s.push_str(&f.line(
        (f.x.0, 0.0),
        (f.x.1, 0.0),
        "stroke=\"#8a99a6\" stroke-dasharray=\"2 3\"",
    ));
    s.push_str(&f.line(
        (f.x.0, ba.bias),
        (f.x.1, ba.bias),
        "stroke=\"#a8641b\" stroke-width=\"2\"",
    ));
    for limit in [ba.loa_low, ba.loa_high] {
        s.push_str(&f.line(
            (f.x.0, limit),
            (f.x.1, limit),
            "stroke=\"#a83232\" stroke-dasharray=\"6 4\"",
        ));
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">bias {}</text>",
        f.width - 16.0,
        f.py(ba.bias) - 4.0,
        num(ba.bias, 2)
    );
    s.push_str("</svg>");
    s
}

fn heatmap_svg(pairs: &[[f64; 2]], categories: &Categories) -> String {
    let levels = categories.levels();
    let k = levels.len();
    if pairs.is_empty() || k == 0 || k > 30 {
        return empty_svg("no categorical scale to tabulate");
    }
    let nearest = |v: f64| {
        levels
            .iter()
            .enumerate()
            .min_by(|a, b| {
                (a.1 - v)
                    .abs()
                    .total_cmp(&(b.1 - v).abs())
                    .then(b.0.cmp(&a.0))
            })
            .map_or(0, |(i, _)| i)
    };
    let mut counts = vec![0usize; k * k];
    for p in pairs {
        counts[nearest(p[0]) * k + nearest(p[1])] += 1;
    }
    let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let cell = (280.0 / k as f64).min(48.0);
    let (x0, y0) = (70.0, 20.0);
    let size = cell * k as f64;
    let mut s = format!(
        "<svg viewBox=\"0 0 480 {:.0}\" width=\"100%\" xmlns=\"http://www.w3.org/2000/svg\">",
        size + 70.0
    );
    for i in 0..k {
        for j in 0..k {
            let c = counts[i * k + j];
            let shade = c as f64 / max;
            let _ = write!(s, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{cell:.1}\" height=\"{cell:.1}\" fill=\"#2f6f8f\" fill-opacity=\"{:.3}\" stroke=\"#fff\"/>", x0 + cell * j as f64, y0 + cell * i as f64, 0.06 + 0.9 * shade);
            if c > 0 && cell >= 18.0 {
                let _ = write!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{}\">{c}</text>",
                    x0 + cell * (j as f64 + 0.5),
                    y0 + cell * (i as f64 + 0.5) + 4.0,
                    if shade > 0.5 { "#fff" } else { "#1f2a33" }
                );
            }
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            x0 - 6.0,
            y0 + cell * (i as f64 + 0.5) + 4.0,
            num(levels[i], 1)
        );
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x0 + cell * (i as f64 + 0.5),
            y0 + size + 14.0,
            num(levels[i], 1)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">clinicians' consensus</text>",
        x0 + size / 2.0,
        y0 + size + 32.0
    );
    let _ = write!(s, "<text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">grader</text>", y0 + size / 2.0, y0 + size / 2.0);
    s.push_str("</svg>");
    s
}

/// A subgroup label, its (r, CI low, CI high) when estimable, and its n.
type ForestRow = (String, Option<(f64, f64, f64)>, usize);

fn forest_svg(rows: &[ForestRow], bar: f64) -> String {
    let row_height = 22.0;
    let height = 40.0 + row_height * rows.len() as f64;
    let (x0, x1) = (250.0, 465.0);
    let lo = rows
        .iter()
        .filter_map(|r| r.1.map(|v| v.1))
        .fold(bar.min(0.5), f64::min)
        .max(-1.0);
    let px = |v: f64| x0 + (v - lo) / (1.0 - lo) * (x1 - x0);
    let mut s = format!(
        "<svg viewBox=\"0 0 480 {height:.0}\" width=\"100%\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    let _ = write!(s, "<line x1=\"{:.1}\" y1=\"8\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#a83232\" stroke-dasharray=\"5 4\"/>", px(bar), px(bar), height - 24.0);
    for (i, (label, value, n)) in rows.iter().enumerate() {
        let y = 20.0 + row_height * i as f64;
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{:.1}\">{} (n {n})</text>",
            y + 4.0,
            escape(label)
        );
        match value {
            Some((r, l, u)) => {
                let _ = write!(s, "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#2f6f8f\" stroke-width=\"2\"/><rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"#2f6f8f\"/>", px(*l), px(*u), px(*r) - 4.0, y - 4.0);
            }
            None => {
                let _ = write!(
                    s,
                    "<text x=\"{x0}\" y=\"{:.1}\" font-style=\"italic\">not estimable</text>",
                    y + 4.0
                );
            }
        }
    }
    for t in 0..=4 {
        let v = lo + (1.0 - lo) * f64::from(t) / 4.0;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            px(v),
            height - 8.0,
            num(v, 2)
        );
    }
    s.push_str("</svg>");
    s
}

fn drift(h: &mut String, report: &Report) {
    if report.grader_drift.is_empty() {
        return;
    }
    h.push_str("<h2>Grader drift</h2><table><tr><th>Dimension</th><th class=\"text\">Version</th><th>r with the primary grader</th><th>mean shift vs primary</th><th>r with clinicians</th><th>n</th></tr>");
    for d in &report.grader_drift {
        let _ = write!(h, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>", escape(&d.dimension), escape(&d.version),
            d.vs_primary.pearson.value().map_or("—".into(), |p| num(p.r, 3)), d.vs_primary.bland_altman.value().map_or("—".into(), |b| num(b.bias, 2)),
            d.vs_human_mean.value().map_or("—".into(), |p| num(p.r, 3)), d.vs_primary.n);
    }
    h.push_str("</table>");
}

fn errors(h: &mut String, report: &Report) {
    if let Some(e) = &report.error_categories {
        h.push_str("<h2>Error categories</h2>");
        let _ = write!(h, "<p>{} items with error labels. A clinicians' label counts when at least half of the item's reviewers gave it.</p>", e.items);
        h.push_str("<table><tr><th>Category</th><th>grader claimed</th><th>clinicians found</th><th>κ</th><th>precision (95 % CI)</th><th>recall (95 % CI)</th></tr>");
        // The case bootstrap's interval where there is one; Wilson's counts items as independent.
        let share = |p: &Option<crate::proportions::Proportion>,
                     by_case: &Option<crate::report::CaseInterval>| {
            p.as_ref().map_or("—".into(), |p| match by_case {
                Some(i) => format!(
                    "{} ({}–{} by case)",
                    num(p.share, 2),
                    num(i.low, 2),
                    num(i.high, 2)
                ),
                None => format!(
                    "{} ({}–{} Wilson)",
                    num(p.share, 2),
                    num(p.ci_low, 2),
                    num(p.ci_high, 2)
                ),
            })
        };
        for c in &e.categories {
            let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>", escape(&c.category), c.grader_claimed, c.clinicians_labelled,
                c.cohen_kappa.value().map_or("—".into(), |k| num(k.value, 2)), share(&c.precision, &c.precision_by_case), share(&c.recall, &c.recall_by_case));
        }
        h.push_str("</table>");
        let _ = write!(h, "<h3>Dangerous cases: the grader scored ≥ {} and a clinician found a significant error</h3>", e.high_score_threshold.map_or("—".into(), |t| num(t, 2)));
        if e.dangerous_cases.is_empty() {
            h.push_str("<p>None.</p>");
        } else {
            h.push_str("<table><tr><th>Item</th><th class=\"text\">Case</th><th>grader</th><th>clinicians' mean</th><th class=\"text\">errors found (severity, by; claimed by grader?)</th></tr>");
            for d in &e.dangerous_cases {
                let found: Vec<String> = d
                    .errors
                    .iter()
                    .map(|x| {
                        format!(
                            "{} (sev {}, {}; {})",
                            x.category,
                            x.severity,
                            x.rater,
                            if x.grader_claimed {
                                "claimed"
                            } else {
                                "missed"
                            }
                        )
                    })
                    .collect();
                let _ = write!(h, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>", escape(&d.item), escape(d.case.as_deref().unwrap_or("")), num(d.grader_score, 1), d.human_mean.map_or("—".into(), |m| num(m, 2)), escape(&found.join("; ")));
            }
            h.push_str("</table>");
        }
    }
    if let Some(dist) = &report.error_distribution {
        let _ = write!(h, "<h2>Error distribution</h2><p>{} errors found by clinicians (distinct item × category).</p><div class=\"plots\">", dist.total);
        for (title, shares) in [("bucket", &dist.by_bucket), ("category", &dist.by_category)] {
            let _ = write!(
                h,
                "<figure>{}<figcaption>{}</figcaption></figure>",
                bars_svg(shares),
                error_share_caption(title)
            );
        }
        h.push_str("</div>");
        errors_by_model(h, &dist.by_model);
    }
}

/// Models as rows, categories as columns: how many of each model's reviewed responses carry
/// each error, so a failure one model has and another lacks (R4 anchoring) is read across a row.
fn errors_by_model(h: &mut String, by_model: &[crate::report::ModelErrors]) {
    let Some(first) = by_model.first() else {
        return;
    };
    h.push_str("<h3>Errors per model</h3><p>Responses clinicians labelled with each category, of the model's responses they reviewed (share, 95 % Wilson interval).</p><table><tr><th>model</th><th class=\"num\">reviewed</th>");
    for category in &first.by_category {
        let _ = write!(h, "<th class=\"num\">{}</th>", escape(&category.name));
    }
    h.push_str("</tr>");
    for m in by_model {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td>",
            escape(&m.model),
            m.reviewed
        );
        for category in &m.by_category {
            let p = &category.share;
            let _ = write!(
                h,
                "<td class=\"num\" title=\"{}–{} %\">{} ({} %)</td>",
                num(100.0 * p.ci_low, 0),
                num(100.0 * p.ci_high, 0),
                p.count,
                num(100.0 * p.share, 0)
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn bars_svg(shares: &[crate::report::NamedShare]) -> String {
    let row = 22.0;
    let height = 24.0 + row * shares.len() as f64;
    let (x0, x1) = (120.0, 440.0);
    let px = |v: f64| x0 + v * (x1 - x0);
    let mut s = format!(
        "<svg viewBox=\"0 0 480 {height:.0}\" width=\"100%\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, share) in shares.iter().enumerate() {
        let y = 8.0 + row * i as f64;
        let p = &share.share;
        let _ = write!(s, "<text x=\"4\" y=\"{:.1}\">{}</text><rect x=\"{x0}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"14\" fill=\"#2f6f8f\" fill-opacity=\"0.7\"/><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f2a33\"/><text x=\"{:.1}\" y=\"{:.1}\">{}%</text>",
            y + 11.0, escape(&share.name), px(p.share) - x0, px(p.ci_low), y + 7.0, px(p.ci_high), y + 7.0, px(p.ci_high) + 4.0, y + 11.0, num(100.0 * p.share, 0));
    }
    s.push_str("</svg>");
    s
}

fn pass_at_k(h: &mut String, report: &Report) {
    if report.pass_at_k.is_empty() {
        return;
    }
    h.push_str("<h2>pass@k (clinicians' correctness judgements)</h2><table><tr><th>Model</th><th class=\"text\">Task family</th><th class=\"text\">Level</th><th>k</th><th>pass@k</th><th>95 % CI</th><th>tasks</th></tr>");
    for r in &report.pass_at_k {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>",
            escape(&r.model),
            escape(&r.task_family),
            escape(&r.level),
            r.k
        );
        h.push_str(&estimate_cells(&r.pass_at_k, 3, |v| {
            vec![
                format!("{}%", num(100.0 * v.value, 1)),
                format!(
                    "{}–{}%",
                    num(100.0 * v.ci_low, 1),
                    num(100.0 * v.ci_high, 1)
                ),
                v.n.to_string(),
            ]
        }));
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// What running each model and grader took, from the run records of the results stored here:
/// imported results have none, so a study of imported answers shows no table.
fn model_reliability(h: &mut String, rows: &[crate::reliability::ModelReliability]) {
    if rows.is_empty() {
        return;
    }
    h.push_str("<h2 id=\"model-reliability\">Model reliability</h2><p>From the run records NeuroRater stored with each result it ran (imported results have none). Latency: an item's whole conversation, follow-ups, re-asks and retries' waits included. Malformed output: a grader's replies that could not be used and were asked again, over all its replies. Cost: at the prices each run's spec named, shown only when every item was run with prices.</p><table><tr><th class=\"text\">Spec</th><th class=\"text\">Kind</th><th>items</th><th>requests</th><th>tokens in</th><th>tokens out</th><th>tokens per item</th><th>latency p50</th><th>latency p95</th><th>malformed output</th><th>cost</th></tr>");
    for r in rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} ms</td><td class=\"num\">{} ms</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&r.name),
            escape(&r.kind),
            r.items,
            r.requests,
            r.prompt_tokens,
            r.completion_tokens,
            num(r.mean_tokens_per_item, 0),
            num(r.latency_ms_p50, 0),
            num(r.latency_ms_p95, 0),
            r.malformed_output_rate
                .map_or("—".to_owned(), |rate| format!("{}%", num(100.0 * rate, 1))),
            r.cost.map_or("—".to_owned(), |cost| num(cost, 4)),
        );
    }
    h.push_str("</table>");
}

/// The `answer_accuracy` section: the ground-truth matcher's accuracy beside the clinicians' and
/// the grader's correctness (docs/report-schema.md, AnswerAccuracyRow).
fn answer_accuracy(
    h: &mut String,
    rows: &[crate::truth_match::AnswerAccuracyRow],
    pass_at: &[usize],
) {
    if rows.is_empty() {
        return;
    }
    h.push_str("<section id=\"answer-accuracy\"><h2>Answers against the ground truth</h2><p>Each answer matched against its case's curated diagnosis by the deterministic matcher: top-1 and top-3 among the diagnoses the answer states (95 % CI by case), pass@k over a task's samples, macro-F1 over disease groups, and agreement of the matcher's top-1 with the clinicians' and the grader's correctness (Cohen's κ). Answers the matcher could not decide are counted, not scored.</p><table><tr><th class=\"text\">Model</th><th class=\"text\">Task family</th><th class=\"text\">Level</th><th>answers</th><th>undecided</th><th>top-1 (95 % CI)</th><th>top-3 (95 % CI)</th>");
    for k in pass_at {
        let _ = write!(h, "<th>pass@{k}</th>");
    }
    h.push_str("<th>macro-F1</th><th>κ clinicians (n)</th><th>κ grader (n)</th></tr>");
    let share = |e: &Estimate<crate::truth_match::Share>| match e.value() {
        Some(v) => format!(
            "<td class=\"num\">{}% ({}–{}%)</td>",
            num(100.0 * v.value, 1),
            num(100.0 * v.low, 1),
            num(100.0 * v.high, 1)
        ),
        None => cell_na(e),
    };
    for r in rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}{}",
            escape(&r.model),
            escape(r.task_family.as_deref().unwrap_or("all")),
            escape(r.level.as_deref().unwrap_or("all")),
            r.n,
            r.unmatched,
            share(&r.top1),
            share(&r.top3),
        );
        for k in pass_at {
            match r.pass_at.get(&k.to_string()) {
                Some(e) => h.push_str(&estimate_cells(e, 1, |v| {
                    vec![format!("{}%", num(100.0 * v.value, 1))]
                })),
                None => h.push_str("<td></td>"),
            }
        }
        h.push_str(&estimate_cells(&r.macro_f1, 1, |v| vec![num(*v, 3)]));
        for a in &r.agreement {
            h.push_str(&estimate_cells(&a.kappa, 1, |v| {
                vec![format!("{} ({})", num(v.value, 2), a.n)]
            }));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table></section>");
}

fn ppi(h: &mut String, report: &Report) {
    if report.ppi.is_empty() {
        return;
    }
    h.push_str("<section id=\"ppi\"><h2>Prediction-powered estimates (PPI++)</h2><p>The grader on every answer, the clinicians on a subset: unbiased like the clinicians' figure, and narrower as far as the grader agrees with them. Valid only if the answers clinicians read were drawn at random. Intervals: 95 %, variance summed by case.</p><table><tr><th class=\"text\">Model</th><th class=\"text\">Target</th><th>PPI++ (95 % CI)</th><th>clinicians only</th><th>grader only</th><th>read / grader only</th><th>λ</th><th>effective n</th></tr>");
    let interval = |i: &crate::ppi::Interval| {
        format!(
            "{} ({}–{})",
            num(i.estimate, 3),
            num(i.low, 3),
            num(i.high, 3)
        )
    };
    for r in &report.ppi {
        // A task family × level row names them after the model.
        let within = match (&r.task_family, &r.level) {
            (Some(family), Some(level)) => {
                format!(" · {} · level {}", escape(family), escape(level))
            }
            _ => String::new(),
        };
        let _ = write!(
            h,
            "<tr><td>{}{within}</td><td>{}</td>",
            escape(&r.model),
            escape(&r.target)
        );
        h.push_str(&estimate_cells(&r.result, 6, |v| {
            vec![
                interval(&crate::ppi::Interval {
                    estimate: v.estimate,
                    low: v.low,
                    high: v.high,
                }),
                interval(&v.clinicians_only),
                interval(&v.grader_only),
                format!("{} / {}", v.n_labelled, v.n_unlabelled),
                num(v.lambda, 2),
                num(v.effective_n, 0),
            ]
        }));
        h.push_str("</tr>");
    }
    h.push_str("</table></section>");
}

fn intra_rater(h: &mut String, report: &Report) {
    let Some(section) = &report.intra_rater else {
        return;
    };
    let _ = write!(h, "<section id=\"intra-rater\"><h2>Intra-rater reliability (test-retest)</h2><p>Each clinician's first read of a response against their own repeat read after the wash-out, on the {} scale. ICC(A,1): two-way, absolute agreement, single measurement (a shift between sessions counts against reliability). Fewer than {} pairs are not estimable, and fewer than {} are shown but not interpreted: their intervals are too wide to call the reliability poor or good. Intervals: analytic 95 % and cluster bootstrap (cases resampled, percentile).</p>",
        escape(&section.dimension), section.min_pairs, section.min_interpreted_pairs);
    h.push_str("<table><tr><th class=\"text\">Clinician</th><th>pairs</th><th>cases</th><th>ICC(A,1) (95 % CI)</th><th>bootstrap</th><th>quadratic κ (95 % CI)</th><th>bootstrap</th><th>mean |difference|</th><th>bootstrap</th><th>mean shift (repeat − first)</th></tr>");
    let interval = |low: f64, high: f64, decimals: usize| {
        format!("{}–{}", num(low, decimals), num(high, decimals))
    };
    let boot = |e: &Estimate<crate::bootstrap::BootstrapInterval>, decimals: usize| {
        e.value().map_or("—".to_string(), |b| {
            interval(b.percentile_low, b.percentile_high, decimals)
        })
    };
    for e in std::iter::once(&section.pooled).chain(&section.raters) {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}{}</td><td class=\"num\">{}</td>",
            escape(e.rater.as_deref().unwrap_or("pooled")),
            e.n_pairs,
            // The same words as the app's table: shown, not read as poor or good.
            if e.n_pairs < section.min_interpreted_pairs {
                format!(" <span class=\"na\" title=\"fewer than {} pairs: shown, not interpreted\">too few</span>", section.min_interpreted_pairs)
            } else {
                String::new()
            },
            e.n_cases
        );
        h.push_str(&estimate_cells(&e.reliability, 7, |t| {
            let icc = t.icc.value().map_or("—".to_string(), |v| {
                format!("{} ({})", num(v.value, 3), interval(v.ci_low, v.ci_high, 2))
            });
            let kappa = t
                .cohen_kappa
                .quadratic
                .value()
                .map_or("—".to_string(), |k| {
                    format!("{} ({})", num(k.value, 3), interval(k.ci_low, k.ci_high, 2))
                });
            vec![
                icc,
                boot(&t.bootstrap.icc, 2),
                kappa,
                boot(&t.bootstrap.quadratic_kappa, 2),
                num(t.mean_absolute_difference, 2),
                boot(&t.bootstrap.mean_absolute_difference, 2),
                num(t.mean_difference, 2),
            ]
        }));
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    if let Some(plot) = intra_rater_plot(report) {
        let _ = write!(
            h,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            plot.svg,
            escape(&plot.caption)
        );
    }
    h.push_str("</section>");
}

fn missed_findings(h: &mut String, report: &Report) {
    let Some(section) = &report.missed_findings else {
        return;
    };
    if let Some(reason) = &section.not_checked {
        let _ = write!(h, "<section id=\"missed-findings\"><h2>Missed findings</h2><p class=\"na\">Not checked: {}</p></section>", escape(reason));
        return;
    }
    let _ = write!(h, "<section id=\"missed-findings\"><h2>Missed findings</h2><p>Ground-truth lesions a response to a lesion-identification task did not mention and no rater flagged: {} of {} lesion checks over {} responses.</p>",
        section.missed, section.lesions_checked, section.responses_checked);
    h.push_str("<table><tr><th class=\"text\">Model</th><th>responses</th><th>lesions</th><th>missed</th><th>responses with a miss</th><th>share missed (95 % CI)</th></tr>");
    for m in &section.by_model {
        let share = m.share_missed.as_ref().map_or("—".to_string(), |p| {
            format!(
                "{}% ({}–{}%)",
                num(100.0 * p.share, 1),
                num(100.0 * p.ci_low, 1),
                num(100.0 * p.ci_high, 1)
            )
        });
        let _ = write!(h, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&m.model), m.responses, m.lesions, m.missed, m.responses_with_miss, share);
    }
    h.push_str("</table>");
    if let Some(plot) = missed_findings_plot(report) {
        let _ = write!(
            h,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            plot.svg,
            escape(&plot.caption)
        );
    }
    if section.findings.is_empty() {
        h.push_str("<p>No lesion was missed.</p>");
    } else {
        h.push_str("<table><tr><th class=\"text\">Response</th><th class=\"text\">Model</th><th class=\"text\">Lesion</th><th class=\"text\">Description</th><th class=\"text\">Location</th></tr>");
        for f in &section.findings {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&f.item),
                escape(&f.model),
                escape(&f.lesion_id),
                escape(&f.description),
                escape(&f.location)
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
}

fn methods(h: &mut String, report: &Report) {
    let o = &report.options;
    let _ = write!(h, "<h2>Methods</h2><p class=\"note\">Pearson r with a Fisher-z 95 % interval and a t-test p; Spearman ρ on average ranks with the Bonett–Wright standard error; Kendall τ-b by Knight's algorithm (exact p without ties for n ≤ 33). Bland–Altman limits are bias ± 1.96 SD with t-based intervals (SE of a limit √(3s²/n)); with several items per case, Zou's (2013) limits and MOVER intervals from the case means and the within-case variance. ICC forms after Shrout &amp; Fleiss (1979) with F-based intervals (McGraw &amp; Wong 1996); ICC and Fleiss κ use items scored by every rater. Krippendorff's α uses every item with two or more scores. Variance components are REML on every score (lme4's criterion) with 95 % profile-likelihood intervals. Cohen's κ standard errors after Fleiss, Cohen &amp; Everitt (1969). The cluster bootstrap resamples cases ({} resamples, seed {}), percentile and BCa. The alternative annotator test follows Calderon et al. (ACL 2025) with −RMSE alignment, ε = {}, Benjamini–Yekutieli q = {}. Not-estimable figures are shown as such, with the reason on hover.</p>",
        o.bootstrap_resamples, o.seed, num(o.alt_test_epsilon, 2), num(o.alt_test_q, 2));
}
