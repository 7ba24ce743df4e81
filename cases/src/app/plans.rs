//! Assignment plans as the study lead works them while a study runs: the study's plans with
//! each rater's counts, a new plan, and a top-up that seats new raters and deals responses
//! added since without touching anyone's queue (`rating::assignment`).

use super::{refused, LeadSession};
use crate::rating::{PlanSpec, PlanSummary, TopUpSpec, TopUpSummary};
use crate::store::Store;
use crate::Result;

/// The study's plans in creation order, with each rater's first reads, overlap and repeats.
pub fn list(store: &Store, _lead: &LeadSession, study_id: &str) -> Result<Vec<PlanSummary>> {
    store.assignment_plans(study_id)
}

/// A new plan, recorded as made by the rater `made_by`.
pub fn create(
    store: &mut Store,
    lead: &LeadSession,
    made_by: i64,
    spec: &PlanSpec,
) -> Result<PlanSummary> {
    let made_by = planner(lead, made_by)?;
    store.create_assignment_plan(made_by, spec)
}

/// A top-up of one of the study's plans, recorded as made by the rater `made_by`.
pub fn top_up(
    store: &mut Store,
    lead: &LeadSession,
    made_by: i64,
    spec: &TopUpSpec,
) -> Result<TopUpSummary> {
    let made_by = planner(lead, made_by)?;
    store.top_up_assignment_plan(made_by, spec)
}

/// Who a plan is recorded under: the curator acting here, or, with nobody chosen, the rater the
/// study lead names (a plan names the person who made it, as `neurorater assign --lead` does).
fn planner(lead: &LeadSession, made_by: i64) -> Result<i64> {
    match &lead.acting {
        Some(acting) if acting.id != made_by => Err(refused(format!(
            "{} is acting here: a plan made now is recorded under them, not under another rater",
            acting.name
        ))),
        _ => Ok(made_by),
    }
}
