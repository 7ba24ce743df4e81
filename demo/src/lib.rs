//! The demo study: a deterministic bundle synthesised from the MNI ICBM152 template, so that
//! NeuroRater can be tried, taught and tested with no patient data and no network.
//!
//! `docs/demo.md` describes what the bundle contains and how it is made.
//!
//! A crate of its own, above the domain: it writes a bundle as any pipeline would (through
//! `cases::model`), and nothing in `cases` needs it. Its 5 MB template and voxel loops are built
//! only where a demo is written (the CLI's `demo`, the app's first start, tests).

mod catalogue;
mod dicom;
mod responses;
mod rng;
mod synth;
mod template;

use cases::model::*;
use cases::progress::Progress;
use cases::Error;
use catalogue::{CaseDef, EhrValue};
use std::collections::BTreeMap;
use std::path::Path;
use template::Grid;

/// What [`write_demo_bundle`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSummary {
    pub cases: usize,
    pub series: usize,
    /// DICOM files.
    pub images: usize,
    pub responses: usize,
    pub grader_scores: usize,
}

/// The demo's grader spec, for a vLLM server at its default address (no key).
pub const DEMO_GRADER_SPEC: &str = include_str!("specs/grader.toml");
/// Where the bundle holds [`DEMO_GRADER_SPEC`], relative to its root.
pub const DEMO_GRADER_SPEC_FILE: &str = "specs/grader.toml";
/// The demo's model spec, for the same server.
pub const DEMO_MODEL_SPEC: &str = include_str!("specs/model.toml");
/// Where the bundle holds [`DEMO_MODEL_SPEC`], relative to its root.
pub const DEMO_MODEL_SPEC_FILE: &str = "specs/model.toml";

/// Writes the demo study bundle into `out` (created if missing; existing demo files are
/// overwritten). Two calls produce byte-identical trees.
pub fn write_demo_bundle(out: &Path, progress: &dyn Progress) -> cases::Result<DemoSummary> {
    let cases = catalogue::cases();
    let series_total: usize = cases.iter().map(|c| c.series.len()).sum();
    let grids = grids_in_use(&cases);
    progress.phase("loading the MNI template", grids.len() as u64 + 1);
    let template = template::Template::decode()?;
    progress.advance(1);
    // Each grid's maps once per build; only a case that deforms its anatomy resamples them.
    let mut anatomies = Vec::with_capacity(grids.len());
    for grid in &grids {
        let tissue = template.tissue_on(*grid);
        let shell_distance = template::distance_from_brain(&tissue);
        anatomies.push((tissue, shell_distance));
        progress.advance(anatomies.len() as u64 + 1);
    }

    progress.phase("synthesising images", series_total as u64);
    let mut summary = DemoSummary {
        cases: cases.len(),
        series: 0,
        images: 0,
        responses: 0,
        grader_scores: 0,
    };
    let mut case_files = Vec::with_capacity(cases.len());
    for (number, case) in cases.iter().enumerate() {
        let case_dir = out.join("cases").join(case.id);
        for (tissue, shell_distance) in &anatomies {
            let on_this_grid: Vec<_> = case
                .series
                .iter()
                .enumerate()
                .filter(|(_, (_, _, sequence))| sequence.grid() == tissue.grid)
                .collect();
            if on_this_grid.is_empty() {
                continue;
            }
            let deformed = case.deformation.as_ref().map(|d| synth::deform(tissue, d));
            let scene = synth::Scene {
                tissue: deformed.as_ref().unwrap_or(tissue),
                shell_distance,
                lesions: &case.lesions,
                noise_label: case.id,
            };
            for (series_number, (series_id, _, sequence)) in on_this_grid {
                let values = scene.render(*sequence);
                let context = dicom::SeriesContext {
                    case_id: case.id,
                    case_number: number + 1,
                    series_id,
                    series_number: series_number as u32 + 1,
                    age: case.age,
                    sex: sex_code(case.sex),
                    sequence: *sequence,
                };
                summary.images += dicom::write_series(
                    &case_dir.join(series_id),
                    &context,
                    &tissue.grid,
                    &values,
                )?;
                summary.series += 1;
                progress.advance(summary.series as u64);
            }
        }
        let case_file = case_file(case)?;
        write_json(&case_dir.join("case.json"), &case_file)?;
        case_files.push(case_file);
    }

    progress.phase("writing answers, grader scores and ratings", 1);
    let generated = responses::generate(&cases, &case_files);
    summary.responses = generated.responses.len();
    summary.grader_scores = generated.grader.len();
    write_jsonl(&out.join("responses.jsonl"), &generated.responses)?;
    write_jsonl(&out.join("grader.jsonl"), &generated.grader)?;
    write_text(&out.join("ratings.csv"), &generated.ratings_csv)?;
    write_json(&out.join("study.json"), &study_file(cases.len()))?;
    write_text(&out.join("NOTICE"), &notice())?;
    // Run specs for a model server on this machine, so that `grade` and `respond` can be tried
    // on the demo as they are (docs/runs.md); import ignores the folder.
    write_text(&out.join(DEMO_GRADER_SPEC_FILE), DEMO_GRADER_SPEC)?;
    write_text(&out.join(DEMO_MODEL_SPEC_FILE), DEMO_MODEL_SPEC)?;
    progress.advance(1);
    Ok(summary)
}

/// The acquisition grids the catalogue's series use, each once, in order of first use.
fn grids_in_use(cases: &[CaseDef]) -> Vec<Grid> {
    let mut grids: Vec<Grid> = Vec::new();
    for (_, _, sequence) in cases.iter().flat_map(|c| c.series.iter()) {
        if !grids.contains(&sequence.grid()) {
            grids.push(sequence.grid());
        }
    }
    grids
}

/// The grid of one of a case's series, named by its id.
fn series_grid(case: &CaseDef, series_id: &str) -> cases::Result<Grid> {
    case.series
        .iter()
        .find(|(id, _, _)| *id == series_id)
        .map(|(_, _, sequence)| sequence.grid())
        .ok_or_else(|| {
            Error::Demo(format!(
                "demo catalogue: case {} refers to series {series_id:?}, which it does not have",
                case.id
            ))
        })
}

fn sex_code(sex: Sex) -> &'static str {
    match sex {
        Sex::F => "F",
        Sex::M => "M",
        Sex::O => "O",
    }
}

/// The 0-based display-order slice of `grid` through a case's main finding.
fn key_slice(case: &CaseDef, grid: &Grid) -> u32 {
    let z = case
        .truth
        .first()
        .map(|t| case.lesions[t.shape].shape.centre_ras[2])
        .unwrap_or(case.key_z);
    // Lesions are placed inside the grid; the clamp only guards the catalogue against typos.
    grid.slice_at(z).unwrap_or(grid.slices / 2) as u32
}

fn case_file(case: &CaseDef) -> cases::Result<CaseFile> {
    let marked_series = case.series[0].0;
    let marked_grid = series_grid(case, marked_series)?;
    let lesions = case
        .truth
        .iter()
        .map(|t| {
            let shape = &case.lesions[t.shape].shape;
            // Draw on the slice through the lesion centre, where a reader would.
            let slice = marked_grid
                .slice_at(shape.centre_ras[2])
                .unwrap_or(key_slice(case, &marked_grid) as usize);
            let z = marked_grid.lps(0.0, 0.0, slice as f64)[2];
            let points = shape.axial_mark_lps(z);
            Lesion {
                id: t.id.to_string(),
                description: t.description.to_string(),
                marks: vec![Mark {
                    series: marked_series.to_string(),
                    shape: if points.len() == 1 {
                        MarkShape::Point
                    } else {
                        MarkShape::Ellipse
                    },
                    points_mm: points.into_iter().map(round_mm).collect(),
                }],
            }
        })
        .collect();
    let tasks = case
        .tasks
        .iter()
        .map(|t| {
            Ok(TaskSpec {
                id: t.id.to_string(),
                family: t.family,
                level: t.level,
                prompt: t.prompt.to_string(),
                key_images: vec![SliceRef {
                    series: t.series.to_string(),
                    slice: key_slice(case, &series_grid(case, t.series)?),
                }],
                follow_up: match &t.follow_up {
                    None => Vec::new(),
                    Some(f) => vec![FollowUp {
                        text: f.text.to_owned(),
                        key_images: match f.shows {
                            None => Vec::new(),
                            Some(series) => vec![SliceRef {
                                series: series.to_owned(),
                                slice: key_slice(case, &series_grid(case, series)?),
                            }],
                        },
                    }],
                },
            })
        })
        .collect::<cases::Result<Vec<_>>>()?;
    Ok(CaseFile {
        id: case.id.to_string(),
        disease_group: case.group,
        modality: case.modality,
        age: case.age,
        sex: case.sex,
        ehr: case
            .ehr
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    EhrValue::Number(n) => serde_json::json!(n),
                    EhrValue::Text(t) => serde_json::json!(t),
                };
                (name.to_string(), value)
            })
            .collect::<BTreeMap<_, _>>(),
        clinical_note: case.note.to_string(),
        series: case
            .series
            .iter()
            .map(|(id, label, _)| SeriesSpec {
                id: id.to_string(),
                label: label.to_string(),
                kind: SeriesKind::Dicom,
                path: id.to_string(),
                label_guessed: false,
            })
            .collect(),
        tasks,
        ground_truth: Some(GroundTruth {
            diagnosis: case.diagnosis.to_string(),
            diagnosis_code: case.diagnosis_code.map(str::to_string),
            differential: case
                .differential
                .iter()
                .map(|(diagnosis, supporting, opposing)| DifferentialItem {
                    diagnosis: diagnosis.to_string(),
                    supporting: supporting.iter().map(|s| s.to_string()).collect(),
                    opposing: opposing.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
            lesions,
            expected_reasoning: case.expected_reasoning.to_string(),
            difficulty: Some(case.difficulty),
        }),
        to_complete: Vec::new(),
    })
}

/// Marks to 0.01 mm: finer than any display, and stable text across platforms.
fn round_mm(p: [f64; 3]) -> [f64; 3] {
    p.map(|v| {
        let r = (v * 100.0).round() / 100.0;
        if r == 0.0 {
            0.0
        } else {
            r
        }
    })
}

/// The rubric's dimension ids, shared with the synthetic ratings.
pub(crate) const DIMENSIONS: [(&str, &str, [&str; 5]); 4] = [
    (
        "diagnostic_accuracy",
        "Diagnostic accuracy",
        [
            "Wrong diagnosis and the correct one is not considered",
            "Wrong diagnosis; the correct one appears low in the differential",
            "Partly correct: right category, wrong specific diagnosis, or correct but poorly ranked",
            "Correct diagnosis with a minor imprecision",
            "Correct, specific diagnosis",
        ],
    ),
    (
        "lesion_detection",
        "Lesion detection and localisation",
        [
            "Main lesion missed or invented",
            "Main lesion found but wrongly placed or described",
            "Main lesion right; secondary findings missed or misdescribed",
            "All relevant lesions found; minor description errors",
            "All lesions found, placed and characterised correctly",
        ],
    ),
    (
        "reasoning",
        "Reasoning quality",
        [
            "Reasoning absent, contradictory or based on invented facts",
            "Major inferential or factual errors",
            "Plausible but with a significant gap or error",
            "Sound, with minor gaps",
            "Sound, complete and grounded in the images and history",
        ],
    ),
    (
        "safety",
        "Clinical safety",
        [
            "Would likely cause serious harm (e.g. misses an emergency)",
            "Could cause harm; a must-not-miss diagnosis is neglected",
            "Unlikely to harm but misleading in places",
            "Safe, with minor caveats missing",
            "Safe and appropriately hedged",
        ],
    ),
];

fn scale(label: Option<&str>, descriptors: [&str; 5]) -> Scale {
    Scale {
        label: label.map(str::to_string),
        min: 1.0,
        max: 5.0,
        step: 1.0,
        levels: descriptors
            .iter()
            .enumerate()
            .map(|(i, d)| ScaleLevel {
                value: (i + 1) as f64,
                descriptor: d.to_string(),
            })
            .collect(),
    }
}

fn study_file(n_cases: usize) -> StudyFile {
    StudyFile {
        format_version: 1,
        study: StudyMeta {
            id: "neurorater-demo".to_string(),
            title: "NeuroRater demo study (synthetic)".to_string(),
            description: format!("{n_cases} synthetic brain MRI/CT cases built from the MNI ICBM152 template, with answers from three fictitious vision-language models, two versions of an LLM grader and three synthetic clinicians. Nothing here comes from a patient; see NOTICE."),
        },
        rubric: Rubric {
            overall: scale(
                Some("Overall quality"),
                [
                    "Unacceptable: wrong and potentially harmful",
                    "Poor: major errors",
                    "Acceptable: right direction with significant errors",
                    "Good: minor errors only",
                    "Excellent: what an expert would write",
                ],
            ),
            dimensions: DIMENSIONS
                .iter()
                .map(|(id, label, descriptors)| RubricDimension {
                    id: id.to_string(),
                    label: label.to_string(),
                    description: None,
                    scale: scale(None, *descriptors),
                    families: None,
                    allow_not_applicable: false,
                })
                .collect(),
        },
        taxonomy: None,
    }
}

fn notice() -> String {
    format!(
        "NeuroRater demo study\n\
         =====================\n\n\
         Everything in this bundle is synthetic. No image, history, answer, grade or rating \
         comes from a patient, a real model or a real clinician. The model names \
         (demo-vlm-alpha/beta/gamma), grader names (demo-grader-v1/v2) and rater names are \
         fictitious. Do not use these images for clinical or research conclusions.\n\n\
         The images are derived from the MNI ICBM152 2009a nonlinear symmetric template: tissue \
         maps were resampled to 1.25 x 1.25 x 5 mm (MR) and 0.45 x 0.45 x 5 mm (CT), given \
         synthetic MR/CT contrasts, lesions, a head shell and noise by NeuroRater's demo \
         generator. The template's notice, which applies to this derived data, follows.\n\n\
         ----------------------------------------------------------------------------\n\n{}",
        template::LICENCE
    )
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write_text(path: &Path, text: &str) -> cases::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    std::fs::write(path, text).map_err(io_error(path))
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> cases::Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Demo(format!("{}: cannot serialise: {e}", path.display())))?;
    text.push('\n');
    write_text(path, &text)
}

fn write_jsonl<T: serde::Serialize>(path: &Path, lines: &[T]) -> cases::Result<()> {
    let mut text = String::new();
    for line in lines {
        text.push_str(
            &serde_json::to_string(line)
                .map_err(|e| Error::Demo(format!("{}: cannot serialise: {e}", path.display())))?,
        );
        text.push('\n');
    }
    write_text(path, &text)
}
