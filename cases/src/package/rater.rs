//! The rater package: built at the lead's site from one rater's queue, imported at theirs.
//!
//! Members: `bundle/…` is a study bundle (docs/bundle.md) holding only what the blinded reading
//! item shows: `study.json` (title, rubric, taxonomy), each needed case without ground truth and
//! with its disease group withheld, the tasks in the queue, the images de-identified and renamed
//! by position, and `responses.jsonl` with every model name replaced by `blinded` and samples
//! numbered per task in reading order. `plans.jsonl` and `items.jsonl` are the queue: one line per
//! plan, one per assignment (`item` numbers it within the package). Every case is named by its
//! pseudonymous code (`case_codes`), never its id, which may name the diagnosis; results come back
//! by item number, so nothing needs the id.

use super::archive::{self, PackageWriter};
use super::{
    check_label, new_package_id, refuse, study_sha256, Manifest, PackageKind, PackageRater,
    FORMAT_VERSION,
};
use crate::case_codes::CaseCodes;
use crate::model::{
    CaseFile, DiseaseGroup, GroundTruth, Modality, ResponseLine, Rubric, SeriesKind, SeriesSpec,
    Sex, StudyFile, StudyMeta, TaskSpec, Taxonomy,
};
use crate::progress::Progress;
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, Result};
use rusqlite::params;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The model name every response of a rater package carries.
pub const BLINDED_MODEL: &str = "blinded";
pub(crate) const PLANS: &str = "plans.jsonl";
pub(crate) const ITEMS: &str = "items.jsonl";
pub(super) const BUNDLE_PREFIX: &str = "bundle/";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackagePlan {
    pub plan: u32,
    pub name: String,
    pub seed: u64,
    pub overlap_share: f64,
    pub repeat_share: f64,
    pub repeat_after_days: u32,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageItem {
    pub item: u32,
    pub plan: u32,
    pub case_id: String,
    pub task_id: String,
    pub sample: u32,
    pub read_no: u32,
    pub position: u32,
    pub overlap: bool,
    pub not_before: Option<String>,
    /// The team server's id of this assignment, in a package the server built: where the
    /// rater's edits of this item are sent (`POST /api/studies/{study}/items/{assignment}/edits`).
    /// Absent in a package a local lead built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_assignment: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RaterPackageExport {
    pub package_id: String,
    pub study_id: String,
    pub rater: String,
    pub site: String,
    pub items: u32,
    pub cases: u32,
    pub images: u32,
    pub out: PathBuf,
}

/// Everything a rater package holds, typed: what [`write_rater_package`] writes. Built from a
/// local database by [`export_rater_package`] and from the team server's rows by
/// `cases::app::team::rater_package`; whoever builds it decides what may leave, the writer only
/// writes it (and de-identifies images that are not de-identified yet).
#[derive(Debug)]
pub struct RaterPackageContents {
    /// A random UUID naming the package on every site; also the salt of a bundle file's
    /// replaced DICOM UIDs.
    pub package_id: String,
    pub study: StudyMeta,
    pub rubric: Rubric,
    pub taxonomy: Taxonomy,
    /// The study content the package was built from (manifest `study_sha256`).
    pub study_sha256: String,
    pub rater: PackageRater,
    pub site: String,
    pub created_at: String,
    /// The cases the queue needs, in the order written.
    pub cases: Vec<PackageCase>,
    /// Blinded: every `model` is `blinded`, samples numbered per task in reading order
    /// ([`blinded_samples`]), no other field.
    pub responses: Vec<ResponseLine>,
    pub plans: Vec<PackagePlan>,
    pub items: Vec<PackageItem>,
    /// The study's case codes: the writer names every case by its code, in member names and
    /// contents alike ([`name_cases_by_code`]), whoever built the contents.
    pub case_codes: CaseCodes,
}

/// A case as a rater package carries it: its clinical context without disease group or ground
/// truth, its series with their images, and the tasks of the queue.
#[derive(Debug)]
pub struct PackageCase {
    pub case_id: String,
    pub modality: Modality,
    pub age: u32,
    pub sex: Sex,
    pub ehr: BTreeMap<String, serde_json::Value>,
    pub clinical_note: String,
    pub series: Vec<PackageSeries>,
    pub tasks: Vec<TaskSpec>,
}

#[derive(Debug)]
pub struct PackageSeries {
    pub series_id: String,
    pub label: String,
    pub kind: SeriesKind,
    /// In display order; a NIfTI series has one.
    pub images: Vec<PackageImage>,
}

#[derive(Debug)]
pub struct PackageImage {
    /// The file name's extension in the package (`dcm`, `nii`, `nii.gz`, `png`, `jpg`).
    pub extension: String,
    pub source: ImageSource,
}

/// Where an image's bytes come from: one at a time, as the writer reaches it, so a package never
/// holds its images in memory together.
pub enum ImageSource {
    /// A file of the lead's bundle with its SHA-256 as imported: read, checked (a changed file is
    /// an error naming it) and de-identified with the package id as it is written.
    BundleFile { path: PathBuf, sha256: String },
    /// Bytes de-identified already (the team server de-identifies once, at its import),
    /// fetched when the writer reaches them.
    Deidentified(Box<dyn FnOnce() -> Result<Vec<u8>> + Send>),
}

impl std::fmt::Debug for ImageSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageSource::BundleFile { path, sha256 } => f
                .debug_struct("BundleFile")
                .field("path", path)
                .field("sha256", sha256)
                .finish(),
            ImageSource::Deidentified(_) => f.write_str("Deidentified(..)"),
        }
    }
}

/// What [`write_rater_package`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenPackage {
    pub cases: u32,
    pub images: u32,
}

/// Each response's sample number in a rater package: per task, counted from 0 in reading order,
/// so the numbers say nothing about which model answered. `queue` is the reading order as
/// (response key, case id, task id); a response read twice keeps its first number.
pub fn blinded_samples<K: Ord + Clone>(queue: &[(K, &str, &str)]) -> BTreeMap<K, u32> {
    let mut samples = BTreeMap::new();
    let mut next: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    for (response, case_id, task_id) in queue {
        samples.entry(response.clone()).or_insert_with(|| {
            let counter = next.entry((case_id, task_id)).or_insert(0);
            *counter += 1;
            *counter - 1
        });
    }
    samples
}

/// One image file of a bundle, checked against the SHA-256 it was imported with (a changed file
/// is an error naming it) and de-identified as a rater package carries it (`package/deid.rs`):
/// DICOM under the PS3.15 basic profile with its UIDs replaced by digests salted with `salt`,
/// NIfTI and key images without their free-text metadata. The team server's import uses it too,
/// so the images it serves are de-identified by the same code.
pub fn deidentified_image(
    kind: SeriesKind,
    path: &Path,
    sha256: &str,
    salt: &str,
) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| Error::ImageMissing {
        path: path.to_path_buf(),
        source: e,
    })?;
    if archive::sha256_hex(&bytes) != sha256 {
        return Err(Error::ImageChanged {
            path: path.to_path_buf(),
        });
    }
    deidentified_bytes(kind, path, &bytes, salt)
}

fn deidentified_bytes(kind: SeriesKind, path: &Path, bytes: &[u8], salt: &str) -> Result<Vec<u8>> {
    match kind {
        SeriesKind::Dicom => super::deid::deidentified_dicom(path, salt),
        SeriesKind::Nifti => super::deid::deidentified_nifti(path, bytes),
        SeriesKind::KeyImages => super::deid::deidentified_key_image(path, bytes),
    }
}

/// The extension an image keeps in a package: a NIfTI's `nii`/`nii.gz`, a key image's own
/// (lower case), `dcm` for DICOM.
pub fn package_extension(kind: SeriesKind, file: &str) -> String {
    match kind {
        SeriesKind::Dicom => "dcm".to_owned(),
        SeriesKind::Nifti if file.ends_with(".gz") => "nii.gz".to_owned(),
        SeriesKind::Nifti => "nii".to_owned(),
        SeriesKind::KeyImages => Path::new(file)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("png")
            .to_ascii_lowercase(),
    }
}

struct QueueRow {
    assignment: i64,
    plan: i64,
    response: i64,
    read_no: u32,
    position: u32,
    overlap: bool,
    not_before: Option<String>,
    case_id: String,
    task_id: String,
}

/// Builds the rater package of `rater_name`'s queue in `study_id` at `out`, and records it in the
/// lead's database (so that its results can be merged): the database read into
/// [`RaterPackageContents`], then [`write_rater_package`].
pub fn export_rater_package(
    store: &mut Store,
    study_id: &str,
    rater_name: &str,
    site: &str,
    out: &Path,
    progress: &dyn Progress,
) -> Result<RaterPackageExport> {
    check_label("site", site)?;
    let local = local_contents(store, study_id, rater_name, site.trim())?;
    let LocalContents {
        contents,
        study,
        rater,
        queue,
        rubric_version,
        carried,
    } = local;
    let rubric_hash = super::carried::rubric_sha256(&contents.rubric);
    let taxonomy_hash = super::carried::taxonomy_sha256(&contents.taxonomy);
    let package_id = contents.package_id.clone();
    let study_hash = contents.study_sha256.clone();
    let created_at = contents.created_at.clone();
    let rater_name = contents.rater.name.clone();
    let site = contents.site.clone();
    // Recorded before the file is moved into place: a package without its record could never be
    // merged, while a record whose file was lost is harmless.
    let written = write_rater_package(contents, out, progress, || {
        store.write(|w| {
            let tx = w.tx();
            tx.execute(
                "INSERT INTO rater_packages (package_id, direction, study, rater, site,
                     study_sha256, created_at, rubric_version, rubric_sha256, taxonomy_sha256)
                 VALUES (?1, 'exported', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    package_id,
                    study,
                    rater,
                    site,
                    study_hash,
                    created_at,
                    rubric_version,
                    rubric_hash,
                    taxonomy_hash
                ],
            )
            .map_err(|e| w.fail("recording the rater package", e))?;
            let package = tx.last_insert_rowid();
            for (index, (assignment, item)) in queue.iter().zip(&carried).enumerate() {
                tx.execute(
                    "INSERT INTO rater_package_items (package, item, assignment, response_sha256,
                         task_sha256, case_sha256, images_sha256)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        package,
                        index as i64 + 1,
                        assignment,
                        item.response,
                        item.task,
                        item.case,
                        item.images
                    ],
                )
                .map_err(|e| w.fail("recording the rater package", e))?;
            }
            w.audit(&Entry {
                actor: "package",
                action: "export rater package",
                entity: &format!("rater_package:{package_id}"),
                before: None,
                after: Some(&serde_json::json!({
                    "study_id": study_id, "rater": rater_name, "site": site,
                    "items": queue.len(), "study_sha256": study_hash,
                    "rubric_version": rubric_version,
                })),
            })
        })
    })?;
    Ok(RaterPackageExport {
        package_id,
        study_id: study_id.to_owned(),
        rater: rater_name,
        site,
        items: queue.len() as u32,
        cases: written.cases,
        images: written.images,
        out: out.to_path_buf(),
    })
}

/// A local rater package's contents and what recording its export needs.
struct LocalContents {
    contents: RaterPackageContents,
    study: i64,
    rater: i64,
    /// The assignments, item by item.
    queue: Vec<i64>,
    /// The lead's rubric version the package carries.
    rubric_version: u32,
    /// What each item shows, item by item (`package/carried.rs`).
    carried: Vec<super::carried::CarriedItem>,
}

/// Reads what a rater package of `rater_name`'s queue holds from the lead's database.
fn local_contents(
    store: &Store,
    study_id: &str,
    rater_name: &str,
    site: &str,
) -> Result<LocalContents> {
    let path = store.path().to_path_buf();
    let fail = |doing: &'static str| super::db_fail(&path, doing);
    let conn = store.read();
    let crate::store::StudyRow {
        key: study,
        title,
        description,
        rubric_json,
        taxonomy_json,
        bundle_dir,
    } = crate::store::study_row(store, study_id)?;
    let rater = store
        .raters()?
        .into_iter()
        .find(|r| r.name == rater_name)
        .ok_or_else(|| Error::NotFound {
            what: format!("rater {rater_name:?} (neurorater rater list shows who exists)"),
        })?;
    if !rater.role.reads_blinded() {
        return Err(crate::rating::RatingError::Refused(format!(
            "{} is a curator and reads nothing blinded: there is no queue to send",
            rater.name
        ))
        .into());
    }
    let queue: Vec<QueueRow> = conn
        .prepare(
            "SELECT a.id, a.plan, a.response, a.read_no, a.position, a.overlap, a.not_before,
                    c.case_id, t.task_id
             FROM assignments a JOIN assignment_plans p ON a.plan = p.id
             JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id
             WHERE a.rater = ?1 AND p.study = ?2 ORDER BY p.id, a.position",
        )
        .and_then(|mut stmt| {
            stmt.query_map(params![rater.id, study], |r| {
                Ok(QueueRow {
                    assignment: r.get(0)?,
                    plan: r.get(1)?,
                    response: r.get(2)?,
                    read_no: r.get(3)?,
                    position: r.get(4)?,
                    overlap: r.get(5)?,
                    not_before: r.get(6)?,
                    case_id: r.get(7)?,
                    task_id: r.get(8)?,
                })
            })?
            .collect()
        })
        .map_err(fail("reading the rater's queue"))?;
    if queue.is_empty() {
        return Err(crate::rating::RatingError::Refused(format!(
            "{} has no assignments in study {study_id:?}: create a plan first (neurorater assign)",
            rater.name
        ))
        .into());
    }
    let study_hash = study_sha256(conn, store.path(), study)?;
    let rubric_version = crate::rubric::current(conn, store.path(), study_id)?.version;
    let carried = queue
        .iter()
        .map(|row| {
            super::carried::carried_item(conn, store.path(), row.assignment)?.ok_or_else(|| {
                Error::Corrupt {
                    what: format!("assignment {} has no response", row.assignment),
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let package_id = new_package_id();

    // Plans in queue order, numbered from 1.
    let mut plan_numbers: BTreeMap<i64, u32> = BTreeMap::new();
    let mut plans = Vec::new();
    let samples = blinded_samples(
        &queue
            .iter()
            .map(|row| (row.response, row.case_id.as_str(), row.task_id.as_str()))
            .collect::<Vec<_>>(),
    );
    let mut items = Vec::new();
    for (index, row) in queue.iter().enumerate() {
        let plan = match plan_numbers.get(&row.plan) {
            Some(&number) => number,
            None => {
                let number = plan_numbers.len() as u32 + 1;
                plan_numbers.insert(row.plan, number);
                let plan = conn
                    .query_row(
                        "SELECT name, seed, overlap_share, repeat_share, repeat_after_days,
                                created_at FROM assignment_plans WHERE id = ?1",
                        [row.plan],
                        |r| {
                            Ok(PackagePlan {
                                plan: number,
                                name: r.get(0)?,
                                seed: r.get::<_, i64>(1)? as u64,
                                overlap_share: r.get(2)?,
                                repeat_share: r.get(3)?,
                                repeat_after_days: r.get(4)?,
                                created_at: r.get(5)?,
                            })
                        },
                    )
                    .map_err(fail("reading a plan"))?;
                plans.push(plan);
                number
            }
        };
        items.push(PackageItem {
            item: index as u32 + 1,
            plan,
            case_id: row.case_id.clone(),
            task_id: row.task_id.clone(),
            sample: samples[&row.response],
            read_no: row.read_no,
            position: row.position,
            overlap: row.overlap,
            not_before: row.not_before.clone(),
            server_assignment: None,
        });
    }

    let case_ids: BTreeSet<&str> = items.iter().map(|i| i.case_id.as_str()).collect();
    let mut cases = Vec::with_capacity(case_ids.len());
    for case_id in case_ids {
        let tasks: BTreeSet<&str> = items
            .iter()
            .filter(|i| i.case_id == case_id)
            .map(|i| i.task_id.as_str())
            .collect();
        cases.push(local_case(
            conn,
            store.path(),
            study,
            case_id,
            &tasks,
            Path::new(&bundle_dir),
        )?);
    }
    // Responses by case, task and sample: the order says nothing the numbers do not.
    let task_of: BTreeMap<i64, (&str, &str)> = queue
        .iter()
        .map(|q| (q.response, (q.case_id.as_str(), q.task_id.as_str())))
        .collect();
    let mut by_sample: Vec<(&str, &str, u32, i64)> = samples
        .iter()
        .map(|(response, sample)| {
            let (case_id, task_id) = task_of[response];
            (case_id, task_id, *sample, *response)
        })
        .collect();
    by_sample.sort();
    let mut responses = Vec::with_capacity(by_sample.len());
    for (case_id, task_id, sample, response) in by_sample {
        let (answer, rationale, turns): (String, Option<String>, Option<String>) = conn
            .query_row(
                "SELECT answer, rationale, turns_json FROM responses WHERE id = ?1",
                [response],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(fail("reading a response"))?;
        responses.push(ResponseLine {
            case_id: case_id.to_owned(),
            task_id: task_id.to_owned(),
            model: BLINDED_MODEL.to_owned(),
            sample,
            answer,
            rationale,
            turns: turns
                .map(|t| serde_json::from_str(&t))
                .transpose()
                .map_err(|e| Error::Corrupt {
                    what: format!("a response's turns: {e}"),
                })?,
            extra: serde_json::Map::new(),
        });
    }
    let created_at: String = conn
        .query_row(&format!("SELECT {}", crate::store::NOW_SQL), [], |r| {
            r.get(0)
        })
        .map_err(fail("reading the clock"))?;
    let contents = RaterPackageContents {
        package_id,
        study: StudyMeta {
            id: study_id.to_owned(),
            title,
            description,
        },
        rubric: crate::store::stored_rubric(study_id, &rubric_json)?,
        taxonomy: crate::store::stored_taxonomy(study_id, &taxonomy_json)?,
        study_sha256: study_hash,
        rater: PackageRater {
            name: rater.name.clone(),
            role: rater.role,
            years_experience: rater.years_experience,
        },
        site: site.to_owned(),
        created_at,
        cases,
        responses,
        plans,
        items,
        case_codes: store.case_codes(study_id)?,
    };
    Ok(LocalContents {
        contents,
        study,
        rater: rater.id,
        queue: queue.iter().map(|q| q.assignment).collect(),
        rubric_version,
        carried,
    })
}

/// Writes `contents` as a rater package at `out`: the members to `<out>.partial`, then
/// `before_publish` (the caller records the package; its error abandons the file), then the
/// manifest, and the file moved into place. Nothing is left at `out` unless all of it succeeded.
pub fn write_rater_package(
    contents: RaterPackageContents,
    out: &Path,
    progress: &dyn Progress,
    before_publish: impl FnOnce() -> Result<()>,
) -> Result<WrittenPackage> {
    let RaterPackageContents {
        package_id,
        study,
        rubric,
        taxonomy,
        study_sha256,
        rater,
        site,
        created_at,
        mut cases,
        mut responses,
        plans,
        mut items,
        case_codes,
    } = contents;
    name_cases_by_code(&case_codes, &mut cases, &mut responses, &mut items);
    let mut writer = PackageWriter::create(out)?;
    let study_id = study.id.clone();
    let written = (|| -> Result<WrittenPackage> {
        let study_file = StudyFile {
            format_version: 1,
            study,
            rubric,
            taxonomy: Some(taxonomy),
        };
        writer.add(
            "bundle/study.json",
            &serde_json::to_vec_pretty(&study_file).expect("a study serialises"),
        )?;
        let n_cases = cases.len() as u32;
        let mut images = 0;
        progress.phase("de-identifying images", cases.len() as u64);
        for (done, case) in cases.into_iter().enumerate() {
            crate::progress::stop_if_cancelled(progress, "exporting the rater package")?;
            images += write_case(&mut writer, case, &package_id, CaseTruth::Withheld)?;
            progress.advance(done as u64 + 1);
        }
        let mut lines = String::new();
        for line in &responses {
            lines.push_str(&serde_json::to_string(line).expect("a response serialises"));
            lines.push('\n');
        }
        writer.add("bundle/responses.jsonl", lines.as_bytes())?;
        writer.add(PLANS, jsonl(&plans).as_bytes())?;
        writer.add(ITEMS, jsonl(&items).as_bytes())?;
        before_publish()?;
        Ok(WrittenPackage {
            cases: n_cases,
            images,
        })
    })();
    let written = match written {
        Ok(written) => written,
        Err(e) => {
            writer.abandon();
            return Err(e);
        }
    };
    writer.finish(Manifest {
        format: PackageKind::RaterPackage,
        format_version: FORMAT_VERSION,
        package_id,
        answers_package: None,
        study_id,
        study_sha256,
        rater,
        site,
        created_at,
        members: Vec::new(),
    })?;
    Ok(written)
}

/// Names every case of a package by its code: the cases, the responses and the items, which
/// refer to one another by it. Cases and responses are ordered by code, since the ids' order
/// would group them by diagnosis again.
fn name_cases_by_code(
    codes: &CaseCodes,
    cases: &mut [PackageCase],
    responses: &mut [ResponseLine],
    items: &mut [PackageItem],
) {
    for case in cases.iter_mut() {
        case.case_id = codes.code(&case.case_id);
    }
    for response in responses.iter_mut() {
        response.case_id = codes.code(&response.case_id);
    }
    for item in items.iter_mut() {
        item.case_id = codes.code(&item.case_id);
    }
    cases.sort_by(|a, b| a.case_id.cmp(&b.case_id));
    responses.sort_by(|a, b| {
        (&a.case_id, &a.task_id, a.sample).cmp(&(&b.case_id, &b.task_id, b.sample))
    });
}

fn jsonl<T: Serialize>(rows: &[T]) -> String {
    rows.iter()
        .map(|r| serde_json::to_string(r).expect("a row serialises") + "\n")
        .collect()
}

/// One case of the lead's database as a rater package carries it.
fn local_case(
    conn: &rusqlite::Connection,
    db: &Path,
    study: i64,
    case_id: &str,
    tasks: &BTreeSet<&str>,
    bundle_dir: &Path,
) -> Result<PackageCase> {
    let fail = |e| Error::database(db, "reading a case for the package", e);
    let (case_key, modality, age, sex, ehr, note): (i64, String, u32, String, String, String) =
        conn.query_row(
            "SELECT id, modality, age, sex, ehr_json, clinical_note FROM cases
             WHERE study = ?1 AND case_id = ?2",
            params![study, case_id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .map_err(fail)?;
    let series_rows: Vec<(i64, String, String, String)> = conn
        .prepare("SELECT id, series_id, label, kind FROM series WHERE case_ref = ?1 ORDER BY id")
        .and_then(|mut s| {
            s.query_map([case_key], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect()
        })
        .map_err(fail)?;
    let mut series = Vec::with_capacity(series_rows.len());
    for (key, series_id, label, kind) in series_rows {
        let kind: SeriesKind = enum_from_text(&kind, "a series kind")?;
        let files: Vec<(String, String)> = conn
            .prepare("SELECT path, sha256 FROM images WHERE series = ?1 ORDER BY position")
            .and_then(|mut s| {
                s.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect()
            })
            .map_err(fail)?;
        series.push(PackageSeries {
            series_id,
            label,
            kind,
            images: files
                .into_iter()
                .map(|(file, sha256)| PackageImage {
                    extension: package_extension(kind, &file),
                    source: ImageSource::BundleFile {
                        path: bundle_dir.join(file),
                        sha256,
                    },
                })
                .collect(),
        });
    }
    let task_specs: Vec<TaskSpec> = conn
        .prepare(
            "SELECT task_id, family, level, prompt, key_images_json FROM tasks
             WHERE case_ref = ?1 ORDER BY task_id",
        )
        .and_then(|mut s| {
            s.query_map([case_key], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, u8>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(fail)?
        .into_iter()
        .filter(|(id, ..)| tasks.contains(id.as_str()))
        .map(|(id, family, level, prompt, key_images)| {
            Ok(TaskSpec {
                id,
                family: enum_from_text(&family, "a task family")?,
                level,
                prompt,
                key_images: serde_json::from_str(&key_images).map_err(|e| Error::Corrupt {
                    what: format!("a task's key images: {e}"),
                })?,
                // A blinded rater reads stored answers; the script that produced them stays home.
                follow_up: Vec::new(),
            })
        })
        .collect::<Result<_>>()?;
    Ok(PackageCase {
        case_id: case_id.to_owned(),
        modality: enum_from_text(&modality, "a case's modality")?,
        age,
        sex: enum_from_text(&sex, "a case's sex")?,
        ehr: serde_json::from_str(&ehr).map_err(|e| Error::Corrupt {
            what: format!("a case's EHR fields: {e}"),
        })?,
        clinical_note: note,
        series,
        tasks: task_specs,
    })
}

/// What a package says of a case's diagnosis: a rater package withholds it; a curation package
/// (`package/curation.rs`) carries the disease group and the current ground truth, which are
/// what its curator works on.
pub(super) enum CaseTruth {
    Withheld,
    Carried {
        disease_group: DiseaseGroup,
        ground_truth: Option<GroundTruth>,
    },
}

/// Writes one case's `case.json` and images; returns the number of images.
pub(super) fn write_case(
    writer: &mut PackageWriter,
    case: PackageCase,
    package_id: &str,
    truth: CaseTruth,
) -> Result<u32> {
    let PackageCase {
        case_id,
        modality,
        age,
        sex,
        ehr,
        clinical_note,
        series,
        tasks,
    } = case;
    let case_dir = format!("{BUNDLE_PREFIX}cases/{case_id}");
    let mut specs = Vec::with_capacity(series.len());
    let mut images = 0;
    for PackageSeries {
        series_id,
        label,
        kind,
        images: files,
    } in series
    {
        let series_path = match kind {
            SeriesKind::Nifti => {
                let extension = files.first().map_or("nii", |f| f.extension.as_str());
                format!("{series_id}.{extension}")
            }
            SeriesKind::Dicom | SeriesKind::KeyImages => series_id.clone(),
        };
        for (position, PackageImage { extension, source }) in files.into_iter().enumerate() {
            let bytes = match source {
                ImageSource::BundleFile { path, sha256 } => {
                    deidentified_image(kind, &path, &sha256, package_id)?
                }
                ImageSource::Deidentified(fetch) => fetch()?,
            };
            let name = match kind {
                SeriesKind::Nifti => format!("{case_dir}/{series_path}"),
                SeriesKind::Dicom | SeriesKind::KeyImages => {
                    format!("{case_dir}/{series_path}/{:05}.{extension}", position + 1)
                }
            };
            writer.add(&name, &bytes)?;
            images += 1;
        }
        specs.push(SeriesSpec {
            id: series_id,
            label,
            kind,
            path: series_path,
            label_guessed: false,
        });
    }
    let (disease_group, ground_truth) = match truth {
        // Withheld: the disease group names the diagnosis, and the reading item never shows it.
        // The bundle format requires a value; docs/multisite.md says which one stands in.
        CaseTruth::Withheld => (DiseaseGroup::OtherAbnormality, None),
        CaseTruth::Carried {
            disease_group,
            ground_truth,
        } => (disease_group, ground_truth),
    };
    let case = CaseFile {
        id: case_id,
        disease_group,
        modality,
        age,
        sex,
        ehr,
        clinical_note,
        series: specs,
        tasks,
        ground_truth,
        to_complete: Vec::new(),
    };
    writer.add(
        &format!("{case_dir}/case.json"),
        &serde_json::to_vec_pretty(&case).expect("a case serialises"),
    )?;
    Ok(images)
}

fn enum_from_text<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| Error::Corrupt {
        what: format!("{what} is {text:?}"),
    })
}

/// Parses a JSONL member already extracted to `dir`, each value with its 1-based line.
pub(crate) fn read_jsonl<T: serde::de::DeserializeOwned>(
    package: &Path,
    dir: &Path,
    member: &str,
) -> Result<Vec<(usize, T)>> {
    let text = std::fs::read_to_string(dir.join(member)).map_err(|e| {
        refuse(
            package,
            member,
            None,
            "-",
            format!("missing or not UTF-8: {e}"),
        )
    })?;
    parse_jsonl(package, member, &text)
}

pub(crate) fn parse_jsonl<T: serde::de::DeserializeOwned>(
    package: &Path,
    member: &str,
    text: &str,
) -> Result<Vec<(usize, T)>> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut deserializer = serde_json::Deserializer::from_str(line);
        let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
            let field = e.path().to_string();
            refuse(
                package,
                member,
                Some(index + 1),
                if field == "." { "-" } else { &field },
                e.into_inner().to_string(),
            )
        })?;
        rows.push((index + 1, value));
    }
    Ok(rows)
}
