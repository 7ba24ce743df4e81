//! The study model as curators write it in a bundle and as the store keeps it.
//!
//! These types are the serde shape of the bundle files (`docs/bundle.md` documents every field);
//! the store flattens them into tables. Enums use the snake_case spelling of the bundle.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `study.json`: what the study is, how answers are scored and which errors can be labelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    pub format_version: u32,
    pub study: StudyMeta,
    pub rubric: Rubric,
    /// Absent means the default taxonomy of `docs/taxonomy.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taxonomy: Option<Taxonomy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyMeta {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct Rubric {
    /// The overall score; grader `score` and a rater's overall score use this scale.
    pub overall: Scale,
    #[serde(default)]
    pub dimensions: Vec<RubricDimension>,
}

// No deny_unknown_fields: serde cannot combine it with the flattened scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RubricDimension {
    pub id: String,
    pub label: String,
    /// What the dimension asks the rater to judge, shown beside its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub scale: Scale,
    /// The task families the dimension is scored on; absent: every family. A rating of a task
    /// of another family neither needs nor accepts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub families: Option<Vec<TaskFamily>>,
    /// A rater may mark the dimension "not applicable" instead of scoring it (stored as its own
    /// state, never as a number, so agreement statistics see only scores).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_not_applicable: bool,
}

impl RubricDimension {
    /// Whether a task of `family` is scored on this dimension.
    pub fn applies_to(&self, family: TaskFamily) -> bool {
        self.families
            .as_ref()
            .is_none_or(|families| families.contains(&family))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Scale {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub min: f64,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub max: f64,
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub step: f64,
    /// One descriptor per level, shown beside the score buttons.
    #[serde(default)]
    pub levels: Vec<ScaleLevel>,
}

impl Scale {
    /// Whether `value` is one of the scale's levels (min, min+step, …, max).
    pub fn admits(&self, value: f64) -> bool {
        if !value.is_finite() || value < self.min - 1e-9 || value > self.max + 1e-9 {
            return false;
        }
        let steps = (value - self.min) / self.step;
        (steps - steps.round()).abs() < 1e-6
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct ScaleLevel {
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub value: f64,
    pub descriptor: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Taxonomy {
    pub id: String,
    pub categories: Vec<ErrorCategory>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorCategory {
    /// Stable code (P1, R2, …): exports and grader `errors[].category` use it.
    pub code: String,
    pub name: String,
    pub definition: String,
    pub anchor: Anchor,
    /// Neural-MedBench roll-up bucket.
    pub bucket: Bucket,
}

/// Where an error of a category is pointed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    Image,
    Text,
    TextImage,
    TextSeries,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    Perceptual,
    Hallucination,
    Grounding,
    Reasoning,
    Knowledge,
    Confidence,
}

/// `cases/<dir>/case.json`: one patient presentation with its images and tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub id: String,
    pub disease_group: DiseaseGroup,
    pub modality: Modality,
    pub age: u32,
    pub sex: Sex,
    /// Structured EHR fields as the curator names them (e.g. "EDSS", "NIHSS", "onset_hours").
    #[serde(default)]
    pub ehr: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub clinical_note: String,
    pub series: Vec<SeriesSpec>,
    pub tasks: Vec<TaskSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<GroundTruth>,
    /// What a curator still has to fill in or confirm (`neurorater scaffold` writes it: the scan
    /// cannot know the disease group, the tasks or the note). Empty for a finished case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to_complete: Vec<ToComplete>,
}

/// A part of a case that a person has to complete or check before the study runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ToComplete {
    /// `disease_group` holds a placeholder (`other_abnormality`).
    DiseaseGroup,
    /// No task yet.
    Tasks,
    /// No clinical note yet.
    ClinicalNote,
    /// `age` is 0 because the images did not say.
    Age,
    /// The series labels are guesses from the images' headers.
    SeriesLabels,
    /// A series says its pixels carry burned-in text (BurnedInAnnotation YES) or is a secondary
    /// capture: a person must look at every image for names or dates before sharing.
    BurnedInAnnotation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DiseaseGroup {
    MultipleSclerosis,
    Stroke,
    Tumour,
    OtherAbnormality,
    Normal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Modality {
    MR,
    CT,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Sex {
    F,
    M,
    /// Other or not recorded.
    O,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    /// Unique within the case; tasks and marks refer to it.
    pub id: String,
    /// Sequence or kind as a reader names it: T1, T2, FLAIR, DWI, ADC, SWI, CT…
    pub label: String,
    pub kind: SeriesKind,
    /// Relative to the case directory: a folder for `dicom` and `key_images`, a file for `nifti`.
    pub path: String,
    /// The label was guessed from the images' headers (`neurorater scaffold`), not given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub label_guessed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SeriesKind {
    Dicom,
    Nifti,
    KeyImages,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Unique within the case.
    pub id: String,
    pub family: TaskFamily,
    /// 1 direct, 2 complex, 3 multi-turn.
    pub level: u8,
    pub prompt: String,
    /// The slices the model was shown.
    #[serde(default)]
    pub key_images: Vec<SliceRef>,
    /// Level 3 (a consultation): the user's follow-up turns, sent one by one after each of the
    /// model's replies when NeuroRater runs the model (`neurorater respond`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_up: Vec<FollowUp>,
}

/// One follow-up turn of a level-3 consultation's script: what the clinician says, and the slices
/// shown with it when the follow-up brings new evidence (another series, a new scan). In
/// `case.json` it is a string (no images, the original form) or `{"text", "key_images"}`, and it
/// is written back the same way, so scripts without images read as they always did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    pub text: String,
    pub key_images: Vec<SliceRef>,
}

impl FollowUp {
    pub fn text(text: impl Into<String>) -> Self {
        FollowUp {
            text: text.into(),
            key_images: Vec::new(),
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FollowUpObject {
    text: String,
    #[serde(default)]
    key_images: Vec<SliceRef>,
}

impl Serialize for FollowUp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.key_images.is_empty() {
            serializer.serialize_str(&self.text)
        } else {
            FollowUpObject {
                text: self.text.clone(),
                key_images: self.key_images.clone(),
            }
            .serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for FollowUp {
    // A visitor rather than an untagged enum: a mistake inside the object form is then reported
    // with its own field and message, not as "matched no variant".
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = FollowUp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(r#"the follow-up's text, or {"text": ..., "key_images": [...]}"#)
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<FollowUp, E> {
                Ok(FollowUp::text(text))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<FollowUp, M::Error> {
                let object =
                    FollowUpObject::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(FollowUp {
                    text: object.text,
                    key_images: object.key_images,
                })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TaskFamily {
    DifferentialDiagnosis,
    LesionIdentification,
    RationaleGeneration,
}

/// A slice of a series: `slice` counts from 0 in display order (along the slice normal for DICOM,
/// axial index for NIfTI, file name order for key images).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct SliceRef {
    pub series: String,
    pub slice: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroundTruth {
    pub diagnosis: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis_code: Option<String>,
    #[serde(default)]
    pub differential: Vec<DifferentialItem>,
    #[serde(default)]
    pub lesions: Vec<Lesion>,
    #[serde(default)]
    pub expected_reasoning: String,
    /// 1 direct, 2 complex, 3 multi-turn: how hard a clinician finds the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct DifferentialItem {
    pub diagnosis: String,
    #[serde(default)]
    pub supporting: Vec<String>,
    #[serde(default)]
    pub opposing: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesion {
    pub id: String,
    pub description: String,
    pub marks: Vec<Mark>,
}

/// A mark on the images in patient coordinates (DICOM LPS, millimetres), so it survives zoom,
/// reslicing and viewport changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mark {
    pub series: String,
    pub shape: MarkShape,
    /// Point: one position. Arrow: tail then head. Ellipse: centre then two semi-axis ends.
    /// Freehand: the outline in order.
    pub points_mm: Vec<[f64; 3]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkShape {
    Point,
    Arrow,
    Ellipse,
    Freehand,
}

/// One line of `responses.jsonl` (docs/formats.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseLine {
    pub case_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<Vec<Turn>>,
    /// Unknown fields are kept, not rejected.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub role: String,
    pub content: String,
    /// Slices shown with this turn (a follow-up that brings another series or a new scan); the
    /// reading room shows them when the rater reads the turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_images: Vec<SliceRef>,
}

impl Turn {
    /// A turn without images.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Turn {
            role: role.into(),
            content: content.into(),
            key_images: Vec::new(),
        }
    }
}

/// One line of `grader.jsonl` (docs/formats.md §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraderLine {
    pub case_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub grader: String,
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<BTreeMap<String, f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<GraderError>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GraderError {
    pub category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The identity of a model response across files: (case, task, model, sample).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResponseKey {
    pub case_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
}

impl Taxonomy {
    /// The default taxonomy (`docs/taxonomy.md`), used when `study.json` names none.
    pub fn neurorater_default() -> Taxonomy {
        use Anchor::*;
        use Bucket::*;
        let categories = [
            ("P1", "missed finding", "A visible lesion or abnormality is not reported.", Image, Perceptual),
            ("P2", "false negation", "Says a finding that is present is absent.", TextImage, Perceptual),
            ("P3", "hallucinated finding", "Asserts something that is not on the images.", Text, Hallucination),
            ("P4", "anatomical mislocalisation", "Side, lobe, vascular territory or level is wrong.", TextImage, Perceptual),
            ("P5", "mischaracterised appearance", "Signal or density, enhancement, diffusion, size, number or severity is described wrongly.", TextImage, Perceptual),
            ("T1", "sequence or modality misidentification", "Names the wrong sequence, modality or plane (FLAIR called T2, DWI vs ADC, CT vs MR).", TextSeries, Perceptual),
            ("G1", "ungrounded or mis-cited evidence", "The cited slice or region does not show what is claimed.", Text, Grounding),
            ("G2", "invented history", "Invents history, laboratory results or prior studies.", Text, Hallucination),
            ("R1", "faulty inference", "Correct findings, unjustified conclusion.", Text, Reasoning),
            ("R2", "differential error", "A must-not-miss diagnosis is omitted, the ranking is wrong, or the reasoning closes prematurely.", Text, Reasoning),
            ("R3", "internal inconsistency", "Contradicts itself or its own final answer.", Text, Reasoning),
            ("R4", "anchoring", "Does not revise its hypothesis when a later turn brings contradicting evidence (a follow-up scan, a new finding, a clinician's correction).", Text, Reasoning),
            ("K1", "knowledge gap", "States a wrong medical fact or criterion (e.g. McDonald criteria, vascular territories).", Text, Knowledge),
            ("C1", "miscalibrated confidence", "Over- or under-confident, or hedges inappropriately.", Text, Confidence),
        ];
        Taxonomy {
            // v2 added R4 (anchoring). A study keeps the copy stored when it was imported, so
            // labels made under v1 keep their meaning; the id says which list a study has.
            id: "neurorater-default-v2".into(),
            categories: categories
                .into_iter()
                .map(|(code, name, definition, anchor, bucket)| ErrorCategory {
                    code: code.into(),
                    name: name.into(),
                    definition: definition.into(),
                    anchor,
                    bucket,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follow_up_is_a_string_without_images_and_an_object_with_them() {
        let script = r#"["Anything else?", {"text": "And the T2?", "key_images": [{"series": "t2", "slice": 4}]}]"#;
        let read: Vec<FollowUp> = serde_json::from_str(script).unwrap();
        assert_eq!(read[0], FollowUp::text("Anything else?"));
        assert_eq!(read[1].text, "And the T2?");
        assert_eq!(
            read[1].key_images,
            [SliceRef {
                series: "t2".into(),
                slice: 4
            }]
        );
        // Written back in the form it was read in: scripts without images stay strings.
        let written: serde_json::Value = serde_json::to_value(&read).unwrap();
        let original: serde_json::Value = serde_json::from_str(script).unwrap();
        assert_eq!(written, original);
    }

    #[test]
    fn a_mistake_in_a_follow_up_object_names_its_field() {
        let error = serde_json::from_str::<FollowUp>(r#"{"text": "x", "images": []}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown field `images`"), "{error}");
        let error = serde_json::from_str::<FollowUp>("3")
            .unwrap_err()
            .to_string();
        assert!(error.contains("the follow-up's text"), "{error}");
    }
}
