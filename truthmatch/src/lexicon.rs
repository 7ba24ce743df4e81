//! The built-in vocabulary: every phrase the matcher understands, in normalised words (lower
//! case, American spelling, punctuation and hyphens as spaces), and the term it stands for.
//!
//! A phrase table, not a trained model: what the matcher knows is listed here, reviewable by a
//! neuroradiologist, and a phrase not listed is an unknown word, never a guess. The longest
//! phrase wins, so "normal pressure hydrocephalus" is one diagnosis, not "normal" and
//! "hydrocephalus", and "cannot be excluded" is a hedge, not a negation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// A disease group, the report's unit for macro-F1. Mirrors `cases::model::DiseaseGroup`
/// without depending on it: this crate sits below the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DxGroup {
    MultipleSclerosis,
    Stroke,
    Tumour,
    OtherAbnormality,
    Normal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    Left,
    Right,
    Bilateral,
    Midline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum SiteKind {
    Lobe,
    Territory,
    /// A landmark that carries a side but is no lobe or territory (periventricular, convexity).
    Structure,
}

/// MR sequences, for pairing with an intensity word ("bright on DWI", "T1 hypointense").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Seq {
    T2Flair,
    T1,
    Dwi,
    Adc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Level {
    High,
    Low,
}

/// An imaging finding whose presence or absence an answer can state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fact {
    T2FlairHigh,
    T2FlairLow,
    T1Low,
    T1High,
    RestrictedDiffusion,
    Enhancement,
    CtLow,
    CtHigh,
}

impl Fact {
    /// The finding that cannot hold of the same lesion where this one is stated.
    pub(crate) fn opposite(self) -> Option<Fact> {
        match self {
            Fact::T2FlairHigh => Some(Fact::T2FlairLow),
            Fact::T2FlairLow => Some(Fact::T2FlairHigh),
            Fact::T1Low => Some(Fact::T1High),
            Fact::T1High => Some(Fact::T1Low),
            Fact::CtLow => Some(Fact::CtHigh),
            Fact::CtHigh => Some(Fact::CtLow),
            Fact::RestrictedDiffusion | Fact::Enhancement => None,
        }
    }
}

/// What a phrase stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Term {
    /// A diagnosis: an index into [`DIAGNOSES`], or a truth's own phrase (`DYNAMIC_DX` and up).
    Dx(u32),
    /// A qualifier that tells subtypes apart: (group, value); two values of one group conflict.
    Qual(u8, u8),
    Side(Side),
    /// An index into [`SITES`].
    Site(u16),
    Seq(Seq),
    Level(Level),
    /// A finding stated by one phrase, and whether the phrase affirms it ("non-enhancing": no).
    Fact(Fact, bool),
    /// "no", "without", "no evidence of": negates what follows in its clause.
    NegPre,
    /// "ruled out", "excluded", "absent": negates what precedes in its clause.
    NegPost,
    /// "unlikely", "less likely", "cannot be excluded": the nearest diagnosis is kept on the
    /// list but hedged.
    Hedge,
    /// "or", "vs": separates two diagnoses in one sentence.
    Or,
    /// "and": kept so that a comma before a list's last item is recognised.
    And,
    /// "but", "however", "although": a clause ends.
    ClauseEnd,
    /// "diagnosis", "impression", "consistent (with)": the sentence holding one is the answer's
    /// primary statement, wherever it stands.
    Cue,
    /// A word that carries nothing here but a place ("most likely", "the").
    Filler,
}

/// Diagnosis ids from here on are a truth's own phrases, not in [`DIAGNOSES`].
pub(crate) const DYNAMIC_DX: u32 = 1 << 20;

/// (canonical name, group, phrases). Curators add synonyms per case; this is the common core.
pub(crate) const DIAGNOSES: &[(&str, DxGroup, &[&str])] = &[
    (
        "multiple sclerosis",
        DxGroup::MultipleSclerosis,
        &[
            "multiple sclerosis",
            "ms",
            "demyelinating disease",
            "disseminated sclerosis",
        ],
    ),
    (
        "clinically isolated syndrome",
        DxGroup::MultipleSclerosis,
        &["clinically isolated syndrome", "cis"],
    ),
    (
        "nmosd",
        DxGroup::MultipleSclerosis,
        &[
            "neuromyelitis optica spectrum disorder",
            "neuromyelitis optica",
            "nmosd",
            "nmo",
            "devic disease",
            "devics disease",
        ],
    ),
    (
        "adem",
        DxGroup::MultipleSclerosis,
        &["acute disseminated encephalomyelitis", "adem"],
    ),
    (
        "mogad",
        DxGroup::MultipleSclerosis,
        &["mog antibody disease", "mogad"],
    ),
    (
        "small vessel disease",
        DxGroup::OtherAbnormality,
        &[
            "small vessel ischemic disease",
            "small vessel disease",
            "cerebral small vessel disease",
            "chronic small vessel ischemia",
            "microangiopathy",
            "leukoaraiosis",
            "svd",
        ],
    ),
    (
        "infarct",
        DxGroup::Stroke,
        &[
            "infarct",
            "infarction",
            "infarcts",
            "ischemic stroke",
            "stroke",
            "ischemic infarct",
            "cerebral infarction",
            "cva",
            "cerebrovascular accident",
            "ischemia",
        ],
    ),
    (
        "tia",
        DxGroup::Stroke,
        &["transient ischemic attack", "tia"],
    ),
    (
        "hemorrhage",
        DxGroup::Stroke,
        &[
            "hemorrhage",
            "hemorrhagic stroke",
            "intracerebral hemorrhage",
            "intraparenchymal hemorrhage",
            "ich",
            "bleed",
            "hematoma",
            "hemorrhages",
            "intracerebral hematoma",
        ],
    ),
    (
        "subarachnoid hemorrhage",
        DxGroup::Stroke,
        &["subarachnoid hemorrhage", "sah"],
    ),
    (
        "subdural hematoma",
        DxGroup::OtherAbnormality,
        &[
            "subdural hematoma",
            "subdural hemorrhage",
            "sdh",
            "subdural collection",
        ],
    ),
    (
        "cerebral amyloid angiopathy",
        DxGroup::Stroke,
        &["cerebral amyloid angiopathy", "amyloid angiopathy", "caa"],
    ),
    (
        "venous thrombosis",
        DxGroup::Stroke,
        &[
            "cerebral venous thrombosis",
            "venous sinus thrombosis",
            "cvst",
            "cvt",
        ],
    ),
    (
        "glioblastoma",
        DxGroup::Tumour,
        &[
            "glioblastoma",
            "glioblastoma multiforme",
            "gbm",
            "grade 4 astrocytoma",
            "who grade 4 glioma",
        ],
    ),
    (
        "glioma",
        DxGroup::Tumour,
        &[
            "glioma",
            "gliomas",
            "astrocytoma",
            "oligodendroglioma",
            "low grade glioma",
            "high grade glioma",
            "multifocal glioma",
        ],
    ),
    (
        "metastasis",
        DxGroup::Tumour,
        &[
            "metastasis",
            "metastases",
            "mets",
            "metastatic disease",
            "brain metastases",
            "brain metastasis",
            "metastatic deposits",
            "secondaries",
            "dural metastasis",
        ],
    ),
    (
        "meningioma",
        DxGroup::Tumour,
        &["meningioma", "meningiomas"],
    ),
    (
        "lymphoma",
        DxGroup::Tumour,
        &["lymphoma", "primary cns lymphoma", "pcnsl", "cns lymphoma"],
    ),
    (
        "solitary fibrous tumor",
        DxGroup::Tumour,
        &["solitary fibrous tumor", "hemangiopericytoma"],
    ),
    (
        "tumor",
        DxGroup::Tumour,
        &[
            "tumor",
            "tumors",
            "neoplasm",
            "brain tumor",
            "neoplastic mass",
        ],
    ),
    (
        "abscess",
        DxGroup::OtherAbnormality,
        &[
            "abscess",
            "abscesses",
            "cerebral abscess",
            "brain abscess",
            "septic emboli",
        ],
    ),
    (
        "encephalitis",
        DxGroup::OtherAbnormality,
        &[
            "encephalitis",
            "herpes simplex encephalitis",
            "hsv encephalitis",
        ],
    ),
    (
        "nph",
        DxGroup::OtherAbnormality,
        &[
            "normal pressure hydrocephalus",
            "nph",
            "idiopathic normal pressure hydrocephalus",
            "inph",
        ],
    ),
    (
        "obstructive hydrocephalus",
        DxGroup::OtherAbnormality,
        &[
            "obstructive hydrocephalus",
            "non communicating hydrocephalus",
            "noncommunicating hydrocephalus",
        ],
    ),
    (
        "hydrocephalus",
        DxGroup::OtherAbnormality,
        &["hydrocephalus", "communicating hydrocephalus"],
    ),
    (
        "atrophy",
        DxGroup::OtherAbnormality,
        &[
            "atrophy",
            "cerebral atrophy",
            "neurodegeneration",
            "neurodegenerative atrophy",
            "alzheimer disease",
            "alzheimers disease",
        ],
    ),
    (
        "migraine",
        DxGroup::OtherAbnormality,
        &[
            "migraine",
            "hemiplegic migraine",
            "migraine related white matter change",
            "primary headache disorder",
        ],
    ),
    (
        "seizure",
        DxGroup::OtherAbnormality,
        &[
            "seizure",
            "postictal change",
            "postictal changes",
            "seizure with postictal change",
            "status epilepticus",
        ],
    ),
    (
        "presyncope",
        DxGroup::OtherAbnormality,
        &["orthostatic presyncope", "presyncope", "syncope"],
    ),
    (
        "pres",
        DxGroup::OtherAbnormality,
        &["posterior reversible encephalopathy syndrome", "pres"],
    ),
    (
        "cavernoma",
        DxGroup::OtherAbnormality,
        &["cavernoma", "cavernous malformation", "cavernous angioma"],
    ),
    (
        "avm",
        DxGroup::OtherAbnormality,
        &["arteriovenous malformation", "avm", "vascular malformation"],
    ),
    (
        "normal",
        DxGroup::Normal,
        &[
            "normal study",
            "normal scan",
            "normal brain",
            "normal brain mri",
            "normal mri",
            "normal ct",
            "normal head ct",
            "normal non contrast head ct",
            "normal examination",
            "normal exam",
            "unremarkable study",
            "unremarkable scan",
            "unremarkable brain",
            "no abnormality",
            "no significant abnormality",
            "no acute abnormality",
            "no intracranial abnormality",
            "no acute intracranial abnormality",
            "no structural abnormality",
            "no structural cause",
            "no structural cause identified",
            "within normal limits",
            "no abnormality detected",
        ],
    ),
];

/// Qualifier groups: (group, value, phrases). Two values of one group name different subtypes
/// ("secondary progressive" is not "primary progressive" MS), so a candidate stating another
/// value than the truth does is no match.
const QUALIFIERS: &[(u8, u8, &[&str])] = &[
    (0, 0, &["relapsing remitting", "relapsing"]),
    (0, 1, &["secondary progressive"]),
    (0, 2, &["primary progressive"]),
    (1, 0, &["acute", "hyperacute", "early subacute"]),
    (1, 1, &["chronic", "old", "remote"]),
    (2, 0, &["low grade"]),
    (2, 1, &["high grade"]),
];

/// (canonical name, kind, phrases). A territory implies the lobes it supplies (see [`implied_lobes`]).
pub(crate) const SITES: &[(&str, SiteKind, &[&str])] = &[
    (
        "frontal",
        SiteKind::Lobe,
        &["frontal", "frontal lobe", "frontal lobes", "prefrontal"],
    ),
    (
        "parietal",
        SiteKind::Lobe,
        &["parietal", "parietal lobe", "parietal lobes"],
    ),
    (
        "temporal",
        SiteKind::Lobe,
        &["temporal", "temporal lobe", "temporal lobes"],
    ),
    (
        "occipital",
        SiteKind::Lobe,
        &["occipital", "occipital lobe", "occipital lobes"],
    ),
    (
        "insula",
        SiteKind::Lobe,
        &["insula", "insular", "insular cortex", "insular ribbon"],
    ),
    (
        "cerebellum",
        SiteKind::Lobe,
        &[
            "cerebellum",
            "cerebellar",
            "cerebellar hemisphere",
            "cerebellar peduncle",
            "middle cerebellar peduncle",
        ],
    ),
    (
        "brainstem",
        SiteKind::Lobe,
        &[
            "brainstem",
            "brain stem",
            "pons",
            "pontine",
            "midbrain",
            "medulla",
            "medullary",
        ],
    ),
    ("thalamus", SiteKind::Lobe, &["thalamus", "thalamic"]),
    (
        "basal ganglia",
        SiteKind::Lobe,
        &[
            "basal ganglia",
            "putamen",
            "putaminal",
            "caudate",
            "globus pallidus",
            "lentiform nucleus",
            "internal capsule",
        ],
    ),
    (
        "corpus callosum",
        SiteKind::Lobe,
        &["corpus callosum", "callosal", "splenium", "genu"],
    ),
    (
        "mca",
        SiteKind::Territory,
        &["mca", "middle cerebral artery", "middle cerebral"],
    ),
    (
        "aca",
        SiteKind::Territory,
        &["aca", "anterior cerebral artery", "anterior cerebral"],
    ),
    (
        "pca",
        SiteKind::Territory,
        &["pca", "posterior cerebral artery", "posterior cerebral"],
    ),
    (
        "basilar",
        SiteKind::Territory,
        &["basilar", "basilar artery"],
    ),
    (
        "vertebral",
        SiteKind::Territory,
        &["vertebral artery", "vertebral"],
    ),
    (
        "pica",
        SiteKind::Territory,
        &["pica", "posterior inferior cerebellar artery"],
    ),
    (
        "aica",
        SiteKind::Territory,
        &["aica", "anterior inferior cerebellar artery"],
    ),
    (
        "sca",
        SiteKind::Territory,
        &["sca", "superior cerebellar artery"],
    ),
    (
        "lenticulostriate",
        SiteKind::Territory,
        &["lenticulostriate", "lenticulostriate arteries"],
    ),
    (
        "ica",
        SiteKind::Territory,
        &[
            "ica",
            "internal carotid artery",
            "internal carotid",
            "carotid",
        ],
    ),
    (
        "periventricular",
        SiteKind::Structure,
        &[
            "periventricular",
            "peritrigonal",
            "frontal horn",
            "frontal horns",
            "callososeptal",
        ],
    ),
    (
        "juxtacortical",
        SiteKind::Structure,
        &["juxtacortical", "subcortical"],
    ),
    (
        "lateral ventricle",
        SiteKind::Structure,
        &["lateral ventricle", "lateral ventricles"],
    ),
    (
        "hemisphere",
        SiteKind::Structure,
        &["hemisphere", "hemispheres", "cerebral hemisphere"],
    ),
    ("convexity", SiteKind::Structure, &["convexity"]),
];

/// The lobes a territory supplies: an answer naming the frontal lobe in an MCA stroke agrees
/// with a truth that named only the territory.
pub(crate) fn implied_lobes(territory: &str) -> &'static [&'static str] {
    match territory {
        "mca" => &["frontal", "parietal", "temporal", "insula", "basal ganglia"],
        "aca" => &["frontal", "parietal", "corpus callosum"],
        "pca" => &["occipital", "temporal", "thalamus"],
        "basilar" | "vertebral" => &["brainstem", "cerebellum", "thalamus", "occipital"],
        "pica" | "aica" | "sca" => &["cerebellum", "brainstem"],
        "lenticulostriate" => &["basal ganglia"],
        "ica" => &["frontal", "parietal", "temporal", "insula", "basal ganglia"],
        _ => &[],
    }
}

const OTHER: &[(&str, Term)] = &[
    ("left", Term::Side(Side::Left)),
    ("right", Term::Side(Side::Right)),
    ("bilateral", Term::Side(Side::Bilateral)),
    ("bilaterally", Term::Side(Side::Bilateral)),
    ("both", Term::Side(Side::Bilateral)),
    ("both sides", Term::Side(Side::Bilateral)),
    ("midline", Term::Side(Side::Midline)),
    // Not a side: a shift across the midline, or its direction.
    ("midline shift", Term::Filler),
    ("flair", Term::Seq(Seq::T2Flair)),
    ("t2", Term::Seq(Seq::T2Flair)),
    ("t2 flair", Term::Seq(Seq::T2Flair)),
    ("t2 weighted", Term::Seq(Seq::T2Flair)),
    ("t1", Term::Seq(Seq::T1)),
    ("t1 weighted", Term::Seq(Seq::T1)),
    ("dwi", Term::Seq(Seq::Dwi)),
    ("diffusion weighted", Term::Seq(Seq::Dwi)),
    ("diffusion weighted imaging", Term::Seq(Seq::Dwi)),
    ("adc", Term::Seq(Seq::Adc)),
    ("adc map", Term::Seq(Seq::Adc)),
    ("hyperintense", Term::Level(Level::High)),
    ("hyperintensity", Term::Level(Level::High)),
    ("hyperintensities", Term::Level(Level::High)),
    ("bright", Term::Level(Level::High)),
    ("high signal", Term::Level(Level::High)),
    ("increased signal", Term::Level(Level::High)),
    ("high", Term::Level(Level::High)),
    ("hypointense", Term::Level(Level::Low)),
    ("hypointensity", Term::Level(Level::Low)),
    ("hypointensities", Term::Level(Level::Low)),
    ("dark", Term::Level(Level::Low)),
    ("low signal", Term::Level(Level::Low)),
    ("low", Term::Level(Level::Low)),
    ("reduced", Term::Level(Level::Low)),
    ("black hole", Term::Fact(Fact::T1Low, true)),
    ("black holes", Term::Fact(Fact::T1Low, true)),
    (
        "restricted diffusion",
        Term::Fact(Fact::RestrictedDiffusion, true),
    ),
    (
        "diffusion restriction",
        Term::Fact(Fact::RestrictedDiffusion, true),
    ),
    (
        "restricts diffusion",
        Term::Fact(Fact::RestrictedDiffusion, true),
    ),
    ("restricting", Term::Fact(Fact::RestrictedDiffusion, true)),
    (
        "reduced diffusion",
        Term::Fact(Fact::RestrictedDiffusion, true),
    ),
    (
        "diffusion restricting",
        Term::Fact(Fact::RestrictedDiffusion, true),
    ),
    (
        "facilitated diffusion",
        Term::Fact(Fact::RestrictedDiffusion, false),
    ),
    ("enhancement", Term::Fact(Fact::Enhancement, true)),
    ("enhancing", Term::Fact(Fact::Enhancement, true)),
    ("enhances", Term::Fact(Fact::Enhancement, true)),
    ("ring enhancing", Term::Fact(Fact::Enhancement, true)),
    ("ring enhancement", Term::Fact(Fact::Enhancement, true)),
    ("contrast enhancing", Term::Fact(Fact::Enhancement, true)),
    ("non enhancing", Term::Fact(Fact::Enhancement, false)),
    ("nonenhancing", Term::Fact(Fact::Enhancement, false)),
    ("hypodense", Term::Fact(Fact::CtLow, true)),
    ("hypodensity", Term::Fact(Fact::CtLow, true)),
    ("hypoattenuating", Term::Fact(Fact::CtLow, true)),
    ("hypoattenuation", Term::Fact(Fact::CtLow, true)),
    ("low density", Term::Fact(Fact::CtLow, true)),
    ("hyperdense", Term::Fact(Fact::CtHigh, true)),
    ("hyperdensity", Term::Fact(Fact::CtHigh, true)),
    ("hyperattenuating", Term::Fact(Fact::CtHigh, true)),
    ("high density", Term::Fact(Fact::CtHigh, true)),
    ("no", Term::NegPre),
    ("not", Term::NegPre),
    ("without", Term::NegPre),
    ("no evidence of", Term::NegPre),
    ("no evidence for", Term::NegPre),
    ("no sign of", Term::NegPre),
    ("no signs of", Term::NegPre),
    ("negative for", Term::NegPre),
    ("absence of", Term::NegPre),
    ("free of", Term::NegPre),
    ("nor", Term::NegPre),
    ("neither", Term::NegPre),
    ("ruled out", Term::NegPost),
    ("excluded", Term::NegPost),
    ("absent", Term::NegPost),
    ("not seen", Term::NegPost),
    ("is not seen", Term::NegPost),
    ("not identified", Term::NegPost),
    ("unlikely", Term::Hedge),
    ("less likely", Term::Hedge),
    ("doubtful", Term::Hedge),
    ("improbable", Term::Hedge),
    ("not favored", Term::Hedge),
    ("rule out", Term::Hedge),
    ("cannot be excluded", Term::Hedge),
    ("cannot be ruled out", Term::Hedge),
    ("not excluded", Term::Hedge),
    ("not ruled out", Term::Hedge),
    ("or", Term::Or),
    ("vs", Term::Or),
    ("versus", Term::Or),
    // NegEx's pseudo-negations: "no" or "not" that negates nothing after it.
    ("not only", Term::Filler),
    ("no change", Term::Filler),
    ("no further", Term::Filler),
    ("not necessarily", Term::Filler),
    // "most likely X" affirms X; without this, "likely" would be an unknown word, which is fine,
    // but the phrase must not be read as the hedge "less likely".
    ("most likely", Term::Filler),
    // Ages: "old" alone is the chronic qualifier.
    ("year old", Term::Filler),
    ("years old", Term::Filler),
    ("normal for age", Term::Filler),
    ("and", Term::And),
    ("but", Term::ClauseEnd),
    ("however", Term::ClauseEnd),
    ("although", Term::ClauseEnd),
    ("though", Term::ClauseEnd),
    ("whereas", Term::ClauseEnd),
    ("except", Term::ClauseEnd),
    ("apart", Term::ClauseEnd),
    ("diagnosis", Term::Cue),
    ("impression", Term::Cue),
    ("conclusion", Term::Cue),
    ("answer", Term::Cue),
    ("consistent", Term::Cue),
    ("suggestive", Term::Cue),
    ("keeping", Term::Cue),
    ("compatible", Term::Cue),
    ("represents", Term::Cue),
    ("favor", Term::Cue),
    ("favored", Term::Cue),
    // Headers that open a list rather than state anything.
    ("differential", Term::Filler),
    ("differentials", Term::Filler),
    ("ddx", Term::Filler),
    ("findings", Term::Filler),
    ("diagnoses", Term::Filler),
    ("ranked", Term::Filler),
];

/// Abbreviations that name a subtype and its disease at once: (phrase, qualifier, diagnosis name).
const SUBTYPES: &[(&str, (u8, u8), &str)] = &[
    ("rrms", (0, 0), "multiple sclerosis"),
    ("spms", (0, 1), "multiple sclerosis"),
    ("ppms", (0, 2), "multiple sclerosis"),
];

/// British spellings rewritten at the start of a word, so one table serves both.
const SPELLING: &[(&str, &str)] = &[
    ("haem", "hem"),
    ("ischaem", "ischem"),
    ("oedem", "edem"),
    ("tumour", "tumor"),
    ("paed", "ped"),
    ("anaem", "anem"),
    ("leukaem", "leukem"),
    ("leuco", "leuko"),
    ("oesoph", "esoph"),
    ("favour", "favor"),
    ("centre", "center"),
    ("grey", "gray"),
    ("hyperaem", "hyperem"),
];

/// The American spelling of a normalised word, or `None` when it already is.
pub(crate) fn american(word: &str) -> Option<String> {
    // Most words need nothing: compare the first byte before any prefix (a tenth of the
    // matching time was these comparisons).
    let first = *word.as_bytes().first()?;
    SPELLING
        .iter()
        .filter(|(british, _)| british.as_bytes()[0] == first)
        .find_map(|(british, us)| word.strip_prefix(british).map(|rest| format!("{us}{rest}")))
}

/// What a phrase means: one term, or two for an abbreviation naming a subtype ("SPMS").
pub(crate) type Meaning = (Term, Option<Term>);

/// A word trie over phrases: each word is looked up once per position, so matching costs
/// about one hash lookup per word of an answer however many phrases there are.
#[derive(Default)]
pub(crate) struct Trie {
    meaning: Option<Meaning>,
    next: HashMap<String, Trie, BuildHasherDefault<Fnv>>,
}

/// FNV-1a (`seeded`'s): the keys are short words from our own tables and answers only look
/// them up (nothing an answer says is inserted), so SipHash's resistance to chosen keys buys
/// nothing here; with it and a `String` per word, 100,000 43-word answers took 1.9 s, over issue
/// 39's 1 s.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // A `str` is written as its bytes then a terminator: fold each write into the state.
        self.0 = seeded::fnv1a(bytes) ^ self.0.rotate_left(5);
    }
}

impl Trie {
    pub(crate) fn insert(&mut self, phrase: &str, meaning: Meaning) {
        let mut node = self;
        for word in phrase.split(' ').filter(|w| !w.is_empty()) {
            node = node.next.entry(word.to_string()).or_default();
        }
        // The first entry for a phrase wins: the tables list the specific meaning first.
        node.meaning.get_or_insert(meaning);
    }

    /// The longest phrase starting at `words[0]`: its meaning and its length in words.
    pub(crate) fn longest<S: AsRef<str>>(&self, words: &[S]) -> Option<(Meaning, usize)> {
        let mut node = self;
        let mut best = None;
        for (i, word) in words.iter().enumerate() {
            match node.next.get(word.as_ref()) {
                Some(child) => {
                    node = child;
                    if let Some(meaning) = node.meaning {
                        best = Some((meaning, i + 1));
                    }
                }
                None => break,
            }
        }
        best
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.next.is_empty()
    }
}

/// The built-in trie, built once per process.
pub(crate) fn builtin() -> &'static Trie {
    static TRIE: OnceLock<Trie> = OnceLock::new();
    TRIE.get_or_init(|| {
        let mut trie = Trie::default();
        // Negations, hedges and fillers first, so that a phrase listed there ("normal for age",
        // "midline shift") keeps that meaning.
        for (phrase, term) in OTHER {
            trie.insert(phrase, (*term, None));
        }
        for (phrase, (group, value), name) in SUBTYPES {
            let dx = dx_by_name(name).expect("SUBTYPES names a listed diagnosis");
            trie.insert(phrase, (Term::Qual(*group, *value), Some(Term::Dx(dx))));
        }
        for (i, (_, _, phrases)) in DIAGNOSES.iter().enumerate() {
            for phrase in *phrases {
                trie.insert(phrase, (Term::Dx(i as u32), None));
            }
        }
        for (group, value, phrases) in QUALIFIERS {
            for phrase in *phrases {
                trie.insert(phrase, (Term::Qual(*group, *value), None));
            }
        }
        for (i, (_, _, phrases)) in SITES.iter().enumerate() {
            for phrase in *phrases {
                trie.insert(phrase, (Term::Site(i as u16), None));
            }
        }
        trie
    })
}

fn dx_by_name(name: &str) -> Option<u32> {
    DIAGNOSES
        .iter()
        .position(|(n, _, _)| *n == name)
        .map(|i| i as u32)
}

pub(crate) fn site_kind(site: u16) -> SiteKind {
    SITES[site as usize].1
}

pub(crate) fn site_name(site: u16) -> &'static str {
    SITES[site as usize].0
}

pub(crate) fn site_by_name(name: &str) -> Option<u16> {
    SITES
        .iter()
        .position(|(n, _, _)| *n == name)
        .map(|i| i as u16)
}

pub(crate) fn dx_group(dx: u32) -> Option<DxGroup> {
    DIAGNOSES.get(dx as usize).map(|(_, group, _)| *group)
}

/// The diagnosis that only says "a tumour": beside a named tumour it adds nothing.
pub(crate) fn generic_dx() -> Option<u32> {
    dx_by_name("tumor")
}
