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
//! minor fault and counts `swap_ra_hit`. The offset-based variant (`swap_cluster_readahead`,
//! when vma_ra is off) needs swap slot positions, which the model does not track; it is not
//! modelled.

use super::frames::pg;
use super::memory::*;
use super::vmstat::VmEvent;
use super::Machine;

/// Readahead windows are at most 2^5 pages whatever `page_cluster` says.
pub const SWAP_RA_ORDER_CEILING: u64 = 5;
/// The hit counter saturates (it has PAGE_SHIFT / 2 bits in `swap_readahead_info`).
pub const SWAP_RA_HITS_MAX: u32 = (1 << 6) - 1;
/// Readahead does not cross a page-table page (a PMD maps 2 MiB = 512 pages).
const PTRS_PER_PTE: u32 = 512;

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
    let pmd = (fault / PTRS_PER_PTE * PTRS_PER_PTE) as i64;
    let start = lo.max(0).max(pmd) as u32;
    let end = hi.min(pages as i64).min(pmd + PTRS_PER_PTE as i64) as u32;
    Some((start, end))
}

impl Machine {
    /// `swap_vma_readahead` around a swap-in fault on `vp` of region `r`: read the window's
    /// other swapped-out pages into the swap cache. Returns how many were read. Their frames
    /// come from the free lists without reclaim (a documented simplification: the kernel
    /// allocates them with the fault's own gfp mask); readahead stops at the first page it
    /// cannot get.
    pub(super) fn swap_vma_readahead(&mut self, vp: u32, r: usize) -> u64 {
        let (base, pages) = (self.regions[r].base, self.regions[r].pages);
        let fault = vp - base;
        let page_cluster = self.cfg.page_cluster;
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
            let Some(pfn) = self.try_alloc_nowait(super::gfp::GFP_HIGHUSER_MOVABLE) else {
                break;
            };
            self.frames
                .set_page(pfn, pg::SWAPBACKED | pg::SWAPCACHE | pg::RECLAIM, v);
            let shadow = pte_shadow(self.pte[v as usize]);
            if shadow != SHADOW_NONE {
                self.workingset_refault(pfn, shadow);
            }
            // In the swap cache, not mapped: the next access is a minor fault.
            self.pte[v as usize] = pfn;
            self.stat.nr_swapcached += 1;
            self.lru_add(pfn);
            read += 1;
        }
        self.vm.add(VmEvent::SwapRa, read);
        read
    }

    /// A fault found page `vp` in the swap cache (`swap_cache_get_folio`): the region's
    /// readahead state moves to it, and a page brought in by readahead counts a hit.
    pub(super) fn swap_cache_hit(&mut self, vp: u32, pfn: u32) {
        let readahead = self.frames.test_and_clear(pfn, pg::RECLAIM);
        if readahead {
            self.vm.add(VmEvent::SwapRaHit, 1);
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
