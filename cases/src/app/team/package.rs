//! Rater packages the team server builds (docs/multisite.md): a rater's queue as the package the
//! desktop app already imports, each item naming its server assignment; and the results package
//! a site sends back, turned into the same edits the app sends.
//!
//! Blinded exactly like a local lead's package: [`rater_package`] builds it field by field from
//! what may leave (no model name or sample, no grader output, no ground truth, no disease group,
//! no other rater's work, no rating), and the writer is `cases::package::write_rater_package`.

use super::{
    edits_to_reach, Action, StudyRole, TeamCase, TeamLeadSession, TeamMember, TeamRaterSession,
    TeamRating, TeamRatingState, TeamResponse, TeamSeries, TeamTask,
};
use crate::case_codes::CaseCodes;
use crate::model::{Rubric, StudyMeta, TaskSpec, Taxonomy};
use crate::package::{
    blinded_samples, ImageSource, PackageCase, PackageImage, PackageItem, PackagePlan,
    PackageRater, PackageSeries, RaterPackageContents, UploadedRating, BLINDED_MODEL,
};
use crate::rating::{RaterRole, RatingError};
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// Someone exchanging rater and results packages: a rater their own, the lead anyone's.
#[derive(Debug, Clone)]
pub enum PackageExchange {
    Own(TeamRaterSession),
    AnyRater(TeamLeadSession),
}

impl TeamMember {
    /// A rater exchanges their own packages (`Rate`); the lead any rater's
    /// (`ExchangePackages`); a curator none.
    pub fn exchange_packages(self) -> Result<PackageExchange> {
        if self.role == StudyRole::Rater {
            Ok(PackageExchange::Own(self.rater()?))
        } else {
            Ok(PackageExchange::AnyRater(
                self.lead(Action::ExchangePackages)?,
            ))
        }
    }
}

impl PackageExchange {
    pub fn member(&self) -> &TeamMember {
        match self {
            PackageExchange::Own(session) => session.member(),
            PackageExchange::AnyRater(session) => session.member(),
        }
    }

    /// Whose package this is: `rater` as the server read them for this study. A rater reaches
    /// only themselves; anyone else, and anyone who is not a rater of the study, is "not found".
    pub fn recipient(&self, rater: TeamMember) -> Result<PackageRecipient> {
        let allowed = match self {
            PackageExchange::Own(session) => rater.account == session.member.account,
            PackageExchange::AnyRater(session) => rater.study == session.member.study,
        };
        if !allowed || rater.role != StudyRole::Rater {
            return Err(Error::NotFound {
                what: format!("rater {:?} in this study", rater.username),
            });
        }
        Ok(PackageRecipient { rater })
    }
}

/// Whose queue a package holds and whose results it brings back; only
/// [`PackageExchange::recipient`] makes one.
#[derive(Debug, Clone)]
pub struct PackageRecipient {
    rater: TeamMember,
}

impl PackageRecipient {
    pub fn rater(&self) -> &TeamMember {
        &self.rater
    }

    /// The session whose rules decide the edits a results package of this rater carries: they
    /// are the rater's edits, made offline, wherever the upload comes from.
    pub fn into_rater_session(self) -> TeamRaterSession {
        TeamRaterSession { member: self.rater }
    }
}

/// One assignment of the recipient's queue as the server stores it.
#[derive(Debug, Clone)]
pub struct QueuedItem {
    /// The server's assignment id: the item's `server_assignment`.
    pub assignment: i64,
    pub position: u32,
    /// The server's key of the response, to number samples by.
    pub response_key: i64,
    pub case: TeamCase,
    pub task: TeamTask,
    pub response: TeamResponse,
}

/// A de-identified image the server holds, by the SHA-256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredImage {
    pub sha256: String,
    pub extension: String,
}

/// What the server read for a package: the study, the recipient's queue in order, and the
/// series (with their images) of every case in it.
#[derive(Debug, Clone)]
pub struct PackageSource {
    pub study: StudyMeta,
    pub rubric: Rubric,
    pub taxonomy: Taxonomy,
    /// The rater's site, as their account says.
    pub site: String,
    /// How the rater reads, as the lead's invitation named it; none for a membership from
    /// before the server kept it (the package then names a neuroradiologist).
    pub clinical_role: Option<RaterRole>,
    pub years_experience: Option<u32>,
    pub created_at: String,
    pub queue: Vec<QueuedItem>,
    pub series: BTreeMap<String, Vec<(TeamSeries, Vec<StoredImage>)>>,
    /// The study's case codes on the server, which the package names its cases by.
    pub case_codes: CaseCodes,
}

/// The plan every server-built package names: the server's queue is not a seeded local plan.
const SERVER_PLAN: &str = "team server";

/// The rater package of `recipient`'s queue; `fetch` gives each stored image's bytes when the
/// writer reaches it. The package names the rater's clinical role as their invitation did.
pub fn rater_package(
    recipient: &PackageRecipient,
    source: PackageSource,
    fetch: impl Fn(&StoredImage) -> ImageSource,
) -> Result<RaterPackageContents> {
    let PackageSource {
        study,
        rubric,
        taxonomy,
        site,
        clinical_role,
        years_experience,
        created_at,
        queue,
        mut series,
        case_codes,
    } = source;
    if queue.is_empty() {
        return Err(RatingError::Refused(format!(
            "{} has no assignments in this study yet: the lead tops up their queue first",
            recipient.rater.username
        ))
        .into());
    }
    let samples = blinded_samples(
        &queue
            .iter()
            .map(|q| {
                (
                    q.response_key,
                    q.case.case_id.as_str(),
                    q.task.task_id.as_str(),
                )
            })
            .collect::<Vec<_>>(),
    );
    let items: Vec<PackageItem> = queue
        .iter()
        .enumerate()
        .map(|(index, q)| PackageItem {
            item: index as u32 + 1,
            plan: 1,
            case_id: q.case.case_id.clone(),
            task_id: q.task.task_id.clone(),
            sample: samples[&q.response_key],
            read_no: 1,
            position: q.position,
            overlap: false,
            not_before: None,
            server_assignment: Some(q.assignment),
        })
        .collect();
    let mut responses = Vec::new();
    let mut written = BTreeSet::new();
    let mut cases: BTreeMap<String, PackageCase> = BTreeMap::new();
    for q in queue {
        let QueuedItem {
            assignment: _,
            position: _,
            response_key,
            case,
            task,
            response,
        } = q;
        let TeamResponse {
            model: _,
            sample: _,
            answer,
            rationale,
            turns,
        } = response;
        if written.insert(response_key) {
            responses.push(crate::model::ResponseLine {
                case_id: case.case_id.clone(),
                task_id: task.task_id.clone(),
                model: BLINDED_MODEL.to_owned(),
                sample: samples[&response_key],
                answer,
                rationale,
                turns,
                extra: serde_json::Map::new(),
            });
        }
        let TeamCase {
            case_id,
            disease_group: _,
            age,
            sex,
            modality,
            ehr,
            clinical_note,
        } = case;
        let entry = cases.entry(case_id.clone()).or_insert_with(|| PackageCase {
            series: series
                .remove(&case_id)
                .unwrap_or_default()
                .into_iter()
                .map(|(s, images)| PackageSeries {
                    series_id: s.series_id,
                    label: s.label,
                    kind: s.kind,
                    images: images
                        .iter()
                        .map(|image| PackageImage {
                            extension: image.extension.clone(),
                            source: fetch(image),
                        })
                        .collect(),
                })
                .collect(),
            case_id,
            modality,
            age,
            sex,
            ehr,
            clinical_note,
            tasks: Vec::new(),
        });
        if !entry.tasks.iter().any(|t| t.id == task.task_id) {
            entry.tasks.push(TaskSpec {
                id: task.task_id,
                family: task.family,
                level: task.level,
                prompt: task.prompt,
                key_images: task.key_images,
                follow_up: Vec::new(),
            });
        }
    }
    responses.sort_by(|a, b| {
        (&a.case_id, &a.task_id, a.sample).cmp(&(&b.case_id, &b.task_id, b.sample))
    });
    let mut cases: Vec<PackageCase> = cases.into_values().collect();
    for case in &mut cases {
        case.tasks.sort_by(|a, b| a.id.cmp(&b.id));
    }
    // What ratings refer to that the package fixes: the rubric and taxonomy. Responses added on
    // the server later do not change a package's items, so they are not part of it.
    let study_sha256 =
        crate::digest::sha256_hex(serde_json::json!([rubric, taxonomy]).to_string().as_bytes());
    Ok(RaterPackageContents {
        package_id: crate::package::new_package_id(),
        study,
        rubric,
        taxonomy,
        study_sha256,
        rater: PackageRater {
            name: recipient.rater.username.clone(),
            role: clinical_role.unwrap_or(RaterRole::Neuroradiologist),
            years_experience,
        },
        site: if site.trim().is_empty() {
            "team server".to_owned()
        } else {
            site
        },
        created_at: created_at.clone(),
        cases,
        responses,
        plans: vec![PackagePlan {
            plan: 1,
            name: SERVER_PLAN.to_owned(),
            seed: 0,
            overlap_share: 0.0,
            repeat_share: 0.0,
            repeat_after_days: 0,
            created_at: created_at.clone(),
        }],
        items,
        case_codes,
    })
}

/// The edits that bring the server's rating of an item to what a results package says, with
/// ids derived from (rater package, item, content, kind of step) so an upload sent again is
/// answered from the edits already stored. Empty when the server's rating already says the
/// same.
pub fn results_edits(
    package_id: &str,
    uploaded: &UploadedRating,
    current: Option<&TeamRating>,
) -> Vec<(String, super::TeamEdit)> {
    use super::TeamEdit;
    let state = TeamRatingState {
        scores: uploaded.scores.clone(),
        labels: uploaded.labels.clone(),
    };
    let steps = edits_to_reach(&state, uploaded.submitted, current);
    let content = serde_json::to_string(&(&uploaded.scores, &uploaded.labels, uploaded.submitted))
        .expect("a rating serialises");
    steps
        .into_iter()
        .map(|edit| {
            // By the step's kind (each at most once), not its place: the submit of an upload is
            // the same edit whether or not its save was stored by an earlier attempt.
            let kind = match &edit {
                TeamEdit::Reopen => "reopen",
                TeamEdit::Save { .. } => "save",
                TeamEdit::Submit => "submit",
                TeamEdit::Reveal => "reveal",
            };
            let digest = crate::digest::sha256_hex(
                format!("{package_id}\0{}\0{content}\0{kind}", uploaded.item).as_bytes(),
            );
            (format!("pkg-{}", &digest[..40]), edit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::{RatingEdit, RatingStatus};

    fn uploaded(overall: f64, submitted: bool) -> UploadedRating {
        UploadedRating {
            line: 1,
            item: 3,
            scores: RatingEdit {
                overall: Some(overall),
                not_applicable: Default::default(),
                dimensions: BTreeMap::new(),
                correctness: None,
                confidence: None,
                comment: "c".into(),
                seconds_on_task: 4.0,
            },
            labels: Vec::new(),
            submitted,
        }
    }

    fn stored(of: &UploadedRating, status: RatingStatus) -> TeamRating {
        TeamRating {
            state: TeamRatingState {
                scores: of.scores.clone(),
                labels: of.labels.clone(),
            },
            status,
            version: 2,
            updated_at: String::new(),
            revealed_at: None,
            rubric_version: Some(1),
        }
    }

    fn kinds(edits: &[(String, super::super::TeamEdit)]) -> Vec<String> {
        edits
            .iter()
            .map(|(_, e)| {
                serde_json::to_value(e).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn results_become_the_edits_the_app_would_send_with_stable_ids() {
        let draft = uploaded(3.0, false);
        let submitted = uploaded(3.0, true);
        let other = uploaded(4.0, true);
        // (uploaded, server's rating, expected edits)
        let cases: Vec<(&UploadedRating, Option<TeamRating>, Vec<&str>)> = vec![
            (&draft, None, vec!["save"]),
            (&submitted, None, vec!["save", "submit"]),
            (
                &submitted,
                Some(stored(&submitted, RatingStatus::Draft)),
                vec!["submit"],
            ),
            (
                &submitted,
                Some(stored(&submitted, RatingStatus::Submitted)),
                vec![],
            ),
            (&draft, Some(stored(&draft, RatingStatus::Draft)), vec![]),
            (
                &other,
                Some(stored(&submitted, RatingStatus::Submitted)),
                vec!["reopen", "save", "submit"],
            ),
        ];
        for (upload, current, expected) in cases {
            let edits = results_edits("p-1", upload, current.as_ref());
            assert_eq!(kinds(&edits), expected, "{upload:?} over {current:?}");
            for (id, _) in &edits {
                assert!(
                    id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                );
            }
        }
        let first = results_edits("p-1", &submitted, None);
        assert_eq!(
            first,
            results_edits("p-1", &submitted, None),
            "the same upload, the same ids"
        );
        let ids = |edits: Vec<(String, super::super::TeamEdit)>| -> Vec<String> {
            edits.into_iter().map(|(id, _)| id).collect()
        };
        let once = ids(results_edits("p-1", &submitted, None));
        assert_ne!(
            once,
            ids(results_edits("p-2", &submitted, None)),
            "another package"
        );
        assert_ne!(
            once,
            ids(results_edits("p-1", &other, None)),
            "another content"
        );
        assert_eq!(once.iter().collect::<BTreeSet<_>>().len(), once.len());
        // The submit is the same edit whether or not an earlier attempt stored the save.
        let after_save = ids(results_edits(
            "p-1",
            &submitted,
            Some(&stored(&submitted, RatingStatus::Draft)),
        ));
        assert_eq!(after_save, vec![once[1].clone()]);
    }
}
