//! The curation rules, pure: which version a save on a branch must start from, when a version may
//! be submitted or reviewed, and what a review decides. The local store (`versions.rs`, SQLite)
//! and the team server (`app::team::curation`, PostgreSQL) read what they hold and ask here, so
//! the two cannot drift.

use super::{Decision, Status, MAIN_BRANCH};
use crate::{Error, Result};

/// The latest version of a branch, as a refusal names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchHead {
    pub version: i64,
    /// Its author, or `the <source>` for a bundle's or an import's version.
    pub by: String,
    pub at: String,
}

/// Checks that a save on `branch` starts from where that branch is: its latest version; a branch
/// without versions yet starts from nothing, or (an independent curation) from main's latest.
/// Refused with [`Error::StaleGroundTruth`] naming who saved what when, otherwise.
pub fn check_save_base(
    case_id: &str,
    branch: &str,
    based_on: Option<i64>,
    branch_head: Option<&BranchHead>,
    main_head: Option<&BranchHead>,
) -> Result<()> {
    let main = main_head.map(|head| head.version);
    let expected = match branch_head {
        Some(head) => Some(head.version),
        None if branch == MAIN_BRANCH => None,
        None if based_on.is_none() || based_on == main => based_on,
        None => main,
    };
    if based_on == expected {
        return Ok(());
    }
    let head = branch_head.or(main_head).ok_or_else(|| {
        Error::CurationRefused(format!(
            "version {} does not exist for case {case_id}",
            based_on.unwrap_or_default()
        ))
    })?;
    Err(Error::StaleGroundTruth {
        case_id: case_id.to_owned(),
        based_on: based_on.map_or("no version".to_owned(), |v| format!("version {v}")),
        latest: head.version,
        by: head.by.clone(),
        at: head.at.clone(),
    })
}

/// A version is submitted or reviewed only while it is the latest of its branch.
pub fn check_latest(case_id: &str, version: i64, branch_head: Option<&BranchHead>) -> Result<()> {
    match branch_head {
        Some(head) if head.version != version => Err(Error::StaleGroundTruth {
            case_id: case_id.to_owned(),
            based_on: format!("version {version}"),
            latest: head.version,
            by: head.by.clone(),
            at: head.at.clone(),
        }),
        _ => Ok(()),
    }
}

/// The author hands a draft of `main` to review: only a draft, only of `main` (an independent
/// curation is merged into main first).
pub fn check_submit(case_id: &str, version: i64, branch: &str, status: Status) -> Result<()> {
    if branch != MAIN_BRANCH {
        return Err(Error::CurationRefused(format!(
            "version {version} belongs to the independent curation {branch:?}: compare and merge \
             it into {MAIN_BRANCH}, then submit the merged version"
        )));
    }
    if status != Status::Draft {
        return Err(Error::CurationRefused(format!(
            "version {version} of case {case_id} is {}, not a draft",
            crate::store::enum_text(&status)
        )));
    }
    Ok(())
}

/// What a review decides: the version's new status and the decision as the review records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reviewed {
    pub status: Status,
    /// `comment`, `changes_requested` or `finalised`.
    pub label: &'static str,
}

/// A second curator reviews a version in review: never its author, and changes requested say
/// which. A comment keeps it in review, changes requested send it back to draft, finalised makes
/// it final.
pub fn review_outcome(
    case_id: &str,
    version: i64,
    status: Status,
    reviewer_is_author: bool,
    reviewer: &str,
    decision: Decision,
    comment: &str,
) -> Result<Reviewed> {
    if status != Status::InReview {
        return Err(Error::CurationRefused(format!(
            "version {version} of case {case_id} is {}: only a version in review is reviewed",
            crate::store::enum_text(&status)
        )));
    }
    if reviewer_is_author {
        return Err(Error::CurationRefused(format!(
            "{reviewer} wrote version {version} of case {case_id}: a second curator reviews it"
        )));
    }
    if decision == Decision::ChangesRequested && comment.trim().is_empty() {
        return Err(Error::CurationRefused(
            "say which changes are needed: the comment is empty".into(),
        ));
    }
    Ok(match decision {
        Decision::Comment => Reviewed {
            status: Status::InReview,
            label: "comment",
        },
        Decision::ChangesRequested => Reviewed {
            status: Status::Draft,
            label: "changes_requested",
        },
        Decision::Finalised => Reviewed {
            status: Status::Final,
            label: "finalised",
        },
    })
}

/// A branch's name: what curators type for an independent curation.
pub fn check_branch_name(branch: &str) -> Result<()> {
    match crate::ids::id_problem(branch) {
        None => Ok(()),
        Some(problem) => Err(Error::CurationRefused(format!(
            "{branch:?} is not a curation name: it {problem}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(version: i64, by: &str) -> BranchHead {
        BranchHead {
            version,
            by: by.into(),
            at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    /// (branch, based_on, branch head, main head, Ok or the head a stale refusal names)
    type SaveCase<'a> = (
        &'a str,
        Option<i64>,
        Option<&'a BranchHead>,
        Option<&'a BranchHead>,
        std::result::Result<(), (i64, &'a str)>,
    );

    fn stale_latest(result: Result<()>) -> Option<(i64, String)> {
        match result {
            Err(Error::StaleGroundTruth { latest, by, .. }) => Some((latest, by)),
            _ => None,
        }
    }

    #[test]
    fn a_save_starts_from_its_branch_head_or_for_a_new_branch_from_nothing_or_main() {
        let main = head(3, "Ana");
        let side = head(5, "Ben");
        let table: [SaveCase<'_>; 9] = [
            ("main", Some(3), Some(&main), Some(&main), Ok(())),
            ("main", Some(2), Some(&main), Some(&main), Err((3, "Ana"))),
            ("main", None, Some(&main), Some(&main), Err((3, "Ana"))),
            ("main", None, None, None, Ok(())),
            ("ben", None, None, Some(&main), Ok(())),
            ("ben", Some(3), None, Some(&main), Ok(())),
            ("ben", Some(2), None, Some(&main), Err((3, "Ana"))),
            ("ben", Some(5), Some(&side), Some(&main), Ok(())),
            ("ben", Some(3), Some(&side), Some(&main), Err((5, "Ben"))),
        ];
        for (branch, based_on, branch_head, main_head, expected) in table {
            let got = check_save_base("c1", branch, based_on, branch_head, main_head);
            match expected {
                Ok(()) => assert!(got.is_ok(), "{branch} from {based_on:?}: {got:?}"),
                Err((latest, by)) => assert_eq!(
                    stale_latest(got),
                    Some((latest, by.to_owned())),
                    "{branch} from {based_on:?}"
                ),
            }
        }
        let nothing = check_save_base("c1", "main", Some(4), None, None);
        assert!(matches!(nothing, Err(Error::CurationRefused(m)) if m.contains("does not exist")));
    }

    #[test]
    fn only_the_latest_draft_of_main_is_submitted() {
        assert!(check_latest("c1", 3, Some(&head(3, "Ana"))).is_ok());
        assert_eq!(
            stale_latest(check_latest("c1", 2, Some(&head(3, "Ana")))),
            Some((3, "Ana".into()))
        );
        assert!(check_submit("c1", 3, "main", Status::Draft).is_ok());
        for (branch, status, says) in [
            ("ben", Status::Draft, "independent curation"),
            ("main", Status::InReview, "not a draft"),
            ("main", Status::Final, "not a draft"),
        ] {
            let refused = check_submit("c1", 3, branch, status);
            assert!(
                matches!(&refused, Err(Error::CurationRefused(m)) if m.contains(says)),
                "{branch} {status:?}: {refused:?}"
            );
        }
    }

    #[test]
    fn a_review_is_of_a_version_in_review_by_another_curator_with_a_reason_for_changes() {
        use Decision::*;
        // (status, by the author, decision, comment, new status or the refusal's words)
        let table = [
            (Status::InReview, false, Comment, "", Ok(Status::InReview)),
            (
                Status::InReview,
                false,
                ChangesRequested,
                "fix L1",
                Ok(Status::Draft),
            ),
            (Status::InReview, false, Finalised, "", Ok(Status::Final)),
            (
                Status::InReview,
                false,
                ChangesRequested,
                "  ",
                Err("comment is empty"),
            ),
            (Status::InReview, true, Finalised, "", Err("second curator")),
            (
                Status::Draft,
                false,
                Finalised,
                "",
                Err("only a version in review"),
            ),
            (
                Status::Final,
                false,
                Comment,
                "",
                Err("only a version in review"),
            ),
        ];
        for (status, is_author, decision, comment, expected) in table {
            let got = review_outcome("c1", 2, status, is_author, "Ana", decision, comment);
            match expected {
                Ok(new) => assert_eq!(got.map(|r| r.status).ok(), Some(new), "{decision:?}"),
                Err(says) => assert!(
                    matches!(&got, Err(Error::CurationRefused(m)) if m.contains(says)),
                    "{status:?} {decision:?}: {got:?}"
                ),
            }
        }
    }

    #[test]
    fn branch_names_are_short_and_plain() {
        for good in ["main", "ben-2", "a.b_c"] {
            assert!(check_branch_name(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", "x/y", &"n".repeat(65)] {
            assert!(check_branch_name(bad).is_err(), "{bad:?}");
        }
    }
}
