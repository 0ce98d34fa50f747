//! [`ScenarioError`]: every way a scenario can be rejected, with the field path, the value and
//! what is allowed. Bad input is never a panic.

use std::fmt;

/// Where in the pipeline a scenario was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Not TOML / JSON at all (line and column given).
    Syntax,
    /// Well-formed, but a key is unknown or missing, or a value has the wrong type or unit.
    Schema,
    /// Parsed, but a value is out of range or a reference is undefined.
    Invalid,
    /// A file could not be read.
    Io,
    /// Serialisation failed.
    Serialize,
}

/// A rejected scenario. `message()` names the field path (`apps[2].think.hi`), the value,
/// and what is allowed; `line()`/`column()` (1-based) locate syntax and schema errors in
/// TOML and JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    kind: ErrorKind,
    path: String,
    message: String,
    location: Option<(usize, usize)>,
}

impl ScenarioError {
    /// `path: why`.
    pub(crate) fn invalid(path: impl Into<String>, why: impl fmt::Display) -> Self {
        let path = path.into();
        let message = if path.is_empty() { why.to_string() } else { format!("{path}: {why}") };
        ScenarioError { kind: ErrorKind::Invalid, path, message, location: None }
    }

    /// A complete message that already names the path.
    pub(crate) fn invalid_msg(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { kind: ErrorKind::Invalid, path: path.into(), message: message.into(), location: None }
    }

    /// `path = value is not allowed; expected …`.
    pub(crate) fn value(path: impl Into<String>, value: impl fmt::Display, expected: impl fmt::Display) -> Self {
        let path = path.into();
        let message = format!("{path} = {value} is not allowed; expected {expected}");
        ScenarioError { kind: ErrorKind::Invalid, path, message, location: None }
    }

    pub(crate) fn new(
        kind: ErrorKind,
        path: impl Into<String>,
        message: impl Into<String>,
        location: Option<(usize, usize)>,
    ) -> Self {
        ScenarioError { kind, path: path.into(), message: message.into(), location }
    }

    /// The same error located at (line, column).
    pub(crate) fn at(mut self, location: (usize, usize)) -> Self {
        self.location = Some(location);
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The field path (`apps[2].think.hi`; empty for the whole document).
    pub fn path(&self) -> &str {
        &self.path
    }
    /// The message without the location.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// 1-based line of the offending text, for syntax and schema errors.
    pub fn line(&self) -> Option<usize> {
        self.location.map(|(l, _)| l)
    }
    /// 1-based column (in characters) of the offending text.
    pub fn column(&self) -> Option<usize> {
        self.location.map(|(_, c)| c)
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.location) {
            (ErrorKind::Syntax, Some((l, c))) => write!(f, "syntax error at line {l}, column {c}: {}", self.message),
            (_, Some((l, c))) => write!(f, "{} (at line {l}, column {c})", self.message),
            (_, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// 1-based (line, column) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(text.len());
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("abc", 0), (1, 1));
        assert_eq!(line_col("a\nbc", 3), (2, 2));
        assert_eq!(line_col("é\nx", 1), (1, 1));
        assert_eq!(line_col("x", 99), (1, 2));
    }

    #[test]
    fn display_adds_the_location() {
        let e = ScenarioError::new(ErrorKind::Syntax, "", "expected `=`", Some((3, 7)));
        assert_eq!(e.to_string(), "syntax error at line 3, column 7: expected `=`");
        let e = ScenarioError::value("duration", "0s", "> 0");
        assert_eq!(e.to_string(), "duration = 0s is not allowed; expected > 0");
        assert_eq!(e.path(), "duration");
    }
}
