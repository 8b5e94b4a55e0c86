//! User memory: the virtual pages of the simulated processes and their faults (`mm/memory.c`:
//! `do_anonymous_page`, `do_swap_page`; `mm/mmap.c`: `exit_mmap`).
//!
//! Every anonymous region and every file gets a range of global virtual page numbers (vpages).
//! `pte[vpage]` (4 bytes per vpage, encoded as `pte.rs` says) says where the page is.

use super::frames::{pg, NIL, OWNER_LIMIT};
use super::pte::*;
use super::vmstat::VmEvent;
use super::*;

/// A contiguous range of vpages: one process's anonymous memory or one file.
#[derive(Debug, Clone)]
pub struct Region {
    pub base: u32,
    pub pages: u32,
    pub anon: bool,
    /// Owning task (process) index; files are owned by the task that uses them.
    pub task: usize,
    /// Swap readahead state of an anonymous region (`vma->swap_readahead_info`).
    pub swap_ra: super::swap_state::SwapRaInfo,
    /// Its page-table pages, one per 512 vpages from `base` (`NIL`: not allocated yet); empty
    /// unless the machine models page tables.
    pub pt: Vec<u32>,
}

/// What [`Machine::zap_anon_pte`] dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zapped {
    /// Nothing was there.
    None,
    /// A swap entry (its slot is freed).
    Swap,
    /// A page: mapped (else an unmapped swap-cache page standing for a swap entry), and
    /// freed now (else under writeback).
    Page { mapped: bool, freed: bool },
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
    /// The part of `cost_ns` spent asleep in the kernel (reclaim throttling, waiting for a
    /// request slot): time on the clock, not CPU time.
    pub sleep_ns: u64,
    /// `no_progress_loops` of the allocation that is being retried.
    pub no_progress_loops: u32,
    /// `compact_priority` and `compaction_retries` of the allocation that is being retried.
    pub compact_priority: super::page_alloc::direct_compact::CompactPriority,
    pub compaction_retries: u32,
    /// A direct reclaim that yielded at the end of its quantum, with the request it serves
    /// (gfp, order): the task's next attempt at that allocation resumes it.
    pub reclaim: Option<(super::gfp::Gfp, u32, Box<super::vmscan::ScanControl>)>,
    /// Entries into the allocator's slow path, counted so the read-ahead loop can tell that a
    /// page of its window had to go there.
    pub slowpath_entries: u32,
    /// A read miss whose read-ahead window was still being allocated when the task yielded
    /// (`filemap::file_access`): the next attempt at the same page goes on filling it.
    pub readahead: Option<PendingReadahead>,
    /// The task as pressure stall information counts it (`machine/psi.rs`): its group, its
    /// CPU and its states. Memory stalls the machine sees it enter (direct reclaim and
    /// compaction) are reported there at the task's clock.
    pub psi: super::psi::PsiTask,
    /// Its actor reports the task's runs and sleeps to PSI, so a stall may last past the
    /// call that began it: a wait for the read of a thrashing page (`psi_thrash`) does.
    pub psi_tracked: bool,
    /// The task waits for the read of a page that was in the working set when it was evicted
    /// (PG_workingset on the refault): a memory stall until it wakes.
    pub psi_thrash: bool,
    /// The task's last access blocked on I/O: its sleep is an I/O wait.
    pub psi_iowait: bool,
    /// Steps begun ([`begin_step`](Self::begin_step)), so that its actor can tell whether
    /// `cost_ns` is this step's.
    pub steps: u32,
    /// `current->memcg_nr_pages_over_high`: pages charged while the task's memcg (or an
    /// ancestor) was over `memory.high`, not yet paid for (`memcontrol/charge.rs`).
    pub memcg_nr_pages_over_high: u64,
}

/// The part of a read-ahead window (`readahead_control`) allocated so far: the page asked for,
/// its frame, and the frames of the pages after it. None of them is in the page cache yet.
#[derive(Debug, Clone, Default)]
pub struct PendingReadahead {
    pub vp: u32,
    pub first: u32,
    pub pages: Vec<u32>,
}

impl TaskCtx {
    /// The allocation being retried got its page: its slow-path state starts afresh.
    #[inline]
    pub fn end_of_request(&mut self) {
        self.no_progress_loops = 0;
        self.compact_priority = Default::default();
        self.compaction_retries = 0;
    }

    /// A new step of the task: its time, stall and sleep start from zero (the slow-path
    /// state carries over).
    #[inline]
    pub fn begin_step(&mut self) {
        self.steps = self.steps.wrapping_add(1);
        self.cost_ns = 0;
        self.stall_ns = 0;
        self.sleep_ns = 0;
    }

    /// The step's time on a CPU: its time less the part spent asleep.
    #[inline]
    pub fn cpu_ns(&self) -> u64 {
        self.cost_ns - self.sleep_ns
    }

    /// The task has a yielded direct reclaim for this request to resume.
    #[inline]
    pub fn reclaiming_for(&self, gfp: super::gfp::Gfp, order: u32) -> bool {
        self.reclaim
            .as_ref()
            .is_some_and(|r| (r.0, r.1) == (gfp, order))
    }
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
    /// Not done yet: the allocation's direct reclaim used up its quantum
    /// (`RECLAIM_QUANTUM_NS`), or a read-ahead window paced by `readahead_alloc` lets the
    /// others run (`filemap.rs`); the task retries the access on its next step, which resumes
    /// that reclaim, or that window, where it stopped.
    Yield,
}

impl Machine {
    /// Create a task (process) and return its index.
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
        // Vpages must leave the frames' owner sentinels free (2^31 - 256 of them).
        if base + pages > OWNER_LIMIT as u64 {
            return Err(format!(
                "the workloads' address spaces exceed {OWNER_LIMIT} pages (8 TiB)"
            ));
        }
        self.pte.resize((base + pages) as usize, PTE_NONE);
        self.regions.push(Region {
            base: base as u32,
            pages: pages as u32,
            anon,
            task,
            swap_ra: Default::default(),
            pt: Vec::new(),
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
        self.region_of(vpage)
            .map(|r| &self.regions[r])
            .filter(|r| r.anon)
            .map(|r| r.task)
    }

    /// The region holding `vpage`.
    #[inline]
    pub fn region_of(&self, vpage: u32) -> Option<usize> {
        // Few regions: a linear scan is cheaper than a search structure.
        self.regions
            .iter()
            .position(|r| vpage >= r.base && vpage < r.base + r.pages)
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
        if pte_is_none(pte) {
            self.anon_fault(vp, write, t)
        } else {
            self.swapin_fault(vp, write, t)
        }
    }

    /// First touch: allocate, zero and map a page (`do_anonymous_page`).
    fn anon_fault(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        if self.cfg.host.page_tables {
            if let Err(a) = self.pte_alloc(vp, t) {
                return a;
            }
        }
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        if self.memcg.is_some() {
            // Allocated first, charged second; a charge that fails gives the page back.
            let memcg = self.task_memcg(t.task);
            if let Err(e) = self.mem_cgroup_charge(pfn, memcg, t) {
                self.free_pages(pfn, 0);
                return e.access();
            }
            self.memcg_count_fault(memcg, false);
        }
        self.vm.add(VmEvent::Pgfault, 1);
        t.cost_ns += self.cfg.cost.anon_fault_ns;
        self.frames.set_page(pfn, pg::SWAPBACKED, vp);
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
        self.stat.nr_anon_pages += 1;
        self.tasks[t.task].rss_anon += 1;
        self.lru_add_in_fault(pfn);
        Access::Done
    }

    /// The page is in the swap cache but unmapped: a minor fault maps it again.
    fn swapcache_fault(&mut self, vp: u32, pfn: u32, write: bool, t: &mut TaskCtx) -> Access {
        self.vm.add(VmEvent::Pgfault, 1);
        if self.memcg.is_some() {
            self.memcg_count_fault(self.folio_memcg(pfn), false);
        }
        self.trace_swapin_lookup(vp, self.now + t.cost_ns);
        self.swap_cache_hit(vp, pfn);
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
        let f = self.frames.link_flags(pfn);
        if f & pg::SWAPCACHE != 0 && f & pg::WRITEBACK == 0 && (write || self.swap.is_half_full()) {
            self.folio_free_swap(pfn);
        }
    }

    /// The page is only on the swap device: read it back, with its readahead window (major
    /// fault). The window's pages are read in one request; the task waits for all of it.
    fn swapin_fault(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        if self.memcg.is_some() {
            // mem_cgroup_swapin_charge_folio: the memcg the slot was charged to.
            let memcg = self.swap_entry_memcg(vp);
            if let Err(e) = self.mem_cgroup_charge(pfn, memcg, t) {
                self.free_pages(pfn, 0);
                return e.access();
            }
            self.memcg_count_fault(memcg, true);
        }
        self.vm.add(VmEvent::Pgfault, 1);
        self.vm.add(VmEvent::Pgmajfault, 1);
        t.cost_ns += self.cfg.cost.major_fault_ns;
        // 6.1 reads ahead by slot on a rotational device, by address otherwise. A readahead
        // page that wakes kswapd does so where this task's clock is.
        self.kswapd.waker_ns = t.cost_ns;
        let ahead = if self.swap.slots.is_some() {
            let ts = self.now + t.cost_ns;
            self.trace_swapin_lookup(vp, ts);
            let ahead = self.swap_cluster_readahead(vp, ts);
            self.trace_swapin_read(vp, ts);
            ahead
        } else {
            match self.region_of(vp) {
                Some(r) => self.swap_vma_readahead(vp, r),
                None => 0,
            }
        };
        self.kswapd.waker_ns = 0;
        // Adding each readahead page to the swap cache and the LRU costs what a page-cache
        // insertion does.
        t.cost_ns += ahead * self.cfg.cost.file_miss_ns;
        let pages = 1 + ahead;
        self.vm.add(VmEvent::Pswpin, pages);
        self.vm.add(VmEvent::Pgpgin, 4 * pages);
        let done = self.swapdev.submit_read(self.now + t.cost_ns, pages);
        self.frames
            .set_page(pfn, pg::SWAPBACKED | pg::SWAPCACHE, vp);
        let shadow = pte_shadow(self.pte[vp as usize]);
        if shadow != SHADOW_NONE {
            self.workingset_refault(pfn, shadow);
            self.thrashing_wait(pfn, t);
        }
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG;
        self.stat.nr_swapcached += 1;
        self.stat.nr_anon_pages += 1;
        let task = &mut self.tasks[t.task];
        task.rss_anon += 1;
        task.swapents = task.swapents.saturating_sub(1);
        self.lru_add_in_fault(pfn);
        self.after_swapin_map(pfn, write);
        Access::Block(done)
    }

    /// The task is about to wait for the read of `pfn`: if the page refaulted into the
    /// working set (PG_workingset), the read and the wait are a memory stall
    /// (`swap_readpage`, `folio_wait_bit_common` on a workingset folio that is not up to
    /// date), which ends when the task wakes (its actor ends it). Counted only for a task
    /// whose actor reports its sleeps and wake-ups.
    #[inline]
    pub(super) fn thrashing_wait(&mut self, pfn: u32, t: &mut TaskCtx) {
        if t.psi_tracked && !t.psi_thrash && self.frames.test(pfn, pg::WORKINGSET) {
            self.psi.memstall_enter(&mut t.psi, self.now + t.cost_ns);
            t.psi_thrash = true;
        }
    }

    /// `pte_alloc`: the page-table page that maps `vp`, allocated (GFP_PGTABLE_USER, an
    /// unmovable kernel page) at the first fault in its 2 MiB of the region. It lives until the
    /// region is torn down, so it sits among the region's pages in physical memory and keeps
    /// their blocks from merging until the process exits.
    #[cold]
    fn pte_alloc(&mut self, vp: u32, t: &mut TaskCtx) -> Result<(), Access> {
        let Some(r) = self.region_of(vp) else {
            return Ok(());
        };
        let i = ((vp - self.regions[r].base) / PTRS_PER_PTE) as usize;
        if self.regions[r].pt.is_empty() {
            let n = self.regions[r].pages.div_ceil(PTRS_PER_PTE) as usize;
            self.regions[r].pt = vec![NIL; n];
        }
        if self.regions[r].pt[i] != NIL {
            return Ok(());
        }
        let pfn = self.alloc_pages(super::gfp::GFP_KERNEL, 0, t)?;
        if let Err(a) = self.memcg_pgtable_charge(super::gfp::GFP_KERNEL, t) {
            self.free_pages(pfn, 0);
            return Err(a);
        }
        self.mark_kernel_pages(pfn, 0);
        self.regions[r].pt[i] = pfn;
        self.stat.nr_page_table_pages += 1;
        Ok(())
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
            self.zap_anon_pte(vp);
        }
        let tm = &mut self.tasks[task];
        tm.rss_anon = 0;
        tm.swapents = 0;
        // `free_pgtables`: the page tables go after the pages they mapped, uncharged from the
        // memcg of the task they were made for (tasks do not change memcg).
        let memcg = self.memcg.as_ref().map(|_| self.task_memcg(task));
        for pfn in std::mem::take(&mut self.regions[r].pt) {
            if pfn != NIL {
                self.free_pages(pfn, 0);
                self.stat.nr_page_table_pages -= 1;
                if let Some(id) = memcg {
                    self.memcg_pgtable_uncharge(id);
                }
            }
        }
    }

    /// Drop anonymous vpage `vp`'s entry (`zap_pte_range` for one entry): its swap slot, or its
    /// page, which is freed unless it is under writeback (then it loses its owner and reclaim
    /// frees it once the I/O is done). Says what the entry was, for the owner's counters.
    #[inline(always)]
    pub(super) fn zap_anon_pte(&mut self, vp: u32) -> Zapped {
        let pte = self.pte[vp as usize];
        // Dropping the entry drops its shadow too.
        self.pte[vp as usize] = PTE_NONE;
        if !pte_present(pte) {
            if pte_is_swap(pte) {
                self.swap.free(vp);
                self.mem_cgroup_uncharge_swap(vp);
                return Zapped::Swap;
            }
            return Zapped::None;
        }
        let pfn = pte_pfn(pte);
        let f = self.frames.page_flags(pfn);
        let mapped = pte & PTE_MAPPED != 0;
        if mapped {
            self.stat.nr_anon_pages -= 1;
        }
        self.frames.set_owner(pfn, NIL);
        if f & pg::WRITEBACK != 0 {
            if f & pg::SWAPCACHE != 0 {
                self.swap.forget(vp);
                self.mem_cgroup_uncharge_swap(vp);
            }
            return Zapped::Page {
                mapped,
                freed: false,
            };
        }
        if f & pg::LRU != 0 {
            self.lru_del(pfn);
        }
        if f & pg::SWAPCACHE != 0 {
            self.swap.free(vp);
            self.mem_cgroup_uncharge_swap(vp);
            self.stat.nr_swapcached -= 1;
        }
        self.frames.set_flags(pfn, 0);
        self.free_frame(pfn);
        Zapped::Page {
            mapped,
            freed: true,
        }
    }
}
