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

/// Imports a curation package into a curator's database of its own: the study bundle (images
/// kept in `rater-packages/<package id>/` beside the database, geometry stored per series) and
/// the curator as a rater of role `curator`, in one transaction. A database that holds the study
/// already refuses it (nothing is written).
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
    refuse_held_study(store, file, &manifest, "a curation package")?;
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
    store.write(|w| {
        crate::import::write_bundle(w, &bundle)?;
        if existing.is_none() {
            w.tx()
                .execute(
                    "INSERT INTO raters (name, role, years_experience) VALUES (?1, ?2, ?3)",
                    params![
                        manifest.rater.name,
                        enum_text(&manifest.rater.role),
                        manifest.rater.years_experience
                    ],
                )
                .map_err(|e| w.fail("adding the curator", e))?;
        }
        w.audit(&Entry {
            actor: &manifest.rater.name,
            action: "import curation package",
            entity: &format!("curation_package:{}", unpacked.package_id),
            before: None,
            after: Some(&serde_json::json!({
                "study_id": manifest.study_id, "site": manifest.site, "cases": n_cases,
                "created_at": manifest.created_at,
            })),
        })
    })?;
    progress.advance(1);
    let imported = CurationPackageImport {
        package_id: unpacked.package_id.clone(),
        study_id: manifest.study_id,
        curator: manifest.rater.name,
        cases: n_cases,
        images_dir: unpacked.images_dir(),
    };
    unpacked.keep();
    Ok(imported)
}
