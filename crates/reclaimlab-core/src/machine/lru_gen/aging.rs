//! The aging of the multi-generational LRU (`mm/vmscan.c`, 6.1.192; docs/design/mglru.md §4):
//! when a lruvec needs a new generation, how its sequence numbers advance, kswapd's
//! `min_ttl_ms` test, and the look-around window eviction uses to feed the aging.
//!
//! Aging opens generation `max_seq + 1`; a type that already has four generations first
//! merges its oldest into the next (`inc_min_seq`), and when both types are empty at the bottom
//! their oldest generations retire together (`try_to_inc_min_seq`). The active/inactive
//! gauges follow whole generations: each step turns the second youngest inactive.
//!
//! Modelled here over page counts: the sequence bookkeeping, the gauges, the timestamps (in
//! jiffies, which the caller takes from the clock with [`jiffies`]), the refault-statistics
//! fold, `inc_min_seq`'s budget of 4096 folios per lock hold (a folio is a page: the model has
//! no large folios on the LRU), and the aging step without a page-table walk
//! (`iterate_mm_list_nowalk`, the kernel's path when `LRU_GEN_MM_WALK` is off). Left for the
//! wiring: the folios' own list moves, the page-table walk and its Bloom filters, and the
//! waiting of concurrent walkers (one walker at a time in the simulator).

use super::mm_inline::{lru_gen_from_seq, LruGauge};
use super::mmzone::{
    LruGen, ANON_AND_FILE, MAX_LRU_BATCH, MAX_NR_GENS, MIN_LRU_BATCH, MIN_NR_GENS, NR_GENS,
};
use crate::machine::lru::{ANON, FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::machine::pte::PTRS_PER_PTE;
use crate::machine::{JIFFY_NS, MAX_NR_ZONES};

/// `DEF_PRIORITY` (the same constant as `vmscan::DEF_PRIORITY`, restated so that this folder
/// does not depend on the reclaim code that will call it; a test checks they agree).
pub const DEF_PRIORITY: i32 = 12;

/// `PAGEVEC_SIZE`: below this many promotion candidates, a look-around without walk state
/// activates them one by one.
pub const PAGEVEC_SIZE: usize = 15;

/// PTEs per cache line on x86-64 (`cache_line_size() / sizeof(pte_t)` = 64 / 8, clamped to
/// 2..=8): a page table is worth walking again when one PTE in this many was young.
pub const PTE_DENSITY: u64 = 8;

impl LruGen {
    /// `should_run_aging`: is a new generation due, and how many pages this pass should look
    /// at (`total >> priority`, or everything for an offline memcg)? `total` counts every
    /// generation of the types that can be evicted (file only without swap). The reference
    /// type (anon when it can be swapped, else file) must keep three generations, with the
    /// youngest at most half and the oldest of the three at least a quarter of the pages.
    pub fn should_run_aging(&self, can_swap: bool, priority: i32, online: bool) -> (bool, u64) {
        let first = if can_swap { ANON } else { FILE };
        let (mut total, mut young, mut old) = (0u64, 0u64, 0u64);
        for (type_, &min_seq) in self.min_seq.iter().enumerate().skip(first) {
            for seq in min_seq..=self.max_seq {
                let size = self.gen_size(seq, type_);
                total += size;
                if seq == self.max_seq {
                    young += size;
                } else if seq + MIN_NR_GENS == self.max_seq {
                    old += size;
                }
            }
        }
        let nr_to_scan = if online {
            total >> priority as u32
        } else {
            total
        };
        let oldest = self.min_seq[first];
        let need = if oldest + MIN_NR_GENS > self.max_seq {
            true
        } else if oldest + MIN_NR_GENS < self.max_seq {
            false
        } else {
            young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total
        };
        (need, nr_to_scan)
    }

    /// `inc_min_seq`: retire the oldest generation of `type_` by moving its folios to the
    /// next one, at most [`MAX_LRU_BATCH`] per call, zone by zone from zone 0. Anon that cannot
    /// be swapped just advances: its folios stay and become part of the youngest generation.
    /// Returns whether it finished (else call again) and the pages moved.
    pub fn inc_min_seq(&mut self, type_: usize, can_swap: bool) -> (bool, u64) {
        let mut moved = 0u64;
        if type_ == FILE || can_swap {
            let old = lru_gen_from_seq(self.min_seq[type_]);
            let new = (old + 1) % MAX_NR_GENS as usize;
            let mut remaining = MAX_LRU_BATCH;
            for zone in 0..MAX_NR_ZONES {
                let n = self.nr_pages[old][type_][zone].max(0) as u64;
                let k = n.min(remaining);
                if k == 0 {
                    continue;
                }
                // Both generations are inactive (the oldest of four and the next): no gauge
                // moves.
                self.nr_pages[old][type_][zone] -= k as i64;
                self.nr_pages[new][type_][zone] += k as i64;
                moved += k;
                remaining -= k;
                if remaining == 0 {
                    return (false, moved);
                }
            }
        }
        self.reset_ctrl_pos(type_);
        self.min_seq[type_] += 1;
        (true, moved)
    }

    /// `try_to_inc_min_seq` where each generation's lists hold exactly the folios its
    /// counters count (no promoted folio waiting to be moved): see
    /// [`Self::try_to_inc_min_seq_lists`]. The worked examples' form; the machine passes its
    /// lists.
    #[cfg(test)]
    pub fn try_to_inc_min_seq(&mut self, can_swap: bool) -> bool {
        let mut occupied = [[false; ANON_AND_FILE]; NR_GENS];
        for (g, per_type) in occupied.iter_mut().enumerate() {
            for (t, o) in per_type.iter_mut().enumerate() {
                *o = self.nr_pages[g][t].iter().any(|&n| n > 0);
            }
        }
        self.try_to_inc_min_seq_lists(can_swap, &occupied)
    }

    /// `try_to_inc_min_seq`: retire oldest generations whose lists are empty (`occupied[gen]
    /// [type]`: a folio is linked on one; never below two generations per type). A list can
    /// hold promoted folios its generation no longer counts, so 6.1 tests the lists, not the
    /// counters. While anon can be swapped the two types' oldest advance together: anon no
    /// further than file, file at least to anon. Returns whether a `min_seq` changed.
    pub fn try_to_inc_min_seq_lists(
        &mut self,
        can_swap: bool,
        occupied: &[[bool; ANON_AND_FILE]; NR_GENS],
    ) -> bool {
        let first = if can_swap { ANON } else { FILE };
        let mut min_seq = self.min_seq;
        for (type_, seq) in min_seq.iter_mut().enumerate().skip(first) {
            while *seq + MIN_NR_GENS <= self.max_seq && !occupied[lru_gen_from_seq(*seq)][type_] {
                *seq += 1;
            }
        }
        if can_swap {
            min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
            min_seq[FILE] = min_seq[ANON].max(self.min_seq[FILE]);
        }
        let mut changed = false;
        for (type_, &seq) in min_seq.iter().enumerate().skip(first) {
            if seq != self.min_seq[type_] {
                self.reset_ctrl_pos(type_);
                self.min_seq[type_] = seq;
                changed = true;
            }
        }
        changed
    }

    /// `inc_max_seq` at jiffy `now`: make room in every type with four generations (file
    /// first), turn the second youngest generation inactive in the gauges, open
    /// `max_seq + 1`. Returns the pages `inc_min_seq` moved (its cost).
    pub fn inc_max_seq(&mut self, can_swap: bool, now: u64, gauge: &mut LruGauge) -> u64 {
        let mut moved = 0u64;
        for type_ in [FILE, ANON] {
            // A type runs out of its budget with 4096 pages or more in its oldest generation;
            // the kernel then drops the lock and starts over.
            while self.nr_gens(type_) == MAX_NR_GENS {
                let (_, n) = self.inc_min_seq(type_, can_swap);
                moved += n;
            }
        }
        // The generation turning inactive, and the one about to open, which is not empty
        // when anon's oldest was advanced without moving its folios (no swap).
        let prev = lru_gen_from_seq(self.max_seq - 1);
        let next = lru_gen_from_seq(self.max_seq + 1);
        for (type_, inactive) in [(ANON, LRU_INACTIVE_ANON), (FILE, LRU_INACTIVE_FILE)] {
            for (zone, g) in gauge.iter_mut().enumerate() {
                let delta = self.nr_pages[prev][type_][zone] - self.nr_pages[next][type_][zone];
                if delta != 0 {
                    debug_assert!(g[inactive] as i64 + delta >= 0);
                    debug_assert!(g[inactive + 1] as i64 - delta >= 0);
                    g[inactive] = (g[inactive] as i64 + delta) as u64;
                    g[inactive + 1] = (g[inactive + 1] as i64 - delta) as u64;
                }
            }
        }
        self.timestamps[next] = now;
        self.max_seq += 1;
        moved
    }

    /// `try_to_inc_max_seq` without a page-table walk (`iterate_mm_list_nowalk`: capability
    /// `LRU_GEN_MM_WALK` off, or no walk state): the step for the `max_seq` the caller read
    /// succeeds unless an iteration for it already completed. Returns whether `max_seq`
    /// advanced past the caller's.
    pub fn try_to_inc_max_seq_nowalk(
        &mut self,
        max_seq: u64,
        can_swap: bool,
        now: u64,
        gauge: &mut LruGauge,
    ) -> bool {
        debug_assert!(max_seq <= self.max_seq);
        if max_seq <= self.mm_seq {
            return max_seq < self.max_seq;
        }
        self.mm_seq += 1;
        self.inc_max_seq(can_swap, now, gauge);
        true
    }

    /// `age_lruvec` (kswapd, §4.8) at jiffy `now`, with `swappiness` from `get_swappiness`
    /// itself (not eviction's per-turn value, so boosted reclaim, which may not swap, still
    /// ages anon): `aging` is called with the `max_seq` read at
    /// entry when a new generation is due (the walk, or
    /// [`LruGen::try_to_inc_max_seq_nowalk`]). With `min_ttl` (jiffies) set, a lruvec whose
    /// oldest file generation is younger than it, or that has nothing to scan below
    /// `DEF_PRIORITY`, is neither aged nor counted as a success.
    #[allow(clippy::too_many_arguments)]
    pub fn age_lruvec(
        &mut self,
        below_min: bool,
        swappiness: u64,
        priority: i32,
        online: bool,
        min_ttl: u64,
        now: u64,
        aging: impl FnOnce(&mut LruGen, u64) -> bool,
    ) -> AgeLruvec {
        if below_min {
            return AgeLruvec::BelowMin;
        }
        let (need, nr_to_scan) = self.should_run_aging(swappiness != 0, priority, online);
        if min_ttl != 0 {
            let birth = self.timestamps[lru_gen_from_seq(self.min_seq[FILE])];
            if time_before(now, birth.wrapping_add(min_ttl)) {
                return AgeLruvec::TooYoung;
            }
            if nr_to_scan == 0 && priority != DEF_PRIORITY {
                return AgeLruvec::TooSmall;
            }
        }
        let max_seq = self.max_seq;
        let aged = need && aging(self, max_seq);
        AgeLruvec::Done { need, aged }
    }
}

/// `jiffies` at simulated time `now_ns` (whole ticks since boot): the unit of the generations'
/// timestamps and of `min_ttl`, so ages have the kernel's 4 ms granularity at HZ = 250.
#[inline]
pub fn jiffies(now_ns: u64) -> u64 {
    now_ns / JIFFY_NS
}

/// `time_before(a, b)` on jiffies: `a` is earlier than `b`, modulo wrap-around.
#[inline]
pub fn time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// What `age_lruvec` did with one lruvec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgeLruvec {
    /// Below `memory.min`: left alone.
    BelowMin,
    /// Its oldest file generation is younger than `min_ttl`.
    TooYoung,
    /// Nothing to scan at this priority (checked only with `min_ttl`).
    TooSmall,
    /// Looked at: `need` says a generation was due, `aged` that one was made.
    Done { need: bool, aged: bool },
}

impl AgeLruvec {
    /// `age_lruvec`'s return value: the lruvec counts against an OOM kill.
    #[inline]
    pub fn success(self) -> bool {
        matches!(self, AgeLruvec::Done { .. })
    }
}

/// The head of `lru_gen_age_node`: kswapd skips the aging of a priority iteration after an
/// eviction pass that reclaimed enough without needing it (`memcgs_need_aging` false), and
/// asks again next time. Every `balance_pgdat` starts with the flag false, so its first
/// iteration never ages nor tests `min_ttl`. True: skip.
#[inline]
pub fn lru_gen_age_node_skips(memcgs_need_aging: &mut bool) -> bool {
    if *memcgs_need_aging {
        false
    } else {
        *memcgs_need_aging = true;
        true
    }
}

/// The tail of `lru_gen_age_node`: with `min_ttl` set, kswapd calls the OOM killer when no
/// lruvec of the node was a success, except for high-order (compaction's) reclaim.
#[inline]
pub fn min_ttl_oom(success: bool, min_ttl: u64, order: u32) -> bool {
    !success && min_ttl != 0 && order == 0
}

/// `suitable_to_scan`: a page table (or look-around window) of `total` PTEs with `young`
/// young ones is dense enough to be walked again next time.
#[inline]
pub fn suitable_to_scan(total: u64, young: u64) -> bool {
    young * PTE_DENSITY >= total
}

/// The look-around window (§4.7) around young vpage `addr` in a VMA `[vma_start, vma_end)`:
/// the page table's 512 pages clipped to the VMA, then at most [`MIN_LRU_BATCH`] pages,
/// leaning on whichever end `addr` is within 32 pages of, else centred. In vpages, `[start,
/// end)`.
pub fn look_around_window(addr: u64, vma_start: u64, vma_end: u64) -> (u64, u64) {
    let span = PTRS_PER_PTE as u64;
    let mut start = (addr & !(span - 1)).max(vma_start);
    let mut end = (addr | (span - 1)).min(vma_end - 1) + 1;
    let half = MIN_LRU_BATCH / 2;
    if end - start > MIN_LRU_BATCH {
        if addr - start < half {
            end = start + MIN_LRU_BATCH;
        } else if end - addr < half {
            start = end - MIN_LRU_BATCH;
        } else {
            start = addr - half;
            end = addr + half;
        }
    }
    (start, end)
}

/// Does look-around activate its promotion candidates one by one (`folio_activate`, counted
/// in `pgactivate`), rather than update their generations (`folio_update_gen`, uncounted)?
/// Only without walk state (direct reclaim before it has aged) and with few candidates.
#[inline]
pub fn look_around_activates(has_walk: bool, candidates: usize) -> bool {
    !has_walk && candidates < PAGEVEC_SIZE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lru::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE};
    use crate::machine::ZONE_NORMAL;

    /// max_seq 7, min_seq as given, (anon, file) pages per seq in ZONE_NORMAL.
    fn state(min_seq: [u64; 2], sizes: &[(u64, i64, i64)]) -> LruGen {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = min_seq;
        // The iteration for max_seq 6 completed (the state after a walk-less aging step).
        l.mm_seq = 6;
        for &(seq, a, f) in sizes {
            let g = lru_gen_from_seq(seq);
            l.nr_pages[g][ANON][ZONE_NORMAL] = a;
            l.nr_pages[g][FILE][ZONE_NORMAL] = f;
        }
        l
    }

    fn a1(seq7: (i64, i64)) -> LruGen {
        state(
            [5, 5],
            &[(5, 1000, 3000), (6, 500, 500), (7, seq7.0, seq7.1)],
        )
    }

    /// A1 (a)-(i).
    #[test]
    fn should_run_aging_a1() {
        // (a) total 5500, young 500, old 4000: no aging; 5500 >> 12 = 1, >> 4 = 343.
        let l = a1((200, 300));
        assert_eq!(l.should_run_aging(true, 12, true), (false, 1));
        assert_eq!(l.should_run_aging(true, 4, true), (false, 343));
        assert_eq!(
            l.should_run_aging(true, 4, false),
            (false, 5500),
            "offline memcg"
        );
        // (b) young 3000 of 8000; (c) 4500 of 9500; (d) 5000 of 10000, equal: no aging.
        assert!(!a1((2500, 500)).should_run_aging(true, 12, true).0);
        assert!(!a1((3000, 1500)).should_run_aging(true, 12, true).0);
        assert!(!a1((3000, 2000)).should_run_aging(true, 12, true).0);
        // (e) 5001 of 10001: the youngest holds more than half.
        assert!(a1((3000, 2001)).should_run_aging(true, 12, true).0);
        // (f) old 300 of 5000: the oldest holds less than a quarter; 1250 would not.
        let l = state([5, 5], &[(5, 100, 200), (6, 2000, 2000), (7, 300, 400)]);
        assert_eq!(l.should_run_aging(true, 0, true), (true, 5000));
        let l = state([5, 5], &[(5, 600, 650), (6, 1750, 1000), (7, 500, 500)]);
        assert_eq!(l.should_run_aging(true, 0, true), (false, 5000));
        // (g) two generations: aging whatever the sizes; (h) four: none.
        assert!(state([6, 6], &[]).should_run_aging(true, 12, true).0);
        assert!(
            !state([4, 4], &[(7, 1_000_000, 0)])
                .should_run_aging(true, 12, true)
                .0
        );
        // (i) no swap, min_seq {4, 6}: file is the reference (two generations), and only
        // file pages count.
        let sizes = [(4, 100, 0), (5, 1000, 0), (6, 500, 500), (7, 200, 300)];
        let l = state([4, 6], &sizes);
        assert_eq!(l.should_run_aging(false, 0, true), (true, 800));
        assert_eq!(l.should_run_aging(true, 0, true), (false, 2600));
    }

    /// A negative count (a walker's pending update in the kernel) reads as 0.
    #[test]
    fn should_run_aging_clamps_negative_counts() {
        let mut l = a1((200, 300));
        l.nr_pages[lru_gen_from_seq(6)][FILE][0] = -400;
        assert_eq!(l.should_run_aging(true, 0, true), (false, 5500));
    }

    /// A3 (a)-(e).
    #[test]
    fn try_to_inc_min_seq_a3() {
        // (a) anon's oldest holds pages: nothing moves.
        let mut l = state([5, 5], &[(5, 10, 0), (6, 1, 1), (7, 1, 1)]);
        assert!(!l.try_to_inc_min_seq(true));
        assert_eq!(l.min_seq, [5, 5]);
        // (b) file's oldest holds pages: nothing moves either.
        let mut l = state([5, 5], &[(5, 0, 10), (6, 1, 1), (7, 1, 1)]);
        assert!(!l.try_to_inc_min_seq(true));
        assert_eq!(l.min_seq, [5, 5]);
        // (c) both empty: both advance, both folded.
        let mut l = state([5, 5], &[(6, 1, 1), (7, 1, 1)]);
        l.evicted[0][ANON][0] = 10;
        l.evicted[0][FILE][1] = 30;
        assert!(l.try_to_inc_min_seq(true));
        assert_eq!(l.min_seq, [6, 6]);
        assert_eq!((l.avg_total[ANON][0], l.avg_total[FILE][1]), (5, 15));
        assert_eq!((l.evicted[0][ANON][0], l.evicted[0][FILE][1]), (0, 0));
        // Never below two generations: a second call changes nothing.
        assert!(!l.try_to_inc_min_seq(true));
        // (d) no swap: only file is examined.
        let mut l = state([5, 5], &[(5, 10, 0), (6, 1, 1), (7, 1, 1)]);
        l.evicted[0][ANON][0] = 10;
        assert!(l.try_to_inc_min_seq(false));
        assert_eq!(l.min_seq, [5, 6]);
        assert_eq!(l.evicted[0][ANON][0], 10, "anon not folded");
        // (e) file ahead: anon's empty oldest catch up.
        let mut l = state([4, 6], &[(6, 1, 1), (7, 1, 1)]);
        assert!(l.try_to_inc_min_seq(true));
        assert_eq!(l.min_seq, [6, 6]);
        assert!(l.seq_is_valid());
        // (f) the lists decide, not the counters: anon's oldest counts nothing but still
        // links a folio a walk promoted (its field already says a younger generation), so
        // neither type's oldest is retired (anon may not pass file's, file holds with anon).
        let mut l = state([5, 5], &[(6, 1, 1), (7, 1, 1)]);
        let mut occupied = [[false; ANON_AND_FILE]; NR_GENS];
        occupied[lru_gen_from_seq(5)][ANON] = true;
        for s in [6, 7] {
            occupied[lru_gen_from_seq(s)] = [true, true];
        }
        assert!(!l.try_to_inc_min_seq_lists(true, &occupied));
        assert_eq!(l.min_seq, [5, 5]);
        occupied[lru_gen_from_seq(5)][ANON] = false;
        assert!(l.try_to_inc_min_seq_lists(true, &occupied));
        assert_eq!(l.min_seq, [6, 6]);
    }

    fn a4() -> (LruGen, LruGauge) {
        let sizes = [(4, 10, 20), (5, 30, 40), (6, 50, 60), (7, 70, 80)];
        let mut l = state([4, 4], &sizes);
        l.evicted[0][FILE][0] = 100;
        l.timestamps = [11, 22, 33, 44];
        let gauge = l.recount_gauge();
        let z = ZONE_NORMAL;
        assert_eq!(
            (gauge[z][LRU_INACTIVE_ANON], gauge[z][LRU_ACTIVE_ANON]),
            (40, 120)
        );
        (l, gauge)
    }

    /// A4: aging with four generations, with and without swap.
    #[test]
    fn inc_max_seq_a4() {
        let z = ZONE_NORMAL;
        let (mut l, mut gauge) = a4();
        assert!(l.try_to_inc_max_seq_nowalk(7, true, 1000, &mut gauge));
        assert_eq!((l.max_seq, l.min_seq, l.mm_seq), (8, [5, 5], 7));
        assert_eq!(l.timestamps, [1000, 22, 33, 44]);
        // seq 4's folios went to seq 5 (gen 1).
        assert_eq!((l.nr_pages[0][ANON][z], l.nr_pages[1][ANON][z]), (0, 40));
        assert_eq!((l.nr_pages[0][FILE][z], l.nr_pages[1][FILE][z]), (0, 60));
        // gen 2 (seq 6) turned inactive.
        assert_eq!(
            (gauge[z][LRU_INACTIVE_ANON], gauge[z][LRU_ACTIVE_ANON]),
            (90, 70)
        );
        assert_eq!(
            (gauge[z][LRU_INACTIVE_FILE], gauge[z][LRU_ACTIVE_FILE]),
            (120, 80)
        );
        assert_eq!(gauge, l.recount_gauge());
        // The file statistics were folded when its oldest retired (E5's rule).
        assert_eq!((l.avg_total[FILE][0], l.evicted[0][FILE][0]), (50, 0));
        assert!(l.seq_is_valid());
        // The iteration for max_seq 7 is done: asking again for 7 does not age twice.
        assert!(l.try_to_inc_max_seq_nowalk(7, true, 2000, &mut gauge));
        assert_eq!(l.max_seq, 8);
        assert!(l.try_to_inc_max_seq_nowalk(8, true, 2000, &mut gauge));
        assert_eq!(l.max_seq, 9);

        // Without swap anon's oldest advances in place; its pages join the youngest.
        let (mut l, mut gauge) = a4();
        let moved = l.inc_max_seq(false, 1000, &mut gauge);
        assert_eq!(moved, 20, "only file's oldest moved");
        assert_eq!((l.max_seq, l.min_seq), (8, [5, 5]));
        assert_eq!(l.nr_pages[0][ANON][z], 10);
        assert_eq!(
            (gauge[z][LRU_INACTIVE_ANON], gauge[z][LRU_ACTIVE_ANON]),
            (80, 80)
        );
        assert_eq!(gauge, l.recount_gauge());
    }

    /// `inc_min_seq` moves at most 4096 folios per call; `inc_max_seq` goes on until done.
    #[test]
    fn inc_min_seq_budget() {
        let mut l = state([4, 4], &[(5, 1, 1), (6, 1, 1), (7, 1, 1)]);
        l.nr_pages[0][FILE][1] = 3000;
        l.nr_pages[0][FILE][2] = 2000;
        assert_eq!(l.inc_min_seq(FILE, true), (false, 4096));
        assert_eq!((l.min_seq[FILE], l.nr_pages[0][FILE][2]), (4, 904));
        assert_eq!(l.inc_min_seq(FILE, true), (true, 904));
        assert_eq!((l.min_seq[FILE], l.nr_pages[1][FILE][1]), (5, 3000));
        // Exactly 4096: the call that moves the last one still reports "not done".
        let mut l = state([4, 4], &[(5, 1, 1), (6, 1, 1), (7, 1, 1)]);
        l.nr_pages[0][ANON][2] = 4096;
        assert_eq!(l.inc_min_seq(ANON, true), (false, 4096));
        assert_eq!(l.inc_min_seq(ANON, true), (true, 0));
        // Through inc_max_seq.
        let mut l = state([4, 4], &[(5, 1, 1), (6, 1, 1), (7, 1, 1)]);
        l.nr_pages[0][FILE][2] = 5000;
        let mut gauge = l.recount_gauge();
        assert_eq!(l.inc_max_seq(true, 0, &mut gauge), 5000);
        assert_eq!((l.min_seq, l.nr_pages[1][FILE][2]), ([5, 5], 5001));
        // Anon without swap moves nothing and finishes at once.
        let mut l = state([4, 4], &[(4, 9000, 0), (5, 1, 1), (6, 1, 1), (7, 1, 1)]);
        assert_eq!(l.inc_min_seq(ANON, false), (true, 0));
    }

    /// A7's `age_lruvec` part: min_ttl 250 jiffies, oldest file generation born at 100 000.
    #[test]
    fn min_ttl_age_lruvec_a7() {
        let never = |_: &mut LruGen, _: u64| -> bool { panic!("aged") };
        let mut l = LruGen::new(0);
        l.timestamps[lru_gen_from_seq(l.min_seq[FILE])] = 100_000;
        // Empty and with four generations: no aging due.
        let young = l.age_lruvec(false, 60, 11, true, 250, 100_200, never);
        assert_eq!(young, AgeLruvec::TooYoung);
        assert!(!young.success());
        // At 100 250 the strict test passes; with nothing to scan at priority 11: too small.
        assert_eq!(
            l.age_lruvec(false, 60, 11, true, 250, 100_250, never),
            AgeLruvec::TooSmall
        );
        let at12 = l.age_lruvec(false, 60, DEF_PRIORITY, true, 250, 100_250, never);
        assert_eq!(
            at12,
            AgeLruvec::Done {
                need: false,
                aged: false
            }
        );
        assert!(at12.success());
        // Without min_ttl the age is not looked at.
        assert!(l
            .age_lruvec(false, 60, 11, true, 0, 100_200, never)
            .success());
        assert_eq!(
            l.age_lruvec(true, 60, 11, true, 0, 100_200, never),
            AgeLruvec::BelowMin
        );
        // Two generations with 10 000 file pages, old enough: aged.
        let mut l = LruGen::new(0);
        l.min_seq = [2, 2];
        l.nr_pages[lru_gen_from_seq(2)][FILE][ZONE_NORMAL] = 10_000;
        l.timestamps[lru_gen_from_seq(2)] = 100_000;
        let mut gauge = l.recount_gauge();
        let r = l.age_lruvec(false, 60, 11, true, 250, 100_250, |g, seq| {
            g.try_to_inc_max_seq_nowalk(seq, true, 100_250, &mut gauge)
        });
        assert_eq!(
            r,
            AgeLruvec::Done {
                need: true,
                aged: true
            }
        );
        assert_eq!((l.max_seq, l.timestamps[0]), (4, 100_250));
        assert_eq!(gauge, l.recount_gauge());
        // Jiffies wrap: a birth just before the wrap is still in the past after it.
        assert!(!time_before(49, 49));
        assert!(time_before(u64::MAX - 10, 5));
        assert!(!time_before(5, u64::MAX - 10));
        assert_eq!((jiffies(3_999_999), jiffies(4_000_000)), (0, 1));
    }

    #[test]
    fn age_node_skip_and_oom() {
        let mut need = false;
        assert!(lru_gen_age_node_skips(&mut need));
        assert!(need);
        assert!(!lru_gen_age_node_skips(&mut need));
        assert!(min_ttl_oom(false, 250, 0));
        assert!(!min_ttl_oom(true, 250, 0));
        assert!(!min_ttl_oom(false, 0, 0));
        assert!(!min_ttl_oom(false, 250, 2));
    }

    /// A5 and A6: density and the look-around window.
    #[test]
    fn density_and_window_a5_a6() {
        assert!(suitable_to_scan(512, 64));
        assert!(!suitable_to_scan(512, 63));
        assert!(suitable_to_scan(30, 4));
        assert!(!suitable_to_scan(30, 3));
        // A VMA over a whole page table (vpages 0..512; the table at 1024 behaves the same).
        for base in [0u64, 1024] {
            let w = |a: u64| {
                let (s, e) = look_around_window(base + a, base, base + 512);
                (s - base, e - base)
            };
            assert_eq!(w(10), (0, 64));
            assert_eq!(w(500), (448, 512));
            assert_eq!(w(200), (168, 232));
            assert_eq!(w(31), (0, 64));
            assert_eq!(w(32), (0, 64));
            assert_eq!(w(33), (1, 65));
        }
        assert_eq!(look_around_window(110, 100, 130), (100, 130));
        assert_eq!(look_around_window(150, 100, 400), (118, 182));
        // A VMA spanning two tables: the window stays in the address's table.
        assert_eq!(look_around_window(520, 0, 2048), (512, 576));
        assert_eq!(look_around_window(1000, 900, 1100), (960, 1024));
        // Look-around's activation rule (§8.2 test 8).
        assert!(look_around_activates(false, 14));
        assert!(!look_around_activates(false, 15));
        assert!(!look_around_activates(true, 1));
    }

    #[test]
    fn priority_matches_vmscan() {
        assert_eq!(DEF_PRIORITY, crate::machine::vmscan::DEF_PRIORITY);
    }
}
