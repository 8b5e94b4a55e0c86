//! Unit tests of the memory controller's arithmetic, from the worked examples of
//! docs/design/memcg-psi.md (§2.6, §3.3, §4.4, §5.4, §7).

use super::*;
use crate::machine::page_counter::ROOT_COUNTER;
use crate::machine::HZ;

const MIB: u64 = 256; // pages

/// §2.6: bytes in, pages inside (truncated), bytes or `max` out; anything after the number
/// is refused, and `memory.oom.group` takes only 0 or 1.
#[test]
fn interface_values_parse_and_print_as_the_kernel_does() {
    let parse = |s: &str| parse_memory_knob("memory.max", s);
    assert_eq!(parse("100M"), Ok(25_600));
    assert_eq!(show_memory_knob(25_600), "104857600\n");
    assert_eq!(parse("1G"), Ok(262_144));
    assert_eq!(parse("4097"), Ok(1));
    assert_eq!(show_memory_knob(1), "4096\n");
    assert_eq!(parse("4095"), Ok(0));
    assert_eq!(parse("max"), Ok(PAGE_COUNTER_MAX));
    assert_eq!(show_memory_knob(PAGE_COUNTER_MAX), "max\n");
    // White space around the value is stripped, not inside it.
    assert_eq!(parse(" 100M\n"), Ok(25_600));
    let err = parse("10 M").unwrap_err();
    assert!(
        err.contains("memory.max") && err.contains("EINVAL"),
        "{err}"
    );
    assert!(parse("100MB").is_err());
    assert!(parse("").is_err());
    assert!(parse("-1").is_err());
    assert!(parse("max ").is_ok());
    assert!(parse("Max").is_err());
    // memparse's number is read in base 0 and its suffix in either case.
    assert_eq!(parse("0x2000"), Ok(2));
    assert_eq!(parse("010k"), Ok(2));
    assert_eq!(parse("2m"), Ok(512));
    // Past PAGE_COUNTER_MAX pages reads as max; past 2^64 bytes is refused.
    assert_eq!(parse("8E"), Ok(PAGE_COUNTER_MAX));
    assert!(parse("16E").is_err());
    assert!(parse("18446744073709551616").is_err());

    assert_eq!(parse_oom_group("1"), Ok(true));
    assert_eq!(parse_oom_group("0\n"), Ok(false));
    assert_eq!(parse_oom_group("+1"), Ok(true));
    assert!(parse_oom_group("2")
        .unwrap_err()
        .contains("memory.oom.group"));
    assert!(parse_oom_group("-1").is_err());
    assert!(parse_oom_group("true").is_err());
}

/// root -> P (max 1000 pages) -> {A (max 600), B}, usage A 580 and B as given.
fn limit_tree(b_usage: u64) -> (PageCounters, [CounterId; 3]) {
    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    pc.set_max(p, 1000);
    let a = pc.add(p).unwrap();
    pc.set_max(a, 600);
    let b = pc.add(p).unwrap();
    pc.charge(a, 580);
    pc.charge(b, b_usage);
    (pc, [p, a, b])
}

/// §3.3: a one-page charge first asks for a 64-page batch, which A's limit refuses, then for
/// the one page, which fits.
#[test]
fn a_charge_near_the_limit_shrinks_its_batch_before_any_reclaim() {
    let (mut pc, [p, a, _]) = limit_tree(410);
    let mut batch = charge_batch(1);
    assert_eq!(batch, 64);
    assert_eq!(try_charge_counters(&mut pc, a, 1, &mut batch), Ok(()));
    // Exactly one page: nothing for the stock.
    assert_eq!(batch, 1);
    assert_eq!((pc.get(a).usage, pc.get(p).usage), (581, 991));
    assert_eq!((pc.get(a).failcnt, pc.get(p).failcnt), (1, 0));
    // Far from the limits the whole batch is charged.
    let mut pc = PageCounters::new();
    let m = pc.add(ROOT_COUNTER).unwrap();
    let mut batch = charge_batch(3);
    assert_eq!(try_charge_counters(&mut pc, m, 3, &mut batch), Ok(()));
    assert_eq!((batch, pc.get(m).usage), (64, 64));
    // A THP charge is its own batch.
    assert_eq!(charge_batch(512), 512);
    // The root memcg is never charged.
    let mut batch = charge_batch(1);
    assert_eq!(
        try_charge_counters(&mut pc, ROOT_COUNTER, 1, &mut batch),
        Ok(())
    );
    assert_eq!((batch, pc.get(ROOT_COUNTER).usage), (0, 64));
}

/// §3.3 with B at 420: the one page fits A but not P, so A is given its page back and P is
/// named; P counts a `max` event (local to P, not A's); its limit reclaim aims at 32 pages;
/// once that freed pages the retry (still one page) lands and P's peak stays at its max.
#[test]
fn a_charge_refused_by_the_parent_names_the_parent() {
    let (mut pc, [p, a, b]) = limit_tree(420);
    assert_eq!(pc.get(p).usage, 1000);
    let mut batch = charge_batch(1);
    assert_eq!(try_charge_counters(&mut pc, a, 1, &mut batch), Err(p));
    assert_eq!(batch, 1);
    assert_eq!((pc.get(a).usage, pc.get(p).usage), (580, 1000));
    assert_eq!((pc.get(a).failcnt, pc.get(p).failcnt), (1, 1));

    let mut ev = vec![MemcgEventCounts::default(); pc.len()];
    memcg_memory_event(&mut ev, &pc, p, MemcgEvent::Max, false);
    assert_eq!((ev[p as usize].local.max, ev[p as usize].hier.max), (1, 1));
    assert_eq!(ev[a as usize], MemcgEventCounts::default());
    assert_eq!(ev[ROOT_COUNTER as usize], MemcgEventCounts::default());

    assert_eq!(limit_reclaim_target(1), 32);
    // What P's limit reclaim would free, taken from B.
    pc.uncharge(b, 32);
    assert!(pc.margin(p) >= 1);
    assert_eq!(try_charge_counters(&mut pc, a, 1, &mut batch), Ok(()));
    assert_eq!((pc.get(a).usage, pc.get(p).usage), (581, 969));
    assert_eq!(pc.get(p).watermark, 1000);
}

/// §3.6: the swap a memcg may still take is the device's free slots limited by every
/// level's room under `memory.swap.max`; `swap.max = 0` leaves none (file-only reclaim).
/// §3.1: half of a level's swap limit used counts as swap full.
#[test]
fn swap_room_and_swap_full_follow_every_level() {
    let mut sw = PageCounters::new();
    let p = sw.add(ROOT_COUNTER).unwrap();
    let c = sw.add(p).unwrap();
    assert_eq!(get_nr_swap_pages(&sw, c, 1_000), 1_000);
    sw.set_max(p, 300);
    sw.charge(c, 100);
    assert_eq!(get_nr_swap_pages(&sw, c, 1_000), 200);
    assert_eq!(get_nr_swap_pages(&sw, c, 50), 50);
    assert!(!memcg_swap_full(&sw, c));
    sw.charge(c, 50);
    assert!(memcg_swap_full(&sw, c));
    sw.set_max(c, 0);
    assert_eq!(get_nr_swap_pages(&sw, c, 1_000), 0);
    // The root's own counter (the sum of all) limits nothing.
    assert_eq!(get_nr_swap_pages(&sw, ROOT_COUNTER, 1_000), 1_000);
    assert!(!memcg_swap_full(&sw, ROOT_COUNTER));
    let mut sw = PageCounters::new();
    let q = sw.add(ROOT_COUNTER).unwrap();
    sw.set_high(q, 100);
    sw.charge(q, 49);
    assert!(!memcg_swap_full(&sw, q));
    sw.charge(q, 1);
    assert!(memcg_swap_full(&sw, q));
}

/// §7.2: an event counts in the memcg's local array and in the hierarchical arrays up to,
/// not including, the root; `memory_localevents` keeps it in the memcg's own.
#[test]
fn events_count_locally_and_up_the_tree_below_the_root() {
    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    let c = pc.add(p).unwrap();
    let mut ev = vec![MemcgEventCounts::default(); pc.len()];
    memcg_memory_event(&mut ev, &pc, c, MemcgEvent::OomKill, false);
    memcg_memory_event(&mut ev, &pc, c, MemcgEvent::High, false);
    memcg_memory_event(&mut ev, &pc, c, MemcgEvent::High, true);
    memcg_memory_event(&mut ev, &pc, p, MemcgEvent::SwapFail, false);
    let (cl, ch) = (ev[c as usize].local, ev[c as usize].hier);
    let (pl, ph) = (ev[p as usize].local, ev[p as usize].hier);
    assert_eq!(
        (cl.oom_kill, ch.oom_kill, pl.oom_kill, ph.oom_kill),
        (1, 1, 0, 1)
    );
    assert_eq!((cl.high, ch.high, pl.high, ph.high), (2, 2, 0, 1));
    assert_eq!((pl.swap_fail, ph.swap_fail, ch.swap_fail), (1, 1, 0));
    assert_eq!(ev[ROOT_COUNTER as usize], MemcgEventCounts::default());
    assert_eq!(
        ph.memory_events_text(),
        "low 0\nhigh 1\nmax 0\noom 0\noom_kill 1\noom_group_kill 0\n"
    );
    assert_eq!(ph.swap_events_text(), "high 0\nmax 0\nfail 1\n");
}

/// §4.4's table at HZ = 250, `memory.high` = 100 MiB, a 64-page debt: (usage in MiB,
/// overage, delay in jiffies after the 2 s cap, whether it is slept).
#[test]
fn the_high_penalty_table_at_hz_250() {
    let high = 100 * MIB;
    let table = [
        (101, 10_485, 1, false),
        (102, 20_971, 6, true),
        (105, 52_428, 39, true),
        (110, 104_857, 159, true),
        (115, 157_286, 359, true),
        (118, 188_743, 500, true),
        (150, 524_288, 500, true),
    ];
    for (mib, overage, jiffies, sleeps) in table {
        let o = calculate_overage(mib * MIB, high);
        assert_eq!(o, overage, "{mib} MiB");
        let p = high_penalty_jiffies(64, o, 0, HZ);
        assert_eq!(p, jiffies, "{mib} MiB");
        assert_eq!(p > HZ / 100, sleeps, "{mib} MiB");
    }
    // 118 MiB is past the cap before it is applied; 150 MiB is 4,000 jiffies.
    assert_eq!(calculate_high_delay(64, 188_743, HZ), 518);
    assert_eq!(calculate_high_delay(64, 524_288, HZ), 4_000);
    assert_eq!(jiffies_to_ns(max_high_delay_jiffies(HZ), HZ), 2_000_000_000);
    assert_eq!(jiffies_to_ns(39, HZ), 156_000_000);
    // At or below high: no overage; a high of 0 counts as one page.
    assert_eq!(calculate_overage(high, high), 0);
    assert_eq!(calculate_overage(2, 0), 1 << 20);
}

/// §4.4's cross-check: at HZ = 1000 the same formula gives the kernel's own table for
/// memory.high = 100M (6, 25, 159, 639, 1439 ms), and the cap is still 2 s.
#[test]
fn the_high_penalty_at_hz_1000_matches_the_kernels_table() {
    for (mib, ms) in [(101, 6), (102, 25), (105, 159), (110, 639), (115, 1439)] {
        let o = calculate_overage(mib * MIB, 100 * MIB);
        let j = high_penalty_jiffies(64, o, 0, 1000);
        assert_eq!(jiffies_to_ns(j, 1000), ms * 1_000_000, "{mib} MiB");
    }
    assert_eq!(
        high_penalty_jiffies(64, calculate_overage(150 * MIB, 100 * MIB), 0, 1000),
        2000
    );
}

/// §4.4: a 128-page debt sleeps twice as long (78 jiffies at 105 MiB); with two levels the
/// larger overage decides (P at 110 MiB over its 100 MiB, not C at 51 over 50); memory's and
/// swap's delays add before the cap.
#[test]
fn the_penalty_scales_with_the_debt_and_takes_the_worst_level() {
    let o105 = calculate_overage(105 * MIB, 100 * MIB);
    assert_eq!(high_penalty_jiffies(128, o105, 0, HZ), 78);
    assert_eq!(high_penalty_jiffies(64, o105, o105, HZ), 78);

    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    pc.set_high(p, 100 * MIB);
    let c = pc.add(p).unwrap();
    pc.set_high(c, 50 * MIB);
    pc.charge(c, 51 * MIB);
    pc.charge(p, 59 * MIB);
    assert_eq!(calculate_overage(pc.get(c).usage, pc.get(c).high), 20_971);
    let worst = find_max_overage(&pc, c);
    assert_eq!(worst, 104_857);
    assert_eq!(high_penalty_jiffies(64, worst, 0, HZ), 159);
    // The debt is recorded at the first over-high memcg from the charging one up.
    let swap = {
        let mut s = PageCounters::new();
        let sp = s.add(ROOT_COUNTER).unwrap();
        s.add(sp).unwrap();
        s
    };
    assert_eq!(first_over_high(&pc, &swap, c), Some(c));
    pc.set_high(c, 60 * MIB);
    assert_eq!(first_over_high(&pc, &swap, c), Some(p));
    assert_eq!(find_max_overage(&pc, c), 104_857);
    pc.set_high(p, 200 * MIB);
    assert_eq!(first_over_high(&pc, &swap, c), None);
    assert_eq!(find_max_overage(&pc, c), 0);
}

/// §4.2 / §9.2 item 7: no sleep while reclaim makes progress; with nothing reclaimed the
/// sleep comes at the 17th fruitless pass (counted over the whole call); once reclaim brings
/// the penalty to `HZ / 100` or less there is no sleep. The first pass asks for the debt,
/// later ones for a batch.
#[test]
fn the_over_high_loop_sleeps_only_after_sixteen_fruitless_retries() {
    let stuck = calculate_overage(110 * MIB, 100 * MIB);
    let mut asked = Vec::new();
    let out = handle_over_high(
        200,
        HZ,
        |n| {
            asked.push(n);
            0
        },
        || (stuck, 0),
    );
    assert_eq!(out.passes, 17);
    assert_eq!(out.sleep_jiffies, high_penalty_jiffies(200, stuck, 0, HZ));
    assert_eq!(out.sleep_jiffies, 496);
    assert_eq!(asked[0], 200);
    assert!(asked[1..].iter().all(|&n| n == 32));

    // Ten productive passes among the fruitless ones use up no retry.
    let mut pass = 0u32;
    let out = handle_over_high(
        64,
        HZ,
        |_| {
            pass += 1;
            if pass.is_multiple_of(2) && pass <= 20 {
                8
            } else {
                0
            }
        },
        || (stuck, 0),
    );
    assert_eq!(
        (out.passes, out.reclaimed, out.sleep_jiffies),
        (27, 80, 159)
    );

    // Reclaim that gets usage down to 101 MiB (1 jiffy): no sleep.
    let usage = std::cell::Cell::new(110 * MIB);
    let out = handle_over_high(
        64,
        HZ,
        |_| {
            usage.set(usage.get() - MIB);
            MIB
        },
        || (calculate_overage(usage.get(), 100 * MIB), 0),
    );
    assert_eq!((out.passes, out.sleep_jiffies), (9, 0));
    assert_eq!(
        handle_over_high(0, HZ, |_| 1, || (stuck, 0)),
        OverHigh::default()
    );

    // The same loop one pass at a time, as a caller whose reclaim yields drives it.
    assert!(OverHighLoop::new(0).is_none());
    let mut l = OverHighLoop::new(64).unwrap();
    assert_eq!(l.request(), 64);
    assert_eq!(l.after_pass(0, stuck, 0, HZ), OverHighStep::Again);
    assert_eq!(l.request(), 32);
    for _ in 0..15 {
        assert_eq!(l.after_pass(0, stuck, 0, HZ), OverHighStep::Again);
    }
    assert_eq!(l.after_pass(0, stuck, 0, HZ), OverHighStep::Sleep(159));
    assert_eq!((l.done.passes, l.done.sleep_jiffies), (17, 159));
}

/// §5.4 (a): the selftest's children scanned under P0's limit reclaim. C0 (protection 8,533
/// of 12,800) is scanned 1 / 66 / 4,268 pages at priorities 12 / 6 / 0; C1 (4,266) 2 / 133 /
/// 8,535; C2 (none) 3 / 200 / 12,800. Low scaling is flagged; the retry uses min (none here).
#[test]
fn protected_children_are_scanned_in_proportion_to_their_unprotected_share() {
    let mut pc = PageCounters::new();
    let p0 = pc.add(ROOT_COUNTER).unwrap();
    pc.set_max(p0, 200 * MIB);
    let p1 = pc.add(p0).unwrap();
    pc.set_low(p1, 50 * MIB);
    let kids: Vec<_> = [75, 25, 0, 500]
        .iter()
        .map(|&low| {
            let c = pc.add(p1).unwrap();
            pc.set_low(c, low * MIB);
            c
        })
        .collect();
    for &c in &kids[..3] {
        pc.charge(c, 50 * MIB);
    }
    pc.calculate_subtree_protection(p0, false);
    let expect: [[u64; 3]; 3] = [[1, 66, 4_268], [2, 133, 8_535], [3, 200, 12_800]];
    for (&c, want) in kids.iter().zip(expect) {
        let prot = pc.protection(p0, c);
        let got: Vec<u64> = [12, 6, 0]
            .iter()
            .map(|&prio| {
                get_scan_count_protected(12_800, pc.get(c).usage, prot, false, prio, true).scan
            })
            .collect();
        assert_eq!(got, want, "memcg {c}");
    }
    let c0 = pc.protection(p0, kids[0]);
    assert!(get_scan_count_protected(12_800, 12_800, c0, false, 12, true).low_used);
    // The low-reclaim retry scales by min (0 here): the whole list.
    let retry = get_scan_count_protected(12_800, 12_800, c0, true, 0, true);
    assert_eq!(
        retry,
        ProtectedScan {
            scan: 12_800,
            low_used: false
        }
    );
    // Without protection nothing is flagged.
    assert!(!get_scan_count_protected(12_800, 12_800, (0, 0), false, 0, true).low_used);
}

/// §5.3: the floor of a reclaim batch applies before the priority shift; an offline memcg
/// whose target shifts to nothing still gets a batch (at most its list).
#[test]
fn a_protected_scan_keeps_a_batch_floor_and_offline_memcgs_a_batch() {
    // 100 pages, 99 of 100 protected: 1 page left, raised to 32.
    let s = get_scan_count_protected(100, 100, (99, 0), false, 0, true);
    assert_eq!(s.scan, 32);
    assert_eq!(
        get_scan_count_protected(100, 100, (99, 0), false, 5, true).scan,
        1
    );
    assert_eq!(
        get_scan_count_protected(100, 100, (99, 0), false, 6, true).scan,
        0
    );
    assert_eq!(
        get_scan_count_protected(100, 100, (99, 0), false, 6, false).scan,
        32
    );
    assert_eq!(
        get_scan_count_protected(10, 10, (0, 0), false, 12, false).scan,
        10
    );
    // Protection above the memcg's size: the protection counts as its size, and little but
    // the batch floor is left.
    let s = get_scan_count_protected(1_000, 500, (0, 100_000), false, 0, true);
    assert_eq!(
        s,
        ProtectedScan {
            scan: 32,
            low_used: true
        }
    );
}

/// §7.1: 51 keys with CONFIG_ZSWAP, 47 without, in 6.1's order; `slab` right after its two
/// parts; the workingset and scan events are counts, the sizes bytes.
#[test]
fn memory_stat_keys_are_in_the_kernels_order() {
    let all: Vec<_> = memory_stat_keys(true).map(|k| k.name).collect();
    let plain: Vec<_> = memory_stat_keys(false).map(|k| k.name).collect();
    assert_eq!((all.len(), plain.len()), (51, 47));
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), all.len());
    let at = |k: &str| all.iter().position(|&n| n == k).unwrap();
    assert_eq!(at("anon"), 0);
    assert_eq!(at("slab"), at("slab_unreclaimable") + 1);
    assert_eq!(at("slab_unreclaimable"), at("slab_reclaimable") + 1);
    assert!(at("shmem") < at("zswap") && at("zswapped") < at("file_mapped"));
    assert!(at("pgscan") < at("pgsteal") && at("pgsteal") < at("pgscan_kswapd"));
    assert_eq!(all.last(), Some(&"thp_collapse_alloc"));
    assert!(!plain.contains(&"zswpin"));
    for k in memory_stat_keys(true) {
        let count = k.name.starts_with("workingset_")
            || k.name.starts_with("pg")
            || k.name.starts_with("zswp")
            || k.name.starts_with("thp_");
        let want = if count {
            StatUnit::Count
        } else {
            StatUnit::Bytes
        };
        assert_eq!(k.unit, want, "{}", k.name);
    }
}
