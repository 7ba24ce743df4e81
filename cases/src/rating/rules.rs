//! The rules a rating and its error labels obey, wherever they come from: an edit in the app, or
//! a whole rating merged from another site's results package. Written once so that what the app
//! refuses a merge cannot store.
//!
//! Pure: the functions read the study's rubric and taxonomy, the response's texts (answer,
//! rationale, turns) and the case's series ids (a [`ResponseContext`]), never the database. That
//! a mark lies inside its series' volume needs the images' geometry, which the caller reads and
//! [`mark_outside`] judges.

use super::edits::{LabelEdit, RatingEdit, SpanText};
use crate::model::{Anchor, Rubric, RubricDimension, TaskFamily, Taxonomy, Turn};
use crate::store::enum_text;
use serde::Serialize;

/// A clinician's comment longer than this is a paste accident, not a comment.
pub(crate) const MAX_COMMENT_CHARS: usize = 20_000;
/// A week on one response is a clock error, not reading time.
pub(crate) const MAX_SECONDS_ON_TASK: f64 = 7.0 * 24.0 * 3600.0;
/// Confidence is a 1–5 Likert item.
const CONFIDENCE: std::ops::RangeInclusive<u8> = 1..=5;
/// Severity: 1 minor, 2 moderate, 3 major.
const SEVERITY: std::ops::RangeInclusive<u8> = 1..=3;

/// One broken rule: the field (as the edit names it) and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    pub field: String,
    pub message: String,
}

fn violation(field: impl Into<String>, message: impl Into<String>) -> Violation {
    Violation {
        field: field.into(),
        message: message.into(),
    }
}

/// Every rule the scores, comment and time of `edit` break, in the order a form shows them, for
/// a task of `family`: a dimension is scored or marked not applicable only where the rubric
/// applies it to that family, and marked not applicable only where the rubric allows it.
pub(crate) fn rating_violations(
    rubric: &Rubric,
    family: TaskFamily,
    edit: &RatingEdit,
) -> Vec<Violation> {
    let mut found = Vec::new();
    if let Some(overall) = edit.overall.filter(|o| !rubric.overall.admits(*o)) {
        found.push(violation(
            "overall",
            format!(
                "{overall} is not on the scale {} to {} in steps of {}",
                rubric.overall.min, rubric.overall.max, rubric.overall.step
            ),
        ));
    }
    for (id, value) in &edit.dimensions {
        match applying_dimension(rubric, family, id) {
            Err(v) => found.push(v),
            Ok(dimension) if !dimension.scale.admits(*value) => found.push(violation(
                format!("dimensions.{id}"),
                format!(
                    "{value} is not on the scale {} to {} in steps of {}",
                    dimension.scale.min, dimension.scale.max, dimension.scale.step
                ),
            )),
            Ok(_) => {}
        }
    }
    for id in &edit.not_applicable {
        let field = format!("dimensions.{id}");
        match applying_dimension(rubric, family, id) {
            Err(v) => found.push(v),
            Ok(_) if edit.dimensions.contains_key(id) => found.push(violation(
                field,
                "is both scored and marked not applicable: keep one",
            )),
            Ok(dimension) if !dimension.allow_not_applicable => found.push(violation(
                field,
                format!(
                    "the rubric does not allow \"not applicable\" for {:?}: score it",
                    dimension.label
                ),
            )),
            Ok(_) => {}
        }
    }
    if let Some(confidence) = edit.confidence.filter(|c| !CONFIDENCE.contains(c)) {
        found.push(violation("confidence", format!("1 to 5, got {confidence}")));
    }
    found.extend(comment_violation("comment", &edit.comment));
    let seconds = edit.seconds_on_task;
    if !seconds.is_finite() || !(0.0..=MAX_SECONDS_ON_TASK).contains(&seconds) {
        found.push(violation(
            "seconds_on_task",
            format!("0 to {MAX_SECONDS_ON_TASK} seconds, got {seconds}"),
        ));
    }
    found
}

/// A score a draft holds that the study's current rubric no longer admits: the rubric moved on
/// (a new version) after it was saved, dropping the dimension, narrowing its scale or its task
/// families, or no longer allowing "not applicable". Such a score can be neither saved again nor
/// submitted, and the rater cannot see its row, so the reading screen takes it out of the draft
/// and says which, with the rule's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OutdatedScore {
    /// `overall` or `dimensions.<id>`, as the edit names it.
    pub field: String,
    pub message: String,
}

/// The scores of `scores` the rubric refuses ([`rating_violations`] on the overall score and
/// the dimensions: what a rubric change can make wrong).
pub(crate) fn outdated_scores(
    rubric: &Rubric,
    family: TaskFamily,
    scores: &RatingEdit,
) -> Vec<OutdatedScore> {
    rating_violations(rubric, family, scores)
        .into_iter()
        .filter(|v| v.field == "overall" || v.field.starts_with("dimensions."))
        .map(|Violation { field, message }| OutdatedScore { field, message })
        .collect()
}

/// The rubric's dimension `id` if it applies to tasks of `family`; otherwise why a score of it
/// is refused, under its field `dimensions.<id>`. The ratings CSV import checks its rows with
/// this too.
pub(crate) fn applying_dimension<'r>(
    rubric: &'r Rubric,
    family: TaskFamily,
    id: &str,
) -> Result<&'r RubricDimension, Violation> {
    let field = format!("dimensions.{id}");
    let Some(dimension) = rubric.dimensions.iter().find(|d| d.id == id) else {
        return Err(violation(
            field,
            format!(
                "the rubric has no dimension {id:?} (it has {})",
                rubric
                    .dimensions
                    .iter()
                    .map(|d| d.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    if !dimension.applies_to(family) {
        return Err(violation(
            field,
            format!(
                "{:?} is not scored on {} tasks (the rubric applies it to {})",
                dimension.label,
                enum_text(&family),
                dimension
                    .families
                    .iter()
                    .flatten()
                    .map(enum_text)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(dimension)
}

fn comment_violation(field: &str, comment: &str) -> Option<Violation> {
    let chars = comment.chars().count();
    (chars > MAX_COMMENT_CHARS).then(|| {
        violation(
            field,
            format!("at most {MAX_COMMENT_CHARS} characters, got {chars}"),
        )
    })
}

/// What a label is checked against: the study's taxonomy, the texts spans point into (the
/// answer, the rationale, the consultation's turns) and the case's series marks may be drawn on.
/// Borrowed, so the desktop store's `ResponseContext` and the team server's stored item both
/// lend theirs.
pub(crate) struct LabelContext<'a> {
    pub taxonomy: &'a Taxonomy,
    pub answer: &'a str,
    pub rationale: Option<&'a str>,
    pub turns: &'a [Turn],
    pub series_ids: &'a [String],
}

impl LabelContext<'_> {
    /// The text a span in `text` (and `turn`) lies in, with its name for a message; or why
    /// there is none.
    fn text(&self, text: SpanText, turn: Option<u32>) -> Result<(&str, String), Violation> {
        match (text, turn) {
            (SpanText::Answer, None) => Ok((self.answer, "the answer".into())),
            (SpanText::Rationale, None) => self
                .rationale
                .map(|r| (r, "the rationale".into()))
                .ok_or_else(|| {
                    violation("span", "this response has no rationale to select a span in")
                }),
            (SpanText::Turn, Some(index)) => self
                .turns
                .get(index as usize)
                .map(|t| (t.content.as_str(), format!("turn index {index}")))
                .ok_or_else(|| {
                    violation(
                        "turn",
                        format!(
                            "this response has {} turn(s) (0 to {}), not a turn {index}",
                            self.turns.len(),
                            self.turns.len() as i64 - 1
                        ),
                    )
                }),
            (SpanText::Turn, None) => Err(violation(
                "turn",
                "a span in a turn names the turn (its index in the response's turns)",
            )),
            (_, Some(_)) => Err(violation(
                "turn",
                "only a span in a turn (text \"turn\") names a turn",
            )),
        }
    }
}

/// Every rule `label` breaks against the taxonomy, the response's texts and the case's series. An
/// unknown category stops there: the other rules depend on it.
pub(crate) fn label_violations(context: &LabelContext<'_>, label: &LabelEdit) -> Vec<Violation> {
    let Some(category) = context
        .taxonomy
        .categories
        .iter()
        .find(|c| c.code == label.category)
    else {
        return vec![violation(
            "category",
            format!(
                "{:?} is not a category of the study's taxonomy",
                label.category
            ),
        )];
    };
    let mut found = Vec::new();
    if !SEVERITY.contains(&label.severity) {
        found.push(violation(
            "severity",
            format!("1 (minor) to 3 (major), got {}", label.severity),
        ));
    }
    found.extend(comment_violation("comment", &label.comment));
    match label.span {
        Some(span) => match context.text(label.text, label.turn) {
            Ok((text, name)) => found.extend(span_violation(text, &name, span)),
            Err(v) => found.push(v),
        },
        None if !label.text.is_rationale() || label.turn.is_some() => found.push(violation(
            "text",
            "names the text a span lies in, and this label has no span",
        )),
        None => {}
    }
    if let Some(mark) = &label.mark {
        if let Err(message) = mark.check_shape() {
            found.push(violation("mark", message));
        } else if !context.series_ids.contains(&mark.series_id) {
            found.push(violation(
                "mark.series_id",
                format!(
                    "{:?} is not a series of this case (it has {})",
                    mark.series_id,
                    context.series_ids.join(", ")
                ),
            ));
        }
    }
    let (anchor_field, anchored, what) = match category.anchor {
        Anchor::Image => (
            "mark",
            label.mark.is_some(),
            "is pointed at on the image: draw a mark",
        ),
        Anchor::Text => (
            "span",
            label.span.is_some(),
            "is pointed at in the text: select a span of the answer, the rationale or a turn",
        ),
        _ => (
            "span",
            label.span.is_some() || label.mark.is_some(),
            "needs a span of a text or a mark on the image",
        ),
    };
    if !anchored {
        found.push(violation(
            anchor_field,
            format!("{} ({}) {what}", category.code, category.name),
        ));
    }
    found
}

/// A span is `[start, end)` in UTF-16 code units (JavaScript string indices) of its text, which
/// `name` names in the message.
fn span_violation(text: &str, name: &str, [start, end]: [u32; 2]) -> Option<Violation> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let (start, end) = (start as usize, end as usize);
    if start >= end || end > units.len() {
        return Some(violation(
            "span",
            format!(
                "[{start}, {end}) is not a non-empty range within {name}'s {} UTF-16 code units",
                units.len()
            ),
        ));
    }
    // A boundary between the two halves of a surrogate pair would cut a character in two.
    let splits = |at: usize| at < units.len() && (0xDC00..0xE000).contains(&units[at]);
    (splits(start) || splits(end))
        .then(|| violation("span", "a span boundary falls inside a character"))
}

/// What a rating of a task of `family` still lacks to be submitted: `overall`,
/// `dimensions.<id>` of every rubric dimension that applies to the family (scored, or marked
/// not applicable where allowed), `correctness`, `confidence`. `None` is a rating not started.
/// Why a label's (or a lesion's) mark lies outside the volume of its series, whose geometry is
/// `geometry`, if it does (a point off the images would be shown nowhere).
pub(crate) fn mark_outside(
    geometry: &imaging::SeriesGeometry,
    mark: &crate::marks::Mark,
) -> Option<String> {
    mark.check_inside(geometry.dims, &geometry.voxel_to_patient)
        .err()
        .map(|message| format!("{message} (series {:?})", mark.series_id))
}

pub(crate) fn missing_for_submit(
    rubric: &Rubric,
    family: TaskFamily,
    rating: Option<&RatingEdit>,
) -> Vec<String> {
    let mut missing = Vec::new();
    if rating.and_then(|r| r.overall).is_none() {
        missing.push("overall".to_owned());
    }
    for dimension in rubric.dimensions.iter().filter(|d| d.applies_to(family)) {
        let answered = rating.is_some_and(|r| {
            r.dimensions.contains_key(&dimension.id) || r.not_applicable.contains(&dimension.id)
        });
        if !answered {
            missing.push(format!("dimensions.{}", dimension.id));
        }
    }
    if rating.and_then(|r| r.correctness).is_none() {
        missing.push("correctness".to_owned());
    }
    if rating.and_then(|r| r.confidence).is_none() {
        missing.push("confidence".to_owned());
    }
    missing
}

/// What may keep a submitted rating from being reopened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ReopenLocks<'a> {
    /// When the rater saw the case's ground truth, if they did (every reveal is recorded).
    pub ground_truth_seen_at: Option<&'a str>,
    /// The study lead locked this rater's submitted ratings (the team server's reveal lock).
    pub locked_by_lead: bool,
}

/// Why a submitted rating may not be reopened. Its `Display` is the refusal's message; a screen
/// words it from the kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReopenLock {
    /// The rater saw the case's ground truth at `at`: a rating changed after that would no
    /// longer be independent of it, and the report could not tell.
    GroundTruthSeen { at: String },
    /// The study lead locked the rater's submitted ratings (the team server's reveal lock).
    LockedByLead,
}

impl std::fmt::Display for ReopenLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReopenLock::GroundTruthSeen { at } => write!(
                f,
                "this rating is locked: you saw the case's ground truth at {at}, and a rating \
                 changed after that would no longer be independent of it"
            ),
            ReopenLock::LockedByLead => f.write_str(
                "the study lead has locked your submitted ratings: they cannot be reopened",
            ),
        }
    }
}

/// Why a reveal of the ground truth is refused while the study lead's lock holds: the words the
/// team server and a rater's computer (which learned of the lock) both give.
pub(crate) const REVEAL_CLOSED_BY_LEAD: &str =
    "the study lead has closed the ground truth to you for this study";

/// Why a submitted rating may not be reopened, or `None` when it may: the one rule the local
/// reopen, the team server's and the reading item (which shows the reason instead of offering
/// Reopen) apply.
pub(crate) fn reopen_refusal(locks: ReopenLocks<'_>) -> Option<ReopenLock> {
    if locks.locked_by_lead {
        return Some(ReopenLock::LockedByLead);
    }
    locks
        .ground_truth_seen_at
        .map(|at| ReopenLock::GroundTruthSeen { at: at.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marks::{Mark, MarkKind, Plane};
    use crate::model::{Bucket, ErrorCategory, RubricDimension, Scale};
    use crate::rating::Correctness;
    use std::collections::{BTreeMap, BTreeSet};

    fn rubric() -> Rubric {
        let scale = |min: f64, max: f64, step: f64| Scale {
            label: None,
            min,
            max,
            step,
            levels: Vec::new(),
        };
        Rubric {
            overall: scale(1.0, 5.0, 1.0),
            dimensions: vec![
                RubricDimension {
                    id: "accuracy".into(),
                    label: "Accuracy".into(),
                    description: None,
                    scale: scale(0.0, 2.0, 0.5),
                    families: None,
                    allow_not_applicable: false,
                },
                // Scored on lesion identification only, and may be marked not applicable.
                RubricDimension {
                    id: "localisation".into(),
                    label: "Localisation".into(),
                    description: None,
                    scale: scale(1.0, 5.0, 1.0),
                    families: Some(vec![TaskFamily::LesionIdentification]),
                    allow_not_applicable: true,
                },
                // Every family; not applicable is allowed.
                RubricDimension {
                    id: "turns".into(),
                    label: "Use of follow-up".into(),
                    description: None,
                    scale: scale(1.0, 5.0, 1.0),
                    families: None,
                    allow_not_applicable: true,
                },
            ],
        }
    }

    /// The family the rating tests' task has unless a case says otherwise.
    const DIAGNOSIS: TaskFamily = TaskFamily::DifferentialDiagnosis;
    const LESIONS: TaskFamily = TaskFamily::LesionIdentification;

    struct Owned {
        taxonomy: Taxonomy,
        answer: String,
        rationale: Option<String>,
        turns: Vec<Turn>,
        series_ids: Vec<String>,
    }

    impl Owned {
        fn labels(&self) -> LabelContext<'_> {
            LabelContext {
                taxonomy: &self.taxonomy,
                answer: &self.answer,
                rationale: self.rationale.as_deref(),
                turns: &self.turns,
                series_ids: &self.series_ids,
            }
        }
    }

    fn context() -> Owned {
        let category = |code: &str, anchor: Anchor| ErrorCategory {
            code: code.into(),
            name: format!("{code} name"),
            definition: String::new(),
            anchor,
            bucket: Bucket::Perceptual,
        };
        Owned {
            taxonomy: Taxonomy {
                id: "test".into(),
                categories: vec![
                    category("T", Anchor::Text),
                    category("I", Anchor::Image),
                    category("E", Anchor::TextImage),
                ],
            },
            // Two units: a span [0, 3) of the rationale lies past the answer's end.
            answer: "MS".into(),
            // "a", U+1F9E0 (two UTF-16 units: 1 and 2), "b": four units.
            rationale: Some("a\u{1F9E0}b".into()),
            // Turn 0 is one unit; turn 1 seven ("é" is one).
            turns: vec![Turn::new("user", "?"), Turn::new("assistant", "still é")],
            series_ids: vec!["t1".into()],
        }
    }

    /// A complete rating of a differential-diagnosis task: accuracy scored, the follow-up
    /// dimension marked not applicable, localisation (lesion identification only) left out.
    fn edit() -> RatingEdit {
        RatingEdit {
            overall: Some(3.0),
            not_applicable: BTreeSet::from(["turns".into()]),
            dimensions: BTreeMap::from([("accuracy".into(), 1.5)]),
            correctness: Some(Correctness::Partly),
            confidence: Some(4),
            comment: "fine".into(),
            seconds_on_task: 30.0,
        }
    }

    fn label(category: &str, span: Option<[u32; 2]>, mark: Option<Mark>) -> LabelEdit {
        LabelEdit {
            category: category.into(),
            severity: 2,
            span,
            text: SpanText::Rationale,
            turn: None,
            mark,
            comment: String::new(),
        }
    }

    fn point(series: &str) -> Mark {
        Mark {
            series_id: series.into(),
            kind: MarkKind::Point,
            plane: Plane::Axial,
            points_lps_mm: vec![[0.0, 0.0, 0.0]],
        }
    }

    fn fields(found: Vec<Violation>) -> Vec<String> {
        found.into_iter().map(|v| v.field).collect()
    }

    #[test]
    fn each_rating_rule_names_its_field() {
        /// A case's name, how it changes a valid edit, and the fields it expects refused.
        type Case = (
            &'static str,
            Box<dyn Fn(&mut RatingEdit)>,
            &'static [&'static str],
        );
        let cases: Vec<Case> = vec![
            ("a complete edit", Box::new(|_| {}), &[]),
            (
                "a dimension of another family",
                Box::new(|e| {
                    e.dimensions.insert("localisation".into(), 3.0);
                }),
                &["dimensions.localisation"],
            ),
            (
                "not applicable on a dimension of another family",
                Box::new(|e| {
                    e.not_applicable.insert("localisation".into());
                }),
                &["dimensions.localisation"],
            ),
            (
                "not applicable where the rubric does not allow it",
                Box::new(|e| {
                    e.dimensions.remove("accuracy");
                    e.not_applicable.insert("accuracy".into());
                }),
                &["dimensions.accuracy"],
            ),
            (
                "scored and not applicable at once",
                Box::new(|e| {
                    e.dimensions.insert("turns".into(), 2.0);
                }),
                &["dimensions.turns"],
            ),
            (
                "not applicable on an unknown dimension",
                Box::new(|e| {
                    e.not_applicable.insert("style".into());
                }),
                &["dimensions.style"],
            ),
            (
                "the allowed dimension scored instead",
                Box::new(|e| {
                    e.not_applicable.clear();
                    e.dimensions.insert("turns".into(), 2.0);
                }),
                &[],
            ),
            (
                "off-step overall",
                Box::new(|e| e.overall = Some(2.5)),
                &["overall"],
            ),
            (
                "overall above the scale",
                Box::new(|e| e.overall = Some(6.0)),
                &["overall"],
            ),
            (
                "unknown dimension",
                Box::new(|e| {
                    e.dimensions.insert("style".into(), 1.0);
                }),
                &["dimensions.style"],
            ),
            (
                "dimension off its scale",
                Box::new(|e| {
                    e.dimensions.insert("accuracy".into(), 2.5);
                }),
                &["dimensions.accuracy"],
            ),
            (
                "confidence 0",
                Box::new(|e| e.confidence = Some(0)),
                &["confidence"],
            ),
            (
                "confidence 6",
                Box::new(|e| e.confidence = Some(6)),
                &["confidence"],
            ),
            (
                "20,000 characters",
                Box::new(|e| e.comment = "é".repeat(MAX_COMMENT_CHARS)),
                &[],
            ),
            (
                "20,001 characters",
                Box::new(|e| e.comment = "é".repeat(MAX_COMMENT_CHARS + 1)),
                &["comment"],
            ),
            (
                "negative time",
                Box::new(|e| e.seconds_on_task = -1.0),
                &["seconds_on_task"],
            ),
            (
                "NaN time",
                Box::new(|e| e.seconds_on_task = f64::NAN),
                &["seconds_on_task"],
            ),
            (
                "exactly a week",
                Box::new(|e| e.seconds_on_task = MAX_SECONDS_ON_TASK),
                &[],
            ),
            (
                "over a week",
                Box::new(|e| e.seconds_on_task = MAX_SECONDS_ON_TASK + 1.0),
                &["seconds_on_task"],
            ),
            (
                "two at once, in form order",
                Box::new(|e| {
                    e.overall = Some(0.0);
                    e.confidence = Some(9);
                }),
                &["overall", "confidence"],
            ),
        ];
        for (name, change, expected) in cases {
            let mut edited = edit();
            change(&mut edited);
            assert_eq!(
                fields(rating_violations(&rubric(), DIAGNOSIS, &edited)),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn each_label_rule_names_its_field() {
        let with = |change: fn(&mut LabelEdit), base: LabelEdit| {
            let mut label = base;
            change(&mut label);
            label
        };
        let cases: Vec<(&str, LabelEdit, &[&str])> = vec![
            (
                "a text label on the rationale",
                label("T", Some([0, 3]), None),
                &[],
            ),
            ("the whole rationale", label("T", Some([0, 4]), None), &[]),
            ("unknown category", label("X", None, None), &["category"]),
            (
                "severity 4",
                with(|l| l.severity = 4, label("T", Some([0, 1]), None)),
                &["severity"],
            ),
            (
                "long comment",
                with(
                    |l| l.comment = "x".repeat(MAX_COMMENT_CHARS + 1),
                    label("T", Some([0, 1]), None),
                ),
                &["comment"],
            ),
            ("empty span", label("T", Some([1, 1]), None), &["span"]),
            (
                "span past the end",
                label("T", Some([0, 5]), None),
                &["span"],
            ),
            (
                "span starts inside the pair",
                label("T", Some([2, 4]), None),
                &["span"],
            ),
            (
                "span ends inside the pair",
                label("T", Some([0, 2]), None),
                &["span"],
            ),
            (
                "text category without span",
                label("T", None, None),
                &["span"],
            ),
            (
                "image category without mark",
                label("I", Some([0, 1]), None),
                &["mark"],
            ),
            (
                "image category with mark",
                label("I", None, Some(point("t1"))),
                &[],
            ),
            (
                "mark on another series",
                label("I", None, Some(point("flair"))),
                &["mark.series_id"],
            ),
            (
                "mark without points",
                label(
                    "I",
                    None,
                    Some(Mark {
                        points_lps_mm: vec![],
                        ..point("t1")
                    }),
                ),
                &["mark"],
            ),
            (
                "either, with a mark",
                label("E", None, Some(point("t1"))),
                &[],
            ),
            ("either, with nothing", label("E", None, None), &["span"]),
            (
                "a span of the answer",
                with(
                    |l| l.text = SpanText::Answer,
                    label("T", Some([0, 2]), None),
                ),
                &[],
            ),
            (
                "past the answer's end, within the rationale's",
                with(
                    |l| l.text = SpanText::Answer,
                    label("T", Some([0, 3]), None),
                ),
                &["span"],
            ),
            (
                "a span of a turn",
                with(
                    |l| (l.text, l.turn) = (SpanText::Turn, Some(1)),
                    label("T", Some([0, 7]), None),
                ),
                &[],
            ),
            (
                "past that turn's end",
                with(
                    |l| (l.text, l.turn) = (SpanText::Turn, Some(0)),
                    label("T", Some([0, 2]), None),
                ),
                &["span"],
            ),
            (
                "a turn the response does not have",
                with(
                    |l| (l.text, l.turn) = (SpanText::Turn, Some(2)),
                    label("T", Some([0, 1]), None),
                ),
                &["turn"],
            ),
            (
                "a turn label without its turn",
                with(|l| l.text = SpanText::Turn, label("T", Some([0, 1]), None)),
                &["turn"],
            ),
            (
                "a turn named for the rationale",
                with(|l| l.turn = Some(1), label("T", Some([0, 1]), None)),
                &["turn"],
            ),
            (
                "a text named without a span",
                with(
                    |l| (l.text, l.turn) = (SpanText::Turn, Some(1)),
                    label("I", None, Some(point("t1"))),
                ),
                &["text"],
            ),
        ];
        for (name, label, expected) in cases {
            assert_eq!(
                fields(label_violations(&context().labels(), &label)),
                expected,
                "{name}"
            );
        }
        let no_rationale = Owned {
            rationale: None,
            ..context()
        };
        assert_eq!(
            fields(label_violations(
                &no_rationale.labels(),
                &label("T", Some([0, 1]), None)
            )),
            ["span"]
        );
    }

    #[test]
    fn a_lesion_task_takes_the_dimension_of_its_family() {
        let mut lesions = edit();
        lesions.dimensions.insert("localisation".into(), 4.0);
        assert!(rating_violations(&rubric(), LESIONS, &lesions).is_empty());
        lesions.dimensions.remove("localisation");
        lesions.not_applicable.insert("localisation".into());
        assert!(rating_violations(&rubric(), LESIONS, &lesions).is_empty());
        assert!(missing_for_submit(&rubric(), LESIONS, Some(&lesions)).is_empty());
    }

    #[test]
    fn submit_names_what_is_missing() {
        /// A case's name, the task's family, the rating, and what submit says is missing.
        type Case = (
            &'static str,
            TaskFamily,
            Option<RatingEdit>,
            &'static [&'static str],
        );
        let without = |change: fn(&mut RatingEdit)| {
            let mut rating = edit();
            change(&mut rating);
            Some(rating)
        };
        let cases: Vec<Case> = vec![
            (
                "not started, diagnosis",
                DIAGNOSIS,
                None,
                &[
                    "overall",
                    "dimensions.accuracy",
                    "dimensions.turns",
                    "correctness",
                    "confidence",
                ],
            ),
            (
                "not started, lesions: its own dimension too",
                LESIONS,
                None,
                &[
                    "overall",
                    "dimensions.accuracy",
                    "dimensions.localisation",
                    "dimensions.turns",
                    "correctness",
                    "confidence",
                ],
            ),
            (
                "complete, with not applicable",
                DIAGNOSIS,
                edit().into(),
                &[],
            ),
            (
                "the same rating on a lesion task lacks localisation",
                LESIONS,
                edit().into(),
                &["dimensions.localisation"],
            ),
            (
                "not applicable taken back",
                DIAGNOSIS,
                without(|r| r.not_applicable.clear()),
                &["dimensions.turns"],
            ),
            (
                "partial",
                DIAGNOSIS,
                without(|r| {
                    r.dimensions.clear();
                    r.confidence = None;
                }),
                &["dimensions.accuracy", "confidence"],
            ),
        ];
        for (name, family, rating, expected) in cases {
            assert_eq!(
                missing_for_submit(&rubric(), family, rating.as_ref()),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn reopen_is_refused_after_a_reveal_and_under_the_leads_lock() {
        let at = "2026-11-27T10:00:00Z";
        let seen = Some(ReopenLock::GroundTruthSeen { at: at.to_owned() });
        let table = [
            (None, false, None),
            (Some(at), false, seen),
            (None, true, Some(ReopenLock::LockedByLead)),
            (Some(at), true, Some(ReopenLock::LockedByLead)),
        ];
        for (ground_truth_seen_at, locked_by_lead, expected) in table {
            let locks = ReopenLocks {
                ground_truth_seen_at,
                locked_by_lead,
            };
            assert_eq!(reopen_refusal(locks), expected, "{locks:?}");
        }
        let message = ReopenLock::GroundTruthSeen { at: at.to_owned() }.to_string();
        assert!(
            message.contains("you saw the case's ground truth at 2026-11-27T10:00:00Z"),
            "{message}"
        );
    }
}
