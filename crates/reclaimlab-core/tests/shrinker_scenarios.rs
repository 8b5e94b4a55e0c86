//! The filesystem examples (`scenarios/xfs-*.toml`): invariants after every event on a small
//! one, and on the others after every few hundred events; the outputs they add (slabinfo,
//! shrinker debugfs, summary objects, trace events); determinism; and a run without `[fs]`
//! that reports none of it.

use std::path::PathBuf;

use reclaimlab_core::observe::ftrace::TraceFormat;
use reclaimlab_core::scenario::{parse_file, parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

fn example(name: &str) -> Scenario {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.toml"));
    parse_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn go(scn: &Scenario, inv: InvariantMode, trace: bool) -> RunOutput {
    let opts = RunOptions {
        seed: None,
        invariants: inv,
        trace: trace.then_some(TraceFormat::Kernel),
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{}: {e}", scn.name))
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters.iter().find(|(k, _)| k == name).unwrap().1
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

fn file<'a>(out: &'a RunOutput, name: &str) -> &'a str {
    &out.extra_files.iter().find(|(n, _)| n == name).unwrap().1
}

#[test]
fn drop_caches_example_every_event() {
    let scn = example("xfs-drop-caches");
    let out = go(&scn, InvariantMode::EveryEvent, true);
    assert_eq!(counter(&out, "drop_slab"), 1);
    assert_eq!(counter(&out, "drop_pagecache"), 1);
    let s = summary(&out);
    let fs = &s["fs"];
    // Every one of the 20,000 dentries was pruned and its inode evicted to XFS; the inodes
    // were still dirty (never written back in 3 s), so XFS reclaim kept them.
    assert_eq!(fs["creates"], 20000);
    assert_eq!(fs["dentries_pruned"], 20000);
    assert_eq!(fs["inodes_evicted"], 20000);
    assert_eq!(fs["xs_ig_reclaims"], 0);
    assert_eq!(fs["xfs_reclaimable"], 20000);
    // Four xfs_inodes per page: 5,000 slab pages left, all reclaimable; no dentry page.
    // Besides, XFS's own kernel memory (all of it reclaimable slab): an xfs_ili per logged
    // inode (21 a page); an xfs_buf (10 a page) per inode cluster buffer (two directories of
    // 10,000 files, one per AG: 313 clusters of 32 inodes each) and per directory block (157
    // of 64 entries each).
    let ili_pages = 20000u64.div_ceil(4096 / 192);
    let bufs = 2 * 10000u64.div_ceil(32) + 2 * 10000u64.div_ceil(64);
    assert_eq!(bufs, 940);
    let reclaimable = 5000 + ili_pages + bufs.div_ceil(4096 / 384);
    assert!(
        out.vmstat
            .contains(&format!("\nnr_slab_reclaimable {reclaimable}\n")),
        "{reclaimable}"
    );
    assert!(file(&out, "slabinfo").contains("\nxfs_ili            20000  20013    192   21"));
    assert!(file(&out, "slabinfo")
        .contains(&format!("\nxfs_buf              {bufs}    940    384   10")));
    assert!(file(&out, "slabinfo").contains("\nxfs_inode          20000  20000   1024    4"));
    assert!(file(&out, "slabinfo").contains("\ndentry                 0      0    192   21"));
    assert!(file(&out, "shrinker_debugfs")
        .starts_with("/sys/kernel/debug/shrinker/sb-xfs-0/count: 1 20000\n"));
    assert!(counter(&out, "slabs_scanned") >= 40000);
    // drop_slab runs at priority 0, with GFP_KERNEL, in 6.1's trace format.
    let trace = out.trace.as_deref().unwrap();
    let start = trace
        .lines()
        .find(|l| l.contains("mm_shrink_slab_start:"))
        .expect("a shrink_slab start event");
    assert!(
        start.contains("super_cache_scan+0x0/0x1a0")
            && start.contains(": nid: 0 objects to shrink 0 gfp_flags GFP_KERNEL cache items 20000 delta 40000 total_scan 40000 priority 0"),
        "{start}"
    );
    assert!(trace.contains("mm_shrink_slab_end:"));
}

/// A shorter copy of an example, checked after every `n`th event.
fn shortened(name: &str, duration: &str, n: u64) -> RunOutput {
    let mut scn = example(name);
    scn.sim.duration_ns =
        Some(reclaimlab_core::scenario::units::parse_duration_ns(duration).unwrap());
    go(&scn, InvariantMode::Periodic(n), false)
}

#[test]
fn simoops_example_keeps_its_invariants() {
    let out = shortened("xfs-simoops", "3s", 53);
    // The checked window reaches reclaim: kswapd and the workers' direct reclaim both ran.
    assert!(counter(&out, "pgsteal_kswapd") > 10_000);
    assert!(counter(&out, "allocstall_movable") + counter(&out, "allocstall_normal") > 0);
    let s = summary(&out);
    assert!(s["simoops"]["units"].as_u64().unwrap() > 100);
    let lat = &s["latency"]["allocation"];
    assert!(lat["count"].as_u64().unwrap() > 100);
    assert!(lat["p50_ns"].as_u64().unwrap() <= lat["p99_ns"].as_u64().unwrap());
    assert!(s["fsmark"]["files_created"].as_u64().unwrap() > 10_000);
}

#[test]
fn fsmark_example_keeps_its_invariants() {
    // The whole run: at 54.9 s a slab page allocation once reclaimed objects of its own cache
    // (the shrinkers ran inside it), which left a page the cache did not need.
    let out = go(&example("xfs-fsmark"), InvariantMode::Periodic(997), false);
    assert_eq!(summary(&out)["fsmark"]["files_created"], 800_000);
    let s = summary(&out);
    let sh = &s["shrinkers"][0];
    assert_eq!(sh["name"], "sb-xfs-0");
    assert!(sh["calls"].as_u64().unwrap() > 0);
    assert!(s["fs"]["creates"].as_u64().unwrap() > 10_000);
}

#[test]
fn same_scenario_and_seed_same_bytes() {
    let mut scn = example("xfs-simoops");
    scn.sim.duration_ns = Some(2_000_000_000);
    let a = go(&scn, InvariantMode::Off, true);
    let b = go(&scn, InvariantMode::Off, true);
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.vmstat, b.vmstat);
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.extra_files, b.extra_files);
}

#[test]
fn without_a_filesystem_nothing_is_added() {
    let scn = parse_str(
        "name = \"plain\"\n[sim]\nduration = \"1s\"\n[host]\nram = \"256MiB\"\n\
         [[workload]]\nname = \"w\"\nanon = { size = \"64MiB\" }\n",
        "plain.toml",
    )
    .unwrap();
    let out = go(&scn, InvariantMode::Off, false);
    let s = summary(&out);
    for k in ["shrinkers", "slab", "fs", "latency", "simoops", "fsmark"] {
        assert!(s.get(k).is_none(), "{k}");
    }
    // Only meminfo and pressure/memory, which every run writes: no slab, nothing in Slab.
    let names: Vec<&str> = out.extra_files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["meminfo", "pressure/memory"]);
    assert!(file(&out, "meminfo").contains("\nSlab:                  0 kB\n"));
    assert_eq!(counter(&out, "slabs_scanned"), 0);
}
