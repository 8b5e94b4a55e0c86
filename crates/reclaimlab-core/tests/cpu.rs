//! CPU time: every actor's work is charged to its CPU; with contention on, an actor due while
//! its CPU is busy waits for it.

use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{run, RunOptions, RunOutput};

fn go(contention: bool, cpus: u32) -> RunOutput {
    let text = format!(
        r#"
[host]
ram = "256MiB"
cpus = {cpus}
cpu_contention = {contention}
[swap]
size = "256MiB"
[[workload]]
name = "a"
anon = {{ size = "64MiB", passes = 8, think = "200ns" }}
[[workload]]
name = "b"
anon = {{ size = "64MiB", passes = 8, think = "200ns" }}
"#
    );
    let scn = parse_str(&text, "cpu.toml").unwrap();
    run(&scn, &RunOptions::default(), &mut |_, _| true).unwrap()
}

fn cpus(out: &RunOutput) -> Vec<(f64, f64)> {
    let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    v["cpus"]
        .as_array()
        .unwrap()
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
    // Contention on a machine with a CPU per thread changes little: the threads are pinned
    // to CPUs 1 and 0 (thread i on (i + 1) mod cpus), and only kswapd shares CPU 0.
    let roomy = go(true, 3);
    assert!(sim_ms(&roomy) < 1.3 * sim_ms(&free));
}
