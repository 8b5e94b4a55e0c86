//! Trace workloads through the full host model: determinism, page mapping, timing, passes,
//! and errors for malformed traces. Run in release (`cargo test --release`).

use std::path::{Path, PathBuf};

use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::trace::oracle_record;
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput, SimError};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace_replay");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A skewed trace: `n` requests over `objects` objects (id 1 hottest), times 0, 0, .. 1, 1, ..
/// (`per_tick` records per timestamp).
fn skewed(n: usize, objects: u64, size: u32, per_tick: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(n * 24);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        let id = 1 + ((u * u * u) * objects as f64) as u64;
        out.extend_from_slice(&oracle_record((i / per_tick) as u32, id, size, -1));
    }
    out
}

fn scenario(body: &str) -> Scenario {
    let text = format!(
        "name = \"trace-test\"\n[sim]\nseed = 3\nsample_interval = \"10ms\"\n\
         [host]\nram = \"128MiB\"\ncpus = 2\n[swap]\nsize = \"256MiB\"\n{body}"
    );
    parse_str(&text, "<trace-test>").unwrap_or_else(|e| panic!("{e}"))
}

fn trace_workload(name: &str, path: &Path, extra: &str) -> String {
    format!(
        "[[workload]]\nname = \"{name}\"\n[workload.trace]\npath = \"{}\"\n{extra}\n",
        path.display()
    )
}

fn go(scn: &Scenario, inv: InvariantMode) -> Result<RunOutput, SimError> {
    run(
        scn,
        &RunOptions {
            seed: None,
            invariants: inv,
            trace: None,
        },
        &mut |_, _| true,
    )
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters
        .iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

#[test]
fn oracle_replay_swaps_and_is_deterministic() {
    // 48k objects of one page (192 MiB of anonymous memory) on a 128 MiB host.
    let p = tmp("skewed.oracleGeneral");
    std::fs::write(&p, skewed(150_000, 48_000, 4096, 1000, 11)).unwrap();
    let scn = scenario(&trace_workload("db", &p, ""));
    let a = go(&scn, InvariantMode::Off).unwrap();
    let b = go(&scn, InvariantMode::Off).unwrap();
    assert_eq!(a.vmstat, b.vmstat);
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.timeseries, b.timeseries);
    assert!(counter(&a, "pswpout") > 0, "{}", a.vmstat);
    assert!(counter(&a, "pswpin") > 0, "{}", a.vmstat);
    let s = summary(&a);
    assert_eq!(s["threads"][0]["thread"], "db/trace");
    assert_eq!(s["threads"][0]["records_replayed"], 150_000);
    assert_eq!(s["threads"][0]["accesses"], 150_000);
    assert_eq!(s["stop_reason"], "all workloads finished");

    // zstd-compressed, the same trace gives the same run.
    let raw = std::fs::read(&p).unwrap();
    let pz = tmp("skewed.oracleGeneral.zst");
    std::fs::write(
        &pz,
        ruzstd::encoding::compress_to_vec(&raw[..], ruzstd::encoding::CompressionLevel::Fastest),
    )
    .unwrap();
    let c = go(
        &scenario(&trace_workload("db", &pz, "")),
        InvariantMode::Off,
    )
    .unwrap();
    assert_eq!(c.vmstat, a.vmstat);
}

#[test]
fn invariants_hold_with_anon_file_and_trace_in_one_process() {
    // One process with an anon table, a file table and a trace with both kinds of objects:
    // three threads, two anonymous regions (both freed at exit).
    let p = tmp("mix.csv");
    let mut text = String::from("time_ns,object,offset,kind\n");
    for i in 0..30_000u64 {
        let obj = (i * 7919) % 3000;
        let (kind, off) = if obj < 2000 {
            (
                if i % 3 == 0 {
                    "anon_write"
                } else {
                    "anon_read"
                },
                (i % 4) * 4096,
            )
        } else {
            (
                if i % 5 == 0 {
                    "file_write"
                } else {
                    "file_read"
                },
                (i % 8) * 4096 + 100,
            )
        };
        text.push_str(&format!("{},{obj},{off},{kind}\n", i * 1000));
    }
    std::fs::write(&p, text).unwrap();
    let body = format!(
        "[[workload]]\nname = \"app\"\n[workload.anon]\nsize = \"48MiB\"\npattern = \"random\"\n\
         [workload.file]\nsize = \"64MiB\"\n[workload.trace]\npath = \"{}\"\n",
        p.display()
    );
    let scn = scenario(&body);
    let out = go(&scn, InvariantMode::Periodic(50)).unwrap();
    let s = summary(&out);
    let threads: Vec<&str> = s["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_str().unwrap())
        .collect();
    assert_eq!(threads, ["app/anon", "app/file", "app/trace"]);
    assert_eq!(s["threads"][2]["records_replayed"], 30_000);
    assert!(counter(&out, "pgpgin") > 0);
    // Everything anonymous was freed when the process exited.
    assert!(out.vmstat.contains("\nnr_anon_pages 0\n"), "{}", out.vmstat);
    let again = go(&scn, InvariantMode::Off).unwrap();
    assert_eq!(again.vmstat, out.vmstat);
}

#[test]
fn object_size_passes_and_max_records() {
    // Objects of 10000 bytes span 3 pages; every request touches all 3.
    let p = tmp("three-pages.oracleGeneral");
    std::fs::write(&p, skewed(2_000, 300, 10_000, 100, 5)).unwrap();
    let out = go(
        &scenario(&trace_workload("t", &p, "passes = 3")),
        InvariantMode::Off,
    )
    .unwrap();
    let s = summary(&out);
    assert_eq!(s["threads"][0]["records_replayed"], 6_000);
    assert_eq!(s["threads"][0]["accesses"], 18_000);

    let out = go(
        &scenario(&trace_workload(
            "t",
            &p,
            "object_size = \"ignore\"\nmax_records = 500\npasses = 2",
        )),
        InvariantMode::Off,
    )
    .unwrap();
    let s = summary(&out);
    assert_eq!(s["threads"][0]["records_replayed"], 1_000);
    assert_eq!(s["threads"][0]["accesses"], 1_000);

    // kind = "file": the objects go through the page cache.
    let out = go(
        &scenario(&trace_workload("t", &p, "kind = \"file\"")),
        InvariantMode::EveryEvent,
    )
    .unwrap();
    assert!(counter(&out, "pgpgin") > 0);
    assert_eq!(counter(&out, "pswpout"), 0);
    assert!(out.vmstat.contains("\nnr_anon_pages 0\n"));
}

#[test]
fn trace_time_schedules_arrivals() {
    // 2000 records, 100 per second: 19 s of trace time.
    let p = tmp("timed.oracleGeneral");
    std::fs::write(&p, skewed(2_000, 100, 4096, 100, 9)).unwrap();
    let fast = go(&scenario(&trace_workload("t", &p, "")), InvariantMode::Off).unwrap();
    let timed = go(
        &scenario(&trace_workload("t", &p, "time = \"trace\"")),
        InvariantMode::Off,
    )
    .unwrap();
    let scaled = go(
        &scenario(&trace_workload(
            "t",
            &p,
            "time = \"trace\"\ntime_unit = \"1ms\"\npasses = 2",
        )),
        InvariantMode::Off,
    )
    .unwrap();
    let end = |o: &RunOutput| summary(o)["sim_time_ns"].as_u64().unwrap();
    assert!(end(&fast) < 100_000_000, "{}", end(&fast));
    // The last record arrives 19 s after the first; the run ends just after it.
    assert!(
        (19_000_000_000..19_100_000_000).contains(&end(&timed)),
        "{}",
        end(&timed)
    );
    // 1 ms per unit and two passes: two spans of 19 ms, the second starting after the first.
    assert!(
        (38_000_000..40_000_000).contains(&end(&scaled)),
        "{}",
        end(&scaled)
    );
    // Same accesses whatever the schedule.
    assert_eq!(counter(&timed, "pgfault"), counter(&fast, "pgfault"));
}

#[test]
fn malformed_traces_are_errors_with_the_record_number() {
    // Truncated oracleGeneral: 100 records and 7 bytes.
    let p = tmp("truncated.oracleGeneral");
    let mut bytes = skewed(100, 10, 4096, 10, 1);
    bytes.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
    std::fs::write(&p, &bytes).unwrap();
    let e = go(&scenario(&trace_workload("t", &p, "")), InvariantMode::Off).unwrap_err();
    let SimError::Trace(e) = e else {
        panic!("{e:?}")
    };
    assert_eq!((e.record, e.byte_offset), (Some(101), Some(2400)));
    assert!(
        e.to_string()
            .contains("record 101 (byte offset 2400): truncated record"),
        "{e}"
    );

    // CSV: a bad kind on line 4 (record 3, after the header).
    let p = tmp("bad.csv");
    std::fs::write(
        &p,
        "time_ns,object,offset,kind\n1,1,0,anon_read\n2,2,0,anon_read\n3,3,0,anon_rread\n",
    )
    .unwrap();
    let e = go(&scenario(&trace_workload("t", &p, "")), InvariantMode::Off).unwrap_err();
    assert!(
        e.to_string()
            .contains("record 3 (line 4): unknown kind \"anon_rread\""),
        "{e}"
    );

    // CSV: an object that is anonymous memory and a file.
    let p = tmp("conflict.csv");
    std::fs::write(&p, "1,5,0,anon_read\n2,6,0,file_read\n3,5,0,file_read\n").unwrap();
    let e = go(&scenario(&trace_workload("t", &p, "")), InvariantMode::Off).unwrap_err();
    assert!(
        e.to_string()
            .contains("record 3 (line 3): object 5 is a file here but was anonymous memory"),
        "{e}"
    );

    // Only size-0 records: nothing to replay.
    let p = tmp("zeros.oracleGeneral");
    std::fs::write(&p, skewed(10, 5, 0, 1, 1)).unwrap();
    let e = go(&scenario(&trace_workload("t", &p, "")), InvariantMode::Off).unwrap_err();
    assert!(e.to_string().contains("no records to replay"), "{e}");

    // Not zstd, though the name says so.
    let p = tmp("fake.oracleGeneral.zst");
    std::fs::write(&p, skewed(10, 5, 4096, 1, 1)).unwrap();
    let e = go(&scenario(&trace_workload("t", &p, "")), InvariantMode::Off).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "fake.oracleGeneral.zst: cannot read the trace: zstd: the file is not \
             zstd-compressed (it does not start with the zstd magic number); if it is plain, drop \
             the .zst from its name or say compression = \"none\""
        ),
        "{e}"
    );
}

#[test]
fn oom_disallowed_checks_trace_anon_size() {
    let p = tmp("big.oracleGeneral");
    // 200k one-page objects, each touched once: 800 MiB > 128 MiB RAM + 256 MiB swap.
    let bytes: Vec<u8> = (0..200_000u64)
        .flat_map(|i| oracle_record(0, i, 4096, -1))
        .collect();
    std::fs::write(&p, bytes).unwrap();
    let scn = scenario(&format!(
        "[oom]\nallowed = false\n{}",
        trace_workload("t", &p, "")
    ));
    match go(&scn, InvariantMode::Off) {
        Err(SimError::Config(m)) => assert!(m.contains("exceeds RAM + swap"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn example_scenario_replays_the_committed_trace() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/trace-replay.toml");
    let scn = reclaimlab_core::scenario::parse_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let a = go(&scn, InvariantMode::Off).unwrap();
    let b = go(&scn, InvariantMode::Off).unwrap();
    assert_eq!(a.vmstat, b.vmstat);
    assert_eq!(a.summary_json, b.summary_json);
    let s = summary(&a);
    assert_eq!(s["threads"][0]["records_replayed"], 300_000);
    assert!(counter(&a, "pswpout") > 0 && counter(&a, "pswpin") > 0);
    assert_eq!(counter(&a, "oom_kill"), 0);
}
