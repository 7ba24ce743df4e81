//! "Automatic metrics against the clinicians" (issue 12 §3): how far the text metrics and the
//! grader follow the clinicians' overall scores, pass@k from the grader's verdicts beside pass@k
//! from the clinicians' judgements on the same samples, and probes of the grader's biases.
//!
//! Everything is computed on the clinicians' mean overall score per item (first reads of the
//! clinicians the report counts), with intervals that resample cases, as everywhere in the report.
//!
//! - **Correlation**: Pearson r (analytic Fisher-z interval and p) and Spearman ρ of each metric
//!   with the clinicians' mean; the 95 % interval of r by case bootstrap. The grader's row is the
//!   same statistic on the same items, so the rows compare directly.
//! - **pass@k**: a sample passes for the clinicians when most of their judgements call it
//!   correct (as in the report's pass@k), for the grader when its overall score reaches
//!   [`AutomaticMetricsReport::grader_pass_score`]; both computed with the unbiased estimator on
//!   the samples both judged. Agreement per sample: share and Cohen's κ.
//! - **Length**: grader = a + b · clinicians' mean + c · (answer words / 100) by least squares;
//!   c is the score the grader adds per 100 words at equal clinical quality.
//! - **Self-preference**: the mean of grader − clinicians' mean on responses of the grader's own
//!   model family minus the same on other families' responses.
//! - **Test-retest**: grader runs whose specs are equal but for their name are repeat runs; their
//!   scores of the same response are compared as a clinician's repeat reads are
//!   ([`crate::intra_rater`]).

use crate::bootstrap::{cluster_bootstrap, BootstrapConfig, NoProgress};
use crate::correlation::{pearson, spearman, Pearson, Spearman};
use crate::estimate::Estimate;
use crate::input::{CalibrationInput, RepeatRead, ReportOptions};
use crate::intra_rater::{intra_rater_report, IntraRaterReport};
use crate::kappa::{cohen_kappa, Categories, KappaValue};
use crate::proportions::pass_at_k;
use crate::report::CaseInterval;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What the section is built from besides the report's own input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AutomaticMetricsInput {
    /// Item → metric name → value (`cosine`, `bertscore_f1`, …), as stored.
    pub metrics: BTreeMap<String, BTreeMap<String, f64>>,
    /// Why there are no metrics (e.g. never computed), shown in the report.
    pub metrics_missing: Option<String>,
    /// Item → words in the response's answer and rationale.
    pub answer_words: BTreeMap<String, usize>,
    /// Item → the model that wrote the response.
    pub response_model: BTreeMap<String, String>,
    /// Grader name → the model id its run spec names; a grader imported from a file is absent
    /// and its family is read from its name.
    pub grader_models: BTreeMap<String, String>,
    /// Scores of the same response by two runs of one grader spec (`rater` names the pair).
    pub grader_repeats: Vec<RepeatRead>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AutomaticMetricsReport {
    pub dimension: String,
    /// Why the metrics' rows are empty, when they are.
    pub metrics_missing: Option<String>,
    /// One row per metric, then the grader's (`metric` = `grader`), same items for each.
    pub against_clinicians: Vec<MetricVsClinicians>,
    /// The grader's overall score at or above which its verdict is "pass" (the scale's midpoint
    /// unless the scale is unknown, then the median of its scores).
    pub grader_pass_score: Option<f64>,
    pub pass_at_k: Vec<PassAtKComparison>,
    pub verdict_agreement: Estimate<VerdictAgreement>,
    pub length_bias: Estimate<LengthBias>,
    pub self_preference: Estimate<SelfPreference>,
    /// `None` when no grader spec ran twice.
    pub grader_test_retest: Option<IntraRaterReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricVsClinicians {
    pub metric: String,
    pub pearson: Estimate<Pearson>,
    pub spearman: Estimate<Spearman>,
    /// Pearson r's 95 % case-bootstrap interval.
    pub pearson_case_interval: Option<CaseInterval>,
    pub n_items: usize,
    pub n_cases: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassAtKComparison {
    pub model: String,
    pub task_family: String,
    pub level: String,
    pub k: usize,
    /// Tasks with at least k samples judged by both.
    pub n_tasks: usize,
    pub clinicians: Option<f64>,
    pub grader: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictAgreement {
    /// Samples judged by both.
    pub n: usize,
    pub share_agreeing: f64,
    /// Unweighted Cohen's κ, grader against the clinicians' majority.
    pub cohen_kappa: Estimate<KappaValue>,
    /// Passed by the grader, failed by the clinicians (the grader too lenient).
    pub grader_only_pass: usize,
    /// Failed by the grader, passed by the clinicians.
    pub clinicians_only_pass: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthBias {
    /// c of grader = a + b · clinicians' mean + c · words/100.
    pub score_per_100_words: f64,
    pub interval: Option<CaseInterval>,
    /// b: the grader's slope on the clinicians' mean, for scale.
    pub slope_on_clinicians: f64,
    pub n_items: usize,
    pub n_cases: usize,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelfPreference {
    pub grader_family: String,
    /// mean(grader − clinicians) on own-family responses − the same on the others.
    pub difference: f64,
    pub interval: Option<CaseInterval>,
    pub own_family_items: usize,
    pub other_items: usize,
    pub summary: String,
}

/// The section, or `None` when the report has no grader and nothing was measured.
pub fn automatic_metrics_report(
    auto: &AutomaticMetricsInput,
    input: &CalibrationInput,
    options: &ReportOptions,
) -> Option<AutomaticMetricsReport> {
    let input = input.without_raters(&options.excluded_raters);
    if options.grader.is_none() && auto.metrics.is_empty() {
        return None;
    }
    let graders: BTreeSet<&str> = options
        .grader
        .iter()
        .chain(&options.other_grader_versions)
        .map(String::as_str)
        .collect();
    let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let mut grader_score: BTreeMap<&str, f64> = BTreeMap::new();
    for s in input
        .table
        .scores
        .iter()
        .filter(|s| s.dimension == "overall")
    {
        if Some(&s.rater) == options.grader.as_ref() {
            grader_score.insert(&s.item, s.score);
        } else if !graders.contains(s.rater.as_str()) {
            let e = sums.entry(&s.item).or_default();
            e.0 += s.score;
            e.1 += 1;
        }
    }
    let clinicians: BTreeMap<&str, f64> = sums
        .into_iter()
        .map(|(item, (total, n))| (item, total / n as f64))
        .collect();
    let case_of = |item: &str| -> String {
        input
            .table
            .items
            .get(item)
            .and_then(|i| i.case.clone())
            .unwrap_or_else(|| item.to_owned())
    };
    let config = BootstrapConfig {
        resamples: options.bootstrap_resamples,
        seed: options.seed,
    };

    let metric_names: BTreeSet<&str> = auto
        .metrics
        .values()
        .flat_map(|m| m.keys().map(String::as_str))
        .collect();
    // The same items for every row: measured, rated by clinicians and (with a grader) graded.
    let common: Vec<&str> = clinicians
        .keys()
        .copied()
        .filter(|item| auto.metrics.contains_key(*item) || auto.metrics.is_empty())
        .filter(|item| options.grader.is_none() || grader_score.contains_key(item))
        .collect();
    let mut against = Vec::new();
    for name in &metric_names {
        let values = |item: &str| auto.metrics.get(item).and_then(|m| m.get(*name)).copied();
        against.push(correlate(
            name,
            &common,
            &values,
            &clinicians,
            &case_of,
            config,
        ));
    }
    if options.grader.is_some() {
        let values = |item: &str| grader_score.get(item).copied();
        against.push(correlate(
            "grader",
            &common,
            &values,
            &clinicians,
            &case_of,
            config,
        ));
    }

    let pass_score = options
        .grader
        .as_ref()
        .and_then(|_| pass_threshold(options, &grader_score));
    let (pass_at_k, verdict_agreement) = match pass_score {
        Some(threshold) => verdicts(&input, options, &grader_score, threshold),
        None => (
            Vec::new(),
            Estimate::not_estimable(0, "no grader scores to take verdicts from"),
        ),
    };
    let graded: Vec<(&str, f64, f64)> = clinicians
        .iter()
        .filter_map(|(item, m)| Some((*item, *m, *grader_score.get(item)?)))
        .collect();
    Some(AutomaticMetricsReport {
        dimension: "overall".into(),
        metrics_missing: auto.metrics_missing.clone(),
        against_clinicians: against,
        grader_pass_score: pass_score,
        pass_at_k,
        verdict_agreement,
        length_bias: length_bias(&graded, auto, &case_of, config),
        self_preference: self_preference(&graded, auto, options, &case_of, config),
        grader_test_retest: intra_rater_report(&auto.grader_repeats, &case_of, None, options),
    })
}

fn correlate(
    metric: &str,
    items: &[&str],
    values: &dyn Fn(&str) -> Option<f64>,
    clinicians: &BTreeMap<&str, f64>,
    case_of: &dyn Fn(&str) -> String,
    config: BootstrapConfig,
) -> MetricVsClinicians {
    let pairs: Vec<(&str, f64, f64)> = items
        .iter()
        .filter_map(|&item| Some((item, values(item)?, clinicians[item])))
        .collect();
    let (x, y): (Vec<f64>, Vec<f64>) = pairs.iter().map(|&(_, x, y)| (x, y)).unzip();
    let mut per_case: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for &(item, x, y) in &pairs {
        let s = per_case
            .entry(case_of(item))
            .or_insert_with(|| vec![0.0; 6]);
        for (slot, v) in s.iter_mut().zip([1.0, x, y, x * x, y * y, x * y]) {
            *slot += v;
        }
    }
    let clusters: Vec<Vec<f64>> = per_case.into_values().collect();
    let interval = cluster_bootstrap(
        &clusters,
        |s| vec![crate::report::r_from_sums(s)],
        1,
        config,
        &NoProgress,
    )
    .pop()
    .flatten()
    .map(|b| CaseInterval::from_bootstrap(&b));
    MetricVsClinicians {
        metric: metric.to_owned(),
        pearson: pearson(&x, &y),
        spearman: spearman(&x, &y),
        pearson_case_interval: interval,
        n_items: pairs.len(),
        n_cases: clusters.len(),
    }
}

/// The scale's midpoint, else the median grader score.
pub(crate) fn pass_threshold(options: &ReportOptions, grader: &BTreeMap<&str, f64>) -> Option<f64> {
    if let Some(scale) = options.scale {
        return Some((scale.min + scale.max) / 2.0);
    }
    let mut scores: Vec<f64> = grader.values().copied().collect();
    scores.sort_by(f64::total_cmp);
    scores.get(scores.len() / 2).copied()
}

type TaskKey = (String, String, String);

fn verdicts(
    input: &CalibrationInput,
    options: &ReportOptions,
    grader: &BTreeMap<&str, f64>,
    threshold: f64,
) -> (Vec<PassAtKComparison>, Estimate<VerdictAgreement>) {
    // The clinicians' majority per sample, keyed like the report's items.
    let mut votes: BTreeMap<String, (usize, usize, TaskKey, String)> = BTreeMap::new();
    for j in &input.correctness {
        let item = format!("{}/{}/{}", j.task, j.model, j.sample);
        let e = votes.entry(item).or_insert_with(|| {
            (
                0,
                0,
                (j.model.clone(), j.task_family.clone(), j.level.clone()),
                j.task.clone(),
            )
        });
        e.0 += usize::from(j.correct);
        e.1 += 1;
    }
    let mut pairs: Vec<(bool, bool)> = Vec::new();
    // (model, family, level) → task → (samples, clinicians' passes, grader's passes)
    let mut tasks: BTreeMap<TaskKey, BTreeMap<String, (usize, usize, usize)>> = BTreeMap::new();
    for (item, (yes, total, key, task)) in &votes {
        let Some(&score) = grader.get(item.as_str()) else {
            continue;
        };
        let clinicians_pass = 2 * yes > *total;
        let grader_pass = score >= threshold;
        pairs.push((grader_pass, clinicians_pass));
        let t = tasks
            .entry(key.clone())
            .or_default()
            .entry(task.clone())
            .or_default();
        t.0 += 1;
        t.1 += usize::from(clinicians_pass);
        t.2 += usize::from(grader_pass);
    }
    let mut rows = Vec::new();
    for (key, per_task) in &tasks {
        for &k in &options.pass_at {
            let both: Vec<(f64, f64)> = per_task
                .values()
                .filter_map(|&(n, c, g)| Some((pass_at_k(n, c, k)?, pass_at_k(n, g, k)?)))
                .collect();
            let mean = |side: fn(&(f64, f64)) -> f64| {
                (!both.is_empty()).then(|| both.iter().map(side).sum::<f64>() / both.len() as f64)
            };
            rows.push(PassAtKComparison {
                model: key.0.clone(),
                task_family: key.1.clone(),
                level: key.2.clone(),
                k,
                n_tasks: both.len(),
                clinicians: mean(|p| p.0),
                grader: mean(|p| p.1),
            });
        }
    }
    let agreement = if pairs.is_empty() {
        Estimate::not_estimable(
            0,
            "no sample carries both a grader score and clinicians' judgements",
        )
    } else {
        let n = pairs.len();
        let (g, c): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .map(|&(g, c)| (f64::from(u8::from(g)), f64::from(u8::from(c))))
            .unzip();
        let binary = Categories::from_values([0.0, 1.0]);
        Estimate::Value(VerdictAgreement {
            n,
            share_agreeing: pairs.iter().filter(|(g, c)| g == c).count() as f64 / n as f64,
            cohen_kappa: cohen_kappa(&g, &c, &binary).unweighted,
            grader_only_pass: pairs.iter().filter(|&&(g, c)| g && !c).count(),
            clinicians_only_pass: pairs.iter().filter(|&&(g, c)| !g && c).count(),
        })
    };
    (rows, agreement)
}

/// Least squares of grader on (1, clinicians' mean, words/100) from the 9 additive sums
/// n, Σm, Σl, Σm², Σl², Σml, Σy, Σmy, Σly; `None` when the design is singular.
fn length_coefficients(s: &[f64]) -> Option<(f64, f64)> {
    let [n, m, l, mm, ll, ml, y, my, ly] = s[..9] else {
        return None;
    };
    if n < 4.0 {
        return None;
    }
    let a = [[n, m, l], [m, mm, ml], [l, ml, ll]];
    let rhs = [y, my, ly];
    let det = |a: &[[f64; 3]; 3]| {
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
            - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    };
    let d = det(&a);
    // Relative to the matrix's scale: collinear length and quality leave c undefined.
    let scale = a
        .iter()
        .flatten()
        .map(|v| v.abs())
        .fold(0.0, f64::max)
        .powi(3);
    if d.abs() <= 1e-12 * scale {
        return None;
    }
    let column = |col: usize| {
        let mut b = a;
        for (row, value) in b.iter_mut().zip(rhs) {
            row[col] = value;
        }
        det(&b) / d
    };
    Some((column(1), column(2)))
}

fn length_bias(
    graded: &[(&str, f64, f64)],
    auto: &AutomaticMetricsInput,
    case_of: &dyn Fn(&str) -> String,
    config: BootstrapConfig,
) -> Estimate<LengthBias> {
    let mut per_case: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut n = 0;
    for &(item, m, y) in graded {
        let Some(&words) = auto.answer_words.get(item) else {
            continue;
        };
        let l = words as f64 / 100.0;
        let s = per_case
            .entry(case_of(item))
            .or_insert_with(|| vec![0.0; 9]);
        for (slot, v) in s
            .iter_mut()
            .zip([1.0, m, l, m * m, l * l, m * l, y, m * y, l * y])
        {
            *slot += v;
        }
        n += 1;
    }
    let clusters: Vec<Vec<f64>> = per_case.into_values().collect();
    let mut full = vec![0.0; 9];
    for c in &clusters {
        full.iter_mut().zip(c).for_each(|(f, v)| *f += v);
    }
    let Some((b, c)) = length_coefficients(&full) else {
        return Estimate::not_estimable(
            n,
            "needs at least 4 graded items whose lengths and clinicians' means vary independently",
        );
    };
    let interval = cluster_bootstrap(
        &clusters,
        |s| vec![length_coefficients(s).map(|(_, c)| c)],
        1,
        config,
        &NoProgress,
    )
    .pop()
    .flatten()
    .map(|i| CaseInterval::from_bootstrap(&i));
    let summary = match &interval {
        Some(i) if i.low > 0.0 => format!(
            "at equal clinical quality the grader gives {c:+.2} points per 100 words (95 % {:.2} to {:.2}): it favours longer answers",
            i.low, i.high
        ),
        Some(i) if i.high < 0.0 => format!(
            "at equal clinical quality the grader gives {c:+.2} points per 100 words (95 % {:.2} to {:.2}): it favours shorter answers",
            i.low, i.high
        ),
        Some(i) => format!(
            "no length preference shown: {c:+.2} points per 100 words (95 % {:.2} to {:.2})",
            i.low, i.high
        ),
        None => format!("{c:+.2} points per 100 words (no interval: fewer than 2 cases)"),
    };
    Estimate::Value(LengthBias {
        score_per_100_words: c,
        interval,
        slope_on_clinicians: b,
        n_items: n,
        n_cases: clusters.len(),
        summary,
    })
}

/// The maker of a model, from its id: `gpt-4o` → `openai`, `Qwen/Qwen2-VL-7B` → `qwen`; an
/// unknown id is its own first word.
pub fn model_family(model: &str) -> String {
    let id = model.to_lowercase();
    let name = id.rsplit('/').next().unwrap_or(&id);
    const FAMILIES: &[(&[&str], &str)] = &[
        (&["gpt", "chatgpt", "o1", "o3", "o4"], "openai"),
        (&["claude"], "anthropic"),
        (&["gemini", "gemma", "medgemma", "palm"], "google"),
        (&["llama", "meta-llama"], "meta"),
        (&["qwen"], "qwen"),
        (&["mistral", "mixtral", "pixtral"], "mistral"),
        (&["deepseek"], "deepseek"),
        (&["phi"], "microsoft"),
        (&["grok"], "xai"),
        (&["internvl"], "internvl"),
    ];
    let first = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or(name);
    // `o1`, `o3`, `o4` only as whole words: many names start with an o.
    for (prefixes, family) in FAMILIES {
        if prefixes
            .iter()
            .any(|p| first == *p || (first.starts_with(p) && !p.starts_with('o')))
        {
            return (*family).to_owned();
        }
    }
    first.to_owned()
}

fn self_preference(
    graded: &[(&str, f64, f64)],
    auto: &AutomaticMetricsInput,
    options: &ReportOptions,
    case_of: &dyn Fn(&str) -> String,
    config: BootstrapConfig,
) -> Estimate<SelfPreference> {
    let Some(grader) = &options.grader else {
        return Estimate::not_estimable(0, "no grader");
    };
    let family = model_family(auto.grader_models.get(grader).unwrap_or(grader));
    let mut per_case: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for &(item, m, y) in graded {
        let Some(model) = auto.response_model.get(item) else {
            continue;
        };
        let own = model_family(model) == family;
        let s = per_case
            .entry(case_of(item))
            .or_insert_with(|| vec![0.0; 4]);
        let at = if own { 0 } else { 2 };
        s[at] += 1.0;
        s[at + 1] += y - m;
    }
    let difference = |s: &[f64]| -> Option<f64> {
        (s[0] > 0.0 && s[2] > 0.0).then(|| s[1] / s[0] - s[3] / s[2])
    };
    let clusters: Vec<Vec<f64>> = per_case.into_values().collect();
    let mut full = [0.0; 4];
    for c in &clusters {
        full.iter_mut().zip(c).for_each(|(f, v)| *f += v);
    }
    let (own, other) = (full[0] as usize, full[2] as usize);
    let Some(value) = difference(&full) else {
        return Estimate::not_estimable(
            own + other,
            format!(
                "needs graded responses of the grader's family ({family}) and of others; \
                 {own} own-family and {other} other"
            ),
        );
    };
    let interval = cluster_bootstrap(&clusters, |s| vec![difference(s)], 1, config, &NoProgress)
        .pop()
        .flatten()
        .map(|i| CaseInterval::from_bootstrap(&i));
    let summary = match &interval {
        Some(i) if i.low > 0.0 => format!(
            "the grader scores its own family ({family}) {value:+.2} points above the others, relative to the clinicians (95 % {:.2} to {:.2})",
            i.low, i.high
        ),
        Some(i) => format!(
            "no self-preference shown for {family}: {value:+.2} points relative to the clinicians (95 % {:.2} to {:.2})",
            i.low, i.high
        ),
        None => format!("{value:+.2} points for {family} (no interval: fewer than 2 cases)"),
    };
    Estimate::Value(SelfPreference {
        grader_family: family,
        difference: value,
        interval,
        own_family_items: own,
        other_items: other,
        summary,
    })
}
