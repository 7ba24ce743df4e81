//! A rating as the team server holds it, and the edits that change it: the wire shapes both
//! sides of a team study share (docs/team-server.md), kept with the rating rules so that the
//! outbox of a rater's workstation (`outbox`) and the server's rules (`app::team`) build on the
//! same types without either reaching up into the other.

use super::{LabelEdit, RatingEdit, RatingStatus};
use serde::{Deserialize, Serialize};

/// A rating's whole editable state on the server: the scores and the error labels, saved
/// together so that one edit id and one version cover what the rater changed. Strict, unlike
/// the response bodies that carry it (`TeamRating`, `TeamStudyRating`): it is the body of a
/// save the server reads, and a field added to it changes what a rating is, which a client
/// must not drop unread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamRatingState {
    pub scores: RatingEdit,
    #[serde(default)]
    pub labels: Vec<LabelEdit>,
}

/// A rater's own rating as the server holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamRating {
    pub state: TeamRatingState,
    pub status: RatingStatus,
    /// Counts accepted edits from 0 (nothing saved); an edit names the version it started from.
    pub version: i64,
    pub updated_at: String,
    /// When the rater asked to see the case's ground truth after submitting.
    pub revealed_at: Option<String>,
    /// The number of the rubric version the rating was last saved under (the lead's numbering;
    /// added later: an older server's rating has none).
    #[serde(default)]
    pub rubric_version: Option<u32>,
}

/// What a rater asks of their rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TeamEdit {
    /// Replace the draft with this state.
    Save {
        rating: TeamRatingState,
    },
    Submit,
    /// Back to draft: refused after a reveal, and for a rater the lead locked.
    Reopen,
    /// See the case's ground truth: only once submitted, and not for a locked rater.
    Reveal,
}

/// The edits that bring the server's rating `current` of an item to `state`, submitted or
/// not: a submitted one reopened first, the state saved unless it is already the server's, the
/// submit last; none when the server already says the same. The one rule for a results upload
/// and for a rater's stopped item sent over the server's version (`rating::outbox::resolve`).
pub fn edits_to_reach(
    state: &TeamRatingState,
    submitted: bool,
    current: Option<&TeamRating>,
) -> Vec<TeamEdit> {
    let current_status = current.map_or(RatingStatus::Draft, |r| r.status);
    let same_state = current.is_some_and(|r| &r.state == state);
    let wanted_status = if submitted {
        RatingStatus::Submitted
    } else {
        RatingStatus::Draft
    };
    if same_state && current_status == wanted_status {
        return Vec::new();
    }
    let mut steps = Vec::new();
    if current_status == RatingStatus::Submitted {
        steps.push(TeamEdit::Reopen);
    }
    if !same_state || current.is_none() {
        steps.push(TeamEdit::Save {
            rating: state.clone(),
        });
    }
    if submitted {
        steps.push(TeamEdit::Submit);
    }
    steps
}
