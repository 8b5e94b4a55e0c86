//! Filesystems as memory the kernel fights over (issue 31): an XFS or ext4 file-creation storm
//! beside an anonymous working set in a small machine with swap (`scenarios/*-create-storm.toml`)
//! swaps the working set out and steals pages, and does less of it as `vfs_cache_pressure`
//! rises; a `[workload.stat]` walk over what fsmark created hits, recycles or reads back its
//! inodes as the caches left them.

use std::path::PathBuf;

use reclaimlab_core::scenario::{parse_file, parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

fn example(name: &str) -> Scenario {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.toml"));
    parse_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn go(scn: &Scenario, seed: u64, inv: InvariantMode) -> RunOutput {
    let opts = RunOptions {
        seed: Some(seed),
        invariants: inv,
        trace: None,
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{}: {e}", scn.name))
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters.iter().find(|(k, _)| k == name).unwrap().1
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

fn meminfo_kb(out: &RunOutput, line: &str) -> u64 {
    let text = &out
        .extra_files
        .iter()
        .find(|(n, _)| n == "meminfo")
        .unwrap()
        .1;
    text.lines()
        .find(|l| l.starts_with(&format!("{line}:")))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no {line} in {text}"))
        .parse()
        .unwrap()
}

#[test]
fn create_storm_swaps_and_steals_on_xfs_and_ext4() {
    for name in ["xfs-create-storm", "ext4-create-storm"] {
        let scn = example(name);
        let out = go(&scn, 1, InvariantMode::Periodic(500));
        let (swapped, stolen) = (
            counter(&out, "pswpout"),
            counter(&out, "pgsteal_kswapd") + counter(&out, "pgsteal_direct"),
        );
        // Before issue 31 the model swapped none and stole none here: the caches' own kernel
        // memory was not allocated, and the working set was never pushed out. (XFS swaps 663
        // and steals 650 at seed 1 since its inodes stay pinned until a checkpoint,
        // docs/MODEL.md, "Development on the third sitting's boots", 8; ext4 about 1,900.)
        assert!(swapped >= 500, "{name}: pswpout {swapped}");
        assert!(stolen >= 500, "{name}: pgsteal {stolen}");
        assert!(counter(&out, "slabs_scanned") > 0, "{name}");
        // The slab is what took the memory: it is most of the machine (on XFS partly
        // unreclaimable since the log items' shadow buffers, docs/MODEL.md).
        let total = meminfo_kb(&out, "MemTotal");
        let srecl = meminfo_kb(&out, "SReclaimable");
        let slab = meminfo_kb(&out, "Slab");
        assert!(slab * 2 > total, "{name}: Slab {slab} of {total} kB");
        assert!(
            srecl * 5 > total * 2,
            "{name}: SReclaimable {srecl} of {total} kB"
        );
        assert_eq!(
            meminfo_kb(&out, "Slab"),
            srecl + meminfo_kb(&out, "SUnreclaim")
        );
        let s = summary(&out);
        let buffers = meminfo_kb(&out, "Buffers");
        if name.starts_with("ext4") {
            // ext4's metadata blocks are block-device page cache; XFS's buffers are not.
            assert_eq!(buffers, s["fs"]["bdev"]["pages"].as_u64().unwrap() * 4);
            assert!(buffers > 0);
        } else {
            assert_eq!(buffers, 0);
            assert!(s["fs"]["buffer_pages"].as_u64().unwrap() > 0);
        }
    }
}

/// pswpout of the storm at `pressure`, seeds 1..=`seeds`.
fn pswpout(name: &str, pressure: u64, seeds: u64) -> Vec<u64> {
    let mut scn = example(name);
    scn.sysctl.vfs_cache_pressure = pressure;
    (1..=seeds)
        .map(|seed| counter(&go(&scn, seed, InvariantMode::Off), "pswpout"))
        .collect()
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

#[test]
fn pswpout_falls_as_vfs_cache_pressure_rises() {
    // ext4, recorded (seeds 1, 2, 3), pswpout at 100 / 200 / 500:
    //   1659 1995 2928 / 1492 1543 2351 / 2190 1337 1600 (means 2194 / 1795 / 1709)
    // The mean falls at each step; single seeds do not always, so the claim is about the mean.
    let means: Vec<f64> = [100, 200, 500]
        .iter()
        .map(|&p| mean(&pswpout("ext4-create-storm", p, 3)))
        .collect();
    eprintln!("ext4-create-storm: mean pswpout at 100/200/500: {means:?}");
    assert!(
        means[0] > means[1] && means[1] > means[2],
        "ext4: {means:?}"
    );
    // XFS, since it checkpoints its log by space (docs/MODEL.md, "Development on the third
    // sitting's boots", 8), seeds 1-5 at 100 / 200 / 500: means 1597 / 1125 / 1832, each
    // seed's spread about 30 %. Above 200 the model's XFS storm does not swap less: most of
    // what the superblock shrinker evicts is pinned or dirty and waits for a checkpoint and
    // xfsaild whatever the pressure. Neither does the guest's (the third sitting's XFS storms,
    // docs/VALIDATION.md: pswpout 58,667 / 51,653 / 60,219 at 100 / 200 / 500), so the fall
    // from the default to 200 is the claim.
    let base = mean(&pswpout("xfs-create-storm", 100, 5));
    let m = mean(&pswpout("xfs-create-storm", 200, 5));
    eprintln!("xfs-create-storm: mean pswpout at 100: {base}, at 200: {m}");
    assert!(m < base * 0.9, "xfs at 200: {m} against {base} at 100");
}

fn stat_scenario(fs_type: &str, drop: bool) -> Scenario {
    let drop = if drop {
        "[[workload]]\nname = \"drop\"\n[workload.drop_caches]\nvalue = 2\nafter = \"1s\"\n"
    } else {
        ""
    };
    let text = format!(
        "name = \"stat\"\n[sim]\nduration = \"4s\"\n[host]\nram = \"512MiB\"\n[swap]\nsize = \"0\"\n\
         [fs]\ntype = \"{fs_type}\"\nags = 2\nio_latency = \"200us\"\n\
         [[workload]]\nname = \"fsmark\"\n[workload.fsmark]\nfiles = 2000\n\
         nofs_fraction = 0.0\nrss = \"0\"\n{drop}\
         [[workload]]\nname = \"walk\"\nstart = \"2s\"\n[workload.stat]\npasses = 2\n"
    );
    parse_str(&text, "stat.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn stat_walk_hits_recycles_or_reads_back() {
    for fs_type in ["xfs", "ext4"] {
        // No pressure: every lookup of both passes finds its dentry.
        let out = go(
            &stat_scenario(fs_type, false),
            1,
            InvariantMode::Periodic(500),
        );
        let s = summary(&out);
        let fs = &s["fs"];
        assert_eq!(s["stat"]["lookups"], 4000, "{fs_type}");
        assert_eq!(s["stat"]["passes"], 2, "{fs_type}");
        assert_eq!(fs["lookups_cached"], 4000, "{fs_type}");
        assert_eq!(
            (fs["lookups_cold"].as_u64(), fs["xs_ig_attempts"].as_u64()),
            (Some(0), Some(0))
        );

        // drop_caches 2 pruned every dentry and evicted every inode before the walk (the
        // files are empty: no dirty page keeps an inode in memory).
        let out = go(
            &stat_scenario(fs_type, true),
            1,
            InvariantMode::Periodic(500),
        );
        let s = summary(&out);
        let fs = &s["fs"];
        assert_eq!(fs["dentries_pruned"], 2000, "{fs_type}");
        // The first pass misses every dentry, the second hits every one it re-made.
        assert_eq!(fs["lookups_cached"], 2000, "{fs_type}");
        let (recycled, cold) = (
            fs["lookups_recycled"].as_u64().unwrap(),
            fs["lookups_cold"].as_u64().unwrap(),
        );
        assert_eq!(recycled + cold, 2000, "{fs_type}");
        if fs_type == "ext4" {
            // ext4 freed every evicted inode: each is read back, from its inode-table block,
            // which drop_caches 2 left in the block device's page cache: no disk read.
            assert_eq!(cold, 2000);
            assert_eq!(fs["xs_ig_attempts"], 0, "no XFS counters on ext4");
            assert_eq!(fs["bdev"]["reads"], 0, "{fs_type}");
            assert!(s["latency"]["lookup"]["max_ns"].as_u64().unwrap() < 200_000);
        } else {
            // XFS keeps what it could not reclaim yet (recycled: xs_ig_found), reads the rest.
            assert_eq!(fs["xs_ig_attempts"], 2000);
            assert_eq!(fs["xs_ig_found"].as_u64().unwrap(), recycled);
            assert_eq!(fs["xs_ig_missed"].as_u64().unwrap(), cold);
        }
        // A read-back lookup waits for the disk: the slowest lookup took at least io_latency.
        if cold > 0 && fs_type == "xfs" {
            assert!(s["latency"]["lookup"]["max_ns"].as_u64().unwrap() >= 200_000);
        }
    }
}
