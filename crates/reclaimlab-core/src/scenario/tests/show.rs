//! The printer: round trips, determinism, layout.

use crate::scenario::show::resolve_computed;
use crate::scenario::*;
use crate::scenario::{schema, sections};

fn round_trip(s: &Scenario) {
    let text = to_toml(s);
    let back = parse_str(&text, "shown.toml")
        .unwrap_or_else(|e| panic!("to_toml output does not parse: {e}\n---\n{text}"));
    // A computed min_free_kbytes comes back as that value (see show.rs): equal once resolved.
    assert_eq!(
        resolve_computed(&back),
        resolve_computed(s),
        "round trip changed the scenario:\n{text}"
    );
    let mut only_computed = back.clone();
    only_computed.sysctl.min_free_kbytes = s.sysctl.min_free_kbytes;
    for (b, g) in only_computed.guests.iter_mut().zip(&s.guests) {
        b.sysctl.min_free_kbytes = g.sysctl.min_free_kbytes;
    }
    assert_eq!(
        &only_computed, s,
        "round trip changed more than min_free_kbytes:\n{text}"
    );
    // Deterministic, and a fixed point: rendering what was read back gives the same text.
    assert_eq!(to_toml(&back), text);
    assert_eq!(to_toml(s), text);
}

fn workload(name: &str) -> Workload {
    Workload {
        name: name.into(),
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
    }
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn defaults_round_trip() {
    let mut s = Scenario::default();
    s.workloads.push(workload("w"));
    round_trip(&s);
}

#[test]
fn parsed_examples_round_trip() {
    let examples = [
        "[[workload]]\nname = \"a\"\nanon.size = \"1GiB\"\n",
        "name = \"x\"\n[sim]\nduration = \"1500ms\"\nseed = 99\n[host]\nram = \"3GiB\"\nlowmem = \"2GiB\"\nmachine = \"i440fx\"\n\
         [sysctl]\nmin_free_kbytes = 128\n[swap]\nsize = \"1.5GiB\"\n\
         [[workload]]\nname = \"z\"\nduration = \"3s\"\noom_score_adj = -1000\n\
         [workload.anon]\nsize = 12345\npattern = \"zipf\"\nzipf_alpha = 0.7\nwrite_fraction = 0.1\n\
         [workload.file]\nsize = \"8GB\"\nop = \"write\"\n",
        "[oom]\nallowed = false\n[swap]\nsize = \"4GiB\"\n[[workload]]\nname = \"q\\\"uote\\\\\"\nfile.size = \"1GiB\"\n",
    ];
    let traces = [
        format!("path = \"{}\"", fixture("trace-small.oracleGeneral.zst")),
        format!(
            "path = \"{}\"\nkind = \"file\"\nobject_size = \"ignore\"\ntime = \"trace\"\nmax_records = 10",
            fixture("trace-small.oracleGeneral")
        ),
        format!(
            "path = \"{}\"\ntime = \"trace\"\ntime_unit = \"1us\"\npasses = 3\nthink = \"1us\"",
            fixture("trace-small.csv")
        ),
    ];
    for t in &traces {
        let text = format!("[[workload]]\nname = \"t\"\n[workload.trace]\n{t}\n");
        round_trip(&parse_str(&text, "ex.toml").unwrap());
    }
    for text in examples {
        round_trip(&parse_str(text, "ex.toml").unwrap());
    }
}

#[test]
fn zoneinfo_round_trips() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/zoneinfo-host-6.18.txt"
    );
    let text = format!(
        "[host]\nzoneinfo = \"{path}\"\n[[workload]]\nname = \"a\"\nanon.size = \"1GiB\"\n"
    );
    let s = parse_str(&text, "z.toml").unwrap();
    assert_eq!(s.host.zoneinfo.as_deref(), Some(path));
    round_trip(&s);
}

/// Many scenarios with every field set to something other than its default, drawn from a
/// fixed pseudo-random stream inside the validator's limits.
#[test]
fn generated_scenarios_round_trip() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for case in 0..300 {
        let mut s = Scenario {
            name: format!("gen-{case}\t\u{e9}"),
            ..Scenario::default()
        };
        s.sim.seed = next(u64::MAX);
        s.sim.duration_ns = (next(2) == 0).then(|| 1 + next(1 << 40));
        s.sim.sample_interval_ns = 1 + next(NS_PER_SEC * 10);
        s.sim.max_duration_ns = 1 + next(1 << 50);
        s.host.ram_bytes = 64 * MIB + next(1024 * GIB - 64 * MIB + 1);
        s.host.cpus = 1 + next(1024) as u32;
        s.host.thp = next(2) == 0;
        s.host.thp_defrag = ThpDefrag::from_name(ThpDefrag::NAMES[next(5) as usize]).unwrap();
        s.host.machine = if next(2) == 0 {
            MachineType::Q35
        } else {
            MachineType::I440fx
        };
        s.host.lowmem_bytes =
            (next(2) == 0).then(|| 64 * MIB + next(s.host.ram_bytes.min(4 * GIB) - 64 * MIB + 1));
        s.host.fragmented_zone = (next(2) == 0).then(|| next(3) as usize);
        s.host.fragment_stride = 2 << next(10);
        s.host.kernel_used_bytes = next(s.host.ram_bytes / 2);
        s.host.pcp_lists = next(2) == 0;
        s.host.vmstat_drift = next(2) == 0;
        s.sysctl.min_free_kbytes = (next(2) == 0).then(|| 128 + next(262_144 - 127));
        s.sysctl.watermark_scale_factor = 1 + next(3000);
        s.sysctl.watermark_boost_factor = next(1_000_001);
        s.sysctl.lowmem_reserve_ratio = [next(1000), next(1000), next(1000), next(10)];
        s.sysctl.swappiness = next(201);
        s.swap.size_bytes = if next(3) == 0 {
            0
        } else {
            4 * KIB + next(1 << 40)
        };
        s.swap.read_latency_ns = next(NS_PER_SEC);
        s.swap.write_latency_ns = next(NS_PER_SEC);
        s.swap.bandwidth_bytes_per_sec = 1 + next(1 << 36);
        s.swap.latency_jitter = next(1000) as f64 / 1000.0;
        s.swap.rotational = next(2) == 0;
        s.swap.max_request_bytes = if next(2) == 0 {
            0
        } else {
            4 * KIB + next(1 << 30)
        };
        s.disk.read_latency_ns = next(NS_PER_SEC);
        s.disk.write_latency_ns = next(NS_PER_SEC);
        s.disk.bandwidth_bytes_per_sec = 1 + next(1 << 36);
        s.disk.latency_jitter = next(1000) as f64 / 1000.0;
        s.disk.readahead_pages = 1 + next(1 << 20);
        s.writeback.dirty_background_ratio = next(101);
        s.writeback.dirty_ratio = next(101);
        for key in sections::COST.keys {
            // The latency samples (a file) round-trip in the parse tests.
            if matches!(key.ty, schema::Ty::Duration { .. }) {
                key.store(&mut s.cost, schema::Val::U(next(10 * NS_PER_MS)));
            }
        }
        // A part of file_miss (the cost section's rule).
        s.cost.readahead_alloc_ns = next(s.cost.file_miss_ns + 1);
        s.oom.allowed = true;
        s.oom.reaper_delay_ns = next(NS_PER_SEC);
        s.policy = Default::default();
        for i in 0..1 + next(4) {
            let mut w = workload(&format!("w{i}"));
            w.start_ns = next(1 << 40);
            w.duration_ns = (next(2) == 0).then(|| 1 + next(1 << 40));
            w.oom_score_adj = next(2001) as i32 - 1000;
            // Any non-empty combination of anon, file and trace tables.
            let kind = 1 + next(7);
            w.anon = (kind & 1 != 0).then(|| AnonSpec {
                size_bytes: 4 * KIB + next(1 << 42),
                pattern: match next(3) {
                    0 => AccessPattern::Sequential,
                    1 => AccessPattern::Random,
                    _ => AccessPattern::Zipf {
                        alpha: (1 + next(1 << 30)) as f64 / 997.0,
                    },
                },
                passes: 1 + next(1000),
                write_fraction: next(1001) as f64 / 1000.0,
                think_ns: next(1 << 20),
                hold_ns: next(1 << 40),
            });
            w.file = (kind & 2 != 0).then(|| FileSpec {
                size_bytes: 4 * KIB + next(1 << 42),
                op: if next(2) == 0 {
                    FileOp::Read
                } else {
                    FileOp::Write
                },
                passes: 1 + next(10),
                hold_ns: next(1 << 40),
            });
            w.trace = (kind & 4 != 0).then(|| {
                let files = [
                    "trace-small.oracleGeneral",
                    "trace-small.oracleGeneral.zst",
                    "trace-small.csv",
                ];
                let format = if next(2) == 0 {
                    TraceFormat::Oracle
                } else {
                    TraceFormat::Csv
                };
                let oracle = format == TraceFormat::Oracle;
                TraceSpec {
                    path: fixture(files[next(3) as usize]),
                    format,
                    compression: if next(2) == 0 {
                        Compression::None
                    } else {
                        Compression::Zstd
                    },
                    // Oracle-only settings stay at their defaults for CSV (the parser
                    // rejects them there, and the printer leaves them out).
                    kind: if oracle && next(2) == 0 {
                        TraceKind::File
                    } else {
                        TraceKind::Anon
                    },
                    object_size: if oracle && next(2) == 0 {
                        ObjectSize::Ignore
                    } else {
                        ObjectSize::Pages
                    },
                    write_fraction: if oracle {
                        next(1001) as f64 / 1000.0
                    } else {
                        0.0
                    },
                    passes: 1 + next(100),
                    time: if next(2) == 0 {
                        TraceTime::Ignore
                    } else {
                        TraceTime::Trace {
                            unit_ns: 1 + next(NS_PER_SEC * 10),
                        }
                    },
                    think_ns: next(1 << 20),
                    hold_ns: next(1 << 40),
                    max_records: (next(2) == 0).then(|| 1 + next(1 << 40)),
                }
            });
            w.highorder = (next(3) == 0).then(|| HighOrderSpec {
                order: next(11) as u32,
                rate_per_sec: 1 + next(1 << 20),
                lifetime_ns: 1 + next(1 << 40),
                lifetimes: [Lifetimes::Fixed, Lifetimes::Exponential][next(2) as usize],
                gfp: [
                    HighOrderGfp::Atomic,
                    HighOrderGfp::Kernel,
                    HighOrderGfp::Transhuge,
                ][next(3) as usize],
                count: Some(1 + next(1 << 30)),
            });
            s.workloads.push(w);
        }
        round_trip(&s);
    }
}

#[test]
fn output_shape() {
    let mut s = Scenario::default();
    s.workloads.push(workload("hog"));
    let text = to_toml(&s);
    assert!(text.contains("\n[sim]\n"));
    assert!(text.contains("\n[[workload]]\nname = \"hog\""));
    assert!(text.contains("\n[workload.anon]\nsize = \"1GiB\""));
    assert!(text.contains("ram = \"4GiB\""));
    assert!(text.contains("# duration = <unset>"));
    assert!(text.contains("anon_touch = \"20ns\""));
    assert!(text.contains("sample_interval = \"100ms\""));
    // Every key line carries a comment.
    for line in text
        .lines()
        .filter(|l| l.contains(" = ") && !l.starts_with('#'))
    {
        assert!(line.contains("  # "), "no comment: {line}");
    }
}

/// The example scenarios print, parse back to the same scenario (computed defaults resolved)
/// and print again to the same text: `--show-defaults` output is a fixed point.
#[test]
fn example_scenarios_round_trip() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            round_trip(&parse_file(&path).unwrap_or_else(|e| panic!("{e}")));
            n += 1;
        }
    }
    assert!(n >= 5, "{n} example scenarios");
}

/// A computed min_free_kbytes is printed as a value with the rule, and the zones' watermarks
/// follow as comments; an explicit value equal to it prints the same.
#[test]
fn computed_defaults_are_shown_with_their_rule() {
    let mut s = Scenario::default();
    s.workloads.push(workload("w"));
    let text = to_toml(&s);
    let line = text
        .lines()
        .find(|l| l.starts_with("min_free_kbytes = "))
        .expect("min_free_kbytes line");
    assert!(line.starts_with("min_free_kbytes = 67584 "), "{line}");
    assert!(
        line.contains("default computed by the watermarks policy"),
        "{line}"
    );
    assert!(text.contains("#   zone       managed      min      low     high  protection\n"));
    assert!(text.contains("\n#   Normal "), "{text}");
    let mut explicit = s.clone();
    explicit.sysctl.min_free_kbytes = Some(67584);
    assert_eq!(to_toml(&explicit), text);
    explicit.sysctl.min_free_kbytes = Some(1000);
    let other = to_toml(&explicit);
    assert!(other.contains("\nmin_free_kbytes = 1000 "), "{other}");
    assert!(!other.contains("default computed"), "{other}");
    assert!(other.contains("from min_free_kbytes = 1000 and"), "{other}");
}
