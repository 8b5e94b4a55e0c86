//! Memory compaction (core-mm §3.6), simplified as §10.2.6 allows.
//!
//! Exact: `compaction_suitable` (its watermark, `2 << order` gap, lowmem reserve and the
//! fragmentation index against `extfrag_threshold`), per-zone deferral (`defer_shift` up to 6),
//! and the counters. Abstracted: the migrate and free scanners. A compaction attempt looks at
//! up to `CANDIDATES` naturally aligned blocks of the requested order from the zone's migrate
//! cursor, picks the one with the fewest pages in use whose pages can all move (LRU pages not
//! under writeback), migrates those pages into free pages elsewhere in the zone, and frees the
//! block, which then merges in the buddy allocator. Scanned and isolated pages are counted as
//! the scanners would count them (whole candidate blocks as scanned).
//!
//! Proactive compaction (5.9+): the fragmentation score (`extfrag_for_order` at the huge-page
//! order, weighted over the node) and its band are exact; the pass itself builds one free
//! huge-page-sized block at a time, as an attempt above does, until the zone is in the band.

use super::frames::{pg, NIL};
use super::pte::{pte_present, PTE_PFN_MASK};
use super::watermark::MIGRATE_HIGHATOMIC;
use super::Machine;
use super::{MAX_NR_ZONES, MAX_ORDER, PAGE_ALLOC_COSTLY_ORDER};
use crate::machine::vmstat::VmEvent;

/// `sysctl_extfrag_threshold`.
pub const EXTFRAG_THRESHOLD: i64 = 500;
/// `COMPACT_MAX_DEFER_SHIFT`.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// Candidate blocks examined per attempt (the migrate scanner's reach).
pub const CANDIDATES: u32 = 64;
/// `COMPACTION_HPAGE_ORDER`: proactive compaction measures fragmentation against a PMD-sized
/// huge page.
pub const COMPACTION_HPAGE_ORDER: u32 = 9;
/// `HPAGE_FRAG_CHECK_INTERVAL_MSEC`: how often kcompactd, when nothing woke it, checks the
/// node's fragmentation score.
pub const HPAGE_FRAG_CHECK_INTERVAL_NS: u64 = 500_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactResult {
    /// Not enough free memory to compact into: reclaim first.
    Skipped,
    Deferred,
    /// Compaction may help.
    Continue,
    /// The allocation can already succeed.
    Success,
    /// An attempt ran and did not produce a block.
    Complete,
}

/// Per-zone compaction state (`compact_cached_migrate_pfn`, deferral).
#[derive(Debug, Clone, Copy, Default)]
pub struct CompactState {
    /// Frame where the next attempt's migrate scanner starts.
    pub cursor: u32,
    pub considered: u32,
    pub defer_shift: u32,
    /// Lowest order that failed (`compact_order_failed`).
    pub order_failed: u32,
}

/// What a compaction attempt scanned, for the counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompactStats {
    pub migrate_scanned: u64,
    pub free_scanned: u64,
    pub isolated: u64,
    pub migrated: u64,
}

impl Machine {
    /// `fragmentation_index` for `order` in zone `z` (-1000 if a suitable block exists).
    pub fn fragmentation_index(&self, z: usize, order: u32) -> i64 {
        let fa = &self.zones[z].free_area;
        let mut blocks = 0i64;
        let mut suitable = false;
        for o in 0..MAX_ORDER {
            let n: u64 = fa.nr_free[o].iter().sum();
            blocks += n as i64;
            if o >= order as usize && n > 0 {
                suitable = true;
            }
        }
        if suitable {
            return -1000;
        }
        if blocks == 0 {
            return 0;
        }
        let free = fa.free_pages as i64;
        1000 - (1000 + free * 1000 / (1i64 << order)) / blocks
    }

    /// `compaction_suitable(zone, order, alloc_flags, highest_zoneidx)`.
    pub fn compaction_suitable(
        &self,
        z: usize,
        order: u32,
        mark: u64,
        hz: usize,
        flags: u32,
    ) -> CompactResult {
        let zone = &self.zones[z];
        if self.zone_watermark_ok(z, order, mark, hz, flags) {
            return CompactResult::Success;
        }
        let wm = if order > PAGE_ALLOC_COSTLY_ORDER {
            zone.low_wmark_pages()
        } else {
            zone.min_wmark_pages()
        };
        let need = wm + (2u64 << order) + zone.lowmem_reserve[hz];
        if zone.free_pages() <= need {
            return CompactResult::Skipped;
        }
        if order > PAGE_ALLOC_COSTLY_ORDER {
            let fi = self.fragmentation_index(z, order);
            if (0..=EXTFRAG_THRESHOLD).contains(&fi) {
                // Failure would be due to lack of memory, not fragmentation.
                return CompactResult::Skipped;
            }
        }
        CompactResult::Continue
    }

    /// `compaction_zonelist_suitable`: whether compaction could run in some zone up to `hz`
    /// once reclaim freed what it can (the zone's reclaimable pages count as free).
    pub fn compaction_zonelist_suitable(&self, order: u32, hz: usize) -> bool {
        self.zonelist(hz).any(|z| {
            let zone = &self.zones[z];
            let wm = if order > PAGE_ALLOC_COSTLY_ORDER {
                zone.low_wmark_pages()
            } else {
                zone.min_wmark_pages()
            };
            let need = wm + (2u64 << order) + zone.lowmem_reserve[hz];
            let available = zone.free_pages() + self.zone_reclaimable_pages(z);
            available > need
                && (order <= PAGE_ALLOC_COSTLY_ORDER
                    || !(0..=EXTFRAG_THRESHOLD).contains(&self.fragmentation_index(z, order)))
        })
    }

    /// `compaction_deferred`: skip this attempt while the zone is backing off.
    pub fn compaction_deferred(&mut self, z: usize, order: u32) -> bool {
        let c = &mut self.compact[z];
        if order < c.order_failed {
            return false;
        }
        c.considered += 1;
        if c.considered >= 1 << c.defer_shift {
            c.considered = 1 << c.defer_shift;
            return false;
        }
        true
    }

    /// `defer_compaction` after a failed attempt.
    pub fn defer_compaction(&mut self, z: usize, order: u32) {
        let c = &mut self.compact[z];
        c.considered = 0;
        c.defer_shift = (c.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
        c.order_failed = c.order_failed.min(order);
    }

    /// `compaction_defer_reset` after a success.
    pub fn compaction_defer_reset(&mut self, z: usize, order: u32) {
        let c = &mut self.compact[z];
        c.considered = 0;
        c.defer_shift = 0;
        if order >= c.order_failed {
            c.order_failed = order + 1;
        }
    }

    /// Does zone `z` hold a free block of at least `order` on a non-highatomic list?
    pub fn has_free_block(&self, z: usize, order: u32) -> bool {
        let fa = &self.zones[z].free_area;
        (order as usize..MAX_ORDER).any(|o| (0..MIGRATE_HIGHATOMIC).any(|mt| fa.nr_free[o][mt] > 0))
    }

    /// `extfrag_for_order`: the percentage of zone `z`'s free pages that are not in free
    /// blocks of at least `order` (0 when nothing is free).
    pub fn extfrag_for_order(&self, z: usize, order: u32) -> u64 {
        let nr = self.zones[z].free_area.nr_free_total();
        let free: u64 = (0..MAX_ORDER).map(|o| nr[o] << o).sum();
        if free == 0 {
            return 0;
        }
        let suitable: u64 = (order as usize..MAX_ORDER).map(|o| nr[o] << o).sum();
        (free - suitable) * 100 / free
    }

    /// `fragmentation_score_node`: each populated zone's `extfrag_for_order` at the huge-page
    /// order, weighted by its share of the node's present pages (integer arithmetic as the
    /// kernel's, so a small zone can add nothing).
    pub fn fragmentation_score_node(&self) -> u64 {
        let node_present: u64 = self.zones.iter().map(|z| z.span.present).sum();
        self.zones
            .iter()
            .filter(|zone| zone.span.present > 0)
            .map(|zone| {
                zone.span.present * self.extfrag_for_order(zone.idx, COMPACTION_HPAGE_ORDER)
                    / (node_present + 1)
            })
            .sum()
    }

    /// `should_proactive_compact_node`: proactiveness on, kswapd not running, and the node's
    /// score above the high end of the band `proactiveness` sets.
    pub fn should_proactive_compact_node(&self) -> bool {
        let p = self.cfg.sysctl.compaction_proactiveness;
        p != 0
            && self.kswapd.waiting
            && self.fragmentation_score_node() > fragmentation_score_wmark(p, false)
    }

    /// `proactive_compact_node`: compact every populated zone until its own score is at most
    /// the low end of the band. The kernel migrates the zone's pages from its start towards
    /// free pages at its end until `__compact_finished` sees the score low enough; here each
    /// step builds one free huge-page-sized block as `compact_zone` builds one, and the zone
    /// stops at the first step that cannot.
    pub fn proactive_compact_node(&mut self, stats: &mut CompactStats) {
        let low = fragmentation_score_wmark(self.cfg.sysctl.compaction_proactiveness, true);
        for z in 0..self.zones.len() {
            if self.zones[z].span.present == 0 {
                continue;
            }
            let blocks = self.zones[z].span.spanned >> COMPACTION_HPAGE_ORDER;
            for _ in 0..blocks {
                if self.extfrag_for_order(z, COMPACTION_HPAGE_ORDER) <= low
                    || !self.compact_block(z, COMPACTION_HPAGE_ORDER, stats, false)
                {
                    break;
                }
            }
        }
    }

    /// Try to build one free block of `order` in zone `z` by migration. Returns whether a
    /// suitable block exists afterwards; the pages looked at and moved are in `stats`.
    /// `any_block`: targets may be free pages of any pageblock (`ignore_block_suitable`).
    pub fn compact_zone(
        &mut self,
        z: usize,
        order: u32,
        stats: &mut CompactStats,
        any_block: bool,
    ) -> bool {
        if self.has_free_block(z, order) {
            return true;
        }
        self.compact_block(z, order, stats, any_block)
    }

    /// Build one more free block of `order` in zone `z`, whether or not one exists already:
    /// the cheapest candidate from the migrate cursor has its pages moved out. Returns whether
    /// a block was freed.
    fn compact_block(
        &mut self,
        z: usize,
        order: u32,
        stats: &mut CompactStats,
        any_block: bool,
    ) -> bool {
        let (start, end) = (self.zones[z].free_area.start, self.zones[z].free_area.end);
        let size = 1u32 << order;
        if end - start < size {
            return false;
        }
        // Migrate scanner: find the cheapest candidate among the next CANDIDATES blocks.
        let first = start.max(self.compact[z].cursor) & !(size - 1);
        let mut best: Option<(u32, u32)> = None; // (block start, pages in use)
        let mut blk = if first + size <= end { first } else { start };
        for _ in 0..CANDIDATES {
            if blk + size > end {
                blk = start;
            }
            stats.migrate_scanned += size as u64;
            // A block already free as a whole (or inside a larger free block) is what
            // compaction makes, not a source.
            let free = self.zones[z]
                .free_area
                .free_block_of(&self.frames, blk)
                .is_some_and(|(_, o)| o >= order as usize);
            if free {
                blk += size;
                continue;
            }
            if let Some(used) = self.block_movable_pages(blk, size) {
                if best.is_none_or(|(_, u)| used < u) {
                    best = Some((blk, used));
                }
            }
            blk += size;
        }
        self.compact[z].cursor = blk;
        let Some((blk, used)) = best else {
            return false;
        };
        // The free scanner needs `used` target pages outside the block.
        let enough = self.zones[z].free_area.has_migration_targets(
            &self.frames,
            &self.pageblock_mt,
            (blk, size),
            used as u64,
            any_block,
        );
        if !enough {
            return false;
        }
        // Take the block's free pieces off the free lists so targets come from elsewhere. Its
        // free pages on per-CPU lists join the block too (the kernel drains the compacting
        // CPU's lists as the migrate scanner moves on; the model drains what is in the block).
        let mut p = blk;
        while p < blk + size {
            if let Some(o) = self.frames.buddy_order(p) {
                self.zones[z].free_area.take_block(&mut self.frames, p);
                p += 1 << o;
            } else {
                if self.frames.pcp_mt(p).is_some() {
                    self.pcp_take(z, p);
                }
                p += 1;
            }
        }
        for old in blk..blk + size {
            if !self.frames.test(old, pg::LRU) {
                continue;
            }
            let new = self.zones[z]
                .free_area
                .take_migration_target(&mut self.frames, &self.pageblock_mt, any_block)
                .expect("migration targets were counted before migrating");
            stats.free_scanned += 1;
            stats.isolated += 2;
            // The copy writes the target frame: a guest's host must back it.
            self.guest_alloc(new, 0);
            self.migrate_page(old, new);
            stats.migrated += 1;
        }
        for p in blk..blk + size {
            self.frames.set_flags(p, 0);
        }
        self.zones[z]
            .free_area
            .free(&mut self.frames, &self.pageblock_mt, blk, order as usize);
        self.guest_after_free();
        // This block's moves only: `stats` may already hold earlier blocks' (another zone's,
        // or the previous steps of a proactive pass).
        self.vm.add(VmEvent::PgmigrateSuccess, used as u64);
        true
    }

    /// Pages in use in [blk, blk+size) if every one can be migrated, else None. Free pages,
    /// in the buddy or on a per-CPU list, are not in use.
    fn block_movable_pages(&self, blk: u32, size: u32) -> Option<u32> {
        let mut used = 0;
        for p in blk..blk + size {
            let f = self.frames.flags(p);
            if f & pg::LRU != 0 {
                if f & pg::WRITEBACK != 0 {
                    return None;
                }
                used += 1;
            } else if f & (pg::ALLOCATED | pg::RESERVED) != 0 {
                return None;
            }
        }
        Some(used)
    }

    /// Move an LRU page's contents and identity from frame `old` to frame `new`
    /// (`migrate_pages` for one isolated page): flags, reverse map, page table, LRU.
    fn migrate_page(&mut self, old: u32, new: u32) {
        self.lru_del(old);
        let flags = self.frames.page_flags(old);
        let vp = self.frames.owner(old);
        if vp == NIL {
            self.frames.set_flags(new, flags);
        } else {
            self.frames.set_page(new, flags, vp);
        }
        self.frames.set_owner(old, NIL);
        self.mem_cgroup_migrate(old, new);
        if vp != NIL {
            let e = self.pte[vp as usize];
            debug_assert!(pte_present(e) && (e & PTE_PFN_MASK) == old);
            self.pte[vp as usize] = (e & !PTE_PFN_MASK) | new;
        }
        self.lru_add(new);
    }

    /// Compact zones <= hz until one can serve `order` at the given mark. Returns whether one
    /// can, and what was scanned. Used by kcompactd and direct compaction.
    pub fn compact_zones(&mut self, order: u32, hz: usize, stats: &mut CompactStats) -> bool {
        for z in 0..=hz.min(MAX_NR_ZONES - 1) {
            if !self.zones[z].is_managed() {
                continue;
            }
            let mark = self.zones[z].min_wmark_pages();
            match self.compaction_suitable(z, order, mark, hz, 0) {
                CompactResult::Success => return true,
                CompactResult::Continue => {
                    if self.compact_zone(z, order, stats, false) {
                        self.compaction_defer_reset(z, order);
                        return true;
                    }
                    self.defer_compaction(z, order);
                }
                _ => {}
            }
        }
        false
    }
}

/// `fragmentation_score_wmark`: the band proactive compaction keeps the score in. Its low
/// end is 100 - proactiveness but never under 5; the high end is 10 above, at most 100.
pub fn fragmentation_score_wmark(proactiveness: u64, low: bool) -> u64 {
    let wmark_low = 100u64.saturating_sub(proactiveness).max(5);
    if low {
        wmark_low
    } else {
        (wmark_low + 10).min(100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::watermark::MIGRATE_MOVABLE;
    use crate::machine::{PAGEBLOCK_ORDER, ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE};
    use crate::scenario::{Scenario, MIB};

    fn node() -> Machine {
        let mut scn = Scenario::default();
        scn.host.ram_bytes = 256 * MIB;
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    #[test]
    fn fragmentation_index_formula() {
        let mut n = node();
        let z = ZONE_DMA32;
        // A fresh zone has big free blocks: a suitable block exists.
        assert_eq!(n.fragmentation_index(z, 3), -1000);
        // 10 order-0 blocks and 5 order-1 blocks (20 pages): for order 3,
        // 1000 - (1000 + 20*1000/8) / 15 = 1000 - 3500/15 = 767.
        let fa = &mut n.zones[z].free_area;
        fa.nr_free = [[0; 4]; MAX_ORDER];
        fa.nr_free[0][MIGRATE_MOVABLE] = 10;
        fa.nr_free[1][MIGRATE_MOVABLE] = 5;
        fa.free_pages = 20;
        assert_eq!(n.fragmentation_index(z, 3), 767);
        // No free blocks at all: 0.
        n.zones[z].free_area.nr_free = [[0; 4]; MAX_ORDER];
        assert_eq!(n.fragmentation_index(z, 3), 0);
    }

    #[test]
    fn suitable_needs_the_gap_above_the_watermark() {
        let mut n = node();
        let z = ZONE_DMA32;
        let zone = &n.zones[z];
        let need = zone.min_wmark_pages() + (2 << 3) + zone.lowmem_reserve[ZONE_MOVABLE];
        // Only order-0 pages, exactly `need` of them: SKIPPED; one more: CONTINUE.
        let fa = &mut n.zones[z].free_area;
        fa.nr_free = [[0; 4]; MAX_ORDER];
        fa.nr_free[0][MIGRATE_MOVABLE] = need;
        fa.free_pages = need;
        let mark = n.zones[z].min_wmark_pages();
        assert_eq!(
            n.compaction_suitable(z, 3, mark, ZONE_MOVABLE, 0),
            CompactResult::Skipped
        );
        n.zones[z].free_area.free_pages = need + 1;
        n.zones[z].free_area.nr_free[0][MIGRATE_MOVABLE] = need + 1;
        assert_eq!(
            n.compaction_suitable(z, 3, mark, ZONE_MOVABLE, 0),
            CompactResult::Continue
        );
    }

    #[test]
    fn the_proactive_band_follows_proactiveness() {
        // The default 20 keeps the score between 80 and 90; 100 asks for the most (5..15, the
        // floor of 5); 0 would put the band at 100, and kcompactd then never compacts.
        assert_eq!(fragmentation_score_wmark(20, true), 80);
        assert_eq!(fragmentation_score_wmark(20, false), 90);
        assert_eq!(fragmentation_score_wmark(100, true), 5);
        assert_eq!(fragmentation_score_wmark(100, false), 15);
        assert_eq!(fragmentation_score_wmark(97, true), 5);
        assert_eq!(fragmentation_score_wmark(0, false), 100);
    }

    #[test]
    fn extfrag_counts_free_pages_outside_huge_page_blocks() {
        let mut n = node();
        let z = ZONE_DMA32;
        let fa = &mut n.zones[z].free_area;
        fa.nr_free = [[0; 4]; MAX_ORDER];
        // 100 single pages, 3 order-8 blocks and one order-9 block: 1380 free, 512 of them in
        // a block of the huge-page order, so (1380 - 512) * 100 / 1380 = 62 (rounded down).
        fa.nr_free[0][MIGRATE_MOVABLE] = 100;
        fa.nr_free[8][MIGRATE_MOVABLE] = 3;
        fa.nr_free[9][MIGRATE_MOVABLE] = 1;
        assert_eq!(n.extfrag_for_order(z, COMPACTION_HPAGE_ORDER), 62);
        // Every block counts at its own size: an order-10 block is 1024 suitable pages.
        n.zones[z].free_area.nr_free[10][MIGRATE_MOVABLE] = 1;
        assert_eq!(
            n.extfrag_for_order(z, COMPACTION_HPAGE_ORDER),
            868 * 100 / 2404
        );
        n.zones[z].free_area.nr_free = [[0; 4]; MAX_ORDER];
        assert_eq!(n.extfrag_for_order(z, COMPACTION_HPAGE_ORDER), 0);
    }

    /// A 256 MiB node whose DMA32 pages are all file pages on the LRU except every fourth,
    /// which is free: its free memory is all single pages.
    fn shattered_node() -> Machine {
        use crate::machine::watermark::alloc_flags::ALLOC_NO_WATERMARKS;
        let mut n = node();
        let z = ZONE_DMA32;
        let mut taken = Vec::new();
        while let Some(p) = n.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, z, MIGRATE_MOVABLE) {
            if n.zone_of(p) != z {
                break;
            }
            taken.push(p);
        }
        for &p in &taken {
            n.frames.set_flags(p, 0);
            n.lru_add(p);
        }
        for &p in taken.iter().filter(|&&p| p % 4 == 0) {
            n.lru_del(p);
            n.frames.set_flags(p, 0);
            n.free_frame(p);
        }
        n
    }

    #[test]
    fn the_node_score_weights_each_zone_by_its_present_pages() {
        let n = shattered_node();
        let (dma, dma32) = (&n.zones[ZONE_DMA], &n.zones[ZONE_DMA32]);
        assert_eq!(n.extfrag_for_order(ZONE_DMA32, COMPACTION_HPAGE_ORDER), 100);
        let dma_frag = n.extfrag_for_order(ZONE_DMA, COMPACTION_HPAGE_ORDER);
        let node_present = dma.span.present + dma32.span.present;
        // Each zone's share is rounded down on its own, as the kernel sums them.
        let want = dma.span.present * dma_frag / (node_present + 1)
            + dma32.span.present * 100 / (node_present + 1);
        assert_eq!(n.fragmentation_score_node(), want);
        assert!(
            want > 90,
            "a shattered DMA32 puts the node above the band: {want}"
        );
    }

    #[test]
    fn proactive_compaction_stops_at_the_low_end_of_the_band() {
        let mut n = shattered_node();
        assert!(n.should_proactive_compact_node());
        let z = ZONE_DMA32;
        let free_before = n.zones[z].free_pages();
        let mut st = CompactStats::default();
        n.proactive_compact_node(&mut st);
        // Migration moves pages; it frees none.
        assert_eq!(n.zones[z].free_pages(), free_before);
        let after = n.extfrag_for_order(z, COMPACTION_HPAGE_ORDER);
        assert!(after <= 80, "DMA32 left at {after}");
        // It stopped at the first block that brought the zone into the band: one block fewer
        // would have left it above.
        let blocks = st.migrated / 384;
        assert_eq!(st.migrated, blocks * 384, "each block had 384 pages in use");
        let suitable = (blocks - 1) * 512;
        assert!((free_before - suitable) * 100 / free_before > 80);
        assert_eq!(n.vm.get(VmEvent::PgmigrateSuccess), st.migrated);
        assert!(!n.should_proactive_compact_node());
        // With kswapd running, or proactiveness 0, there is no proactive compaction.
        let mut n = shattered_node();
        n.kswapd.waiting = false;
        assert!(!n.should_proactive_compact_node());
        n.kswapd.waiting = true;
        n.cfg.sysctl.compaction_proactiveness = 0;
        assert!(!n.should_proactive_compact_node());
    }

    #[test]
    fn migration_targets_are_free_pages_of_movable_pageblocks_below_a_pageblock() {
        use crate::machine::watermark::MIGRATE_RECLAIMABLE;
        const PB: u32 = 1 << PAGEBLOCK_ORDER;
        let z = ZONE_DMA32;
        // Free blocks of a pageblock (order 9) or more, counted in pageblocks.
        let whole = |n: &Machine| -> u64 {
            let nr = n.zones[z].free_area.nr_free_total();
            (9..MAX_ORDER).map(|o| nr[o] << (o - 9)).sum()
        };
        // Every DMA32 pageblock has 128 of its 512 pages free. Two stay movable; the others
        // become reclaimable with their free pages left on the movable lists (as a steal of a
        // piece leaves them): 256 target pages, fewer than the 384 any block must move out.
        let mut n = shattered_node();
        let first = n.zones[z].free_area.start.div_ceil(PB);
        for pb in first + 2..n.zones[z].free_area.end / PB {
            n.pageblock_mt[pb as usize] = MIGRATE_RECLAIMABLE as u8;
        }
        let (types, free) = (n.pageblock_mt.clone(), n.zones[z].free_pages());
        let mut st = CompactStats::default();
        assert!(!n.compact_block(z, COMPACTION_HPAGE_ORDER, &mut st, false));
        assert_eq!((st.migrated, n.zones[z].free_pages()), (0, free));
        assert_eq!(n.pageblock_mt, types, "no pageblock changes type");
        // At the last priority (`ignore_block_suitable`) any pageblock's free pages will do,
        // and still no pageblock changes type.
        assert!(n.compact_block(z, COMPACTION_HPAGE_ORDER, &mut st, true));
        assert_eq!((st.migrated, n.zones[z].free_pages()), (384, free));
        assert_eq!(n.pageblock_mt, types);

        // All movable, plus one whole free pageblock: compaction builds a second one from the
        // scattered free pages and leaves the whole one alone.
        let mut n = shattered_node();
        for p in (first + 4) * PB..(first + 5) * PB {
            if n.frames.test(p, pg::LRU) {
                n.lru_del(p);
                n.frames.set_flags(p, 0);
                n.free_frame(p);
            }
        }
        assert_eq!(whole(&n), 1);
        let mut st = CompactStats::default();
        assert!(n.compact_block(z, COMPACTION_HPAGE_ORDER, &mut st, false));
        assert_eq!((st.migrated, whole(&n)), (384, 2));
    }

    #[test]
    fn deferral_backs_off_and_resets() {
        let mut n = node();
        n.defer_compaction(1, 3);
        n.defer_compaction(1, 3);
        // defer_shift 2: the next 3 attempts at order >= 3 are skipped, the 4th runs.
        assert!(n.compaction_deferred(1, 3));
        assert!(n.compaction_deferred(1, 3));
        assert!(n.compaction_deferred(1, 3));
        assert!(!n.compaction_deferred(1, 3));
        // Lower orders are never deferred.
        assert!(!n.compaction_deferred(1, 2));
        n.compaction_defer_reset(1, 3);
        assert!(!n.compaction_deferred(1, 3));
    }
}
