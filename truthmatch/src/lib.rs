//! Matches a model's answer against a case's curated truth (issue 39): at what rank the answer
//! names the curated diagnosis, whether it denies it, and whether its findings (side, lobe,
//! vascular territory, signal, diffusion, enhancement) agree with the curated description.
//!
//! Deterministic, offline, no I/O: a phrase table (`lexicon`) and NegEx-style negation
//! (`text`). What it cannot decide is [`DiagnosisOutcome::Unmatched`] with the span shown to the
//! curator, never a guess. The truth is read once ([`PreparedTruth::new`]); each answer is then
//! one pass over its words.

mod lexicon;
mod text;

pub use lexicon::{DxGroup, Fact, Side};

use lexicon::{SiteKind, Term, Trie, DYNAMIC_DX};
use std::collections::BTreeSet;
use text::Reading;

/// A case's curated truth, as the curator wrote it.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    pub diagnosis: String,
    pub code: Option<String>,
    /// The curator's other names for the diagnosis ("RRMS", "Devic disease").
    pub synonyms: Vec<String>,
    /// The ranked differential's diagnoses, most likely first.
    pub differential: Vec<String>,
    /// What the findings should be: the expected reasoning and each lesion's description.
    pub descriptions: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerFormat {
    FreeText,
    /// The task asked for `{"diagnosis": …, "differential": […], …}`.
    Json,
}

/// Where the curated diagnosis stands in the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosisOutcome {
    /// Named at `rank` (1 = the answer's primary diagnosis) among the distinct diagnoses the
    /// answer states. A hedged diagnosis ("unlikely", "less likely", "cannot be excluded") ranks
    /// after every unhedged one and is never top-1; `also_negated` when the answer denies it
    /// elsewhere too.
    Ranked {
        rank: u32,
        hedged: bool,
        also_negated: bool,
    },
    /// The answer states diagnoses, none of them the curated one.
    Absent,
    /// The answer names the curated diagnosis only to deny it ("no evidence of glioma").
    Negated,
    /// The answer's diagnosis statement names nothing the matcher knows: for the curator.
    Unmatched,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Agree,
    Contradict,
    NotStated,
}

/// Findings compared with the truth's descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Findings {
    pub laterality: Check,
    pub lobe: Check,
    pub territory: Check,
    /// T2/FLAIR, T1 and CT density.
    pub signal: Check,
    pub diffusion: Check,
    pub enhancement: Check,
}

impl Findings {
    fn all(&self) -> [Check; 6] {
        [
            self.laterality,
            self.lobe,
            self.territory,
            self.signal,
            self.diffusion,
            self.enhancement,
        ]
    }

    pub fn contradictions(&self) -> usize {
        self.all()
            .iter()
            .filter(|c| **c == Check::Contradict)
            .count()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub diagnosis: DiagnosisOutcome,
    /// The primary statement is the curated diagnosis word for word (after normalisation), or
    /// a JSON answer's code is the curated code.
    pub exact: bool,
    pub findings: Findings,
    /// The disease group of the answer's primary diagnosis, when the matcher knows it: the
    /// truth's own when the primary is the curated diagnosis (`None` here; the caller knows the
    /// case's group), the built-in table's otherwise.
    pub primary_group: Option<DxGroup>,
    /// Text the matcher could not decide, for the curator.
    pub unmatched_spans: Vec<String>,
    /// A JSON answer was asked for but the text is not a JSON object; it was read as free text.
    pub json_invalid: bool,
    /// 0–1: 0.6 × the diagnosis (1/rank, halved if hedged, halved again if also denied) plus
    /// 0.4 × the findings (each of six checks: agree 1, not stated ½, contradict 0). A
    /// contradiction always lowers it.
    pub score: f64,
}

impl Match {
    /// Whether the curated diagnosis is among the answer's first `k`; `None` when unmatched.
    pub fn within(&self, k: u32) -> Option<bool> {
        match self.diagnosis {
            DiagnosisOutcome::Ranked { rank, hedged, .. } => Some(rank <= k && !(k == 1 && hedged)),
            DiagnosisOutcome::Absent | DiagnosisOutcome::Negated => Some(false),
            DiagnosisOutcome::Unmatched => None,
        }
    }
}

/// At most this many words before a colon are a label ("Most likely diagnosis:"), not part of
/// what the sentence states.
const LABEL_WORDS: usize = 3;

/// A truth read once, for matching many answers.
pub struct PreparedTruth {
    own: Trie,
    dx: Vec<u32>,
    quals: Vec<(u8, u8)>,
    /// The diagnosis and its synonyms, normalised, for `exact`.
    exact_forms: Vec<String>,
    code: Option<String>,
    expected: Reading,
    /// Lobes named or implied by a named territory.
    lobes: BTreeSet<u16>,
    territories: BTreeSet<u16>,
    /// (side, site), with each sided territory's implied lobes.
    sided: BTreeSet<(Side, u16)>,
}

impl PreparedTruth {
    pub fn new(truth: &Truth) -> PreparedTruth {
        let mut own = Trie::default();
        let empty = Trie::default();
        // A diagnosis the table does not know ("CADASIL") is its own phrase; so is each of the
        // differential's and the curator's synonyms, which name the curated diagnosis.
        let mut next_dynamic = DYNAMIC_DX;
        let mut primary = first_affirmed(&text::read(&truth.diagnosis, &empty));
        if primary.is_none() {
            let phrase = normalised(&truth.diagnosis);
            if !phrase.is_empty() {
                own.insert(&phrase, (Term::Dx(next_dynamic), None));
                primary = Some((vec![next_dynamic], Vec::new()));
                next_dynamic += 1;
            }
        }
        let (dx, quals) = primary.unwrap_or_default();
        for synonym in &truth.synonyms {
            let phrase = normalised(synonym);
            if let (false, Some(&first)) = (phrase.is_empty(), dx.first()) {
                // A synonym stands for the whole diagnosis; with several concepts (a
                // haemorrhage into a tumour) the first carries it and the rest follow.
                let second = dx.get(1).map(|d| Term::Dx(*d));
                own.insert(&phrase, (Term::Dx(first), second));
            }
        }
        for item in &truth.differential {
            if first_affirmed(&text::read(item, &own)).is_none() {
                let phrase = normalised(item);
                if !phrase.is_empty() {
                    own.insert(&phrase, (Term::Dx(next_dynamic), None));
                    next_dynamic += 1;
                }
            }
        }

        let described = std::iter::once(truth.diagnosis.as_str())
            .chain(truth.descriptions.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        let expected = text::read(&described, &own);
        let territories: BTreeSet<u16> =
            text::of_kind(&expected.sites, SiteKind::Territory).collect();
        let mut lobes: BTreeSet<u16> = text::of_kind(&expected.sites, SiteKind::Lobe).collect();
        for t in &territories {
            lobes.extend(implied(*t));
        }
        let mut sided: BTreeSet<(Side, u16)> = expected.sided.iter().copied().collect();
        for (side, site) in expected.sided.iter().copied() {
            sided.extend(implied(site).map(|lobe| (side, lobe)));
        }
        let mut exact_forms = vec![normalised(&truth.diagnosis)];
        exact_forms.extend(truth.synonyms.iter().map(|s| normalised(s)));
        PreparedTruth {
            own,
            dx,
            quals,
            exact_forms,
            code: truth.code.as_ref().map(|c| c.trim().to_ascii_lowercase()),
            expected,
            lobes,
            territories,
            sided,
        }
    }

    /// Matches one answer.
    pub fn match_answer(&self, answer: &str, format: AnswerFormat) -> Match {
        let mut json_invalid = false;
        let mut code_matches = false;
        let structured;
        let text = match format {
            AnswerFormat::FreeText => answer,
            AnswerFormat::Json => match structured_text(answer) {
                Some((text, code)) => {
                    code_matches = matches!((&code, &self.code), (Some(a), Some(b)) if a == b);
                    structured = text;
                    &structured
                }
                None => {
                    json_invalid = true;
                    answer
                }
            },
        };
        let reading = text::read(text, &self.own);
        let mut unmatched_spans = Vec::new();

        // The primary statement: the first sentence with a diagnosis cue, else the first that
        // names a diagnosis, unless a short statement of unknown words comes before it (a
        // diagnosis the matcher does not know: ranking what follows would be a guess).
        let with_dx = |p: usize| reading.items.iter().any(|item| item.sentence == p);
        let cued = reading.sentences.iter().position(|s| s.cue);
        let first_dx = (0..reading.sentences.len()).find(|p| with_dx(*p));
        let unknown_first = reading
            .sentences
            .iter()
            .take(first_dx.unwrap_or(reading.sentences.len()))
            .position(|s| s.unknown_statement);
        let primary_sentence = match (cued, unknown_first) {
            (Some(c), _) => Some(c),
            (None, Some(u)) => Some(u),
            (None, None) => first_dx.or(if reading.sentences.is_empty() {
                None
            } else {
                Some(0)
            }),
        };
        let (diagnosis, primary_group) = match primary_sentence {
            Some(p) if with_dx(p) => self.rank(&reading, p),
            _ => (DiagnosisOutcome::Unmatched, None),
        };
        if diagnosis == DiagnosisOutcome::Unmatched {
            let span = match primary_sentence {
                Some(p) => &text[reading.sentences[p].start..reading.sentences[p].end],
                None => text.trim(),
            };
            unmatched_spans.push(span.to_string());
        }
        let exact = code_matches
            || primary_sentence.is_some_and(|p| {
                let s = reading.sentences[p];
                // Normalising never lengthens much (British spellings shorten): a sentence far
                // longer than every form cannot be one, and is not normalised.
                let longest = self.exact_forms.iter().map(String::len).max().unwrap_or(0);
                // Without its label: "Final answer: X" says X.
                let sentence = &text[s.start..s.end];
                let said = match sentence.split_once(':') {
                    Some((label, rest)) if label.split_whitespace().count() <= LABEL_WORDS => rest,
                    _ => sentence,
                };
                said.len() <= 2 * longest + 8 && {
                    let said = normalised(said);
                    self.exact_forms.iter().any(|f| !f.is_empty() && *f == said)
                }
            });

        let findings = self.findings(&reading);
        let score = score(diagnosis, &findings);
        Match {
            diagnosis,
            exact,
            findings,
            primary_group,
            unmatched_spans,
            json_invalid,
            score,
        }
    }

    /// The curated diagnosis's rank among the answer's distinct diagnoses: the primary
    /// sentence's first, then the rest in order, every hedged one after the unhedged.
    fn rank(&self, reading: &Reading, primary: usize) -> (DiagnosisOutcome, Option<DxGroup>) {
        let ordered = reading
            .items
            .iter()
            .filter(|i| i.sentence == primary)
            .chain(reading.items.iter().filter(|i| i.sentence != primary));
        let (affirmed, denied): (Vec<_>, Vec<_>) = ordered.partition(|i| !i.negated);
        let (plain, hedged): (Vec<_>, Vec<_>) = affirmed.into_iter().partition(|i| !i.hedged);
        // Two mentions are one diagnosis when they name the same concepts and no subtype
        // tells them apart ("RRMS" then "multiple sclerosis"; not "PPMS" then "SPMS").
        let mut distinct: Vec<&text::DxItem> = Vec::new();
        let mut found = None;
        for item in plain.iter().chain(hedged.iter()) {
            let same = |d: &&text::DxItem| d.dx == item.dx && !conflicting(&d.quals, &item.quals);
            let rank = match distinct.iter().position(same) {
                Some(p) => p + 1,
                None => {
                    distinct.push(item);
                    distinct.len()
                }
            };
            if found.is_none() && self.is(item) {
                found = Some((rank as u32, item.hedged));
            }
        }
        let denied_here = denied.iter().any(|i| self.is(i));
        let primary_group = match plain.first() {
            Some(first) if self.is(first) => None,
            Some(first) => first.dx.iter().find_map(|d| lexicon::dx_group(*d)),
            None => None,
        };
        let outcome = match found {
            Some((rank, hedged)) => DiagnosisOutcome::Ranked {
                rank,
                hedged,
                also_negated: denied_here,
            },
            None if denied_here => DiagnosisOutcome::Negated,
            // Only denials of other things ("no mass or haemorrhage"): no diagnosis to compare.
            None if distinct.is_empty() => DiagnosisOutcome::Unmatched,
            None => DiagnosisOutcome::Absent,
        };
        (outcome, primary_group)
    }

    /// Whether a stated diagnosis is the curated one: the same concepts (a generic "tumour"
    /// beside a named one aside), and no subtype the curated one excludes.
    fn is(&self, item: &text::DxItem) -> bool {
        if self.dx.is_empty() {
            return false;
        }
        // "Glioblastoma (a tumour)" names one tumour; "haemorrhage into a tumour" names two things.
        let generic = lexicon::generic_dx().filter(|_| {
            self.dx
                .iter()
                .any(|d| lexicon::dx_group(*d) == Some(DxGroup::Tumour))
        });
        let covers = self.dx.iter().all(|d| item.dx.contains(d));
        let nothing_else = item
            .dx
            .iter()
            .all(|d| self.dx.contains(d) || Some(*d) == generic);
        covers && nothing_else && !conflicting(&self.quals, &item.quals)
    }

    fn findings(&self, answer: &Reading) -> Findings {
        let laterality = combine(answer.sided.iter().filter_map(|(side, site)| {
            let known: Vec<Side> = self
                .sided
                .iter()
                .filter(|(_, s)| s == site)
                .map(|(side, _)| *side)
                .collect();
            if known.is_empty() {
                return None;
            }
            let both = known.contains(&Side::Bilateral)
                || (known.contains(&Side::Left) && known.contains(&Side::Right));
            Some(match side {
                Side::Bilateral => both,
                _ => known.contains(side) || known.contains(&Side::Bilateral),
            })
        }));
        let sites_check = |kind: SiteKind, truth: &BTreeSet<u16>| {
            if truth.is_empty() {
                return Check::NotStated;
            }
            combine(text::of_kind(&answer.sites, kind).map(|s| truth.contains(&s)))
        };
        let lobe = sites_check(SiteKind::Lobe, &self.lobes);
        let territory = sites_check(SiteKind::Territory, &self.territories);
        let fact_check = |which: &[Fact]| {
            combine(
                answer
                    .facts
                    .iter()
                    .filter(|(f, _)| which.contains(f))
                    .filter_map(|(fact, present)| self.fact_agrees(*fact, *present)),
            )
        };
        Findings {
            laterality,
            lobe,
            territory,
            signal: fact_check(&[
                Fact::T2FlairHigh,
                Fact::T2FlairLow,
                Fact::T1Low,
                Fact::T1High,
                Fact::CtLow,
                Fact::CtHigh,
            ]),
            diffusion: fact_check(&[Fact::RestrictedDiffusion]),
            enhancement: fact_check(&[Fact::Enhancement]),
        }
    }

    /// Whether the truth agrees with a finding the answer states; `None` if it does not say.
    fn fact_agrees(&self, fact: Fact, present: bool) -> Option<bool> {
        let expected = &self.expected.facts;
        if expected.contains(&(fact, present)) {
            return Some(true);
        }
        if expected.contains(&(fact, !present)) {
            return Some(false);
        }
        match fact.opposite() {
            Some(opposite) if present && expected.contains(&(opposite, true)) => Some(false),
            _ => None,
        }
    }
}

/// Whether two mentions name different subtypes: a qualifier group where both say something
/// and nothing in common.
fn conflicting(a: &[(u8, u8)], b: &[(u8, u8)]) -> bool {
    a.iter().any(|(group, _)| {
        let values = |q: &[(u8, u8)]| -> Vec<u8> {
            q.iter()
                .filter(|(g, _)| g == group)
                .map(|(_, v)| *v)
                .collect()
        };
        let (va, vb) = (values(a), values(b));
        !vb.is_empty() && !va.iter().any(|v| vb.contains(v))
    })
}

/// Sites implied by a territory (the lobes it supplies), empty for any other site.
fn implied(site: u16) -> impl Iterator<Item = u16> {
    lexicon::implied_lobes(lexicon::site_name(site))
        .iter()
        .filter_map(|name| lexicon::site_by_name(name))
}

/// Agree if something agrees and nothing contradicts.
fn combine(verdicts: impl Iterator<Item = bool>) -> Check {
    let mut check = Check::NotStated;
    for agrees in verdicts {
        if !agrees {
            return Check::Contradict;
        }
        check = Check::Agree;
    }
    check
}

/// A stated diagnosis's concepts and subtype qualifiers.
type DxKey = (Vec<u32>, Vec<(u8, u8)>);

fn first_affirmed(reading: &Reading) -> Option<DxKey> {
    reading
        .items
        .iter()
        .find(|i| !i.negated)
        .map(|i| (i.dx.clone(), i.quals.clone()))
}

/// Lower case, American spelling, words separated by one space.
fn normalised(s: &str) -> String {
    let mut out = String::new();
    for word in s
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
        .map(|w| w.replace(['\'', '\u{2019}'], "").to_lowercase())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&lexicon::american(&word).unwrap_or(word));
    }
    out
}

/// A JSON answer as text the free-text reader ranks correctly: the diagnosis, then each
/// differential item, each its own sentence, then every other string; and its code, if given.
fn structured_text(answer: &str) -> Option<(String, Option<String>)> {
    let value: serde_json::Value = serde_json::from_str(answer.trim()).ok()?;
    let object = value.as_object()?;
    let mut text = String::new();
    let mut push = |s: &str| {
        // The sentence break keeps each item apart; a diagnosis cue marks the primary.
        text.push_str(s);
        text.push('\n');
    };
    if let Some(d) = object.get("diagnosis").and_then(|d| d.as_str()) {
        push(&format!("diagnosis: {d}"));
    }
    if let Some(items) = object.get("differential").and_then(|d| d.as_array()) {
        for item in items {
            let name = item
                .as_str()
                .or_else(|| item.get("diagnosis").and_then(|d| d.as_str()));
            if let Some(name) = name {
                push(name);
            }
        }
    }
    for (key, value) in object {
        if !matches!(
            key.as_str(),
            "diagnosis" | "differential" | "code" | "diagnosis_code"
        ) {
            strings(value, &mut push);
        }
    }
    let code = object
        .get("diagnosis_code")
        .or_else(|| object.get("code"))
        .and_then(|c| c.as_str())
        .map(|c| c.trim().to_ascii_lowercase());
    Some((text, code))
}

fn strings(value: &serde_json::Value, push: &mut impl FnMut(&str)) {
    match value {
        serde_json::Value::String(s) => push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, push)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, push)),
        _ => {}
    }
}

fn score(diagnosis: DiagnosisOutcome, findings: &Findings) -> f64 {
    let dx = match diagnosis {
        DiagnosisOutcome::Ranked {
            rank,
            hedged,
            also_negated,
        } => {
            let mut s = 1.0 / f64::from(rank.max(1));
            if hedged {
                s *= 0.5;
            }
            if also_negated {
                s *= 0.5;
            }
            s
        }
        _ => 0.0,
    };
    let f: f64 = findings
        .all()
        .iter()
        .map(|c| match c {
            Check::Agree => 1.0,
            Check::NotStated => 0.5,
            Check::Contradict => 0.0,
        })
        .sum::<f64>()
        / 6.0;
    0.6 * dx + 0.4 * f
}
