//! Pressure stall information wired into the engine (issue 34, item 3): the memory stalls
//! the machine and its kernel threads report, the system group's totals and averages, and
//! the outputs (`pressure/memory`, summary.json's `pressure`, the time series' columns).

use reclaimlab_core::machine::memory::{Access, TaskCtx};
use reclaimlab_core::machine::psi::PSI_SYSTEM;
use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

const MS: u64 = 1_000_000;

fn scenario(text: &str) -> Scenario {
    parse_str(text, "psi.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn go(scn: &Scenario) -> RunOutput {
    let opts = RunOptions {
        seed: None,
        invariants: InvariantMode::Off,
        trace: None,
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{}: {e}", scn.name))
}

fn file<'a>(out: &'a RunOutput, name: &str) -> &'a str {
    &out.extra_files.iter().find(|(n, _)| n == name).unwrap().1
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

/// (some, full) total in µs from summary.json.
fn totals(s: &serde_json::Value) -> (u64, u64) {
    let m = &s["pressure"]["memory"];
    (
        m["some"]["total_us"].as_u64().unwrap(),
        m["full"]["total_us"].as_u64().unwrap(),
    )
}

/// One thread on a one-CPU machine, whose kswapd never gets to run within the run (its
/// wake-up latency is an hour): the only memory stalls are the thread's own.
fn lone_thread(workload: &str) -> Scenario {
    scenario(&format!(
        "name = \"lone\"\n[sim]\nduration = \"3s\"\n[host]\nram = \"256MiB\"\ncpus = 1\n\
         [swap]\nsize = \"1GiB\"\n[cost]\nwakeup_latency = \"1h\"\n\
         [[workload]]\nname = \"w\"\n{workload}\n"
    ))
}

/// The page allocator's direct reclaim is a memory stall of exactly the time the engine
/// counts as the task's direct-reclaim stall: one task, always running on the machine's one
/// CPU, so the folds' jiffy weights cancel and `full` (the running task is stalled) equals
/// `some`.
#[test]
fn direct_reclaim_is_a_memory_stall_of_the_engines_stall_time() {
    let scn = scenario(
        "name = \"t\"\n[host]\nram = \"128MiB\"\ncpus = 1\n[swap]\nsize = \"512MiB\"\n\
         [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n",
    );
    let mut m = reclaimlab_core::run::host_machine(&scn, 1, false).unwrap();
    let task = m.add_task("hog", 0);
    let pages = 256 * 256; // 256 MiB: twice the RAM
    let r = m.add_region(task, pages, true).unwrap();
    let base = m.regions[r].base;
    let mut t = TaskCtx {
        task,
        psi: m.psi.task(PSI_SYSTEM, 0),
        psi_tracked: true,
        ..TaskCtx::default()
    };
    let mut now = 0u64;
    m.psi.run(&mut t.psi, now);
    let mut stall = 0u64;
    let mut vp = base;
    while vp < base + pages as u32 {
        m.now = now;
        t.begin_step();
        let a = m.anon_access(vp, true, &mut t);
        now += t.cost_ns;
        stall += t.stall_ns;
        match a {
            Access::Done => vp += 1,
            // The task's back-off: it stays runnable (nothing of PSI changes).
            Access::Retry(sleep) => now += sleep,
            Access::Yield => {}
            a => panic!("{a:?} on a first touch"),
        }
    }
    assert!(
        stall > 100 * MS,
        "the test needs direct reclaim: {stall} ns"
    );
    // Keep running 10 ms more, so that the last fold weighs more than a jiffy.
    let r = m.psi.read(PSI_SYSTEM, now + 10 * MS);
    assert_eq!(r.total_ns[0], stall);
    assert_eq!(r.total_ns[1], stall);
    assert_eq!(m.psi.bugs, 0);
}

/// The same through the whole engine: a thread's direct reclaim, on a machine where nothing
/// else stalls, gives `some` = `full` = its stall (summary.json's `direct_stall_ms`, µs
/// apart at most from rounding), in the file, the summary and the series' last row.
#[test]
fn a_run_reports_the_direct_reclaim_stall_as_memory_pressure() {
    let out = go(&lone_thread(
        "[workload.anon]\nsize = \"512MiB\"\npattern = \"sequential\"\npasses = 1",
    ));
    let s = summary(&out);
    let stall_us = (s["threads"][0]["direct_stall_ms"].as_f64().unwrap() * 1000.0).round() as u64;
    assert!(
        stall_us > 100_000,
        "the test needs direct reclaim: {stall_us} us"
    );
    assert_eq!(s["headline"]["pgscan_kswapd"], 0, "kswapd must not run");
    let (some, full) = totals(&s);
    assert!(
        some.abs_diff(stall_us) <= 1,
        "some {some} us, stall {stall_us} us"
    );
    assert_eq!(full, some);
    let text = file(&out, "pressure/memory");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("some avg10="), "{text}");
    assert!(lines[0].ends_with(&format!(" total={some}")), "{text}");
    assert!(lines[1].starts_with("full avg10="), "{text}");
    // The series' last row is the same read.
    let col = |n: &str| *out.timeseries.column(n).unwrap().last().unwrap() as u64;
    assert_eq!(col("psi_memory_some_total_us"), some);
    assert_eq!(col("psi_memory_full_total_us"), full);
    let avg10 = s["pressure"]["memory"]["some"]["avg10"].as_f64().unwrap();
    assert_eq!(
        col("psi_memory_some_avg10_x100"),
        (avg10 * 100.0).round() as u64
    );
    // The series' totals never fall.
    let some_col = out.timeseries.column("psi_memory_some_total_us").unwrap();
    assert!(some_col.windows(2).all(|w| w[0] <= w[1]));
}

/// A wait for the read of a page that refaulted into the working set is a memory stall
/// too: with refaults that restore working-set pages, `some` exceeds the direct-reclaim
/// stall, by no more than the thread's waits.
#[test]
fn thrashing_refaults_are_memory_stalls() {
    let out = go(&lone_thread(
        "[workload.anon]\nsize = \"320MiB\"\npattern = \"zipf\"\npasses = 100",
    ));
    let s = summary(&out);
    let t = &s["threads"][0];
    let stall_us = (t["direct_stall_ms"].as_f64().unwrap() * 1000.0).round() as u64;
    let wait_us = (t["wait_ms"].as_f64().unwrap() * 1000.0).round() as u64;
    let vmstat = &out.vmstat;
    let restore: u64 = vmstat
        .lines()
        .find_map(|l| l.strip_prefix("workingset_restore_anon "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(restore > 0, "the test needs working-set refaults");
    let (some, full) = totals(&s);
    assert!(
        some > stall_us + 1,
        "some {some} us, direct stall {stall_us} us"
    );
    assert!(
        some <= stall_us + wait_us + 1,
        "some {some}, stall {stall_us}, waits {wait_us}"
    );
    // The only task sleeps through its thrashing reads with nothing else to run: full.
    assert_eq!(full, some);
}

/// kswapd's `balance_pgdat` is a memory stall (the system group's), and `full` never
/// exceeds `some`.
#[test]
fn kswapd_reclaim_is_pressure_and_full_never_exceeds_some() {
    let out = go(&scenario(
        "name = \"k\"\n[sim]\nduration = \"4s\"\n[host]\nram = \"256MiB\"\ncpus = 2\n\
         [swap]\nsize = \"1GiB\"\n\
         [[workload]]\nname = \"w\"\n[workload.anon]\nsize = \"512MiB\"\n\
         pattern = \"sequential\"\n",
    ));
    let s = summary(&out);
    assert!(s["headline"]["pgscan_kswapd"].as_u64().unwrap() > 0);
    let (some, full) = totals(&s);
    assert!(some > 0);
    assert!(full <= some);
    let a = out.timeseries.column("psi_memory_some_total_us").unwrap();
    let b = out.timeseries.column("psi_memory_full_total_us").unwrap();
    assert!(a.iter().zip(&b).all(|(s, f)| f <= s));
    assert!(*a.last().unwrap() > 0);
}

/// Without memory pressure nothing stalls: every figure of the file is zero.
#[test]
fn no_pressure_no_stall() {
    let out = go(&scenario(
        "name = \"idle\"\n[sim]\nduration = \"5s\"\n[host]\nram = \"1GiB\"\ncpus = 2\n\
         [[workload]]\nname = \"w\"\n[workload.anon]\nsize = \"64MiB\"\npasses = 50\n",
    ));
    assert_eq!(
        file(&out, "pressure/memory"),
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n\
         full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    );
    assert_eq!(totals(&summary(&out)), (0, 0));
    let col = out.timeseries.column("psi_memory_some_total_us").unwrap();
    assert!(col.len() > 10 && col.iter().all(|&v| v == 0));
}

/// The same scenario and seed give the same pressure, byte for byte.
#[test]
fn pressure_is_deterministic() {
    let scn = lone_thread("[workload.anon]\nsize = \"320MiB\"\npattern = \"zipf\"\npasses = 30");
    let (a, b) = (go(&scn), go(&scn));
    assert_eq!(file(&a, "pressure/memory"), file(&b, "pressure/memory"));
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.timeseries, b.timeseries);
    assert!(totals(&summary(&a)).0 > 0);
}
