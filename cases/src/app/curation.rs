//! Curation as a front end offers it: every step needs a lead's session (ground truth is what a
//! blinded reader must not see), and each change is recorded under its curator.

use super::{LeadSession, ReaderSession};
use crate::curation::{
    self, Change, CuratedTruth, Decision, Disagreement, Edit, RevealedTruth, Side, Version,
};
use crate::rating::RatingError;
use crate::store::Store;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// A case's curation: its study, the case and the branch edits go to.
#[derive(Debug, Clone, Copy)]
pub struct CaseRef<'a> {
    pub study_id: &'a str,
    pub case_id: &'a str,
}

/// Every version of every branch of a case, oldest first.
pub fn history(store: &Store, _lead: &LeadSession, case: CaseRef<'_>) -> Result<Vec<Version>> {
    curation::history(store, case.study_id, case.case_id)
}

/// Saves `truth` as a draft of `branch`, based on the version the curator started from.
pub fn save_draft(
    store: &mut Store,
    lead: &LeadSession,
    case: CaseRef<'_>,
    branch: &str,
    based_on: Option<i64>,
    truth: &CuratedTruth,
) -> Result<i64> {
    let curator = lead.curator()?.id;
    curation::save_draft(
        store,
        &Edit {
            study_id: case.study_id,
            case_id: case.case_id,
            branch,
            curator,
            based_on,
            truth,
        },
    )
}

/// Saves a merged consensus as a draft of `main`, reviewed like any other draft.
pub fn save_consensus(
    store: &mut Store,
    lead: &LeadSession,
    case: CaseRef<'_>,
    based_on: Option<i64>,
    truth: &CuratedTruth,
) -> Result<i64> {
    let curator = lead.curator()?.id;
    curation::save_consensus(
        store,
        &Edit {
            study_id: case.study_id,
            case_id: case.case_id,
            branch: curation::MAIN_BRANCH,
            curator,
            based_on,
            truth,
        },
    )
}

/// The checks a save of `truth` on `branch` makes before it writes (the branch name, and the
/// truth against the stored case: its series, tasks and each mark inside its series' volume),
/// alone: for a version the team server stores, which decides the version it starts from.
pub fn check_draft(
    store: &Store,
    _lead: &LeadSession,
    case: CaseRef<'_>,
    branch: &str,
    truth: &CuratedTruth,
) -> Result<()> {
    curation::check_edit(store, case.study_id, case.case_id, branch, truth).map(drop)
}

pub fn submit_for_review(
    store: &mut Store,
    lead: &LeadSession,
    case: CaseRef<'_>,
    version: i64,
) -> Result<()> {
    let curator = lead.curator()?.id;
    curation::submit_for_review(store, case.study_id, case.case_id, curator, version)
}

pub fn review(
    store: &mut Store,
    lead: &LeadSession,
    case: CaseRef<'_>,
    version: i64,
    decision: Decision,
    comment: &str,
) -> Result<()> {
    let reviewer = lead.curator()?.id;
    curation::review(
        store,
        case.study_id,
        case.case_id,
        reviewer,
        version,
        decision,
        comment,
    )
}

/// Version `number` of a case (any branch); `field` names the argument that asked for it.
fn version_of<'h>(
    history: &'h [Version],
    case: CaseRef<'_>,
    field: &str,
    number: i64,
) -> Result<&'h Version> {
    history
        .iter()
        .find(|v| v.version == number)
        .ok_or_else(|| Error::NotFound {
            what: format!("{field}: version {number} of case {}", case.case_id),
        })
}

/// The field-level changes from version `from` to version `to` of the case's `history` (this
/// database's, or the team server's: a pure function of the versions).
pub fn diff(
    history: &[Version],
    _lead: &LeadSession,
    case: CaseRef<'_>,
    from: i64,
    to: i64,
) -> Result<Vec<Change>> {
    Ok(curation::diff_versions(
        &version_of(history, case, "from", from)?.truth,
        &version_of(history, case, "to", to)?.truth,
    ))
}

/// The units on which versions `a` and `b` of `history` disagree, each with both sides.
pub fn compare(
    history: &[Version],
    _lead: &LeadSession,
    case: CaseRef<'_>,
    a: i64,
    b: i64,
) -> Result<Vec<Disagreement>> {
    Ok(curation::compare(
        &version_of(history, case, "a", a)?.truth,
        &version_of(history, case, "b", b)?.truth,
    ))
}

/// The consensus of versions `a` and `b` of `history`: what they agree on and, per
/// disagreement, the side `choices` names. Nothing is saved.
pub fn merge(
    history: &[Version],
    _lead: &LeadSession,
    case: CaseRef<'_>,
    a: i64,
    b: i64,
    choices: &BTreeMap<String, Side>,
) -> Result<CuratedTruth> {
    let left = &version_of(history, case, "a", a)?.truth;
    let right = &version_of(history, case, "b", b)?.truth;
    curation::merge(left, right, choices).map_err(|unresolved| {
        Error::Rating(RatingError::Invalid {
            field: "choices".into(),
            message: format!(
                "choose a side for {} (nothing was merged)",
                unresolved.join(", ")
            ),
        })
    })
}

/// The ground truth of an assignment's case, for its rater once they submitted.
pub fn reveal_ground_truth(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
) -> Result<RevealedTruth> {
    curation::ground_truth_for_rater(store, reader.rater().id, assignment)
}

/// Whether the reader may see the ground truth of `assignment`'s case now (their ratings of the
/// case submitted): asked before the team server is asked for it.
pub fn check_reveal(store: &Store, reader: &ReaderSession, assignment: i64) -> Result<()> {
    curation::reveal::may_reveal(store, reader.rater().id, assignment)
}

/// The ground truth of an assignment's case as the team server revealed it (`truth` in the
/// bundle's form, version `number` there), recorded as a local reveal is: the reader's database
/// holds no ground truth of a study read from the server.
pub fn reveal_from_server(
    store: &mut Store,
    reader: &ReaderSession,
    assignment: i64,
    truth: &crate::model::GroundTruth,
    number: i64,
) -> Result<RevealedTruth> {
    curation::reveal::ground_truth_from_server(store, reader.rater().id, assignment, truth, number)
}
