//! `madvise(MADV_DONTNEED)` / `munmap` of part of an anonymous region (`mm/madvise.c`,
//! `zap_page_range`): a program freeing memory it allocated, so that it can allocate again
//! (the simoops-like load's per-unit allocations).

use super::frames::{pg, NIL};
use super::memory::{pte_is_swap, pte_pfn, pte_present, PTE_MAPPED, PTE_NONE};
use super::Machine;

impl Machine {
    /// Drop `[base, base + n)` of task `task`'s anonymous memory: resident pages are freed (a
    /// page under writeback is left to reclaim, ownerless), swap entries released. Returns the
    /// pages freed now.
    pub fn zap_anon_range(&mut self, task: usize, base: u32, n: u32) -> u64 {
        let mut freed = 0;
        for vp in base..base + n {
            let pte = self.pte[vp as usize];
            self.pte[vp as usize] = PTE_NONE;
            let tm = &mut self.tasks[task];
            if !pte_present(pte) {
                if pte_is_swap(pte) {
                    tm.swapents = tm.swapents.saturating_sub(1);
                    self.swap.free();
                }
                continue;
            }
            if pte & PTE_MAPPED != 0 {
                tm.rss_anon = tm.rss_anon.saturating_sub(1);
                self.stat.nr_anon_pages -= 1;
            } else {
                // An unmapped swap-cache page stands for a swap entry of the task.
                tm.swapents = tm.swapents.saturating_sub(1);
            }
            let pfn = pte_pfn(pte);
            let f = self.frames.page_flags(pfn);
            self.frames.set_owner(pfn, NIL);
            if f & pg::WRITEBACK != 0 {
                continue;
            }
            if f & pg::LRU != 0 {
                self.lru_del(pfn);
            }
            if f & pg::SWAPCACHE != 0 {
                self.swap.free();
                self.stat.nr_swapcached -= 1;
            }
            self.frames.set_flags(pfn, 0);
            self.free_frame(pfn);
            freed += 1;
        }
        freed
    }
}
