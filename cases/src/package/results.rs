//! The results package: the remote rater's ratings of a rater package's items, and its merge
//! into the lead's database.
//!
//! Members: `ratings.jsonl` (one line per rated item: scores, status, times, error labels with
//! spans and marks) and `audit.jsonl` (every audit entry the remote database holds for those
//! ratings, in order, with its hash there). Items are the rater package's numbers, so no local row
//! id crosses sites.

use super::archive::{self, PackageWriter};
use super::incoming::{self, load_rating, Action, Planned, Target, Verdict};
use super::rater::parse_jsonl;
use super::{
    new_package_id, refuse, study_sha256, Conflict, Manifest, MergeReport, PackageKind,
    PackageRater, FORMAT_VERSION, MANIFEST,
};
use crate::bundle::Problem;
use crate::marks::Mark;
use crate::progress::Progress;
use crate::rating::rules;
use crate::rating::{
    Correctness, LabelEdit, RatingEdit, RatingStatus, RatingView, ResponseContext, SpanText,
};
use crate::store::Store;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

const RATINGS: &str = "ratings.jsonl";
const AUDIT: &str = "audit.jsonl";
/// A results package is text; anything larger is not one.
const MAX_MEMBER_BYTES: u64 = 256 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResultLabel {
    pub category: String,
    pub severity: u8,
    pub span: Option<[u32; 2]>,
    /// Left out for the rationale, so a package without answer or turn labels reads as before.
    #[serde(default, skip_serializing_if = "SpanText::is_rationale")]
    pub text: SpanText,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    pub mark: Option<Mark>,
    pub comment: String,
}

/// One rating as it travels; `item` is 0 for a rating read from a database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResultRating {
    pub item: u32,
    pub status: RatingStatus,
    pub overall: Option<f64>,
    pub dimensions: BTreeMap<String, f64>,
    /// Left out when none, so a package without "not applicable" reads as before.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub not_applicable: BTreeSet<String>,
    pub correctness: Option<Correctness>,
    pub confidence: Option<u8>,
    pub comment: String,
    pub seconds_on_task: f64,
    pub updated_at: String,
    pub submitted_at: Option<String>,
    pub labels: Vec<ResultLabel>,
    /// The rubric version the rating was saved under, as the rater's database numbers it (it
    /// imported the rubric with the rater package): the lead's database recorded which of its
    /// versions the package carried (`package/carried.rs`), and a merge records that one (or,
    /// for a package exported before that record, the lead's current version, pinned by the
    /// manifest's `study_sha256`). Left out by builds before rubric versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric_version: Option<u32>,
}

impl ResultLabel {
    fn from_edit(edit: LabelEdit) -> Self {
        let LabelEdit {
            category,
            severity,
            span,
            text,
            turn,
            mark,
            comment,
        } = edit;
        ResultLabel {
            category,
            severity,
            span,
            text,
            turn,
            mark,
            comment,
        }
    }

    pub(crate) fn edit(&self) -> LabelEdit {
        LabelEdit {
            category: self.category.clone(),
            severity: self.severity,
            span: self.span,
            text: self.text,
            turn: self.turn,
            mark: self.mark.clone(),
            comment: self.comment.clone(),
        }
    }
}

impl ResultRating {
    /// The part a rater edits, as the rules check and the table stores it.
    pub(crate) fn scores(&self) -> RatingEdit {
        RatingEdit {
            overall: self.overall,
            dimensions: self.dimensions.clone(),
            not_applicable: self.not_applicable.clone(),
            correctness: self.correctness,
            confidence: self.confidence,
            comment: self.comment.clone(),
            seconds_on_task: self.seconds_on_task,
        }
    }

    /// A stored rating as it travels. Every field is named, so a field added to ratings fails
    /// to compile here until the package carries it too, instead of being dropped in transit.
    pub(crate) fn from_view(item: u32, view: RatingView) -> Self {
        let RatingView {
            status,
            overall,
            dimensions,
            not_applicable,
            correctness,
            confidence,
            comment,
            seconds_on_task,
            updated_at,
            submitted_at,
            labels,
        } = view;
        let labels = labels
            .iter()
            .map(|label| ResultLabel::from_edit(label.edit()))
            .collect();
        ResultRating {
            item,
            status,
            overall,
            dimensions,
            not_applicable,
            correctness,
            confidence,
            comment,
            seconds_on_task,
            updated_at,
            submitted_at,
            labels,
            rubric_version: None,
        }
    }

    /// What two sites compare: everything the rater decided, not when it was stored.
    pub(crate) fn content_sha256(&self) -> String {
        let mut labels: Vec<String> = self
            .labels
            .iter()
            .map(|l| serde_json::to_string(l).expect("a label serialises"))
            .collect();
        labels.sort();
        let mut content = serde_json::json!([
            self.status,
            self.overall,
            self.dimensions,
            self.correctness,
            self.confidence,
            self.comment,
            self.seconds_on_task,
            labels
        ]);
        // Only when there are any: a rating without keeps the hash it had before N/A existed.
        if !self.not_applicable.is_empty() {
            content
                .as_array_mut()
                .expect("an array")
                .push(serde_json::json!(self.not_applicable));
        }
        archive::sha256_hex(content.to_string().as_bytes())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResultAudit {
    pub item: u32,
    pub at: String,
    pub actor: String,
    pub action: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    /// The entry's hash in the remote database's chain.
    pub hash: String,
}

/// A rater package imported into this database, as the rater chooses which one to answer when
/// it holds several (packages of different studies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportedRaterPackage {
    pub package_id: String,
    pub study_id: String,
    pub study_title: String,
    /// The rater's name, as the package created them.
    pub rater: String,
    pub site: String,
    pub items: u32,
    /// When the lead built it (RFC 3339).
    pub created_at: String,
}

/// Every rater package imported into this database, oldest first.
pub fn imported_rater_packages(store: &Store) -> Result<Vec<ImportedRaterPackage>> {
    let db_path = store.path().to_path_buf();
    store
        .read()
        .prepare(
            "SELECT p.package_id, s.study_id, s.title, r.name, p.site,
                    (SELECT count(*) FROM rater_package_items i WHERE i.package = p.id),
                    p.created_at
             FROM rater_packages p JOIN studies s ON p.study = s.id JOIN raters r ON p.rater = r.id
             WHERE p.direction = 'imported' ORDER BY p.id",
        )
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok(ImportedRaterPackage {
                    package_id: r.get(0)?,
                    study_id: r.get(1)?,
                    study_title: r.get(2)?,
                    rater: r.get(3)?,
                    site: r.get(4)?,
                    items: r.get(5)?,
                    created_at: r.get(6)?,
                })
            })?
            .collect()
        })
        .map_err(super::db_fail(&db_path, "listing imported rater packages"))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultsPackageExport {
    pub package_id: String,
    pub answers_package: String,
    pub rater: String,
    pub site: String,
    /// Items with a rating (draft or submitted), of `items`.
    pub rated: u32,
    pub submitted: u32,
    pub items: u32,
    pub out: PathBuf,
}

/// Exports the ratings of an imported rater package (the only one, or `package_id`) as a results
/// package at `out`. Reads only; the database is not changed.
pub fn export_results_package(
    store: &Store,
    package_id: Option<&str>,
    out: &Path,
    progress: &dyn Progress,
) -> Result<ResultsPackageExport> {
    let conn = store.read();
    let db_path = store.path().to_path_buf();
    let fail = |doing: &'static str| super::db_fail(&db_path, doing);
    let packages: Vec<(i64, String, String, i64, String, String)> = conn
        .prepare(
            "SELECT p.id, p.package_id, s.study_id, p.rater, p.site, p.study_sha256
             FROM rater_packages p JOIN studies s ON p.study = s.id
             WHERE p.direction = 'imported' ORDER BY p.id",
        )
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect()
        })
        .map_err(fail("listing imported rater packages"))?;
    let chosen = match package_id {
        Some(wanted) => packages
            .iter()
            .find(|p| p.1 == wanted)
            .ok_or_else(|| Error::NotFound {
                what: format!("imported rater package {wanted}"),
            })?,
        None => match packages.as_slice() {
            [only] => only,
            [] => {
                return Err(Error::NotFound {
                    what: "an imported rater package in this database (import one first)".into(),
                })
            }
            several => {
                return Err(crate::rating::RatingError::Invalid {
                    field: "package".into(),
                    message: format!(
                        "this database holds {} rater packages ({}): name the one to answer",
                        several.len(),
                        several
                            .iter()
                            .map(|p| p.1.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
                .into())
            }
        },
    };
    let (package, answers, study_id, rater_id, site, study_hash) = chosen.clone();
    let rater = store.rater(rater_id)?;
    let items: Vec<(u32, i64, i64)> = conn
        .prepare(
            "SELECT i.item, a.response, a.read_no FROM rater_package_items i
             JOIN assignments a ON i.assignment = a.id WHERE i.package = ?1 ORDER BY i.item",
        )
        .and_then(|mut s| {
            s.query_map([package], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .map_err(fail("listing the package's items"))?;
    progress.phase("collecting ratings", items.len() as u64);
    let mut ratings = String::new();
    let mut audit = String::new();
    let (mut rated, mut submitted) = (0, 0);
    for (done, (item, response, read_no)) in items.iter().enumerate() {
        crate::progress::stop_if_cancelled(progress, "exporting the results package")?;
        let target = Target {
            rater: rater_id,
            response: *response,
            read_no: *read_no,
        };
        let Some((id, mut rating)) = load_rating(conn, target).map_err(fail("reading a rating"))?
        else {
            continue;
        };
        rating.item = *item;
        rating.rubric_version = Some(
            conn.query_row(
                "SELECT rubric_version FROM ratings WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(fail("reading a rating's rubric version"))?,
        );
        rated += 1;
        submitted += u32::from(rating.status == RatingStatus::Submitted);
        ratings.push_str(&serde_json::to_string(&rating).expect("a rating serialises"));
        ratings.push('\n');
        let entries: Vec<ResultAudit> = conn
            .prepare(
                "SELECT at, actor, action, before_json, after_json, hash FROM audit_log
                 WHERE entity = ?1 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map([format!("rating:{id}")], |r| {
                    let before: Option<String> = r.get(3)?;
                    let after: Option<String> = r.get(4)?;
                    Ok(ResultAudit {
                        item: *item,
                        at: r.get(0)?,
                        actor: r.get(1)?,
                        action: r.get(2)?,
                        before: before.and_then(|b| serde_json::from_str(&b).ok()),
                        after: after.and_then(|a| serde_json::from_str(&a).ok()),
                        hash: r.get(5)?,
                    })
                })?
                .collect()
            })
            .map_err(fail("reading the rating's audit trail"))?;
        for entry in entries {
            audit.push_str(&serde_json::to_string(&entry).expect("an entry serialises"));
            audit.push('\n');
        }
        progress.advance(done as u64 + 1);
    }
    let created_at: String = conn
        .query_row(&format!("SELECT {}", crate::store::NOW_SQL), [], |r| {
            r.get(0)
        })
        .map_err(fail("reading the clock"))?;
    let package_id = new_package_id();
    let mut writer = PackageWriter::create(out)?;
    let added = writer
        .add(RATINGS, ratings.as_bytes())
        .and_then(|_| writer.add(AUDIT, audit.as_bytes()));
    if let Err(e) = added {
        writer.abandon();
        return Err(e);
    }
    writer.finish(Manifest {
        format: PackageKind::ResultsPackage,
        format_version: FORMAT_VERSION,
        package_id: package_id.clone(),
        answers_package: Some(answers.clone()),
        study_id,
        study_sha256: study_hash,
        rater: PackageRater {
            name: rater.name.clone(),
            role: rater.role,
            years_experience: rater.years_experience,
        },
        site: site.clone(),
        created_at,
        members: Vec::new(),
    })?;
    Ok(ResultsPackageExport {
        package_id,
        answers_package: answers,
        rater: rater.name,
        site,
        rated,
        submitted,
        items: items.len() as u32,
        out: out.to_path_buf(),
    })
}

/// Merges a results package into the lead's database. The package is validated whole first
/// (damaged, foreign or invalid: [`Error::Package`], nothing written); then every rating is added,
/// updated (only a rating an earlier merge wrote and nobody changed since), left unchanged, or
/// listed as a conflict and left alone. Everything written is one transaction; a second merge of
/// the same package writes nothing.
pub fn merge_results_package(
    store: &mut Store,
    file: &Path,
    progress: &dyn Progress,
) -> Result<MergeReport> {
    progress.phase("checking the package", 1);
    let ResultsPackage {
        manifest,
        ratings,
        trail,
    } = read_results_package(file)?;
    progress.advance(1);
    let mut report = MergeReport {
        package_id: manifest.package_id.clone(),
        rater: manifest.rater.name.clone(),
        site: manifest.site.clone(),
        added: 0,
        updated: 0,
        unchanged: 0,
        conflicts: Vec::new(),
    };
    let answered = match answered_package(store, file, &manifest)? {
        Ok(answered) => answered,
        Err(conflict) => {
            report.conflicts.push(conflict);
            return Ok(report);
        }
    };
    let planned = plan_merge(
        store,
        file,
        &manifest,
        &answered,
        ratings,
        &trail,
        &mut report,
    )?;
    if planned.is_empty() {
        return Ok(report);
    }
    crate::progress::stop_if_cancelled(progress, "merging the results package")?;
    progress.phase("merging", 1);
    incoming::write(store, &planned)?;
    for plan in &planned {
        match plan.action {
            Action::Add => report.added += 1,
            Action::Update { .. } => report.updated += 1,
        }
    }
    progress.advance(1);
    Ok(report)
}

/// A results package read whole and checked as a file: its manifest and both members parsed.
struct ResultsPackage {
    manifest: Manifest,
    ratings: Vec<(usize, ResultRating)>,
    trail: Vec<(usize, ResultAudit)>,
}

/// Reads the package at `file`: only its two text members, each within [`MAX_MEMBER_BYTES`],
/// every digest checked against the manifest, the format and version checked, the lines parsed.
fn read_results_package(file: &Path) -> Result<ResultsPackage> {
    let mut members: BTreeMap<String, String> = BTreeMap::new();
    let manifest = archive::read(file, |name, reader| {
        if name != RATINGS && name != AUDIT {
            return Err(refuse(
                file,
                name,
                None,
                "-",
                format!("not a member of a results package (expected {RATINGS}, {AUDIT})"),
            ));
        }
        let mut text = String::new();
        reader
            .take(MAX_MEMBER_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| refuse(file, name, None, "-", format!("not UTF-8 text: {e}")))?;
        if text.len() as u64 > MAX_MEMBER_BYTES {
            return Err(refuse(
                file,
                name,
                None,
                "-",
                format!("larger than {MAX_MEMBER_BYTES} bytes"),
            ));
        }
        members.insert(name.to_owned(), text);
        Ok(())
    })?;
    if manifest.format != PackageKind::ResultsPackage || manifest.format_version != FORMAT_VERSION {
        return Err(refuse(
            file,
            MANIFEST,
            None,
            "format",
            format!(
                "a results package of format version {FORMAT_VERSION} is expected, this is a \
                 {:?} of version {}",
                manifest.format, manifest.format_version
            ),
        ));
    }
    let empty = String::new();
    let ratings = parse_jsonl(file, RATINGS, members.get(RATINGS).unwrap_or(&empty))?;
    let trail = parse_jsonl(file, AUDIT, members.get(AUDIT).unwrap_or(&empty))?;
    Ok(ResultsPackage {
        manifest,
        ratings,
        trail,
    })
}

/// The lead's rater package the results answer, and its rater.
struct Answered {
    package: i64,
    rater: i64,
    /// What it carried, when its export recorded that (`package/carried.rs`); `None` for a
    /// package exported by a build before, whose results are checked against the whole study.
    carried: Option<CarriedRubric>,
}

/// The lead's rubric version a rater package carried, which its ratings are checked against and
/// recorded under.
struct CarriedRubric {
    version: u32,
    rubric: crate::model::Rubric,
}

/// Finds the rater package the results answer. A database without the study refuses the package
/// ([`Error::Package`]); a package this database never exported, for another rater, or of a
/// study changed since is a [`Conflict`] the report lists.
fn answered_package(
    store: &Store,
    file: &Path,
    manifest: &Manifest,
) -> Result<std::result::Result<Answered, Conflict>> {
    let conn = store.read();
    let fail = |doing: &'static str| super::db_fail(store.path(), doing);
    let study: i64 = conn
        .query_row(
            "SELECT id FROM studies WHERE study_id = ?1",
            [&manifest.study_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(fail("finding the study"))?
        .ok_or_else(|| {
            refuse(
                file,
                MANIFEST,
                None,
                "study_id",
                format!(
                    "this database holds no study {:?}: merge the package into the study lead's \
                     database",
                    manifest.study_id
                ),
            )
        })?;
    let answers = manifest.answers_package.clone().unwrap_or_default();
    type Exported = (
        i64,
        i64,
        String,
        String,
        Option<u32>,
        Option<String>,
        Option<String>,
    );
    let exported: Option<Exported> = conn
        .query_row(
            "SELECT p.id, p.rater, r.name, p.study_sha256, p.rubric_version, p.rubric_sha256,
                    p.taxonomy_sha256
             FROM rater_packages p JOIN raters r ON p.rater = r.id
             WHERE p.package_id = ?1 AND p.direction = 'exported' AND p.study = ?2",
            params![answers, study],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .optional()
        .map_err(fail("finding the rater package"))?;
    let Some((
        package,
        rater,
        rater_name,
        exported_hash,
        rubric_version,
        rubric_hash,
        taxonomy_hash,
    )) = exported
    else {
        return Ok(Err(Conflict::UnknownPackage {
            package_id: answers,
        }));
    };
    if rater_name != manifest.rater.name {
        return Ok(Err(Conflict::UnknownRater {
            package_id: answers,
            expected: rater_name,
            found: manifest.rater.name.clone(),
        }));
    }
    // The results must answer the package as it was exported.
    if exported_hash != manifest.study_sha256 {
        return Ok(Err(Conflict::StudyChanged {
            study_id: manifest.study_id.clone(),
        }));
    }
    let (Some(version), Some(rubric_hash), Some(taxonomy_hash)) =
        (rubric_version, rubric_hash, taxonomy_hash)
    else {
        // Exported by a build that did not record what the package carried: the whole study
        // must be as it was.
        if study_sha256(conn, store.path(), study)? != exported_hash {
            return Ok(Err(Conflict::StudyChanged {
                study_id: manifest.study_id.clone(),
            }));
        }
        return Ok(Ok(Answered {
            package,
            rater,
            carried: None,
        }));
    };
    // Exported by this build: the rubric version and taxonomy it carried must be unchanged;
    // responses added and rubric versions made since do not matter to it.
    let versions = crate::rubric::versions(conn, store.path(), &manifest.study_id)?;
    let carried_rubric = versions.into_iter().find(|v| v.version == version);
    let mut problems = Vec::new();
    match &carried_rubric {
        Some(held) if super::carried::rubric_sha256(&held.rubric) == rubric_hash => {}
        Some(_) => problems.push(format!(
            "rubric version {version}, which rater package {answers} carried, was edited at \
             this site since the package was built, so its ratings were made under a rubric \
             this database no longer holds"
        )),
        None => problems.push(format!(
            "rubric version {version}, which rater package {answers} carried, is no longer in \
             this database"
        )),
    }
    let taxonomy: String = conn
        .query_row(
            "SELECT taxonomy_json FROM studies WHERE id = ?1",
            [study],
            |r| r.get(0),
        )
        .map_err(fail("reading the study's taxonomy"))?;
    let taxonomy = crate::store::stored_taxonomy(&manifest.study_id, &taxonomy)?;
    if super::carried::taxonomy_sha256(&taxonomy) != taxonomy_hash {
        problems.push(format!(
            "the study's error taxonomy changed at this site since rater package {answers} was \
             built, so its error labels were made under a taxonomy this database no longer holds"
        ));
    }
    if !problems.is_empty() {
        return Err(Error::Package {
            package: file.to_path_buf(),
            problems: problems
                .into_iter()
                .map(|message| Problem {
                    file: MANIFEST.into(),
                    line: None,
                    field: "answers_package".into(),
                    message: format!(
                        "{message}; nothing was merged: export a new rater package for this rater"
                    ),
                })
                .collect(),
        });
    }
    Ok(Ok(Answered {
        package,
        rater,
        carried: carried_rubric.map(|held| CarriedRubric {
            version,
            rubric: held.rubric,
        }),
    }))
}

/// Decides what each rating of the package does to the lead's database, counting the unchanged
/// and listing the conflicts in `report`. Any rating that breaks a rule, a repeated item or an
/// audit entry without its rating refuses the whole package ([`Error::Package`]).
fn plan_merge(
    store: &Store,
    file: &Path,
    manifest: &Manifest,
    answered: &Answered,
    ratings: Vec<(usize, ResultRating)>,
    trail: &[(usize, ResultAudit)],
    report: &mut MergeReport,
) -> Result<Vec<Planned>> {
    let conn = store.read();
    let fail = |doing: &'static str| super::db_fail(store.path(), doing);
    let rater = answered.rater;
    let mut problems = Vec::new();
    let mut planned = Vec::new();
    let mut seen_items = BTreeMap::new();
    // Cases by key, each keeping its series' stored geometry for the marks of every label.
    let mut cases = BTreeMap::new();
    for (line, rating) in ratings {
        if let Some(first) = seen_items.insert(rating.item, line) {
            problems.push(Problem {
                file: RATINGS.into(),
                line: Some(line),
                field: "item".into(),
                message: format!("item {} was rated on line {first} already", rating.item),
            });
            continue;
        }
        if let Some(held) = &answered.carried {
            // What the item showed its rater must still be here, unchanged.
            let assignment: Option<i64> = conn
                .query_row(
                    "SELECT assignment FROM rater_package_items WHERE package = ?1 AND item = ?2",
                    params![answered.package, rating.item],
                    |r| r.get(0),
                )
                .optional()
                .map_err(fail("finding an item"))?;
            let recorded =
                super::carried::recorded_item(conn, store.path(), answered.package, rating.item)?;
            if let (Some(assignment), Some(recorded)) = (assignment, recorded) {
                let now = super::carried::carried_item(conn, store.path(), assignment)?;
                let changed = match &now {
                    None => vec!["its response (it is no longer in this database)"],
                    Some(now) => recorded.changes(now),
                };
                if !changed.is_empty() {
                    let name = item_name(conn, assignment)
                        .map_err(fail("naming an item"))?
                        .map(|(case_id, task_id)| format!(" ({case_id}/{task_id})"))
                        .unwrap_or_default();
                    problems.push(Problem {
                        file: RATINGS.into(),
                        line: Some(line),
                        field: "item".into(),
                        message: format!(
                            "item {}{name}: {} changed at this site since rater package {} was \
                             built (rated under rubric version {}), so the rating may not be of \
                             what is stored now; nothing was merged",
                            rating.item,
                            changed.join(" and "),
                            manifest.answers_package.as_deref().unwrap_or_default(),
                            held.version
                        ),
                    });
                    continue;
                }
            }
        }
        let found: Option<(i64, i64, String, String)> = conn
            .query_row(
                "SELECT a.response, a.read_no, c.case_id, t.task_id FROM rater_package_items i
                 JOIN assignments a ON i.assignment = a.id JOIN responses r ON a.response = r.id
                 JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
                 WHERE i.package = ?1 AND i.item = ?2 AND a.rater = ?3",
                params![answered.package, rating.item, rater],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(fail("finding an item"))?;
        let Some((response, read_no, case_id, task_id)) = found else {
            report.conflicts.push(Conflict::UnknownAssignment {
                item: rating.item,
                line,
            });
            continue;
        };
        let mut context = crate::rating::response_context(conn, store.path(), response)?;
        // Checked against the rubric version the rater scored on, which may be older than the
        // study's current one.
        let rubric_version = answered.carried.as_ref().map(|held| {
            context.rubric = held.rubric.clone();
            held.version
        });
        for (field, message) in incoming::problems(store, &mut cases, &context, &rating)? {
            problems.push(Problem {
                file: RATINGS.into(),
                line: Some(line),
                field,
                message,
            });
        }
        let target = Target {
            rater,
            response,
            read_no,
        };
        let action = match incoming::verdict(store, target, &rating, rubric_version)? {
            Verdict::Write(action) => action,
            Verdict::Unchanged => {
                report.unchanged += 1;
                continue;
            }
            Verdict::EditedHere => {
                report.conflicts.push(Conflict::EditedAtLead {
                    item: rating.item,
                    line,
                    case_id,
                    task_id,
                });
                continue;
            }
            Verdict::Older => {
                report.conflicts.push(Conflict::OlderThanMerged {
                    item: rating.item,
                    line,
                    case_id,
                    task_id,
                });
                continue;
            }
        };
        let remote_audit: Vec<&ResultAudit> = trail
            .iter()
            .filter(|(_, e)| e.item == rating.item)
            .map(|(_, e)| e)
            .collect();
        let mut provenance = serde_json::Map::new();
        provenance.insert("results_package".into(), manifest.package_id.clone().into());
        provenance.insert("site".into(), manifest.site.clone().into());
        provenance.insert("line".into(), line.into());
        if let Some(version) = rubric_version {
            provenance.insert("rubric_version".into(), version.into());
        }
        provenance.insert(
            "remote_audit".into(),
            serde_json::to_value(remote_audit).expect("an audit trail serialises"),
        );
        planned.push(Planned {
            target,
            rating,
            action,
            source: manifest.package_id.clone(),
            actor: manifest.rater.name.clone(),
            verb: "merge rating",
            provenance,
            rubric_version,
        });
    }
    for (line, entry) in trail {
        if !seen_items.contains_key(&entry.item) {
            problems.push(Problem {
                file: AUDIT.into(),
                line: Some(*line),
                field: "item".into(),
                message: format!("item {} has no rating in {RATINGS}", entry.item),
            });
        }
    }
    if !problems.is_empty() {
        return Err(Error::Package {
            package: file.to_path_buf(),
            problems,
        });
    }
    Ok(planned)
}

/// The lead's case and task ids of an assignment, for a message.
fn item_name(
    conn: &rusqlite::Connection,
    assignment: i64,
) -> rusqlite::Result<Option<(String, String)>> {
    conn.query_row(
        "SELECT c.case_id, t.task_id FROM assignments a JOIN responses r ON a.response = r.id
         JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id WHERE a.id = ?1",
        [assignment],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// Labels whose mark lies outside its series' volume, as an edit in the app is refused for
/// (`rating::mark_outside_volume`): `(field, message)` pairs as [`violations`] gives them.
pub(super) fn marks_outside_volume(
    store: &Store,
    cases: &mut BTreeMap<i64, crate::curation::CaseContext>,
    context: &ResponseContext,
    rating: &ResultRating,
) -> Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    for (index, label) in rating.labels.iter().enumerate() {
        let Some(mark) = &label.mark else { continue };
        let case = match cases.entry(context.case_key) {
            std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::btree_map::Entry::Vacant(slot) => slot.insert(
                crate::curation::CaseContext::load_key(store, context.case_key)?,
            ),
        };
        if let Some(message) = crate::rating::mark_outside_volume(store, case, mark)? {
            found.push((
                format!("labels[{index}].{}", crate::rating::MARK_POINTS_FIELD),
                message,
            ));
        }
    }
    Ok(found)
}

/// The rules an edit in the app obeys (`rating/rules.rs`), on a rating that arrives whole:
/// `(field, message)` pairs, label fields as `labels[<index>].<field>`.
pub(super) fn violations(
    context: &ResponseContext,
    rating: &ResultRating,
) -> Vec<(String, String)> {
    let scores = rating.scores();
    let mut found: Vec<(String, String)> =
        rules::rating_violations(&context.rubric, context.family, &scores)
            .into_iter()
            .map(|v| (v.field, v.message))
            .collect();
    if rating.status == RatingStatus::Submitted {
        let missing = rules::missing_for_submit(&context.rubric, context.family, Some(&scores));
        if !missing.is_empty() {
            found.push((
                "status".into(),
                format!("submitted, but {} still empty", missing.join(", ")),
            ));
        }
    }
    for (index, label) in rating.labels.iter().enumerate() {
        for v in rules::label_violations(&context.labels(), &label.edit()) {
            found.push((format!("labels[{index}].{}", v.field), v.message));
        }
    }
    found
}

/// One rating of a results package, as the team server applies it (docs/multisite.md): the
/// rater package's item it rates, the state to save, and whether it was submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadedRating {
    /// Its line in `ratings.jsonl`.
    pub line: usize,
    pub item: u32,
    pub scores: RatingEdit,
    pub labels: Vec<LabelEdit>,
    pub submitted: bool,
}

/// A results package checked as a file (every member's digest, the format, each line parsed; an
/// item rated twice is refused): its manifest and ratings, for the team server, which decides
/// each rating as an edit of its own (`cases::app::team::results_edits`) rather than merging it
/// into a local database.
pub fn read_uploaded_results(file: &Path) -> Result<(Manifest, Vec<UploadedRating>)> {
    let ResultsPackage {
        manifest, ratings, ..
    } = read_results_package(file)?;
    if manifest.answers_package.is_none() {
        return Err(refuse(
            file,
            MANIFEST,
            None,
            "answers_package",
            "a results package names the rater package it answers".into(),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut uploaded = Vec::with_capacity(ratings.len());
    for (line, rating) in ratings {
        if !seen.insert(rating.item) {
            return Err(refuse(
                file,
                RATINGS,
                Some(line),
                "item",
                format!("item {} is rated on an earlier line too", rating.item),
            ));
        }
        uploaded.push(UploadedRating {
            line,
            item: rating.item,
            scores: rating.scores(),
            labels: rating.labels.iter().map(ResultLabel::edit).collect(),
            submitted: rating.status == RatingStatus::Submitted,
        });
    }
    Ok((manifest, uploaded))
}
