//! The lead's own database brought up to date with the ratings made on the team server, so the
//! calibration report and every export run there as on any local study, with the same code and
//! so the same figures.
//!
//! A server rating arrives whole, as a results package's does, and goes through the same rule
//! (`package::incoming`): the app's rating rules, marks inside their volume, written only over
//! a rating an earlier pull wrote and nobody changed here since; anything else is listed as a
//! conflict and left alone. Pulling again writes nothing new. Each is checked against, and
//! recorded under, the rubric version the server recorded it under (the server numbers versions
//! as this database does: `neurorater server-import` copies them), not this database's current
//! one, so the report groups it with the rubric the rater scored on.
//!
//! The server's curation versions and reviews arrive the same way ([`pull_curation`]): added by
//! version number, a version this database holds under the number with other content listed and
//! kept (`curation::versions::receive`).

use super::TeamRatingState;
use crate::app::LeadSession;
use crate::bundle::Problem;
use crate::package::incoming::{self, Planned, Target, Verdict};
use crate::package::results::{ResultLabel, ResultRating};
use crate::rating::{RaterRole, RatingStatus};
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One rating as the team server gives it to its study's lead
/// (`GET /api/studies/{study}/ratings`, docs/team-server.md). A response body: read tolerantly,
/// so a field a newer server adds (formats change additively) does not stop an older lead's
/// pull. Its `state` stays strict: it is also the body of a rater's save, which the server reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStudyRating {
    /// The server's assignment: one rater's one read of one response.
    pub assignment: i64,
    /// The rater's username on the server; the lead's database names its rater the same.
    pub rater: String,
    pub site: String,
    pub case_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: u32,
    pub status: RatingStatus,
    pub version: i64,
    pub state: TeamRatingState,
    pub updated_at: String,
    pub submitted_at: Option<String>,
    /// The rubric version it was last saved under, as the lead's database numbers them (added
    /// later: from an older server, none, and the pull records the current version).
    #[serde(default)]
    pub rubric_version: Option<u32>,
    /// How the rater reads and their years of experience, as the lead recorded them when
    /// inviting them (added later: from an older server, none). A rater this database does not
    /// know yet is added with them, so the lead never types a server's raters in again.
    #[serde(default)]
    pub clinical_role: Option<RaterRole>,
    #[serde(default)]
    pub years_experience: Option<u32>,
}

/// What the team server holds of a study that its lead's own database takes in: every rating
/// (`GET …/ratings`) and every case's curation versions with their reviews (case id → versions,
/// oldest first, as `GET …/cases/{case_id}/curation` gives them).
#[derive(Debug, Clone, Default)]
pub struct ServerResults {
    pub ratings: Vec<TeamStudyRating>,
    pub curation: BTreeMap<String, Vec<crate::curation::Version>>,
}

/// The lead's pull, as the command line and the app's dashboard make it: `results` (the
/// server's, of `study_id`) taken into the lead's database, the ratings ([`pull_ratings`]) then
/// the curation versions and reviews ([`pull_curation`]). Refused, saying which database to
/// open, when this database does not hold the study at all.
pub fn pull(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    results: &ServerResults,
) -> Result<PullReport> {
    if !store.studies()?.iter().any(|study| study.id == study_id) {
        return Err(Error::NotFound {
            what: format!(
                "study {study_id} in {}: the server's ratings are taken into the database the \
                 study was copied onto the server from (neurorater server-import); open that \
                 one and pull again",
                store.path().display()
            ),
        });
    }
    let mut report = pull_ratings(store, lead, study_id, &results.ratings)?;
    report.curation = pull_curation(store, lead, study_id, &results.curation)?;
    Ok(report)
}

/// What a pull did: each server rating counted once.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PullReport {
    pub study_id: String,
    pub added: u32,
    pub updated: u32,
    pub unchanged: u32,
    pub conflicts: Vec<PulledConflict>,
    /// The raters this pull added to the lead's database, with the clinical role the server
    /// recorded for them.
    pub raters_added: Vec<String>,
    /// The curation versions and reviews the same pull brought in ([`pull_curation`]).
    pub curation: crate::curation::ReceivedVersions,
}

/// A server rating the pull left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PulledConflict {
    /// The lead's database holds another rating of this read that no pull wrote, or one
    /// changed here after a pull wrote it.
    EditedAtLead {
        assignment: i64,
        rater: String,
        case_id: String,
        task_id: String,
    },
    /// Older than what an earlier pull wrote.
    OlderThanPulled {
        assignment: i64,
        rater: String,
        case_id: String,
        task_id: String,
    },
}

impl std::fmt::Display for PulledConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PulledConflict::EditedAtLead {
                assignment,
                rater,
                case_id,
                task_id,
            } => write!(
                f,
                "assignment {assignment} ({rater}, {case_id}/{task_id}): this database holds \
                 another rating of that read that did not come from the server; kept it"
            ),
            PulledConflict::OlderThanPulled {
                assignment,
                rater,
                case_id,
                task_id,
            } => write!(
                f,
                "assignment {assignment} ({rater}, {case_id}/{task_id}): older than the rating \
                 an earlier pull wrote; kept that one"
            ),
        }
    }
}

/// Where pulled ratings are said to come from, in problems.
const SOURCE: &str = "the team server's ratings";

/// The rater key a planned rating carries until the write adds its rater (no rater has key 0:
/// SQLite's row ids start at 1).
const KEY_OF_NEW_RATER: i64 = 0;

fn result_rating(rating: &TeamStudyRating) -> ResultRating {
    let scores = &rating.state.scores;
    ResultRating {
        item: 0,
        status: rating.status,
        overall: scores.overall,
        dimensions: scores.dimensions.clone(),
        not_applicable: scores.not_applicable.clone(),
        correctness: scores.correctness,
        confidence: scores.confidence,
        comment: scores.comment.clone(),
        seconds_on_task: scores.seconds_on_task,
        updated_at: rating.updated_at.clone(),
        submitted_at: rating.submitted_at.clone(),
        labels: rating
            .state
            .labels
            .iter()
            .map(|label| ResultLabel {
                category: label.category.clone(),
                severity: label.severity,
                span: label.span,
                text: label.text,
                turn: label.turn,
                mark: label.mark.clone(),
                comment: label.comment.clone(),
            })
            .collect(),
        rubric_version: None,
    }
}

/// Writes `ratings` (the server's, of `study_id`) into the lead's database, under raters of the
/// same name. A rater this database does not hold is added with the clinical role the lead
/// recorded on the server when inviting them; one the server records no role for must be added
/// here first (`neurorater rater add`). Refused whole, naming each problem, if a rater or
/// response is unknown or a rating breaks the rules; otherwise one transaction, the raters it
/// adds included.
pub fn pull_ratings(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    ratings: &[TeamStudyRating],
) -> Result<PullReport> {
    let mut report = PullReport {
        study_id: study_id.to_owned(),
        added: 0,
        updated: 0,
        unchanged: 0,
        conflicts: Vec::new(),
        raters_added: Vec::new(),
        curation: Default::default(),
    };
    let raters: BTreeMap<String, i64> = store
        .raters()?
        .into_iter()
        .map(|r| (r.name, r.id))
        .collect();
    let rubrics: BTreeMap<u32, crate::model::Rubric> =
        crate::rubric::versions(store.read(), store.path(), study_id)?
            .into_iter()
            .map(|v| (v.version, v.rubric))
            .collect();
    let mut problems = Vec::new();
    let mut planned = Vec::new();
    let mut cases = BTreeMap::new();
    let mut seen = BTreeSet::new();
    // Raters the server knows and this database does not: added with the role the server
    // recorded, or, without one, a problem naming them.
    let mut new_raters: BTreeMap<&str, (RaterRole, Option<u32>)> = BTreeMap::new();
    let mut roleless: BTreeSet<&str> = BTreeSet::new();
    for rating in ratings.iter().filter(|r| !raters.contains_key(&r.rater)) {
        match rating.clinical_role {
            Some(role) => {
                new_raters.insert(&rating.rater, (role, rating.years_experience));
            }
            None => {
                roleless.insert(&rating.rater);
            }
        }
    }
    for name in &roleless {
        problems.push(Problem {
            file: SOURCE.into(),
            line: None,
            field: "rater".into(),
            message: format!(
                "{name:?} rates on the server but is not a rater of this database, and the \
                 server records no clinical role for them: add them with their role \
                 (neurorater rater add {name} --role …) and pull again"
            ),
        });
    }
    // The ratings of a rater this pull adds, whose key the write gives them.
    let mut by_new_rater: Vec<(usize, &str)> = Vec::new();
    for (index, rating) in ratings.iter().enumerate() {
        let line = Some(index + 1);
        if roleless.contains(rating.rater.as_str()) {
            continue;
        }
        // A rater this pull adds has no ratings here: `KEY_OF_NEW_RATER` until the write.
        let rater = raters
            .get(&rating.rater)
            .copied()
            .unwrap_or(KEY_OF_NEW_RATER);
        if !seen.insert(rating.assignment) {
            problems.push(Problem {
                file: SOURCE.into(),
                line,
                field: "assignment".into(),
                message: format!("assignment {} appears twice", rating.assignment),
            });
            continue;
        }
        let response: Option<i64> = store
            .read()
            .query_row(
                "SELECT r.id FROM responses r JOIN tasks t ON r.task = t.id
                 JOIN cases c ON t.case_ref = c.id JOIN studies s ON c.study = s.id
                 WHERE s.study_id = ?1 AND c.case_id = ?2 AND t.task_id = ?3
                   AND r.model = ?4 AND r.sample = ?5",
                params![
                    study_id,
                    rating.case_id,
                    rating.task_id,
                    rating.model,
                    rating.sample
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| Error::database(store.path(), "finding a response", e))?;
        let Some(response) = response else {
            problems.push(Problem {
                file: SOURCE.into(),
                line,
                field: "response".into(),
                message: format!(
                    "{}/{} answered by {} (sample {}) is not in study {study_id} here: import \
                     the responses the server has before pulling",
                    rating.case_id, rating.task_id, rating.model, rating.sample
                ),
            });
            continue;
        };
        let arriving = result_rating(rating);
        let mut context = crate::rating::response_context(store.read(), store.path(), response)?;
        if let Some(version) = rating.rubric_version {
            match rubrics.get(&version) {
                Some(rubric) => context.rubric = rubric.clone(),
                None => {
                    problems.push(Problem {
                        file: SOURCE.into(),
                        line,
                        field: format!("assignment {}: rubric_version", rating.assignment),
                        message: format!(
                            "rated under rubric version {version} on the server, which study \
                             {study_id} here does not have (it has versions {}): pull into the \
                             database the study was copied onto the server from",
                            rubrics
                                .keys()
                                .map(u32::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                    continue;
                }
            }
        }
        for (field, message) in incoming::problems(store, &mut cases, &context, &arriving)? {
            problems.push(Problem {
                file: SOURCE.into(),
                line,
                field: format!("assignment {}: {field}", rating.assignment),
                message,
            });
        }
        // The server keeps one read per rater and response.
        let target = Target {
            rater,
            response,
            read_no: 1,
        };
        let conflict = |older: bool| {
            let (assignment, rater, case_id, task_id) = (
                rating.assignment,
                rating.rater.clone(),
                rating.case_id.clone(),
                rating.task_id.clone(),
            );
            if older {
                PulledConflict::OlderThanPulled {
                    assignment,
                    rater,
                    case_id,
                    task_id,
                }
            } else {
                PulledConflict::EditedAtLead {
                    assignment,
                    rater,
                    case_id,
                    task_id,
                }
            }
        };
        let verdict = if rater == KEY_OF_NEW_RATER {
            Verdict::Write(incoming::Action::Add)
        } else {
            incoming::verdict(store, target, &arriving, rating.rubric_version)?
        };
        let action = match verdict {
            Verdict::Write(action) => action,
            Verdict::Unchanged => {
                report.unchanged += 1;
                continue;
            }
            Verdict::EditedHere => {
                report.conflicts.push(conflict(false));
                continue;
            }
            Verdict::Older => {
                report.conflicts.push(conflict(true));
                continue;
            }
        };
        let mut provenance = serde_json::Map::new();
        provenance.insert(
            "team_server".into(),
            serde_json::json!({
                "study_id": study_id,
                "assignment": rating.assignment,
                "version": rating.version,
                "site": rating.site,
                "rubric_version": rating.rubric_version,
            }),
        );
        if rater == KEY_OF_NEW_RATER {
            by_new_rater.push((planned.len(), rating.rater.as_str()));
        }
        planned.push(Planned {
            target,
            rating: arriving,
            action,
            source: format!("team-server:{study_id}:{}", rating.assignment),
            actor: rating.rater.clone(),
            verb: "pull rating",
            provenance,
            rubric_version: rating.rubric_version,
        });
    }
    if !problems.is_empty() {
        return Err(Error::ServerRatings { problems });
    }
    if planned.is_empty() {
        return Ok(report);
    }
    store.write(|w| {
        let mut keys = BTreeMap::new();
        for (name, (role, years_experience)) in &new_raters {
            let key = crate::rating::insert_rater(w, name, *role, *years_experience)?;
            let after = serde_json::json!({
                "name": name, "role": role, "years_experience": years_experience,
                "from": format!("the team server's study {study_id}"),
            });
            w.audit(&Entry {
                actor: lead.audit_name(),
                action: "create rater",
                entity: &format!("rater:{key}"),
                before: None,
                after: Some(&after),
            })?;
            keys.insert(*name, key);
        }
        for (index, name) in &by_new_rater {
            planned[*index].target.rater = keys[name];
        }
        incoming::write_in(w, &planned)
    })?;
    report.raters_added = new_raters.keys().map(|name| (*name).to_owned()).collect();
    for plan in &planned {
        match plan.action {
            incoming::Action::Add => report.added += 1,
            incoming::Action::Update { .. } => report.updated += 1,
        }
    }
    Ok(report)
}

/// Writes the team server's curation versions of `study_id` (case id → every version, oldest
/// first, as `GET …/cases/{case_id}/curation` gives them) into the lead's database, in one
/// transaction: `export --what ground-truth`, the report and a re-import then use them. A case
/// this database does not hold is listed, not written.
pub fn pull_curation(
    store: &mut Store,
    _lead: &LeadSession,
    study_id: &str,
    versions: &BTreeMap<String, Vec<crate::curation::Version>>,
) -> Result<crate::curation::ReceivedVersions> {
    let mut report = crate::curation::ReceivedVersions::default();
    let mut cases = Vec::new();
    for (case_id, arriving) in versions {
        match crate::curation::CaseContext::load(store, study_id, case_id) {
            Ok(case) => {
                let bundle = crate::curation::versions::bundle_version(store, &case)?;
                cases.push((case, bundle, arriving));
            }
            Err(Error::NotFound { .. }) => report.conflicts.push(format!(
                "case {case_id} is on the team server but not in study {study_id} here; its \
                 versions were not brought in"
            )),
            Err(other) => return Err(other),
        }
    }
    let mut curators: BTreeMap<String, i64> = store
        .raters()?
        .into_iter()
        .map(|r| (r.name, r.id))
        .collect();
    store.write(|w| {
        for (case, bundle, arriving) in &cases {
            crate::curation::versions::receive(
                w,
                case,
                bundle.as_ref(),
                arriving,
                &mut curators,
                &mut report,
            )?;
        }
        Ok(())
    })?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rating_from_a_newer_server_with_a_field_this_build_lacks_reads() {
        let body = serde_json::json!({
            "assignment": 3, "rater": "rater-a", "site": "Hospital B", "case_id": "case-1",
            "task_id": "dx", "model": "model-a", "sample": 0, "status": "submitted",
            "version": 4,
            "state": { "scores": { "comment": "fine", "seconds_on_task": 12.0 }, "labels": [] },
            "updated_at": "2026-11-21T09:00:00.000Z",
            "submitted_at": "2026-11-21T09:00:00.000Z", "rubric_version": 2,
            "reviewed_by_panel": true,
        });
        let rating: TeamStudyRating = serde_json::from_value(body).unwrap();
        assert_eq!(
            (
                rating.assignment,
                rating.rubric_version,
                rating.state.scores.comment.as_str()
            ),
            (3, Some(2), "fine")
        );
    }
}
