//! User memory: the virtual pages of the simulated processes and their faults (`mm/memory.c`:
//! `do_anonymous_page`, `do_swap_page`; `mm/mmap.c`: `exit_mmap`).
//!
//! Every anonymous region and every file gets a range of global virtual page numbers (vpages).
//! `pte[vpage]` says where the page is: `PTE_NONE` (never touched, or a file page not in the
//! page cache), a frame number (resident: mapped, or in the swap cache), or `PTE_SWAP` (its only
//! copy is on the swap device). As in a real page table, a resident anonymous entry also carries
//! the present/mapped bit and the hardware accessed (young) and dirty bits: a user access touches
//! only this array. `shadow[vpage]` holds the workingset shadow entry left when the page was
//! evicted (core-mm §5.11).

use super::frames::{pg, NIL};
use super::vmstat::VmEvent;
use super::*;

pub const PTE_NONE: u32 = u32::MAX;
/// The page's only copy is on the swap device (also set in `PTE_NONE`: neither is resident).
pub const PTE_SWAP: u32 = 0x8000_0000;
/// Resident and mapped by its owner; a resident entry without it is an unmapped swap-cache page.
pub const PTE_MAPPED: u32 = 0x4000_0000;
/// Hardware accessed bit, harvested by `folio_referenced`.
pub const PTE_YOUNG: u32 = 0x2000_0000;
/// Hardware dirty bit, moved to the page at unmap time.
pub const PTE_DIRTY: u32 = 0x1000_0000;
/// Frame number bits of a resident entry (frames are limited to 2^28, 1 TiB of RAM).
pub const PTE_PFN_MASK: u32 = 0x0fff_ffff;

#[inline]
pub fn pte_present(pte: u32) -> bool {
    pte & PTE_SWAP == 0
}
#[inline]
pub fn pte_pfn(pte: u32) -> u32 {
    pte & PTE_PFN_MASK
}
pub const SHADOW_NONE: u32 = u32::MAX;
pub(super) const SHADOW_WORKINGSET: u32 = 0x8000_0000;
pub(super) const SHADOW_AGE_MASK: u32 = 0x7fff_ffff;

/// A contiguous range of vpages: one process's anonymous memory or one file.
#[derive(Debug, Clone)]
pub struct Region {
    pub base: u32,
    pub pages: u32,
    pub anon: bool,
    /// Owning task (process) index; files are owned by the task that uses them.
    pub task: usize,
}

/// The memory-management view of one process (`mm_struct` counters used by the OOM killer).
#[derive(Debug, Clone, Default)]
pub struct TaskMm {
    pub name: String,
    pub oom_score_adj: i32,
    /// MM_ANONPAGES: mapped anonymous pages.
    pub rss_anon: u64,
    /// MM_SWAPENTS: anonymous pages whose PTE holds a swap entry.
    pub swapents: u64,
    pub alive: bool,
    pub oom_killed: bool,
    /// Threads using the address space (`mm_users`).
    pub users: u32,
    /// Its anonymous regions (the `anon` table's, and a trace's anonymous objects).
    pub anon_regions: Vec<usize>,
}

/// What a task is doing in its current chunk: simulated time used so far and slow-path state.
#[derive(Debug, Clone, Default)]
pub struct TaskCtx {
    pub task: usize,
    /// Simulated time consumed in this chunk (added to the actor's clock when it yields).
    pub cost_ns: u64,
    /// Time spent in direct reclaim during this chunk.
    pub stall_ns: u64,
    /// `no_progress_loops` of the allocation that is being retried.
    pub no_progress_loops: u32,
}

/// Result of one page access by a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Done; its cost is in the context.
    Done,
    /// Done, but the task waits for I/O until this time (major fault, read miss).
    Block(u64),
    /// Not done: the allocation must be retried after sleeping this long.
    Retry(u64),
    /// The task was chosen as the OOM victim while allocating.
    Killed,
}

/// Cost-model figures and policy knobs the node needs at run time.

impl Machine {
    pub fn add_task(&mut self, name: &str, oom_score_adj: i32) -> usize {
        self.tasks.push(TaskMm {
            name: name.to_string(),
            oom_score_adj,
            alive: true,
            ..Default::default()
        });
        self.tasks.len() - 1
    }

    /// Reserve `pages` vpages for an anonymous region or a file; returns the region index.
    pub fn add_region(&mut self, task: usize, pages: u64, anon: bool) -> Result<usize, String> {
        let base = self.pte.len() as u64;
        if base + pages >= PTE_SWAP as u64 {
            return Err("the workloads' address spaces exceed 2^31 pages".into());
        }
        self.pte.resize((base + pages) as usize, PTE_NONE);
        self.shadow.resize((base + pages) as usize, SHADOW_NONE);
        self.regions.push(Region {
            base: base as u32,
            pages: pages as u32,
            anon,
            task,
        });
        let r = self.regions.len() - 1;
        if anon {
            self.tasks[task].anon_regions.push(r);
        }
        Ok(r)
    }

    /// The task whose anonymous region holds `vpage` (None for file pages).
    #[inline]
    pub fn anon_owner(&self, vpage: u32) -> Option<usize> {
        // Few regions: a linear scan from the end is cheaper than a search structure.
        self.regions
            .iter()
            .find(|r| vpage >= r.base && vpage < r.base + r.pages)
            .filter(|r| r.anon)
            .map(|r| r.task)
    }
}

impl Machine {
    // ---------------------------------------------------------------- anonymous memory

    /// One user access to anonymous vpage `vp` (the workload hot path).
    #[inline]
    pub fn anon_access(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let e = &mut self.pte[vp as usize];
        let pte = *e;
        if pte & (PTE_SWAP | PTE_MAPPED) == PTE_MAPPED {
            // Plain access: the MMU sets the accessed (and dirty) bit in the PTE.
            *e = pte | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
            t.cost_ns += self.cfg.cost.anon_touch_ns;
            return Access::Done;
        }
        if pte_present(pte) {
            return self.swapcache_fault(vp, pte_pfn(pte), write, t);
        }
        if pte == PTE_NONE {
            self.anon_fault(vp, write, t)
        } else {
            self.swapin_fault(vp, write, t)
        }
    }

    /// First touch: allocate, zero and map a page (`do_anonymous_page`).
    fn anon_fault(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        self.vm.add(VmEvent::Pgfault, 1);
        t.cost_ns += self.cfg.cost.anon_fault_ns;
        self.frames.flags[pfn as usize] = pg::SWAPBACKED;
        self.frames.owner[pfn as usize] = vp;
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
        self.stat.nr_anon_pages += 1;
        self.tasks[t.task].rss_anon += 1;
        self.lru_add(pfn);
        Access::Done
    }

    /// The page is in the swap cache but unmapped: a minor fault maps it again.
    fn swapcache_fault(&mut self, vp: u32, pfn: u32, write: bool, t: &mut TaskCtx) -> Access {
        self.vm.add(VmEvent::Pgfault, 1);
        t.cost_ns += self.cfg.cost.swapcache_fault_ns;
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG;
        self.stat.nr_anon_pages += 1;
        let task = &mut self.tasks[t.task];
        task.rss_anon += 1;
        task.swapents = task.swapents.saturating_sub(1);
        self.after_swapin_map(pfn, write);
        Access::Done
    }

    /// `do_swap_page` after mapping: a write fault by the only user (or a swap more than half
    /// full) drops the swap copy; otherwise the page stays in the swap cache, clean.
    #[inline]
    fn after_swapin_map(&mut self, pfn: u32, write: bool) {
        if write {
            self.frames.set(pfn, pg::DIRTY);
        }
        let f = self.frames.flags[pfn as usize];
        if f & pg::SWAPCACHE != 0 && f & pg::WRITEBACK == 0 && (write || self.swap.is_half_full()) {
            self.frames.clear(pfn, pg::SWAPCACHE);
            self.frames.set(pfn, pg::DIRTY);
            self.swap.free();
            self.stat.nr_swapcached -= 1;
        }
    }

    /// The page is only on the swap device: read it back (major fault).
    fn swapin_fault(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        self.vm.add(VmEvent::Pgfault, 1);
        self.vm.add(VmEvent::Pgmajfault, 1);
        self.vm.add(VmEvent::Pswpin, 1);
        self.vm.add(VmEvent::Pgpgin, 4);
        t.cost_ns += self.cfg.cost.major_fault_ns;
        let done = self.swapdev.submit_read(self.now + t.cost_ns, 1);
        self.frames.flags[pfn as usize] = pg::SWAPBACKED | pg::SWAPCACHE;
        self.frames.owner[pfn as usize] = vp;
        let shadow = std::mem::replace(&mut self.shadow[vp as usize], SHADOW_NONE);
        if shadow != SHADOW_NONE {
            self.workingset_refault(pfn, shadow);
        }
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG;
        self.stat.nr_swapcached += 1;
        self.stat.nr_anon_pages += 1;
        let task = &mut self.tasks[t.task];
        task.rss_anon += 1;
        task.swapents = task.swapents.saturating_sub(1);
        self.lru_add(pfn);
        self.after_swapin_map(pfn, write);
        Access::Block(done)
    }

    /// A thread of `task` starts using its address space (`mmget`).
    pub fn mmget(&mut self, task: usize) {
        self.tasks[task].users += 1;
    }

    /// A thread of `task` exits (`mmput`). The last one out tears the address space down,
    /// unless the OOM killer claimed the task: then the oom_reaper does.
    pub fn mmput(&mut self, task: usize) {
        let t = &mut self.tasks[task];
        t.users = t.users.saturating_sub(1);
        if t.users == 0 && !t.oom_killed && t.alive {
            self.exit_mmap(task);
        }
    }

    /// `exit_mmap`: the process's anonymous memory and swap go back.
    pub fn exit_mmap(&mut self, task: usize) {
        for i in 0..self.tasks[task].anon_regions.len() {
            let r = self.tasks[task].anon_regions[i];
            self.free_anon_region(r);
        }
        self.tasks[task].alive = false;
    }

    /// Tear down an anonymous region (`exit_mmap`, or the oom_reaper): free its pages and swap.
    /// Pages under writeback cannot be freed yet: they lose their owner and reclaim frees them
    /// once the I/O is done.
    pub fn free_anon_region(&mut self, r: usize) {
        let Region { base, pages, .. } = self.regions[r];
        let task = self.regions[r].task;
        for vp in base..base + pages {
            let pte = self.pte[vp as usize];
            self.shadow[vp as usize] = SHADOW_NONE;
            if pte == PTE_NONE {
                continue;
            }
            self.pte[vp as usize] = PTE_NONE;
            if pte == PTE_SWAP {
                self.swap.free();
                continue;
            }
            let pfn = pte_pfn(pte);
            let f = self.frames.flags[pfn as usize];
            if pte & PTE_MAPPED != 0 {
                self.stat.nr_anon_pages -= 1;
            }
            self.frames.owner[pfn as usize] = NIL;
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
            self.frames.flags[pfn as usize] = 0;
            self.free_frame(pfn);
        }
        let tm = &mut self.tasks[task];
        tm.rss_anon = 0;
        tm.swapents = 0;
    }
}
