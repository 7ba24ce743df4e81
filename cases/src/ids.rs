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

/// An id that holds the rule: checked when it is made, including when it is deserialised, so a
/// value of this type that reached a function was never anything else. The desktop app's commands
/// take their study, case, series and task ids as `Id`: a page that sends `../etc` gets the
/// rule's words back before any command runs.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct Id(String);

impl Id {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Id {
    type Error = &'static str;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        match id_problem(&value) {
            None => Ok(Self(value)),
            Some(problem) => Err(problem),
        }
    }
}

impl From<Id> for String {
    fn from(id: Id) -> Self {
        id.0
    }
}

impl std::ops::Deref for Id {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A row's key in the store (a series, task, rater, assignment, label, version…): SQLite rowids
/// are positive, so zero and below are refused when the key is made or deserialised.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "i64", into = "i64")]
pub struct Key(i64);

impl Key {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for Key {
    type Error = String;

    fn try_from(value: i64) -> Result<Self, Self::Error> {
        if value > 0 {
            Ok(Self(value))
        } else {
            Err(format!("must be a positive key, got {value}"))
        }
    }
}

impl From<Key> for i64 {
    fn from(key: Key) -> Self {
        key.0
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// In the generated TypeScript an `Id` is a `string` and a `Key` a `number`: the rule is the
/// Rust side's, checked when the page's value arrives.
#[cfg(feature = "specta")]
impl specta::Type for Id {
    fn definition(types: &mut specta::Types) -> specta::datatype::DataType {
        <String as specta::Type>::definition(types)
    }
}

#[cfg(feature = "specta")]
impl specta::Type for Key {
    fn definition(types: &mut specta::Types) -> specta::datatype::DataType {
        <i64 as specta::Type>::definition(types)
    }
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

    #[test]
    fn an_id_or_key_is_checked_when_deserialised_with_the_rules_words() {
        let id: Id = serde_json::from_str("\"ms-01\"").unwrap();
        assert_eq!(id.as_str(), "ms-01");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"ms-01\"");
        for bad in ["\"..\"", "\"../etc\"", "\"\"", "\"ms 01\""] {
            let error = serde_json::from_str::<Id>(bad).unwrap_err().to_string();
            assert!(
                error.starts_with("must be 1–64 characters"),
                "{bad}: {error}"
            );
        }
        let key: Key = serde_json::from_str("7").unwrap();
        assert_eq!(key.get(), 7);
        for bad in ["0", "-3"] {
            let error = serde_json::from_str::<Key>(bad).unwrap_err().to_string();
            assert!(
                error.starts_with("must be a positive key, got"),
                "{bad}: {error}"
            );
        }
    }
}
