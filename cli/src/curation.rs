//! Ground-truth bundles: `export --what ground-truth --format bundle` and `import-ground-truth`.

use crate::Failure;
use cases::curation;
use cases::store::Store;
use cases::ImportError;
use std::path::{Path, PathBuf};

/// Who the audit log names for a ground-truth import from the command line.
const IMPORT_ACTOR: &str = "import-ground-truth";

pub fn export_bundle(store: &Store, study: Option<&str>, out: &Path) -> Result<(), Failure> {
    let study_id = match study {
        Some(id) => id.to_owned(),
        None => {
            let studies = store.studies()?;
            match studies.as_slice() {
                [only] => only.id.clone(),
                [] => return Err(Failure::Input(vec!["the database holds no study".into()])),
                several => {
                    let ids: Vec<&str> = several.iter().map(|s| s.id.as_str()).collect();
                    return Err(Failure::Input(vec![format!(
                        "the database holds several studies ({}): choose one with --study",
                        ids.join(", ")
                    )]));
                }
            }
        }
    };
    let summary = curation::export_bundle(store, &study_id, out)?;
    say!(
        "wrote the ground truth of {} case(s) of study {study_id} with {} key image(s) to {}{}",
        summary.cases,
        summary.key_images,
        out.display(),
        if summary.skipped.is_empty() {
            String::new()
        } else {
            format!(
                "; no final ground truth yet: {}",
                summary.skipped.join(", ")
            )
        }
    );
    Ok(())
}

pub fn import_ground_truth(dir: &Path, db: Option<PathBuf>) -> Result<(), Failure> {
    let db = match db {
        Some(path) => path,
        None => Store::default_path()?,
    };
    // The bundle is checked against stored cases, so the database must exist already.
    let mut store = Store::open_existing(&db)?;
    match curation::import_bundle(&mut store, dir, IMPORT_ACTOR) {
        Ok(written) => {
            say!(
                "imported the ground truth in {} into {}: {written} case(s) got a new version \
                 (a final one is recorded as imported-final: not reviewed by a second curator \
                 here; a curator can submit a new version for review)",
                dir.display(),
                db.display()
            );
            Ok(())
        }
        Err(ImportError::Invalid(problems)) => Err(Failure::Input(
            problems.iter().map(ToString::to_string).collect(),
        )),
        Err(ImportError::Store(e)) => Err(e.into()),
    }
}
