//! The node's LRU lists (one lruvec per node, root memcg only; core-mm §5.1) and the per-zone
//! page counts that `get_scan_count` and `/proc/zoneinfo` need.

use super::frames::{pg, Frames, List};
use super::watermark::isqrt;
use super::MAX_NR_ZONES;

pub const LRU_INACTIVE_ANON: usize = 0;
pub const LRU_ACTIVE_ANON: usize = 1;
pub const LRU_INACTIVE_FILE: usize = 2;
pub const LRU_ACTIVE_FILE: usize = 3;
pub const LRU_UNEVICTABLE: usize = 4;
pub const NR_LRU_LISTS: usize = 5;
/// The four evictable lists in `get_scan_count`/`shrink_lruvec` order.
pub const EVICTABLE_LRUS: [usize; 4] = [
    LRU_INACTIVE_ANON,
    LRU_ACTIVE_ANON,
    LRU_INACTIVE_FILE,
    LRU_ACTIVE_FILE,
];

pub const ANON: usize = 0;
pub const FILE: usize = 1;

#[inline]
pub fn is_file_lru(lru: usize) -> bool {
    lru == LRU_INACTIVE_FILE || lru == LRU_ACTIVE_FILE
}
#[inline]
pub fn is_active_lru(lru: usize) -> bool {
    lru == LRU_ACTIVE_ANON || lru == LRU_ACTIVE_FILE
}
/// The list a page with these flags belongs on (`folio_lru_list`).
#[inline]
pub fn lru_of(flags: u16) -> usize {
    let file = flags & pg::SWAPBACKED == 0;
    let active = flags & pg::ACTIVE != 0;
    2 * file as usize + active as usize
}

/// `inactive_is_low` (core-mm §5.5) of a type whose lists hold these pages.
#[inline]
pub fn inactive_is_low(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> 18;
    let ratio = if gb > 0 { isqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

#[derive(Debug, Clone, Default)]
pub struct Lruvec {
    pub lists: [List; NR_LRU_LISTS],
    /// Pages per list per zone (`nr_zone_inactive_anon`, ...).
    pub zone_size: [[u64; NR_LRU_LISTS]; MAX_NR_ZONES],
    /// Reclaim cost per type (`lru_note_cost`, core-mm §5.10).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Workingset clock (`nonresident_age`), counted in pages.
    pub nonresident_age: u64,
    /// Snapshot of `workingset_activate_{anon,file}` at the end of the last reclaim run.
    pub refaults: [u64; 2],
}

impl Lruvec {
    /// Pages on `lru` over all zones (from the gauges: under the multi-generational LRU the
    /// lists are empty and the gauges count the generations, `machine::lru_gen`).
    #[inline]
    pub fn size(&self, lru: usize) -> u64 {
        self.zone_size.iter().map(|z| z[lru]).sum()
    }

    /// Pages on `lru` in zones <= `reclaim_idx` (`lruvec_lru_size`).
    #[inline]
    pub fn size_upto(&self, lru: usize, reclaim_idx: usize) -> u64 {
        (0..=reclaim_idx).map(|z| self.zone_size[z][lru]).sum()
    }

    #[inline]
    pub fn add_head(&mut self, fr: &mut Frames, pfn: u32, lru: usize, zone: usize) {
        self.lists[lru].push_head(fr, pfn);
        self.zone_size[zone][lru] += 1;
    }

    #[inline]
    pub fn add_tail(&mut self, fr: &mut Frames, pfn: u32, lru: usize, zone: usize) {
        self.lists[lru].push_tail(fr, pfn);
        self.zone_size[zone][lru] += 1;
    }

    #[inline]
    pub fn del(&mut self, fr: &mut Frames, pfn: u32, lru: usize, zone: usize) {
        self.lists[lru].remove(fr, pfn);
        self.zone_size[zone][lru] -= 1;
    }

    /// `inactive_is_low` (core-mm §5.5) on node totals.
    pub fn inactive_is_low(&self, file: bool) -> bool {
        let (ia, aa) = if file {
            (LRU_INACTIVE_FILE, LRU_ACTIVE_FILE)
        } else {
            (LRU_INACTIVE_ANON, LRU_ACTIVE_ANON)
        };
        inactive_is_low(self.size(ia), self.size(aa))
    }

    /// `lru_note_cost`: charge reclaim cost to a type; decay both when they outgrow the LRU.
    pub fn note_cost(&mut self, file: bool, n: u64) {
        let lrusize: u64 = EVICTABLE_LRUS.iter().map(|&l| self.size(l)).sum();
        self.note_cost_sized(file, n, lrusize);
    }

    /// The same against an LRU of `lrusize` pages (a memcg's subtree, whose lists are
    /// spread over its descendants' lruvecs).
    pub fn note_cost_sized(&mut self, file: bool, n: u64, lrusize: u64) {
        if file {
            self.file_cost += n;
        } else {
            self.anon_cost += n;
        }
        if self.anon_cost + self.file_cost > lrusize / 4 {
            self.anon_cost /= 2;
            self.file_cost /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::watermark::isqrt;

    #[test]
    fn inactive_ratio_matches_table() {
        // core-mm §5.5: 1 GiB -> 3, 4 -> 6, 10 -> 10, 16 -> 12, 100 -> 31, 1 TiB -> 101.
        for (gb, r) in [
            (1u64, 3u64),
            (4, 6),
            (10, 10),
            (16, 12),
            (100, 31),
            (1024, 101),
        ] {
            assert_eq!(isqrt(10 * gb), r);
        }
    }

    #[test]
    fn lru_of_flags() {
        assert_eq!(lru_of(pg::SWAPBACKED), LRU_INACTIVE_ANON);
        assert_eq!(lru_of(pg::SWAPBACKED | pg::ACTIVE), LRU_ACTIVE_ANON);
        assert_eq!(lru_of(0), LRU_INACTIVE_FILE);
        assert_eq!(lru_of(pg::ACTIVE), LRU_ACTIVE_FILE);
    }
}
