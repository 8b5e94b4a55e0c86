//! Where things are in the scenario text: byte offsets to line and column, tables and keys with
//! their positions, values read with the error a user needs when they have the wrong type, and
//! the best guess at the field of a TOML syntax error.
//!
//! The document is parsed with `toml_edit`'s span-preserving parser (`ImDocument`), so every key
//! and value keeps its byte range in the source; errors turn that offset into a 1-based line and
//! column.

use std::path::{Path, PathBuf};

use toml_edit::{ImDocument, Item, TableLike, TomlError, Value};

use super::error::{Res, ScenarioError};
use super::units::{format_size, parse_bandwidth, parse_duration_ns, parse_size};

// ---------------------------------------------------------------------------------------------
// Source positions.

/// What every error needs: the file name for messages, the text to turn offsets into lines,
/// and where relative paths are resolved.
pub(super) struct Ctx<'a> {
    pub file: &'a str,
    pub src: &'a str,
    /// Directory of the scenario file (`parse_file`), or `None` for the current directory.
    pub base_dir: Option<&'a Path>,
}

impl Ctx<'_> {
    /// 1-based (line, column) of a byte offset; the column counts characters, not bytes.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut off = offset.min(self.src.len());
        // An error at the very end of a file that ends in a newline belongs to the last line,
        // not to a phantom empty line after it.
        if off == self.src.len() && self.src.ends_with('\n') {
            off -= 1;
        }
        while !self.src.is_char_boundary(off) {
            off -= 1;
        }
        let before = &self.src[..off];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.src[line_start..off].chars().count() + 1;
        (line, col)
    }

    pub fn error(&self, at: usize, field: &str, message: impl Into<String>) -> ScenarioError {
        let (line, col) = self.line_col(at);
        ScenarioError {
            file: self.file.to_string(),
            line,
            col,
            field: field.to_string(),
            message: message.into(),
            help: None,
        }
    }
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A table (`[host]`, `host = { .. }` or dotted `host.ram = ..`) with its path and position.
pub(super) struct Table<'a> {
    pub t: &'a dyn TableLike,
    /// Field path of the table itself: "" (top level), "host", "workload[0].anon".
    pub path: String,
    /// How the user wrote its header, for messages: "[host]", "[workload.anon]".
    pub header: String,
    /// Byte offset of the table's header (or of its key, for dotted and inline tables).
    pub at: usize,
}

/// One present key of a table.
pub(super) struct Field<'a> {
    pub item: &'a Item,
    pub path: String,
    pub key_at: usize,
    pub val_at: usize,
}

impl<'a> Table<'a> {
    pub fn root(doc: &'a ImDocument<&'a str>) -> Self {
        Table {
            t: doc.as_table(),
            path: String::new(),
            header: "the top level".into(),
            at: 0,
        }
    }

    pub fn field(&self, key: &str) -> Option<Field<'a>> {
        let (k, item) = self.t.get_key_value(key)?;
        if item.is_none() {
            return None;
        }
        let key_at = k.span().map_or(self.at, |r| r.start);
        let val_at = item.span().map_or(key_at, |r| r.start);
        Some(Field {
            item,
            path: join(&self.path, key),
            key_at,
            val_at,
        })
    }

    /// Reject any key not in `allowed`, naming the allowed ones and the closest match.
    pub fn check_keys(&self, ctx: &Ctx, allowed: &[&str]) -> Res<()> {
        for (key, _) in self.t.iter() {
            if allowed.contains(&key) {
                continue;
            }
            let at = self
                .t
                .key(key)
                .and_then(|k| k.span())
                .map_or(self.at, |r| r.start);
            let mut help = String::new();
            if let Some(near) = closest(key, allowed) {
                help = format!("did you mean `{near}`? ");
            }
            help.push_str(&format!(
                "allowed keys in {}: {}",
                self.header,
                allowed.join(", ")
            ));
            return Err(ctx
                .error(
                    at,
                    &join(&self.path, key),
                    format!("unknown key `{key}` in {}", self.header),
                )
                .with_help(help));
        }
        Ok(())
    }

    /// The sub-table `key`, if present; an error if present but not a table.
    pub fn sub(&self, ctx: &Ctx, key: &str, header: &str) -> Res<Option<Table<'a>>> {
        let Some(f) = self.field(key) else {
            return Ok(None);
        };
        let Some(t) = f.item.as_table_like() else {
            return Err(ctx
                .error(
                    f.val_at,
                    &f.path,
                    format!("expected a table, found {}", f.found(ctx)),
                )
                .with_help(format!("write the settings under a {header} header")));
        };
        // Dotted tables (`host.ram = ..`) have no span of their own: use the key's.
        let at = f.item.span().map_or(f.key_at, |r| r.start);
        Ok(Some(Table {
            t,
            path: f.path,
            header: header.to_string(),
            at,
        }))
    }
}

impl Field<'_> {
    /// "integer 5", "string \"lots\"", "a table": what the user actually wrote.
    pub fn found(&self, ctx: &Ctx) -> String {
        match self.item {
            Item::Value(v) => {
                let raw = v
                    .span()
                    .and_then(|r| ctx.src.get(r))
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default();
                let mut shown: String = raw.chars().take(40).collect();
                if shown.len() < raw.len() {
                    shown.push_str("...");
                }
                format!("{} {shown}", v.type_name())
            }
            Item::Table(_) => "a table".to_string(),
            Item::ArrayOfTables(_) => "an array of tables".to_string(),
            Item::None => "nothing".to_string(),
        }
    }

    pub fn err(&self, ctx: &Ctx, message: impl Into<String>) -> ScenarioError {
        ctx.error(self.val_at, &self.path, message)
    }

    pub fn type_err(&self, ctx: &Ctx, expected: &str) -> ScenarioError {
        self.err(
            ctx,
            format!("expected {expected}, found {}", self.found(ctx)),
        )
    }

    pub fn value(&self) -> Option<&Value> {
        self.item.as_value()
    }

    pub fn string(&self, ctx: &Ctx, expected: &str) -> Res<String> {
        match self.value() {
            Some(Value::String(s)) => Ok(s.value().clone()),
            _ => Err(self.type_err(ctx, expected)),
        }
    }

    pub fn boolean(&self, ctx: &Ctx) -> Res<bool> {
        match self.value() {
            Some(Value::Boolean(b)) => Ok(*b.value()),
            _ => Err(self.type_err(ctx, "true or false")),
        }
    }

    /// A non-negative integer. TOML integers stop at 2^63-1, so larger values (seeds) may be
    /// written as a decimal string.
    pub fn uint(&self, ctx: &Ctx) -> Res<u64> {
        match self.value() {
            Some(Value::Integer(i)) => {
                let v = *i.value();
                u64::try_from(v)
                    .map_err(|_| self.err(ctx, format!("must not be negative, found {v}")))
            }
            Some(Value::String(s)) if is_digits(s.value()) => {
                let v: u64 = s
                    .value()
                    .parse()
                    .map_err(|_| self.err(ctx, format!("{} does not fit in 64 bits", s.value())))?;
                // Quotes are for what a TOML integer cannot hold; a quoted small number is
                // most likely a mistake (a string where a number was meant), so say so.
                if v <= i64::MAX as u64 {
                    return Err(self
                        .err(
                            ctx,
                            format!("expected an integer, found the string \"{v}\""),
                        )
                        .with_help(format!(
                            "write {} = {v} without quotes (only integers above 2^63-1 are \
                             written as strings)",
                            last_key(&self.path)
                        )));
                }
                Ok(v)
            }
            _ => Err(self.type_err(ctx, "a non-negative integer")),
        }
    }

    pub fn int(&self, ctx: &Ctx) -> Res<i64> {
        match self.value() {
            Some(Value::Integer(i)) => Ok(*i.value()),
            _ => Err(self.type_err(ctx, "an integer")),
        }
    }

    /// A float; integers are accepted too (`write_fraction = 1`).
    pub fn float(&self, ctx: &Ctx) -> Res<f64> {
        match self.value() {
            Some(Value::Float(f)) => Ok(*f.value()),
            Some(Value::Integer(i)) => Ok(*i.value() as f64),
            _ => Err(self.type_err(ctx, "a number")),
        }
    }

    /// A size: a string with a unit ("4GiB") or an integer number of bytes.
    pub fn size(&self, ctx: &Ctx) -> Res<u64> {
        match self.value() {
            // A quoted number without a unit ("5") is most likely a unit forgotten: "5" bytes
            // of RAM was never meant. An integer says bytes unambiguously.
            // (Above 2^63-1 a TOML integer cannot hold it, so the string is the only way.)
            Some(Value::String(s))
                if is_digits(s.value().trim())
                    && s.value().trim().bytes().any(|b| b != b'0')
                    && s.value()
                        .trim()
                        .parse::<u64>()
                        .is_ok_and(|v| v <= i64::MAX as u64) =>
            {
                let n = s.value().trim();
                Err(self
                    .err(ctx, format!("the size \"{n}\" has no unit"))
                    .with_help(format!(
                        "add a unit, e.g. {key} = \"{n}GiB\", or write {key} = {n} (an integer \
                         number of bytes)",
                        key = last_key(&self.path)
                    )))
            }
            Some(Value::String(s)) => parse_size(s.value()).map_err(|e| self.err(ctx, e)),
            Some(Value::Integer(i)) => {
                u64::try_from(*i.value()).map_err(|_| self.err(ctx, "sizes cannot be negative"))
            }
            _ => Err(self
                .type_err(ctx, "a size like \"4GiB\" (or an integer number of bytes)")
                .with_help(format!("for example: {} = \"4GiB\"", last_key(&self.path)))),
        }
    }

    /// A duration: a string with a unit ("100ms"). A bare integer is accepted only for 0.
    pub fn duration(&self, ctx: &Ctx) -> Res<u64> {
        match self.value() {
            Some(Value::String(s)) => parse_duration_ns(s.value()).map_err(|e| self.err(ctx, e)),
            Some(Value::Integer(i)) if *i.value() == 0 => Ok(0),
            Some(Value::Integer(i)) => {
                let v = *i.value();
                let msg = if v < 0 {
                    "durations cannot be negative".to_string()
                } else {
                    format!("a duration needs a unit, found the bare number {v}")
                };
                Err(self.err(ctx, msg).with_help(format!(
                    "write it as a string with a unit, e.g. {} = \"{v}ms\" (ns, us, ms, s, min, h)",
                    last_key(&self.path)
                )))
            }
            _ => Err(self.type_err(ctx, "a duration like \"100ms\"")),
        }
    }

    /// A bandwidth string ("1GiB/s"), strictly positive: a device that moves no bytes would
    /// stall every request forever.
    pub fn bandwidth(&self, ctx: &Ctx) -> Res<u64> {
        let Some(Value::String(s)) = self.value() else {
            return Err(self.type_err(ctx, "a bandwidth like \"1GiB/s\""));
        };
        let v = parse_bandwidth(s.value()).map_err(|e| self.err(ctx, e))?;
        if v == 0 {
            return Err(self.err(ctx, "bandwidth must be greater than zero"));
        }
        Ok(v)
    }

    /// One of `names` (a registry's NAMES list); `what` is the singular noun for messages.
    pub fn choice(&self, ctx: &Ctx, names: &[&'static str], what: &str) -> Res<&'static str> {
        let expected = format!("a {what} name ({})", quoted_list(names));
        let Some(Value::String(s)) = self.value() else {
            return Err(self.type_err(ctx, &expected));
        };
        let given = s.value().as_str();
        if let Some(n) = names.iter().find(|n| **n == given) {
            return Ok(n);
        }
        let mut e = self.err(
            ctx,
            format!(
                "unknown {what} \"{given}\"; expected one of {}",
                quoted_list(names)
            ),
        );
        if let Some(near) = closest(given, names) {
            e = e.with_help(format!("did you mean \"{near}\"?"));
        }
        Err(e)
    }
}

pub(super) fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn last_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

pub(super) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Edit distance, for "did you mean" hints.
pub(super) fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `given`, if it is close enough to be a plausible typo.
pub(super) fn closest<'n>(given: &str, candidates: &[&'n str]) -> Option<&'n str> {
    let given = given.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (levenshtein(&given, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

pub(super) fn file_stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "scenario".to_string())
}

/// Turn a TOML syntax error into a positioned error. The field is guessed from the line (the
/// key on it and the table header above it) because the parser stops before building one.
pub(super) fn syntax_error(ctx: &Ctx, e: &TomlError) -> ScenarioError {
    let at = e.span().map_or(0, |r| r.start);
    let detail = e
        .message()
        .trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(": ");
    let (line, _) = ctx.line_col(at);
    let (field, help) = guess_syntax_context(ctx.src, line);
    // Every error names a fix: when the line gives no better one, say what TOML expects.
    let help = help.unwrap_or_else(|| {
        if detail.contains("duplicate key") {
            "keep only one of the two (a later value does not override an earlier one in TOML)"
                .to_string()
        } else {
            "write `key = value`, strings in quotes, tables as [name] and workloads as \
             [[workload]] (see `reclaimlab run FILE --show-defaults` for a complete example)"
                .to_string()
        }
    });
    ctx.error(at, &field, format!("invalid TOML: {detail}"))
        .with_help(help)
}

/// Split a TOML key as written (`a.b`, `"a".b`) into its parts; `None` if it does not look like
/// a plain key (then no field is guessed).
fn split_key(k: &str) -> Option<Vec<String>> {
    k.split('.')
        .map(|part| {
            let p = part.trim();
            let p = p
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .or_else(|| p.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
                .unwrap_or(p);
            let ok = !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            ok.then(|| p.to_string())
        })
        .collect()
}

/// Best-effort field path and fix for a syntax error on `line` (1-based): replays the table
/// headers above it, counting `[[..]]` headers to get workload indices.
fn guess_syntax_context(src: &str, line: usize) -> (String, Option<String>) {
    let mut aot_counts: std::collections::BTreeMap<String, usize> = Default::default();
    let mut header: Vec<String> = Vec::new();
    let indexed = |parts: &[String], counts: &std::collections::BTreeMap<String, usize>| {
        let mut plain = String::new();
        let mut out = String::new();
        for p in parts {
            plain = join(&plain, p);
            out = join(&out, p);
            if let Some(n) = counts.get(&plain) {
                out.push_str(&format!("[{}]", n.saturating_sub(1)));
            }
        }
        out
    };
    for (i, raw) in src.lines().enumerate().take(line) {
        let l = raw.trim();
        let is_err_line = i + 1 == line;
        let head = if let Some(rest) = l.strip_prefix("[[") {
            rest.split_once("]]")
                .and_then(|(name, _)| split_key(name))
                .map(|p| (p, true))
        } else if let Some(rest) = l.strip_prefix('[') {
            rest.split_once(']')
                .and_then(|(name, _)| split_key(name))
                .map(|p| (p, false))
        } else {
            None
        };
        match head {
            Some((parts, is_array)) => {
                if is_array {
                    *aot_counts.entry(parts.join(".")).or_insert(0) += 1;
                }
                header = parts;
                if is_err_line {
                    return (indexed(&header, &aot_counts), None);
                }
            }
            None if is_err_line => {
                if l.starts_with('[') {
                    return (String::new(), None);
                }
                let Some((k, v)) = l.split_once('=') else {
                    return (indexed(&header, &aot_counts), None);
                };
                let Some(keys) = split_key(k) else {
                    return (String::new(), None);
                };
                let mut parts = header.clone();
                parts.extend(keys);
                let key = k.trim();
                return (indexed(&parts, &aot_counts), unquoted_value_hint(key, v));
            }
            None => {}
        }
    }
    (String::new(), None)
}

/// The most common syntax error in a scenario: a unit or name written without quotes
/// (`ram = 4GiB`, `pattern = zipf`). Suggest the quoted form.
fn unquoted_value_hint(key: &str, value: &str) -> Option<String> {
    let v = value.split('#').next().unwrap_or("").trim();
    let starts_ok = v
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.');
    let has_letter = v.chars().any(|c| c.is_alphabetic() || c == '/');
    let keyword = matches!(v, "true" | "false" | "inf" | "nan");
    (starts_ok && has_letter && !keyword && !v.contains(['"', '\'', '[', '{']))
        .then(|| format!("sizes, durations and names are strings: write {key} = \"{v}\""))
}

/// Where a relative path in a scenario is looked for, for error messages.
pub(super) fn relative_path_help(ctx: &Ctx) -> String {
    match ctx.base_dir {
        Some(d) => {
            // The parent of "x.toml" is "": that is the current directory.
            let dir = if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            };
            format!(
                "a relative path is resolved against the scenario file's directory (\"{}\")",
                dir.display()
            )
        }
        None => "a relative path is resolved against the current directory".to_string(),
    }
}

/// `given` resolved against the scenario file's directory (or the current directory for
/// `parse_str`), made absolute: the path recorded in `--show-defaults` and `summary.json` then
/// names the same file whatever directory the run was started from, so a result can be re-run
/// from anywhere. The directory is taken as the kernel resolves it (`..` and symlinks in the
/// scenario's own path gone, so `a/../s.toml` and `s.toml` record the same trace); `given` is
/// appended as written.
pub(super) fn resolve(ctx: &Ctx, given: &str) -> PathBuf {
    let base = match ctx.base_dir {
        // The parent of "x.toml" is "": the current directory.
        Some(dir) if !dir.as_os_str().is_empty() => dir.canonicalize().ok(),
        _ => std::env::current_dir().ok(),
    };
    match base {
        // `join` keeps an absolute `given` as is.
        Some(b) => b.join(given),
        // No current directory (deleted under us): keep the path as given.
        None => ctx
            .base_dir
            .map_or_else(|| PathBuf::from(given), |d| d.join(given)),
    }
}

/// "0" / "100 bytes" / "4GiB": sizes in messages, exact.
pub(super) fn describe_size(v: u64) -> String {
    match format_size(v) {
        s if s.bytes().all(|b| b.is_ascii_digit()) => format!("{s} bytes"),
        s => s,
    }
}

impl Table<'_> {
    /// Position of the value at `rel`, a path relative to this table such as `allowed`,
    /// `oom.allowed` or `workload[2].anon.size`; `None` when the file does not have it. A
    /// table's position is its header (or its key, for dotted and inline tables).
    pub fn locate(&self, rel: &str) -> Option<usize> {
        let mut table: Option<&dyn TableLike> = Some(self.t);
        let mut found = None;
        for part in rel.split('.') {
            let table_here = table?;
            let (name, index) = match part.split_once('[') {
                Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().ok()?)),
                None => (part, None),
            };
            let (k, item) = table_here.get_key_value(name)?;
            let key_at = k.span().map_or(self.at, |r| r.start);
            let (item_at, next): (Option<usize>, Option<&dyn TableLike>) = match index {
                None => (item.span().map(|r| r.start), item.as_table_like()),
                Some(i) => match item {
                    Item::ArrayOfTables(a) => {
                        let t = a.get(i)?;
                        (t.span().map(|r| r.start), Some(t as &dyn TableLike))
                    }
                    Item::Value(Value::Array(a)) => {
                        let v = a.get(i)?;
                        let t = v.as_inline_table()?;
                        (v.span().map(|r| r.start), Some(t as &dyn TableLike))
                    }
                    _ => return None,
                },
            };
            found = Some(item_at.unwrap_or(key_at));
            table = next;
        }
        found
    }
}
