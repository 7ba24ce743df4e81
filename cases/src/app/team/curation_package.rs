//! The curator's copy of a study the team server builds (docs/team-server.md, "A curator"):
//! every case with its clinical context, disease group, series and the server's de-identified
//! images, tasks with their families and key images, and the current ground truth. No model
//! answer, grader output or rating: a curator works on the ground truth alone. Written by
//! `cases::package::write_curation_package`, imported by `import_curation_package`.
//!
//! The versions themselves are not copied: the app reads a server-linked case's history from
//! the server each time (a save needs the server anyway, and a copy would be stale by the next
//! curator's save).

use super::{StoredImage, TeamCase, TeamSeries, TeamTask, TeamUnblindedSession};
use crate::model::{DiseaseGroup, GroundTruth, Rubric, StudyMeta, TaskSpec, Taxonomy};
use crate::package::{
    CurationCase, CurationPackageContents, ImageSource, PackageCase, PackageImage, PackageRater,
    PackageSeries,
};
use crate::rating::RaterRole;
use crate::{Error, Result};

/// What the server read for a curation package: the study and every case of it.
#[derive(Debug, Clone)]
pub struct CurationSource {
    pub study: StudyMeta,
    pub rubric: Rubric,
    pub taxonomy: Taxonomy,
    /// The curator's site, as their account says.
    pub site: String,
    pub created_at: String,
    pub cases: Vec<CurationSourceCase>,
}

/// One case as the server stores it: the case, its current ground truth (the JSON of
/// `cases.ground_truth`), its tasks and its series with their images.
#[derive(Debug, Clone)]
pub struct CurationSourceCase {
    pub case: TeamCase,
    pub ground_truth: Option<serde_json::Value>,
    pub tasks: Vec<TeamTask>,
    pub series: Vec<(TeamSeries, Vec<StoredImage>)>,
}

/// The curation package of the study `session` reaches (a lead's or a curator's: only they see
/// the ground truth); `fetch` gives each stored image's bytes when the writer reaches it.
pub fn curation_package(
    session: &TeamUnblindedSession,
    source: CurationSource,
    fetch: impl Fn(&StoredImage) -> ImageSource,
) -> Result<CurationPackageContents> {
    let CurationSource {
        study,
        rubric,
        taxonomy,
        site,
        created_at,
        cases,
    } = source;
    let cases = cases
        .into_iter()
        .map(|source_case| curation_case(source_case, &fetch))
        .collect::<Result<Vec<_>>>()?;
    // What the copy's tasks are judged by: the rubric and taxonomy, as a rater package names it.
    let study_sha256 =
        crate::digest::sha256_hex(serde_json::json!([rubric, taxonomy]).to_string().as_bytes());
    Ok(CurationPackageContents {
        package_id: crate::package::new_package_id(),
        study,
        rubric,
        taxonomy,
        study_sha256,
        curator: PackageRater {
            name: session.member.username.clone(),
            role: RaterRole::Curator,
            years_experience: None,
        },
        site: if site.trim().is_empty() {
            "team server".to_owned()
        } else {
            site
        },
        created_at,
        cases,
    })
}

fn curation_case(
    source: CurationSourceCase,
    fetch: &impl Fn(&StoredImage) -> ImageSource,
) -> Result<CurationCase> {
    let CurationSourceCase {
        case,
        ground_truth,
        tasks,
        series,
    } = source;
    let TeamCase {
        case_id,
        disease_group,
        age,
        sex,
        modality,
        ehr,
        clinical_note,
    } = case;
    let corrupt = |field: &str, e: serde_json::Error| Error::Corrupt {
        what: format!("case {case_id:?} on the team server: {field}: {e}"),
    };
    let disease_group: DiseaseGroup =
        serde_json::from_value(serde_json::Value::String(disease_group))
            .map_err(|e| corrupt("disease_group", e))?;
    let ground_truth: Option<GroundTruth> = ground_truth
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| corrupt("ground_truth", e))?;
    let series = series
        .into_iter()
        .map(|(s, images)| {
            let TeamSeries {
                series_id,
                label,
                kind,
                n_images: _,
            } = s;
            PackageSeries {
                series_id,
                label,
                kind,
                images: images
                    .iter()
                    .map(|image| PackageImage {
                        extension: image.extension.clone(),
                        source: fetch(image),
                    })
                    .collect(),
            }
        })
        .collect();
    let mut tasks: Vec<TaskSpec> = tasks
        .into_iter()
        .map(|task| {
            let TeamTask {
                task_id,
                family,
                level,
                prompt,
                key_images,
            } = task;
            TaskSpec {
                id: task_id,
                family,
                level,
                prompt,
                key_images,
                // The scripted follow-ups produce model answers; a curator's copy holds none.
                follow_up: Vec::new(),
            }
        })
        .collect();
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(CurationCase {
        case: PackageCase {
            case_id,
            modality,
            age,
            sex,
            ehr,
            clinical_note,
            series,
            tasks,
        },
        disease_group,
        ground_truth,
    })
}
