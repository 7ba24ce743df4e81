//! Every IPC argument is checked here before it reaches the store: the webview is a boundary, and
//! a compromised or buggy page must not be able to send arbitrary strings into queries or paths.

use crate::error::{CommandError, ErrorCode};

/// An id inside an argument's structure (a plan's study, a label's category), by the rule bundles
/// are checked by (`cases::ids`). A command's own id and key arguments are `cases::ids::Id` and
/// `Key`, checked when the page's value is deserialised, before the command runs.
pub fn id<'a>(field: &str, value: &'a str) -> Result<&'a str, CommandError> {
    match cases::ids::id_problem(value) {
        None => Ok(value),
        Some(problem) => Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: {problem}"),
        )),
    }
}

/// A store key inside an argument's structure (the raters of a plan), by the rule a command's own
/// `Key` argument is checked by when it is deserialised (`cases::ids::Key`).
pub fn key(field: &str, value: i64) -> Result<i64, CommandError> {
    cases::ids::Key::try_from(value)
        .map(cases::ids::Key::get)
        .map_err(|problem| {
            CommandError::new(ErrorCode::InvalidArgument, format!("{field}: {problem}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_bundle_style_ids() {
        for ok in [
            "demo",
            "ms-01",
            "case_12.v2",
            &"a".repeat(cases::ids::MAX_ID_CHARS),
        ] {
            assert_eq!(id("case_id", ok), Ok(ok));
        }
    }

    #[test]
    fn rejects_empty_overlong_and_foreign_characters_naming_the_field() {
        let too_long = "a".repeat(cases::ids::MAX_ID_CHARS + 1);
        for bad in ["", too_long.as_str(), "../etc", "ms 01", "ms-01'--", "é"] {
            let error = id("case_id", bad).expect_err(bad);
            assert_eq!(error.code, ErrorCode::InvalidArgument);
            assert!(error.message.starts_with("case_id: "), "{}", error.message);
        }
    }

    #[test]
    fn keys_must_be_positive() {
        assert_eq!(key("series_key", 7), Ok(7));
        assert_eq!(
            key("series_key", 0).unwrap_err().message,
            "series_key: must be a positive key, got 0"
        );
        assert!(key("task_key", -3).is_err());
    }
}
