//! The demo cases: what each synthetic patient has, where the generator put it, what a clinician
//! would conclude, and the phrases synthetic model answers are assembled from.
//!
//! Positions are MNI RAS millimetres (x right, y anterior, z superior), the frame the template is
//! in, so lesion placement reads like an atlas; ground-truth marks are converted to DICOM LPS.

use super::synth::*;
use cases::model::{DiseaseGroup, Modality, Sex, TaskFamily};

pub(crate) struct CaseDef {
    pub(crate) id: &'static str,
    pub(crate) group: DiseaseGroup,
    pub(crate) modality: Modality,
    pub(crate) age: u32,
    pub(crate) sex: Sex,
    pub(crate) ehr: &'static [(&'static str, EhrValue)],
    pub(crate) note: &'static str,
    /// (series id, reader's label, what it shows); the first is the one marks are drawn on.
    pub(crate) series: &'static [(&'static str, &'static str, Sequence)],
    pub(crate) deformation: Option<Deformation>,
    pub(crate) lesions: Vec<LesionShape>,
    pub(crate) truth: Vec<TruthLesion>,
    pub(crate) diagnosis: &'static str,
    pub(crate) diagnosis_code: Option<&'static str>,
    /// (diagnosis, supporting, opposing), most likely first.
    pub(crate) differential: &'static [(
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    )],
    pub(crate) expected_reasoning: &'static str,
    pub(crate) difficulty: u8,
    /// Height (RAS z, mm) of the key slice when no lesion defines it.
    pub(crate) key_z: f64,
    pub(crate) tasks: &'static [TaskDef],
    pub(crate) text: AnswerText,
}

#[derive(Clone, Copy)]
pub(crate) enum EhrValue {
    Number(f64),
    Text(&'static str),
}

pub(crate) struct TruthLesion {
    pub(crate) id: &'static str,
    pub(crate) description: &'static str,
    /// Index into [`CaseDef::lesions`] of the shape that defines the mark.
    pub(crate) shape: usize,
}

pub(crate) struct TaskDef {
    pub(crate) id: &'static str,
    pub(crate) family: TaskFamily,
    pub(crate) level: u8,
    pub(crate) prompt: &'static str,
    /// The series whose key slice the model was shown.
    pub(crate) series: &'static str,
    /// Level 3: what the clinician asks after the model's first answer.
    pub(crate) follow_up: Option<FollowUpDef>,
}

/// A level-3 follow-up: the clinician's words and, when the follow-up brings new evidence, the
/// series whose key slice is shown with it.
pub(crate) struct FollowUpDef {
    pub(crate) text: &'static str,
    pub(crate) shows: Option<&'static str>,
}

// Macros, not functions: the catalogue's task lists are promoted to `'static` constants, which
// a function call would prevent.
macro_rules! asks {
    ($text:expr) => {
        Some(FollowUpDef {
            text: $text,
            shows: None,
        })
    };
}

macro_rules! asks_showing {
    ($text:expr, $series:expr) => {
        Some(FollowUpDef {
            text: $text,
            shows: Some($series),
        })
    };
}

/// Phrases a synthetic answer is built from; `None` where an error kind cannot occur (a normal
/// scan has no finding to miss or to mislocalise).
pub(crate) struct AnswerText {
    pub(crate) sequence: &'static str,
    /// T1: the sequence or modality named wrongly.
    pub(crate) sequence_wrong: &'static str,
    pub(crate) finding: &'static str,
    /// P5: appearance, size, number or severity described wrongly.
    pub(crate) finding_wrong: &'static str,
    pub(crate) location: &'static str,
    /// P4.
    pub(crate) location_wrong: Option<&'static str>,
    /// A secondary finding; P1 leaves it out.
    pub(crate) secondary: Option<&'static str>,
    /// P2.
    pub(crate) false_negation: Option<&'static str>,
    /// P3.
    pub(crate) hallucination: &'static str,
    /// G2.
    pub(crate) invented_history: &'static str,
    pub(crate) reasoning: &'static str,
    /// R1.
    pub(crate) reasoning_wrong: &'static str,
    /// K1.
    pub(crate) wrong_fact: &'static str,
    pub(crate) differential: &'static str,
    /// R2.
    pub(crate) differential_wrong: &'static str,
    pub(crate) answer: &'static str,
    pub(crate) answer_wrong: &'static str,
    /// For lesion-identification tasks.
    pub(crate) lesion_answer: &'static str,
    pub(crate) lesion_answer_wrong: &'static str,
    /// What the answer's own rationale must not then contradict (R3 says it is excluded).
    pub(crate) short_name: &'static str,
}

fn blob(
    appearance: Appearance,
    compartment: Compartment,
    centre: [f64; 3],
    semi: [f64; 3],
) -> LesionShape {
    LesionShape {
        shape: Ellipsoid::aligned(centre, semi),
        appearance,
        compartment,
        left_only: None,
    }
}

fn sided(mut lesion: LesionShape, left: bool) -> LesionShape {
    lesion.left_only = Some(left);
    lesion
}

/// An ovoid plaque with its long axis along `direction` (Dawson's fingers run outward from the
/// ventricular wall along the medullary veins).
fn plaque(
    appearance: Appearance,
    centre: [f64; 3],
    direction: [f64; 3],
    long: f64,
    short: f64,
) -> LesionShape {
    LesionShape {
        shape: Ellipsoid::oriented(centre, direction, long, short),
        appearance,
        compartment: Compartment::Parenchyma,
        left_only: None,
    }
}

fn truth(id: &'static str, description: &'static str, shape: usize) -> TruthLesion {
    TruthLesion {
        id,
        description,
        shape,
    }
}

use DiseaseGroup as G;
use TaskFamily as F;

const MR_BASIC: &[(&str, &str, Sequence)] = &[
    ("flair", "FLAIR", Sequence::Flair),
    ("t2", "T2", Sequence::T2),
    ("t1", "T1", Sequence::T1),
];
const CT_ONLY: &[(&str, &str, Sequence)] = &[("ct", "CT", Sequence::Ct)];
const STROKE_MR: &[(&str, &str, Sequence)] = &[
    ("dwi", "DWI", Sequence::Dwi),
    ("adc", "ADC", Sequence::Adc),
    ("flair", "FLAIR", Sequence::Flair),
];

pub(crate) fn cases() -> Vec<CaseDef> {
    vec![
        ms_relapsing(),
        ms_progressive(),
        stroke_hyperacute_mca(),
        stroke_ct_mca(),
        stroke_ct_haemorrhage(),
        tumour_glioblastoma(),
        tumour_metastases(),
        other_hydrocephalus(),
        other_meningioma(),
        normal_headache(),
        normal_dizziness(),
        normal_ct_trauma(),
    ]
}

fn ms_relapsing() -> CaseDef {
    CaseDef {
        id: "ms-01",
        group: G::MultipleSclerosis,
        modality: Modality::MR,
        age: 32,
        sex: Sex::F,
        ehr: &[("EDSS", EhrValue::Number(2.0)), ("relapses_last_2_years", EhrValue::Number(2.0)), ("oligoclonal_bands", EhrValue::Text("not tested"))],
        note: "32-year-old woman with subacute right leg numbness over 5 days. Eighteen months ago she had painful visual loss in the left eye that recovered over 6 weeks. No vascular risk factors.",
        series: MR_BASIC,
        deformation: None,
        lesions: vec![
            plaque(PLAQUE, [-21.0, -8.0, 22.0], [-1.0, 0.0, 0.7], 9.0, 3.6),
            plaque(PLAQUE, [22.0, -20.0, 24.0], [1.0, -0.2, 0.7], 9.0, 3.6),
            plaque(PLAQUE, [-20.0, -34.0, 20.0], [-1.0, -0.6, 0.5], 7.0, 3.0),
            plaque(PLAQUE, [19.0, 14.0, 18.0], [1.0, 0.4, 0.5], 6.0, 2.8),
            blob(PLAQUE, Compartment::Parenchyma, [34.0, 30.0, 38.0], [4.5, 3.5, 3.5]),
            blob(PLAQUE, Compartment::Parenchyma, [-14.0, -34.0, -32.0], [4.0, 4.0, 4.0]),
        ],
        truth: vec![
            truth("L1", "Left periventricular ovoid FLAIR-hyperintense plaque perpendicular to the lateral ventricle (Dawson's finger)", 0),
            truth("L2", "Right periventricular ovoid plaque, body of lateral ventricle", 1),
            truth("L3", "Left peritrigonal periventricular plaque", 2),
            truth("L4", "Right frontal horn periventricular plaque", 3),
            truth("L5", "Right frontal juxtacortical plaque", 4),
            truth("L6", "Left middle cerebellar peduncle plaque (infratentorial)", 5),
        ],
        diagnosis: "Relapsing-remitting multiple sclerosis",
        diagnosis_code: Some("G35"),
        differential: &[
            ("Multiple sclerosis", &["periventricular, juxtacortical and infratentorial plaques", "ovoid lesions perpendicular to the ventricles", "young woman with prior optic neuritis"], &[]),
            ("Neuromyelitis optica spectrum disorder", &["optic neuritis history"], &["no longitudinally extensive or area-postrema lesions", "Dawson's fingers are typical of MS, not NMOSD"]),
            ("Acute disseminated encephalomyelitis", &["multifocal white-matter lesions"], &["two separate clinical episodes", "no encephalopathy"]),
            ("Small-vessel ischaemic disease", &["white-matter hyperintensities"], &["age 32 without vascular risk factors", "callososeptal/periventricular ovoid morphology", "infratentorial peduncle lesion"]),
        ],
        expected_reasoning: "Ovoid periventricular plaques perpendicular to the ventricles, a juxtacortical and an infratentorial plaque satisfy dissemination in space (2017 McDonald: at least one T2 lesion in two of four regions). Two clinical attacks (optic neuritis, now sensory myelopathic or hemispheric symptoms) give dissemination in time clinically. Relapsing-remitting MS; NMOSD and ADEM are less likely for the reasons given.",
        difficulty: 2,
        key_z: 22.0,
        tasks: &[
            TaskDef { id: "t1", family: F::LesionIdentification, level: 1, prompt: "Describe the abnormalities on the axial FLAIR: number, location and shape of the lesions.", series: "flair", follow_up: None },
            TaskDef { id: "t2", family: F::DifferentialDiagnosis, level: 2, prompt: "32-year-old woman, right leg numbness for 5 days, left optic neuritis 18 months ago. Using FLAIR, T2 and T1, give a ranked differential diagnosis and state whether MRI dissemination in space is met.", series: "flair", follow_up: None },
        ],
        text: AnswerText {
            sequence: "On the axial FLAIR images",
            sequence_wrong: "On the axial T1-weighted images",
            finding: "there are at least four ovoid hyperintense white-matter lesions",
            finding_wrong: "there is a single large confluent hypointense lesion with restricted diffusion",
            location: "abutting the lateral ventricles, with their long axes perpendicular to the ventricular wall (Dawson's fingers)",
            location_wrong: Some("in the subcortical white matter of the left temporal lobe, sparing the periventricular region"),
            secondary: Some("a further juxtacortical lesion lies in the right frontal lobe and one in the left middle cerebellar peduncle"),
            false_negation: Some("The posterior fossa is clear, with no infratentorial lesion."),
            hallucination: "There is also a ring-enhancing lesion in the right thalamus.",
            invented_history: "Her CSF showed unmatched oligoclonal bands last year and a prior spinal MRI showed a cervical cord lesion.",
            reasoning: "Lesions in periventricular, juxtacortical and infratentorial regions meet 2017 McDonald dissemination in space, and two separate attacks give dissemination in time clinically.",
            reasoning_wrong: "Because the lesions touch the ventricles, they must be ischaemic, so a vascular work-up is the priority.",
            wrong_fact: "The McDonald criteria require lesions in all four typical regions before dissemination in space can be accepted.",
            differential: "Differential: 1. multiple sclerosis; 2. NMOSD (less likely, no area-postrema or long cord lesion shown); 3. ADEM; 4. small-vessel disease (unlikely at 32).",
            differential_wrong: "Differential: 1. small-vessel ischaemic disease; 2. migraine-related white-matter change.",
            answer: "Relapsing-remitting multiple sclerosis",
            answer_wrong: "Small-vessel ischaemic disease",
            lesion_answer: "At least six ovoid T2/FLAIR-hyperintense lesions: four periventricular (Dawson's fingers), one right frontal juxtacortical, one left middle cerebellar peduncle.",
            lesion_answer_wrong: "Two nonspecific subcortical white-matter hyperintensities in the left temporal lobe.",
            short_name: "multiple sclerosis",
        },
    }
}

/// Common wording of normal scans, where only text errors can be planted.
const NORMAL_SEQUENCE_FINDING: &str = "the brain parenchyma is of normal signal, the grey-white differentiation is preserved and there is no mass, haemorrhage or restricted diffusion";

fn ms_progressive() -> CaseDef {
    let mut lesions = Vec::new();
    for (i, (x, y, z)) in [
        (-24.0, -10.0, 24.0),
        (25.0, -12.0, 26.0),
        (-22.0, -36.0, 18.0),
        (23.0, -34.0, 20.0),
        (-20.0, 12.0, 16.0),
        (21.0, 10.0, 18.0),
        (-26.0, -22.0, 32.0),
        (27.0, -24.0, 34.0),
    ]
    .into_iter()
    .enumerate()
    {
        let side = if x < 0.0 { -1.0 } else { 1.0 };
        let appearance = if i % 3 == 0 { BLACK_HOLE } else { PLAQUE };
        lesions.push(plaque(appearance, [x, y, z], [side, 0.0, 0.6], 11.0, 4.5));
    }
    CaseDef {
        id: "ms-02",
        group: G::MultipleSclerosis,
        modality: Modality::MR,
        age: 47,
        sex: Sex::M,
        ehr: &[("EDSS", EhrValue::Number(5.5)), ("disease_duration_years", EhrValue::Number(16.0))],
        note: "47-year-old man, multiple sclerosis diagnosed 16 years ago, relapsing course for 10 years, now steadily worsening gait over 3 years without relapses. Walks 100 m with a stick.",
        series: &[("flair", "FLAIR", Sequence::Flair), ("t1", "T1", Sequence::T1)],
        deformation: None,
        lesions,
        truth: vec![
            truth("L1", "Confluent left periventricular plaque with T1 black hole", 0),
            truth("L2", "Confluent right periventricular plaque", 1),
            truth("L3", "Left peritrigonal black hole", 3),
        ],
        diagnosis: "Secondary progressive multiple sclerosis",
        diagnosis_code: Some("G35"),
        differential: &[
            ("Secondary progressive multiple sclerosis", &["high, partly confluent periventricular lesion load", "T1 black holes", "relapsing then progressive course"], &[]),
            ("Primary progressive multiple sclerosis", &["progressive disability"], &["initial relapsing course"]),
            ("Small-vessel ischaemic disease", &["confluent white-matter change"], &["Dawson's-finger morphology", "black holes", "age and history"]),
        ],
        expected_reasoning: "Numerous confluent periventricular plaques with T1 black holes (axonal loss) and a relapsing course followed by progression without relapses define secondary progressive MS. No new inflammatory activity can be judged without contrast or a prior scan.",
        difficulty: 1,
        key_z: 24.0,
        tasks: &[
            TaskDef { id: "t1", family: F::DifferentialDiagnosis, level: 1, prompt: "What is the most likely diagnosis? FLAIR and T1 are provided.", series: "flair", follow_up: None },
            TaskDef { id: "t2", family: F::RationaleGeneration, level: 3, prompt: "Review the FLAIR and T1 with me. What do the T1-hypointense lesions mean?", series: "t1", follow_up: asks!("He asks whether this scan shows active disease. Can you tell from these sequences?") },
        ],
        text: AnswerText {
            sequence: "On FLAIR",
            sequence_wrong: "On the T2-weighted images",
            finding: "there are numerous ovoid and partly confluent hyperintense plaques, several of them markedly hypointense on T1 (black holes),",
            finding_wrong: "there are two tiny punctate hyperintensities without any T1 correlate",
            location: "around the bodies and trigones of both lateral ventricles",
            location_wrong: Some("confined to the pons and cerebellum"),
            secondary: Some("the lateral ventricles are mildly enlarged, in keeping with atrophy"),
            false_negation: Some("None of the lesions is hypointense on T1."),
            hallucination: "There is also a new enhancing lesion in the left centrum semiovale.",
            invented_history: "His last MRI six months ago showed two new lesions and his CSF IgG index is raised.",
            reasoning: "A high lesion load with black holes and a progressive course after years of relapses indicates secondary progressive MS.",
            reasoning_wrong: "The confluence of lesions shows that this is primary progressive disease.",
            wrong_fact: "T1 black holes indicate acute, reversible inflammation.",
            differential: "Differential: 1. secondary progressive MS; 2. primary progressive MS (history argues against); 3. small-vessel disease (morphology argues against).",
            differential_wrong: "Differential: 1. small-vessel disease; 2. CADASIL.",
            answer: "Secondary progressive multiple sclerosis",
            answer_wrong: "Cerebral small-vessel disease",
            lesion_answer: "Numerous periventricular confluent plaques with T1 black holes.",
            lesion_answer_wrong: "Two punctate nonspecific white-matter foci.",
            short_name: "multiple sclerosis",
        },
    }
}

/// Left MCA territory: lateral frontal, insular, temporal and parietal cortex with the
/// underlying white matter, kept left of the midline.
fn left_mca(appearance: Appearance, centre: [f64; 3], semi: [f64; 3]) -> LesionShape {
    sided(
        blob(appearance, Compartment::Parenchyma, centre, semi),
        true,
    )
}

fn stroke_hyperacute_mca() -> CaseDef {
    CaseDef {
        id: "stroke-01",
        group: G::Stroke,
        modality: Modality::MR,
        age: 68,
        sex: Sex::M,
        ehr: &[("NIHSS", EhrValue::Number(14.0)), ("onset_hours", EhrValue::Number(2.5)), ("atrial_fibrillation", EhrValue::Text("yes, not anticoagulated"))],
        note: "68-year-old man found with right-sided weakness and difficulty speaking; last seen well 2.5 hours ago. Atrial fibrillation, not anticoagulated. Blood pressure 170/95.",
        series: STROKE_MR,
        deformation: None,
        lesions: vec![left_mca(HYPERACUTE_INFARCT, [-44.0, -6.0, 12.0], [17.0, 28.0, 20.0])],
        truth: vec![truth("L1", "Acute left MCA territory infarct: DWI bright, ADC dark, FLAIR not yet bright (DWI-FLAIR mismatch)", 0)],
        diagnosis: "Hyperacute left middle cerebral artery territory ischaemic stroke",
        diagnosis_code: Some("I63.4"),
        differential: &[
            ("Acute left MCA ischaemic stroke", &["restricted diffusion in a vascular territory", "sudden aphasia and right hemiparesis", "atrial fibrillation"], &[]),
            ("Seizure with postictal change", &["cortical diffusion change can occur"], &["territorial, cortical-subcortical wedge", "no seizure history"]),
            ("Hemiplegic migraine", &["focal deficit"], &["age", "restricted diffusion"]),
        ],
        expected_reasoning: "Restricted diffusion (DWI bright, ADC dark) in the left MCA territory with no corresponding FLAIR hyperintensity (DWI-FLAIR mismatch) indicates an infarct probably under 4.5 hours old, consistent with the 2.5-hour history; cardioembolism from atrial fibrillation is the likely mechanism. Imaging does not contraindicate thrombolysis; vessel imaging for thrombectomy is needed.",
        difficulty: 2,
        key_z: 12.0,
        tasks: &[
            TaskDef { id: "t1", family: F::LesionIdentification, level: 1, prompt: "Where is the abnormality on DWI/ADC, and which vascular territory is involved?", series: "dwi", follow_up: None },
            TaskDef { id: "t2", family: F::RationaleGeneration, level: 2, prompt: "Onset 2.5 hours ago, NIHSS 14. Based on DWI, ADC and FLAIR, is there an imaging reason not to thrombolyse? Explain your reasoning.", series: "flair", follow_up: None },
        ],
        text: AnswerText {
            sequence: "On DWI with the ADC map",
            sequence_wrong: "On the ADC map alone, read as if it were DWI",
            finding: "there is a large area of restricted diffusion (bright on DWI, dark on ADC) without FLAIR hyperintensity",
            finding_wrong: "there is a small area of facilitated diffusion that is already markedly FLAIR hyperintense",
            location: "in the left middle cerebral artery territory, involving the insula and the lateral frontal and temporal cortex",
            location_wrong: Some("in the right posterior cerebral artery territory"),
            secondary: Some("there is no haemorrhage and the basal ganglia are partly spared"),
            false_negation: Some("There is no restricted diffusion."),
            hallucination: "There is a chronic lacunar infarct in the right thalamus.",
            invented_history: "A CT angiogram earlier today showed a left M1 occlusion and his INR was 2.8.",
            reasoning: "The DWI-FLAIR mismatch indicates an infarct less than about 4.5 hours old, so imaging supports thrombolysis in the time window.",
            reasoning_wrong: "Because the infarct is large, it must be more than 24 hours old and thrombolysis is contraindicated.",
            wrong_fact: "The left middle cerebral artery supplies the occipital lobe and the medial temporal lobe.",
            differential: "Differential: 1. acute left MCA ischaemic stroke (cardioembolic); 2. postictal change (unlikely); 3. hemiplegic migraine (unlikely).",
            differential_wrong: "Differential: 1. hemiplegic migraine; 2. Todd's paresis.",
            answer: "Hyperacute left MCA infarct; no imaging contraindication to thrombolysis",
            answer_wrong: "Old infarct; thrombolysis contraindicated",
            lesion_answer: "Left MCA territory restricted diffusion (insula, lateral frontal and temporal lobes), FLAIR-negative.",
            lesion_answer_wrong: "Right PCA territory FLAIR-bright infarct.",
            short_name: "an acute ischaemic stroke",
        },
    }
}

fn stroke_ct_mca() -> CaseDef {
    CaseDef {
        id: "stroke-02",
        group: G::Stroke,
        modality: Modality::CT,
        age: 74,
        sex: Sex::F,
        ehr: &[("NIHSS", EhrValue::Number(11.0)), ("onset_hours", EhrValue::Number(10.0))],
        note: "74-year-old woman woke with right arm and face weakness and word-finding difficulty; last seen well 10 hours ago. Hypertension, diabetes.",
        series: CT_ONLY,
        deformation: None,
        lesions: vec![left_mca(ACUTE_INFARCT, [-42.0, -2.0, 14.0], [16.0, 26.0, 18.0])],
        truth: vec![truth("L1", "Left MCA territory hypodensity (~20 HU) with loss of grey-white differentiation and insular ribbon", 0)],
        diagnosis: "Acute left middle cerebral artery territory ischaemic infarct",
        diagnosis_code: Some("I63.5"),
        differential: &[
            ("Acute left MCA infarct", &["territorial hypodensity", "loss of insular ribbon", "wake-up stroke history"], &[]),
            ("Low-grade glioma", &["hypodensity"], &["sudden onset", "vascular-territory shape"]),
        ],
        expected_reasoning: "A wedge of hypodensity with loss of grey-white differentiation in the left MCA territory is an established acute infarct, more than a few hours old, matching the 10-hour history. No haemorrhage. Established hypodensity over more than a third of the territory argues against thrombolysis.",
        difficulty: 2,
        key_z: 14.0,
        tasks: &[
            TaskDef { id: "t1", family: F::LesionIdentification, level: 1, prompt: "Non-contrast head CT. Describe any abnormality and its location.", series: "ct", follow_up: None },
            TaskDef { id: "t2", family: F::DifferentialDiagnosis, level: 3, prompt: "Non-contrast CT of a 74-year-old woman with right-sided weakness on waking. What is your diagnosis?", series: "ct", follow_up: asks!("She was last seen well 10 hours ago. Does the extent of the hypodensity change management?") },
        ],
        text: AnswerText {
            sequence: "On the non-contrast CT",
            sequence_wrong: "On this T2-weighted MRI",
            finding: "there is a wedge of hypodensity (about 20 HU) with loss of grey-white differentiation and of the insular ribbon",
            finding_wrong: "there is a hyperdense haematoma of about 70 HU",
            location: "in the left MCA territory",
            location_wrong: Some("in the right frontal lobe, anterior cerebral artery territory"),
            secondary: Some("there is mild local sulcal effacement without midline shift"),
            false_negation: Some("Grey-white differentiation is preserved throughout."),
            hallucination: "There is a hyperdense left middle cerebral artery with calcified thrombus extending into the carotid.",
            invented_history: "An MRI two days ago was reported as normal.",
            reasoning: "Established hypodensity means the infarct is several hours old; its extent (more than a third of the MCA territory) argues against thrombolysis.",
            reasoning_wrong: "Since there is no haemorrhage, thrombolysis is safe regardless of the hypodensity.",
            wrong_fact: "Acute infarcts are hyperdense on CT in the first 24 hours.",
            differential: "Differential: 1. acute left MCA infarct; 2. glioma (unlikely given sudden onset).",
            differential_wrong: "Differential: 1. low-grade glioma; 2. cerebritis.",
            answer: "Acute left MCA territory infarct, established hypodensity",
            answer_wrong: "Left frontal low-grade glioma",
            lesion_answer: "Left MCA territory hypodensity with loss of grey-white differentiation and insular ribbon.",
            lesion_answer_wrong: "Right frontal hyperdense haematoma.",
            short_name: "an ischaemic infarct",
        },
    }
}

fn stroke_ct_haemorrhage() -> CaseDef {
    CaseDef {
        id: "stroke-03",
        group: G::Stroke,
        modality: Modality::CT,
        age: 63,
        sex: Sex::M,
        ehr: &[("GCS", EhrValue::Number(13.0)), ("systolic_bp", EhrValue::Number(210.0)), ("onset_hours", EhrValue::Number(1.5))],
        note: "63-year-old man with sudden headache, vomiting and left-sided weakness 90 minutes ago. Long-standing poorly controlled hypertension. Not anticoagulated.",
        series: CT_ONLY,
        deformation: Some(Deformation::Mass { centre_ras: [24.0, 2.0, 2.0], radius: 8.0, reach: 18.0 }),
        lesions: vec![
            blob(OEDEMA, Compartment::Parenchyma, [24.0, 2.0, 2.0], [13.0, 17.0, 12.0]),
            blob(HAEMATOMA, Compartment::Parenchyma, [24.0, 2.0, 2.0], [10.0, 14.0, 9.0]),
        ],
        truth: vec![truth("L1", "Acute right putaminal haematoma (~70 HU) with a thin oedema rim", 1)],
        diagnosis: "Acute hypertensive intracerebral haemorrhage, right putamen",
        diagnosis_code: Some("I61.0"),
        differential: &[
            ("Hypertensive haemorrhage", &["deep (putaminal) location", "severe hypertension", "age"], &[]),
            ("Haemorrhage into a tumour", &["haemorrhage"], &["no mass beyond the clot", "typical hypertensive site"]),
            ("Cerebral amyloid angiopathy", &["haemorrhage in an older adult"], &["deep rather than lobar location"]),
        ],
        expected_reasoning: "A hyperdense (~70 HU) clot in the right putamen with mild mass effect in a hypertensive patient is a typical hypertensive haemorrhage. Deep location argues against amyloid angiopathy (lobar). Urgent blood pressure control; CTA for a spot sign or an underlying lesion.",
        difficulty: 1,
        key_z: 2.0,
        tasks: &[
            TaskDef { id: "t1", family: F::DifferentialDiagnosis, level: 2, prompt: "63-year-old hypertensive man with sudden headache and left weakness. Non-contrast CT: what is the diagnosis, the likely cause, and what would make you doubt it?", series: "ct", follow_up: None },
            TaskDef { id: "t2", family: F::LesionIdentification, level: 1, prompt: "Describe the abnormality on this CT: density, location, size, mass effect.", series: "ct", follow_up: None },
        ],
        text: AnswerText {
            sequence: "On the non-contrast CT",
            sequence_wrong: "On the diffusion-weighted MRI",
            finding: "there is an oval hyperdense haematoma of about 70 HU and 2 x 3 cm with a thin hypodense oedema rim",
            finding_wrong: "there is a hypodense area of about 15 HU",
            location: "centred on the right putamen, with slight effacement of the right lateral ventricle",
            location_wrong: Some("in the left thalamus"),
            secondary: Some("there is no intraventricular extension"),
            false_negation: Some("There is no intracranial haemorrhage."),
            hallucination: "There is also a subdural haematoma over the left convexity.",
            invented_history: "He takes apixaban for atrial fibrillation.",
            reasoning: "A deep haematoma in a patient with severe hypertension is most likely hypertensive; CTA should look for a spot sign or vascular malformation.",
            reasoning_wrong: "Because the haematoma is hyperdense, it must be a haemorrhagic tumour.",
            wrong_fact: "Cerebral amyloid angiopathy typically causes deep basal-ganglia haemorrhage.",
            differential: "Differential: 1. hypertensive haemorrhage; 2. haemorrhage into a tumour or vascular malformation; 3. amyloid angiopathy (less likely, deep site).",
            differential_wrong: "Differential: 1. haemorrhagic transformation of an infarct, only.",
            answer: "Acute right putaminal hypertensive intracerebral haemorrhage",
            answer_wrong: "Right basal-ganglia acute ischaemic infarct",
            lesion_answer: "Right putaminal hyperdense haematoma (~70 HU), about 2 x 3 cm, thin oedema rim, mild mass effect, no intraventricular extension.",
            lesion_answer_wrong: "Left thalamic hypodense infarct.",
            short_name: "a haemorrhage",
        },
    }
}

fn tumour_glioblastoma() -> CaseDef {
    let centre = [30.0, 22.0, 26.0];
    CaseDef {
        id: "tumour-01",
        group: G::Tumour,
        modality: Modality::MR,
        age: 58,
        sex: Sex::M,
        ehr: &[("KPS", EhrValue::Number(70.0)), ("symptom_weeks", EhrValue::Number(6.0))],
        note: "58-year-old man with six weeks of headache, personality change noticed by his wife and a first generalised seizure yesterday.",
        series: MR_BASIC,
        deformation: Some(Deformation::Mass { centre_ras: centre, radius: 13.0, reach: 30.0 }),
        lesions: vec![
            blob(OEDEMA, Compartment::WhiteMatter, [30.0, 18.0, 24.0], [26.0, 34.0, 24.0]),
            blob(SOLID_TUMOUR, Compartment::Parenchyma, centre, [15.0, 16.0, 14.0]),
            blob(NECROSIS, Compartment::Parenchyma, centre, [8.0, 9.0, 7.0]),
        ],
        truth: vec![
            truth("L1", "Right frontal heterogeneous mass with central necrosis", 1),
            truth("L2", "Surrounding vasogenic oedema with mass effect and leftward midline shift", 0),
        ],
        diagnosis: "Right frontal glioblastoma (IDH-wildtype, presumed)",
        diagnosis_code: Some("C71.1"),
        differential: &[
            ("Glioblastoma", &["solitary heterogeneous mass with necrosis", "extensive oedema and mass effect", "age 58"], &[]),
            ("Solitary metastasis", &["necrotic mass with oedema"], &["no known primary", "infiltrative margins"]),
            ("Cerebral abscess", &["ring lesion with oedema"], &["no fever", "necrosis not restricted on DWI (not shown)"]),
            ("Primary CNS lymphoma", &["frontal mass in older adult"], &["central necrosis is atypical in immunocompetent patients"]),
        ],
        expected_reasoning: "A solitary right frontal mass with central necrosis, T2/FLAIR-bright vasogenic oedema and mass effect (midline shift) in a 58-year-old is most likely glioblastoma; metastasis and abscess are the main alternatives; contrast-enhanced MRI, DWI and perfusion would help, and the mass effect needs urgent steroids and neurosurgical review.",
        difficulty: 2,
        key_z: 26.0,
        tasks: &[
            TaskDef { id: "t1", family: F::DifferentialDiagnosis, level: 2, prompt: "58-year-old man, personality change and a first seizure. Non-contrast T1, T2 and FLAIR: ranked differential with reasons.", series: "flair", follow_up: None },
            TaskDef { id: "t2", family: F::LesionIdentification, level: 1, prompt: "Describe the lesion on FLAIR and T2: site, components, mass effect.", series: "t2", follow_up: None },
        ],
        text: AnswerText {
            sequence: "On T2 and FLAIR",
            sequence_wrong: "On the contrast-enhanced T1",
            finding: "there is a 3 cm heterogeneous mass with a fluid-bright necrotic centre, surrounded by extensive hyperintense vasogenic oedema,",
            finding_wrong: "there is a small homogeneous cystic lesion without surrounding oedema",
            location: "in the right frontal lobe, compressing the right lateral ventricle with leftward midline shift",
            location_wrong: Some("in the left parietal lobe"),
            secondary: Some("the right frontal horn is effaced"),
            false_negation: Some("There is no midline shift."),
            hallucination: "There is a second, smaller lesion in the left cerebellar hemisphere.",
            invented_history: "He had a melanoma excised from his back three years ago.",
            reasoning: "A solitary necrotic mass with extensive oedema and mass effect at this age is most likely glioblastoma; metastasis and abscess remain the alternatives.",
            reasoning_wrong: "The oedema proves this is a metastasis rather than a primary tumour.",
            wrong_fact: "Glioblastoma typically arises in the cerebellum in adults.",
            differential: "Differential: 1. glioblastoma; 2. solitary metastasis; 3. abscess; 4. lymphoma.",
            differential_wrong: "Differential: 1. glioblastoma, no alternative needs consideration.",
            answer: "Right frontal glioblastoma",
            answer_wrong: "Right frontal meningioma",
            lesion_answer: "Right frontal necrotic mass (~3 cm) with extensive vasogenic oedema, effaced right lateral ventricle and leftward midline shift.",
            lesion_answer_wrong: "Small left parietal cyst without mass effect.",
            short_name: "a glioblastoma",
        },
    }
}

fn tumour_metastases() -> CaseDef {
    let mets = [
        ([-32.0, -58.0, 32.0], 6.0, 15.0),
        ([26.0, 32.0, 12.0], 5.0, 13.0),
        ([-20.0, -62.0, -28.0], 6.0, 11.0),
    ];
    let mut lesions = Vec::new();
    for (centre, core, oedema) in mets {
        lesions.push(blob(
            OEDEMA,
            Compartment::WhiteMatter,
            centre,
            [oedema, oedema * 1.2, oedema],
        ));
        lesions.push(blob(
            SOLID_TUMOUR,
            Compartment::Parenchyma,
            centre,
            [core, core, core],
        ));
    }
    CaseDef {
        id: "tumour-02",
        group: G::Tumour,
        modality: Modality::MR,
        age: 66,
        sex: Sex::F,
        ehr: &[("smoking_pack_years", EhrValue::Number(40.0)), ("weight_loss_kg", EhrValue::Number(6.0))],
        note: "66-year-old woman, heavy smoker, with unsteadiness and headache for three weeks and 6 kg weight loss. Chest X-ray shows a right hilar mass.",
        series: MR_BASIC,
        deformation: None,
        lesions,
        truth: vec![
            truth("L1", "Left parietal metastasis at the grey-white junction with disproportionate oedema", 1),
            truth("L2", "Right frontal metastasis", 3),
            truth("L3", "Left cerebellar metastasis", 5),
        ],
        diagnosis: "Multiple brain metastases (presumed lung primary)",
        diagnosis_code: Some("C79.3"),
        differential: &[
            ("Metastases", &["multiple lesions at the grey-white junction", "oedema out of proportion", "smoker with hilar mass"], &[]),
            ("Multifocal glioblastoma", &["oedema"], &["separate lesions in both hemispheres and cerebellum"]),
            ("Septic emboli / abscesses", &["multiple lesions"], &["no fever or endocarditis"]),
        ],
        expected_reasoning: "Three lesions at the grey-white junction in both hemispheres and the cerebellum, each with oedema out of proportion to its size, in a smoker with a hilar mass are metastases until proven otherwise; the cerebellar lesion explains the unsteadiness and needs watching for hydrocephalus.",
        difficulty: 2,
        key_z: 32.0,
        tasks: &[
            TaskDef { id: "t1", family: F::DifferentialDiagnosis, level: 3, prompt: "66-year-old woman with headache and unsteadiness. What do you see on FLAIR, and what is the diagnosis?", series: "flair", follow_up: asks_showing!("Her chest X-ray shows a right hilar mass. How does that change your assessment?", "t2") },
            TaskDef { id: "t2", family: F::LesionIdentification, level: 2, prompt: "Count and localise every lesion on FLAIR and T2, including the posterior fossa.", series: "flair", follow_up: None },
        ],
        text: AnswerText {
            sequence: "On FLAIR and T2",
            sequence_wrong: "On DWI",
            finding: "there are three rounded lesions, each surrounded by vasogenic oedema out of proportion to its size,",
            finding_wrong: "there is a single lesion without oedema",
            location: "at the grey-white junction of the left parietal and right frontal lobes",
            location_wrong: Some("in the corpus callosum and periventricular white matter"),
            secondary: Some("a third lesion lies in the left cerebellar hemisphere"),
            false_negation: Some("The posterior fossa is normal."),
            hallucination: "There is leptomeningeal enhancement along the brainstem.",
            invented_history: "A PET-CT last month showed adrenal metastases.",
            reasoning: "Multiple lesions at the grey-white junction with disproportionate oedema in a smoker with a hilar mass are metastases until proven otherwise.",
            reasoning_wrong: "Multiple lesions in different territories indicate embolic infarcts.",
            wrong_fact: "Metastases typically spare the grey-white junction and favour the deep white matter.",
            differential: "Differential: 1. metastases (lung primary likely); 2. multifocal glioma; 3. abscesses.",
            differential_wrong: "Differential: 1. multiple sclerosis; 2. small-vessel disease.",
            answer: "Multiple brain metastases, likely from lung cancer",
            answer_wrong: "Multifocal demyelination",
            lesion_answer: "Three lesions with disproportionate oedema: left parietal, right frontal (grey-white junction) and left cerebellar hemisphere.",
            lesion_answer_wrong: "Two supratentorial lesions; posterior fossa clear.",
            short_name: "metastatic disease",
        },
    }
}

fn other_hydrocephalus() -> CaseDef {
    CaseDef {
        id: "other-01",
        group: G::OtherAbnormality,
        modality: Modality::MR,
        age: 76,
        sex: Sex::M,
        ehr: &[("MoCA", EhrValue::Number(21.0)), ("timed_up_and_go_s", EhrValue::Number(19.0))],
        note: "76-year-old man with a year of magnetic, shuffling gait, urinary urgency with incontinence and slowed thinking.",
        series: MR_BASIC,
        deformation: Some(Deformation::Ventriculomegaly { centre_ras: [0.0, -8.0, 16.0], gain: 1.7, reach: 30.0 }),
        lesions: vec![],
        truth: vec![],
        diagnosis: "Normal pressure hydrocephalus",
        diagnosis_code: Some("G91.2"),
        differential: &[
            ("Normal pressure hydrocephalus", &["ventriculomegaly out of proportion to sulcal widening", "gait, urinary and cognitive triad"], &[]),
            ("Atrophy (neurodegenerative)", &["enlarged ventricles in an older adult"], &["sulci not proportionally enlarged"]),
            ("Obstructive hydrocephalus", &["enlarged ventricles"], &["no obstructing lesion", "fourth ventricle not compressed"]),
        ],
        expected_reasoning: "Enlarged lateral and third ventricles out of proportion to the sulci, with the triad of gait apraxia, urinary incontinence and cognitive decline, suggests normal pressure hydrocephalus; a tap test would assess shunt responsiveness.",
        difficulty: 3,
        key_z: 18.0,
        tasks: &[
            TaskDef { id: "t1", family: F::DifferentialDiagnosis, level: 2, prompt: "76-year-old man with gait disturbance, urinary incontinence and cognitive slowing. Review T1, T2 and FLAIR: diagnosis and differential.", series: "t2", follow_up: None },
            TaskDef { id: "t2", family: F::RationaleGeneration, level: 2, prompt: "Explain how you distinguish hydrocephalus from atrophy on these images.", series: "t1", follow_up: None },
        ],
        text: AnswerText {
            sequence: "On T2 and T1",
            sequence_wrong: "On the FLAIR, where the CSF is bright",
            finding: "the lateral and third ventricles are markedly enlarged",
            finding_wrong: "the ventricles are of normal size with mild generalised atrophy",
            location: "out of proportion to the cortical sulci, which are not widened",
            location_wrong: Some("with the fourth ventricle disproportionately dilated and compressed aqueduct"),
            secondary: Some("the frontal horns are rounded"),
            false_negation: Some("The ventricles are not enlarged."),
            hallucination: "There is a colloid cyst obstructing the foramen of Monro.",
            invented_history: "A lumbar puncture last week showed an opening pressure of 35 cmH2O.",
            reasoning: "Ventriculomegaly out of proportion to the sulci with the clinical triad suggests normal pressure hydrocephalus.",
            reasoning_wrong: "Enlarged ventricles in a 76-year-old are simply age-related atrophy, so no further tests are needed.",
            wrong_fact: "Normal pressure hydrocephalus is diagnosed by a raised CSF opening pressure.",
            differential: "Differential: 1. normal pressure hydrocephalus; 2. atrophy; 3. obstructive hydrocephalus (no obstructing lesion seen).",
            differential_wrong: "Differential: 1. Alzheimer disease, only.",
            answer: "Normal pressure hydrocephalus",
            answer_wrong: "Age-related atrophy",
            lesion_answer: "Markedly enlarged lateral and third ventricles out of proportion to the sulci; no obstructing lesion.",
            lesion_answer_wrong: "Normal ventricles, mild atrophy.",
            short_name: "hydrocephalus",
        },
    }
}

fn other_meningioma() -> CaseDef {
    let centre = [-54.0, -30.0, 40.0];
    CaseDef {
        id: "other-02",
        group: G::OtherAbnormality,
        modality: Modality::MR,
        age: 52,
        sex: Sex::F,
        ehr: &[("symptom_months", EhrValue::Number(8.0))],
        note: "52-year-old woman with eight months of intermittent tingling of the right hand and one episode of right arm jerking.",
        series: MR_BASIC,
        deformation: Some(Deformation::Mass { centre_ras: [-62.0, -30.0, 40.0], radius: 12.0, reach: 18.0 }),
        lesions: vec![LesionShape { shape: Ellipsoid::aligned(centre, [12.0, 15.0, 12.0]), appearance: MENINGIOMA, compartment: Compartment::Intracranial, left_only: Some(true) }],
        truth: vec![truth("L1", "Left parietal convexity extra-axial mass, near grey-matter signal, displacing the cortex", 0)],
        diagnosis: "Left parietal convexity meningioma",
        diagnosis_code: Some("D32.0"),
        differential: &[
            ("Meningioma", &["extra-axial, dural-based convexity mass", "grey-matter-like signal", "middle-aged woman"], &[]),
            ("Dural metastasis", &["dural mass"], &["no known primary"]),
            ("Solitary fibrous tumour", &["dural-based mass"], &["much rarer"]),
        ],
        expected_reasoning: "A well-circumscribed, broad-based mass at the left parietal convexity, isointense to grey matter and displacing (not infiltrating) the cortex is extra-axial, most likely a meningioma; it explains focal right-hand sensory seizures.",
        difficulty: 1,
        key_z: 40.0,
        tasks: &[
            TaskDef { id: "t1", family: F::LesionIdentification, level: 1, prompt: "Describe the lesion: intra- or extra-axial? Location and signal.", series: "flair", follow_up: None },
            TaskDef { id: "t2", family: F::RationaleGeneration, level: 3, prompt: "Walk me through this scan of a 52-year-old woman with right-hand tingling.", series: "t1", follow_up: asks!("Which imaging signs tell you the mass is outside the brain?") },
        ],
        text: AnswerText {
            sequence: "On T1, T2 and FLAIR",
            sequence_wrong: "On the CT",
            finding: "there is a well-circumscribed, broad-based mass about 3 cm across, isointense to grey matter,",
            finding_wrong: "there is an infiltrative mass with central necrosis",
            location: "at the left parietal convexity, displacing the adjacent cortex inwards",
            location_wrong: Some("within the right frontal white matter"),
            secondary: Some("there is only mild oedema in the underlying brain"),
            false_negation: Some("No mass lesion is seen."),
            hallucination: "There is hyperostosis and erosion of the overlying skull with extension into the scalp.",
            invented_history: "She had breast cancer treated five years ago.",
            reasoning: "The broad dural base and inward displacement of the cortex show that the mass is extra-axial; with its signal this makes a meningioma most likely.",
            reasoning_wrong: "Because it causes seizures the mass must be intra-axial.",
            wrong_fact: "Meningiomas arise from the pia mater and are therefore intra-axial tumours.",
            differential: "Differential: 1. meningioma; 2. dural metastasis; 3. solitary fibrous tumour.",
            differential_wrong: "Differential: 1. high-grade glioma; 2. abscess.",
            answer: "Left parietal convexity meningioma",
            answer_wrong: "Left parietal high-grade glioma",
            lesion_answer: "Extra-axial left parietal convexity mass, ~3 cm, isointense to grey matter, displacing the cortex.",
            lesion_answer_wrong: "Intra-axial right frontal necrotic mass.",
            short_name: "a meningioma",
        },
    }
}

fn normal_text(
    answer_wrong: &'static str,
    hallucination: &'static str,
    history: &'static str,
    sequence_wrong: &'static str,
) -> AnswerText {
    AnswerText {
        sequence: "On all sequences",
        sequence_wrong,
        finding: NORMAL_SEQUENCE_FINDING,
        finding_wrong: "there is moderate generalised atrophy with scattered white-matter hyperintensities",
        location: "and the ventricles and sulci are normal for age",
        location_wrong: None,
        secondary: None,
        false_negation: None,
        hallucination,
        invented_history: history,
        reasoning: "With a normal examination and no focal neurology, a normal scan needs no further imaging.",
        reasoning_wrong: "Although no abnormality is visible, the symptoms prove an early tumour that the scan is missing.",
        wrong_fact: "A normal MRI excludes a transient ischaemic attack.",
        differential: "Differential: normal study; no structural cause identified.",
        differential_wrong: "Differential: 1. early demyelination; 2. low-grade glioma.",
        answer: "Normal study",
        answer_wrong,
        lesion_answer: "No abnormality.",
        lesion_answer_wrong: "A small lesion is present (see above).",
        short_name: "a normal study",
    }
}

fn normal_headache() -> CaseDef {
    CaseDef {
        id: "normal-01",
        group: G::Normal,
        modality: Modality::MR,
        age: 35,
        sex: Sex::F,
        ehr: &[("neurological_exam", EhrValue::Text("normal"))],
        note: "35-year-old woman with episodic bilateral headaches for two years, worse with stress; normal examination. Scan requested for reassurance.",
        series: MR_BASIC,
        deformation: None,
        lesions: vec![],
        truth: vec![],
        diagnosis: "Normal brain MRI",
        diagnosis_code: None,
        differential: &[("Normal study (primary headache)", &["no structural abnormality"], &[])],
        expected_reasoning: "No parenchymal, ventricular or extra-axial abnormality; consistent with a primary headache disorder. No further imaging.",
        difficulty: 1,
        key_z: 20.0,
        tasks: &[
            TaskDef { id: "t1", family: F::DifferentialDiagnosis, level: 1, prompt: "Is this MRI normal? If not, what is the diagnosis?", series: "flair", follow_up: None },
            TaskDef { id: "t2", family: F::LesionIdentification, level: 1, prompt: "List any lesions on FLAIR.", series: "flair", follow_up: None },
        ],
        text: normal_text("Early multiple sclerosis", "There is a small FLAIR-hyperintense lesion in the right centrum semiovale.", "She had an episode of optic neuritis last year.", "On the contrast-enhanced T1"),
    }
}

fn normal_dizziness() -> CaseDef {
    CaseDef {
        id: "normal-02",
        group: G::Normal,
        modality: Modality::MR,
        age: 70,
        sex: Sex::M,
        ehr: &[("ABCD2", EhrValue::Number(2.0))],
        note: "70-year-old man with 20 minutes of dizziness on standing, fully resolved; normal examination.",
        series: &[("dwi", "DWI", Sequence::Dwi), ("adc", "ADC", Sequence::Adc), ("flair", "FLAIR", Sequence::Flair), ("t1", "T1", Sequence::T1)],
        deformation: None,
        lesions: vec![],
        truth: vec![],
        diagnosis: "Normal brain MRI; no acute infarct",
        diagnosis_code: None,
        differential: &[
            ("Orthostatic presyncope", &["symptoms on standing", "normal imaging"], &[]),
            ("Transient ischaemic attack", &["age, transient symptom"], &["isolated dizziness is a weak TIA feature"]),
        ],
        expected_reasoning: "No restricted diffusion and no FLAIR abnormality beyond age; imaging neither shows an infarct nor excludes a TIA, which remains a clinical diagnosis.",
        difficulty: 2,
        key_z: -20.0,
        tasks: &[
            TaskDef { id: "t1", family: F::RationaleGeneration, level: 3, prompt: "70-year-old with transient dizziness. Any acute infarct on DWI/ADC?", series: "dwi", follow_up: asks!("If the scan is normal, can we exclude a TIA?") },
            TaskDef { id: "t2", family: F::LesionIdentification, level: 1, prompt: "Is there restricted diffusion anywhere, including the posterior fossa?", series: "dwi", follow_up: None },
        ],
        text: normal_text("Acute right cerebellar infarct", "There is a small focus of restricted diffusion in the right cerebellar hemisphere.", "A carotid Doppler last month showed a 90 % left stenosis.", "On the ADC map, read as DWI"),
    }
}

fn normal_ct_trauma() -> CaseDef {
    CaseDef {
        id: "normal-03",
        group: G::Normal,
        modality: Modality::CT,
        age: 44,
        sex: Sex::M,
        ehr: &[("GCS", EhrValue::Number(15.0)), ("anticoagulated", EhrValue::Text("no"))],
        note: "44-year-old man who fell from a bicycle, brief loss of consciousness, now GCS 15 with a headache.",
        series: CT_ONLY,
        deformation: None,
        lesions: vec![],
        truth: vec![],
        diagnosis: "Normal non-contrast head CT",
        diagnosis_code: None,
        differential: &[("No acute intracranial injury", &["no haemorrhage, no fracture seen on the brain window"], &[])],
        expected_reasoning: "No intra- or extra-axial haemorrhage, no mass effect, normal ventricles and grey-white differentiation; bone windows should still be reviewed for fracture.",
        difficulty: 1,
        key_z: 10.0,
        tasks: &[
            TaskDef { id: "t1", family: F::LesionIdentification, level: 1, prompt: "Head CT after a fall: any acute intracranial abnormality?", series: "ct", follow_up: None },
            TaskDef { id: "t2", family: F::DifferentialDiagnosis, level: 2, prompt: "Brief loss of consciousness after a bicycle fall, GCS 15. Interpret the CT and say whether he can be discharged.", series: "ct", follow_up: None },
        ],
        text: normal_text("Small left frontal subdural haematoma", "There is a thin hyperdense subdural collection over the left frontal convexity.", "He is on warfarin for a mechanical valve.", "On the T2-weighted MRI"),
    }
}
