//! Scenario TOML to a validated [`Scenario`], with errors that say where (file:line:col), which
//! field, what was expected and how to fix it.
//!
//! The parser knows no key by name: it walks the declarations in `sections/` (see `schema.rs`).
//! For each table it rejects unknown keys (listing the allowed ones, with a "did you mean"),
//! reads each declared key by its type and range, runs the key's checker, fills absent keys
//! from their rules, rejects keys whose `only_if` condition does not hold, parses the nested
//! tables, and finally runs the table's rules. Field paths in errors use the TOML names with
//! 0-based indices for workloads, e.g. `workload[1].anon.size` is the `size` key of the second
//! `[[workload]]`.
//!
//! Only the first error is reported, in declaration order: top-level keys, then the tables in
//! the order the scenario section lists them, the checks spanning tables last.

use std::path::Path;

use toml_edit::{ImDocument, Value};

use super::schema::{Dflt, Fix, Key, Section, Ty, Val};
use super::source::{describe_size, file_stem, join, relative_path_help, resolve, syntax_error};
use super::Scenario;

pub(super) use super::source::{Ctx, Field, Table};

pub(super) use super::error::Res;
pub use super::error::ScenarioError;

/// Parse a scenario from TOML text by its top-level section `root` (`scenario::parse_str`).
pub(super) fn parse_str(
    root: &Section<Scenario>,
    text: &str,
    file: &str,
) -> Result<Scenario, ScenarioError> {
    parse_with_base(root, text, file, None)
}

/// Parse TOML text by `root`, resolving relative paths against `base_dir`
/// (`scenario::parse_str_in`).
pub(super) fn parse_str_in(
    root: &Section<Scenario>,
    text: &str,
    file: &str,
    base_dir: &Path,
) -> Result<Scenario, ScenarioError> {
    parse_with_base(root, text, file, Some(base_dir))
}

/// Read and parse a scenario file by its top-level section `root` (`scenario::parse_file`).
/// Relative paths are resolved against the directory holding the scenario file.
pub(super) fn parse_file(root: &Section<Scenario>, path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        let (message, help) = if e.kind() == std::io::ErrorKind::InvalidData {
            (
                "not a text file: the scenario is not valid UTF-8".to_string(),
                Some("a scenario is a TOML text file; check that this is the right file".into()),
            )
        } else {
            (format!("cannot read scenario file: {e}"), None)
        };
        ScenarioError {
            file: file.clone(),
            line: 0,
            col: 0,
            field: String::new(),
            message,
            help,
        }
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    parse_with_base(root, &text, &file, Some(base))
}

fn parse_with_base(
    root: &Section<Scenario>,
    text: &str,
    file: &str,
    base_dir: Option<&Path>,
) -> Res<Scenario> {
    let cx = Ctx {
        file,
        src: text,
        base_dir,
    };
    let doc = ImDocument::parse(text).map_err(|e| syntax_error(&cx, &e))?;
    // The name's rule (the file's stem) needs the file name, which the section does not see.
    let mut s = Scenario {
        name: file_stem(file),
        ..Scenario::default()
    };
    parse_section(&cx, &Table::root(&doc), root, &mut s)?;
    Ok(s)
}

/// Parse table `t` into `out` by its declaration `sec` (see the module documentation).
pub(super) fn parse_section<S: 'static>(
    cx: &Ctx,
    t: &Table,
    sec: &Section<S>,
    out: &mut S,
) -> Res<()> {
    t.check_keys(cx, &sec.allowed())?;
    let mut given: Vec<&str> = Vec::new();
    for key in sec.keys {
        match t.field(key.name) {
            Some(f) => {
                let v = read(cx, &f, key).map_err(|e| with_hint(e, key, out))?;
                if let Some(check) = key.check {
                    check(out, &v).map_err(|fix| {
                        let help = if !fix.help.is_empty() {
                            fix.help.clone()
                        } else if matches!(key.ty, Ty::Path { .. }) {
                            relative_path_help(cx)
                        } else {
                            hint(key, out)
                        };
                        f.err(cx, fix.message).with_help(help)
                    })?;
                }
                key.store(out, v);
                given.push(key.name);
            }
            None => match key.default {
                Dflt::Required(example) => {
                    return Err(cx
                        .error(
                            t.at,
                            &join(&t.path, key.name),
                            format!("missing required key `{}` in {}", key.name, t.header),
                        )
                        .with_help(format!("for example: {example}")));
                }
                Dflt::Rule {
                    compute: Some(compute),
                    ..
                } => match compute(out) {
                    Ok(Some(v)) => key.store(out, v),
                    Ok(None) => {}
                    Err(fix) => return Err(fix_error(cx, t, fix)),
                },
                _ => {}
            },
        }
    }
    // Conditions are checked once the whole table is read, so they do not depend on the order
    // in which the user wrote the keys.
    for key in sec.keys {
        if let (Some(o), Some(f)) = (&key.only_if, t.field(key.name)) {
            if !(o.when)(out) {
                return Err(cx.error(f.key_at, &f.path, o.message).with_help(o.help));
            }
        }
    }
    for child in sec.children {
        child.parse(cx, t, out)?;
    }
    for rule in sec.rules {
        (rule.check)(out, &given).map_err(|fix| fix_error(cx, t, fix))?;
    }
    Ok(())
}

/// A rule's finding as an error: at the first of its paths the file has, else at the table.
pub(super) fn fix_error(cx: &Ctx, t: &Table, fix: Fix) -> ScenarioError {
    let found = fix
        .at
        .iter()
        .find_map(|rel| t.locate(rel).map(|at| (rel, at)));
    let (field, at) = match (found, fix.at.first()) {
        (Some((rel, at)), _) => (join(&t.path, rel), at),
        (None, Some(rel)) => (join(&t.path, rel), t.at),
        (None, None) => (t.path.clone(), t.at),
    };
    let err = cx.error(at, &field, fix.message);
    if fix.help.is_empty() {
        err
    } else {
        err.with_help(fix.help)
    }
}

/// Give a value error without its own help the generic one from the declaration.
fn with_hint<S>(e: ScenarioError, key: &Key<S>, section: &S) -> ScenarioError {
    match e.help {
        Some(_) => e,
        None => {
            let h = hint(key, section);
            e.with_help(h)
        }
    }
}

/// "for example: cpus = 2 (the default)": how to write a valid value, the default when there
/// is one. (A range error's message already gives the range.)
pub(super) fn hint<S>(key: &Key<S>, section: &S) -> String {
    match (&key.default, key.value(section)) {
        (Dflt::Required(ex), _) => format!("for example: {ex}"),
        // A zero size or duration says little about how to write one.
        (Dflt::Value, Some(Val::U(0))) if !matches!(key.ty, Ty::UInt { .. }) => {
            format!("for example: {} = {}", key.name, key.ty.example())
        }
        (Dflt::Value, Some(v)) => format!(
            "for example: {} = {} (the default)",
            key.name,
            super::show::format_val(&key.ty, &v)
        ),
        _ => format!("for example: {} = {}", key.name, key.ty.example()),
    }
}

/// Read one present key by its type and check its range.
fn read<S>(cx: &Ctx, f: &Field, key: &Key<S>) -> Res<Val> {
    let out_of_range = |found: String| {
        let why = match key.why {
            "" => String::new(),
            w => format!(" ({w})"),
        };
        let range = key.ty.range().unwrap_or_default();
        f.err(cx, format!("must be {range}{why}, found {found}"))
    };
    Ok(match key.ty {
        Ty::Size { min, max } => {
            let v = f.size(cx)?;
            if v < min || v > max {
                return Err(out_of_range(describe_size(v)));
            }
            Val::U(v)
        }
        Ty::Duration { min } => {
            let v = f.duration(cx)?;
            if v < min {
                return Err(out_of_range(super::units::format_duration(v)));
            }
            Val::U(v)
        }
        Ty::Bandwidth => Val::U(f.bandwidth(cx)?),
        Ty::UInt { min, max } => {
            let v = f.uint(cx)?;
            if v < min || v > max {
                return Err(out_of_range(v.to_string()));
            }
            Val::U(v)
        }
        Ty::Int { min, max } => {
            let v = f.int(cx)?;
            if v < min || v > max {
                return Err(out_of_range(v.to_string()));
            }
            Val::I(v)
        }
        Ty::Float { .. } => {
            let v = f.float(cx)?;
            if !key.ty.float_ok(v) {
                return Err(out_of_range(v.to_string()));
            }
            Val::F(v)
        }
        Ty::Bool => Val::B(f.boolean(cx)?),
        Ty::Choice { names, what } => Val::S(f.choice(cx, names, what)?.to_string()),
        Ty::Text { what } => {
            let v = f.string(cx, "a string")?;
            if v.trim().is_empty() {
                return Err(f.err(cx, format!("the {what} must not be empty")));
            }
            Val::S(v)
        }
        Ty::Path { what, expected } => {
            let v = f.string(cx, expected)?;
            if v.is_empty() {
                return Err(f.err(cx, format!("the {what} path must not be empty")));
            }
            Val::S(resolve(cx, &v).to_string_lossy().into_owned())
        }
        Ty::UIntList { labels } => Val::L(uint_list(cx, f, labels)?),
        Ty::MemoryKnob => Val::S(memory_knob(cx, f, key.name)?),
    })
}

/// A cgroup memory file's value (`Ty::MemoryKnob`): a TOML integer of bytes, or a string the
/// kernel's `page_counter_memparse` accepts; kept as text.
fn memory_knob(cx: &Ctx, f: &Field, name: &str) -> Res<String> {
    let text = match f.value() {
        Some(Value::Integer(i)) if *i.value() >= 0 => i.value().to_string(),
        Some(Value::String(s)) => s.value().clone(),
        _ => return Err(f.type_err(cx, "a byte count or \"max\"")),
    };
    match crate::machine::memcontrol::parse_memory_knob(&format!("memory.{name}"), &text) {
        Ok(_) => Ok(text),
        Err(e) => Err(f.err(cx, e)),
    }
}

/// `[256, 256, 32, 0]`: exactly one non-negative integer per label.
fn uint_list(cx: &Ctx, f: &Field, labels: &[&str]) -> Res<Vec<u64>> {
    let n = labels.len();
    let Some(Value::Array(arr)) = f.value() else {
        return Err(f.type_err(
            cx,
            &format!("an array of {n} integers [{}]", labels.join(", ")),
        ));
    };
    if arr.len() != n {
        return Err(f.err(
            cx,
            format!(
                "expected exactly {n} values ({}), found {}",
                labels.join(", "),
                arr.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(n);
    for (i, v) in arr.iter().enumerate() {
        let at = v.span().map_or(f.val_at, |r| r.start);
        let path = format!("{}[{i}]", f.path);
        match v {
            Value::Integer(x) if *x.value() >= 0 => out.push(*x.value() as u64),
            Value::Integer(x) => {
                return Err(cx
                    .error(
                        at,
                        &path,
                        format!("must not be negative, found {}", x.value()),
                    )
                    .with_help(format!("the {} value must be 0 or more", labels[i])))
            }
            _ => {
                return Err(cx
                    .error(
                        at,
                        &path,
                        format!("expected a non-negative integer, found {}", v.type_name()),
                    )
                    .with_help(format!("write the {} value as a plain integer", labels[i])))
            }
        }
    }
    Ok(out)
}
