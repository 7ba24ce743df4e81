//! The application layer: the operations every front end offers (the desktop app's commands
//! today, the team server's handlers next), each taking the session of whoever acts.
//!
//! **Invariant:** who may see or do what is decided here, once. An operation that shows grader
//! output, ground truth or every model's answer, or that is the study lead's, takes a
//! [`LeadSession`]; an operation done as a named person takes a [`ReaderSession`] or asks the
//! lead's session for its [`LeadSession::curator`]. Sessions are only made by [`Session`]'s
//! methods, which apply the rules, so a front end cannot forget them: a new command that shows
//! unblinded data cannot call its operation without having been given a lead's session.
//!
//! Front ends stay transport: they check the shape of their arguments, open the session, call
//! one operation here and translate its result. Operations are synchronous and take the store;
//! a front end locks it once around the call.

pub mod baseline;
pub mod calibration;
pub mod case_facts;
pub mod catalog;
pub mod curation;
pub mod exports;
pub mod new_study;
pub mod permissions;
pub mod plans;
pub mod reading;
pub mod rubric;
pub mod series;
pub mod team;
pub mod workbench;

use crate::package::MergeReport;
use crate::progress::Progress;
use crate::rating::{Rater, RaterRole, RatingError, STUDY_LEAD};
use crate::store::{enum_text, ResponseView, Store};
use crate::{Error, Result};
use permissions::{permits, workstation_roles, Action};
use std::path::Path;

/// Who acts at this workstation, before any rule is applied: the current rater, or nobody (a
/// study lead who left reading mode).
#[derive(Debug, Clone)]
pub struct Session {
    acting: Option<Rater>,
}

/// Someone who may see what blinded readers may not (grader output, ground truth, every model's
/// answer) and do the study lead's actions: nobody reading, or a rater whose role does not read
/// blinded (a curator).
#[derive(Debug, Clone)]
pub struct LeadSession {
    acting: Option<Rater>,
}

/// A named rater acting as themselves (rating, a human-baseline answer, a reveal after rating).
#[derive(Debug, Clone)]
pub struct ReaderSession {
    rater: Rater,
}

fn refused(message: String) -> Error {
    Error::Rating(RatingError::Refused(message))
}

fn choose_who_you_are() -> Error {
    refused("choose who you are (the current rater) first".into())
}

impl Session {
    /// The session of this workstation: the rater chosen last on this database, if any.
    pub fn current(store: &Store) -> Result<Session> {
        Ok(Session {
            acting: store.current_rater()?,
        })
    }

    /// The headless command line is run by whoever holds the database file, at a terminal the
    /// app's reading mode does not reach: it acts as the study lead.
    pub fn command_line() -> LeadSession {
        LeadSession { acting: None }
    }

    pub fn acting(&self) -> Option<&Rater> {
        self.acting.as_ref()
    }

    /// Whether the acting rater reads blinded: what they are shown leaves out what would unblind
    /// them (`catalog`), and the views that are nothing but that are refused (`unblinded`).
    fn reads_blinded(&self) -> bool {
        !self.may(Action::SeeUnblinded)
    }

    /// Whether the table lets whoever acts here do `action` (`permissions`).
    fn may(&self, action: Action) -> bool {
        permits(workstation_roles(self.acting.as_ref()), action)
    }

    /// A lead's session to open `view` (something showing grader output, ground truth or every
    /// model's answer: [`Action::SeeUnblinded`]); refused while the acting rater reads blinded,
    /// so the backend, not only the UI, keeps a reader blind.
    pub fn unblinded(self, view: &str) -> Result<LeadSession> {
        if self.may(Action::SeeUnblinded) {
            return Ok(LeadSession {
                acting: self.acting,
            });
        }
        Err(refused(match &self.acting {
            Some(rater) => format!(
                "{view} is closed while {} reads blinded ({}): it shows grader scores, ground \
                 truth or every model's answer. Leave reading mode, or choose a curator, to open it",
                rater.name,
                enum_text(&rater.role)
            ),
            None => format!("{view} is closed to whoever acts here"),
        }))
    }

    /// A lead's session for `action`, one of the study lead's ([`Action::allowed`]); refused
    /// while a rater reads blinded at this workstation.
    pub fn study_lead(self, action: Action) -> Result<LeadSession> {
        if self.may(action) && action.allowed().contains(&permissions::StudyRole::Lead) {
            return Ok(LeadSession {
                acting: self.acting,
            });
        }
        Err(refused(match &self.acting {
            Some(rater) => format!(
                "{} is the study lead's, and {} is reading here as a {}. Leave reading \
                 mode, or choose a curator, to do it",
                action.describe(),
                rater.name,
                enum_text(&rater.role)
            ),
            None => format!("{} is not the study lead's to do", action.describe()),
        }))
    }

    /// The acting rater as themselves; refused when nobody has said who they are.
    pub fn reader(self) -> Result<ReaderSession> {
        self.acting
            .map(|rater| ReaderSession { rater })
            .ok_or_else(choose_who_you_are)
    }

    /// The session's reader, for an edit made as the rater `made_as`: refused unless that rater
    /// is still the one reading here. The front end names who it made the edit as, never who it
    /// is written as: an edit queued before the reader changed (or left reading mode) is refused
    /// with [`RatingError::ReaderChanged`], so the front end keeps it for its own reader rather
    /// than it being written under another name or lost as "not found".
    pub fn reader_as(self, store: &Store, made_as: i64) -> Result<ReaderSession> {
        match self.acting {
            Some(rater) if rater.id == made_as => Ok(ReaderSession { rater }),
            acting => {
                let author = store.rater(made_as)?.name;
                let now = match acting {
                    Some(other) => format!("{} is the reader here now", other.name),
                    None => "nobody is reading here now".to_owned(),
                };
                Err(Error::Rating(RatingError::ReaderChanged(format!(
                    "this edit was made as {author}, and {now}: it was not saved. Choose \
                     {author} again (Switch reader) to save it"
                ))))
            }
        }
    }
}

impl LeadSession {
    /// The curator a curation step is recorded under: the acting rater, who must be named.
    pub fn curator(&self) -> Result<&Rater> {
        self.acting.as_ref().ok_or_else(choose_who_you_are)
    }

    /// Who the audit log names for the lead's action: the curator acting, or, with nobody
    /// chosen, the study lead at this workstation.
    pub fn audit_name(&self) -> &str {
        self.acting
            .as_ref()
            .map_or(STUDY_LEAD, |rater| rater.name.as_str())
    }
}

impl ReaderSession {
    pub fn rater(&self) -> &Rater {
        &self.rater
    }

    pub fn role(&self) -> RaterRole {
        self.rater.role
    }
}

/// Every answer to a task side by side, outside the queue (the case view): a clinician who saw
/// them would rate, or answer as a human baseline, already knowing what the models said.
pub fn responses(store: &Store, _lead: &LeadSession, task_key: i64) -> Result<Vec<ResponseView>> {
    store.responses(task_key)
}

/// Builds the rater package of `rater_name`'s queue in `study_id` for a rater at `site`, and
/// records it here so its results can be merged: the study lead's, since the package carries a
/// rater's whole queue (`Action::ExchangePackages`).
pub fn export_rater_package(
    store: &mut Store,
    _lead: &LeadSession,
    study_id: &str,
    rater_name: &str,
    site: &str,
    out: &Path,
    progress: &dyn Progress,
) -> Result<crate::package::RaterPackageExport> {
    crate::package::export_rater_package(store, study_id, rater_name, site, out, progress)
}

/// Merges another site's results package into this database: the study lead's decision.
pub fn merge_results_package(
    store: &mut Store,
    _lead: &LeadSession,
    file: &Path,
    progress: &dyn Progress,
) -> Result<MergeReport> {
    crate::package::merge_results_package(store, file, progress)
}
