//! Reading a text into what the matcher compares: the diagnoses it states (in order, each
//! negated or hedged or neither), the findings it states and their polarity, and which side each
//! named site is on.
//!
//! Negation is NegEx's (Chapman et al., 2001) reduced to what answers need: a trigger before
//! ("no", "without", "no evidence of", "negative for") negates what follows up to the end of its
//! clause; one after ("ruled out", "excluded", "absent") what precedes back to its start. A clause
//! ends at `. ; : ! ?`, a line break, a bracket, "but"-like words, or a comma, except a comma
//! inside a short negated list ("no mass, haemorrhage or restricted diffusion").

use crate::lexicon::{self, Fact, Level, Meaning, Seq, Side, SiteKind, Term, Trie};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Term(Term),
    /// A word no table knows.
    Word,
    /// [`Term::And`].
    And,
    /// [`Term::ClauseEnd`].
    ClauseEnd,
    Comma,
    SentenceEnd,
}

/// One unit and where in the text it came from (byte offsets), for showing a span.
#[derive(Debug, Clone, Copy)]
struct Placed {
    unit: Unit,
    start: usize,
    end: usize,
}

/// A diagnosis the text states: one sentence's run of diagnosis terms between separators.
#[derive(Debug, Clone)]
pub(crate) struct DxItem {
    /// Sorted, without repeats.
    pub(crate) dx: Vec<u32>,
    pub(crate) quals: Vec<(u8, u8)>,
    pub(crate) negated: bool,
    pub(crate) hedged: bool,
    pub(crate) sentence: usize,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Reading {
    pub(crate) items: Vec<DxItem>,
    /// (fact, stated present).
    pub(crate) facts: Vec<(Fact, bool)>,
    /// Affirmed (side, site) pairs.
    pub(crate) sided: Vec<(Side, u16)>,
    /// Affirmed sites.
    pub(crate) sites: Vec<u16>,
    /// Byte range of each sentence that holds at least one word, and whether it has a
    /// diagnosis cue ("diagnosis", "impression", "consistent with").
    pub(crate) sentences: Vec<Sentence>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Sentence {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) cue: bool,
    /// Only words no table knows, and few of them: perhaps a diagnosis the matcher does not
    /// know ("Neurosarcoidosis."), so an answer opening with one is not ranked by what follows.
    pub(crate) unknown_statement: bool,
}

/// At most this many unknown words make an [`Sentence::unknown_statement`].
const SHORT_STATEMENT: usize = 6;

/// A word or a break of `text`: `word` indexes the normalised words (lower case, American
/// spelling), `None` for a break; `start..end` is where it stands in `text`.
struct Token {
    word: Option<std::ops::Range<usize>>,
    unit: Unit,
    start: usize,
    end: usize,
}

/// The words of `text`, normalised into one buffer (one allocation per answer, not per word),
/// and the breaks between them.
fn tokens(text: &str) -> (String, Vec<Token>) {
    let mut buffer = String::with_capacity(text.len());
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut word_start: Option<(usize, usize)> = None; // (in text, in buffer)
    let flush = |buffer: &mut String,
                 word_start: &mut Option<(usize, usize)>,
                 end: usize,
                 out: &mut Vec<Token>| {
        if let Some((start, from)) = word_start.take() {
            if let Some(us) = lexicon::american(&buffer[from..]) {
                buffer.truncate(from);
                buffer.push_str(&us);
            }
            out.push(Token {
                word: Some(from..buffer.len()),
                unit: Unit::Word,
                start,
                end,
            });
        }
    };
    for (i, c) in text.char_indices() {
        // ASCII first: Unicode's tables only for the rare other letter.
        if c.is_ascii_alphanumeric() {
            if word_start.is_none() {
                word_start = Some((i, buffer.len()));
            }
            buffer.push(c.to_ascii_lowercase());
            continue;
        }
        if !c.is_ascii() && c.is_alphanumeric() {
            if word_start.is_none() {
                word_start = Some((i, buffer.len()));
            }
            buffer.extend(c.to_lowercase());
            continue;
        }
        let digit_at = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_digit);
        let unit = match c {
            // "2.5 hours": a decimal point is part of the number.
            '.' if i > 0 && digit_at(i - 1) && digit_at(i + 1) => {
                buffer.push('.');
                continue;
            }
            // "Dawson's": the apostrophe joins.
            '\'' | '\u{2019}' if word_start.is_some() => continue,
            '.' | ';' | '!' | '?' | '\n' => Some(Unit::SentenceEnd),
            // "Final answer: X": the colon keeps the cue and the diagnosis in one sentence.
            ',' | ':' | '(' | ')' | '[' | ']' => Some(Unit::Comma),
            _ => None,
        };
        flush(&mut buffer, &mut word_start, i, &mut out);
        if let Some(unit) = unit {
            out.push(Token {
                word: None,
                unit,
                start: i,
                end: i + c.len_utf8(),
            });
        }
    }
    flush(&mut buffer, &mut word_start, text.len(), &mut out);
    (buffer, out)
}

/// The units of `text`: each run of words read through the truth's phrases and the built-in
/// ones, the longer phrase winning (the truth's on a tie: the curator's word is the case's).
fn units(text: &str, own: &Trie) -> Vec<Placed> {
    let (buffer, raw) = tokens(text);
    // A break is the empty word, which no phrase contains: a phrase never spans one.
    let words: Vec<&str> = raw
        .iter()
        .map(|t| t.word.clone().map_or("", |r| &buffer[r]))
        .collect();
    let mut out = Vec::with_capacity(raw.len());
    let builtin = lexicon::builtin();
    let mut i = 0;
    while i < raw.len() {
        let Token {
            word,
            unit,
            start,
            end,
        } = &raw[i];
        if word.is_none() {
            out.push(Placed {
                unit: *unit,
                start: *start,
                end: *end,
            });
            i += 1;
            continue;
        }
        let run = &words[i..];
        let mine = if own.is_empty() {
            None
        } else {
            own.longest(run)
        };
        let general = builtin.longest(run);
        let found: Option<(Meaning, usize)> = match (mine, general) {
            (Some(m), Some(g)) => Some(if g.1 > m.1 { g } else { m }),
            (m, g) => m.or(g),
        };
        match found {
            Some(((first, second), len)) => {
                let end = raw[i + len - 1].end;
                let unit = match first {
                    Term::And => Unit::And,
                    Term::ClauseEnd => Unit::ClauseEnd,
                    term => Unit::Term(term),
                };
                out.push(Placed {
                    unit,
                    start: *start,
                    end,
                });
                if let Some(second) = second {
                    out.push(Placed {
                        unit: Unit::Term(second),
                        start: *start,
                        end,
                    });
                }
                i += len;
            }
            None => {
                out.push(Placed {
                    unit: Unit::Word,
                    start: *start,
                    end: *end,
                });
                i += 1;
            }
        }
    }
    out
}

/// Which units a negation covers.
fn negation(units: &[Placed]) -> Vec<bool> {
    let mut negated = vec![false; units.len()];
    let mut active = false;
    let mut clause_start = 0;
    for i in 0..units.len() {
        match units[i].unit {
            Unit::SentenceEnd | Unit::ClauseEnd => {
                active = false;
                clause_start = i + 1;
            }
            Unit::Comma => {
                if !(active && short_list_continues(&units[i + 1..])) {
                    active = false;
                }
                clause_start = i + 1;
            }
            Unit::Term(Term::NegPre) => active = true,
            Unit::Term(Term::NegPost) => {
                for flag in &mut negated[clause_start..i] {
                    *flag = true;
                }
            }
            _ => {
                if active {
                    negated[i] = true;
                }
            }
        }
    }
    negated
}

/// After a comma in a negated clause: is what follows the next item of the same list ("no
/// mass, haemorrhage or restricted diffusion")? Yes when the rest of the clause is short and
/// joined by "or", "and" or "nor".
fn short_list_continues(rest: &[Placed]) -> bool {
    let clause: Vec<_> = rest
        .iter()
        .take_while(|p| !matches!(p.unit, Unit::SentenceEnd | Unit::ClauseEnd | Unit::Comma))
        .collect();
    let joined = clause.iter().any(|p| {
        matches!(
            p.unit,
            Unit::And | Unit::Term(Term::Or) | Unit::Term(Term::NegPre)
        )
    });
    let next_is_comma = rest
        .get(clause.len())
        .is_some_and(|p| p.unit == Unit::Comma);
    clause.len() <= 5 && (joined || next_is_comma)
}

/// Reads `text` with the built-in phrases and the truth's own (`own`).
pub(crate) fn read(text: &str, own: &Trie) -> Reading {
    let units = units(text, own);
    let negated = negation(&units);
    let mut reading = Reading::default();

    // Sentences.
    let mut sentence_of = vec![0usize; units.len()];
    let mut current: Option<Sentence> = None;
    let mut unknown_words = 0;
    for (i, p) in units.iter().enumerate() {
        if p.unit == Unit::SentenceEnd {
            if let Some(mut s) = current.take() {
                s.unknown_statement &= (1..=SHORT_STATEMENT).contains(&unknown_words);
                reading.sentences.push(s);
            }
            unknown_words = 0;
            continue;
        }
        let s = current.get_or_insert(Sentence {
            start: p.start,
            end: p.end,
            cue: false,
            unknown_statement: true,
        });
        s.end = p.end;
        match p.unit {
            Unit::Word => {
                let number = text[p.start..p.end]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.');
                if !number {
                    unknown_words += 1;
                }
            }
            Unit::Term(Term::Cue) => s.cue = true,
            Unit::And | Unit::Comma | Unit::Term(Term::Filler) => {}
            _ => s.unknown_statement = false,
        }
        sentence_of[i] = reading.sentences.len();
    }
    if let Some(mut s) = current.take() {
        s.unknown_statement &= (1..=SHORT_STATEMENT).contains(&unknown_words);
        reading.sentences.push(s);
    }

    // Diagnosis items: runs of diagnosis terms, split at commas, "or" and sentence ends.
    let mut item: Option<DxItem> = None;
    let mut item_units: Vec<usize> = Vec::new();
    let mut quals_pending: Vec<(u8, u8)> = Vec::new();
    fn finish(item: &mut Option<DxItem>, reading: &mut Reading) {
        if let Some(mut it) = item.take() {
            it.dx.sort_unstable();
            it.dx.dedup();
            reading.items.push(it);
        }
    }
    for (i, p) in units.iter().enumerate() {
        match p.unit {
            Unit::SentenceEnd | Unit::Comma | Unit::ClauseEnd | Unit::Term(Term::Or) => {
                finish(&mut item, &mut reading);
                quals_pending.clear();
            }
            Unit::Term(Term::Qual(g, v)) => match &mut item {
                Some(it) => it.quals.push((g, v)),
                None => quals_pending.push((g, v)),
            },
            Unit::Term(Term::Dx(dx)) => {
                let it = item.get_or_insert_with(|| DxItem {
                    dx: Vec::new(),
                    quals: std::mem::take(&mut quals_pending),
                    negated: true,
                    hedged: false,
                    sentence: sentence_of[i],
                });
                it.dx.push(dx);
                // An item is negated only if every diagnosis in it is.
                it.negated &= negated[i];
                item_units.push(reading.items.len());
            }
            _ => {}
        }
    }
    finish(&mut item, &mut reading);

    // Hedges: each marks the nearest diagnosis item in its sentence.
    let dx_positions: Vec<(usize, usize)> = {
        let mut out = Vec::new();
        let mut n = 0;
        for (i, p) in units.iter().enumerate() {
            if let Unit::Term(Term::Dx(_)) = p.unit {
                out.push((i, item_units[n]));
                n += 1;
            }
        }
        out
    };
    for (i, p) in units.iter().enumerate() {
        if p.unit != Unit::Term(Term::Hedge) {
            continue;
        }
        let nearest = dx_positions
            .iter()
            .filter(|(j, _)| sentence_of[*j] == sentence_of[i])
            .min_by_key(|(j, _)| (j.abs_diff(i), *j < i));
        if let Some((_, item)) = nearest {
            reading.items[*item].hedged = true;
        }
    }

    // Findings.
    for (i, p) in units.iter().enumerate() {
        match p.unit {
            Unit::Term(Term::Fact(fact, present)) => {
                reading.facts.push((fact, present != negated[i]))
            }
            Unit::Term(Term::Level(level)) => {
                if let Some(seq) = nearest_sequence(&units, &sentence_of, i) {
                    if let Some(fact) = signal(seq, level) {
                        reading.facts.push((fact, !negated[i]));
                    }
                }
            }
            Unit::Term(Term::Site(site)) if !negated[i] => reading.sites.push(site),
            Unit::Term(Term::Side(side)) if !negated[i] => {
                // The side names the next site in its clause, a few words on ("left middle
                // cerebral artery territory", "both cerebral hemispheres").
                let site = units[i + 1..]
                    .iter()
                    .take(4)
                    .take_while(|p| {
                        !matches!(
                            p.unit,
                            Unit::SentenceEnd
                                | Unit::Comma
                                | Unit::ClauseEnd
                                | Unit::And
                                | Unit::Term(Term::Side(_))
                        )
                    })
                    .find_map(|p| match p.unit {
                        Unit::Term(Term::Site(site)) => Some(site),
                        _ => None,
                    });
                if let Some(site) = site {
                    reading.sided.push((side, site));
                }
            }
            _ => {}
        }
    }
    reading
}

/// How far (in units) an intensity word looks for the sequence it describes.
const SEQUENCE_REACH: usize = 6;

fn nearest_sequence(units: &[Placed], sentence_of: &[usize], i: usize) -> Option<Seq> {
    let lo = i.saturating_sub(SEQUENCE_REACH);
    let hi = (i + SEQUENCE_REACH).min(units.len() - 1);
    (lo..=hi)
        .filter(|j| sentence_of[*j] == sentence_of[i] && units[*j].unit != Unit::SentenceEnd)
        .filter_map(|j| match units[j].unit {
            Unit::Term(Term::Seq(seq)) => Some((j.abs_diff(i), j < i, seq)),
            _ => None,
        })
        // Nearest; on a tie the sequence after the word ("bright on DWI").
        .min_by_key(|(d, before, _)| (*d, *before))
        .map(|(_, _, seq)| seq)
}

fn signal(seq: Seq, level: Level) -> Option<Fact> {
    match (seq, level) {
        (Seq::T2Flair, Level::High) => Some(Fact::T2FlairHigh),
        (Seq::T2Flair, Level::Low) => Some(Fact::T2FlairLow),
        (Seq::T1, Level::High) => Some(Fact::T1High),
        (Seq::T1, Level::Low) => Some(Fact::T1Low),
        (Seq::Dwi, Level::High) | (Seq::Adc, Level::Low) => Some(Fact::RestrictedDiffusion),
        // Dark on DWI or bright on ADC says nothing the answers here turn on (T2 shine-through).
        (Seq::Dwi, Level::Low) | (Seq::Adc, Level::High) => None,
    }
}

/// Sites of one kind among `sites`.
pub(crate) fn of_kind(sites: &[u16], kind: SiteKind) -> impl Iterator<Item = u16> + '_ {
    sites
        .iter()
        .copied()
        .filter(move |s| lexicon::site_kind(*s) == kind)
}
