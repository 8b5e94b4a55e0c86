//! TOML text for `--show-defaults`: `key = value  # comment` rows with the comments aligned
//! per table, and values written so that they read back exactly.

use std::fmt::Write as _;

/// Collects `key = value  # comment` rows and aligns the comments within each table.
#[derive(Default)]
pub(super) struct Writer {
    out: String,
    /// Rows of the current table: (code, comment). An empty comment means a comment-only line.
    rows: Vec<(String, String)>,
}

impl Writer {
    pub fn kv(&mut self, key: &str, value: String, comment: &str) {
        self.rows
            .push((format!("{key} = {value}"), comment.to_string()));
    }

    /// An option that is `None`: shown, commented out, so it can be discovered.
    pub fn unset(&mut self, key: &str, comment: &str) {
        self.rows
            .push((format!("# {key} = <unset>"), comment.to_string()));
    }

    pub fn comment(&mut self, text: &str) {
        let line = if text.is_empty() {
            "#".to_string()
        } else {
            format!("# {text}")
        };
        self.rows.push((line, String::new()));
    }

    pub fn blank(&mut self) {
        self.rows.push((String::new(), String::new()));
    }

    pub fn table(&mut self, name: &str) {
        self.flush();
        let _ = writeln!(self.out, "\n[{name}]");
    }

    pub fn array_table(&mut self, name: &str) {
        self.flush();
        let _ = writeln!(self.out, "\n[[{name}]]");
    }

    fn flush(&mut self) {
        // Align comments of key rows only; long lines do not push the column out for the rest.
        let width = self
            .rows
            .iter()
            .filter(|(_, c)| !c.is_empty())
            .map(|(code, _)| code.chars().count())
            .filter(|n| *n <= 40)
            .max()
            .unwrap_or(0);
        for (code, comment) in self.rows.drain(..) {
            if comment.is_empty() {
                let _ = writeln!(self.out, "{code}");
            } else {
                let _ = writeln!(self.out, "{code:<width$}  # {comment}");
            }
        }
    }

    pub fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

/// TOML integers are i64; larger values are written as decimal strings, which the parser takes.
pub(super) fn uint(v: u64) -> String {
    if i64::try_from(v).is_ok() {
        v.to_string()
    } else {
        format!("\"{v}\"")
    }
}

/// Shortest text that reads back as the same f64 (Rust's `Debug` guarantees that), always with
/// a `.` or exponent so TOML sees a float.
pub(super) fn float(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{v:?}")
    }
}

/// A TOML basic string, always on one line.
pub(super) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
