//! Rubric versions. The study lead may change a study's rubric (in the app, or by re-importing a
//! bundle whose study.json changed); what the ratings already made mean must not change with it.
//!
//! **Invariant:** [`change`] is the one rule: a changed rubric is edited in place while no rating
//! has been saved under the current version and the version was never copied onto a team server
//! (published: raters there may rate under it unseen here), and is a new version after that;
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
    /// Ratings were saved under the current version, or it is on a team server: they keep it,
    /// and the change is the next.
    NewVersion(NewVersionReason),
}

/// The rule: edit in place before the first rating under the current version and before it is
/// copied onto a team server, a new version after. Equality is of the rubrics, not their JSON
/// text, so a re-import that spells the same rubric differently changes nothing.
pub fn change(
    current: &Rubric,
    edited: &Rubric,
    ratings_under_current: u32,
    published: bool,
) -> RubricChange {
    if current == edited {
        RubricChange::Unchanged
    } else if ratings_under_current > 0 {
        RubricChange::NewVersion(NewVersionReason::Ratings)
    } else if published {
        RubricChange::NewVersion(NewVersionReason::Published)
    } else {
        RubricChange::InPlace
    }
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
    let saved = match change(&before.rubric, edited, before.ratings, published) {
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
        use NewVersionReason::{Published, Ratings};
        // (current, edited, ratings under current, published, expected)
        let cases = [
            (rubric(1.0), rubric(1.0), 0, false, RubricChange::Unchanged),
            (rubric(1.0), rubric(1.0), 3, false, RubricChange::Unchanged),
            (rubric(1.0), rubric(1.0), 0, true, RubricChange::Unchanged),
            (rubric(1.0), rubric(0.5), 0, false, RubricChange::InPlace),
            (
                rubric(1.0),
                rubric(0.5),
                1,
                false,
                RubricChange::NewVersion(Ratings),
            ),
            (
                rubric(1.0),
                rubric(0.5),
                0,
                true,
                RubricChange::NewVersion(Published),
            ),
            (
                rubric(1.0),
                rubric(0.5),
                2,
                true,
                RubricChange::NewVersion(Ratings),
            ),
        ];
        for (current, edited, ratings, published, expected) in cases {
            assert_eq!(
                change(&current, &edited, ratings, published),
                expected,
                "{ratings} rating(s), published: {published}"
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
