//! `madvise(MADV_DONTNEED)` / `munmap` of part of an anonymous region (`mm/madvise.c`,
//! `zap_page_range`): a program freeing memory it allocated, so that it can allocate again
//! (the simoops-like load's per-unit allocations).

use super::memory::Zapped;
use super::Machine;

impl Machine {
    /// Drop `[base, base + n)` of task `task`'s anonymous memory: resident pages are freed (a
    /// page under writeback is left to reclaim, ownerless), swap entries released. Returns the
    /// pages freed now.
    pub fn zap_anon_range(&mut self, task: usize, base: u32, n: u32) -> u64 {
        let mut freed = 0;
        for vp in base..base + n {
            let z = self.zap_anon_pte(vp);
            let tm = &mut self.tasks[task];
            match z {
                Zapped::None => {}
                // An unmapped swap-cache page stands for a swap entry of the task.
                Zapped::Swap | Zapped::Page { mapped: false, .. } => {
                    tm.swapents = tm.swapents.saturating_sub(1)
                }
                Zapped::Page { mapped: true, .. } => tm.rss_anon = tm.rss_anon.saturating_sub(1),
            }
            if let Zapped::Page { freed: true, .. } = z {
                freed += 1;
            }
        }
        freed
    }
}
