//! The counter cross-checks (`observe::counter_checks`): a real run under pressure passes
//! them, and each check trips when one counter of that run is made wrong.

use reclaimlab_core::machine::vmstat::{NodeStat, VmEvent};
use reclaimlab_core::observe::counter_checks::{Counters, GuestCounts, MAX_STAT_THRESHOLD};
use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{InvariantMode, Run, RunOptions};

/// A 64 MiB host with swap, twice its RAM of anonymous memory touched twice at random, a file
/// read, THP-sized kernel requests and a filesystem creating files: kswapd and direct reclaim,
/// swap both ways, refaults, compaction and slab pages.
const PRESSURE: &str = r#"
name = "counter-checks"
[sim]
seed = 7
duration = "400ms"
[host]
ram = "64MiB"
cpus = 2
pcp_lists = true
vmstat_drift = true
[swap]
size = "128MiB"
[fs]
ags = 2
io_latency = "200us"
[[workload]]
name = "anon"
anon = { size = "80MiB", pattern = "random", passes = 2, write_fraction = 0.5 }
[[workload]]
name = "seq"
anon = { size = "40MiB", pattern = "sequential", passes = 3, write_fraction = 0.0 }
[[workload]]
name = "reader"
file = { size = "24MiB", op = "read", passes = 2 }
[[workload]]
name = "thp"
highorder = { order = 6, gfp = "kernel", rate = 2000, count = 200, lifetimes = "exponential" }
[[workload]]
name = "fsmark"
fsmark = { files = 4000, rss = "1MiB" }
"#;

const GUEST: &str = r#"
name = "counter-checks-guest"
[sim]
seed = 3
duration = "150ms"
[host]
ram = "96MiB"
[swap]
size = "96MiB"
[[workload]]
name = "hog"
anon = { size = "64MiB", pattern = "random", passes = 2 }
[[guest]]
name = "vm"
ram = "96MiB"
boot_resident = "8MiB"
[[guest.workload]]
name = "program"
anon = { size = "80MiB" }
"#;

/// The counters of every machine at the start and the end of `text`'s run, and the guests'.
fn run(text: &str) -> (Vec<(Counters, Counters)>, Vec<GuestCounts>) {
    let scn = parse_str(text, "t.toml").unwrap();
    let opts = RunOptions {
        invariants: InvariantMode::Periodic(997),
        ..RunOptions::default()
    };
    let mut run = Run::new(&scn, &opts).unwrap();
    let start: Vec<Counters> = run.world().machines.iter().map(Counters::read).collect();
    run.go(&mut |_, _| true).unwrap();
    let w = run.world();
    let machines = start
        .into_iter()
        .zip(w.machines.iter().map(Counters::read))
        .collect();
    let guests = w
        .guest_memories()
        .map(|(_, h, slot)| GuestCounts::read(slot, &w.machines[h]))
        .collect();
    (machines, guests)
}

fn set(c: &mut Counters, e: VmEvent, v: u64) {
    c.events[e as usize] = v;
}

/// The check fails, naming `what`.
fn trips(start: &Counters, c: &Counters, what: &str) {
    match c.check(start) {
        Ok(()) => panic!("a wrong {what} was not caught"),
        Err(e) => assert!(e.contains(what), "a wrong {what} reported as: {e}"),
    }
}

#[test]
fn a_run_under_pressure_keeps_every_cross_check_and_each_wrong_counter_trips_one() {
    let (machines, _) = run(PRESSURE);
    let (start, end) = &machines[0];
    end.check(start).unwrap();
    let ev = |e| end.ev(e);
    // The run reached what the checks below corrupt.
    for e in [
        VmEvent::PgstealKswapd,
        VmEvent::PgstealDirect,
        VmEvent::PgstealAnon,
        VmEvent::PgscanDirect,
        VmEvent::Pswpin,
        VmEvent::SwapRa,
        VmEvent::Pgfree,
    ] {
        assert!(
            ev(e) > 0,
            "{} is 0: the scenario lost its pressure",
            e.name()
        );
    }
    assert!(end.stat(NodeStat::WorkingsetRefaultFile) > 0);
    // The filesystem's slab grew and the shrinker scanned it (it may be empty again at the end).
    assert!(ev(VmEvent::SlabsScanned) > 0);

    let wrong = |f: &dyn Fn(&mut Counters), what: &str| {
        let mut c = end.clone();
        f(&mut c);
        trips(start, &c, what);
    };
    // Counted once by reclaimer, once by type.
    wrong(
        &|c| set(c, VmEvent::PgscanAnon, ev(VmEvent::PgscanAnon) + 1),
        "pgscan_kswapd + pgscan_direct",
    );
    wrong(
        &|c| set(c, VmEvent::PgstealFile, ev(VmEvent::PgstealFile) + 1),
        "pgsteal_kswapd + pgsteal_direct",
    );
    // kswapd freed more than it scanned (the sums kept).
    wrong(
        &|c| {
            let d = ev(VmEvent::PgscanKswapd) - ev(VmEvent::PgstealKswapd) + 1;
            set(c, VmEvent::PgscanKswapd, ev(VmEvent::PgscanKswapd) - d);
            set(c, VmEvent::PgscanDirect, ev(VmEvent::PgscanDirect) + d);
        },
        "pgsteal_kswapd",
    );
    // The same for direct reclaim, and by type (anonymous pages freed beyond those scanned).
    wrong(
        &|c| {
            let d = ev(VmEvent::PgscanDirect) - ev(VmEvent::PgstealDirect) + 1;
            set(c, VmEvent::PgscanDirect, ev(VmEvent::PgscanDirect) - d);
            set(c, VmEvent::PgscanKswapd, ev(VmEvent::PgscanKswapd) + d);
        },
        "pgsteal_direct",
    );
    wrong(
        &|c| {
            let d = ev(VmEvent::PgscanAnon) - ev(VmEvent::PgstealAnon) + 1;
            set(c, VmEvent::PgscanAnon, ev(VmEvent::PgscanAnon) - d);
            set(c, VmEvent::PgscanFile, ev(VmEvent::PgscanFile) + d);
        },
        "pgsteal_anon",
    );
    wrong(
        &|c| {
            for z in 0..5 {
                set(c, VmEvent::allocstall(z), 0);
            }
        },
        "without an allocstall",
    );
    wrong(
        &|c| {
            let stalls: u64 = (0..5).map(|z| ev(VmEvent::allocstall(z))).sum();
            set(c, VmEvent::PgscanDirectThrottle, stalls + 1);
        },
        "pgscan_direct_throttle",
    );
    wrong(
        &|c| set(c, VmEvent::Pswpin, ev(VmEvent::PgstealAnon) + 1),
        "pswpin",
    );
    wrong(&|c| set(c, VmEvent::Pswpout, 0), "without any pswpout");
    wrong(
        &|c| {
            let hits = ev(VmEvent::SwapRa) + ev(VmEvent::PgscanAnon) + 1;
            set(c, VmEvent::SwapRaHit, hits);
        },
        "swap_ra_hit",
    );
    wrong(
        &|c| set(c, VmEvent::Pgmajfault, 0),
        "swap-in faults but pgmajfault",
    );
    // More readahead pages than pages read, more major faults than faults, more pages written
    // to swap than anonymous pages reclaim scanned.
    wrong(
        &|c| set(c, VmEvent::SwapRa, ev(VmEvent::Pswpin) + 1),
        "swap_ra",
    );
    wrong(
        &|c| set(c, VmEvent::Pgfault, ev(VmEvent::Pgmajfault) - 1),
        "pgmajfault",
    );
    wrong(
        &|c| set(c, VmEvent::Pswpout, ev(VmEvent::PgscanAnon) + 1),
        "pswpout",
    );
    wrong(
        &|c| {
            c.node[NodeStat::WorkingsetRefaultFile as usize] = ev(VmEvent::PgstealFile) + 1;
        },
        "workingset_refault_file",
    );
    wrong(
        &|c| {
            let r = c.stat(NodeStat::WorkingsetRefaultAnon);
            c.node[NodeStat::WorkingsetActivateAnon as usize] = r + 1;
        },
        "workingset_activate_anon",
    );
    wrong(
        &|c| {
            let a = c.stat(NodeStat::WorkingsetActivateFile);
            c.node[NodeStat::WorkingsetRestoreFile as usize] = a + 1;
        },
        "workingset_restore_file",
    );
    wrong(
        &|c| set(c, VmEvent::CompactStall, ev(VmEvent::CompactStall) + 1),
        "compact_stall",
    );
    wrong(&|c| set(c, VmEvent::OomKill, c.oom_kills + 1), "oom_kill");
    // A page given back uncounted, one handed out twice.
    wrong(
        &|c| set(c, VmEvent::Pgfree, ev(VmEvent::Pgfree) + 1),
        "free + pgalloc - pgfree",
    );
    wrong(
        &|c| set(c, VmEvent::pgalloc(1), ev(VmEvent::pgalloc(1)) + 2),
        "free + pgalloc - pgfree",
    );
    // buddyinfo against nr_free_pages, and the folded counter's drift.
    let z = (0..end.zones.len())
        .rev()
        .find(|&z| end.zones[z].nr_free_pages > 0)
        .unwrap();
    wrong(&|c| c.zones[z].blocks[0] += 1, "buddyinfo's blocks hold");
    wrong(
        &|c| {
            let cpus = c.zones[z].cpus.max(1);
            c.zones[z].folded = (c.zones[z].nr_free_pages + MAX_STAT_THRESHOLD * cpus + 1) as i64;
        },
        "read as",
    );
    wrong(
        &|c| c.node[NodeStat::NrSlabReclaimable as usize] += 1,
        "nr_slab_reclaimable",
    );
    wrong(
        &|c| c.node[NodeStat::NrSlabUnreclaimable as usize] += 1,
        "nr_slab_reclaimable",
    );
}

#[test]
fn a_guest_host_rss_that_disagrees_with_its_frames_trips_the_check() {
    let (machines, guests) = run(GUEST);
    for (start, end) in &machines {
        end.check(start).unwrap();
    }
    let g = &guests[0];
    g.check().unwrap();
    assert!(g.rss > 0 && g.present >= g.rss);
    let mut w = g.clone();
    w.rss += 1;
    assert!(w.check().unwrap_err().contains("host RSS"));
    let mut w = g.clone();
    w.present = w.frames + 1;
    assert!(w.check().unwrap_err().contains("present on the host"));
    let mut w = g.clone();
    w.rss = w.frames + 1;
    w.mapped = w.rss;
    w.present = w.frames;
    assert!(w.check().is_err());
}
