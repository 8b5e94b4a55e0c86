//! Swap space (`mm/swapfile.c`). On a solid-state device slots are only counted: where a page
//! lands does not matter to reclaim, and a swapped page's page-table entry holds its entry.
//! On a rotational device (`[swap] rotational`) 6.1 reads ahead by slot position
//! (`swap_cluster_readahead`), so the model also keeps where each page went, allocated as
//! `scan_swap_map_slots` does for a rotational device: sequentially from a cursor, starting a
//! fresh run of `SWAPFILE_CLUSTER` free slots every `SWAPFILE_CLUSTER` allocations when one
//! exists.

use super::frames::{pg, NIL};
use super::Machine;

/// Slots handed out from one run before looking for a fresh free run.
pub const SWAPFILE_CLUSTER: u32 = 256;

#[derive(Debug, Clone, Default)]
pub struct SwapSpace {
    pub total: u64,
    pub used: u64,
    /// Slot positions, on a rotational device only.
    pub slots: Option<SlotMap>,
}

/// Where each swapped page lives on a rotational device: slot → vpage and vpage → slot.
#[derive(Debug, Clone, Default)]
pub struct SlotMap {
    /// The vpage held by each slot, NIL when free. Slot 0 is the swap header, never used.
    pub owner: Vec<u32>,
    /// The slot of each vpage that has one, NIL otherwise (grown as vpages appear).
    pub slot_of: Vec<u32>,
    /// `cluster_next`: where the next allocation starts looking.
    pub cursor: u32,
    /// `cluster_nr`: allocations left before looking for a fresh run.
    pub cluster_nr: u32,
    pub free: u64,
}

impl SlotMap {
    pub fn new(slots: u64) -> SlotMap {
        let n = slots.max(1) as usize;
        SlotMap {
            owner: vec![NIL; n],
            slot_of: Vec::new(),
            cursor: 1,
            cluster_nr: 0,
            free: n as u64 - 1,
        }
    }

    /// The slot holding `vp`'s page, if any.
    #[inline]
    pub fn slot(&self, vp: u32) -> Option<u32> {
        self.slot_of.get(vp as usize).copied().filter(|&s| s != NIL)
    }

    /// The first slot of a fully free run of SWAPFILE_CLUSTER at or after `from`.
    fn free_run(&self, from: u32) -> Option<u32> {
        let mut start = from;
        let mut s = from;
        while (s as usize) < self.owner.len() {
            if self.owner[s as usize] != NIL {
                start = s + 1;
            } else if s - start + 1 == SWAPFILE_CLUSTER {
                return Some(start);
            }
            s += 1;
        }
        None
    }

    /// `scan_swap_map_slots` for one slot, given to `vp`.
    fn alloc(&mut self, vp: u32) -> Option<u32> {
        if self.free == 0 {
            return None;
        }
        if self.cluster_nr == 0 {
            if self.free >= SWAPFILE_CLUSTER as u64 {
                if let Some(start) = self.free_run(self.cursor) {
                    self.cursor = start;
                }
            }
            self.cluster_nr = SWAPFILE_CLUSTER - 1;
        } else {
            self.cluster_nr -= 1;
        }
        let n = self.owner.len() as u32;
        let mut s = self.cursor.clamp(1, n.max(2) - 1);
        // The first free slot at or after the cursor, wrapping to the lowest.
        while self.owner[s as usize] != NIL {
            s += 1;
            if s >= n {
                s = 1;
            }
        }
        self.owner[s as usize] = vp;
        if self.slot_of.len() <= vp as usize {
            self.slot_of.resize(vp as usize + 1, NIL);
        }
        self.slot_of[vp as usize] = s;
        self.cursor = s + 1;
        self.free -= 1;
        Some(s)
    }

    fn release(&mut self, vp: u32) {
        if let Some(s) = self.slot(vp) {
            self.owner[s as usize] = NIL;
            self.slot_of[vp as usize] = NIL;
            self.free += 1;
        }
    }
}

impl SwapSpace {
    pub fn new(total: u64, rotational: bool) -> SwapSpace {
        SwapSpace {
            total,
            used: 0,
            // One more slot for the header, as the kernel's swap_map has.
            slots: (rotational && total > 0).then(|| SlotMap::new(total + 1)),
        }
    }

    #[inline]
    pub fn has_free(&self) -> bool {
        self.used < self.total
    }
    /// `vm_swap_full`: more than half of swap in use.
    #[inline]
    pub fn is_half_full(&self) -> bool {
        self.used * 2 > self.total
    }
    /// A slot for `vp`'s page.
    #[inline]
    pub fn alloc(&mut self, vp: u32) -> bool {
        if self.used < self.total {
            self.used += 1;
            // An ownerless page (its process gone) never gets a new slot; guard the map anyway.
            if let (Some(m), false) = (&mut self.slots, vp == NIL) {
                m.alloc(vp);
            }
            true
        } else {
            false
        }
    }
    /// Free `vp`'s slot (`vp` NIL: a page whose process exited while it was being written;
    /// its slot position was given back at the exit).
    #[inline]
    pub fn free(&mut self, vp: u32) {
        debug_assert!(self.used > 0);
        self.used -= 1;
        self.forget(vp);
    }
    /// Give `vp`'s slot position back without changing the count: its process exits while
    /// the page is still being written, and the count follows when reclaim frees the page.
    #[inline]
    pub fn forget(&mut self, vp: u32) {
        if vp != NIL {
            if let Some(m) = &mut self.slots {
                m.release(vp);
            }
        }
    }
}

impl Machine {
    /// `folio_free_swap`: the swap copy of a page in the swap cache is dropped (a write fault,
    /// or a swap half full): the page keeps its data in memory only, so it is dirty again.
    pub(crate) fn folio_free_swap(&mut self, pfn: u32) {
        self.frames.clear(pfn, pg::SWAPCACHE);
        self.frames.set(pfn, pg::DIRTY);
        let vp = self.frames.owner(pfn);
        self.swap.free(vp);
        self.mem_cgroup_uncharge_swap(vp);
        self.stat.nr_swapcached -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_slots_and_half_full() {
        let mut s = SwapSpace::new(4, false);
        assert!(s.alloc(0) && s.alloc(1));
        assert!(!s.is_half_full());
        assert!(s.alloc(2));
        assert!(s.is_half_full());
        assert!(s.alloc(3));
        assert!(!s.alloc(4));
        s.free(0);
        assert!(s.has_free());
        assert!(s.slots.is_none());
    }

    #[test]
    fn rotational_slots_are_handed_out_in_order_and_reused_from_the_cursor() {
        let mut s = SwapSpace::new(600, true);
        for vp in 100..110 {
            assert!(s.alloc(vp));
        }
        let m = s.slots.as_ref().unwrap();
        // Slot 0 is the header: the first page lands in slot 1, the rest follow.
        assert_eq!(
            (100..110).map(|v| m.slot(v).unwrap()).collect::<Vec<_>>(),
            (1..11).collect::<Vec<_>>()
        );
        assert_eq!(m.owner[5], 104);
        s.free(103);
        s.free(104);
        let m = s.slots.as_ref().unwrap();
        assert_eq!(m.slot(104), None);
        assert_eq!(m.owner[5], NIL);
        // The cursor is past slot 10: freed holes behind it wait for the cursor to wrap.
        assert!(s.alloc(200));
        assert_eq!(s.slots.as_ref().unwrap().slot(200), Some(11));
        assert_eq!(s.used, 9);
    }

    #[test]
    fn a_new_cluster_starts_on_a_fully_free_run() {
        let mut s = SwapSpace::new(2000, true);
        // 256 allocations fill slots 1..=256; free every other one of them.
        for vp in 0..256 {
            s.alloc(vp);
        }
        for vp in (0..256).step_by(2) {
            s.free(vp);
        }
        // The next allocation starts a new cluster: the first free run of 256 from the cursor
        // (slot 257) is 257..=512, so the holes below are skipped.
        s.alloc(1000);
        assert_eq!(s.slots.as_ref().unwrap().slot(1000), Some(257));
        // A full device wraps to the lowest free slot.
        let mut t = SwapSpace::new(3, true);
        assert!(t.alloc(0) && t.alloc(1) && t.alloc(2));
        t.free(0);
        assert!(t.alloc(9));
        assert_eq!(t.slots.as_ref().unwrap().slot(9), Some(1));
    }
}
