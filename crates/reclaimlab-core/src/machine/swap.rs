//! LRU list insertion and page activation (`mm/swap.c`).

use super::frames::pg;
use super::lru::{self};
use super::vmstat::VmEvent;
use super::*;

impl Machine {
    // ---------------------------------------------------------------- LRU helpers

    /// Put a new page on the LRU list its flags select (`folio_add_lru`).
    #[inline(always)]
    pub fn lru_add(&mut self, pfn: u32) {
        self.frames.set(pfn, pg::LRU);
        if self.lru_gen.is_some() {
            self.lru_gen_add_folio(pfn, false);
            return;
        }
        let f = self.frames.link_flags(pfn);
        let z = self.zone_of(pfn);
        if self.memcg.is_some() {
            return self.memcg_lru_add(pfn, lru::lru_of(f), z);
        }
        self.lruvec
            .add_head(&mut self.frames, pfn, lru::lru_of(f), z);
    }

    /// `lru_add` with cgroups: onto the page's memcg's lruvec (kept out of line: the path
    /// without cgroups is the hot one).
    #[cold]
    #[inline(never)]
    fn memcg_lru_add(&mut self, pfn: u32, l: usize, z: usize) {
        let mc = self.memcg.as_mut().expect("cgroups");
        let lv = mc.lruvec_of(mc.frame[pfn as usize], &mut self.lruvec);
        lv.add_head(&mut self.frames, pfn, l, z);
    }

    #[cold]
    #[inline(never)]
    fn memcg_lru_del(&mut self, pfn: u32, l: usize, z: usize) {
        let mc = self.memcg.as_mut().expect("cgroups");
        let lv = mc.lruvec_of(mc.frame[pfn as usize], &mut self.lruvec);
        lv.del(&mut self.frames, pfn, l, z);
    }

    #[inline(always)]
    pub fn lru_del(&mut self, pfn: u32) {
        let f = self.frames.link_flags(pfn);
        debug_assert!(f & pg::LRU != 0);
        if self.lru_gen.is_some() {
            self.lru_gen_del_folio(pfn, false);
            self.frames.clear(pfn, pg::LRU);
            return;
        }
        let z = self.zone_of(pfn);
        if self.memcg.is_some() {
            self.memcg_lru_del(pfn, lru::lru_of(f), z);
        } else {
            self.lruvec.del(&mut self.frames, pfn, lru::lru_of(f), z);
        }
        self.frames.clear(pfn, pg::LRU);
    }

    /// `folio_mark_accessed` for an unmapped page-cache page (core-mm §5.1).
    #[inline]
    pub fn mark_accessed(&mut self, pfn: u32) {
        if self.lru_gen.is_some() {
            // folio_inc_refs: counted, never moved.
            self.lru_gen_mark_accessed(pfn);
            return;
        }
        let f = self.frames.link_flags(pfn);
        if f & pg::REFERENCED == 0 {
            self.frames.set(pfn, pg::REFERENCED);
        } else if f & pg::ACTIVE == 0 {
            if f & pg::LRU != 0 {
                self.lru_del(pfn);
                self.frames.set(pfn, pg::ACTIVE);
                self.lru_add(pfn);
                self.vm.add(VmEvent::Pgactivate, 1);
            } else {
                self.frames.set(pfn, pg::ACTIVE);
            }
            self.frames.clear(pfn, pg::REFERENCED);
            // workingset_activation: activations advance the workingset clock.
            self.lruvec.nonresident_age += 1;
        }
    }
}
