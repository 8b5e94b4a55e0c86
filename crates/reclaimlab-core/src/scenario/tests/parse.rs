//! The parser: values, positions, messages; moved from `parse.rs` when it became generic.

// A machine table's literal ends in `..Default::default()` even where it names every field
// today, so that a key added to the table needs no edit here.
#![allow(clippy::needless_update)]

use std::path::Path;

use crate::scenario::source::closest;
use crate::scenario::*;
use crate::scenario::{schema, sections};

const MINIMAL: &str = "[[workload]]\nname = \"w\"\nanon.size = \"1GiB\"\n";

fn err(text: &str) -> ScenarioError {
    parse_str(text, "t.toml").expect_err("should fail")
}

#[test]
fn minimal_takes_every_default() {
    let s = parse_str(MINIMAL, "dir/my-scen.toml").unwrap();
    let mut want = Scenario {
        name: "my-scen".into(),
        ..Scenario::default()
    };
    want.workloads.push(Workload {
        name: "w".into(),
        start_ns: 0,
        duration_ns: None,
        oom_score_adj: 0,
        cgroup: None,
        anon: Some(AnonSpec {
            size_bytes: GIB,
            ..AnonSpec::default()
        }),
        file: None,
        trace: None,
        highorder: None,
        fsmark: None,
        simoops: None,
        drop_caches: None,
        memory_reclaim: None,
        lru_gen: None,
        stat: None,
        blkio: None,
    });
    assert_eq!(s, want);
}

#[test]
fn full_example() {
    let text = r#"
name = "anon-overcommit"
[sim]
seed = 7
duration = "60s"
sample_interval = "250ms"
max_duration = "2h"
[host]
ram = "8GiB"
cpus = 4
thp = false
thp_defrag = "never"
machine = "i440fx"
lowmem = "3GiB"
[sysctl]
min_free_kbytes = 67584
watermark_scale_factor = 150
watermark_boost_factor = 0
lowmem_reserve_ratio = [256, 256, 64, 0]
swappiness = 100
[swap]
size = "2GB"
read_latency = "100us"
write_latency = "50us"
bandwidth = "500MiB/s"
nr_requests = 64
max_request = "1MiB"
rotational = true
[disk]
read_latency = "1ms"
write_latency = "2ms"
bandwidth = "200MB/s"
readahead_pages = 64
[writeback]
dirty_background_ratio = 5
dirty_ratio = 15
[cost]
anon_touch = "25ns"
slowpath = "2us"
[oom]
allowed = false
reaper_delay = "10ms"
[policy]
kswapd_balance = "v6.1"
[[workload]]
name = "hog"
start = "1s"
duration = "10s"
oom_score_adj = 500
[workload.anon]
size = "6GiB"
pattern = "zipf"
zipf_alpha = 0.99
passes = 3
write_fraction = 0.5
hold = "2.5s"
[[workload]]
name = "reader"
file = { size = "8GiB", op = "write", passes = 2, hold = "1min" }
"#;
    let s = parse_str(text, "x.toml").unwrap();
    assert_eq!(s.name, "anon-overcommit");
    assert_eq!(
        s.sim,
        SimConfig {
            seed: 7,
            duration_ns: Some(60 * NS_PER_SEC),
            sample_interval_ns: 250 * NS_PER_MS,
            max_duration_ns: 7200 * NS_PER_SEC
        }
    );
    assert_eq!(s.host.ram_bytes, 8 * GIB);
    assert_eq!(s.host.cpus, 4);
    assert!(!s.host.thp);
    assert_eq!(s.host.thp_defrag, ThpDefrag::Never);
    assert_eq!(s.host.machine, MachineType::I440fx);
    assert_eq!(s.host.lowmem_bytes, Some(3 * GIB));
    assert_eq!(
        s.sysctl,
        Sysctl {
            min_free_kbytes: Some(67584),
            watermark_scale_factor: 150,
            watermark_boost_factor: 0,
            compaction_proactiveness: 20,
            lowmem_reserve_ratio: [256, 256, 64, 0],
            swappiness: 100,
            page_cluster: 3,
            ..Sysctl::default()
        }
    );
    assert_eq!(
        s.swap,
        SwapDevice {
            size_bytes: 2_000_000_000,
            read_latency_ns: 100 * NS_PER_US,
            write_latency_ns: 50 * NS_PER_US,
            bandwidth_bytes_per_sec: 500 * MIB,
            latency_jitter: 0.1,
            nr_requests: 64,
            max_request_bytes: MIB,
            rotational: true,
            ..SwapDevice::default()
        }
    );
    assert_eq!(
        s.disk,
        DiskDevice {
            read_latency_ns: NS_PER_MS,
            write_latency_ns: 2 * NS_PER_MS,
            bandwidth_bytes_per_sec: 200_000_000,
            latency_jitter: 0.1,
            nr_requests: 256,
            readahead_pages: 64,
            ..DiskDevice::default()
        }
    );
    assert_eq!(
        s.writeback,
        WritebackConfig {
            dirty_background_ratio: 5,
            dirty_ratio: 15,
            ..WritebackConfig::default()
        }
    );
    assert_eq!(
        s.cost,
        CostModel {
            anon_touch_ns: 25,
            slowpath_ns: 2000,
            compact_scan_ns: 20,
            migrate_page_ns: 2000,
            ..CostModel::default()
        }
    );
    assert_eq!(
        s.oom,
        OomConfig {
            allowed: false,
            reaper_delay_ns: 10 * NS_PER_MS,
            stop_on_kill: false,
            ..OomConfig::default()
        }
    );
    assert_eq!(s.workloads.len(), 2);
    let hog = &s.workloads[0];
    assert_eq!(
        (hog.start_ns, hog.duration_ns, hog.oom_score_adj),
        (NS_PER_SEC, Some(10 * NS_PER_SEC), 500)
    );
    assert_eq!(
        hog.anon,
        Some(AnonSpec {
            size_bytes: 6 * GIB,
            pattern: AccessPattern::Zipf { alpha: 0.99 },
            passes: 3,
            write_fraction: 0.5,
            think_ns: 0,
            hold_ns: 2_500_000_000
        })
    );
    assert_eq!(
        s.workloads[1].file,
        Some(FileSpec {
            size_bytes: 8 * GIB,
            op: FileOp::Write,
            passes: 2,
            hold_ns: 60 * NS_PER_SEC
        })
    );
    assert_eq!(s.workloads[1].anon, None);
}

#[test]
fn every_cost_key_sets_its_field() {
    for (i, key) in sections::COST.keys.iter().enumerate() {
        if matches!(key.ty, schema::Ty::Path { .. }) {
            continue; // the latency samples file: its own test below
        }
        let mut text = format!("[cost]\n{} = \"{}ns\"\n", key.name, 1000 + i);
        let mut want = CostModel::default();
        if key.name == "readahead_alloc" {
            // A part of file_miss, which must be at least as large.
            text.push_str("file_miss = \"1ms\"\n");
            want.file_miss_ns = 1_000_000;
        }
        let s = parse_str(&format!("{text}{MINIMAL}"), "t.toml").unwrap();
        key.store(&mut want, schema::Val::U(1000 + i as u64));
        assert_eq!(s.cost, want, "{}", key.name);
    }
}

#[test]
fn zipf_alpha_defaults_and_inline_workloads() {
    let s = parse_str(
        "workload = [{ name = \"a\", anon = { size = 4096, pattern = \"zipf\" } }]",
        "t.toml",
    )
    .unwrap();
    assert_eq!(
        s.workloads[0].anon.as_ref().unwrap().pattern,
        AccessPattern::Zipf { alpha: 1.0 }
    );
    assert_eq!(s.workloads[0].anon.as_ref().unwrap().size_bytes, 4096);
}

#[test]
fn big_seed_as_string() {
    let s = parse_str(&format!("sim.seed = \"{}\"\n{MINIMAL}", u64::MAX), "t").unwrap();
    assert_eq!(s.sim.seed, u64::MAX);
}

#[test]
fn positions_and_display() {
    let e = err("[host]\nram = \"4GiB\"\n  cpus = 0\n");
    assert_eq!((e.line, e.col, e.field.as_str()), (3, 10, "host.cpus"));
    assert_eq!(
        e.to_string(),
        "t.toml:3:10: error: in field `host.cpus`: must be between 1 and 1024, found 0\n  \
         help: for example: cpus = 2 (the default)"
    );

    let e = err("[host]\nrma = \"4GiB\"\n");
    assert_eq!((e.line, e.col, e.field.as_str()), (2, 1, "host.rma"));
    let shown = e.to_string();
    assert!(shown.contains("unknown key `rma` in [host]"), "{shown}");
    assert!(shown.contains("help: did you mean `ram`?"), "{shown}");
    assert!(
        shown.contains("ram, cpus, thp, thp_defrag, machine, lowmem, zoneinfo"),
        "{shown}"
    );

    // Columns count characters, not bytes.
    let e = err("name = \"é\"\n[sim]\nseed = 1\nsample_interval = \"é\"\n");
    assert_eq!((e.line, e.col), (4, 19));
}

#[test]
fn syntax_errors_guess_the_field() {
    let e = err("[host]\nram = 4GiB\n");
    assert_eq!((e.line, e.field.as_str()), (2, "host.ram"));
    assert!(e.message.starts_with("invalid TOML"), "{}", e.message);
    assert_eq!(
        e.help.as_deref(),
        Some("sizes, durations and names are strings: write ram = \"4GiB\"")
    );

    let e = err(
        "[[workload]]\nname = \"a\"\n[[workload]]\nname = \"b\"\n[workload.anon]\nsize = 1 GiB\n",
    );
    assert_eq!((e.line, e.field.as_str()), (6, "workload[1].anon.size"));

    // Unterminated array: reported on the line it starts, not past the end of the file.
    let e = err("[sysctl]\nlowmem_reserve_ratio = [1, 2\n");
    assert_eq!(e.line, 2);
}

#[test]
fn workload_table_without_double_brackets() {
    let e = err("[workload]\nname = \"a\"\n");
    assert_eq!((e.line, e.field.as_str()), (1, "workload"));
    assert!(e.help.unwrap().contains("[[workload]]"));
}

#[test]
fn duration_integer_needs_unit() {
    let e = err(&format!("[sim]\nduration = 60\n{MINIMAL}"));
    assert_eq!((e.line, e.col, e.field.as_str()), (2, 12, "sim.duration"));
    assert!(e.help.unwrap().contains("duration = \"60ms\""));
    // 0 needs no unit.
    let s = parse_str(&format!("[oom]\nreaper_delay = 0\n{MINIMAL}"), "t").unwrap();
    assert_eq!(s.oom.reaper_delay_ns, 0);
}

#[test]
fn unreadable_file() {
    let e = parse_file(Path::new("/nonexistent/dir/x.toml")).unwrap_err();
    assert_eq!((e.line, e.col, e.field.as_str()), (0, 0, ""));
    assert!(e
        .to_string()
        .starts_with("/nonexistent/dir/x.toml: error: cannot read scenario file"));
}

#[test]
fn suggestion_distance() {
    assert_eq!(
        closest("workloads", &sections::ROOT.allowed()),
        Some("workload")
    );
    assert_eq!(closest("zipf", AccessPattern::NAMES), Some("zipf"));
    assert_eq!(
        closest("seqential", AccessPattern::NAMES),
        Some("sequential")
    );
    assert_eq!(closest("xyz", &sections::HOST.allowed()), None);
}

/// The parser keeps NAMES and its own matches in step; a name listed in mod.rs but not
/// handled here would otherwise hit `unreachable!` on user input.
#[test]
fn every_registered_name_parses() {
    for m in MachineType::NAMES {
        let s = parse_str(&format!("host.machine = \"{m}\"\n{MINIMAL}"), "t").unwrap();
        assert_eq!(s.host.machine.name(), *m);
    }
    for sw in crate::policy::switches() {
        for v in sw.variants() {
            // Every switch is a guest's too (a memory controller only as "none": guests have
            // no cgroups); hinting only a guest's.
            let text = format!(
                "[[guest]]\nname = \"g\"\npolicy.{} = \"{}\"\n{MINIMAL}",
                sw.name(),
                v.name
            );
            if sw.name() == "memcg_controller" && v.name != "none" {
                let e = parse_str(&text, "t").unwrap_err();
                assert!(
                    e.to_string().contains("guests have no memory cgroups"),
                    "{e}"
                );
            } else {
                let s = parse_str(&text, "t").unwrap();
                assert_eq!(s.guests[0].policy.choices.get(sw.name()), v.name);
            }
            if sw.name() == "hinting" {
                continue;
            }
            // A userspace memory controller needs a cgroup to control.
            let cgroup = if sw.name() == "memcg_controller" {
                "[[cgroup]]\nname = \"c\"\n"
            } else {
                ""
            };
            let text = format!("policy.{} = \"{}\"\n{cgroup}{MINIMAL}", sw.name(), v.name);
            let s = parse_str(&text, "t").unwrap();
            assert_eq!(s.policy.choices.get(sw.name()), v.name);
        }
    }
    for p in AccessPattern::NAMES {
        let text =
            format!("[[workload]]\nname = \"w\"\nanon = {{ size = \"1GiB\", pattern = \"{p}\" }}");
        parse_str(&text, "t").unwrap();
    }
    for op in FileOp::NAMES {
        let text =
            format!("[[workload]]\nname = \"w\"\nfile = {{ size = \"1GiB\", op = \"{op}\" }}");
        parse_str(&text, "t").unwrap();
    }
}

/// Bad input must give an error, never a panic: cut a full scenario at every character and
/// drop each of its lines in turn. Every error must point inside the text.
#[test]
fn damaged_input_never_panics() {
    let mut s = parse_str(MINIMAL, "t").unwrap();
    s.host.lowmem_bytes = Some(GIB);
    s.sysctl.min_free_kbytes = Some(1000);
    s.workloads[0].anon.as_mut().unwrap().pattern = AccessPattern::Zipf { alpha: 0.5 };
    s.workloads[0].file = Some(FileSpec {
        size_bytes: GIB,
        ..FileSpec::default()
    });
    let full = crate::scenario::to_toml(&s);
    let lines: Vec<&str> = full.lines().collect();
    let mut texts: Vec<String> = full
        .char_indices()
        .map(|(i, _)| full[..i].to_string())
        .collect();
    for skip in 0..lines.len() {
        let kept: Vec<&str> = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, l)| *l)
            .collect();
        texts.push(kept.join("\n"));
    }
    for text in &texts {
        if let Err(e) = parse_str(text, "t.toml") {
            let n_lines = text.lines().count().max(1);
            assert!(
                e.line >= 1 && e.line <= n_lines && e.col >= 1,
                "{e} for:\n{text}"
            );
        }
    }
}

/// Hinting is what a guest does; a host that names a hinting variant other than "D1" is told
/// where the key belongs.
#[test]
fn hinting_belongs_to_a_guest() {
    let e = parse_str(&format!("policy.hinting = \"D4\"\n{MINIMAL}"), "t").unwrap_err();
    assert_eq!(e.field, "policy.hinting");
    assert!(e
        .help
        .as_deref()
        .unwrap()
        .contains("[guest.policy] hinting"));
    // A scenario of guests alone needs no host workload.
    let s = parse_str(
        "[[guest]]\nname = \"vm1\"\nram = \"1GiB\"\nboot_resident = \"100MiB\"\n",
        "t",
    )
    .unwrap();
    assert!(s.workloads.is_empty());
    assert_eq!(s.guests[0].ram_bytes, 1 << 30);
    // A guest's boot set must leave it room.
    let e = parse_str(
        "[[guest]]\nname = \"vm1\"\nram = \"1GiB\"\nboot_resident = \"900MiB\"\n",
        "t",
    )
    .unwrap_err();
    assert_eq!(e.field, "guest[0].boot_resident");
    // Two guests cannot share a name.
    let e = parse_str("[[guest]]\nname = \"a\"\n[[guest]]\nname = \"a\"\n", "t").unwrap_err();
    assert!(e.message.contains("duplicate guest name"), "{}", e.message);
}

/// A guest's background activity: a rate (0 turns it off) and a positive mean lifetime.
#[test]
fn guest_background_activity_parses() {
    let s = parse_str(
        "[[guest]]\nname = \"vm1\"\nbackground_frees = 0\n\
         [[guest]]\nname = \"vm2\"\nbackground_frees = 250\nbackground_lifetime = \"200ms\"\n",
        "t",
    )
    .unwrap();
    assert_eq!(s.guests[0].background_frees, 0);
    assert_eq!(s.guests[1].background_frees, 250);
    assert_eq!(s.guests[1].background_lifetime_ns, 200 * NS_PER_MS);
    let e = parse_str(
        "[[guest]]\nname = \"vm1\"\nbackground_lifetime = \"0s\"\n",
        "t",
    )
    .unwrap_err();
    assert_eq!(e.field, "guest[0].background_lifetime");
    let e = parse_str("[[guest]]\nname = \"vm1\"\nbackground_frees = -1\n", "t").unwrap_err();
    assert_eq!(e.field, "guest[0].background_frees");
}

#[test]
fn wakeup_latency_samples_are_read_relative_to_the_scenario() {
    let dir = std::env::temp_dir().join(format!("rl-wakeup-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::fs::write(
        dir.join("real/lat.json"),
        r#"{"what": "x", "latencies_us": [90, 4083.5]}"#,
    )
    .unwrap();
    let scn = dir.join("s.toml");
    std::fs::write(
        &scn,
        format!("[cost]\nwakeup_latency_samples = \"real/lat.json\"\n{MINIMAL}"),
    )
    .unwrap();
    let s = crate::scenario::parse_file(&scn).unwrap();
    let samples = s.cost.wakeup_latency_samples.clone().expect("samples read");
    assert_eq!(samples.ns, vec![90_000, 4_083_500]);
    assert!(samples.path.ends_with("real/lat.json"), "{}", samples.path);
    // Printed with the path it was read from, and read back the same.
    let shown = crate::scenario::to_toml(&s);
    assert!(shown.contains(&format!("wakeup_latency_samples = \"{}\"", samples.path)));
    let again = parse_str(&shown, "shown.toml").unwrap();
    assert_eq!(again.cost, s.cost);
    // The file's text parsed from elsewhere finds the samples only when told the file's
    // directory (what a sweep does for each of its points).
    let text = std::fs::read_to_string(&scn).unwrap();
    let e = parse_str(&text, "point.toml").unwrap_err().to_string();
    assert!(e.contains("does not exist"), "{e}");
    let from_text = crate::scenario::parse_str_in(&text, "point.toml", &dir).unwrap();
    assert_eq!(from_text.cost, s.cost);

    // A missing file, and a file without samples, are errors at the key.
    std::fs::write(
        &scn,
        format!("[cost]\nwakeup_latency_samples = \"real/none.json\"\n{MINIMAL}"),
    )
    .unwrap();
    let e = crate::scenario::parse_file(&scn).unwrap_err().to_string();
    assert!(
        e.contains("does not exist") && e.contains("wakeup_latency_samples"),
        "{e}"
    );
    std::fs::write(dir.join("real/empty.json"), r#"{"latencies_us": []}"#).unwrap();
    std::fs::write(
        &scn,
        format!("[cost]\nwakeup_latency_samples = \"real/empty.json\"\n{MINIMAL}"),
    )
    .unwrap();
    let e = crate::scenario::parse_file(&scn).unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A plug smaller than a page cannot hold a swap-out: the error names the key and both ways
/// out; 0 (no plug) and a page or more are accepted.
#[test]
fn a_swap_plug_smaller_than_a_page_is_refused() {
    let e = parse_str(&format!("[swap]\nmax_request = \"1KiB\"\n{MINIMAL}"), "t").unwrap_err();
    assert_eq!(e.field, "swap.max_request");
    assert!(
        e.message
            .contains("0 (no plug) or at least 4KiB, found 1KiB"),
        "{}",
        e.message
    );
    assert!(e.help.as_deref().unwrap().contains("max_request = 0"));
    for ok in ["0", "\"4KiB\"", "\"1MiB\""] {
        let s = parse_str(&format!("[swap]\nmax_request = {ok}\n{MINIMAL}"), "t").unwrap();
        assert!(s.swap.max_request_bytes == 0 || s.swap.max_request_bytes >= 4096);
    }
}

/// `readahead_alloc` is the part of `file_miss` charged while a window fills: a value above
/// the whole is refused at the key, with what to change.
#[test]
fn readahead_alloc_cannot_exceed_file_miss() {
    let e = parse_str(
        &format!("[cost]\nfile_miss = \"20us\"\nreadahead_alloc = \"30us\"\n{MINIMAL}"),
        "t",
    )
    .unwrap_err();
    assert_eq!(e.field, "cost.readahead_alloc");
    assert!(e.message.contains("more than file_miss"), "{}", e.message);
    let s = parse_str(
        &format!("[cost]\nfile_miss = \"20us\"\nreadahead_alloc = \"20us\"\n{MINIMAL}"),
        "t",
    )
    .unwrap();
    assert_eq!(s.cost.readahead_alloc_ns, 20_000);
}
