//! The declarations themselves: complete (every field reachable from a key or a nested table),
//! their defaults the pinned ones, each key read and written by the parser and the printer.

use std::collections::BTreeMap;

use crate::scenario::schema::{Dflt, Key, Section, Ty, Val};
use crate::scenario::sections::*;
use crate::scenario::*;

/// Each field of a value by name, its value in Debug form. The exhaustive pattern makes a
/// field added to the struct fail to compile here until it is listed (and so tested).
macro_rules! fields {
    ($v:expr, $T:ident { $($f:ident),* $(,)? }) => {{
        let $T { $($f),* } = $v;
        vec![$((stringify!($f), format!("{:?}", $f))),*]
    }};
}
pub(super) use fields;

fn scenario_fields(s: &Scenario) -> Vec<(&'static str, String)> {
    fields!(
        s,
        Scenario {
            name,
            sim,
            host,
            sysctl,
            swap,
            disk,
            writeback,
            cost,
            oom,
            policy,
            fs,
            xen,
            guests,
            workloads
        }
    )
}
fn guest_fields(s: &GuestConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        GuestConfig {
            name,
            ram_bytes,
            vcpus,
            machine,
            thp,
            page_tables,
            fragment_stride,
            start_ns,
            shutdown_ns,
            boot_resident_bytes,
            page_reporting_order,
            background_frees,
            background_lifetime_ns,
            discard_inhibited,
            sysctl,
            swap,
            cost,
            kvm,
            policy,
            vbds,
            workloads
        }
    )
}
fn kvm_fields(s: &KvmCost) -> Vec<(&'static str, String)> {
    fields!(
        s,
        KvmCost {
            host_fault_ns,
            report_ns,
            discard_page_ns,
            isolate_ns,
            hypercall_ns,
            scan_compare_ns,
            kthread_wakeup_ns
        }
    )
}
fn sim_fields(s: &SimConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        SimConfig {
            seed,
            duration_ns,
            sample_interval_ns,
            max_duration_ns
        }
    )
}
fn host_fields(s: &HostConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        HostConfig {
            ram_bytes,
            cpus,
            cpu_contention,
            thp,
            thp_defrag,
            machine,
            lowmem_bytes,
            zoneinfo,
            fragmented_zone,
            fragment_stride,
            kernel_used_bytes,
            page_tables,
            pcp_lists,
            vmstat_drift
        }
    )
}
fn sysctl_fields(s: &Sysctl) -> Vec<(&'static str, String)> {
    fields!(
        s,
        Sysctl {
            min_free_kbytes,
            watermark_scale_factor,
            watermark_boost_factor,
            compaction_proactiveness,
            lowmem_reserve_ratio,
            swappiness,
            page_cluster,
            vfs_cache_pressure
        }
    )
}
fn swap_fields(s: &SwapDevice) -> Vec<(&'static str, String)> {
    fields!(
        s,
        SwapDevice {
            size_bytes,
            read_latency_ns,
            write_latency_ns,
            bandwidth_bytes_per_sec,
            latency_jitter,
            nr_requests,
            max_request_bytes,
            rotational
        }
    )
}
fn disk_fields(s: &DiskDevice) -> Vec<(&'static str, String)> {
    fields!(
        s,
        DiskDevice {
            read_latency_ns,
            write_latency_ns,
            bandwidth_bytes_per_sec,
            latency_jitter,
            nr_requests,
            readahead_pages
        }
    )
}
fn writeback_fields(s: &WritebackConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        WritebackConfig {
            dirty_background_ratio,
            dirty_ratio
        }
    )
}
fn cost_fields(s: &CostModel) -> Vec<(&'static str, String)> {
    fields!(
        s,
        CostModel {
            anon_touch_ns,
            anon_fault_ns,
            swapcache_fault_ns,
            major_fault_ns,
            file_hit_ns,
            file_write_ns,
            file_miss_ns,
            readahead_alloc_ns,
            scan_unmapped_ns,
            scan_mapped_ns,
            unmap_ns,
            swapout_submit_ns,
            free_page_ns,
            slowpath_ns,
            compact_scan_ns,
            migrate_page_ns,
            balance_start_ns,
            balance_iteration_ns,
            wakeup_latency_ns,
            wakeup_latency_samples
        }
    )
}
fn oom_fields(s: &OomConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        OomConfig {
            allowed,
            reaper_delay_ns,
            stop_on_kill
        }
    )
}
fn workload_fields(s: &Workload) -> Vec<(&'static str, String)> {
    fields!(
        s,
        Workload {
            name,
            start_ns,
            duration_ns,
            oom_score_adj,
            anon,
            file,
            trace,
            highorder,
            fsmark,
            simoops,
            drop_caches,
            stat,
            blkio
        }
    )
}
fn anon_fields(s: &AnonSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        AnonSpec {
            size_bytes,
            pattern,
            passes,
            write_fraction,
            think_ns,
            hold_ns
        }
    )
}
fn file_fields(s: &FileSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        FileSpec {
            size_bytes,
            op,
            passes,
            hold_ns
        }
    )
}
fn trace_fields(s: &TraceSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        TraceSpec {
            path,
            format,
            compression,
            kind,
            object_size,
            write_fraction,
            passes,
            time,
            think_ns,
            hold_ns,
            max_records,
        }
    )
}
fn highorder_fields(s: &HighOrderSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        HighOrderSpec {
            order,
            rate_per_sec,
            lifetime_ns,
            lifetimes,
            gfp,
            count
        }
    )
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
    };
    candidates
        .into_iter()
        .find(|c| Some(c) != cur.as_ref())
        .expect("a second value")
}

/// For each key of `sec`, which fields of `base` storing another value changes.
fn reach<S: Clone>(
    sec: &Section<S>,
    base: &S,
    fields: fn(&S) -> Vec<(&'static str, String)>,
) -> BTreeMap<&'static str, Vec<&'static str>> {
    let before = fields(base);
    let mut out = BTreeMap::new();
    for key in sec.keys {
        assert!(key.applies(base), "{}: base must satisfy only_if", key.name);
        let mut s = base.clone();
        key.store(&mut s, other_value(&key.ty, &key.value(base)));
        let changed: Vec<&str> = fields(&s)
            .iter()
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
pub(super) fn check_complete<S: Clone>(
    sec: &Section<S>,
    base: &S,
    fields: fn(&S) -> Vec<(&'static str, String)>,
    nested: &[(&str, &str)],
    shared: &[(&str, &[&str])],
) {
    let reached = reach(sec, base, fields);
    for (key, changed) in &reached {
        assert_eq!(
            changed.len(),
            1,
            "[{}] key `{key}` sets {changed:?}",
            sec.name
        );
    }
    for (field, _) in fields(base) {
        let keys: Vec<&str> = reached
            .iter()
            .filter(|(_, c)| c.contains(&field))
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
        ("guests", "guest"),
        ("workloads", "workload"),
    ];
    check_complete(
        &ROOT,
        &Scenario::default(),
        scenario_fields,
        &root_nested,
        &[],
    );
    check_complete(&SIM, &SimConfig::default(), sim_fields, &[], &[]);
    check_complete(&HOST, &HostConfig::default(), host_fields, &[], &[]);
    check_complete(&SYSCTL, &Sysctl::default(), sysctl_fields, &[], &[]);
    check_complete(&SWAP, &SwapDevice::default(), swap_fields, &[], &[]);
    check_complete(&DISK, &DiskDevice::default(), disk_fields, &[], &[]);
    check_complete(
        &WRITEBACK,
        &WritebackConfig::default(),
        writeback_fields,
        &[],
        &[],
    );
    check_complete(&COST, &CostModel::default(), cost_fields, &[], &[]);
    check_complete(&OOM, &OomConfig::default(), oom_fields, &[], &[]);
    check_complete(&KVM, &KvmCost::default(), kvm_fields, &[], &[]);
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
    check_complete(&GUEST, &guest, guest_fields, &guest_nested, &[]);
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
    ];
    check_complete(
        &WORKLOAD,
        &Workload::default(),
        workload_fields,
        &nested,
        &[],
    );
    // zipf_alpha and time_unit only apply with these settings, and live inside the enum.
    let anon = AnonSpec {
        pattern: AccessPattern::Zipf { alpha: 1.0 },
        ..AnonSpec::default()
    };
    check_complete(
        &ANON,
        &anon,
        anon_fields,
        &[],
        &[("pattern", &["pattern", "zipf_alpha"])],
    );
    check_complete(&FILE, &FileSpec::default(), file_fields, &[], &[]);
    let trace = TraceSpec {
        time: TraceTime::Trace {
            unit_ns: NS_PER_SEC,
        },
        ..TraceSpec::default()
    };
    check_complete(
        &TRACE,
        &trace,
        trace_fields,
        &[],
        &[("time", &["time", "time_unit"])],
    );
    check_complete(
        &HIGHORDER,
        &HighOrderSpec::default(),
        highorder_fields,
        &[],
        &[],
    );
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
                Ty::Choice { .. } | Ty::Text { .. } | Ty::Path { .. },
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
