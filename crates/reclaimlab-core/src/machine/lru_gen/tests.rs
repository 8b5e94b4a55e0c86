//! Tests of the multi-generational LRU's parts together: the size bookkeeping as folios come
//! and go, kswapd's `min_ttl_ms` OOM decision over `balance_pgdat`'s priority iterations
//! (docs/design/mglru.md §8.2 test 13), and one folio's life through placement, accesses,
//! sorting, eviction and refault. The worked examples of one part are beside its code.

use super::aging::{lru_gen_age_node_skips, min_ttl_oom, DEF_PRIORITY};
use super::eviction::{
    clears_memcgs_need_aging, scan_zone_order, IsolateCtl, ScanFolios, ScanOutcome, Sorted,
};
use super::mm_inline::{folio_inc_refs, folio_lru_refs, lru_gen_from_seq, FolioGen, LruGauge};
use super::mmzone::LruGen;
use super::sysfs::msecs_to_jiffies;
use crate::machine::frames::pg;
use crate::machine::lru::{
    ANON, FILE, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_FILE, NR_LRU_LISTS,
};
use crate::machine::{MAX_NR_ZONES, ZONE_DMA32, ZONE_MOVABLE, ZONE_NORMAL};

/// max_seq 7 and these oldest generations, no pages.
fn at7(min_seq: [u64; 2]) -> LruGen {
    let mut l = LruGen::new(0);
    l.max_seq = 7;
    l.min_seq = min_seq;
    l.mm_seq = 6;
    l
}

#[test]
fn add_and_del_keep_the_sizes_and_gauges() {
    let mut l = at7([5, 5]);
    let mut gauge: LruGauge = [[0; NR_LRU_LISTS]; MAX_NR_ZONES];
    let z = ZONE_NORMAL;
    // A faulted anon page: youngest generation, active gauge, PG_active cleared.
    let (mut f, mut g) = (pg::SWAPBACKED | pg::ACTIVE, FolioGen::default());
    let p = l.lru_gen_add_folio(&mut gauge, &mut f, &mut g, z, 1, false);
    assert_eq!((p.seq, g.gen(), f & pg::ACTIVE), (7, Some(3), 0));
    assert_eq!((l.nr_pages[3][ANON][z], gauge[z][LRU_ACTIVE_ANON]), (1, 1));
    // A read() page: oldest file generation, inactive gauge.
    let (mut f2, mut gf) = (0u16, FolioGen::default());
    l.lru_gen_add_folio(&mut gauge, &mut f2, &mut gf, z, 1, false);
    assert_eq!((gf.gen(), gauge[z][LRU_INACTIVE_FILE]), (Some(1), 1));
    // Promotion of the file page to the youngest: inactive -> active.
    let old = l.folio_update_gen(&mut gauge, &mut f2, &mut gf, z, 1, 3);
    assert_eq!(old, Some(1));
    assert_eq!(
        (gauge[z][LRU_INACTIVE_FILE], gauge[z][LRU_ACTIVE_FILE]),
        (0, 1)
    );
    assert_eq!((l.nr_pages[1][FILE][z], l.nr_pages[3][FILE][z]), (0, 1));
    // Deleted for migration from an active generation: PG_active comes back.
    assert!(l.lru_gen_del_folio(&mut gauge, &mut f, &mut g, z, 1, false));
    assert_eq!(
        (f & pg::ACTIVE, g.gen(), gauge[z][LRU_ACTIVE_ANON]),
        (pg::ACTIVE, None, 0)
    );
    assert!(!l.lru_gen_del_folio(&mut gauge, &mut f, &mut g, z, 1, false));
    // Deleted by reclaim: no PG_active.
    assert!(l.lru_gen_del_folio(&mut gauge, &mut f2, &mut gf, z, 1, true));
    assert_eq!((f2 & pg::ACTIVE, gauge[z][LRU_ACTIVE_FILE]), (0, 0));
    // An isolated folio met by a walker gets PG_referenced instead.
    let mut f3 = 0u16;
    let mut g3 = FolioGen::default();
    assert_eq!(
        l.folio_update_gen(&mut gauge, &mut f3, &mut g3, z, 1, 3),
        None
    );
    assert_eq!((f3, g3.gen()), (pg::REFERENCED, None));
}

#[test]
fn folio_inc_gen_moves_to_the_next_generation_unless_promoted() {
    let mut l = at7([5, 5]);
    let mut gauge: LruGauge = [[0; NR_LRU_LISTS]; MAX_NR_ZONES];
    let z = ZONE_NORMAL;
    let mut f = pg::REFERENCED | pg::WORKINGSET | pg::DIRTY;
    let mut g = FolioGen::default();
    l.lru_gen_add_folio(&mut gauge, &mut f, &mut g, z, 1, false);
    g.set_refs_field(2);
    assert_eq!(g.gen(), Some(1));
    let new = l.folio_inc_gen(&mut gauge, &mut f, &mut g, z, 1, true);
    // seq 6 (gen 2) is active with three generations: the gauge follows.
    assert_eq!(new, 2);
    assert_eq!(
        (g.refs_field(), f & (pg::REFERENCED | pg::WORKINGSET)),
        (0, 0)
    );
    assert_ne!(f & pg::RECLAIM, 0);
    assert_eq!(
        (gauge[z][LRU_INACTIVE_FILE], gauge[z][LRU_ACTIVE_FILE]),
        (0, 1)
    );
    // Promoted meanwhile (not in the oldest generation): it keeps its generation.
    let before = l.clone();
    assert_eq!(l.folio_inc_gen(&mut gauge, &mut f, &mut g, z, 1, false), 2);
    assert_eq!(l, before);
}

/// kswapd's `balance_pgdat` from `DEF_PRIORITY` down to `last`, over a node with one lruvec:
/// each priority iteration runs `lru_gen_age_node` (aging without a walk), then the
/// eviction's page count for kswapd, of which `reclaim` says how much was reclaimed. Returns
/// the priority at which the OOM killer was called, if it was.
fn balance_pgdat(
    l: &mut LruGen,
    min_ttl: u64,
    now: u64,
    order: u32,
    last: i32,
    reclaim: impl Fn(u64) -> u64,
) -> Option<i32> {
    let mut gauge = l.recount_gauge();
    // Every balance_pgdat starts with memcgs_need_aging false.
    let mut memcgs_need_aging = false;
    for priority in (last..=DEF_PRIORITY).rev() {
        if !lru_gen_age_node_skips(&mut memcgs_need_aging) {
            let r = l.age_lruvec(false, 60, priority, true, min_ttl, now, |g, seq| {
                g.try_to_inc_max_seq_nowalk(seq, true, now, &mut gauge)
            });
            if min_ttl_oom(r.success(), min_ttl, order) {
                return Some(priority);
            }
        }
        let (nr, need_aging) = l.get_nr_to_scan(false, true, priority, true, true, |_, _| {
            panic!("kswapd ages only in lru_gen_age_node")
        });
        if nr > 0 && clears_memcgs_need_aging(reclaim(nr), need_aging) {
            memcgs_need_aging = false;
        }
    }
    assert_eq!(gauge, l.recount_gauge());
    None
}

/// Two generations, 10 000 file pages in the oldest, born `age_ms` before jiffy `now`.
fn two_gens(age_ms: u64, now: u64) -> LruGen {
    let mut l = LruGen::new(0);
    l.min_seq = [2, 2];
    l.mm_seq = 2;
    l.nr_pages[lru_gen_from_seq(2)][FILE][ZONE_NORMAL] = 10_000;
    l.timestamps[lru_gen_from_seq(2)] = now - msecs_to_jiffies(age_ms);
    l
}

/// §8.2 test 13: `min_ttl_ms` = 1000 and an oldest file generation 800 ms old.
#[test]
fn min_ttl_oom_kill_over_balance_pgdat() {
    let ttl = msecs_to_jiffies(1000);
    let now = 1_000_000;
    let all = |nr: u64| nr;
    // Priority 12 reclaims nothing from two generations and leaves memcgs_need_aging set:
    // the check runs at priority 11, finds the generation too young, and kills.
    let mut l = two_gens(800, now);
    assert_eq!(
        balance_pgdat(&mut l, ttl, now, 0, 12, all),
        None,
        "not in the first"
    );
    let mut l = two_gens(800, now);
    assert_eq!(balance_pgdat(&mut l, ttl, now, 0, 11, all), Some(11));
    assert_eq!(l.max_seq, 3, "a too-young lruvec is not aged");
    // High-order (compaction's) reclaim never kills for min_ttl.
    let mut l = two_gens(800, now);
    assert_eq!(balance_pgdat(&mut l, ttl, now, 2, 1, all), None);
    // Without min_ttl: no kill, and the lruvec is aged at priority 11.
    let mut l = two_gens(800, now);
    assert_eq!(balance_pgdat(&mut l, 0, now, 0, 11, all), None);
    assert_eq!(l.max_seq, 4);
    // 1000 ms old: aged instead (max_seq + 1), no kill.
    let mut l = two_gens(1000, now);
    assert_eq!(balance_pgdat(&mut l, ttl, now, 0, 1, all), None);
    assert_eq!(l.max_seq, 4);
    // 996 ms (249 jiffies) is still too young.
    let mut l = two_gens(996, now);
    assert_eq!(balance_pgdat(&mut l, ttl, now, 0, 11, all), Some(11));

    // Three generations that need no aging, 900 000 pages: priority 12 scans 219 pages. If
    // that reclaims 64 or more, kswapd skips its aging step (and the min_ttl check) at
    // priority 11 too; with 63 it checks there and kills.
    let three = || {
        let mut l = LruGen::new(0);
        l.min_seq = [1, 1];
        for seq in 1..=3 {
            l.nr_pages[lru_gen_from_seq(seq)][FILE][ZONE_NORMAL] = 300_000;
        }
        l.timestamps[lru_gen_from_seq(1)] = now - msecs_to_jiffies(800);
        l
    };
    assert_eq!(three().should_run_aging(true, 12, true), (false, 219));
    assert_eq!(balance_pgdat(&mut three(), ttl, now, 0, 11, |_| 64), None);
    assert_eq!(
        balance_pgdat(&mut three(), ttl, now, 0, 11, |_| 63),
        Some(11)
    );
    // Each skip lasts one iteration: a pass that reclaims less brings the check back at the
    // next priority.
    assert_eq!(balance_pgdat(&mut three(), ttl, now, 0, 10, |_| 64), None);
    assert_eq!(
        balance_pgdat(&mut three(), ttl, now, 0, 10, |nr| if nr == 219 {
            64
        } else {
            0
        }),
        Some(10)
    );
}

/// Direct reclaim has no min_ttl test: it ages a lruvec with two generations whatever their
/// age, and evicts.
#[test]
fn direct_reclaim_ignores_min_ttl() {
    let now = 1_000_000;
    let mut l = two_gens(8, now);
    let mut gauge = l.recount_gauge();
    let (nr, need) = l.get_nr_to_scan(false, true, 11, false, true, |g, seq| {
        g.try_to_inc_max_seq_nowalk(seq, true, now, &mut gauge)
    });
    assert_eq!((nr, need, l.max_seq), (10_000 >> 11, true, 4));
}

/// One file folio's life: read in by `read()`, read four more times, aged past, sorted as
/// protected by its tier, read no more, isolated, evicted, refaulted while its generation is
/// still the oldest, and restored.
#[test]
fn a_file_folio_from_read_to_refault() {
    let z = ZONE_NORMAL;
    let mut l = at7([5, 5]);
    let mut gauge = l.recount_gauge();
    let (mut f, mut g) = (0u16, FolioGen::default());
    l.lru_gen_add_folio(&mut gauge, &mut f, &mut g, z, 1, false);
    assert_eq!(g.gen(), Some(lru_gen_from_seq(5)));
    for _ in 0..5 {
        folio_inc_refs(&mut f, &mut g);
    }
    assert_eq!(folio_lru_refs(f, g), 4);
    // The controller evicts file tiers 0..=1: the folio (tier 3) is protected.
    let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, false);
    assert_eq!(s, Sorted::Protected { gen: 2, tier: 3 });
    assert_eq!((folio_lru_refs(f, g), l.protected[0][FILE]), (0, [0, 0, 1]));
    // Two aging steps later its generation (seq 6) is the oldest.
    assert!(l.try_to_inc_max_seq_nowalk(7, true, 10, &mut gauge));
    assert!(l.try_to_inc_min_seq(true));
    assert!(l.try_to_inc_max_seq_nowalk(8, true, 20, &mut gauge));
    assert_eq!((l.min_seq, l.max_seq), ([6, 6], 9));
    assert_eq!(gauge, l.recount_gauge());
    // One more read: PG_referenced only (refs 0, tier 0): isolated.
    folio_inc_refs(&mut f, &mut g);
    let tier_idx = l.get_tier_idx(FILE);
    assert_eq!(tier_idx, 3, "no refaults yet: every tier is evicted");
    let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, tier_idx, false);
    assert_eq!(s, Sorted::Isolate);
    let ctl = IsolateCtl {
        may_unmap: true,
        may_writepage: true,
        gfp_io: true,
    };
    assert!(l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, ctl));
    assert_eq!(f, 0, "PG_referenced is cleared by isolation");
    // Its protection was counted at tier 3 and folded (1 / 2 = 0) when seq 5 retired.
    assert_eq!((l.protected[0][FILE], l.avg_total[FILE][3]), ([0; 3], 0));
    let shadow = l.lru_gen_eviction(FILE, folio_lru_refs(f, g), 1);
    assert_eq!(l.evicted[0][FILE], [1, 0, 0, 0]);
    // It is read again at once: counted at tier 0, not restored outside a fault.
    let (mut f, mut g) = (0u16, FolioGen::default());
    let r = l.lru_gen_refault(FILE, shadow, false, 1, &mut f, &mut g);
    assert!(r.counted && !r.restored);
    assert_eq!(l.read_ctrl_pos(FILE, 0, 1).refaulted, 1);
    assert_eq!(gauge[z][LRU_INACTIVE_FILE] + gauge[z][LRU_ACTIVE_FILE], 0);
}

/// `scan_folios`' walk over zone lists given as the outcomes of their folios, tail first;
/// returns the bookkeeping and how many folios of each list were walked.
fn scan(reclaim_idx: usize, lists: &[(usize, Vec<ScanOutcome>)]) -> (ScanFolios, Vec<usize>) {
    let mut s = ScanFolios::default();
    let mut walked = vec![0; MAX_NR_ZONES];
    for zone in scan_zone_order(reclaim_idx) {
        for (_, outcomes) in lists.iter().filter(|(z, _)| *z == zone) {
            for &o in outcomes {
                walked[zone] += 1;
                if !s.record(zone, 1, o) {
                    break;
                }
            }
        }
        if !s.zone_done() {
            break;
        }
    }
    (s, walked)
}

/// §8.2 test 10: `scan_folios` stops at 64 isolated pages and at 4096 folios, and returns 0
/// when it isolated nothing and walked fewer than 4096.
#[test]
fn scan_folios_stops() {
    use ScanOutcome::{Isolated, Skipped};
    let n = ZONE_NORMAL;
    // 100 isolatable folios: 64 taken.
    let (s, walked) = scan(n, &[(n, vec![Isolated; 100])]);
    assert_eq!(
        (s.isolated, s.scanned, s.result(), walked[n]),
        (64, 64, 64, 64)
    );
    // 5000 protected folios: the budget ends the call after 4096, which still counts.
    let (s, _) = scan(n, &[(n, vec![ScanOutcome::Sorted; 5000])]);
    assert_eq!((s.sorted, s.remaining, s.result()), (4096, 0, 4096));
    // 10 sorted, nothing isolated: 0, so isolate_folios tries the other type.
    let (s, _) = scan(n, &[(n, vec![ScanOutcome::Sorted; 10])]);
    assert_eq!((s.scanned, s.result()), (10, 0));
    // 64 skipped in Normal leave that list, not the call: DMA32 is walked next.
    let mut normal = vec![Skipped; 70];
    normal.push(Isolated);
    let (s, walked) = scan(n, &[(n, normal), (ZONE_DMA32, vec![Isolated; 3])]);
    assert_eq!((walked[n], walked[ZONE_DMA32]), (64, 3));
    assert_eq!((s.skipped[n], s.isolated, s.result()), (64, 3, 67));
    // Isolation counts across zones: 40 in Normal and 24 in DMA32 end the call there.
    let lists = [
        (n, vec![Isolated; 40]),
        (ZONE_DMA32, vec![Isolated; 30]),
        (ZONE_MOVABLE, vec![Isolated; 5]),
    ];
    let (s, walked) = scan(n, &lists);
    assert_eq!(
        (walked[ZONE_DMA32], walked[ZONE_MOVABLE], s.isolated),
        (24, 0, 64)
    );
}
