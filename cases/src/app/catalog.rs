//! The study catalogue through a session. A study lead or a curator sees each case by its id and
//! disease group; a blinded reader sees a pseudonymous code per case and no disease group: a case
//! id may name the diagnosis (the demo's `ms-01`), and the group is what the reader is asked to
//! recognise.

use super::Session;
use crate::case_codes::CaseCodes;
use crate::store::{CaseSummary, CaseView, Store};
use crate::{Error, Result};

/// The study's cases as `session` may see them; a blinded reader's list is ordered by code, since
/// the order of the ids would group the cases by their diagnosis again.
pub fn cases(store: &Store, session: &Session, study_id: &str) -> Result<Vec<CaseSummary>> {
    let cases = store.cases(study_id)?;
    if !session.reads_blinded() {
        return Ok(cases);
    }
    let codes = store.case_codes(study_id)?;
    let mut blinded: Vec<CaseSummary> = cases
        .into_iter()
        .map(|case| blinded_summary(&codes, case))
        .collect();
    blinded.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(blinded)
}

/// One case as `session` may see it. A blinded reader names it by its code (from [`cases`]) or by
/// the id a blind task gave them; either way the answer carries the code, not the id.
pub fn case(store: &Store, session: &Session, study_id: &str, case: &str) -> Result<CaseView> {
    if !session.reads_blinded() {
        return store.case(study_id, case);
    }
    let codes = store.case_codes(study_id)?;
    let case_id = coded_case_id(store, &codes, study_id, case)?;
    let mut view = store.case(study_id, &case_id)?;
    view.summary = blinded_summary(&codes, view.summary);
    Ok(view)
}

/// The codes a blinded reader's answers name the study's cases by, or `None` when the session
/// reads unblinded (cases go by their ids).
pub(super) fn codes_for(store: &Store, study_id: &str, blinded: bool) -> Result<Option<CaseCodes>> {
    blinded.then(|| store.case_codes(study_id)).transpose()
}

/// The id of the case a blinded reader named `case`: by its code, or by its id.
pub(super) fn coded_case_id(
    store: &Store,
    codes: &CaseCodes,
    study_id: &str,
    case: &str,
) -> Result<String> {
    store
        .cases(study_id)?
        .into_iter()
        .map(|summary| summary.id)
        .find(|id| codes.names(case, id))
        .ok_or_else(|| Error::NotFound {
            what: format!("case {case:?} in study {study_id:?}"),
        })
}

fn blinded_summary(codes: &CaseCodes, summary: CaseSummary) -> CaseSummary {
    CaseSummary {
        id: codes.code(&summary.id),
        disease_group: None,
        ..summary
    }
}
