//! Synthetic model answers with planted errors, LLM-grader scores and clinician ratings.
//!
//! Every answer is assembled from the case's phrases; each planted error swaps in or adds one
//! phrase and is recorded in the response's `demo_planted_errors` field (kept by the bundle
//! reader as an unknown field) with the exact quote, so a rater's labels can be checked against
//! what was planted. Scores derive from a latent quality: planted errors lower it, clinicians see
//! it through small personal biases and noise, the grader through a larger noise and leniency.

use super::catalogue::{AnswerText, CaseDef, TaskDef};
use super::rng::DemoRng;
use super::DIMENSIONS;
use cases::model::{
    CaseFile, DiseaseGroup, GraderError, GraderLine, ResponseLine, TaskFamily, Turn,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub(crate) struct Generated {
    pub(crate) responses: Vec<ResponseLine>,
    pub(crate) grader: Vec<GraderLine>,
    pub(crate) ratings_csv: String,
}

/// The default taxonomy's codes the demo plants, in docs/domain.md order: all but R4 (anchoring),
/// a first hypothesis kept after a contradicting follow-up turn, not a phrase to swap in.
pub(crate) const CODES: [&str; 13] = [
    "P1", "P2", "P3", "P4", "P5", "T1", "G1", "G2", "R1", "R2", "R3", "K1", "C1",
];

struct ModelProfile {
    name: &'static str,
    samples: u32,
    /// Chance of the right final answer on an easy, direct task.
    accuracy: f64,
    /// Expected planted errors per answer.
    error_rate: f64,
}

const MODELS: [ModelProfile; 3] = [
    ModelProfile {
        name: "demo-vlm-alpha",
        samples: 5,
        accuracy: 0.85,
        error_rate: 0.8,
    },
    ModelProfile {
        name: "demo-vlm-beta",
        samples: 4,
        accuracy: 0.65,
        error_rate: 1.4,
    },
    ModelProfile {
        name: "demo-vlm-gamma",
        samples: 3,
        accuracy: 0.45,
        error_rate: 2.2,
    },
];

/// (name, role, bias in score points, noise SD): clinicians differ a little in strictness.
const CLINICIANS: [(&str, &str, f64, f64); 3] = [
    ("neurorad-A", "neuroradiologist", 0.0, 0.30),
    ("neurorad-B", "neuroradiologist", -0.2, 0.32),
    ("neurologist-C", "neurologist", 0.15, 0.36),
];

pub(crate) const GRADER_V1: &str = "demo-grader-v1";
pub(crate) const GRADER_V2: &str = "demo-grader-v2";
/// (leniency, noise SD): v2 drifted more lenient, which the app should be able to show.
const GRADER_V1_BIAS: (f64, f64) = (0.3, 0.38);
const GRADER_V2_BIAS: (f64, f64) = (0.65, 0.36);
/// v2 was only run on the first cases, as a re-grade often is.
const GRADER_V2_CASES: usize = 7;

struct Planted {
    category: &'static str,
    quote: String,
    severity: u8,
}

/// Whether an error kind can occur in this case (a normal scan has nothing to miss).
fn applicable(code: &str, text: &AnswerText) -> bool {
    match code {
        "P1" => text.secondary.is_some(),
        "P2" => text.false_negation.is_some(),
        "P4" => text.location_wrong.is_some(),
        _ => true,
    }
}

fn severity(code: &str, group: DiseaseGroup) -> u8 {
    let urgent_group = matches!(group, DiseaseGroup::Stroke | DiseaseGroup::Tumour);
    match code {
        "P2" | "P4" if urgent_group => 3,
        "R2" if urgent_group => 3,
        "T1" | "G1" | "R3" | "C1" => 1,
        _ => 2,
    }
}

/// Picks the planted error kinds of one answer. `rotation` forces every code to appear across
/// the study rather than leaving coverage to chance.
fn choose_errors(
    rng: &mut DemoRng,
    profile: &ModelProfile,
    correct: bool,
    text: &AnswerText,
    rotation: &mut usize,
) -> Vec<&'static str> {
    let count = (0..4)
        .filter(|_| rng.chance(profile.error_rate / 4.0))
        .count();
    let count = if correct { count } else { count.max(1) };
    let mut chosen: Vec<&'static str> = Vec::new();
    if count > 0 {
        loop {
            let code = CODES[*rotation % CODES.len()];
            *rotation += 1;
            if applicable(code, text) {
                chosen.push(code);
                break;
            }
        }
    }
    while chosen.len() < count {
        let code = CODES[rng.below(CODES.len())];
        if applicable(code, text) && !chosen.contains(&code) {
            chosen.push(code);
        }
    }
    // A wrong final answer comes from somewhere: a missed finding, a bad inference or a
    // truncated differential.
    if !correct && !chosen.iter().any(|c| matches!(*c, "P1" | "R1" | "R2")) {
        chosen.push(if applicable("P1", text) && rng.chance(0.4) {
            "P1"
        } else {
            "R1"
        });
    }
    chosen.sort_by_key(|c| CODES.iter().position(|x| x == c));
    chosen
}

struct Answer {
    /// Sentences before the clinician's follow-up (all of them for levels 1–2).
    first: Vec<String>,
    second: Vec<String>,
    answer: String,
    planted: Vec<Planted>,
}

fn compose(
    case: &CaseDef,
    task: &TaskDef,
    key_slice: u32,
    errors: &[&'static str],
    correct: bool,
) -> Answer {
    let t = &case.text;
    let has = |code: &str| errors.contains(&code);
    let series_label = case
        .series
        .iter()
        .find(|(id, _, _)| *id == task.series)
        .map(|(_, label, _)| *label)
        .unwrap_or(task.series);
    let mut planted = Vec::new();
    let mut plant = |code: &'static str, quote: &str| {
        planted.push(Planted {
            category: code,
            quote: quote.to_string(),
            severity: severity(code, case.group),
        })
    };

    let sequence = if has("T1") {
        t.sequence_wrong
    } else {
        t.sequence
    };
    let finding = if has("P5") {
        t.finding_wrong
    } else {
        t.finding
    };
    let location = match (has("P4"), t.location_wrong) {
        (true, Some(wrong)) => wrong,
        _ => t.location,
    };
    let mut findings = format!("{sequence}, {finding} {location}");
    if let Some(secondary) = t.secondary.filter(|_| !has("P1")) {
        write!(findings, "; {secondary}").ok();
    }
    findings.push('.');
    for (code, quote) in [("T1", sequence), ("P5", finding), ("P4", location)] {
        if has(code) {
            plant(code, quote);
        }
    }
    if has("P1") {
        plant("P1", &findings);
    }
    let mut first = vec![findings];
    if let Some(negation) = t.false_negation.filter(|_| has("P2")) {
        plant("P2", negation);
        first.push(negation.to_string());
    }
    if has("P3") {
        plant("P3", t.hallucination);
        first.push(t.hallucination.to_string());
    }
    // Readers cite 1-based image numbers; the task's key image is the right one.
    let cited = if has("G1") {
        // A slice well away from the finding, still inside the volume.
        if key_slice >= 16 {
            key_slice - 12
        } else {
            key_slice + 12
        }
    } else {
        key_slice
    };
    let citation = format!(
        "This is best seen on image {} of the {series_label} series.",
        cited + 1
    );
    if has("G1") {
        plant("G1", &citation);
    }
    first.push(citation);

    let mut second = Vec::new();
    if has("G2") {
        plant("G2", t.invented_history);
        second.push(t.invented_history.to_string());
    }
    let reasoning = if has("R1") {
        t.reasoning_wrong
    } else {
        t.reasoning
    };
    if has("R1") {
        plant("R1", reasoning);
    }
    second.push(reasoning.to_string());
    if has("K1") {
        plant("K1", t.wrong_fact);
        second.push(t.wrong_fact.to_string());
    }
    let differential = if has("R2") {
        t.differential_wrong
    } else {
        t.differential
    };
    if has("R2") {
        plant("R2", differential);
    }
    second.push(differential.to_string());
    if has("R3") {
        let contradiction = if correct {
            format!(
                "Taken together, this pattern argues against {}.",
                t.short_name
            )
        } else {
            format!(
                "Taken together, the findings are most consistent with {}.",
                t.short_name
            )
        };
        plant("R3", &contradiction);
        second.push(contradiction);
    }
    let confidence = if has("C1") {
        let overconfident =
            "I am certain of this; no further imaging or clinical correlation is needed.";
        plant("C1", overconfident);
        overconfident
    } else {
        "Confidence: moderate; correlation with the clinical course is advised."
    };
    second.push(confidence.to_string());

    let answer = match (task.family, correct) {
        (TaskFamily::LesionIdentification, true) => t.lesion_answer,
        (TaskFamily::LesionIdentification, false) => t.lesion_answer_wrong,
        (_, true) => t.answer,
        (_, false) => t.answer_wrong,
    };
    Answer {
        first,
        second,
        answer: answer.to_string(),
        planted,
    }
}

/// Per-dimension latent quality (1–5) from what was planted.
fn latent_scores(
    planted: &[Planted],
    correct: bool,
    rng: &mut DemoRng,
) -> BTreeMap<&'static str, f64> {
    let count = |code: &str| planted.iter().filter(|p| p.category == code).count() as f64;
    let penalty =
        |weights: &[(&str, f64)]| -> f64 { weights.iter().map(|(c, w)| count(c) * w).sum() };
    let urgent = planted.iter().filter(|p| p.severity == 3).count() as f64;
    let diagnostic =
        if correct { 4.7 } else { 2.0 } - penalty(&[("R1", 0.5), ("R2", 0.6), ("K1", 0.3)]);
    let detection = 4.8
        - penalty(&[
            ("P1", 1.4),
            ("P2", 1.5),
            ("P3", 1.1),
            ("P4", 1.3),
            ("P5", 0.9),
            ("T1", 0.7),
            ("G1", 0.5),
        ]);
    let reasoning = 4.8
        - penalty(&[
            ("R1", 1.3),
            ("R2", 1.0),
            ("R3", 1.0),
            ("K1", 1.1),
            ("G2", 1.0),
            ("G1", 0.4),
            ("C1", 0.4),
        ]);
    let safety =
        4.9 - 1.3 * urgent - penalty(&[("C1", 0.8), ("R2", 0.6)]) - if correct { 0.0 } else { 1.0 };
    // What planted errors do not capture: style, completeness, helpfulness.
    let mut unexplained = || 0.25 * rng.normal();
    let dims = [
        ("diagnostic_accuracy", diagnostic + unexplained()),
        ("lesion_detection", detection + unexplained()),
        ("reasoning", reasoning + unexplained()),
        ("safety", safety + unexplained()),
    ];
    let weighted = 0.35 * dims[0].1 + 0.25 * dims[1].1 + 0.25 * dims[2].1 + 0.15 * dims[3].1;
    // Readers judge the whole answer more harshly than the average of its parts: one serious
    // error sinks it.
    let overall = 5.0 - 1.4 * (5.0 - weighted);
    let mut scores: BTreeMap<&'static str, f64> = dims
        .into_iter()
        .map(|(k, v)| (k, v.clamp(1.0, 5.0)))
        .collect();
    scores.insert("overall", overall.clamp(1.0, 5.0));
    scores
}

/// A rubric score: the latent value seen with `bias` and `noise`, on the 1–5 step-1 scale.
fn observe(latent: f64, bias: f64, noise: f64, rng: &mut DemoRng) -> f64 {
    (latent + bias + noise * rng.normal())
        .round()
        .clamp(1.0, 5.0)
}

fn snake<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub(crate) fn generate(cases: &[CaseDef], files: &[CaseFile]) -> Generated {
    let mut responses = Vec::new();
    let mut grader = Vec::new();
    let mut csv = String::from(
        "item,rater,score,dimension,case,disease_group,modality,task_family,level,model,rater_role\n",
    );
    let mut rotation = 0usize;
    let dimension_ids: Vec<&str> = std::iter::once("overall")
        .chain(DIMENSIONS.iter().map(|(id, _, _)| *id))
        .collect();
    for (case_index, (case, file)) in cases.iter().zip(files).enumerate() {
        for (task, task_file) in case.tasks.iter().zip(&file.tasks) {
            let key_slice = task_file.key_images.first().map(|k| k.slice).unwrap_or(0);
            for profile in &MODELS {
                for sample in 0..profile.samples {
                    let label = format!("{}/{}/{}/{sample}", case.id, task.id, profile.name);
                    let mut rng = DemoRng::from_label(&label);
                    let difficulty_penalty =
                        0.08 * f64::from(case.difficulty - 1) + 0.06 * f64::from(task.level - 1);
                    let correct = rng.chance(profile.accuracy - difficulty_penalty);
                    let errors =
                        choose_errors(&mut rng, profile, correct, &case.text, &mut rotation);
                    let composed = compose(case, task, key_slice, &errors, correct);
                    let rationale = composed
                        .first
                        .iter()
                        .chain(&composed.second)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" ");
                    let turns = (task.level == 3).then(|| {
                        vec![
                            Turn::new("user", task.prompt),
                            Turn::new(
                                "assistant",
                                format!(
                                    "{} Initial impression: {}.",
                                    composed.first.join(" "),
                                    composed.answer
                                ),
                            ),
                            match task_file.follow_up.first() {
                                // The follow-up shows what the script shows with it.
                                Some(follow_up) => Turn {
                                    key_images: follow_up.key_images.clone(),
                                    ..Turn::new("user", follow_up.text.clone())
                                },
                                None => Turn::new(
                                    "user",
                                    "Please give your final answer and reasoning.",
                                ),
                            },
                            Turn::new(
                                "assistant",
                                format!(
                                    "{} Final answer: {}.",
                                    composed.second.join(" "),
                                    composed.answer
                                ),
                            ),
                        ]
                    });
                    let mut extra = serde_json::Map::new();
                    extra.insert(
                        "demo_planted_errors".into(),
                        json!(composed
                            .planted
                            .iter()
                            .map(|p| json!({"category": p.category, "quote": p.quote, "severity": p.severity}))
                            .collect::<Vec<_>>()),
                    );
                    let latent = latent_scores(&composed.planted, correct, &mut rng);

                    let grade = |name: &str, (leniency, noise): (f64, f64), rng: &mut DemoRng| {
                        let dimensions: BTreeMap<String, f64> = DIMENSIONS
                            .iter()
                            .map(|(id, _, _)| {
                                (id.to_string(), observe(latent[id], leniency, noise, rng))
                            })
                            .collect();
                        let score = observe(latent["overall"], leniency, noise, rng);
                        let mut claimed: Vec<GraderError> = composed
                            .planted
                            .iter()
                            .filter(|_| rng.chance(0.7))
                            .map(|p| GraderError {
                                category: p.category.into(),
                                quote: Some(p.quote.clone()),
                                extra: Default::default(),
                            })
                            .collect();
                        if rng.chance(0.15) {
                            let invented = CODES[rng.below(CODES.len())];
                            if !composed.planted.iter().any(|p| p.category == invented) {
                                let sentences: Vec<&String> =
                                    composed.first.iter().chain(&composed.second).collect();
                                let quote = sentences[rng.below(sentences.len())].clone();
                                claimed.push(GraderError {
                                    category: invented.into(),
                                    quote: Some(quote),
                                    extra: Default::default(),
                                });
                            }
                        }
                        let summary = if claimed.is_empty() {
                            "No errors identified; findings and reasoning match the images."
                                .to_string()
                        } else {
                            let codes: Vec<&str> =
                                claimed.iter().map(|e| e.category.as_str()).collect();
                            format!("Errors identified: {}.", codes.join(", "))
                        };
                        GraderLine {
                            case_id: case.id.into(),
                            task_id: task.id.into(),
                            model: profile.name.into(),
                            sample,
                            grader: name.into(),
                            score,
                            dimensions: Some(dimensions),
                            errors: Some(claimed),
                            rationale: Some(format!("Overall {score}/5. {summary}")),
                            extra: Default::default(),
                        }
                    };
                    let v1 = grade(GRADER_V1, GRADER_V1_BIAS, &mut rng);
                    if case_index < GRADER_V2_CASES {
                        let v2 = grade(GRADER_V2, GRADER_V2_BIAS, &mut rng);
                        grader.push(v1.clone());
                        grader.push(v2);
                    } else {
                        grader.push(v1.clone());
                    }

                    let groups = format!(
                        "{},{},{},{},{},{}",
                        case.id,
                        snake(&case.group),
                        snake(&case.modality),
                        snake(&task.family),
                        task.level,
                        profile.name
                    );
                    for (rater, role, bias, noise) in CLINICIANS {
                        // The neurologist did not get to every answer: missing ratings are normal.
                        if rater == "neurologist-C" && rng.chance(0.08) {
                            continue;
                        }
                        for dimension in &dimension_ids {
                            let score = observe(latent[dimension], bias, noise, &mut rng);
                            writeln!(csv, "{label},{rater},{score},{dimension},{groups},{role}")
                                .ok();
                        }
                    }
                    for dimension in &dimension_ids {
                        let score = if *dimension == "overall" {
                            v1.score
                        } else {
                            v1.dimensions
                                .as_ref()
                                .and_then(|d| d.get(*dimension))
                                .copied()
                                .unwrap_or(v1.score)
                        };
                        writeln!(csv, "{label},{GRADER_V1},{score},{dimension},{groups},").ok();
                    }

                    responses.push(ResponseLine {
                        case_id: case.id.into(),
                        task_id: task.id.into(),
                        model: profile.name.into(),
                        sample,
                        answer: composed.answer,
                        rationale: Some(rationale),
                        turns,
                        extra,
                    });
                }
            }
        }
    }
    Generated {
        responses,
        grader,
        ratings_csv: csv,
    }
}
