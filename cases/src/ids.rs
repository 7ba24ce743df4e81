//! The one rule for the names that become file names, URL path segments and database keys: a
//! study's, case's, series', task's, rubric dimension's and curation branch's id, and a team
//! account's username. The bundle check, the desktop app's IPC validation, the team server's
//! path segments and its client all ask here, so a name one of them accepts the others accept.

/// The longest id or username, in characters (all ASCII).
pub const MAX_ID_CHARS: usize = 64;

/// What an id may hold besides ASCII letters and digits.
const ID_PUNCTUATION: &str = "-_.";
/// A username may also hold `@`, for the e-mail-like names sites give their accounts.
const USERNAME_PUNCTUATION: &str = "-_.@";

/// Whether `c` may stand in an id (what a generated id keeps; every other character is replaced).
pub fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || ID_PUNCTUATION.contains(c)
}

/// What is wrong with `value` as an id (study, case, series, task, rubric dimension, curation
/// branch), said so a person can fix it; `None` when it is one.
pub fn id_problem(value: &str) -> Option<&'static str> {
    not_plain(value, is_id_char).then_some(
        "must be 1–64 characters of letters, digits, '-', '_' or '.', and not '.' or '..'",
    )
}

/// What is wrong with `value` as a team account's username, or as any path segment of the team
/// server's API (which names studies, cases and people alike); `None` when it is one.
pub fn username_problem(value: &str) -> Option<&'static str> {
    not_plain(value, |c| {
        c.is_ascii_alphanumeric() || USERNAME_PUNCTUATION.contains(c)
    })
    .then_some(
        "must be 1–64 characters of letters, digits, '-', '_', '.' or '@', and not '.' or '..'",
    )
}

/// True when `value` is not plain: empty, too long, a character outside `allowed`, or `.`/`..`,
/// which a file path or a URL would resolve into another place.
fn not_plain(value: &str, allowed: impl Fn(char) -> bool) -> bool {
    value.is_empty()
        || value.len() > MAX_ID_CHARS
        || value == "."
        || value == ".."
        || !value.chars().all(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_plain_names_of_at_most_64_characters() {
        let longest = "a".repeat(MAX_ID_CHARS);
        for id in ["demo", "ms-01", "case_12.v2", "T1w", longest.as_str()] {
            assert_eq!(id_problem(id), None, "{id:?}");
        }
        let too_long = "a".repeat(MAX_ID_CHARS + 1);
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "../etc",
            "ms 01",
            "ms-01'--",
            "é",
            "lead@site",
            too_long.as_str(),
        ] {
            assert!(id_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn usernames_may_also_hold_an_at_sign() {
        for name in ["lead", "dr.ada@site-1", "rater_07"] {
            assert_eq!(username_problem(name), None, "{name:?}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a b",
            "a/b",
            "..%2f",
            &"x".repeat(MAX_ID_CHARS + 1),
        ] {
            assert!(username_problem(bad).is_some(), "{bad:?}");
        }
    }
}
