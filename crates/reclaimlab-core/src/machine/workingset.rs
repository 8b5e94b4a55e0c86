//! Refault detection (`mm/workingset.c`, core-mm §5.11): shadow entries and the decision to
//! activate a page that comes back soon after it was evicted.

use super::frames::pg;
use super::lru::{self, ANON, FILE};
use super::pte::*;
use super::*;

impl Machine {
    // ---------------------------------------------------------------- workingset

    /// `workingset_eviction`: the shadow entry for a page leaving memory.
    #[inline]
    pub fn workingset_eviction(&mut self, pfn: u32) -> u32 {
        if self.lru_gen.is_some() {
            return self.lru_gen_eviction(pfn);
        }
        let clock = self.root_lruvec();
        let age = clock.nonresident_age;
        clock.nonresident_age += 1;
        let ws = self.frames.test(pfn, pg::WORKINGSET);
        (age as u32 & SHADOW_AGE_MASK) | if ws { SHADOW_WORKINGSET } else { 0 }
    }

    /// `workingset_refault`: decide whether a page faulted back in belongs on the active list.
    /// Sets ACTIVE/WORKINGSET on the frame as the kernel does before it is added to the LRU.
    pub fn workingset_refault(&mut self, pfn: u32, shadow: u32) {
        if self.lru_gen.is_some() {
            self.lru_gen_refault(pfn, shadow);
            return;
        }
        let file = !self.frames.test(pfn, pg::SWAPBACKED);
        let t = if file { FILE } else { ANON };
        let eviction = shadow & SHADOW_AGE_MASK;
        let now = self.root_lruvec().nonresident_age as u32 & SHADOW_AGE_MASK;
        let distance = now.wrapping_sub(eviction) & SHADOW_AGE_MASK;
        self.stat.workingset_refault[t] += 1;
        let memcg = self.folio_memcg(pfn);
        if let Some(mc) = &mut self.memcg {
            mc.stat[memcg as usize].workingset_refault[t] += 1;
        }
        // The node's workingset (with cgroups, every memcg's lists: the refault distance is
        // the node's, see vmscan/memcg.rs).
        let size = |l: usize| self.node_lru_size(l);
        let mut ws = size(lru::LRU_ACTIVE_FILE);
        if !file {
            ws += size(lru::LRU_INACTIVE_FILE);
        }
        if self.swap.has_free() {
            ws += size(lru::LRU_ACTIVE_ANON);
            if file {
                ws += size(lru::LRU_INACTIVE_ANON);
            }
        }
        if distance as u64 > ws {
            return;
        }
        self.frames.set(pfn, pg::ACTIVE);
        self.root_lruvec().nonresident_age += 1;
        self.stat.workingset_activate[t] += 1;
        if let Some(mc) = &mut self.memcg {
            mc.stat[memcg as usize].workingset_activate[t] += 1;
        }
        if shadow & SHADOW_WORKINGSET != 0 {
            self.frames.set(pfn, pg::WORKINGSET);
            self.note_refault_cost(memcg, file);
            self.stat.workingset_restore[t] += 1;
            if let Some(mc) = &mut self.memcg {
                mc.stat[memcg as usize].workingset_restore[t] += 1;
            }
        }
    }
}
