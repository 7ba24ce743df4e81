//! `import-ratings`: clinicians' ratings from a long CSV (docs/formats.md §3) into the database. An
//! extension of docs/formats.md §4, documented in docs/calibration.md.

use crate::data::db_path;
use crate::progress::Bar;
use crate::Failure;
use cases::ratings_import::{import_ratings_csv, ASSUMED_ROLE};
use cases::store::Store;
use cases::ImportError;
use std::path::{Path, PathBuf};

pub fn import(csv: &Path, db: Option<PathBuf>) -> Result<(), Failure> {
    let db = db_path(db)?;
    // Ratings refer to stored responses: without a database there is nothing to attach them to.
    let mut store = Store::open_existing(&db)?;
    let bar = Bar::new();
    let outcome = import_ratings_csv(&mut store, csv, &bar);
    bar.finish();
    match outcome {
        Ok(summary) => {
            say!(
                "imported {} into {}: {} rows; {} ratings added ({} already stored); {} grader \
                 rows matched the stored grader scores and were not stored again",
                csv.display(),
                db.display(),
                summary.rows,
                summary.ratings_added,
                summary.ratings_already_stored,
                summary.grader_rows_checked,
            );
            if !summary.raters_added.is_empty() {
                say!("new raters: {}", summary.raters_added.join(", "));
            }
            if !summary.roles_assumed.is_empty() {
                say!(
                    "assumed role {ASSUMED_ROLE} for {} (the file has no rater_role column)",
                    summary.roles_assumed.join(", ")
                );
            }
            Ok(())
        }
        Err(ImportError::Invalid(problems)) => Err(Failure::Input(
            problems.iter().map(ToString::to_string).collect(),
        )),
        Err(ImportError::Store(e)) => Err(e.into()),
    }
}
