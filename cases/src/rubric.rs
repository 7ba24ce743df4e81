//! Rubric versions. The study lead may change a study's rubric (in the app, or by re-importing a
//! bundle whose study.json changed); what the ratings already made mean must not change with it.
//!
//! **Invariant:** [`change`] is the one rule: a changed rubric is edited in place while no rating
//! has been saved under the current version, the version was never copied onto a team server
//! (published: raters there may rate under it unseen here) and no rater package exported from
//! this database carried it (its rater rates under it offline), and is a new version after that;
//! [`save`] is the one writer of `studies.rubric_json`, `studies.rubric_version` and
//! `rubric_versions` after a study's first import. Every rating records the version it was last saved under
//! (`rating/table.rs`), so the report can say which rubric each rating used.

use crate::bundle::{check_rubric, Problem, Problems};
use crate::model::Rubric;
use crate::store::audit::Entry;
use crate::store::{Write, NOW_SQL};
use crate::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A study's current rubric, as the lead edits it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StudyRubric {
    pub study_id: String,
    pub rubric: Rubric,
    pub version: u32,
    /// Ratings saved under this version (drafts included): once there is one, a change is a
    /// new version.
    pub ratings: u32,
    /// When this version was copied onto a team server (`neurorater server-import`), if it was:
    /// from then on a change is a new version, as raters there may rate under this one.
    pub published_at: Option<String>,
    /// When the first rater package exported from this database carrying this version was
    /// built, if one was: from then on a change is a new version, as its rater may rate under
    /// this one offline and the results merge under it.
    pub rater_package_at: Option<String>,
    /// The task families the study's tasks are of, the ones a dimension may be limited to.
    pub families: Vec<crate::model::TaskFamily>,
}

/// What saving a changed rubric did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SavedRubric {
    /// The study's rubric version now.
    pub version: u32,
    /// Whether the change made a new version (ratings existed under the previous one, which is
    /// kept as it was) rather than editing the current one in place.
    pub new_version: bool,
    /// The ratings saved under the previous version, when the change made a new one; else 0.
    pub ratings_under_previous: u32,
    /// Why the change made a new version; none when it edited the current one in place.
    pub reason: Option<NewVersionReason>,
}

/// Why a change of the rubric is a new version rather than an edit of the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum NewVersionReason {
    /// Ratings were saved under the current version in this database.
    Ratings,
    /// The current version was copied onto a team server, where raters may rate under it.
    Published,
    /// A rater package exported from this database carried the current version: its rater may
    /// rate under it offline, and the results merge under it.
    RaterPackage,
}

/// One version of a study's rubric, by its number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricVersion {
    pub version: u32,
    pub rubric: Rubric,
}

/// How a rubric the lead changed is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RubricChange {
    /// The same rubric: nothing to write.
    Unchanged,
    /// No rating was saved under the current version and it was never published: it is edited
    /// in place.
    InPlace,
    /// Ratings were saved under the current version, or it is on a team server or in a rater
    /// package: they keep it, and the change is the next.
    NewVersion(NewVersionReason),
}

/// The rule: edit in place before the first rating under the current version and before it is
/// copied onto a team server or carried by an exported rater package, a new version after.
/// Equality is of the rubrics, not their JSON text, so a re-import that spells the same rubric
/// differently changes nothing.
pub fn change(
    current: &Rubric,
    edited: &Rubric,
    ratings_under_current: u32,
    published: bool,
    in_rater_package: bool,
) -> RubricChange {
    if current == edited {
        RubricChange::Unchanged
    } else if ratings_under_current > 0 {
        RubricChange::NewVersion(NewVersionReason::Ratings)
    } else if published {
        RubricChange::NewVersion(NewVersionReason::Published)
    } else if in_rater_package {
        RubricChange::NewVersion(NewVersionReason::RaterPackage)
    } else {
        RubricChange::InPlace
    }
}

/// What a rubric change does to one dimension (or to the overall score, the dimension
/// [`OVERALL`]). A change is classified dimension by dimension: whether the scores given under
/// the earlier definition can be compared with scores given under the later one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum DimensionChange {
    /// A new dimension: earlier ratings hold no score of it, and nothing they hold changes.
    Added,
    /// The dimension is gone: its earlier scores answer a question the rubric no longer asks.
    Removed,
    /// Its name, description, scale label or level descriptors: the same levels, reworded.
    Wording,
    /// "Not applicable" allowed (`true`) or no longer allowed: a score is the same number on the
    /// same scale either way; "not applicable" is never a score.
    NotApplicable { allowed: bool },
    /// The task families it is scored on (`added`, `removed`): on a family scored under both, a
    /// score means the same.
    Families {
        added: Vec<crate::model::TaskFamily>,
        removed: Vec<crate::model::TaskFamily>,
    },
    /// Its levels (minimum, maximum or step): a 3 on one scale is not a 3 on another, so scores
    /// from before and after are never pooled.
    Scale { before: String, after: String },
}

impl DimensionChange {
    /// Whether scores given before the change still compare with scores given after it.
    pub fn keeps_scores_comparable(&self) -> bool {
        !matches!(
            self,
            DimensionChange::Removed | DimensionChange::Scale { .. }
        )
    }
}

/// The overall score, classified as a dimension of this name.
pub const OVERALL: &str = "overall";

/// A scale's levels in words, e.g. `1–5 by 1`.
pub fn levels(scale: &crate::model::Scale) -> String {
    format!("{}–{} by {}", scale.min, scale.max, scale.step)
}

fn same_levels(a: &crate::model::Scale, b: &crate::model::Scale) -> bool {
    a.min == b.min && a.max == b.max && a.step == b.step
}

fn scale_changes(
    before: &crate::model::Scale,
    after: &crate::model::Scale,
    out: &mut Vec<DimensionChange>,
) {
    if !same_levels(before, after) {
        out.push(DimensionChange::Scale {
            before: levels(before),
            after: levels(after),
        });
    } else if before.label != after.label || before.levels != after.levels {
        out.push(DimensionChange::Wording);
    }
}

/// What changing `before` into `after` does to each dimension, the overall score first, then
/// `after`'s dimensions in order, then those it removed; a dimension left as it was is not
/// listed.
pub fn classify(before: &Rubric, after: &Rubric) -> Vec<(String, Vec<DimensionChange>)> {
    use crate::model::TaskFamily;
    let mut classified = Vec::new();
    let mut overall = Vec::new();
    scale_changes(&before.overall, &after.overall, &mut overall);
    if !overall.is_empty() {
        classified.push((OVERALL.to_owned(), overall));
    }
    let every = [
        TaskFamily::DifferentialDiagnosis,
        TaskFamily::LesionIdentification,
        TaskFamily::RationaleGeneration,
    ];
    for new in &after.dimensions {
        let Some(old) = before.dimensions.iter().find(|d| d.id == new.id) else {
            classified.push((new.id.clone(), vec![DimensionChange::Added]));
            continue;
        };
        let mut changes = Vec::new();
        scale_changes(&old.scale, &new.scale, &mut changes);
        if (old.label != new.label || old.description != new.description)
            && !changes.contains(&DimensionChange::Wording)
        {
            changes.push(DimensionChange::Wording);
        }
        if old.allow_not_applicable != new.allow_not_applicable {
            changes.push(DimensionChange::NotApplicable {
                allowed: new.allow_not_applicable,
            });
        }
        let added: Vec<TaskFamily> = every
            .into_iter()
            .filter(|f| new.applies_to(*f) && !old.applies_to(*f))
            .collect();
        let removed: Vec<TaskFamily> = every
            .into_iter()
            .filter(|f| old.applies_to(*f) && !new.applies_to(*f))
            .collect();
        if !added.is_empty() || !removed.is_empty() {
            changes.push(DimensionChange::Families { added, removed });
        }
        if !changes.is_empty() {
            classified.push((new.id.clone(), changes));
        }
    }
    for old in &before.dimensions {
        if !after.dimensions.iter().any(|d| d.id == old.id) {
            classified.push((old.id.clone(), vec![DimensionChange::Removed]));
        }
    }
    classified
}

/// Whether a score of `dimension` given under rubric version `version` (`scored_under`) on a
/// task of `family` compares with the current rubric's: the current rubric asks for it on that
/// family, on the same levels. Compared with the current definition directly, not version by
/// version, so a change undone (a scale changed and changed back) makes the earlier scores
/// comparable again. `Err` says why not, in words for the report.
pub fn comparable(
    scored_under: &Rubric,
    version: u32,
    current: &Rubric,
    dimension: &str,
    family: Option<crate::model::TaskFamily>,
) -> std::result::Result<(), String> {
    fn scale_of<'a>(rubric: &'a Rubric, dimension: &str) -> Option<&'a crate::model::Scale> {
        if dimension == OVERALL {
            return Some(&rubric.overall);
        }
        rubric
            .dimensions
            .iter()
            .find(|d| d.id == dimension)
            .map(|d| &d.scale)
    }
    let Some(now) = scale_of(current, dimension) else {
        return Err(format!(
            "the current rubric has no dimension {dimension} (version {version} had it)"
        ));
    };
    let Some(then) = scale_of(scored_under, dimension) else {
        return Err(format!("version {version} had no dimension {dimension}"));
    };
    if !same_levels(then, now) {
        return Err(format!(
            "version {version} scored it {}, the current version {}",
            levels(then),
            levels(now)
        ));
    }
    if let (Some(family), Some(current_dimension)) = (
        family,
        current.dimensions.iter().find(|d| d.id == dimension),
    ) {
        if !current_dimension.applies_to(family) {
            return Err(format!(
                "the current version no longer scores it on {} tasks",
                crate::store::enum_text(&family)
            ));
        }
    }
    Ok(())
}

/// The file name problems of an edited rubric are reported under (it has no file of its own).
pub const EDITED_RUBRIC: &str = "rubric";

/// An edited rubric's problems by the rules a bundle's rubric is checked by, each at its field
/// (`rubric.dimensions[1].id`) with its line in the rubric's JSON as [`EDITED_RUBRIC`].
pub fn problems(rubric: &Rubric) -> Vec<Problem> {
    let text = serde_json::to_string_pretty(&serde_json::json!({ "rubric": rubric }))
        .expect("a rubric serialises");
    let mut problems = Problems::default();
    check_rubric(rubric, EDITED_RUBRIC, &text, &mut problems);
    problems.into_sorted()
}

/// The study's current rubric, its version and the ratings saved under it.
pub(crate) fn current(conn: &Connection, path: &Path, study_id: &str) -> Result<StudyRubric> {
    let fail = |e| Error::database(path, "reading the study's rubric", e);
    let (study_key, rubric_json, version): (i64, String, u32) = conn
        .query_row(
            "SELECT id, rubric_json, rubric_version FROM studies WHERE study_id = ?1",
            [study_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(fail)?
        .ok_or_else(|| Error::NotFound {
            what: format!("study {study_id:?}"),
        })?;
    let ratings = ratings_under(conn, study_key, version).map_err(fail)?;
    let published_at: Option<String> = conn
        .query_row(
            "SELECT published_at FROM rubric_versions WHERE study = ?1 AND version = ?2",
            params![study_key, version],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let rater_package_at: Option<String> = conn
        .query_row(
            "SELECT min(created_at) FROM rater_packages
             WHERE study = ?1 AND direction = 'exported' AND rubric_version = ?2",
            params![study_key, version],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let families = conn
        .prepare(
            "SELECT DISTINCT t.family FROM tasks t JOIN cases c ON t.case_ref = c.id
             WHERE c.study = ?1 ORDER BY t.family",
        )
        .and_then(|mut stmt| {
            stmt.query_map([study_key], |r| crate::store::enum_column(r, 0))?
                .collect()
        })
        .map_err(fail)?;
    Ok(StudyRubric {
        study_id: study_id.to_owned(),
        rubric: crate::store::stored_rubric(study_id, &rubric_json)?,
        version,
        ratings,
        published_at,
        rater_package_at,
        families,
    })
}

/// Every version of the study's rubric, oldest first.
pub(crate) fn versions(
    conn: &Connection,
    path: &Path,
    study_id: &str,
) -> Result<Vec<RubricVersion>> {
    let rows: Vec<(u32, String)> = conn
        .prepare(
            "SELECT v.version, v.rubric_json FROM rubric_versions v
             JOIN studies s ON v.study = s.id WHERE s.study_id = ?1 ORDER BY v.version",
        )
        .and_then(|mut stmt| {
            stmt.query_map([study_id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(|e| Error::database(path, "reading the study's rubric versions", e))?;
    rows.into_iter()
        .map(|(version, text)| {
            Ok(RubricVersion {
                version,
                rubric: crate::store::stored_rubric(study_id, &text)?,
            })
        })
        .collect()
}

/// Marks every version of the study's rubric up to the current one as copied onto a team
/// server now (those not marked already), with an audit entry naming `actor` when any was: from
/// then on [`change`] never edits them in place. Returns the versions marked.
pub(crate) fn publish(w: &Write<'_>, actor: &str, study_id: &str) -> Result<Vec<u32>> {
    let tx = w.tx();
    let fail = |e| w.fail("recording the rubric versions copied to the team server", e);
    let marked: Vec<u32> = tx
        .prepare(&format!(
            "UPDATE rubric_versions SET published_at = {NOW_SQL}
             WHERE published_at IS NULL
               AND study = (SELECT id FROM studies WHERE study_id = ?1)
               AND version <= (SELECT rubric_version FROM studies WHERE study_id = ?1)
             RETURNING version"
        ))
        .and_then(|mut stmt| stmt.query_map([study_id], |r| r.get(0))?.collect())
        .map_err(fail)?;
    if !marked.is_empty() {
        w.audit(&Entry {
            actor,
            action: "publish rubric",
            entity: &format!("study:{study_id}"),
            before: None,
            after: Some(&serde_json::json!({ "published_versions": marked })),
        })?;
    }
    Ok(marked)
}

fn ratings_under(conn: &Connection, study_key: i64, version: u32) -> rusqlite::Result<u32> {
    conn.query_row(
        "SELECT count(*) FROM ratings g JOIN responses r ON g.response = r.id
         JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
         WHERE c.study = ?1 AND g.rubric_version = ?2",
        params![study_key, version],
        |r| r.get(0),
    )
}

/// Records a new study's first rubric as its version 1 (the study row was just inserted with it).
pub(crate) fn record_first(w: &Write<'_>, study_key: i64, rubric: &Rubric) -> Result<()> {
    w.tx()
        .execute(
            &format!(
                "INSERT INTO rubric_versions (study, version, rubric_json, created_at)
                 VALUES (?1, 1, ?2, {NOW_SQL})"
            ),
            params![study_key, json(rubric)],
        )
        .map_err(|e| w.fail("recording the study's rubric", e))?;
    Ok(())
}

/// Stores `edited` as the study's rubric by [`change`], with its audit entry naming `actor`, in
/// the caller's transaction; `None` when it is the rubric already stored. The caller has checked
/// it ([`problems`], or a validated bundle).
pub(crate) fn save(
    w: &Write<'_>,
    actor: &str,
    study_id: &str,
    edited: &Rubric,
) -> Result<Option<SavedRubric>> {
    let tx = w.tx();
    let before = current(tx, w.path(), study_id)?;
    let fail = |e| w.fail("storing the study's rubric", e);
    let study_key: i64 = tx
        .query_row(
            "SELECT id FROM studies WHERE study_id = ?1",
            [study_id],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let published = before.published_at.is_some();
    let in_rater_package = before.rater_package_at.is_some();
    let saved = match change(
        &before.rubric,
        edited,
        before.ratings,
        published,
        in_rater_package,
    ) {
        RubricChange::Unchanged => return Ok(None),
        RubricChange::InPlace => {
            tx.execute(
                "UPDATE rubric_versions SET rubric_json = ?3 WHERE study = ?1 AND version = ?2",
                params![study_key, before.version, json(edited)],
            )
            .map_err(fail)?;
            SavedRubric {
                version: before.version,
                new_version: false,
                ratings_under_previous: 0,
                reason: None,
            }
        }
        RubricChange::NewVersion(reason) => {
            tx.execute(
                &format!(
                    "INSERT INTO rubric_versions (study, version, rubric_json, created_at)
                     VALUES (?1, ?2, ?3, {NOW_SQL})"
                ),
                params![study_key, before.version + 1, json(edited)],
            )
            .map_err(fail)?;
            SavedRubric {
                version: before.version + 1,
                new_version: true,
                ratings_under_previous: before.ratings,
                reason: Some(reason),
            }
        }
    };
    tx.execute(
        "UPDATE studies SET rubric_json = ?2, rubric_version = ?3 WHERE id = ?1",
        params![study_key, json(edited), saved.version],
    )
    .map_err(fail)?;
    w.audit(&Entry {
        actor,
        action: if saved.new_version {
            "new rubric version"
        } else {
            "edit rubric"
        },
        entity: &format!("study:{study_id}"),
        before: Some(&serde_json::json!({
            "rubric_version": before.version,
            "rubric": before.rubric,
        })),
        after: Some(&serde_json::json!({
            "rubric_version": saved.version,
            "rubric": edited,
        })),
    })?;
    Ok(Some(saved))
}

fn json(rubric: &Rubric) -> String {
    serde_json::to_string(rubric).expect("a rubric serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Scale;

    fn rubric(step: f64) -> Rubric {
        Rubric {
            overall: Scale {
                label: None,
                min: 1.0,
                max: 5.0,
                step,
                levels: vec![],
            },
            dimensions: vec![],
        }
    }

    #[test]
    fn a_change_is_in_place_before_the_first_rating_or_publication_and_a_new_version_after() {
        use NewVersionReason::{Published, RaterPackage, Ratings};
        // (current, edited, ratings under current, published, in a rater package, expected)
        let cases = [
            (
                rubric(1.0),
                rubric(1.0),
                0,
                false,
                false,
                RubricChange::Unchanged,
            ),
            (
                rubric(1.0),
                rubric(1.0),
                3,
                false,
                false,
                RubricChange::Unchanged,
            ),
            (
                rubric(1.0),
                rubric(1.0),
                0,
                true,
                true,
                RubricChange::Unchanged,
            ),
            (
                rubric(1.0),
                rubric(0.5),
                0,
                false,
                false,
                RubricChange::InPlace,
            ),
            (
                rubric(1.0),
                rubric(0.5),
                1,
                false,
                true,
                RubricChange::NewVersion(Ratings),
            ),
            (
                rubric(1.0),
                rubric(0.5),
                0,
                true,
                true,
                RubricChange::NewVersion(Published),
            ),
            (
                rubric(1.0),
                rubric(0.5),
                0,
                false,
                true,
                RubricChange::NewVersion(RaterPackage),
            ),
            (
                rubric(1.0),
                rubric(0.5),
                2,
                true,
                false,
                RubricChange::NewVersion(Ratings),
            ),
        ];
        for (current, edited, ratings, published, packaged, expected) in cases {
            assert_eq!(
                change(&current, &edited, ratings, published, packaged),
                expected,
                "{ratings} rating(s), published: {published}, in a package: {packaged}"
            );
        }
    }

    fn dimension(id: &str, max: f64) -> crate::model::RubricDimension {
        crate::model::RubricDimension {
            id: id.into(),
            label: id.to_uppercase(),
            description: None,
            scale: Scale {
                label: None,
                min: 1.0,
                max,
                step: 1.0,
                levels: vec![],
            },
            families: None,
            allow_not_applicable: false,
        }
    }

    /// Overall 1–5 by `step`; dimensions `acc` (1–5) and `safe` (1–5).
    fn two_dimensions() -> Rubric {
        Rubric {
            dimensions: vec![dimension("acc", 5.0), dimension("safe", 5.0)],
            ..rubric(1.0)
        }
    }

    #[test]
    fn a_change_is_classified_per_dimension_and_only_scales_and_removals_break_comparison() {
        use crate::model::{ScaleLevel, TaskFamily};
        use DimensionChange::*;
        type Edit = fn(&mut Rubric);
        type Expected = Vec<(&'static str, Vec<DimensionChange>)>;
        // (what the lead did, the edit, expected classification); each expectation written from
        // the edit's meaning, not read back from `classify`.
        let cases: Vec<(&str, Edit, Expected)> = vec![
            ("nothing", |_| {}, vec![]),
            (
                "allow N/A",
                |r| r.dimensions[0].allow_not_applicable = true,
                vec![("acc", vec![NotApplicable { allowed: true }])],
            ),
            (
                "reword a name and description",
                |r| {
                    r.dimensions[1].label = "Patient safety".into();
                    r.dimensions[1].description = Some("Could it harm?".into());
                },
                vec![("safe", vec![Wording])],
            ),
            (
                "write level descriptors",
                |r| {
                    r.dimensions[0].scale.levels = vec![ScaleLevel {
                        value: 1.0,
                        descriptor: "wrong".into(),
                    }]
                },
                vec![("acc", vec![Wording])],
            ),
            (
                "add a dimension",
                |r| r.dimensions.push(dimension("new", 3.0)),
                vec![("new", vec![Added])],
            ),
            (
                "limit a dimension to a family",
                |r| r.dimensions[0].families = Some(vec![TaskFamily::DifferentialDiagnosis]),
                vec![(
                    "acc",
                    vec![Families {
                        added: vec![],
                        removed: vec![
                            TaskFamily::LesionIdentification,
                            TaskFamily::RationaleGeneration,
                        ],
                    }],
                )],
            ),
            (
                "remove a level",
                |r| r.dimensions[1].scale.max = 4.0,
                vec![(
                    "safe",
                    vec![DimensionChange::Scale {
                        before: "1–5 by 1".into(),
                        after: "1–4 by 1".into(),
                    }],
                )],
            ),
            (
                "halve the overall step",
                |r| r.overall.step = 0.5,
                vec![(
                    "overall",
                    vec![DimensionChange::Scale {
                        before: "1–5 by 1".into(),
                        after: "1–5 by 0.5".into(),
                    }],
                )],
            ),
            (
                "remove a dimension",
                |r| {
                    r.dimensions.remove(0);
                },
                vec![("acc", vec![Removed])],
            ),
        ];
        for (what, edit, expected) in cases {
            let before = two_dimensions();
            let mut after = before.clone();
            edit(&mut after);
            let got = classify(&before, &after);
            let expected: Vec<(String, Vec<DimensionChange>)> = expected
                .into_iter()
                .map(|(d, c)| (d.to_owned(), c))
                .collect();
            assert_eq!(got, expected, "{what}");
        }
        // Which kinds keep earlier scores comparable: the list, kind by kind.
        let kinds = [
            (Added, true),
            (Wording, true),
            (NotApplicable { allowed: true }, true),
            (NotApplicable { allowed: false }, true),
            (
                Families {
                    added: vec![TaskFamily::RationaleGeneration],
                    removed: vec![],
                },
                true,
            ),
            (
                DimensionChange::Scale {
                    before: "1–5 by 1".into(),
                    after: "1–3 by 1".into(),
                },
                false,
            ),
            (Removed, false),
        ];
        for (kind, keeps) in kinds {
            assert_eq!(kind.keeps_scores_comparable(), keeps, "{kind:?}");
        }
    }

    #[test]
    fn a_score_compares_with_the_current_definition_and_an_undone_change_restores_it() {
        use crate::model::TaskFamily::{DifferentialDiagnosis, RationaleGeneration};
        let v1 = two_dimensions();
        let mut narrowed = v1.clone();
        narrowed.dimensions[1].scale.max = 3.0;
        narrowed.dimensions[0].allow_not_applicable = true;
        let mut limited = v1.clone();
        limited.dimensions[0].families = Some(vec![DifferentialDiagnosis]);
        let mut without_safe = v1.clone();
        without_safe.dimensions.remove(1);
        // (scored under, current, dimension, family, expected)
        let cases = [
            (&v1, &v1, "acc", None, Ok(())),
            (&v1, &narrowed, "acc", None, Ok(())),
            (&v1, &narrowed, "overall", None, Ok(())),
            (
                &v1,
                &narrowed,
                "safe",
                None,
                Err("version 1 scored it 1–5 by 1, the current version 1–3 by 1"),
            ),
            // Narrowed, then widened back: version 1's scores are the current definition's again.
            (&v1, &v1, "safe", None, Ok(())),
            (&narrowed, &v1, "acc", None, Ok(())),
            (&v1, &limited, "acc", Some(DifferentialDiagnosis), Ok(())),
            (
                &v1,
                &limited,
                "acc",
                Some(RationaleGeneration),
                Err("the current version no longer scores it on rationale_generation tasks"),
            ),
            (
                &v1,
                &without_safe,
                "safe",
                None,
                Err("the current rubric has no dimension safe (version 1 had it)"),
            ),
            (
                &without_safe,
                &v1,
                "safe",
                None,
                Err("version 1 had no dimension safe"),
            ),
        ];
        for (scored_under, current, dimension, family, expected) in cases {
            assert_eq!(
                comparable(scored_under, 1, current, dimension, family),
                expected.map_err(str::to_owned),
                "{dimension} on {family:?}"
            );
        }
    }

    #[test]
    fn an_edited_rubric_is_checked_as_a_bundles_is_each_problem_at_its_field() {
        let mut edited = rubric(0.0);
        edited.dimensions = vec![crate::model::RubricDimension {
            id: "overall".into(),
            label: " ".into(),
            description: None,
            scale: rubric(1.0).overall,
            families: Some(vec![]),
            allow_not_applicable: false,
        }];
        let mut fields: Vec<String> = problems(&edited).into_iter().map(|p| p.field).collect();
        fields.sort();
        assert_eq!(
            fields,
            [
                "rubric.dimensions[0].families",
                "rubric.dimensions[0].id",
                "rubric.dimensions[0].label",
                "rubric.overall.step",
            ]
        );
    }
}
