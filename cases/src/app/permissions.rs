//! Who may do what in a study: the one role × action table, for a workstation and a team server
//! alike (docs/team-server.md, "Who may do what").
//!
//! A session asks [`permits`] before it is made: the workstation's [`super::Session`] with the
//! roles [`workstation_roles`] gives whoever acts there, the team server's
//! [`super::team::TeamMember`] with the one role its membership holds. So a rule changes here and
//! nowhere else, and both front ends refuse the same people the same things.

use crate::rating::Rater;
use serde::{Deserialize, Serialize};

/// A person's part in one study. On the team server an account holds one role per study; at a
/// workstation the role follows from who is acting ([`workstation_roles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum StudyRole {
    /// Runs the study: invites people, sees progress, tops up assignments, locks reveal.
    Lead,
    /// Works on the ground truth: reads it, never rates.
    Curator,
    /// Reads blinded and rates their own queue.
    Rater,
}

/// What someone asks to do in a study; [`Action::allowed`] is the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read one's own queue and items, save, submit and reopen one's own ratings.
    Rate,
    /// See a case's ground truth outside one's own submitted ratings, and its curation versions.
    ReadGroundTruth,
    /// See what would unblind a reader besides the ground truth: grader scores, every model's
    /// answer side by side, the calibration report.
    SeeUnblinded,
    /// Save, submit and review versions of a case's ground truth.
    Curate,
    /// Progress per rater and per site, time on task, overdue work.
    SeeProgress,
    /// Invite someone into the study.
    Invite,
    /// Make the study's assignment plans, and see them.
    PlanAssignments,
    /// Add assignments while the study runs.
    TopUp,
    /// Lock or unlock a rater out of reveal-then-edit.
    LockReveal,
    /// Reset the password of another member of the study: their sessions end and a one-time
    /// code sets a new one.
    ResetPassword,
    /// Every rater's ratings, for the lead's own database (`pull`) and the report built there.
    ExportRatings,
    /// Take every rater's ratings and the curation from the team server into this database.
    TakeInResults,
    /// Build any rater's package and upload any rater's results (a site with no connection);
    /// a rater downloads their own package and uploads their own results under `Rate`.
    ExchangePackages,
    /// Merge a site's results package into this database.
    MergeResults,
    /// Bring a new study in: its cases, tasks, answers and rubric.
    BuildStudy,
    /// Change a case's disease group or note.
    EditCaseFacts,
    /// Change the study's rubric (a new version).
    EditRubric,
    /// Tune and run graders and models in the grader workbench.
    TuneGrader,
    /// Compute the automatic text metrics of the study's answers.
    ComputeMetrics,
}

impl Action {
    /// The roles that may do this. A lead does not rate (their view is unblinded); a rater sees
    /// nothing of the study beyond their own queue; a curator works on the ground truth and sees
    /// what it needs beside it.
    pub fn allowed(self) -> &'static [StudyRole] {
        use StudyRole::*;
        match self {
            Action::Rate => &[Rater],
            Action::ReadGroundTruth | Action::SeeUnblinded | Action::Curate => &[Lead, Curator],
            Action::SeeProgress
            | Action::Invite
            | Action::PlanAssignments
            | Action::TopUp
            | Action::LockReveal
            | Action::ResetPassword
            | Action::ExportRatings
            | Action::TakeInResults
            | Action::ExchangePackages
            | Action::MergeResults
            | Action::BuildStudy
            | Action::EditCaseFacts
            | Action::EditRubric
            | Action::TuneGrader
            | Action::ComputeMetrics => &[Lead],
        }
    }

    /// The action as a refusal names it, at the start of a sentence.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Rate => "Rating",
            Action::ReadGroundTruth => "Reading the ground truth",
            Action::SeeUnblinded => "Seeing grader scores and every model's answer",
            Action::Curate => "Curating the ground truth",
            Action::SeeProgress => "The study's progress",
            Action::Invite => "Inviting people",
            Action::PlanAssignments => "The study's assignment plans",
            Action::TopUp => "Topping up assignments",
            Action::LockReveal => "Locking reveal",
            Action::ResetPassword => "Resetting a member's password",
            Action::ExportRatings => "The raters' ratings",
            Action::TakeInResults => "Taking the team server's ratings into this database",
            Action::ExchangePackages => "Another rater's packages",
            Action::MergeResults => "Merging a results package",
            Action::BuildStudy => "Building a new study",
            Action::EditCaseFacts => "Editing a case's group and note",
            Action::EditRubric => "Editing the rubric",
            Action::TuneGrader => "The grader workbench",
            Action::ComputeMetrics => "Computing the automatic metrics",
        }
    }
}

/// Whether someone holding `roles` may do `action`.
pub fn permits(roles: &[StudyRole], action: Action) -> bool {
    action.allowed().iter().any(|role| roles.contains(role))
}

/// The roles of whoever acts at a workstation. Whoever holds the database file runs the study
/// there, so nobody reading is the study lead, and a curator chosen there is the lead too (a
/// workstation has no account to say otherwise); a clinician chosen to read is a rater.
pub fn workstation_roles(acting: Option<&Rater>) -> &'static [StudyRole] {
    match acting {
        Some(rater) if rater.role.reads_blinded() => &[StudyRole::Rater],
        Some(_) => &[StudyRole::Lead, StudyRole::Curator],
        None => &[StudyRole::Lead],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::team::TeamMember;
    use crate::app::Session;
    use crate::rating::RaterRole;

    fn member(role: StudyRole) -> TeamMember {
        TeamMember {
            account: 1,
            username: "ada".into(),
            study: 1,
            role,
            reveal_locked: false,
        }
    }

    fn acting(role: Option<RaterRole>) -> Session {
        Session {
            acting: role.map(|role| Rater {
                id: 1,
                name: "Dr Ada".into(),
                role,
                years_experience: None,
            }),
        }
    }

    /// Each action through the sessions both front ends make: the team server's from a
    /// membership, the workstation's from whoever acts there (nobody: the lead; a curator: the
    /// lead and a curator; a clinician reading: a rater).
    #[test]
    fn each_action_is_open_to_exactly_its_roles_on_the_server_and_at_a_workstation() {
        use Action::*;
        use StudyRole::*;
        // (action, lead, curator, rater)
        let table = [
            (Rate, false, false, true),
            (ReadGroundTruth, true, true, false),
            (SeeUnblinded, true, true, false),
            (Curate, true, true, false),
            (SeeProgress, true, false, false),
            (Invite, true, false, false),
            (PlanAssignments, true, false, false),
            (TopUp, true, false, false),
            (LockReveal, true, false, false),
            (ResetPassword, true, false, false),
            (ExportRatings, true, false, false),
            (TakeInResults, true, false, false),
            (ExchangePackages, true, false, false),
            (MergeResults, true, false, false),
            (BuildStudy, true, false, false),
            (EditCaseFacts, true, false, false),
            (EditRubric, true, false, false),
            (TuneGrader, true, false, false),
            (ComputeMetrics, true, false, false),
        ];
        for (action, lead, curator, rater) in table {
            for (role, expected) in [(Lead, lead), (Curator, curator), (Rater, rater)] {
                let on_server = match action {
                    Rate => member(role).rater().is_ok(),
                    ReadGroundTruth => member(role).unblinded().is_ok(),
                    Curate => member(role).curator().is_ok(),
                    SeeUnblinded => permits(&[role], action),
                    _ => member(role).lead(action).is_ok(),
                };
                assert_eq!(on_server, expected, "server: {action:?} for {role:?}");
            }
            for (who, expected) in [
                (None, lead),
                (Some(RaterRole::Curator), lead || curator),
                (Some(RaterRole::Neurologist), rater),
            ] {
                let at_workstation = match action {
                    Rate | ReadGroundTruth | Curate => acting(who).may(action),
                    SeeUnblinded => acting(who).unblinded("the view").is_ok(),
                    _ => acting(who).study_lead(action).is_ok(),
                };
                assert_eq!(
                    at_workstation, expected,
                    "workstation: {action:?} for {who:?}"
                );
            }
        }
    }

    #[test]
    fn a_refusal_at_a_workstation_names_the_action_and_who_reads() {
        let refusal = acting(Some(RaterRole::Neurologist))
            .study_lead(Action::EditRubric)
            .unwrap_err()
            .to_string();
        assert!(
            refusal.contains("Editing the rubric is the study lead's, and Dr Ada is reading here"),
            "{refusal}"
        );
    }
}
