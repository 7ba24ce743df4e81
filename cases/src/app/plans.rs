//! Assignment plans as the study lead works them while a study runs: the study's plans with
//! each rater's counts, a new plan, and a top-up that seats new raters and deals responses
//! added since without touching anyone's queue (`rating::assignment`).

use super::LeadSession;
use crate::rating::{PlanMaker, PlanSpec, PlanSummary, TopUpSpec, TopUpSummary};
use crate::store::Store;
use crate::Result;

/// The study's plans in creation order, with each rater's first reads, overlap and repeats.
pub fn list(store: &Store, _lead: &LeadSession, study_id: &str) -> Result<Vec<PlanSummary>> {
    store.assignment_plans(study_id)
}

/// A new plan, recorded as made by the session: the curator acting, or, with nobody chosen, the
/// study lead at this workstation (never a rater the form happened to name).
pub fn create(store: &mut Store, lead: &LeadSession, spec: &PlanSpec) -> Result<PlanSummary> {
    store.create_assignment_plan(maker(lead), spec)
}

/// A top-up of one of the study's plans, recorded as made by the session, as [`create`].
pub fn top_up(store: &mut Store, lead: &LeadSession, spec: &TopUpSpec) -> Result<TopUpSummary> {
    store.top_up_assignment_plan(maker(lead), spec)
}

fn maker(lead: &LeadSession) -> PlanMaker {
    lead.acting
        .as_ref()
        .map_or(PlanMaker::StudyLead, |acting| PlanMaker::Rater(acting.id))
}
