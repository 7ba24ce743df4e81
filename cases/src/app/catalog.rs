//! The study catalogue through a session. A study lead or a curator sees each case by its id and
//! disease group; a blinded reader sees a pseudonymous code per case and no disease group: a case
//! id may name the diagnosis (the demo's `ms-01`), and the group is what the reader is asked to
//! recognise.

use super::Session;
use crate::store::{CaseSummary, CaseView, Store};
use crate::{Error, Result};
use sha2::{Digest, Sha256};

/// Hex digits of a case code: 40 bits, far from colliding among a study's few hundred cases.
const CODE_HEX_DIGITS: usize = 10;

/// The study's cases as `session` may see them; a blinded reader's list is ordered by code, since
/// the order of the ids would group the cases by their diagnosis again.
pub fn cases(store: &Store, session: &Session, study_id: &str) -> Result<Vec<CaseSummary>> {
    let cases = store.cases(study_id)?;
    if !session.reads_blinded() {
        return Ok(cases);
    }
    let secret = store.study_secret(study_id)?;
    let mut blinded: Vec<CaseSummary> = cases
        .into_iter()
        .map(|case| blinded_summary(&secret, case))
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
    let secret = store.study_secret(study_id)?;
    let case_id = coded_case_id(store, &secret, study_id, case)?;
    let mut view = store.case(study_id, &case_id)?;
    view.summary = blinded_summary(&secret, view.summary);
    Ok(view)
}

/// How a blinded reader's answers name the study's cases, and how their requests are read back.
pub(super) struct CaseCodes {
    secret: Vec<u8>,
}

impl CaseCodes {
    /// The study's codes when `blinded`, else `None` (cases go by their ids).
    pub(super) fn of(store: &Store, study_id: &str, blinded: bool) -> Result<Option<CaseCodes>> {
        Ok(match blinded {
            true => Some(CaseCodes {
                secret: store.study_secret(study_id)?,
            }),
            false => None,
        })
    }

    pub(super) fn code(&self, case_id: &str) -> String {
        case_code(&self.secret, case_id)
    }

    /// The id of the case a blinded reader named `case`: by its code, or by its id.
    pub(super) fn case_id(&self, store: &Store, study_id: &str, case: &str) -> Result<String> {
        coded_case_id(store, &self.secret, study_id, case)
    }
}

fn coded_case_id(store: &Store, secret: &[u8], study_id: &str, case: &str) -> Result<String> {
    store
        .cases(study_id)?
        .into_iter()
        .map(|summary| summary.id)
        .find(|id| id == case || case_code(secret, id) == case)
        .ok_or_else(|| Error::NotFound {
            what: format!("case {case:?} in study {study_id:?}"),
        })
}

/// The code a blinded reader sees for `case_id`: a keyed hash under the study's secret, stable
/// for the study and meaningless without the secret.
pub fn case_code(secret: &[u8], case_id: &str) -> String {
    let digest = Sha256::new()
        .chain_update(secret)
        .chain_update(case_id.as_bytes())
        .finalize();
    let hex = crate::digest::hex(&digest);
    format!("case-{}", &hex[..CODE_HEX_DIGITS])
}

fn blinded_summary(secret: &[u8], summary: CaseSummary) -> CaseSummary {
    CaseSummary {
        id: case_code(secret, &summary.id),
        disease_group: None,
        ..summary
    }
}
