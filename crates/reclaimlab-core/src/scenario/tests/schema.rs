//! The declarations themselves: complete (every field reachable from a key or a nested table),
//! their defaults the pinned ones, each key read and written by the parser and the printer.

use std::collections::BTreeMap;

use crate::scenario::schema::{Dflt, Key, Section, Ty, Val};
use crate::scenario::sections::*;
use crate::scenario::*;

/// Each field of a value by name, with its value in Debug form, read from the struct's
/// derived `Debug` text: a field added to a struct is seen here with no list to keep.
pub(super) fn debug_fields<S: std::fmt::Debug>(s: &S) -> Vec<(String, String)> {
    let text = format!("{s:?}");
    let Some(open) = text.find(" { ") else {
        return Vec::new();
    };
    let body = &text[open + 3..text.len() - 2];
    let mut out = Vec::new();
    let (mut depth, mut in_str, mut esc, mut start) = (0i32, false, false, 0usize);
    let mut push = |part: &str| {
        let (name, value) = part.split_once(": ").expect("a `name: value` field");
        out.push((name.to_string(), value.to_string()));
    };
    for (i, c) in body.char_indices() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 && body[i..].starts_with(", ") => {
                push(&body[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    push(&body[start..]);
    out
}

/// A valid value of the key's type other than `cur`.
pub(super) fn other_value(ty: &Ty, cur: &Option<Val>) -> Val {
    let candidates: Vec<Val> = match *ty {
        Ty::Size { min, max } => vec![Val::U(min), Val::U(max), Val::U(min + 4096)],
        Ty::Duration { min } => vec![Val::U(min), Val::U(min + 7)],
        Ty::Bandwidth => vec![Val::U(1), Val::U(12345)],
        Ty::UInt { min, max } => vec![Val::U(min), Val::U(max)],
        Ty::Int { min, max } => vec![Val::I(min), Val::I(max)],
        Ty::Float { .. } => vec![Val::F(0.25), Val::F(0.5)],
        Ty::Bool => vec![Val::B(false), Val::B(true)],
        Ty::Choice { names, .. } => names.iter().map(|n| Val::S(n.to_string())).collect(),
        Ty::Text { .. } | Ty::Path { .. } => vec![Val::S("a".into()), Val::S("b".into())],
        Ty::UIntList { labels } => vec![Val::L((1..=labels.len() as u64).collect())],
        Ty::MemoryKnob => vec![Val::S("max".into()), Val::S("1M".into())],
    };
    candidates
        .into_iter()
        .find(|c| Some(c) != cur.as_ref())
        .expect("a second value")
}

/// For each key of `sec`, which fields of `base` storing another value changes.
fn reach<S: Clone + std::fmt::Debug>(
    sec: &Section<S>,
    base: &S,
) -> BTreeMap<&'static str, Vec<String>> {
    let before = debug_fields(base);
    let mut out = BTreeMap::new();
    for key in sec.keys {
        assert!(key.applies(base), "{}: base must satisfy only_if", key.name);
        let mut s = base.clone();
        key.store(&mut s, other_value(&key.ty, &key.value(base)));
        let changed: Vec<String> = debug_fields(&s)
            .into_iter()
            .zip(&before)
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, _)| a.0)
            .collect();
        out.insert(key.name, changed);
    }
    out
}

/// Every field is set by exactly one key (or by two keys that share it: an enum and the value
/// it carries), or is a nested table of the section; every key sets exactly one field.
pub(super) fn check_complete<S: Clone + std::fmt::Debug>(
    sec: &Section<S>,
    base: &S,
    nested: &[(&str, &str)],
    shared: &[(&str, &[&str])],
) {
    let reached = reach(sec, base);
    for (key, changed) in &reached {
        assert_eq!(
            changed.len(),
            1,
            "[{}] key `{key}` sets {changed:?}",
            sec.name
        );
    }
    for (field, _) in debug_fields(base) {
        let field = field.as_str();
        let keys: Vec<&str> = reached
            .iter()
            .filter(|(_, c)| c.iter().any(|f| f == field))
            .map(|(k, _)| *k)
            .collect();
        if let Some((_, child)) = nested.iter().find(|(f, _)| *f == field) {
            assert!(keys.is_empty(), "[{}] {field} is a nested table", sec.name);
            assert!(
                sec.allowed().contains(child),
                "[{}] no table {child}",
                sec.name
            );
            continue;
        }
        match shared.iter().find(|(f, _)| *f == field) {
            Some((_, ks)) => assert_eq!(&keys, ks, "[{}] {field}", sec.name),
            None => assert_eq!(
                keys.len(),
                1,
                "[{}] field {field} is set by {keys:?}",
                sec.name
            ),
        }
    }
}

#[test]
fn every_field_is_reachable_from_exactly_one_key() {
    let root_nested = [
        ("sim", "sim"),
        ("host", "host"),
        ("sysctl", "sysctl"),
        ("swap", "swap"),
        ("disk", "disk"),
        ("writeback", "writeback"),
        ("cost", "cost"),
        ("oom", "oom"),
        ("policy", "policy"),
        ("fs", "fs"),
        ("xen", "xen"),
        ("cgroups", "cgroup"),
        ("controller", "controller"),
        ("guests", "guest"),
        ("workloads", "workload"),
    ];
    check_complete(&ROOT, &Scenario::default(), &root_nested, &[]);
    check_complete(&SIM, &SimConfig::default(), &[], &[]);
    check_complete(&HOST, &HostConfig::default(), &[], &[]);
    check_complete(&SYSCTL, &Sysctl::default(), &[], &[]);
    check_complete(&SWAP, &SwapDevice::default(), &[], &[]);
    check_complete(&DISK, &DiskDevice::default(), &[], &[]);
    check_complete(&WRITEBACK, &WritebackConfig::default(), &[], &[]);
    check_complete(&COST, &CostModel::default(), &[], &[]);
    check_complete(&OOM, &OomConfig::default(), &[], &[]);
    check_complete(&KVM, &KvmCost::default(), &[], &[]);
    let guest_nested = [
        ("sysctl", "sysctl"),
        ("swap", "swap"),
        ("cost", "cost"),
        ("kvm", "kvm"),
        ("policy", "policy"),
        ("vbds", "vbd"),
        ("workloads", "workload"),
    ];
    // A shutdown must come after the start (its check), so the base has one.
    let guest = GuestConfig {
        shutdown_ns: Some(NS_PER_SEC),
        ..GuestConfig::default()
    };
    check_complete(&GUEST, &guest, &guest_nested, &[]);
    let nested = [
        ("anon", "anon"),
        ("file", "file"),
        ("trace", "trace"),
        ("highorder", "highorder"),
        ("fsmark", "fsmark"),
        ("simoops", "simoops"),
        ("drop_caches", "drop_caches"),
        ("stat", "stat"),
        ("blkio", "blkio"),
        ("memory_reclaim", "memory_reclaim"),
        ("lru_gen", "lru_gen"),
    ];
    check_complete(&WORKLOAD, &Workload::default(), &nested, &[]);
    // zipf_alpha and time_unit only apply with these settings, and live inside the enum.
    let anon = AnonSpec {
        pattern: AccessPattern::Zipf { alpha: 1.0 },
        ..AnonSpec::default()
    };
    check_complete(
        &ANON,
        &anon,
        &[],
        &[("pattern", &["pattern", "zipf_alpha"])],
    );
    check_complete(&FILE, &FileSpec::default(), &[], &[]);
    let trace = TraceSpec {
        time: TraceTime::Trace {
            unit_ns: NS_PER_SEC,
        },
        ..TraceSpec::default()
    };
    check_complete(&TRACE, &trace, &[], &[("time", &["time", "time_unit"])]);
    check_complete(&HIGHORDER, &HighOrderSpec::default(), &[], &[]);
    check_complete(&MEMORY_RECLAIM, &MemoryReclaimSpec::default(), &[], &[]);
    check_complete(&LRU_GEN, &LruGenSpec::default(), &[], &[]);
    check_complete(&CONTROLLER, &ControllerConfig::default(), &[], &[]);
    // The filesystem tables ([fs], fsmark, simoops, stat, drop_caches): schema_fs.rs.
}

/// What each key's declaration says about its default agrees with the section's `Default`:
/// a value for `Value`, nothing for `Unset`; and a table left empty parses to the defaults.
pub(super) fn check_declared_defaults<S: Default>(sec: &Section<S>) {
    let d = S::default();
    for key in sec.keys {
        let v = key.value(&d);
        match key.default {
            Dflt::Value => assert!(
                v.is_some(),
                "[{}] {} has no default value",
                sec.name,
                key.name
            ),
            Dflt::Unset(_) => assert!(v.is_none(), "[{}] {} is not unset", sec.name, key.name),
            Dflt::Rule { .. } | Dflt::Required(_) => {}
        }
        if let Some(v) = v {
            check_type(key, &v);
        }
    }
}

/// The default's `Val` is the one the key's type produces.
fn check_type<S>(key: &Key<S>, v: &Val) {
    let ok = matches!(
        (&key.ty, v),
        (
            Ty::Size { .. } | Ty::Duration { .. } | Ty::Bandwidth | Ty::UInt { .. },
            Val::U(_)
        ) | (Ty::Int { .. }, Val::I(_))
            | (Ty::Float { .. }, Val::F(_))
            | (Ty::Bool, Val::B(_))
            | (
                Ty::Choice { .. } | Ty::Text { .. } | Ty::Path { .. } | Ty::MemoryKnob,
                Val::S(_)
            )
            | (Ty::UIntList { .. }, Val::L(_))
    );
    assert!(ok, "{}: {v:?} is not a {}", key.name, key.ty);
}

#[test]
fn declared_defaults_match_the_section_defaults() {
    check_declared_defaults(&ROOT);
    check_declared_defaults(&SIM);
    check_declared_defaults(&HOST);
    check_declared_defaults(&SYSCTL);
    check_declared_defaults(&SWAP);
    check_declared_defaults(&DISK);
    check_declared_defaults(&WRITEBACK);
    check_declared_defaults(&COST);
    check_declared_defaults(&OOM);
    check_declared_defaults(&WORKLOAD);
    check_declared_defaults(&ANON);
    check_declared_defaults(&FILE);
    check_declared_defaults(&TRACE);
    check_declared_defaults(&HIGHORDER);
    // Empty tables are all defaults.
    let text = "[sim]\n[host]\n[sysctl]\n[swap]\n[disk]\n[writeback]\n[cost]\n[oom]\n[policy]\n\
                [[workload]]\nname = \"w\"\n[workload.highorder]\ncount = 1\n";
    let s = parse_str(text, "scenario.toml").unwrap();
    let mut want = Scenario::default();
    want.workloads.push(Workload {
        name: "w".into(),
        highorder: Some(HighOrderSpec {
            count: Some(1),
            ..HighOrderSpec::default()
        }),
        ..Workload::default()
    });
    assert_eq!(s, want);
}

/// A value given in the file is what the printer shows, for every key of the plain tables.
fn check_prints_given_values<S: Default>(table: &str, sec: &Section<S>) {
    let base = "[[workload]]\nname = \"w\"\nanon.size = \"1GiB\"\n";
    for key in sec.keys {
        if matches!(key.ty, Ty::Path { .. }) {
            continue; // a path must name a readable file: its own tests (zoneinfo, samples)
        }
        let v = other_value(&key.ty, &key.value(&S::default()));
        let text = crate::scenario::show::format_val(&key.ty, &v);
        let scn = format!("[{table}]\n{} = {text}\n{base}", key.name);
        let s = parse_str(&scn, "t.toml").unwrap_or_else(|e| panic!("{e}"));
        let shown = crate::scenario::to_toml(&s);
        assert!(
            shown.contains(&format!("\n{} = {text} ", key.name)),
            "[{table}] {} = {text} not shown:\n{shown}",
            key.name
        );
    }
}

#[test]
fn every_key_parses_and_prints_its_value() {
    check_prints_given_values("sim", &SIM);
    check_prints_given_values("swap", &SWAP);
    check_prints_given_values("disk", &DISK);
    check_prints_given_values("writeback", &WRITEBACK);
    check_prints_given_values("cost", &COST);
    check_prints_given_values("oom", &OOM);
    check_prints_given_values("fs", &FS);
}
