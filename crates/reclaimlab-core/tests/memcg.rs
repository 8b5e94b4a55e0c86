//! Memory cgroups wired into the engine (issue 34): a workload in a cgroup whose memory.max is
//! below its footprint stays under it at every sample and reclaims and swaps inside it; without
//! swap it is OOM-killed inside its cgroup; a cgroup at memory.min keeps its pages while its
//! sibling is reclaimed; the outputs' files and summary; determinism.

use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

fn go(text: &str, inv: InvariantMode) -> RunOutput {
    let scn: Scenario = parse_str(text, "memcg.toml").unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions {
        seed: None,
        invariants: inv,
        trace: None,
    };
    run(&scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"))
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

fn file<'a>(out: &'a RunOutput, name: &str) -> &'a str {
    &out.extra_files
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no file {name}"))
        .1
}

fn stat(out: &RunOutput, cg: &str, key: &str) -> u64 {
    file(out, &format!("cgroup/{cg}/memory.stat"))
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} ")))
        .unwrap_or_else(|| panic!("no {key}"))
        .parse()
        .unwrap()
}

fn event(out: &RunOutput, cg: &str, key: &str) -> u64 {
    file(out, &format!("cgroup/{cg}/memory.events"))
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} ")))
        .unwrap_or_else(|| panic!("no {key}"))
        .parse()
        .unwrap()
}

const MIB: u64 = 1 << 20;

/// A 1 GiB host; a workload touching 96 MiB twice in a cgroup of memory.max 64 MiB.
fn limited(swap: &str) -> String {
    format!(
        "[host]\nram = \"1GiB\"\ncpus = 2\n[swap]\nsize = \"{swap}\"\n\
         [sim]\nsample_interval = \"10ms\"\n\
         [[cgroup]]\nname = \"box\"\nmemory.max = \"64M\"\n\
         [[workload]]\nname = \"hog\"\ncgroup = \"box\"\n\
         anon = {{ size = \"96MiB\", passes = 2 }}\n"
    )
}

#[test]
fn a_cgroup_over_its_footprint_reclaims_inside_its_limit() {
    let out = go(&limited("1GiB"), InvariantMode::Periodic(500));
    let max = 64 * MIB;
    let cur = out
        .timeseries
        .column("cgroup/box/memory.current")
        .expect("the cgroup's column");
    assert!(cur.len() > 5, "{} samples", cur.len());
    assert!(cur.iter().all(|&v| v as u64 <= max), "{cur:?}");
    // It filled its limit at some point.
    assert!(cur.iter().any(|&v| v as u64 > max - 4 * MIB), "{cur:?}");
    let peak: u64 = file(&out, "cgroup/box/memory.peak").trim().parse().unwrap();
    assert!(peak <= max && peak > max - MIB, "peak {peak}");
    assert!(event(&out, "box", "max") > 0);
    assert_eq!(event(&out, "box", "oom"), 0);
    // Limit reclaim swapped the cgroup's pages out and the second pass faulted them back.
    assert!(stat(&out, "box", "pgsteal_direct") > 0);
    assert!(stat(&out, "box", "pgmajfault") > 0);
    let s = summary(&out);
    assert!(
        s["cgroups"]["box"]["memory.events"]["max"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The host had room: global reclaim never ran, so /proc/vmstat counts no direct scan
    // (limit reclaim is not counted there) and no allocstall.
    let c = |n: &str| out.counters.iter().find(|(k, _)| k == n).unwrap().1;
    assert_eq!(c("pgscan_direct"), 0);
    assert_eq!(c("allocstall_normal") + c("allocstall_dma32"), 0);
    assert!(c("pswpout") > 0);
}

#[test]
fn without_swap_the_cgroup_ooms_inside_itself() {
    let text = limited("0")
        + "[[workload]]\nname = \"bystander\"\nanon = { size = \"32MiB\", hold = \"1s\" }\n";
    let out = go(&text, InvariantMode::Periodic(500));
    assert!(event(&out, "box", "oom") >= 1);
    assert_eq!(event(&out, "box", "oom_kill"), 1);
    let s = summary(&out);
    // The victim is the cgroup's workload, not the larger-or-not bystander outside it.
    let kills = s["oom_kills"].as_array().expect("oom_kills");
    assert_eq!(kills.len(), 1, "{kills:?}");
    assert_eq!(kills[0]["victim"], "hog");
    // Its memory went back: the cgroup is empty at the end.
    assert_eq!(file(&out, "cgroup/box/memory.current").trim(), "0");
}

#[test]
fn memory_min_keeps_a_cgroup_s_pages_while_its_sibling_is_reclaimed() {
    // 512 MiB host: "kept" fills 160 MiB and holds it; "pushed" then streams 600 MiB through
    // anonymous memory with swap, so global reclaim runs. "kept" is protected up to 200 MiB.
    let text = |min: &str| {
        format!(
            "[host]\nram = \"512MiB\"\ncpus = 2\n[swap]\nsize = \"2GiB\"\n\
             [[cgroup]]\nname = \"kept\"\nmemory.min = \"{min}\"\n\
             [[cgroup]]\nname = \"pushed\"\n\
             [[workload]]\nname = \"kept\"\ncgroup = \"kept\"\n\
             anon = {{ size = \"160MiB\", hold = \"3s\" }}\n\
             [[workload]]\nname = \"pushed\"\ncgroup = \"pushed\"\nstart = \"200ms\"\n\
             anon = {{ size = \"600MiB\", passes = 2 }}\n"
        )
    };
    let out = go(&text("200M"), InvariantMode::Periodic(2000));
    let kept = out.timeseries.column("cgroup/kept/memory.current").unwrap();
    let full = 160 * MIB as i64;
    // Once "kept" has its 160 MiB, it keeps every page to the end of its hold.
    let first = kept.iter().position(|&v| v >= full).expect("kept filled");
    let last = kept.iter().rposition(|&v| v >= full).unwrap();
    assert!(last > first + 10, "{kept:?}");
    assert!(kept[first..=last].iter().all(|&v| v == full), "{kept:?}");
    assert_eq!(
        stat(&out, "kept", "pgsteal_kswapd") + stat(&out, "kept", "pgsteal_direct"),
        0
    );
    let pushed = stat(&out, "pushed", "pgsteal_kswapd") + stat(&out, "pushed", "pgsteal_direct");
    assert!(pushed > 10_000, "{pushed}");
    // Without the protection, the same run takes pages from "kept" too.
    let out = go(&text("0"), InvariantMode::Off);
    let taken = stat(&out, "kept", "pgsteal_kswapd") + stat(&out, "kept", "pgsteal_direct");
    assert!(taken > 0, "{taken}");
}

#[test]
fn cgroup_runs_are_deterministic_and_write_the_kernel_s_files() {
    let a = go(&limited("1GiB"), InvariantMode::Off);
    let b = go(&limited("1GiB"), InvariantMode::Off);
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.extra_files, b.extra_files);
    assert_eq!(file(&a, "cgroup/box/memory.max"), "67108864\n");
    assert_eq!(file(&a, "cgroup/box/memory.high"), "max\n");
    let keys: Vec<&str> = file(&a, "cgroup/box/memory.stat")
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(&keys[..2], &["anon", "file"]);
    assert!(keys.contains(&"workingset_refault_anon") && keys.contains(&"pgscan"));
    let ev: Vec<&str> = file(&a, "cgroup/box/memory.events")
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        ev,
        ["low", "high", "max", "oom", "oom_kill", "oom_group_kill"]
    );
    // A run without [[cgroup]] has none of it.
    let plain = go(
        "[host]\nram = \"1GiB\"\n[[workload]]\nname = \"w\"\nanon = { size = \"16MiB\" }\n",
        InvariantMode::Off,
    );
    assert!(!plain
        .extra_files
        .iter()
        .any(|(n, _)| n.starts_with("cgroup/")));
    assert!(summary(&plain).get("cgroups").is_none());
    assert!(!plain
        .timeseries
        .names()
        .iter()
        .any(|n| n.starts_with("cgroup/")));
}

/// The 96 MiB workload under memory.high = 64M instead of a max, with or without swap.
fn high(swap: &str) -> String {
    limited(swap).replace("memory.max = \"64M\"", "memory.high = \"64M\"")
}

#[test]
fn memory_high_reclaims_on_the_task_and_throttles_what_it_cannot_reclaim() {
    // With swap, the task's own reclaim keeps the cgroup near memory.high: never past it by
    // more than a few charge batches, and no memory.max event.
    let out = go(&high("1GiB"), InvariantMode::Periodic(500));
    let cur = out.timeseries.column("cgroup/box/memory.current").unwrap();
    let h = 64 * MIB as i64;
    assert!(cur.iter().any(|&v| v >= h - MIB as i64), "{cur:?}");
    assert!(cur.iter().all(|&v| v <= h + 8 * MIB as i64), "{cur:?}");
    assert!(event(&out, "box", "high") > 0);
    assert_eq!(event(&out, "box", "max"), 0);
    assert!(stat(&out, "box", "pgsteal_direct") > 0);
    // Without swap nothing can be reclaimed: the task pays in sleep, 6.1's penalty, and the
    // run takes longer than without the limit, though the cgroup grows past memory.high.
    let out = go(&high("0"), InvariantMode::Periodic(500));
    let s = summary(&out);
    let slept = s["cgroups"]["box"]["high_throttled_ns"].as_u64().unwrap();
    assert!(slept > 1_000_000_000, "{slept}");
    let free = go(
        &limited("0").replace("memory.max = \"64M\"\n", ""),
        InvariantMode::Off,
    );
    let t = |o: &RunOutput| summary(o)["sim_time_ns"].as_u64().unwrap();
    assert!(
        t(&out) > t(&free) + slept / 2,
        "{} vs {}",
        t(&out),
        t(&free)
    );
    assert_eq!(event(&out, "box", "oom"), 0);
}

/// `scenarios/memcg-limit.toml`: "web" keeps its guaranteed pages while a file copy in the
/// root pushes global reclaim through every cgroup; "batch" stays under its memory.max.
#[test]
fn the_example_spares_the_guaranteed_pod_and_limits_the_batch_one() {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/memcg-limit.toml");
    let scn = reclaimlab_core::scenario::parse_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions {
        seed: None,
        invariants: InvariantMode::Periodic(2000),
        trace: None,
    };
    let out = run(&scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
    let c = |n: &str| out.counters.iter().find(|(k, _)| k == n).unwrap().1;
    // Global reclaim ran (the copy fills the host) ...
    assert!(c("pgsteal_kswapd") + c("pgsteal_direct") > 50_000);
    // ... and never took a page of "web".
    assert_eq!(
        stat(&out, "web", "pgsteal_kswapd") + stat(&out, "web", "pgsteal_direct"),
        0
    );
    let web = out.timeseries.column("cgroup/web/memory.current").unwrap();
    assert!(web.iter().any(|&v| v == 192 * MIB as i64), "{web:?}");
    // "batch" reclaimed and swapped inside its own limit.
    let batch = out
        .timeseries
        .column("cgroup/batch/memory.current")
        .unwrap();
    assert!(batch.iter().all(|&v| v as u64 <= 128 * MIB), "{batch:?}");
    assert!(event(&out, "batch", "max") > 0);
    assert!(stat(&out, "batch", "pgmajfault") > 0);
    // The parent counts its children's pages and events (hierarchical).
    let kube = out
        .timeseries
        .column("cgroup/kubepods/memory.current")
        .unwrap();
    assert!(kube
        .iter()
        .zip(&web)
        .zip(&batch)
        .all(|((k, w), b)| k == &(w + b)));
    assert_eq!(event(&out, "kubepods", "max"), event(&out, "batch", "max"));
}
