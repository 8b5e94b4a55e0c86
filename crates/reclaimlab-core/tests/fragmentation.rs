//! Fragmentation sources: aged zones (`host.fragmented_zone`) and high-order streams whose
//! blocks live for exponentially distributed times. Both decide whether high-order blocks can
//! exist, which is what kswapd's high-order balancing (seed 004) turns on.

use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

fn scenario(text: &str) -> Scenario {
    parse_str(text, "<test>").unwrap_or_else(|e| panic!("{e}"))
}

fn go(scn: &Scenario, seed: Option<u64>) -> RunOutput {
    let opts = RunOptions {
        seed,
        invariants: InvariantMode::Periodic(97),
        trace: None,
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"))
}

/// Free blocks per order of one zone, from `/proc/buddyinfo`.
fn buddy(out: &RunOutput, zone: &str) -> Vec<u64> {
    let line = out
        .buddyinfo
        .lines()
        .find(|l| l.split_whitespace().nth(3) == Some(zone))
        .unwrap_or_else(|| panic!("no zone {zone} in\n{}", out.buddyinfo));
    line.split_whitespace()
        .skip(4)
        .map(|n| n.parse().unwrap())
        .collect()
}

fn zone_summary(out: &RunOutput, zone: &str) -> serde_json::Value {
    let s: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    s["zones"]
        .as_array()
        .unwrap()
        .iter()
        .find(|z| z["zone"] == zone)
        .cloned()
        .unwrap()
}

fn aged(stride: u32) -> Scenario {
    scenario(&format!(
        "[sim]\nduration = \"1s\"\n[host]\nram = \"1GiB\"\nfragmented_zone = \"DMA32\"\n\
         fragment_stride = {stride}\n\
         [[workload]]\nname = \"a\"\n[workload.anon]\nsize = \"64MiB\"\npasses = 2\n"
    ))
}

#[test]
fn an_aged_zone_never_holds_a_block_of_its_stride() {
    for (stride, order) in [(8u32, 3usize), (512, 9)] {
        let out = go(&aged(stride), None);
        let blocks = buddy(&out, "DMA32");
        // Nothing at or above the stride's order, and the order just below it is plentiful.
        assert!(
            blocks[order..].iter().all(|&n| n == 0),
            "stride {stride}: {blocks:?}"
        );
        // One page in every `stride` is pinned: free is at most managed * (1 - 1/stride), and
        // each pinned page leaves one free block of the order just below beside it.
        let z = zone_summary(&out, "DMA32");
        let (managed, free) = (
            z["managed"].as_u64().unwrap(),
            z["free_at_end"].as_u64().unwrap(),
        );
        let pinned = managed / stride as u64;
        assert!(
            blocks[order - 1] + 20 >= pinned,
            "stride {stride}: {blocks:?}, {pinned} pinned"
        );
        assert!(
            free <= managed - pinned,
            "stride {stride}: {free} free of {managed}"
        );
        // DMA is untouched: its top-order blocks are all there.
        assert!(buddy(&out, "DMA")[10] > 0);
    }
}

#[test]
fn an_aged_zone_is_only_the_zone_named() {
    let text = "[sim]\nduration = \"1s\"\n[host]\nram = \"1GiB\"\n\
                [[workload]]\nname = \"a\"\n[workload.anon]\nsize = \"64MiB\"\npasses = 2\n";
    let out = go(&scenario(text), None);
    assert!(buddy(&out, "DMA32")[10] > 100, "{}", out.buddyinfo);
}

#[test]
fn aging_a_zone_the_host_lacks_is_a_clear_error() {
    // 1 GiB on q35 is all below 4 GiB: DMA and DMA32 only.
    let scn = scenario(
        "[host]\nram = \"1GiB\"\nfragmented_zone = \"Normal\"\n\
         [[workload]]\nname = \"a\"\n[workload.anon]\nsize = \"64MiB\"\n",
    );
    let opts = RunOptions {
        seed: None,
        invariants: InvariantMode::Off,
        trace: None,
    };
    let err = run(&scn, &opts, &mut |_, _| true).expect_err("no Normal zone to age");
    let msg = err.to_string();
    assert!(
        msg.contains("fragmented_zone") && msg.contains("no Normal zone"),
        "{msg}"
    );
}

fn slab(lifetimes: &str, seed_text: u64) -> Scenario {
    scenario(&format!(
        "[sim]\nseed = {seed_text}\nduration = \"10s\"\n[host]\nram = \"512MiB\"\n\
         [[workload]]\nname = \"slab\"\nduration = \"20s\"\n[workload.highorder]\norder = 0\n\
         gfp = \"kernel\"\nrate = 1000\nlifetime = \"1s\"\nlifetimes = \"{lifetimes}\"\n"
    ))
}

/// Pages held by kernel allocations when the run stops at 10 s, before the stream ends (its
/// live blocks).
fn held(out: &RunOutput) -> u64 {
    let s: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    s["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["managed"].as_u64().unwrap() - z["free_at_end"].as_u64().unwrap())
        .sum()
}

#[test]
fn fixed_lifetimes_hold_rate_times_lifetime() {
    let out = go(&slab("fixed", 1), None);
    // 1000/s for 1 s: 1000 blocks alive (the boundary one at most once more).
    let live = held(&out);
    assert!((1000..=1001).contains(&live), "{live}");
}

#[test]
fn exponential_lifetimes_hold_the_same_mean_but_vary_by_seed() {
    let a = go(&slab("exponential", 1), None);
    let b = go(&slab("exponential", 1), None);
    let c = go(&slab("exponential", 2), None);
    assert_eq!(
        a.summary_json, b.summary_json,
        "same seed, different result"
    );
    assert_eq!(a.buddyinfo, b.buddyinfo);
    assert_ne!(
        a.buddyinfo, c.buddyinfo,
        "the seed does not reach the lifetimes"
    );
    // Little's law: about rate x mean lifetime = 1000 alive; Poisson spread is about 32.
    for out in [&a, &c] {
        let live = held(out);
        assert!((850..=1150).contains(&live), "{live}");
    }
}

#[test]
fn exponential_lifetimes_leave_survivors_that_split_free_memory() {
    // Freed in allocation order, the blocks merge back; freed at random, the survivors keep
    // their neighbourhood split: more small free blocks at the end.
    let small = |out: &RunOutput| -> u64 { buddy(out, "DMA32")[..3].iter().sum() };
    let fixed = go(&slab("fixed", 1), None);
    let expo = go(&slab("exponential", 1), None);
    assert!(
        small(&expo) > 2 * small(&fixed).max(1),
        "fixed {:?} exponential {:?}",
        buddy(&fixed, "DMA32"),
        buddy(&expo, "DMA32")
    );
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters
        .iter()
        .find(|(n, _)| n == name)
        .map_or_else(|| panic!("no counter {name}"), |(_, v)| *v)
}

/// THP faults into a memory full of page cache (as the thp-fault validation scenario): with
/// `thp_defrag = "madvise"` they compact and reclaim for their huge pages; with `"never"` (the
/// validation guest's setting) they never stall, never wake kswapd, and fall back instead.
#[test]
fn thp_defrag_never_faults_never_reclaim_or_compact() {
    let text = |defrag: &str| {
        format!(
            "[host]\nram = \"512MiB\"\nthp_defrag = \"{defrag}\"\n\
             [[workload]]\nname = \"stream\"\n[workload.file]\nsize = \"768MiB\"\n\
             [[workload]]\nname = \"thp\"\nstart = \"1s\"\n[workload.highorder]\norder = 9\n\
             gfp = \"transhuge\"\nrate = 50\nlifetime = \"2s\"\ncount = 200\n"
        )
    };
    let stalls = |out: &RunOutput| {
        let s: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
        let ho = s["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["thread"] == "thp/highorder")
            .unwrap()["highorder"]
            .clone();
        (
            counter(out, "compact_stall"),
            counter(out, "allocstall_movable"),
            ho["failed"].as_u64().unwrap(),
        )
    };
    let (compact, direct, _) = stalls(&go(&scenario(&text("madvise")), None));
    assert!(
        compact > 0 && direct > 0,
        "madvise: {compact} compaction stalls, {direct} direct reclaims"
    );
    let (compact, direct, failed) = stalls(&go(&scenario(&text("never")), None));
    assert_eq!((compact, direct), (0, 0), "never: no stall of either kind");
    assert!(
        failed > 0,
        "never: a fault without a free huge page falls back"
    );
}

/// The same THP faults (`thp_defrag = "never"`: they take a free huge page or fall back), at the
/// validation guest's min_free_kbytes and with kswapd's scan as slow as the validation's TCG
/// guest (the reader then takes each freshly freed run of pages, and free memory stays in
/// pieces), with 6.1's proactive compaction: every 500 ms that kswapd is not running,
/// kcompactd compacts a node whose free memory is in pieces, and more faults find a huge page. Its moves count in
/// `pgmigrate_success` and the scanners' counters, not as kcompactd wake-ups, as 6.1 counts
/// them; proactiveness 0 and the 4.6-5.8 variant make no such pass.
#[test]
fn proactive_compaction_gives_thp_faults_huge_pages() {
    let text = |extra: &str| {
        format!(
            "[host]\nram = \"512MiB\"\nthp = true\nthp_defrag = \"never\"\n\
             [sysctl]\nmin_free_kbytes = 23104\n{extra}\
             [cost]\nfile_miss = \"20us\"\nscan_unmapped = \"3us\"\n\
             [[workload]]\nname = \"stream\"\n[workload.file]\nsize = \"768MiB\"\n\
             [[workload]]\nname = \"thp\"\nstart = \"1s\"\n[workload.highorder]\norder = 9\n\
             gfp = \"transhuge\"\nrate = 50\nlifetime = \"2s\"\ncount = 400\n"
        )
    };
    let faults = |out: &RunOutput| {
        let s: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
        s["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["thread"] == "thp/highorder")
            .unwrap()["highorder"]["succeeded"]
            .as_u64()
            .unwrap()
    };
    let on = go(&scenario(&text("")), None);
    let off = go(&scenario(&text("compaction_proactiveness = 0\n")), None);
    let old = go(&scenario(&text("[policy]\nkcompactd = \"v4.6\"\n")), None);
    assert!(
        faults(&on) > faults(&off),
        "huge pages: {} with proactive compaction, {} without",
        faults(&on),
        faults(&off)
    );
    let moved = counter(&on, "pgmigrate_success");
    assert!(moved > 0 && counter(&on, "compact_migrate_scanned") > 0);
    assert_eq!(counter(&on, "compact_isolated"), 2 * moved);
    assert_eq!(counter(&on, "compact_daemon_wake"), 0);
    assert_eq!(counter(&on, "compact_daemon_migrate_scanned"), 0);
    assert_eq!(counter(&off, "pgmigrate_success"), 0);
    assert_eq!(
        off.counters, old.counters,
        "proactiveness 0 is the 4.6 daemon"
    );
}
