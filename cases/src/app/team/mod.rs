//! The team server's rules (docs/team-server.md): who may do what in a study held on the server,
//! what a rater's login reaches of an item, and when a rating edit is accepted. Pure: the server
//! reads and writes PostgreSQL, and asks here before it answers.
//!
//! **Invariant:** every handler that touches a study first turns the caller's [`TeamMember`] into
//! a session ([`TeamMember::rater`], [`TeamMember::lead`], [`TeamMember::unblinded`]); the store
//! functions that read or write take that session, so a handler cannot skip the check. What a
//! rater receives of an item is built only by [`rater_item`], field by field from what may be
//! shown: no model name or sample, no grader output, no disease group, no other rater's work, and
//! the ground truth only after the rater submitted and asked for it, unless the lead locked them
//! out of it.

use super::permissions::{permits, Action, StudyRole};
use crate::case_codes::CaseCodes;
use crate::model::{Modality, Rubric, SeriesKind, Sex, SliceRef, TaskFamily, Taxonomy, Turn};
use crate::rating::rules::{self, LabelContext, Violation};
use crate::rating::{RaterRole, RatingEdit, RatingError, RatingStatus, TaxonomyCategory};
use crate::{Error, Result};
use imaging::SeriesGeometry;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod curation;
mod curation_package;
mod package;
mod pull;
mod rater_copy;
mod study;
pub mod wire;

pub use curation::{
    decide_review, decide_save, decide_submit, summarise, CurationCase, CurationCaseSummary,
    CurationRefusal, CurationReview, CurationSave, CurationSubmit, FieldProblem, NewVersion,
    SavedVersion, ServerVersion, StatusChange,
};
pub use curation_package::{curation_package, CurationSource, CurationSourceCase};
pub use package::{
    rater_package, results_edits, PackageExchange, PackageRecipient, PackageSource, QueuedItem,
    StoredImage,
};
// The rating as the server holds it lives with the rating rules, below this layer, so that a
// rater's outbox builds on it without reaching up here.
pub use crate::rating::{edits_to_reach, TeamEdit, TeamRating, TeamRatingState};
pub use pull::{
    pull, pull_curation, pull_ratings, PullReport, PulledConflict, ServerResults, TeamStudyRating,
};
pub use rater_copy::{follow_server_rubric, items_missing, learn_from_server, ServerNews};
pub use study::{
    study_for_server, TeamImageFile, TeamSeriesFiles, TeamSeriesGeometry, TeamStudy, TeamStudyCase,
    TeamStudyResponse, TeamStudyTask,
};

/// What a lead's invitation says of how the invitee reads, checked: a rater's names the clinical
/// role they read as (what the packages the server builds for them say, and the lead's
/// database records), with their years of experience if given; a lead's or a curator's names
/// neither, for they read nothing blinded. `Err` names the field and what to change.
pub fn check_invitation_reading(
    role: StudyRole,
    clinical_role: Option<RaterRole>,
    years_experience: Option<u32>,
) -> std::result::Result<(), RatingError> {
    let invalid = |field: &str, message: String| RatingError::Invalid {
        field: field.to_owned(),
        message,
    };
    match (role, clinical_role) {
        (StudyRole::Rater, None) => Err(invalid(
            "clinical_role",
            "a rater's invitation names how they read: neuroradiologist, neurologist or \
             resident"
                .into(),
        )),
        (StudyRole::Rater, Some(RaterRole::Curator)) => Err(invalid(
            "clinical_role",
            "a curator reads nothing blinded: invite them with role curator".into(),
        )),
        (StudyRole::Lead | StudyRole::Curator, Some(_)) => Err(invalid(
            "clinical_role",
            "only a rater's invitation names a clinical role".into(),
        )),
        _ => match years_experience {
            Some(_) if role != StudyRole::Rater => Err(invalid(
                "years_experience",
                "only a rater's invitation names years of experience".into(),
            )),
            Some(years) if years > crate::rating::MAX_YEARS_EXPERIENCE => Err(invalid(
                "years_experience",
                format!(
                    "at most {} years, got {years}",
                    crate::rating::MAX_YEARS_EXPERIENCE
                ),
            )),
            _ => Ok(()),
        },
    }
}

/// A logged-in account's membership of one study, as the server read it for this request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamMember {
    pub account: i64,
    pub username: String,
    /// The server's key of the study.
    pub study: i64,
    pub role: StudyRole,
    /// The lead closed reveal-then-edit for this rater: no ground truth, no reopening.
    pub reveal_locked: bool,
}

/// A rater acting on their own queue; only [`TeamMember::rater`] makes one.
#[derive(Debug, Clone)]
pub struct TeamRaterSession {
    member: TeamMember,
}

/// The study lead acting; only [`TeamMember::lead`] makes one.
#[derive(Debug, Clone)]
pub struct TeamLeadSession {
    member: TeamMember,
}

/// A lead or curator working on the ground truth; only [`TeamMember::curator`] makes one.
#[derive(Debug, Clone)]
pub struct TeamCuratorSession {
    member: TeamMember,
}

/// A lead or curator seeing what a blinded rater may not; only [`TeamMember::unblinded`] makes
/// one.
#[derive(Debug, Clone)]
pub struct TeamUnblindedSession {
    member: TeamMember,
}

fn not_permitted(member: &TeamMember, action: Action) -> Error {
    Error::Rating(RatingError::Refused(format!(
        "{} is not open to a {} of this study; ask the study lead",
        action.describe(),
        crate::store::enum_text(&member.role)
    )))
}

impl TeamMember {
    fn check(&self, action: Action) -> Result<()> {
        if permits(&[self.role], action) {
            Ok(())
        } else {
            Err(not_permitted(self, action))
        }
    }

    pub fn rater(self) -> Result<TeamRaterSession> {
        self.check(Action::Rate)?;
        Ok(TeamRaterSession { member: self })
    }

    /// `action` must be one of the lead's ([`Action::allowed`] says whose it is).
    pub fn lead(self, action: Action) -> Result<TeamLeadSession> {
        self.check(action)?;
        if self.role != StudyRole::Lead {
            return Err(not_permitted(&self, action));
        }
        Ok(TeamLeadSession { member: self })
    }

    pub fn unblinded(self) -> Result<TeamUnblindedSession> {
        self.check(Action::ReadGroundTruth)?;
        Ok(TeamUnblindedSession { member: self })
    }

    pub fn curator(self) -> Result<TeamCuratorSession> {
        self.check(Action::Curate)?;
        Ok(TeamCuratorSession { member: self })
    }
}

macro_rules! member_accessor {
    ($($session:ty),*) => {$(
        impl $session {
            pub fn member(&self) -> &TeamMember {
                &self.member
            }
        }
    )*};
}
member_accessor!(
    TeamRaterSession,
    TeamLeadSession,
    TeamUnblindedSession,
    TeamCuratorSession
);

/// The case as the server keeps it for reading. `disease_group` is kept for the lead's
/// breakdowns and never reaches a rater.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamCase {
    pub case_id: String,
    pub disease_group: String,
    pub age: u32,
    pub sex: Sex,
    pub modality: Modality,
    pub ehr: BTreeMap<String, serde_json::Value>,
    pub clinical_note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamSeries {
    pub series_id: String,
    pub label: String,
    pub kind: SeriesKind,
    pub n_images: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamTask {
    pub task_id: String,
    pub family: TaskFamily,
    pub level: u8,
    pub prompt: String,
    pub key_images: Vec<SliceRef>,
}

/// A response as stored: the model's name and sample stay on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamResponse {
    pub model: String,
    pub sample: u32,
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Option<Vec<Turn>>,
}

/// One grader score as stored (docs/formats.md §2 without the identifying fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamGraderScore {
    pub grader: String,
    pub score: f64,
    pub dimensions: Option<serde_json::Value>,
    pub errors: Option<serde_json::Value>,
    pub rationale: Option<String>,
}

/// Everything the server read for one assignment; [`rater_item`] decides what of it leaves.
#[derive(Debug, Clone)]
pub struct StoredItem {
    pub assignment: i64,
    pub position: u32,
    pub total: u32,
    pub case: TeamCase,
    pub task: TeamTask,
    pub series: Vec<TeamSeries>,
    /// Each series' geometry as the server copied it at import, by series id: a label's mark is
    /// checked inside its series' volume against it.
    pub geometry: BTreeMap<String, SeriesGeometry>,
    pub response: TeamResponse,
    /// The study's current rubric, the one an edit is checked against, and its number.
    pub rubric: Rubric,
    pub rubric_version: u32,
    pub taxonomy: Taxonomy,
    pub ground_truth: Option<serde_json::Value>,
    /// The number of the version `ground_truth` is (the latest final version of `main`).
    pub ground_truth_version: Option<i64>,
    pub rating: Option<TeamRating>,
    /// The study's case codes: a rater is shown the case's code, never its id.
    pub case_codes: CaseCodes,
}

/// The case as a rater sees it: the clinical context, not the disease group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaterCase {
    /// The case's pseudonymous code (`case_codes`), not its id, which may name the diagnosis
    /// (the field keeps its name: FORMATS §8).
    pub case_id: String,
    pub age: u32,
    pub sex: Sex,
    pub modality: Modality,
    pub ehr: BTreeMap<String, serde_json::Value>,
    pub clinical_note: String,
}

/// A response as a rater sees it: what was answered, not who answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaterResponse {
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Option<Vec<Turn>>,
}

/// One item of a rater's queue, blinded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaterItem {
    pub assignment: i64,
    pub position: u32,
    pub total: u32,
    pub case: RaterCase,
    pub task: TeamTask,
    pub series: Vec<TeamSeries>,
    pub response: RaterResponse,
    pub rubric: Rubric,
    /// The number of `rubric` among the study's rubric versions (the lead's numbering): a save
    /// is checked against it and recorded under it (added later: an older server's item has
    /// none, and its one rubric is version 1).
    #[serde(default = "first_rubric_version")]
    pub rubric_version: u32,
    pub taxonomy: Vec<TaxonomyCategory>,
    pub rating: Option<TeamRating>,
    /// Present once the rater submitted and revealed it (and the lead has not locked reveal).
    pub ground_truth: Option<serde_json::Value>,
    /// The version number of `ground_truth` on the server, present with it (added later: an
    /// older server's item has none).
    #[serde(default)]
    pub ground_truth_version: Option<i64>,
    /// The study lead has locked this rater out of reveal-then-edit: no reveal, and no reopen of
    /// a submitted rating (added later: an older server's item says nothing, read as unlocked).
    #[serde(default)]
    pub reveal_locked: bool,
}

fn first_rubric_version() -> u32 {
    1
}

/// The blinded projection: what `session`'s rater may see of `item`, their own assignment.
pub fn rater_item(session: &TeamRaterSession, item: StoredItem) -> RaterItem {
    let StoredItem {
        assignment,
        position,
        total,
        case,
        task,
        series,
        geometry: _,
        response,
        rubric,
        rubric_version,
        taxonomy,
        ground_truth,
        ground_truth_version,
        rating,
        case_codes,
    } = item;
    let TeamCase {
        case_id,
        disease_group: _,
        age,
        sex,
        modality,
        ehr,
        clinical_note,
    } = case;
    let TeamResponse {
        model: _,
        sample: _,
        answer,
        rationale,
        turns,
    } = response;
    let revealed = rating
        .as_ref()
        .is_some_and(|r| r.status == RatingStatus::Submitted && r.revealed_at.is_some())
        && !session.member.reveal_locked;
    RaterItem {
        assignment,
        position,
        total,
        case: RaterCase {
            case_id: case_codes.code(&case_id),
            age,
            sex,
            modality,
            ehr,
            clinical_note,
        },
        task,
        series,
        response: RaterResponse {
            answer,
            rationale,
            turns,
        },
        rubric,
        rubric_version,
        taxonomy: taxonomy
            .categories
            .into_iter()
            .map(|c| TaxonomyCategory {
                code: c.code,
                name: c.name,
                definition: c.definition,
                anchor: c.anchor,
            })
            .collect(),
        rating,
        ground_truth: ground_truth.filter(|_| revealed),
        ground_truth_version: ground_truth_version.filter(|_| revealed),
        reveal_locked: session.member.reveal_locked,
    }
}

/// Why an edit of a rating is not stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum EditRefusal {
    /// The rating moved on since the edit's base version (another device, or an edit resent
    /// after a newer one): nothing was overwritten.
    Conflict {
        base_version: i64,
        current_version: i64,
        message: String,
    },
    /// A field breaks the study's rules (`cases::rating::rules`); names the field.
    Invalid { field: String, message: String },
    /// Submit while fields are empty; names them.
    Incomplete {
        missing: Vec<String>,
        message: String,
    },
    /// The rating's state forbids it (submitted, not submitted, revealed, locked).
    Refused { message: String },
}

/// The rating after an accepted edit: the server stores it with `version` one higher.
#[derive(Debug, Clone, PartialEq)]
pub struct EditOutcome {
    pub state: TeamRatingState,
    pub status: RatingStatus,
    pub revealed: bool,
}

/// Decides an edit of a rater's own rating against what is stored: the version check first (a
/// stale edit never overwrites), then the rules of `cases::rating::rules` the desktop app and the
/// results merge obey.
pub fn decide_edit(
    session: &TeamRaterSession,
    item: &StoredItem,
    base_version: i64,
    edit: &TeamEdit,
) -> std::result::Result<EditOutcome, EditRefusal> {
    let current = item.rating.as_ref();
    let current_version = current.map_or(0, |r| r.version);
    if base_version != current_version {
        return Err(EditRefusal::Conflict {
            base_version,
            current_version,
            message: format!(
                "this rating is at version {current_version}, and the edit started from version \
                 {base_version}: nothing was saved. Load the rating again and redo the change"
            ),
        });
    }
    let status = current.map_or(RatingStatus::Draft, |r| r.status);
    let revealed = current.is_some_and(|r| r.revealed_at.is_some());
    let state = current.map(|r| r.state.clone()).unwrap_or_else(empty_state);
    let refused = |message: &str| EditRefusal::Refused {
        message: message.to_owned(),
    };
    match edit {
        TeamEdit::Save { rating } => {
            if status == RatingStatus::Submitted {
                return Err(refused(
                    "this rating is submitted; reopen it to change it (reopening is recorded)",
                ));
            }
            check_state(item, rating)?;
            Ok(EditOutcome {
                state: rating.clone(),
                status,
                revealed,
            })
        }
        TeamEdit::Submit => {
            if status == RatingStatus::Submitted {
                return Err(refused("this rating is already submitted"));
            }
            // Scores saved under a rubric version since replaced are checked again: the rating
            // is submitted under the current one.
            if let Some(current) = current {
                check_state(item, &current.state)?;
            }
            let missing = rules::missing_for_submit(
                &item.rubric,
                item.task.family,
                current.map(|r| &r.state.scores),
            );
            if !missing.is_empty() {
                return Err(EditRefusal::Incomplete {
                    message: format!(
                        "the rating cannot be submitted yet: {} still empty",
                        missing.join(", ")
                    ),
                    missing,
                });
            }
            Ok(EditOutcome {
                state,
                status: RatingStatus::Submitted,
                revealed,
            })
        }
        TeamEdit::Reopen => {
            if status != RatingStatus::Submitted {
                return Err(refused("only a submitted rating can be reopened"));
            }
            let locks = rules::ReopenLocks {
                ground_truth_seen_at: current.and_then(|r| r.revealed_at.as_deref()),
                locked_by_lead: session.member.reveal_locked,
            };
            if let Some(lock) = rules::reopen_refusal(locks) {
                return Err(refused(&lock.to_string()));
            }
            Ok(EditOutcome {
                state,
                status: RatingStatus::Draft,
                revealed,
            })
        }
        TeamEdit::Reveal => {
            if status != RatingStatus::Submitted {
                return Err(refused(
                    "the ground truth opens once this rating is submitted",
                ));
            }
            if session.member.reveal_locked {
                return Err(refused(rules::REVEAL_CLOSED_BY_LEAD));
            }
            if revealed {
                return Err(refused("the ground truth of this item is already revealed"));
            }
            Ok(EditOutcome {
                state,
                status,
                revealed: true,
            })
        }
    }
}

fn empty_state() -> TeamRatingState {
    TeamRatingState {
        scores: RatingEdit {
            overall: None,
            not_applicable: Default::default(),
            dimensions: BTreeMap::new(),
            correctness: None,
            confidence: None,
            comment: String::new(),
            seconds_on_task: 0.0,
        },
        labels: Vec::new(),
    }
}

/// The first rule the saved state breaks, label fields as `labels[<index>].<field>`; a label's
/// mark lies inside its series' volume, as in the app. A series the server holds no geometry of
/// (a study imported before it copied geometry; the lead's next import copies it) has its marks'
/// shape and series checked only: refusing them would strand the rater's work on a gap that is
/// the server's.
fn check_state(item: &StoredItem, state: &TeamRatingState) -> std::result::Result<(), EditRefusal> {
    let into_refusal = |prefix: String| {
        move |Violation { field, message }: Violation| EditRefusal::Invalid {
            field: format!("{prefix}{field}"),
            message,
        }
    };
    if let Some(found) = rules::rating_violations(&item.rubric, item.task.family, &state.scores)
        .into_iter()
        .next()
    {
        return Err(into_refusal(String::new())(found));
    }
    let series_ids: Vec<String> = item.series.iter().map(|s| s.series_id.clone()).collect();
    let context = LabelContext {
        taxonomy: &item.taxonomy,
        answer: &item.response.answer,
        rationale: item.response.rationale.as_deref(),
        turns: item.response.turns.as_deref().unwrap_or_default(),
        series_ids: &series_ids,
    };
    for (index, label) in state.labels.iter().enumerate() {
        if let Some(found) = rules::label_violations(&context, label).into_iter().next() {
            return Err(into_refusal(format!("labels[{index}]."))(found));
        }
        let outside = label.mark.as_ref().and_then(|mark| {
            let geometry = item.geometry.get(&mark.series_id)?;
            rules::mark_outside(geometry, mark)
        });
        if let Some(message) = outside {
            return Err(EditRefusal::Invalid {
                field: format!("labels[{index}].{}", crate::rating::MARK_POINTS_FIELD),
                message,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Anchor, Bucket, ErrorCategory, Scale};
    use crate::rating::{Correctness, LabelEdit, SpanText};

    fn member(role: StudyRole, reveal_locked: bool) -> TeamMember {
        TeamMember {
            account: 1,
            username: "ada".into(),
            study: 1,
            role,
            reveal_locked,
        }
    }

    #[test]
    fn a_raters_invitation_names_how_they_read_and_no_one_elses_does() {
        use RaterRole::{Neurologist, Neuroradiologist, Resident};
        use StudyRole::*;
        // (role, clinical role, years, the field refused if any)
        type Case = (
            StudyRole,
            Option<RaterRole>,
            Option<u32>,
            Option<&'static str>,
        );
        let table: [Case; 10] = [
            (Rater, Some(Neuroradiologist), Some(12), None),
            (Rater, Some(Neurologist), None, None),
            (Rater, Some(Resident), Some(0), None),
            (Rater, Some(Resident), Some(70), None),
            (Rater, Some(Resident), Some(71), Some("years_experience")),
            (Rater, None, Some(3), Some("clinical_role")),
            (Rater, Some(RaterRole::Curator), None, Some("clinical_role")),
            (Lead, None, None, None),
            (Curator, Some(Neurologist), None, Some("clinical_role")),
            (Curator, None, Some(4), Some("years_experience")),
        ];
        for (role, clinical, years, refused) in table {
            let outcome = check_invitation_reading(role, clinical, years);
            let field = match &outcome {
                Ok(()) => None,
                Err(RatingError::Invalid { field, .. }) => Some(field.as_str()),
                Err(other) => panic!("{role:?} {clinical:?} {years:?}: {other}"),
            };
            assert_eq!(field, refused, "{role:?} {clinical:?} {years:?}");
        }
    }

    fn item(rating: Option<TeamRating>) -> StoredItem {
        let scale = |min: f64, max: f64| Scale {
            label: None,
            min,
            max,
            step: 1.0,
            levels: Vec::new(),
        };
        StoredItem {
            assignment: 7,
            position: 1,
            total: 1,
            case: TeamCase {
                case_id: "infarct-07".into(),
                disease_group: "stroke".into(),
                age: 60,
                sex: Sex::F,
                modality: Modality::MR,
                ehr: BTreeMap::new(),
                clinical_note: "left hemiparesis".into(),
            },
            task: TeamTask {
                task_id: "dx".into(),
                family: TaskFamily::DifferentialDiagnosis,
                level: 1,
                prompt: "What is it?".into(),
                key_images: Vec::new(),
            },
            series: vec![TeamSeries {
                series_id: "t1".into(),
                label: "T1".into(),
                kind: SeriesKind::Dicom,
                n_images: 3,
            }],
            geometry: BTreeMap::from([(
                "t1".to_owned(),
                SeriesGeometry {
                    dims: [4, 4, 3],
                    voxel_to_patient: [
                        [1.0, 0.0, 0.0, 0.0],
                        [0.0, 1.0, 0.0, 0.0],
                        [0.0, 0.0, 2.0, 0.0],
                        [0.0, 0.0, 0.0, 1.0],
                    ],
                },
            )]),
            response: TeamResponse {
                model: "secret-model-v9".into(),
                sample: 2,
                answer: "infarct".into(),
                rationale: Some("restricted diffusion".into()),
                turns: None,
            },
            rubric: Rubric {
                overall: scale(1.0, 5.0),
                dimensions: Vec::new(),
            },
            rubric_version: 2,
            taxonomy: Taxonomy {
                id: "t".into(),
                categories: vec![ErrorCategory {
                    code: "HAL".into(),
                    name: "Hallucination".into(),
                    definition: String::new(),
                    anchor: Anchor::Text,
                    bucket: Bucket::Perceptual,
                }],
            },
            ground_truth: Some(serde_json::json!({"diagnosis": "GT-MARKER"})),
            ground_truth_version: Some(4),
            rating,
            case_codes: CaseCodes::new(b"the study's secret".to_vec()),
        }
    }

    fn complete() -> TeamRatingState {
        TeamRatingState {
            scores: RatingEdit {
                overall: Some(4.0),
                not_applicable: Default::default(),
                dimensions: BTreeMap::new(),
                correctness: Some(Correctness::Correct),
                confidence: Some(3),
                comment: String::new(),
                seconds_on_task: 12.0,
            },
            labels: Vec::new(),
        }
    }

    fn rating(status: RatingStatus, version: i64, revealed: bool) -> TeamRating {
        TeamRating {
            state: complete(),
            status,
            version,
            updated_at: "2026-01-01T00:00:00Z".into(),
            revealed_at: revealed.then(|| "2026-01-02T00:00:00Z".into()),
            rubric_version: Some(2),
        }
    }

    #[test]
    fn a_rater_item_names_no_model_group_or_ground_truth_before_reveal() {
        let session = member(StudyRole::Rater, false).rater().unwrap();
        for stored in [
            None,
            Some(rating(RatingStatus::Draft, 1, false)),
            Some(rating(RatingStatus::Submitted, 2, false)),
        ] {
            let blinded = rater_item(&session, item(stored));
            // The case by its code under the study's secret, never its id.
            let code = CaseCodes::new(b"the study's secret".to_vec()).code("infarct-07");
            assert_eq!(blinded.case.case_id, code);
            let json = serde_json::to_string(&blinded).unwrap();
            for hidden in [
                "secret-model-v9",
                "stroke",
                "GT-MARKER",
                "sample",
                "infarct-07",
            ] {
                assert!(!json.contains(hidden), "{hidden} in {json}");
            }
        }
        let revealed = rater_item(
            &session,
            item(Some(rating(RatingStatus::Submitted, 3, true))),
        );
        assert!(revealed.ground_truth.is_some());
        assert_eq!(revealed.ground_truth_version, Some(4));
        assert!(!revealed.reveal_locked);
        let locked = member(StudyRole::Rater, true).rater().unwrap();
        let json = serde_json::to_string(&rater_item(
            &locked,
            item(Some(rating(RatingStatus::Submitted, 3, true))),
        ))
        .unwrap();
        assert!(!json.contains("GT-MARKER"));
        assert!(json.contains(r#""ground_truth_version":null"#), "{json}");
        // The lead's lock is the rater's to know: the app offers no reopen the server refuses.
        assert!(json.contains(r#""reveal_locked":true"#), "{json}");
    }

    fn code(refusal: EditRefusal) -> String {
        serde_json::to_value(refusal).unwrap()["code"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// A case's name, the session, the stored rating, the edit's base version, the edit, and the
    /// refusal code expected (or "ok").
    type EditCase<'a> = (
        &'static str,
        &'a TeamRaterSession,
        Option<TeamRating>,
        i64,
        TeamEdit,
        &'static str,
    );

    #[test]
    fn edits_are_decided_by_version_then_rules() {
        let rater = member(StudyRole::Rater, false).rater().unwrap();
        let locked = member(StudyRole::Rater, true).rater().unwrap();
        let save = |state: TeamRatingState| TeamEdit::Save { rating: state };
        let mut off_scale = complete();
        off_scale.scores.overall = Some(9.0);
        let mut unknown_label = complete();
        unknown_label.labels.push(LabelEdit {
            category: "NOPE".into(),
            severity: 1,
            span: Some([0, 3]),
            text: SpanText::Rationale,
            turn: None,
            mark: None,
            comment: String::new(),
        });
        let draft = || Some(rating(RatingStatus::Draft, 2, false));
        // A draft saved under a rubric version the current one replaced: its overall is off the
        // current scale.
        let outdated_draft = || {
            let mut outdated = rating(RatingStatus::Draft, 2, false);
            outdated.state.scores.overall = Some(9.0);
            Some(outdated)
        };
        let submitted = || Some(rating(RatingStatus::Submitted, 3, false));
        let seen = || Some(rating(RatingStatus::Submitted, 4, true));
        let cases: Vec<EditCase<'_>> = vec![
            ("first save", &rater, None, 0, save(complete()), "ok"),
            (
                "stale base",
                &rater,
                draft(),
                1,
                save(complete()),
                "conflict",
            ),
            (
                "base ahead",
                &rater,
                draft(),
                3,
                save(complete()),
                "conflict",
            ),
            (
                "off-scale overall",
                &rater,
                draft(),
                2,
                save(off_scale),
                "invalid",
            ),
            (
                "unknown label",
                &rater,
                draft(),
                2,
                save(unknown_label),
                "invalid",
            ),
            (
                "save when submitted",
                &rater,
                submitted(),
                3,
                save(complete()),
                "refused",
            ),
            (
                "submit empty",
                &rater,
                None,
                0,
                TeamEdit::Submit,
                "incomplete",
            ),
            ("submit draft", &rater, draft(), 2, TeamEdit::Submit, "ok"),
            (
                "submit a draft the rubric moved past",
                &rater,
                outdated_draft(),
                2,
                TeamEdit::Submit,
                "invalid",
            ),
            (
                "submit twice",
                &rater,
                submitted(),
                3,
                TeamEdit::Submit,
                "refused",
            ),
            ("reopen", &rater, submitted(), 3, TeamEdit::Reopen, "ok"),
            (
                "reopen draft",
                &rater,
                draft(),
                2,
                TeamEdit::Reopen,
                "refused",
            ),
            (
                "reopen after reveal",
                &rater,
                seen(),
                4,
                TeamEdit::Reopen,
                "refused",
            ),
            (
                "reopen locked",
                &locked,
                submitted(),
                3,
                TeamEdit::Reopen,
                "refused",
            ),
            ("reveal", &rater, submitted(), 3, TeamEdit::Reveal, "ok"),
            (
                "reveal draft",
                &rater,
                draft(),
                2,
                TeamEdit::Reveal,
                "refused",
            ),
            (
                "reveal locked",
                &locked,
                submitted(),
                3,
                TeamEdit::Reveal,
                "refused",
            ),
        ];
        for (name, session, stored, base, edit, expected) in cases {
            let decided = decide_edit(session, &item(stored), base, &edit);
            let got = decided.map_or_else(code, |_| "ok".to_owned());
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn invalid_label_fields_are_named_with_their_index() {
        let rater = member(StudyRole::Rater, false).rater().unwrap();
        let mut state = complete();
        state.labels.push(LabelEdit {
            category: "HAL".into(),
            severity: 1,
            span: Some([0, 99]),
            text: SpanText::Rationale,
            turn: None,
            mark: None,
            comment: String::new(),
        });
        let refusal = decide_edit(&rater, &item(None), 0, &TeamEdit::Save { rating: state });
        match refusal {
            Err(EditRefusal::Invalid { field, .. }) => assert_eq!(field, "labels[0].span"),
            other => panic!("expected an invalid span, got {other:?}"),
        }
    }

    #[test]
    fn a_label_mark_outside_its_series_volume_is_refused_naming_it() {
        use crate::marks::{Mark, MarkKind, Plane};
        let rater = member(StudyRole::Rater, false).rater().unwrap();
        // The volume spans x, y in 0..3 mm and z in 0..4 mm (1 mm edge tolerance).
        for (z, expected) in [(2.0, None), (40.0, Some("labels[0].mark.points_lps_mm"))] {
            let mut state = complete();
            state.labels.push(LabelEdit {
                category: "HAL".into(),
                severity: 1,
                span: Some([0, 3]),
                text: SpanText::Rationale,
                turn: None,
                mark: Some(Mark {
                    series_id: "t1".into(),
                    kind: MarkKind::Point,
                    plane: Plane::Axial,
                    points_lps_mm: vec![[1.0, 1.0, z]],
                }),
                comment: String::new(),
            });
            let decided = decide_edit(&rater, &item(None), 0, &TeamEdit::Save { rating: state });
            match (decided, expected) {
                (Ok(_), None) => {}
                (Err(EditRefusal::Invalid { field, .. }), Some(named)) => assert_eq!(field, named),
                (other, _) => panic!("z = {z}: {other:?}"),
            }
        }
    }
}
