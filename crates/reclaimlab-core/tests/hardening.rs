//! Issue 15's engine-side defects: the time series stays out of memory however long the run,
//! reading traces can be stopped, the RAM limit is one limit checked at parse time, and trace
//! paths are recorded absolutely. Run in release (`cargo test --release`).

use std::path::{Path, PathBuf};

use reclaimlab_core::actors::workload::trace::{TraceReplay, SCAN_POLL_RECORDS};
use reclaimlab_core::machine::pte::PTE_PFN_MASK;
use reclaimlab_core::machine::MAX_ORDER;
use reclaimlab_core::observe::spool::TAIL_ROWS;
use reclaimlab_core::run::{host_layout, host_machine};
use reclaimlab_core::scenario::{parse_file, parse_str};
use reclaimlab_core::trace::oracle_record;
use reclaimlab_core::{run, Run, RunOptions, SimError};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hardening");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A machine that does little for a long time: the sampler dominates.
fn idle_for(duration: &str, interval: &str) -> String {
    format!(
        r#"
name = "idle"
[sim]
duration = "{duration}"
sample_interval = "{interval}"
[host]
ram = "128MiB"
cpus = 1
[[workload]]
name = "w"
anon = {{ size = "16MiB", passes = 1000000, think = "1s" }}
"#
    )
}

#[test]
fn a_long_series_is_spooled_not_held() {
    // 20 simulated hours at 1 s: 72,001 samples, 70 times what may stay in memory.
    let scn = parse_str(&idle_for("20h", "1s"), "idle.toml").unwrap();
    let out = run(&scn, &RunOptions::default(), &mut |_, _| true).unwrap();
    let ts = &out.timeseries;
    assert_eq!(ts.len(), 20 * 3600 + 1);
    assert!(
        ts.rows_in_memory() <= TAIL_ROWS,
        "{} samples in memory",
        ts.rows_in_memory()
    );
    // What comes back is the samples, in order, whole.
    let t = ts.column("time_ns").unwrap();
    assert_eq!(t.len(), ts.len());
    assert!(t
        .iter()
        .enumerate()
        .all(|(i, &v)| v == i as i64 * 1_000_000_000));
    let free = ts.column("nr_free_pages").unwrap();
    assert!(
        free.iter().all(|&f| f > 0 && f < 128 * 256),
        "{:?}",
        &free[..4]
    );
    // Two runs of the same scenario compare equal sample by sample; another seed's need not.
    let again = run(&scn, &RunOptions::default(), &mut |_, _| true).unwrap();
    assert_eq!(out.timeseries, again.timeseries);
}

fn trace_file(records: u64) -> PathBuf {
    let p = tmp(&format!("t{records}.oracleGeneral"));
    let mut bytes = Vec::with_capacity(records as usize * 24);
    for i in 0..records {
        bytes.extend_from_slice(&oracle_record(i as u32, i % 1000, 4096, -1));
    }
    std::fs::write(&p, bytes).unwrap();
    p
}

fn trace_scenario(path: &Path) -> String {
    format!(
        r#"
name = "t"
[host]
ram = "256MiB"
[swap]
size = "256MiB"
[[workload]]
name = "db"
[workload.trace]
path = "{}"
kind = "anon"
"#,
        path.display()
    )
}

#[test]
fn reading_a_trace_polls_and_can_be_stopped() {
    let records = SCAN_POLL_RECORDS * 5 + 7;
    let scn = parse_str(&trace_scenario(&trace_file(records)), "t.toml").unwrap();
    let spec = scn.workloads[0].trace.as_ref().unwrap();
    // Read to the end: polled once per SCAN_POLL_RECORDS records.
    let mut polls = 0;
    let replay = TraceReplay::scan_polled(spec, &mut || {
        polls += 1;
        true
    })
    .unwrap()
    .expect("not stopped");
    assert_eq!(replay.objects(), 1000);
    assert_eq!(polls, 5);
    // Stopped at the second poll.
    let mut polls = 0;
    let stopped = TraceReplay::scan_polled(spec, &mut || {
        polls += 1;
        polls < 2
    })
    .unwrap();
    assert!(stopped.is_none());
    assert_eq!(polls, 2);
    // Through a run: the stop is honoured while the trace is read, before any event.
    let machine = host_machine(&scn, 1, false).unwrap();
    let mut calls = 0;
    let r = Run::with_machine_polled(&scn, &RunOptions::default(), machine, &mut || {
        calls += 1;
        false
    });
    assert!(matches!(r, Err(SimError::Interrupted)));
    assert_eq!(calls, 1);
}

#[test]
fn ram_limit_is_checked_at_parse_time_and_the_largest_machine_fits() {
    let w = "[[workload]]\nname = \"w\"\nanon = { size = \"1GiB\" }\n";
    let e = parse_str(&format!("[host]\nram = \"1025GiB\"\n{w}"), "big.toml").unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(
            "big.toml:2:7: error: in field `host.ram`: must be between 64MiB and 1TiB"
        ),
        "{text}"
    );
    // 1 TiB parses, and its zones fit the frame table: the same count Machine::new makes
    // (each zone's frames rounded up to a whole MAX_ORDER block), without building it.
    let scn = parse_str(&format!("[host]\nram = \"1TiB\"\n{w}"), "max.toml").unwrap();
    let layout = host_layout(&scn).unwrap();
    let align = 1u64 << (MAX_ORDER - 1);
    let mut next = 0u64;
    for m in layout.managed() {
        if m > 0 {
            next = (next + m).div_ceil(align) * align;
        }
    }
    assert!(next <= PTE_PFN_MASK as u64, "{next} frames");
    assert!(
        next > PTE_PFN_MASK as u64 * 9 / 10,
        "{next} frames: the limit is not tight"
    );
}

#[test]
fn trace_paths_are_recorded_absolutely() {
    let trace = trace_file(100);
    let dir = trace.parent().unwrap();
    let scn_path = dir.join("rel.toml");
    std::fs::write(
        &scn_path,
        trace_scenario(Path::new(trace.file_name().unwrap())),
    )
    .unwrap();
    // Given relative to the current directory, the scenario's trace is still recorded as an
    // absolute path (resolved against the scenario's directory).
    let cwd = std::env::current_dir().unwrap();
    let rel = pathdiff(&scn_path, &cwd);
    assert!(rel.is_relative());
    let scn = parse_file(&rel).unwrap();
    let recorded = Path::new(&scn.workloads[0].trace.as_ref().unwrap().path);
    assert!(recorded.is_absolute(), "{}", recorded.display());
    assert_eq!(
        recorded.canonicalize().unwrap(),
        trace.canonicalize().unwrap()
    );
    let shown = reclaimlab_core::scenario::to_toml(&scn);
    assert!(
        shown.contains(&format!("path = \"{}\"", recorded.display())),
        "{shown}"
    );
}

/// `path` relative to `base` (both absolute), with `..` as needed.
fn pathdiff(path: &Path, base: &Path) -> PathBuf {
    let p: Vec<_> = path.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    out
}
