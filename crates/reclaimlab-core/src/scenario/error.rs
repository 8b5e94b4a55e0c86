//! The error every scenario problem becomes: where (file:line:col), which field, what is
//! wrong, and how to fix it.

use std::fmt;

/// A scenario that cannot be used, and where the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given to [`parse_file`] / [`parse_str`].
    pub file: String,
    /// 1-based line; 0 when the error is about the file as a whole (e.g. it cannot be read).
    pub line: usize,
    /// 1-based column, counted in characters; 0 together with `line == 0`.
    pub col: usize,
    /// Dotted path of the offending field (`host.ram`, `workload[1].anon.size`); empty when the
    /// error is not about one field (unreadable file, a syntax error outside any key).
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
    /// How to fix it, when there is a clear fix.
    pub help: Option<String>,
}

impl ScenarioError {
    pub(super) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for ScenarioError {
    /// `FILE:LINE:COL: error: in field `FIELD`: MESSAGE`, then `  help: ...` on its own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: ", self.file)?;
        } else {
            write!(f, "{}:{}:{}: error: ", self.file, self.line, self.col)?;
        }
        if !self.field.is_empty() {
            write!(f, "in field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

pub(super) type Res<T> = Result<T, ScenarioError>;
