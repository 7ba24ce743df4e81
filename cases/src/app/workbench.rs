//! The grader workbench and the automatic metrics as a front end offers them: the study lead's,
//! or a curator's. Every view of it puts grader scores beside the clinicians', so every operation
//! takes a [`LeadSession`], opened by [`open`] (or [`open_metrics`]) and refused while a rater
//! reads blinded at this workstation. Grader and model runs, spec versions and the metrics
//! computation live in `runner` and `textmetrics`, which build on this crate: a front end opens
//! the same session here before calling them, so the rule is still decided in one place.

use super::permissions::Action;
use super::{LeadSession, Session};
use crate::grader_workbench::{self, Disagreement, GraderOnSplit, ItemSideBySide};
use crate::store::Store;
use crate::Result;
use calibration::version_drift::VersionDrift;

/// The lead's session for the workbench: grader versions and their runs, model runs, the
/// development/test split and its agreement, drift.
pub fn open(store: &Store) -> Result<LeadSession> {
    Session::current(store)?.study_lead(Action::TuneGrader)
}

/// The lead's session for computing the automatic text metrics (the workbench's Metrics page).
pub fn open_metrics(store: &Store) -> Result<LeadSession> {
    Session::current(store)?.study_lead(Action::ComputeMetrics)
}

/// The grader on the study's development/test split (made on first use with a fresh seed,
/// recorded under the lead): development agreement, test agreement once confirmed.
pub fn split(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    grader: &str,
) -> Result<GraderOnSplit> {
    grader_workbench::grader_on_split(
        store,
        study_id,
        grader,
        grader_workbench::fresh_seed(),
        lead.audit_name(),
    )
}

/// Confirms the grader version: its test agreement opens, and the confirmation is audited.
pub fn confirm(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    grader: &str,
) -> Result<GraderOnSplit> {
    grader_workbench::confirm_grader(
        store,
        study_id,
        grader,
        grader_workbench::fresh_seed(),
        lead.audit_name(),
    )
}

/// The development items, largest |grader − clinicians' mean| first.
pub fn disagreements(
    store: &mut Store,
    lead: &LeadSession,
    study_id: &str,
    grader: &str,
) -> Result<Vec<Disagreement>> {
    grader_workbench::development_disagreements(
        store,
        study_id,
        grader,
        grader_workbench::fresh_seed(),
        lead.audit_name(),
    )
}

/// One item side by side (a test item only once the grader is confirmed).
pub fn item(
    store: &Store,
    _lead: &LeadSession,
    grader: &str,
    response: i64,
) -> Result<ItemSideBySide> {
    grader_workbench::item_side_by_side(store, grader, response)
}

/// Drift from grader version `before` to `after`.
pub fn drift(
    store: &Store,
    _lead: &LeadSession,
    study_id: &str,
    before: &str,
    after: &str,
) -> Result<VersionDrift> {
    grader_workbench::grader_drift(store, study_id, before, after)
}
