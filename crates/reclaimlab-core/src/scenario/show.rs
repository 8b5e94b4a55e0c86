//! A scenario written back as TOML with every default filled in (`reclaimlab run
//! --show-defaults`, and the `scenario` text of summary.json).
//!
//! The printer walks the same declarations as the parser (`sections/`), so the output has
//! every key, in declaration order, one per line with its doc (and unit and range) as a comment.
//! Optional keys that are unset are printed as commented-out lines so the reader still sees
//! that they exist; keys that do not apply (`zipf_alpha` without `pattern = "zipf"`) are left
//! out.
//!
//! Computed defaults are printed as values. A key left to a rule the parser applies
//! (`trace.format` from the file name, `time_unit` from the format) is stored in the scenario,
//! so it is simply its value. `sysctl.min_free_kbytes` is different: the scenario keeps `None`
//! and the watermarks policy computes it from the zones when the machine is built. It is
//! printed as `min_free_kbytes = 67584  # ...; default computed by watermarks = "v6.1": ...`,
//! and the per-zone watermarks and protection it leads to follow as comments under `[sysctl]`.
//!
//! Round trip: parsing the output gives back the same scenario, except that a computed
//! `min_free_kbytes` comes back as that explicit value (`Some(67584)` for `None`); both build
//! the same machine, and an explicit value equal to the computed one is printed exactly like
//! the computed one, so the text is a fixed point: `to_toml(parse(to_toml(s))) == to_toml(s)`.
//! The tests compare scenarios after [`resolve_computed`], which makes that one substitution.
//! The output is deterministic: tables, keys and zones in a fixed order, exact unit formats.

use super::schema::{Dflt, Key, Section, Ty, Val};
use super::units::{format_bandwidth, format_duration, format_size};
pub(super) use super::writer::{float, string, uint, Writer};
use super::Scenario;

/// Render `s` as TOML by its top-level section `root` (`scenario::to_toml`). See the module
/// documentation.
pub(super) fn to_toml(root: &Section<Scenario>, s: &Scenario) -> String {
    let mut w = Writer::default();
    w.comment("reclaimlab scenario, every setting shown (unset options are commented out).");
    w.comment("Sizes: B, KiB, MiB, GiB, TiB (K, M, G, T are binary too; KB, MB, GB, TB are powers of 1000),");
    w.comment("or an integer number of bytes. Durations: ns, us, ms, s, min, h. Bandwidths: a size per second.");
    w.blank();
    show_section(&mut w, root, s, s, "");
    w.finish()
}

/// `s` with every default that the printer shows as a computed value filled in
/// (`sysctl.min_free_kbytes`), as parsing `to_toml(s)` gives it back. Two scenarios with equal
/// `resolve_computed` run identically.
pub fn resolve_computed(s: &Scenario) -> Scenario {
    let mut r = s.clone();
    if r.sysctl.min_free_kbytes.is_none() {
        if let Some(c) = super::computed::min_free_kbytes(s) {
            if let Val::U(v) = c.value {
                r.sysctl.min_free_kbytes = Some(v);
            }
        }
    }
    // Each guest's, worked out for the guest's own machine.
    for (g, rg) in s.guests.iter().zip(&mut r.guests) {
        if rg.sysctl.min_free_kbytes.is_none() {
            if let Some(c) = super::computed::min_free_kbytes(&g.as_machine(s)) {
                if let Val::U(v) = c.value {
                    rg.sysctl.min_free_kbytes = Some(v);
                }
            }
        }
    }
    r
}

/// Print the keys of table `sec` (its header is already written), then its nested tables.
pub(super) fn show_section<S>(
    w: &mut Writer,
    sec: &Section<S>,
    s: &S,
    root: &Scenario,
    prefix: &str,
) {
    for key in sec.keys {
        if !key.applies(s) {
            continue;
        }
        let comment = key_comment(key);
        let computed = key.computed.and_then(|f| f(root));
        match (key.value(s), computed) {
            (v, Some(c)) if v.is_none() || v.as_ref() == Some(&c.value) => w.kv(
                key.name,
                format_val(&key.ty, &c.value),
                &format!("{comment}; {}", c.how),
            ),
            (Some(v), _) => w.kv(key.name, format_val(&key.ty, &v), &comment),
            (None, _) => {
                let unset = match key.default {
                    Dflt::Unset(m) | Dflt::Rule { text: m, .. } => format!("{comment}; unset: {m}"),
                    _ => comment,
                };
                w.unset(key.name, &unset);
            }
        }
    }
    if let Some(derived) = sec.derived {
        for line in derived(root) {
            w.comment(&line);
        }
    }
    for child in sec.children {
        child.show(w, s, root, prefix);
    }
}

/// The key's doc with its unit and range: "vm.min_free_kbytes (KiB, between 128 and 262144)".
pub(super) fn key_comment<S>(key: &Key<S>) -> String {
    let parts: Vec<String> = [key.unit.to_string(), key.ty.range().unwrap_or_default()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        key.doc.to_string()
    } else {
        format!("{} ({})", key.doc, parts.join(", "))
    }
}

/// A value as TOML text, in the key type's unit: sizes "4GiB", durations "100ms".
pub(super) fn format_val(ty: &Ty, v: &Val) -> String {
    match (ty, v) {
        // A size without an exact unit is written as a bare integer of bytes: a quoted number
        // without a unit is refused when read (it is most likely a unit forgotten).
        (Ty::Size { .. }, Val::U(x)) => match format_size(*x) {
            s if *x != 0 && s.bytes().all(|b| b.is_ascii_digit()) => uint(*x),
            s => string(&s),
        },
        (Ty::Duration { .. }, Val::U(x)) => string(&format_duration(*x)),
        (Ty::Bandwidth, Val::U(x)) => string(&format_bandwidth(*x)),
        (_, Val::U(x)) => uint(*x),
        (_, Val::I(x)) => x.to_string(),
        (_, Val::F(x)) => float(*x),
        (_, Val::B(x)) => x.to_string(),
        (_, Val::S(x)) => string(x),
        (_, Val::L(xs)) => {
            let items: Vec<String> = xs.iter().map(|x| uint(*x)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}
