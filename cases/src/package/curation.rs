//! The curation package: a study's cases as the team server hands them to a curator's desktop
//! app (docs/team-server.md, "A curator"). The rater package's archive, manifest and writer of
//! cases, with what a curator works on instead of a queue: a `bundle/` member (docs/bundle.md)
//! holding every case with its clinical context, disease group, series, de-identified images,
//! tasks with their families and key images, and the current ground truth; `responses.jsonl`
//! is empty (no model answer, grader output or rating travels), and there is no plan or item.
//!
//! Imported into a database of its own (the curator's account database) by the bundle import
//! (`import::write_bundle`, which also stores each series' geometry, so the local checks of a
//! curation version run there), with the curator as its one rater.
//!
//! A later package of the same study for the same curator **keeps that copy up**: the lead added
//! cases on the server since (a re-import). The package is whole (every case again, images
//! included) and goes through the same bundle import, which adds the cases, series and tasks the
//! copy lacks and keeps the keys of those it holds, so nothing recorded here against a case
//! moves; a case's ground truth follows the server's current one (the bundle import's rule: only
//! a ground truth the bundle brought is replaced). The curation versions themselves live on the
//! server, and the form's unsaved edits in the window, keyed by case id. The earlier package's
//! images folder, referenced by nothing once the new one is imported, is removed.

use super::archive::PackageWriter;
use super::rater::{write_case, CaseTruth};
use super::unpack::{refuse_held_study, unpack};
use super::{refuse, Manifest, PackageCase, PackageKind, PackageRater, WrittenPackage};
use super::{FORMAT_VERSION, MANIFEST};
use crate::bundle::{Problem, RESPONSES_FILE};
use crate::model::{DiseaseGroup, GroundTruth, Rubric, StudyFile, StudyMeta, Taxonomy};
use crate::progress::Progress;
use crate::rating::RaterRole;
use crate::store::audit::Entry;
use crate::store::{enum_text, Store};
use crate::{Error, Result};
use rusqlite::params;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Everything a curation package holds, typed: what [`write_curation_package`] writes. Whoever
/// builds it (`cases::app::team::curation_package`) decides what may leave.
#[derive(Debug)]
pub struct CurationPackageContents {
    /// A random UUID naming the package; also the salt of a bundle file's replaced DICOM UIDs.
    pub package_id: String,
    pub study: StudyMeta,
    pub rubric: Rubric,
    pub taxonomy: Taxonomy,
    /// The study content the package was built from (manifest `study_sha256`).
    pub study_sha256: String,
    /// The curator it was built for, role `curator`.
    pub curator: PackageRater,
    pub site: String,
    pub created_at: String,
    /// Every case of the study, in the order written.
    pub cases: Vec<CurationCase>,
}

/// A case for curation: the case as a package carries it, with its disease group and current
/// ground truth.
#[derive(Debug)]
pub struct CurationCase {
    pub case: PackageCase,
    pub disease_group: DiseaseGroup,
    pub ground_truth: Option<GroundTruth>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CurationPackageImport {
    pub package_id: String,
    pub study_id: String,
    pub curator: String,
    pub cases: u32,
    /// The cases this database did not hold: every case of a new copy; those the lead added on
    /// the server since, when the package keeps a copy up; none for a package imported before.
    pub cases_added: u32,
    /// Where the package's images are kept (referenced by the database, like a bundle's).
    pub images_dir: PathBuf,
}

const BUNDLE_PREFIX: &str = "bundle/";

/// Writes `contents` as a curation package at `out`: the members to `<out>.partial`, the
/// manifest last, then the file moved into place; nothing is left at `out` unless all of it
/// succeeded.
pub fn write_curation_package(
    contents: CurationPackageContents,
    out: &Path,
    progress: &dyn Progress,
) -> Result<WrittenPackage> {
    let CurationPackageContents {
        package_id,
        study,
        rubric,
        taxonomy,
        study_sha256,
        curator,
        site,
        created_at,
        cases,
    } = contents;
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
        progress.phase("writing the cases", cases.len() as u64);
        for (done, curation_case) in cases.into_iter().enumerate() {
            crate::progress::stop_if_cancelled(progress, "writing the curation package")?;
            let CurationCase {
                case,
                disease_group,
                ground_truth,
            } = curation_case;
            images += write_case(
                &mut writer,
                case,
                &package_id,
                CaseTruth::Carried {
                    disease_group,
                    ground_truth,
                },
            )?;
            progress.advance(done as u64 + 1);
        }
        // The bundle format requires the file; a curator's copy holds no model answer.
        writer.add(&format!("{BUNDLE_PREFIX}{RESPONSES_FILE}"), b"")?;
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
        format: PackageKind::CurationPackage,
        format_version: FORMAT_VERSION,
        package_id,
        answers_package: None,
        study_id,
        study_sha256,
        rater: curator,
        site,
        created_at,
        members: Vec::new(),
    })?;
    Ok(written)
}

/// The audit log's name for a curation package's import: also what marks a database's study as
/// a curator's copy ([`held_copy`]).
const IMPORT_ACTION: &str = "import curation package";
/// The audit entity of a curation package's import: this prefix, then the package's id.
const ENTITY_PREFIX: &str = "curation_package:";

/// A curator's copy of a study held here: the packages that brought it and its cases.
struct HeldCopy {
    packages: BTreeSet<String>,
    cases: BTreeSet<String>,
}

/// The copy of `manifest`'s study this database holds for `manifest`'s curator, if a curation
/// package brought it here. Read from the audit log, the append-only record every import writes
/// in its own transaction, so a copy imported by an earlier build is known too.
fn held_copy(store: &Store, manifest: &Manifest) -> Result<Option<HeldCopy>> {
    let conn = store.read();
    let fail = |doing: &'static str| super::db_fail(store.path(), doing);
    let packages: BTreeSet<String> = conn
        .prepare(
            "SELECT entity FROM audit_log WHERE action = ?1 AND actor = ?2
               AND json_extract(after_json, '$.study_id') = ?3",
        )
        .and_then(|mut stmt| {
            stmt.query_map(
                params![IMPORT_ACTION, manifest.rater.name, manifest.study_id],
                |r| r.get::<_, String>(0),
            )?
            .collect()
        })
        .map_err(fail("looking for an earlier curation package"))?;
    if packages.is_empty() {
        return Ok(None);
    }
    let cases = conn
        .prepare(
            "SELECT c.case_id FROM cases c JOIN studies s ON c.study = s.id
             WHERE s.study_id = ?1",
        )
        .and_then(|mut stmt| {
            stmt.query_map([&manifest.study_id], |r| r.get(0))?
                .collect()
        })
        .map_err(fail("listing the copy's cases"))?;
    let packages = packages
        .into_iter()
        .filter_map(|entity| entity.strip_prefix(ENTITY_PREFIX).map(str::to_owned))
        .collect();
    Ok(Some(HeldCopy { packages, cases }))
}

/// Imports a curation package into a curator's database of its own: the study bundle (images
/// kept in `rater-packages/<package id>/` beside the database, geometry stored per series) and
/// the curator as a rater of role `curator`, in one transaction. Into a database holding the
/// study already: keeps up the copy an earlier curation package for the same curator brought
/// (the cases it lacks added, nothing it holds lost; a package imported before changes
/// nothing), and refuses any other (nothing is written).
pub fn import_curation_package(
    store: &mut Store,
    file: &Path,
    progress: &dyn Progress,
) -> Result<CurationPackageImport> {
    let mut unpacked = unpack(
        store,
        file,
        progress,
        PackageKind::CurationPackage,
        ("a curation package", "bundle/…"),
        |name| name.starts_with(BUNDLE_PREFIX),
    )?;
    let manifest = unpacked.manifest.clone();
    if manifest.rater.role != RaterRole::Curator {
        return Err(refuse(
            file,
            MANIFEST,
            None,
            "rater.role",
            format!(
                "a curation package is a curator's, this one names a {}",
                enum_text(&manifest.rater.role)
            ),
        ));
    }
    let held = held_copy(store, &manifest)?;
    match &held {
        None => refuse_held_study(store, file, &manifest, "a curation package")?,
        Some(copy) if copy.packages.contains(&unpacked.package_id) => {
            return Ok(CurationPackageImport {
                images_dir: unpacked.images_dir(),
                package_id: unpacked.package_id,
                study_id: manifest.study_id,
                curator: manifest.rater.name,
                cases: copy.cases.len() as u32,
                cases_added: 0,
            });
        }
        Some(_) => {}
    }
    let bundle = unpacked.load_bundle(file, progress)?;
    if let Some(response) = bundle.responses.first() {
        return Err(Error::Package {
            package: file.to_path_buf(),
            problems: vec![Problem {
                file: format!("{BUNDLE_PREFIX}{RESPONSES_FILE}"),
                line: Some(response.line),
                field: "-".into(),
                message: "a curation package carries no model answer".into(),
            }],
        });
    }
    let existing = store
        .raters()?
        .into_iter()
        .find(|r| r.name == manifest.rater.name);
    if let Some(rater) = &existing {
        if rater.role != RaterRole::Curator {
            return Err(refuse(
                file,
                MANIFEST,
                None,
                "rater.role",
                format!(
                    "this database knows {} as a {}, the package as a curator",
                    rater.name,
                    enum_text(&rater.role)
                ),
            ));
        }
    }
    crate::progress::stop_if_cancelled(progress, "importing the curation package")?;
    progress.phase("writing", 1);
    let n_cases = bundle.cases.len() as u32;
    let cases_added = bundle
        .cases
        .iter()
        .filter(|c| {
            held.as_ref()
                .is_none_or(|copy| !copy.cases.contains(&c.case.id))
        })
        .count() as u32;
    store.write(|w| {
        crate::import::write_bundle(w, &bundle)?;
        if existing.is_none() {
            crate::rating::insert_rater(
                w,
                &manifest.rater.name,
                manifest.rater.role,
                manifest.rater.years_experience,
            )?;
        }
        w.audit(&Entry {
            actor: &manifest.rater.name,
            action: IMPORT_ACTION,
            entity: &format!("{ENTITY_PREFIX}{}", unpacked.package_id),
            before: None,
            after: Some(&serde_json::json!({
                "study_id": manifest.study_id, "site": manifest.site, "cases": n_cases,
                "cases_added": cases_added, "created_at": manifest.created_at,
            })),
        })
    })?;
    progress.advance(1);
    // The study's images are this package's now (its `bundle_dir` moved on): an earlier
    // package's folder is referenced by nothing here, and left, every case added would keep
    // another whole copy of the study's images. Best effort: a folder left behind is only space.
    let earlier: Vec<PathBuf> = held
        .iter()
        .flat_map(|copy| &copy.packages)
        .filter(|id| uuid::Uuid::parse_str(id).is_ok())
        .map(|id| unpacked.images_dir_of(id))
        .collect();
    let imported = CurationPackageImport {
        package_id: unpacked.package_id.clone(),
        study_id: manifest.study_id,
        curator: manifest.rater.name,
        cases: n_cases,
        cases_added,
        images_dir: unpacked.images_dir(),
    };
    unpacked.keep();
    for dir in earlier {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(imported)
}
