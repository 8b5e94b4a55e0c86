//! CPU time: every actor's work is charged to its CPU; with contention on, threads share CPUs
//! as 6.1's fair scheduler shares them (`engine/fair.rs`).

use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{run, RunOptions, RunOutput};

fn go(contention: bool, cpus: u32) -> RunOutput {
    go_with(contention, cpus, true, 64)
}

/// Two threads of `mib` MiB each in 256 MiB of RAM: from 128 MiB they swap, and wake kswapd.
fn go_with(contention: bool, cpus: u32, migration: bool, mib: u32) -> RunOutput {
    let text = format!(
        r#"
[host]
ram = "256MiB"
cpus = {cpus}
cpu_contention = {contention}
cpu_migration = {migration}
[swap]
size = "256MiB"
[[workload]]
name = "a"
anon = {{ size = "{mib}MiB", passes = 8, think = "200ns" }}
[[workload]]
name = "b"
anon = {{ size = "{mib}MiB", passes = 8, think = "200ns" }}
"#
    );
    let scn = parse_str(&text, "cpu.toml").unwrap();
    run(&scn, &RunOptions::default(), &mut |_, _| true).unwrap()
}

/// summary.json's `cpus` rows.
fn cpu_rows(out: &RunOutput) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    v["cpus"].as_array().unwrap().clone()
}

fn cpus(out: &RunOutput) -> Vec<(f64, f64)> {
    cpu_rows(out)
        .iter()
        .map(|c| {
            (
                c["busy_ms"].as_f64().unwrap(),
                c["runq_wait_ms"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn sim_ms(out: &RunOutput) -> f64 {
    let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    v["sim_time_ns"].as_f64().unwrap() / 1e6
}

#[test]
fn busy_time_is_accounted_and_nobody_waits_without_contention() {
    let out = go(false, 2);
    let c = cpus(&out);
    assert_eq!(c.len(), 2);
    assert!(c.iter().all(|&(busy, _)| busy > 0.0), "{c:?}");
    assert!(c.iter().all(|&(_, wait)| wait == 0.0), "{c:?}");
    // The time series carries the same figures, cumulative.
    let busy0 = out
        .timeseries
        .column("cpu0_busy_ns")
        .expect("cpu0_busy_ns column");
    assert!(busy0.windows(2).all(|w| w[0] <= w[1]));
    assert!(*busy0.last().unwrap() > 0);
}

#[test]
fn one_shared_cpu_makes_two_threads_wait_and_run_longer() {
    let free = go(false, 1);
    let shared = go(true, 1);
    let (_, wait) = cpus(&shared)[0];
    assert!(wait > 0.0, "threads queued for the one CPU");
    // Two CPU-bound threads on one CPU take longer than with a CPU each.
    assert!(
        sim_ms(&shared) > 1.3 * sim_ms(&free),
        "{} ms vs {} ms",
        sim_ms(&shared),
        sim_ms(&free)
    );
    // Contention on a machine with a CPU per thread changes little: the threads start on
    // CPUs 1 and 0 (thread i on (i + 1) mod cpus), and only kswapd shares CPU 0.
    let roomy = go_with(true, 3, false, 64);
    assert!(sim_ms(&roomy) < 1.3 * sim_ms(&free));
}

/// Per CPU: (wake-up preemptions, tick preemptions, threads that came from another CPU).
fn sched(out: &RunOutput) -> Vec<(u64, u64, u64)> {
    cpu_rows(out)
        .iter()
        .map(|c| {
            let n = |k: &str| c[k].as_u64().unwrap();
            (
                n("wakeup_preemptions"),
                n("tick_preemptions"),
                n("migrations_in"),
            )
        })
        .collect()
}

#[test]
fn on_one_cpu_ticks_end_slices_and_a_woken_kswapd_preempts() {
    // Two busy threads and kswapd on one CPU: the threads take turns a slice at a time (the
    // ticks end them), and kswapd, asleep long enough to be credited half a period, takes
    // the CPU when it is woken; nothing can move.
    let out = go_with(true, 1, true, 160);
    let s = sched(&out);
    assert_eq!(s.len(), 1);
    let (wakeups, ticks, moved) = s[0];
    assert!(ticks > 0 && wakeups > 0, "{s:?}");
    assert_eq!(moved, 0);
    // Turns of a slice: at most one tick preemption per 6 ms slice of the run.
    assert!(
        (ticks as f64) < sim_ms(&out) / 6.0,
        "{ticks} in {} ms",
        sim_ms(&out)
    );
}

#[test]
fn threads_move_to_an_idle_cpu_and_wait_less_than_pinned() {
    // Two busy threads on two CPUs, each starting on its own, with kswapd on CPU 0:
    // pinned, kswapd and thread b (CPU 0) queue for CPU 0 while thread a's CPU 1 idles in
    // its faults and swap-ins; free to move, they take it.
    let pinned = go_with(true, 2, false, 160);
    let free = go_with(true, 2, true, 160);
    let wait = |o: &RunOutput| cpus(o).iter().map(|c| c.1).sum::<f64>();
    assert!(sched(&pinned).iter().all(|c| c.2 == 0));
    assert!(
        sched(&free).iter().map(|c| c.2).sum::<u64>() > 0,
        "{:?}",
        sched(&free)
    );
    assert!(
        wait(&free) < wait(&pinned),
        "{} vs {} ms",
        wait(&free),
        wait(&pinned)
    );
}
