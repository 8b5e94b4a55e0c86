//! `docs/scenario-reference.md`, generated from the schema's declarations (`sections/`).
//!
//! The committed file is checked by the test `scenario_reference_is_current`; when it is stale,
//! regenerate it with
//! `RECLAIMLAB_WRITE_DOCS=1 cargo test -p reclaimlab-core scenario_reference`.

use std::fmt::Write as _;

use super::schema::{Dflt, Key, Section, Ty};
use super::show::format_val;
use super::Scenario;

/// The whole reference, as committed in `docs/scenario-reference.md`, from the top-level
/// section `root` (`scenario::reference`).
pub(super) fn reference(root: &Section<Scenario>) -> String {
    let mut out = String::from(
        "# Scenario reference\n\n\
         <!-- Generated from crates/reclaimlab-core/src/scenario/sections/ by scenario/docs.rs; \
         do not edit. Regenerate with: RECLAIMLAB_WRITE_DOCS=1 cargo test -p reclaimlab-core \
         scenario_reference -->\n\n\
         A scenario is a TOML file. Every key is optional unless marked required; \
         `reclaimlab run FILE --show-defaults` prints a scenario with every value filled in, \
         computed defaults included, and the per-zone watermarks they lead to.\n\n\
         Units: **sizes** are strings with a unit, `B`, `KiB`, `MiB`, `GiB`, `TiB` (`K`, `M`, \
         `G`, `T` are binary too; `KB`, `MB`, `GB`, `TB` are powers of 1000), or an integer \
         number of bytes; fractions are allowed when the result is a whole number of bytes \
         (`\"1.5GiB\"`). **Durations** are strings with a unit, `ns`, `us`, `ms`, `s`, `min`, \
         `h` (a bare `0` needs none). **Bandwidths** are a size per second (`\"1GiB/s\"`). \
         Integers above 2^63-1 may be written as decimal strings.\n\n",
    );
    doc_section(&mut out, root, "Top level", "", "");
    out
}

/// The reference entry of one table and, after it, of its nested tables.
pub(super) fn doc_section<S: Default>(
    out: &mut String,
    sec: &Section<S>,
    header: &str,
    note: &str,
    path: &str,
) {
    let title = if header.starts_with('[') {
        format!("`{header}`")
    } else {
        header.to_string()
    };
    let _ = writeln!(out, "## {title}\n\n{}", sec.doc);
    if !note.is_empty() {
        let _ = writeln!(out, "{note}");
    }
    out.push('\n');
    if !sec.keys.is_empty() {
        out.push_str("| Key | Type | Unit | Default | Range | Description |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        let defaults = S::default();
        for key in sec.keys {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} |",
                key.name,
                cell(&key.ty.to_string()),
                cell(&unit(key)),
                cell(&default_text(key, &defaults)),
                cell(&key.ty.range().unwrap_or_default()),
                cell(&description(key)),
            );
        }
        out.push('\n');
    }
    if !sec.rules.is_empty() {
        out.push_str("Checks:\n\n");
        for r in sec.rules {
            let _ = writeln!(out, "- {}: {}", r.name, r.doc);
        }
        out.push('\n');
    }
    for child in sec.children {
        child.doc(out, path);
    }
}

fn unit<S>(key: &Key<S>) -> String {
    match key.ty {
        Ty::Size { .. } => "bytes".into(),
        Ty::Duration { .. } => "time".into(),
        Ty::Bandwidth => "bytes/s".into(),
        _ => key.unit.into(),
    }
}

/// The default as the reference states it: a value, "unset: ..", "computed: .." or "required".
pub(super) fn default_text<S>(key: &Key<S>, defaults: &S) -> String {
    match key.default {
        Dflt::Value => match key.value(defaults) {
            Some(v) => format!("`{}`", format_val(&key.ty, &v)),
            None => "unset".into(),
        },
        Dflt::Unset(m) => format!("unset: {m}"),
        Dflt::Rule { text, .. } => format!("computed: {text}"),
        Dflt::Required(ex) => format!("required, e.g. `{ex}`"),
    }
}

fn description<S>(key: &Key<S>) -> String {
    let mut d = key.doc.to_string();
    if !key.why.is_empty() {
        let _ = write!(d, "; range: {}", key.why);
    }
    if let Some(o) = &key.only_if {
        let _ = write!(d, ". Only with {}", o.cond);
    }
    d
}

/// Markdown table cells cannot hold `|` or line breaks.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    /// The committed reference must be what the declarations give today.
    #[test]
    fn scenario_reference_is_current() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/scenario-reference.md"
        );
        let want = crate::scenario::reference();
        if std::env::var_os("RECLAIMLAB_WRITE_DOCS").is_some_and(|v| v == "1") {
            std::fs::write(path, &want).expect("write docs/scenario-reference.md");
            return;
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/scenario-reference.md is stale (the scenario schema changed); regenerate it with\n  \
             RECLAIMLAB_WRITE_DOCS=1 cargo test -p reclaimlab-core scenario_reference\nand commit it"
        );
    }

    #[test]
    fn reference_names_every_key_and_switch() {
        let r = crate::scenario::reference();
        for header in [
            "`[host]`",
            "`[sysctl]`",
            "`[[workload]]`",
            "`[workload.trace]`",
            "`[policy]`",
        ] {
            assert!(r.contains(&format!("## {header}")), "{header}");
        }
        assert!(r.contains("| `min_free_kbytes` | integer | KiB | computed:"));
        for s in crate::policy::switches() {
            assert!(r.contains(&format!("### `{}`", s.name())));
            for v in s.variants() {
                assert!(r.contains(&format!("| `\"{}\"` |", v.name)));
            }
        }
    }
}
