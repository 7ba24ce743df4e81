//! The rater's side of the team server's rubric versions. A rater's account database holds the
//! rubric of the package it downloaded; when the lead moves the server's current version on,
//! the app takes the server's rubric the next time it opens the study (where it asks the server
//! for a top-up), so the rating rules it applies before sending are the ones the server checks.

use super::super::ReaderSession;
use crate::model::Rubric;
use crate::rating::RatingError;
use crate::rubric::SavedRubric;
use crate::store::Store;
use crate::{Error, Result};

/// Who the audit entry of a rubric taken from the server names: the lead decided it there.
const TEAM_SERVER: &str = "team server";

/// Makes `server` (the rubric the server sends with the reader's items: its current version)
/// the study's rubric in this database, by the one rule (`crate::rubric::save`: in place while
/// no rating was saved here under the current one, a new version after, so a rating already
/// made keeps the rubric it was made under), audited as the team server's change. Only for a
/// study read here from packages the team server built; `None` when it is the rubric held.
pub fn follow_server_rubric(
    store: &mut Store,
    _reader: &ReaderSession,
    study_id: &str,
    server: &Rubric,
) -> Result<Option<SavedRubric>> {
    if crate::package::server_links(store, study_id)?.is_empty() {
        return Err(Error::Rating(RatingError::Refused(format!(
            "study {study_id} was not read here from the team server: its rubric is this \
             database's own"
        ))));
    }
    let problems = crate::rubric::problems(server);
    if let Some(problem) = problems.first() {
        return Err(Error::Corrupt {
            what: format!("the team server's rubric of study {study_id}: {problem}"),
        });
    }
    store.write(|w| crate::rubric::save(w, TEAM_SERVER, study_id, server))
}
