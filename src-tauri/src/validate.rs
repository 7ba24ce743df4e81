//! Every IPC argument is checked here before it reaches the store: the webview is a boundary, and
//! a compromised or buggy page must not be able to send arbitrary strings into queries or paths.

use crate::error::{CommandError, ErrorCode};

/// Study, case and task ids in bundles are short slugs; 128 leaves room without inviting abuse.
pub const MAX_ID_LEN: usize = 128;

/// A study or case id: 1–128 characters of ASCII letters, digits, `.`, `_` and `-`.
pub fn id<'a>(field: &str, value: &'a str) -> Result<&'a str, CommandError> {
    if value.is_empty() || value.len() > MAX_ID_LEN {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!(
                "{field}: must be 1 to {MAX_ID_LEN} characters long, got {}",
                value.len()
            ),
        ));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: the character {bad:?} is not allowed (letters, digits, . _ - only)"),
        ));
    }
    Ok(value)
}

/// A store key (series, task): SQLite rowids are positive.
pub fn key(field: &str, value: i64) -> Result<i64, CommandError> {
    if value <= 0 {
        return Err(CommandError::new(
            ErrorCode::InvalidArgument,
            format!("{field}: must be a positive key, got {value}"),
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_bundle_style_ids() {
        for ok in ["demo", "ms-01", "case_12.v2", &"a".repeat(MAX_ID_LEN)] {
            assert_eq!(id("case_id", ok), Ok(ok));
        }
    }

    #[test]
    fn rejects_empty_overlong_and_foreign_characters_naming_the_field() {
        let too_long = "a".repeat(MAX_ID_LEN + 1);
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
