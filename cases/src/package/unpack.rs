//! Reading a package file into a staging folder beside the database, its manifest checked: the
//! first step of importing a rater package (`rater_import.rs`) and a curation package
//! (`curation.rs`).

use super::rater::BUNDLE_PREFIX;
use super::{archive, new_package_id, refuse, Manifest, PackageKind, FORMAT_VERSION, MANIFEST};
use crate::bundle::{self, Problem};
use crate::progress::Progress;
use crate::store::Store;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Where imported packages' images live, beside the database file.
const PACKAGES_DIR: &str = "rater-packages";

/// Removes a directory it owns unless told to keep it.
struct Staging {
    dir: PathBuf,
    keep: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A package read into a staging folder beside the database, its manifest checked; the folder
/// is removed when this is dropped, unless [`Unpacked::keep`] was called after the import wrote.
pub(super) struct Unpacked {
    pub(super) manifest: Manifest,
    pub(super) package_id: String,
    root: PathBuf,
    staging: Staging,
}

/// Reads `file`, a package of `kind`, into a staging folder under `rater-packages/` beside the
/// database: each member checked against the manifest's SHA-256 (`archive::read`), `member_ok`
/// the members this kind may hold (`(what, expected)` name the kind and those members, for a
/// refusal).
pub(super) fn unpack(
    store: &Store,
    file: &Path,
    progress: &dyn Progress,
    kind: PackageKind,
    (what, expected): (&str, &str),
    member_ok: fn(&str) -> bool,
) -> Result<Unpacked> {
    let root = store
        .path()
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(PACKAGES_DIR);
    std::fs::create_dir_all(&root).map_err(|source| Error::Io {
        path: root.clone(),
        source,
    })?;
    let staging = Staging {
        dir: root.join(format!(".incoming-{}", new_package_id())),
        keep: false,
    };
    progress.phase("checking the package", 1);
    let staging_dir = staging.dir.clone();
    let manifest = archive::read(file, |name, reader| {
        if !member_ok(name) {
            return Err(refuse(
                file,
                name,
                None,
                "-",
                format!("not a member of {what} (expected {expected})"),
            ));
        }
        let target = staging_dir.join(name);
        let io = |source| Error::Io {
            path: target.clone(),
            source,
        };
        std::fs::create_dir_all(target.parent().expect("a member has a parent")).map_err(io)?;
        let mut out = std::fs::File::create(&target).map_err(io)?;
        std::io::copy(reader, &mut out).map_err(io)?;
        Ok(())
    })?;
    progress.advance(1);
    if manifest.format != kind || manifest.format_version != FORMAT_VERSION {
        return Err(refuse(
            file,
            MANIFEST,
            None,
            "format",
            format!(
                "{what} of format version {FORMAT_VERSION} is expected, this is a {:?} of \
                 version {}",
                manifest.format, manifest.format_version
            ),
        ));
    }
    let package_id = uuid::Uuid::parse_str(&manifest.package_id)
        .map_err(|e| {
            refuse(
                file,
                MANIFEST,
                None,
                "package_id",
                format!("not a UUID: {e}"),
            )
        })?
        .to_string();
    Ok(Unpacked {
        manifest,
        package_id,
        root,
        staging,
    })
}

/// Refuses a package of a study this database holds already: `kind` ("a curation package") is
/// read in a database of its own.
pub(super) fn refuse_held_study(
    store: &Store,
    file: &Path,
    manifest: &Manifest,
    kind: &str,
) -> Result<()> {
    let study_known: bool = store
        .read()
        .query_row(
            "SELECT count(*) > 0 FROM studies WHERE study_id = ?1",
            [&manifest.study_id],
            |r| r.get(0),
        )
        .map_err(super::db_fail(store.path(), "looking for the study"))?;
    if study_known {
        return Err(refuse(
            file,
            MANIFEST,
            None,
            "study_id",
            format!(
                "this database already holds study {:?}: {kind} is read in a database of its \
                 own (neurorater package import --db NEW_FILE)",
                manifest.study_id
            ),
        ));
    }
    Ok(())
}

impl Unpacked {
    /// Where the package's files (its images) stay once imported.
    pub(super) fn images_dir(&self) -> PathBuf {
        self.images_dir_of(&self.package_id)
    }

    /// Where the files of the package `package_id` imported into this database are kept.
    pub(super) fn images_dir_of(&self, package_id: &str) -> PathBuf {
        self.root.join(package_id)
    }

    /// Moves the files to [`Unpacked::images_dir`] and loads the package's study bundle,
    /// problems named by their member.
    pub(super) fn load_bundle(
        &mut self,
        file: &Path,
        progress: &dyn Progress,
    ) -> Result<bundle::Bundle> {
        let final_dir = self.images_dir();
        if final_dir.exists() {
            std::fs::remove_dir_all(&final_dir).map_err(|source| Error::Io {
                path: final_dir.clone(),
                source,
            })?;
        }
        std::fs::rename(&self.staging.dir, &final_dir).map_err(|source| Error::Io {
            path: final_dir.clone(),
            source,
        })?;
        self.staging.dir = final_dir.clone();
        let bundle = bundle::load(&final_dir.join("bundle"), progress).map_err(|problems| {
            Error::Package {
                package: file.to_path_buf(),
                problems: problems
                    .into_iter()
                    .map(|p| Problem {
                        file: format!("{BUNDLE_PREFIX}{}", p.file),
                        ..p
                    })
                    .collect(),
            }
        })?;
        if bundle.study.study.id != self.manifest.study_id {
            return Err(refuse(
                file,
                "bundle/study.json",
                None,
                "study.id",
                format!(
                    "{:?}, but {MANIFEST} says {:?}",
                    bundle.study.study.id, self.manifest.study_id
                ),
            ));
        }
        Ok(bundle)
    }

    /// The import wrote: the package's files stay where the database refers to them.
    pub(super) fn keep(mut self) {
        self.staging.keep = true;
    }
}
