//! Swap readahead (`mm/swap_state.c`, core-mm §5.12): on a swap-in fault the kernel reads a
//! window of neighbouring pages into the swap cache along with the faulting one, so a process
//! that walks its memory in order takes one major fault per window instead of one per page.
//!
//! 6.1 uses the VMA-based variant by default (`/sys/kernel/mm/swap/vma_ra_enabled`): the
//! window is placed in the faulting region's virtual address range, around the fault, and its
//! size adapts to how many earlier readahead pages were used ("hits"). Each region keeps the
//! kernel's `swap_readahead_info`: the last fault or hit, the last window, and the hits since.
//! Pages read ahead enter the swap cache unmapped with PG_readahead set (the kernel's alias
//! of PG_reclaim) and go on the inactive anonymous list; a later fault that finds one is a
//! minor fault and counts `swap_ra_hit`.
//!
//! While a rotational swap device is in use (`[swap] rotational`), 6.1 uses the offset-based
//! variant instead (`swap_cluster_readahead`): the window is the aligned block of
//! `2^page_cluster`-at-most slots around the faulting page's slot, whatever pages those slots
//! hold, sized by the same rule from one global hit counter and the last faulting offset.

use super::frames::{pg, NIL};
use super::pte::*;
use super::tracepoint::Tracepoint;
use super::vmstat::VmEvent;
use super::Machine;

/// Readahead windows are at most 2^5 pages whatever `page_cluster` says.
pub const SWAP_RA_ORDER_CEILING: u64 = 5;
/// The hit counter saturates (it has PAGE_SHIFT / 2 bits in `swap_readahead_info`).
pub const SWAP_RA_HITS_MAX: u32 = (1 << 6) - 1;

/// `vma->swap_readahead_info`, with page indices relative to the region's start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwapRaInfo {
    /// Page of the last swap-in fault or swap-cache hit.
    pub prev: u32,
    /// The last window, in pages.
    pub win: u32,
    /// Readahead pages used since the last window was chosen.
    pub hits: u32,
}

/// `__swapin_nr_pages`: the next window from the hits of the last one. No hits: 2 pages if
/// the fault is next to the previous one, else 1; otherwise hits + 2 rounded up to a power
/// of two (at least 4); never above `max_pages`, and never below half the previous window.
pub fn swapin_nr_pages(prev: u32, offset: u32, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if offset != prev.wrapping_add(1) && offset != prev.wrapping_sub(1) {
            pages = 1;
        }
    } else {
        pages = pages.next_power_of_two().max(4);
    }
    pages = pages.min(max_pages);
    pages.max(prev_win / 2)
}

/// `swap_ra_info`: choose the window for a fault at page `fault` of a region of `pages`
/// pages, update the region's readahead state, and return the window `[start, end)`
/// (relative page indices), or `None` when the window is one page.
pub fn swap_ra_window(
    ra: &mut SwapRaInfo,
    fault: u32,
    pages: u32,
    page_cluster: u64,
) -> Option<(u32, u32)> {
    let max_win = 1u32 << page_cluster.min(SWAP_RA_ORDER_CEILING);
    if max_win == 1 {
        return None;
    }
    let win = swapin_nr_pages(ra.prev, fault, ra.hits, max_win, ra.win);
    let prev = ra.prev;
    *ra = SwapRaInfo {
        prev: fault,
        win,
        hits: 0,
    };
    if win == 1 {
        return None;
    }
    // Forward after a fault on the page before, backward after one on the page after,
    // centred otherwise.
    let (lo, hi) = if fault == prev.wrapping_add(1) {
        (fault as i64, fault as i64 + win as i64)
    } else if prev == fault.wrapping_add(1) {
        (fault as i64 - win as i64 + 1, fault as i64 + 1)
    } else {
        let left = ((win - 1) / 2) as i64;
        (fault as i64 - left, fault as i64 + win as i64 - left)
    };
    // Readahead does not cross a page-table page (a PMD maps 2 MiB = 512 pages).
    let pmd = (fault / PTRS_PER_PTE * PTRS_PER_PTE) as i64;
    let start = lo.max(0).max(pmd) as u32;
    let end = hi.min(pages as i64).min(pmd + PTRS_PER_PTE as i64) as u32;
    Some((start, end))
}

/// The offset-based readahead's state: globals of mm/swap_state.c (`swapin_readahead_hits`,
/// `prev_offset`, `last_readahead_pages`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterRa {
    pub prev_offset: u32,
    pub hits: u32,
    pub last_pages: u32,
}

/// `swapin_nr_pages` of the offset-based variant: the window for a fault on slot `offset`.
/// The hits are consumed; the previous offset moves only when there were none.
pub fn cluster_nr_pages(ra: &mut ClusterRa, offset: u32, page_cluster: u64) -> u32 {
    let max_pages = 1u32 << page_cluster.min(31);
    if max_pages <= 1 {
        return 1;
    }
    let hits = std::mem::take(&mut ra.hits);
    let pages = swapin_nr_pages(ra.prev_offset, offset, hits, max_pages, ra.last_pages);
    if hits == 0 {
        ra.prev_offset = offset;
    }
    ra.last_pages = pages;
    pages
}

/// The slots `[start, end]` a window of `pages` (a power of two) around `offset` covers on a
/// device of `nslots` slots: aligned to the window, never the header slot 0.
pub fn cluster_window(offset: u32, pages: u32, nslots: u32) -> (u32, u32) {
    let mask = pages - 1;
    ((offset & !mask).max(1), (offset | mask).min(nslots - 1))
}

/// The `swapin_cluster` event of a miss on `slot`: the state its window is chosen from.
fn swapin_cluster(slot: u32, ra: ClusterRa) -> Tracepoint {
    Tracepoint::SwapinCluster {
        slot,
        hits: ra.hits,
        prev: ra.prev_offset,
        last: ra.last_pages,
    }
}

/// The `swapin_read` event of a page read from `slot`.
fn swapin_read(slot: u32, sync: bool) -> Tracepoint {
    Tracepoint::SwapinRead { slot, sync }
}

impl Machine {
    /// `swap_cluster_readahead` around a swap-in fault on `vp` (rotational swap): read the
    /// window's other in-use slots whose pages are not in memory into the swap cache. Returns
    /// how many were read. Frames as for the VMA-based variant.
    pub(super) fn swap_cluster_readahead(&mut self, vp: u32, ts: u64) -> u64 {
        let Some(map) = &self.swap.slots else {
            return 0;
        };
        let Some(offset) = map.slot(vp) else {
            return 0;
        };
        let nslots = map.owner.len() as u32;
        let ra = self.swap_cluster_ra;
        self.trace(|| (ts, swapin_cluster(offset, ra)));
        let pages = cluster_nr_pages(
            &mut self.swap_cluster_ra,
            offset,
            self.cfg.sysctl.page_cluster,
        );
        if pages <= 1 {
            return 0;
        }
        let (start, end) = cluster_window(offset, pages, nslots);
        let mut read = 0;
        for s in start..=end {
            let owner = self
                .swap
                .slots
                .as_ref()
                .map_or(NIL, |m| m.owner[s as usize]);
            if s == offset || owner == NIL || !pte_is_swap(self.pte[owner as usize]) {
                continue;
            }
            if !self.swap_readahead_page(owner) {
                break;
            }
            self.trace(|| (ts, swapin_read(s, false)));
            read += 1;
        }
        self.vm.add(VmEvent::SwapRa, read);
        read
    }

    /// The slot of `vp` when a swap-in event of it is to be traced: tracing on and the page on
    /// a slot-placed (rotational) swap device; None otherwise.
    #[inline]
    fn traced_swapin_slot(&self, vp: u32) -> Option<u32> {
        if !self.tracepoints.enabled {
            return None;
        }
        self.swap.slots.as_ref().and_then(|m| m.slot(vp))
    }

    /// The `swapin_lookup` event of a swap-in fault on `vp` at `ts`, hit or miss (rotational
    /// swap only: the guest's probes are on the slot-based path); it reads the hit counter
    /// before a readahead hit raises it.
    #[inline]
    pub(super) fn trace_swapin_lookup(&mut self, vp: u32, ts: u64) {
        let Some(slot) = self.traced_swapin_slot(vp) else {
            return;
        };
        let region = self.region_of(vp).map_or(0, |r| r as u32);
        let lookup = Tracepoint::SwapinLookup {
            slot,
            vpage: vp,
            region,
            hits: self.swap_cluster_ra.hits,
        };
        self.trace(|| (ts, lookup));
    }

    /// The `swapin_read` event of a miss's own page, read once its window is chosen:
    /// synchronously when the window is that page alone.
    #[inline]
    pub(super) fn trace_swapin_read(&mut self, vp: u32, ts: u64) {
        let Some(slot) = self.traced_swapin_slot(vp) else {
            return;
        };
        let sync = self.swap_cluster_ra.last_pages <= 1;
        self.trace(|| (ts, swapin_read(slot, sync)));
    }

    /// Read swapped-out `v` into the swap cache as a readahead page (unmapped, PG_readahead).
    /// False when no frame is free.
    fn swap_readahead_page(&mut self, v: u32) -> bool {
        let Some(pfn) = self.try_alloc_nowait(super::gfp::GFP_HIGHUSER_MOVABLE) else {
            return false;
        };
        // A readahead page its memcg has no room for is not read.
        if self.memcg.is_some() && !self.mem_cgroup_charge_nowait(pfn, self.swap_entry_memcg(v)) {
            self.free_pages(pfn, 0);
            return false;
        }
        self.frames
            .set_page(pfn, pg::SWAPBACKED | pg::SWAPCACHE | pg::RECLAIM, v);
        let shadow = pte_shadow(self.pte[v as usize]);
        if shadow != SHADOW_NONE {
            self.workingset_refault(pfn, shadow);
        }
        // In the swap cache, not mapped: the next access is a minor fault.
        self.pte[v as usize] = pfn;
        self.stat.nr_swapcached += 1;
        // Read ahead inside the fault: the youngest generation under the multi-gen LRU.
        self.lru_add_in_fault(pfn);
        true
    }

    /// `swap_vma_readahead` around a swap-in fault on `vp` of region `r`: read the window's
    /// other swapped-out pages into the swap cache. Returns how many were read. Their frames
    /// come from the free lists without reclaim (a documented simplification: the kernel
    /// allocates them with the fault's own gfp mask); readahead stops at the first page it
    /// cannot get.
    pub(super) fn swap_vma_readahead(&mut self, vp: u32, r: usize) -> u64 {
        let (base, pages) = (self.regions[r].base, self.regions[r].pages);
        let fault = vp - base;
        let page_cluster = self.cfg.sysctl.page_cluster;
        let Some((start, end)) =
            swap_ra_window(&mut self.regions[r].swap_ra, fault, pages, page_cluster)
        else {
            return 0;
        };
        let mut read = 0;
        for i in start..end {
            let v = base + i;
            if i == fault || !pte_is_swap(self.pte[v as usize]) {
                continue;
            }
            if !self.swap_readahead_page(v) {
                break;
            }
            read += 1;
        }
        self.vm.add(VmEvent::SwapRa, read);
        read
    }

    /// A fault found page `vp` in the swap cache (`swap_cache_get_folio`): the region's
    /// readahead state moves to it, and a page brought in by readahead counts a hit (the
    /// offset-based variant's hits are global, and its regions keep no state).
    pub(super) fn swap_cache_hit(&mut self, vp: u32, pfn: u32) {
        let readahead = self.frames.test_and_clear(pfn, pg::RECLAIM);
        if readahead {
            self.vm.add(VmEvent::SwapRaHit, 1);
        }
        if self.swap.slots.is_some() {
            if readahead {
                self.swap_cluster_ra.hits += 1;
            }
            return;
        }
        if let Some(r) = self.region_of(vp) {
            let region = &mut self.regions[r];
            let ra = &mut region.swap_ra;
            ra.prev = vp - region.base;
            if readahead {
                ra.hits = (ra.hits + 1).min(SWAP_RA_HITS_MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_window_is_aligned_and_skips_the_header() {
        // 8 pages around slot 13: the aligned block 8..=15.
        assert_eq!(cluster_window(13, 8, 1000), (8, 15));
        // Around slot 3: 0..=7, but slot 0 is the swap header.
        assert_eq!(cluster_window(3, 8, 1000), (1, 7));
        // Near the end of a 20-slot device: 16..=19.
        assert_eq!(cluster_window(17, 8, 20), (16, 19));
    }

    #[test]
    fn cluster_readahead_uses_global_hits_and_moves_prev_only_without_them() {
        let mut ra = ClusterRa::default();
        // First fault at slot 40: not next to prev (0), no hits: one page; prev moves to 40.
        assert_eq!(cluster_nr_pages(&mut ra, 40, 3), 1);
        assert_eq!((ra.prev_offset, ra.last_pages), (40, 1));
        // Slot 41, next to it: two pages.
        assert_eq!(cluster_nr_pages(&mut ra, 41, 3), 2);
        // Three readahead hits since: 3 + 2 = 5, rounded up to 8 (page_cluster 3 caps it at 8);
        // the hits are consumed and prev stays at 41.
        ra.hits = 3;
        assert_eq!(cluster_nr_pages(&mut ra, 90, 3), 8);
        assert_eq!((ra.prev_offset, ra.hits, ra.last_pages), (41, 0, 8));
        // No hits, far away: 1 page, but never below half the last window.
        assert_eq!(cluster_nr_pages(&mut ra, 500, 3), 4);
        // page_cluster 0 turns readahead off.
        assert_eq!(cluster_nr_pages(&mut ra, 501, 0), 1);
    }

    #[test]
    fn window_grows_with_hits_to_the_cap() {
        // No hits: 2 pages next to the previous fault, 1 elsewhere.
        assert_eq!(swapin_nr_pages(10, 11, 0, 8, 0), 2);
        assert_eq!(swapin_nr_pages(10, 9, 0, 8, 0), 2);
        assert_eq!(swapin_nr_pages(10, 30, 0, 8, 0), 1);
        // hits + 2, rounded up to a power of two, at least 4.
        assert_eq!(swapin_nr_pages(10, 30, 1, 8, 0), 4);
        assert_eq!(swapin_nr_pages(10, 30, 3, 8, 0), 8);
        assert_eq!(swapin_nr_pages(10, 30, 7, 8, 0), 8);
        assert_eq!(swapin_nr_pages(10, 30, 7, 32, 0), 16);
        // Never below half the last window.
        assert_eq!(swapin_nr_pages(10, 30, 0, 8, 8), 4);
    }

    #[test]
    fn sequential_faults_read_forward_and_reach_eight_pages() {
        let mut ra = SwapRaInfo::default();
        // First fault at page 0 of a fresh region: prev is 0, not adjacent: one page.
        assert_eq!(swap_ra_window(&mut ra, 0, 4096, 3), None);
        // The next page: adjacent, 2 pages forward.
        assert_eq!(swap_ra_window(&mut ra, 1, 4096, 3), Some((1, 3)));
        // Page 2 was a readahead hit (it moves prev to 2), so page 3 faults with one hit.
        ra.prev = 2;
        ra.hits = 1;
        assert_eq!(swap_ra_window(&mut ra, 3, 4096, 3), Some((3, 7)));
        ra.prev = 6;
        ra.hits = 3;
        assert_eq!(swap_ra_window(&mut ra, 7, 4096, 3), Some((7, 15)));
        assert_eq!(
            ra,
            SwapRaInfo {
                prev: 7,
                win: 8,
                hits: 0
            }
        );
    }

    #[test]
    fn window_is_centred_and_clamped_to_the_region_and_page_table() {
        let mut ra = SwapRaInfo {
            prev: 100,
            win: 0,
            hits: 3,
        };
        // Centred: left = (8 - 1) / 2 = 3.
        assert_eq!(swap_ra_window(&mut ra, 200, 4096, 3), Some((197, 205)));
        // Clamped at a page-table boundary (512) and at the region's end.
        let mut ra = SwapRaInfo {
            prev: 0,
            win: 0,
            hits: 3,
        };
        assert_eq!(swap_ra_window(&mut ra, 513, 4096, 3), Some((512, 518)));
        let mut ra = SwapRaInfo {
            prev: 0,
            win: 0,
            hits: 3,
        };
        assert_eq!(swap_ra_window(&mut ra, 1000, 1002, 3), Some((997, 1002)));
        // page_cluster 0 turns readahead off.
        let mut ra = SwapRaInfo {
            prev: 5,
            win: 0,
            hits: 3,
        };
        assert_eq!(swap_ra_window(&mut ra, 6, 4096, 0), None);
    }
}
