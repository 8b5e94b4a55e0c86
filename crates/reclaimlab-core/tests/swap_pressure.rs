//! Swap and writeback under pressure (issue "Faithful under pressure"): the swap-out pipeline
//! frees what it writes, the device queue bounds the pages in flight, swap readahead reads
//! windows, and readahead may reclaim (the throttles' wake-up rules are unit tests in
//! `machine/vmscan/throttle.rs`). Run in release (`cargo test --release`).

use reclaimlab_core::observe::ftrace::TraceFormat;
use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

fn scenario(body: &str) -> Scenario {
    let text = format!("name = \"swap-pressure\"\n{body}");
    parse_str(&text, "<test>").unwrap_or_else(|e| panic!("{e}"))
}

fn go(scn: &Scenario, trace: bool) -> RunOutput {
    let opts = RunOptions {
        seed: None,
        invariants: InvariantMode::Periodic(100_000),
        trace: trace.then_some(TraceFormat::Kernel),
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"))
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    let v = out.counters.iter().find(|(k, _)| k == name);
    v.unwrap_or_else(|| panic!("no counter {name}")).1
}

fn column(out: &RunOutput, name: &str) -> Vec<i64> {
    let c = out.timeseries.column(name);
    c.unwrap_or_else(|| panic!("no column {name}"))
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

/// 1.5 x RAM of anonymous memory touched in order three times, with swap as large as RAM.
fn one_and_a_half_ram(extra: &str) -> Scenario {
    scenario(&format!(
        "[host]\nram = \"1GiB\"\ncpus = 2\n[swap]\nsize = \"1GiB\"\n{extra}\n\
         [[workload]]\nname = \"hog\"\n[workload.anon]\nsize = \"1536MiB\"\npasses = 3\n"
    ))
}

/// The regression: swap slots used to fill with pages that had been written out but were
/// never freed (reclaim re-activated them while they were under writeback, and the end of
/// writeback left them on the active list), until the OOM killer struck.
#[test]
fn one_and_a_half_ram_with_swap_equal_to_ram_finishes_without_oom() {
    let out = go(&one_and_a_half_ram(""), false);
    let s = summary(&out);
    assert_eq!(counter(&out, "oom_kill"), 0);
    assert_eq!(s["stop_reason"], "all workloads finished");
    assert_eq!(s["threads"][0]["oom_killed"], false);
    // Every pass touched every page: 3 x 393,216 accesses.
    assert_eq!(s["threads"][0]["accesses"], 3 * 393_216);
    let (pswpout, steal) = (counter(&out, "pswpout"), counter(&out, "pgsteal_anon"));
    // What is written out is freed one writeback later. The only pages written and not
    // reclaimed are the last ones rotated to the inactive tail when the program exited.
    assert!(
        steal * 100 >= pswpout * 98,
        "pgsteal_anon {steal} vs pswpout {pswpout}"
    );
    // Pages under writeback are no longer re-activated en masse.
    assert!(
        counter(&out, "pgactivate") * 100 < pswpout,
        "pgactivate {}",
        counter(&out, "pgactivate")
    );
    // Each end of writeback of a page reclaim wanted rotates it to the inactive tail.
    assert_eq!(counter(&out, "pgrotated"), pswpout);
}

/// The device queue holds at most nr_requests requests of 32 pages: a swap-out beyond that
/// waits, so the pages under writeback stay bounded however fast reclaim runs.
#[test]
fn pages_under_writeback_are_bounded_by_the_request_slots() {
    for nr_requests in [4u64, 64] {
        let mut scn = one_and_a_half_ram("");
        scn.swap.nr_requests = nr_requests;
        let out = go(&scn, false);
        let peak = *column(&out, "nr_writeback").iter().max().unwrap();
        assert!(peak > 0, "nothing was ever under writeback");
        assert!(
            peak as u64 <= nr_requests * 32,
            "nr_requests {nr_requests}: peak {peak}"
        );
        assert_eq!(counter(&out, "oom_kill"), 0);
    }
}

/// VMA-based swap readahead (page-cluster 3): a sequential re-read faults once per window
/// of up to 8 pages and finds the rest in the swap cache; page-cluster 0 turns it off.
#[test]
fn swap_readahead_reads_windows_on_a_sequential_reread() {
    let out = go(&one_and_a_half_ram(""), false);
    let (ra, hit) = (counter(&out, "swap_ra"), counter(&out, "swap_ra_hit"));
    let (pswpin, majfault) = (counter(&out, "pswpin"), counter(&out, "pgmajfault"));
    assert!(ra > 0);
    // Every page read is either the faulting one or a readahead page.
    assert_eq!(pswpin, majfault + ra);
    // In order, nearly every page read ahead is used.
    assert!(hit * 100 >= ra * 99, "swap_ra_hit {hit} of swap_ra {ra}");
    // Windows reach 8 pages: well under a quarter of the pages read are faults.
    assert!(
        majfault * 5 < pswpin,
        "pgmajfault {majfault}, pswpin {pswpin}"
    );

    let mut off = one_and_a_half_ram("");
    off.sysctl.page_cluster = 0;
    let out = go(&off, false);
    assert_eq!(counter(&out, "swap_ra"), 0);
    assert_eq!(counter(&out, "pgmajfault"), counter(&out, "pswpin"));
}

/// On a rotational swap device 6.1 reads ahead by slot (`swap_cluster_readahead`). Pages
/// swapped out in order sit in consecutive slots, so a sequential re-read reads the same
/// windows as the address-based variant; random faults find unrelated pages in the
/// neighbouring slots, the hits stay rare, and the window shrinks back to one page.
#[test]
fn rotational_swap_reads_ahead_by_slot() {
    let mut seq = one_and_a_half_ram("");
    seq.swap.rotational = true;
    let out = go(&seq, false);
    let (ra, hit) = (counter(&out, "swap_ra"), counter(&out, "swap_ra_hit"));
    let (pswpin, majfault) = (counter(&out, "pswpin"), counter(&out, "pgmajfault"));
    assert!(ra > 0);
    assert_eq!(pswpin, majfault + ra);
    assert!(hit * 100 >= ra * 95, "swap_ra_hit {hit} of swap_ra {ra}");
    assert!(
        majfault * 5 < pswpin,
        "pgmajfault {majfault}, pswpin {pswpin}"
    );
    // Same workload, address-based readahead: the same order of magnitude.
    let vma = go(&one_and_a_half_ram(""), false);
    let vma_ra = counter(&vma, "swap_ra");
    assert!(
        ra * 10 > vma_ra * 8 && ra * 10 < vma_ra * 12,
        "by slot {ra}, by address {vma_ra}"
    );

    let random = scenario(
        "[host]\nram = \"256MiB\"\n[swap]\nsize = \"512MiB\"\nrotational = true\n\
         [[workload]]\nname = \"r\"\n[workload.anon]\nsize = \"384MiB\"\n\
         pattern = \"random\"\npasses = 2\nwrite_fraction = 1.0\n",
    );
    // A window opens only after two faults on neighbouring slots or a hit, which random
    // faults seldom give: a few dozen readahead pages a run, and some seeds none at all (the
    // order in which pages were swapped out decides it), so three seeds are taken together.
    let mut total_ra = 0;
    for seed in 1..=3 {
        let opts = RunOptions {
            seed: Some(seed),
            invariants: InvariantMode::Periodic(100_000),
            trace: None,
        };
        let out = run(&random, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
        let (ra, hit) = (counter(&out, "swap_ra"), counter(&out, "swap_ra_hit"));
        let majfault = counter(&out, "pgmajfault");
        assert!(
            majfault > 10_000,
            "the random pass swaps: {majfault} major faults"
        );
        assert!(ra * 10 < majfault, "swap_ra {ra} against {majfault} faults");
        assert!(hit <= ra);
        total_ra += ra;
    }
    assert!(total_ra > 0, "some windows open after hits");
}

/// Readahead pages are allocated with __GFP_NORETRY: a streaming reader that outruns
/// kswapd enters direct reclaim for them (once per allocation), where the old model only
/// ever took free pages.
#[test]
fn file_readahead_allocations_may_enter_direct_reclaim() {
    let scn = scenario(
        "[host]\nram = \"256MiB\"\ncpus = 2\n[swap]\nsize = \"256MiB\"\n\
         [[workload]]\nname = \"reader\"\n[workload.file]\nsize = \"1GiB\"\n",
    );
    let out = go(&scn, true);
    let trace = out.trace.as_deref().unwrap();
    let noretry = trace
        .lines()
        .filter(|l| l.contains("mm_vmscan_direct_reclaim_begin:") && l.contains("__GFP_NORETRY"))
        .count();
    assert!(
        noretry > 0,
        "no readahead allocation entered direct reclaim"
    );
    assert!(counter(&out, "allocstall_movable") > 0);
    assert_eq!(counter(&out, "pswpout"), 0);
}

/// With `[host] pcp_lists` the same run keeps order-0 pages on per-CPU lists: the invariant
/// checks (which count those pages) hold, the lists hold pages at the end, and zoneinfo prints
/// their counts; without it (the default) no summary field or count appears.
#[test]
fn per_cpu_page_lists_hold_pages_and_the_invariants() {
    let mut scn = one_and_a_half_ram("");
    scn.host.pcp_lists = true;
    let out = go(&scn, false);
    assert_eq!(counter(&out, "oom_kill"), 0);
    let s = summary(&out);
    let held: u64 = s["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["pcp_at_end"].as_u64().unwrap())
        .sum();
    assert!(held > 0, "no page on a per-CPU list at the end");
    let counts: u64 = out
        .zoneinfo
        .lines()
        .filter_map(|l| l.trim().strip_prefix("count: "))
        .map(|v| v.trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counts, held);
    let off = go(&one_and_a_half_ram(""), false);
    assert!(summary(&off)["zones"][0].get("pcp_at_end").is_none());
}
