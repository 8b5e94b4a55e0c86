//! Refault detection (`mm/workingset.c`, core-mm §5.11): shadow entries and the decision to
//! activate a page that comes back soon after it was evicted.

use super::frames::pg;
use super::lru::{self, ANON, FILE};
use super::pte::*;
use super::*;

/// The workingset a refault distance is compared with (`workingset_test_recent`): the
/// active file list, the inactive file list for an anonymous page, and with swap the anon
/// lists (the inactive one for a file page).
#[inline(always)]
fn workingset_size(size: impl Fn(usize) -> u64, file: bool, swap: bool) -> u64 {
    let mut ws = size(lru::LRU_ACTIVE_FILE);
    if !file {
        ws += size(lru::LRU_INACTIVE_FILE);
    }
    if swap {
        ws += size(lru::LRU_ACTIVE_ANON);
        if file {
            ws += size(lru::LRU_INACTIVE_ANON);
        }
    }
    ws
}

impl Machine {
    // ---------------------------------------------------------------- workingset

    /// `workingset_eviction`: the shadow entry for a page leaving memory.
    #[inline]
    pub fn workingset_eviction(&mut self, pfn: u32) -> u32 {
        if self.lru_gen.is_some() {
            return self.lru_gen_eviction(pfn);
        }
        let age = self.lruvec.nonresident_age;
        self.lruvec.nonresident_age += 1;
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
        let now = self.lruvec.nonresident_age as u32 & SHADOW_AGE_MASK;
        let distance = now.wrapping_sub(eviction) & SHADOW_AGE_MASK;
        self.stat.workingset_refault[t] += 1;
        // The node's workingset (with cgroups, every memcg's lists: the refault distance is
        // the node's, see vmscan/memcg.rs).
        let swap = self.swap.has_free();
        let ws = match &self.memcg {
            None => workingset_size(|l| self.lruvec.size(l), file, swap),
            Some(_) => {
                let size = self.memcg_refault_sizes(pfn, t);
                workingset_size(|l| size[l], file, swap)
            }
        };
        if distance as u64 > ws {
            return;
        }
        self.frames.set(pfn, pg::ACTIVE);
        self.lruvec.nonresident_age += 1;
        self.stat.workingset_activate[t] += 1;
        let restore = shadow & SHADOW_WORKINGSET != 0;
        if self.memcg.is_some() {
            self.memcg_refault_activate(pfn, t, restore);
        }
        if restore {
            self.frames.set(pfn, pg::WORKINGSET);
            if self.memcg.is_none() {
                self.lruvec.note_cost(file, 1);
            }
            self.stat.workingset_restore[t] += 1;
        }
    }

    /// The node's list sizes for a refault with cgroups, counting the refault in the page's
    /// memcg.
    #[cold]
    #[inline(never)]
    fn memcg_refault_sizes(&mut self, pfn: u32, t: usize) -> [u64; lru::NR_LRU_LISTS] {
        let memcg = self.folio_memcg(pfn);
        let mc = self.memcg.as_mut().expect("cgroups");
        mc.stat[memcg as usize].workingset_refault[t] += 1;
        mc.subtree_size(0, &self.lruvec)
    }

    /// A refault that activates, with cgroups: the page's memcg counts it, and a restore
    /// notes its cost on the memcg's lruvec and its ancestors'.
    #[cold]
    #[inline(never)]
    fn memcg_refault_activate(&mut self, pfn: u32, t: usize, restore: bool) {
        let memcg = self.folio_memcg(pfn);
        let mc = self.memcg.as_mut().expect("cgroups");
        mc.stat[memcg as usize].workingset_activate[t] += 1;
        if restore {
            mc.stat[memcg as usize].workingset_restore[t] += 1;
            self.note_refault_cost(memcg, t == lru::FILE);
        }
    }
}
