//! The eviction of the multi-generational LRU (`mm/vmscan.c`, 6.1.192; docs/design/mglru.md
//! §5.3, §5.6): how much a reclaim pass looks at, the order of the zones, what happens to each
//! folio at the tail of the oldest generation, and when a pass stops early.
//!
//! A pass looks at `total >> priority` pages of the eligible generations. Direct and memcg
//! reclaim age a lruvec with too few generations themselves (never at `DEF_PRIORITY`); kswapd
//! leaves that to its aging step. A folio at the tail of the oldest generation is "sorted"
//! when a walk promoted it, its tier is protected, its zone is above the reclaim index, or it
//! waits for writeback; otherwise it is isolated for `shrink_folio_list`, unless the reclaimer
//! may not unmap or write it.
//!
//! Here as decisions over a folio's flags and generation byte and plain numbers; the list
//! walk of `scan_folios` (4096 folios per call, stopping at 64 isolated), the put-back and
//! the vmstat counters of each outcome (docs/design/mglru.md §5.7, §6.1) belong to the
//! wiring, which the return values name. Not modelled: lazy-free anon and unevictable folios.

use super::aging::DEF_PRIORITY;
use super::mm_inline::{
    clear_refs, folio_lru_refs, folio_type, lru_gen_from_seq, lru_hist_from_seq,
    lru_tier_from_refs, FolioGen, LruGauge, REFS_SATURATED,
};
use super::mmzone::{LruGen, MAX_LRU_BATCH, MIN_LRU_BATCH, MIN_NR_GENS};
use crate::machine::frames::pg;
use crate::machine::lru::{ANON, FILE};
use crate::machine::MAX_NR_ZONES;

impl LruGen {
    /// `get_nr_to_scan`: the pages this pass should look at, and whether the lruvec needed
    /// aging. `protected`: the memcg is below `memory.min`, or below `memory.low` outside a
    /// low-reclaim pass. A lruvec that needs aging is aged here (`aging`, given the `max_seq`
    /// read at entry) only below `DEF_PRIORITY` and not by kswapd; when it is not aged it is
    /// evicted only if its reference type still has three generations.
    #[allow(clippy::too_many_arguments)]
    pub fn get_nr_to_scan(
        &mut self,
        protected: bool,
        can_swap: bool,
        priority: i32,
        kswapd: bool,
        online: bool,
        aging: impl FnOnce(&mut LruGen, u64) -> bool,
    ) -> (u64, bool) {
        if protected {
            return (0, false);
        }
        let max_seq = self.max_seq;
        let oldest = self.min_seq[if can_swap { ANON } else { FILE }];
        let (need, nr) = self.should_run_aging(can_swap, priority, online);
        if !need {
            return (nr, false);
        }
        if priority != DEF_PRIORITY {
            if kswapd {
                return (0, true);
            }
            if aging(self, max_seq) {
                return (nr, true);
            }
        }
        let nr = if oldest + MIN_NR_GENS <= max_seq {
            nr
        } else {
            0
        };
        (nr, true)
    }

    /// `sort_folio` for a folio at the tail of the oldest generation of its type, with `n`
    /// pages, in `zone`; `tier_idx` from the PID controller; `locked`: someone holds the folio
    /// lock. Moves the folio's generation, counts and gauges; see [`Sorted`] for where the
    /// caller puts it. A protected folio is counted in `protected` here; the caller adds it to
    /// `workingset_activate_<type>`, and every sorted folio to `pgrefill`.
    #[allow(clippy::too_many_arguments)]
    pub fn sort_folio(
        &mut self,
        gauge: &mut LruGauge,
        flags: &mut u16,
        g: &mut FolioGen,
        zone: usize,
        n: i64,
        reclaim_idx: usize,
        tier_idx: usize,
        locked: bool,
    ) -> Sorted {
        let type_ = folio_type(*flags);
        let Some(gen) = g.gen() else {
            panic!("sort_folio of a folio on no generation list");
        };
        let refs = folio_lru_refs(*flags, *g);
        let tier = lru_tier_from_refs(refs);
        if gen != lru_gen_from_seq(self.min_seq[type_]) {
            return Sorted::Promoted { gen };
        }
        if tier > tier_idx || refs == REFS_SATURATED {
            let hist = lru_hist_from_seq(self.min_seq[type_]);
            let new = self.folio_inc_gen(gauge, flags, g, zone, n, false);
            self.protected[hist][type_][tier - 1] += n as u64;
            return Sorted::Protected { gen: new, tier };
        }
        if zone > reclaim_idx {
            let new = self.folio_inc_gen(gauge, flags, g, zone, n, false);
            return Sorted::Ineligible { gen: new };
        }
        let dirty_file = type_ == FILE && *flags & pg::DIRTY != 0;
        if locked || *flags & pg::WRITEBACK != 0 || dirty_file {
            let new = self.folio_inc_gen(gauge, flags, g, zone, n, true);
            return Sorted::Writeback { gen: new };
        }
        Sorted::Isolate
    }

    /// `isolate_folio`: take the folio off its generation for `shrink_folio_list`, unless the
    /// reclaimer may not unmap it (`mapped`) or may not write it (dirty, or anon without a
    /// swap slot). An unreferenced folio loses its access history; `PG_reclaim` and
    /// `PG_referenced` are cleared. False: it is skipped (`pgskip_<zone>`), left in place.
    #[allow(clippy::too_many_arguments)]
    pub fn isolate_folio(
        &mut self,
        gauge: &mut LruGauge,
        flags: &mut u16,
        g: &mut FolioGen,
        zone: usize,
        n: i64,
        mapped: bool,
        ctl: IsolateCtl,
    ) -> bool {
        if !ctl.may_unmap && mapped {
            return false;
        }
        let unswapped_anon = folio_type(*flags) == ANON && *flags & pg::SWAPCACHE == 0;
        let may_write = ctl.may_writepage && ctl.gfp_io;
        if !may_write && (*flags & pg::DIRTY != 0 || unswapped_anon) {
            return false;
        }
        if *flags & pg::REFERENCED == 0 {
            clear_refs(flags, g);
        }
        *flags &= !(pg::RECLAIM | pg::REFERENCED);
        let was_on = self.lru_gen_del_folio(gauge, flags, g, zone, n, true);
        debug_assert!(was_on);
        true
    }
}

/// What `sort_folio` did with a folio; every outcome but `Isolate` counts as sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sorted {
    /// A walk or look-around promoted it since: to the head of its generation's list.
    Promoted { gen: usize },
    /// Its tier (or saturated refs) protects it: to the tail of the next generation.
    Protected { gen: usize, tier: usize },
    /// Its zone is above the reclaim index: to the tail of the next generation.
    Ineligible { gen: usize },
    /// Locked, under writeback, or dirty page cache: `PG_reclaim` set, to the head of the
    /// next generation; the end of its writeback rotates it to the oldest.
    Writeback { gen: usize },
    /// Try to isolate it.
    Isolate,
}

impl Sorted {
    #[inline]
    pub fn sorted(self) -> bool {
        self != Sorted::Isolate
    }
    /// The folio goes to the tail of its new list (else the head).
    #[inline]
    pub fn to_tail(self) -> bool {
        matches!(self, Sorted::Protected { .. } | Sorted::Ineligible { .. })
    }
}

/// The parts of `scan_control` `isolate_folio` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsolateCtl {
    pub may_unmap: bool,
    pub may_writepage: bool,
    /// The reclaim's gfp mask has `__GFP_IO`.
    pub gfp_io: bool,
}

/// The zone order of `scan_folios` (6.1.192): from the reclaim index down to zone 0, then the
/// zones above it from the highest down, so folios of ineligible zones are sorted out of the
/// way instead of blocking eviction.
pub fn scan_zone_order(reclaim_idx: usize) -> [usize; MAX_NR_ZONES] {
    std::array::from_fn(|i| (reclaim_idx + MAX_NR_ZONES - i) % MAX_NR_ZONES)
}

/// What happened to one folio in `scan_folios`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanOutcome {
    /// `sort_folio` dealt with it (`pgrefill`).
    Sorted,
    /// Taken for `shrink_folio_list` (`pgscan_*`).
    Isolated,
    /// `isolate_folio` refused it: set aside and put back at the head of its list
    /// (`pgskip_<zone>`).
    Skipped,
}

/// The bookkeeping of one `scan_folios` call over the oldest generation of a type: at most
/// [`MAX_LRU_BATCH`] folios; a zone's list is left after 64 pages isolated in the call or
/// skipped in that zone, the call after 64 isolated. The caller walks the zones in
/// [`scan_zone_order`] and each list from its tail, and reports each folio to
/// [`ScanFolios::record`] and the end of each list to [`ScanFolios::zone_done`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFolios {
    /// Folios left of the call's budget.
    pub remaining: u64,
    /// Pages walked: sorted, isolated and skipped.
    pub scanned: u64,
    pub sorted: u64,
    pub isolated: u64,
    /// Pages skipped, per zone.
    pub skipped: [u64; MAX_NR_ZONES],
    zone_skipped: u64,
}

impl Default for ScanFolios {
    fn default() -> Self {
        ScanFolios {
            remaining: MAX_LRU_BATCH,
            scanned: 0,
            sorted: 0,
            isolated: 0,
            skipped: [0; MAX_NR_ZONES],
            zone_skipped: 0,
        }
    }
}

impl ScanFolios {
    /// A folio of `n` pages from `zone`'s list had this outcome. False: leave this list.
    pub fn record(&mut self, zone: usize, n: u64, outcome: ScanOutcome) -> bool {
        self.scanned += n;
        match outcome {
            ScanOutcome::Sorted => self.sorted += n,
            ScanOutcome::Isolated => self.isolated += n,
            ScanOutcome::Skipped => {
                self.skipped[zone] += n;
                self.zone_skipped += n;
            }
        }
        self.remaining -= 1;
        self.remaining > 0 && self.isolated.max(self.zone_skipped) < MIN_LRU_BATCH
    }

    /// The walk of one zone's list ended (emptied or left). False: end the call.
    pub fn zone_done(&mut self) -> bool {
        self.zone_skipped = 0;
        self.remaining > 0 && self.isolated < MIN_LRU_BATCH
    }

    /// `scan_folios`' return value: the pages walked, or 0 when it isolated nothing before
    /// running out of folios (so `isolate_folios` tries the other type).
    pub fn result(&self) -> u64 {
        if self.isolated > 0 || self.remaining == 0 {
            self.scanned
        } else {
            0
        }
    }
}

/// A zone's free pages and marks, for [`should_abort_scan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneFree {
    pub free: u64,
    pub low: u64,
    pub high: u64,
}

/// The state [`should_abort_scan`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortScan {
    pub kswapd: bool,
    pub cgroup_reclaim: bool,
    pub fatal_signal: bool,
    /// `max_seq` when `lru_gen_shrink_lruvec` began, and now.
    pub seq_at_entry: u64,
    pub max_seq: u64,
    pub nr_reclaimed: u64,
    pub nr_to_reclaim: u64,
    /// `sc.last_reclaimed`: `nr_reclaimed` at kswapd's last aging step.
    pub last_reclaimed: u64,
    /// Anon was evicted in this call.
    pub need_swapping: bool,
    pub priority: i32,
}

/// `should_abort_scan`: `None` to go on; `Some(credit)` to stop, adding `credit` to
/// `sc.nr_reclaimed` (64 for a fatal signal and for the watermark stop, never counted in
/// `pgsteal`). `zones`: the managed zones up to the reclaim index. Direct reclaim stops after
/// two agings in the call or when it would swap past its target; below priority 10 every
/// reclaimer stops once all zones are above low (direct) or high (kswapd, after reclaiming
/// its target since its last aging step).
pub fn should_abort_scan(s: &AbortScan, zones: &[ZoneFree]) -> Option<u64> {
    if !s.kswapd {
        if s.max_seq - s.seq_at_entry > 1 {
            return Some(0);
        }
        if s.nr_reclaimed >= s.nr_to_reclaim && s.need_swapping {
            return Some(0);
        }
        if s.fatal_signal {
            return Some(MIN_LRU_BATCH);
        }
        if s.cgroup_reclaim {
            return None;
        }
    } else if s.nr_reclaimed - s.last_reclaimed < s.nr_to_reclaim {
        return None;
    }
    if s.priority > DEF_PRIORITY - 2 {
        return None;
    }
    let low = zones
        .iter()
        .any(|z| z.free < if s.kswapd { z.high } else { z.low });
    if low {
        None
    } else {
        Some(MIN_LRU_BATCH)
    }
}

/// The end of `lru_gen_shrink_lruvec`: a call that reclaimed at least 64 pages without the
/// lruvec needing aging clears `memcgs_need_aging`, so kswapd skips its next aging step.
#[inline]
pub fn clears_memcgs_need_aging(reclaimed: u64, need_aging: bool) -> bool {
    reclaimed >= MIN_LRU_BATCH && !need_aging
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lru_gen::mm_inline::folio_inc_refs;
    use crate::machine::{ZONE_DEVICE, ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE, ZONE_NORMAL};

    /// E1.
    #[test]
    fn zone_order_e1() {
        let (d, d32, n, m, dev) = (ZONE_DMA, ZONE_DMA32, ZONE_NORMAL, ZONE_MOVABLE, ZONE_DEVICE);
        assert_eq!(scan_zone_order(ZONE_NORMAL), [n, d32, d, dev, m]);
        assert_eq!(scan_zone_order(ZONE_DMA32), [d32, d, dev, m, n]);
        assert_eq!(scan_zone_order(ZONE_MOVABLE), [m, n, d32, d, dev]);
        assert_eq!(scan_zone_order(ZONE_DEVICE), [dev, m, n, d32, d]);
    }

    /// E2's set-up: min_seq[FILE] 5 (gen 1), max_seq 7; a file folio at the tail of gen 1
    /// after `accesses` reads, with extra flags, in `zone`.
    fn e2(accesses: u32, extra: u16, zone: usize) -> (LruGen, LruGauge, u16, FolioGen) {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = [5, 5];
        let mut gauge = l.recount_gauge();
        let (mut f, mut g) = (extra, FolioGen::default());
        l.lru_gen_add_folio(&mut gauge, &mut f, &mut g, zone, 1, false);
        for _ in 0..accesses {
            folio_inc_refs(&mut f, &mut g);
        }
        (l, gauge, f, g)
    }

    const DIRECT: IsolateCtl = IsolateCtl {
        may_unmap: true,
        may_writepage: true,
        gfp_io: true,
    };

    /// E2 (a)-(f), tier_idx 1, reclaim_idx Normal.
    #[test]
    fn sort_folio_e2() {
        let z = ZONE_NORMAL;
        // (a) promoted to seq 7 (gen field 3) by a walk: to gen 3's head.
        let (mut l, mut gauge, mut f, mut g) = e2(0, 0, z);
        l.folio_update_gen(&mut gauge, &mut f, &mut g, z, 1, 3);
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, false);
        assert_eq!(s, Sorted::Promoted { gen: 3 });
        assert!(s.sorted() && !s.to_tail());
        // (b) 3 accesses: refs 2, tier 2 > 1: protected, to seq 6 (gen 2) tail.
        let (mut l, mut gauge, mut f, mut g) = e2(3, 0, z);
        assert_eq!(g.gen(), Some(1), "a read() page: the oldest generation");
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, false);
        assert_eq!(s, Sorted::Protected { gen: 2, tier: 2 });
        assert!(s.to_tail());
        assert_eq!(l.protected[0][FILE], [0, 1, 0]);
        assert_eq!(
            (g.refs_field(), f & (pg::REFERENCED | pg::WORKINGSET)),
            (0, 0)
        );
        assert_eq!((l.nr_pages[1][FILE][z], l.nr_pages[2][FILE][z]), (0, 1));
        assert_eq!(gauge, l.recount_gauge());
        // (c) 2 accesses: tier 1 <= 1: isolated, keeping PG_workingset (it was referenced).
        let (mut l, mut gauge, mut f, mut g) = e2(2, 0, z);
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, false);
        assert_eq!(s, Sorted::Isolate);
        assert!(l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, DIRECT));
        assert_eq!((g.gen(), f), (None, pg::WORKINGSET));
        assert_eq!((l.nr_pages[1][FILE][z], gauge[z]), (0, [0; 5]));
        // (d) 5 accesses: refs 4, tier 3: protected at tier_idx 1, and saturated at 3.
        for tier_idx in [1, 3] {
            let (mut l, mut gauge, mut f, mut g) = e2(5, 0, z);
            let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, tier_idx, false);
            assert_eq!(s, Sorted::Protected { gen: 2, tier: 3 });
            assert_eq!(l.protected[0][FILE], [0, 0, 1]);
        }
        // 4 accesses (refs 3, tier 2) at tier_idx 3: not saturated, isolated.
        let (mut l, mut gauge, mut f, mut g) = e2(4, 0, z);
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 3, false);
        assert_eq!(s, Sorted::Isolate);
        // (e) clean, no access, in Movable (above Normal): to gen 2's tail.
        let (mut l, mut gauge, mut f, mut g) = e2(0, 0, ZONE_MOVABLE);
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, ZONE_MOVABLE, 1, z, 1, false);
        assert_eq!(s, Sorted::Ineligible { gen: 2 });
        assert!(s.to_tail());
        assert_eq!(f & pg::RECLAIM, 0);
        // (f) dirty, not under writeback: PG_reclaim, to gen 2's head.
        let (mut l, mut gauge, mut f, mut g) = e2(0, pg::DIRTY, z);
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, false);
        assert_eq!(s, Sorted::Writeback { gen: 2 });
        assert!(!s.to_tail());
        assert_ne!(f & pg::RECLAIM, 0);
        assert_eq!(g.gen(), Some(2));
        // Locked or under writeback: the same; a dirty anon folio in the swap cache is not.
        let (mut l, mut gauge, mut f, mut g) = e2(0, 0, z);
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, true);
        assert_eq!(s, Sorted::Writeback { gen: 2 });
        let anon = pg::SWAPBACKED | pg::SWAPCACHE | pg::DIRTY;
        let (mut l, mut gauge, mut f, mut g) = e2(0, anon, z);
        assert_eq!(g.gen(), Some(1), "swap cache outside a fault: the oldest");
        let s = l.sort_folio(&mut gauge, &mut f, &mut g, z, 1, z, 1, false);
        assert_eq!(s, Sorted::Isolate);
    }

    /// `isolate_folio`'s refusals, and the access history it drops.
    #[test]
    fn isolate_folio_refuses_what_it_may_not_reclaim() {
        let z = ZONE_NORMAL;
        let no_unmap = IsolateCtl {
            may_unmap: false,
            ..DIRECT
        };
        let no_io = IsolateCtl {
            gfp_io: false,
            ..DIRECT
        };
        let no_write = IsolateCtl {
            may_writepage: false,
            ..DIRECT
        };
        let (mut l, mut gauge, mut f, mut g) = e2(0, 0, z);
        let before = (l.clone(), f, g);
        assert!(!l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, true, no_unmap));
        assert_eq!(
            (l.clone(), f, g),
            before,
            "a refused folio is left as it was"
        );
        assert!(l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, no_unmap));
        for ctl in [no_io, no_write] {
            let (mut l, mut gauge, mut f, mut g) = e2(0, pg::DIRTY, z);
            assert!(!l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, ctl));
            // Anon outside the swap cache would need a slot written.
            let (mut l, mut gauge, mut f, mut g) = e2(0, pg::SWAPBACKED, z);
            assert!(!l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, ctl));
            let (mut l, mut gauge, mut f, mut g) = e2(0, pg::SWAPBACKED | pg::SWAPCACHE, z);
            assert!(l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, ctl));
        }
        // Not referenced: refs and PG_workingset go too; PG_reclaim is cleared.
        let (mut l, mut gauge, mut f, mut g) = e2(0, pg::WORKINGSET | pg::RECLAIM, z);
        g.set_refs_field(2);
        assert!(l.isolate_folio(&mut gauge, &mut f, &mut g, z, 1, false, DIRECT));
        assert_eq!((f, g.refs_field(), g.gen()), (0, 0, None));
    }

    /// E6.
    #[test]
    fn should_abort_scan_e6() {
        let zone = |free, low, high| ZoneFree { free, low, high };
        let direct = AbortScan {
            kswapd: false,
            cgroup_reclaim: false,
            fatal_signal: false,
            seq_at_entry: 7,
            max_seq: 7,
            nr_reclaimed: 10,
            nr_to_reclaim: 32,
            last_reclaimed: 0,
            need_swapping: false,
            priority: 10,
        };
        let mut zones = [
            zone(3000, 2000, 2500),
            zone(30_000, 20_000, 25_000),
            zone(5000, 8000, 9000),
        ];
        assert_eq!(should_abort_scan(&direct, &zones), None, "Normal below low");
        zones[2].free = 9000;
        assert_eq!(should_abort_scan(&direct, &zones), Some(64));
        let p11 = AbortScan {
            priority: 11,
            ..direct
        };
        assert_eq!(should_abort_scan(&p11, &zones), None);
        // Two agings in this call; over-swapping; a fatal signal; memcg reclaim.
        let aged_twice = AbortScan {
            max_seq: 9,
            priority: 12,
            ..direct
        };
        assert_eq!(should_abort_scan(&aged_twice, &[]), Some(0));
        let over = AbortScan {
            nr_reclaimed: 32,
            need_swapping: true,
            priority: 12,
            ..direct
        };
        assert_eq!(should_abort_scan(&over, &[]), Some(0));
        let fatal = AbortScan {
            fatal_signal: true,
            priority: 12,
            ..direct
        };
        assert_eq!(should_abort_scan(&fatal, &[]), Some(64));
        let memcg = AbortScan {
            cgroup_reclaim: true,
            priority: 0,
            ..direct
        };
        assert_eq!(should_abort_scan(&memcg, &[]), None);
        // kswapd: short of its target since the last aging step, it goes on.
        let kswapd = AbortScan {
            kswapd: true,
            nr_reclaimed: 3000,
            last_reclaimed: 2000,
            nr_to_reclaim: 1500,
            ..direct
        };
        assert_eq!(should_abort_scan(&kswapd, &zones), None);
        let met = AbortScan {
            nr_reclaimed: 3500,
            ..kswapd
        };
        // Normal at 9000 is not below high (9000): stop, with the credit.
        assert_eq!(should_abort_scan(&met, &zones), Some(64));
        zones[2].free = 8999;
        assert_eq!(should_abort_scan(&met, &zones), None);
        assert!(clears_memcgs_need_aging(64, false));
        assert!(!clears_memcgs_need_aging(63, false));
        assert!(!clears_memcgs_need_aging(64, true));
    }

    /// §8.2 test 14: priority 12 never ages; direct reclaim ages below it; kswapd leaves it.
    #[test]
    fn get_nr_to_scan_by_priority() {
        let two_gens = || {
            let mut l = LruGen::new(0);
            l.min_seq = [2, 2];
            l.nr_pages[lru_gen_from_seq(2)][FILE][ZONE_NORMAL] = 10_000;
            let gauge = l.recount_gauge();
            (l, gauge)
        };
        let never = |_: &mut LruGen, _: u64| -> bool { panic!("aged") };
        let (mut l, _) = two_gens();
        assert_eq!(
            l.get_nr_to_scan(false, true, 12, false, true, never),
            (0, true)
        );
        assert_eq!(
            l.get_nr_to_scan(false, true, 11, true, true, never),
            (0, true)
        );
        assert_eq!(
            l.get_nr_to_scan(true, true, 11, false, true, never),
            (0, false)
        );
        assert_eq!(l.max_seq, 3);
        let (mut l, mut gauge) = two_gens();
        let got = l.get_nr_to_scan(false, true, 11, false, true, |g, seq| {
            g.try_to_inc_max_seq_nowalk(seq, true, 5, &mut gauge)
        });
        assert_eq!(got, (10_000 >> 11, true));
        assert_eq!(l.max_seq, 4);
        // Aging that fails (already done for this max_seq): two generations, nothing.
        let (mut l, _) = two_gens();
        assert_eq!(
            l.get_nr_to_scan(false, true, 11, false, true, |_, _| false),
            (0, true)
        );
        // Three generations, no aging due: total >> priority.
        let mut l = LruGen::new(0);
        l.min_seq = [1, 1];
        for seq in 1..=3 {
            l.nr_pages[lru_gen_from_seq(seq)][ANON][ZONE_NORMAL] = 4096;
        }
        assert_eq!(
            l.get_nr_to_scan(false, true, 12, true, true, never),
            (3, false)
        );
    }
}
