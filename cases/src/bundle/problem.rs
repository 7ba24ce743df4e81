//! A problem found in a bundle, reported as `FILE:LINE: field: message`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// Relative to the bundle directory, with `/` separators.
    pub file: String,
    /// 1-based; `None` when the problem concerns the whole file (e.g. it is missing).
    pub line: Option<usize>,
    /// The field's path in the file (`series[1].path`), or `-` when there is none.
    pub field: String,
    pub message: String,
}

impl Problem {
    /// A problem on `line` (1-based) of `file`.
    pub fn on_line(file: &str, line: usize, field: &str, message: impl Into<String>) -> Problem {
        Problem {
            file: file.to_owned(),
            line: Some(line),
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}: {}", self.file, self.field, self.message),
            None => write!(f, "{}: {}: {}", self.file, self.field, self.message),
        }
    }
}

/// Collects problems while validation carries on, so a curator sees all of them at once.
#[derive(Debug, Default)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn push(
        &mut self,
        file: &str,
        line: Option<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.0.push(Problem {
            file: file.to_owned(),
            line,
            field: field.into(),
            message: message.into(),
        });
    }

    /// A problem about `field` of a JSON file whose text is `text`: the line is looked up.
    pub fn at_field(&mut self, file: &str, text: &str, field: &str, message: impl Into<String>) {
        let line = super::locate::line_of(text, field);
        self.push(file, line, field, message);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_sorted(mut self) -> Vec<Problem> {
        self.0.sort();
        self.0
    }
}
