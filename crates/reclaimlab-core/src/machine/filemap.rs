//! The page cache (`mm/filemap.c`, `mm/readahead.c`): buffered reads and writes of file pages.

use super::frames::pg;
use super::memory::*;
use super::pte::*;
use super::vmstat::VmEvent;
use super::*;

/// `readahead_gfp_mask(mapping)` for a regular file: its mapping's mask plus
/// `__GFP_NORETRY | __GFP_NOWARN`.
pub const READAHEAD_GFP: super::gfp::Gfp =
    super::gfp::GFP_HIGHUSER_MOVABLE | super::gfp::__GFP_NORETRY | super::gfp::__GFP_NOWARN;

impl Machine {
    // ---------------------------------------------------------------- page cache

    /// Buffered read or write of one page of a file (`filemap_read` / `generic_perform_write`).
    #[inline]
    pub fn file_access(
        &mut self,
        vp: u32,
        region_end: u32,
        write: bool,
        t: &mut TaskCtx,
    ) -> Access {
        let pte = self.pte[vp as usize];
        if pte_present(pte) {
            if write {
                t.cost_ns += self.cfg.cost.file_write_ns;
                self.mark_dirty(vp, pte);
            } else {
                t.cost_ns += self.cfg.cost.file_hit_ns;
            }
            self.mark_accessed(pte);
            return Access::Done;
        }
        if write {
            // A whole-page write needs no read: allocate, insert, dirty.
            let pfn = match self.page_cache_alloc(vp, t) {
                Ok(p) => p,
                Err(a) => return a,
            };
            t.cost_ns += self.cfg.cost.file_write_ns;
            self.mark_dirty(vp, pfn);
            self.mark_accessed(pfn);
            return Access::Done;
        }
        // Read miss: synchronous readahead of up to `readahead_pages` absent pages. The pages
        // of the window are all allocated before any enters the page cache and the LRU. In the
        // kernel each new folio is locked (and in the per-CPU LRU batch) until its read is
        // submitted, so reclaim entered by a later page's allocation cannot take an earlier
        // one (`shrink_folio_list` keeps a folio it cannot lock). Here a page off the LRU is
        // one reclaim cannot see; inserting them as they came would let that reclaim free the
        // page being read and leave this read marking a free frame accessed.
        let mut window = std::mem::take(&mut self.ra_window);
        window.clear();
        let ra_alloc = self.cfg.cost.readahead_alloc_ns;
        // A window that waited in the task (paced read-ahead) since its last attempt.
        let mut waited = false;
        let pfn = match t.readahead.take() {
            // This page's last attempt yielded with its window part-filled: go on filling it.
            Some(ra) if ra.vp == vp => {
                // Its pages come back with the vector that held them (no copy).
                window = ra.pages;
                waited = true;
                ra.first
            }
            stale => {
                if let Some(ra) = stale {
                    self.readahead_free(ra);
                }
                match self.read_alloc(super::gfp::GFP_HIGHUSER_MOVABLE, t) {
                    Some(Ok(p)) => {
                        t.cost_ns += self.cfg.cost.file_miss_ns;
                        p
                    }
                    Some(Err(a)) => {
                        self.ra_window = window;
                        return a;
                    }
                    None => {
                        self.ra_window = window;
                        return Access::Yield;
                    }
                }
            }
        };
        // readahead_gfp_mask: __GFP_NORETRY, so a readahead page may enter direct reclaim once
        // but never retries or calls the OOM killer; readahead stops at the first page it
        // cannot get (the task does not sleep for it).
        if ra_alloc == 0 {
            let mut v = vp + 1;
            while self.readahead_wants(window.len(), v, region_end) {
                match self.alloc_pages(READAHEAD_GFP, 0, t) {
                    Ok(p) => window.push(p),
                    Err(_) => break,
                }
                v += 1;
            }
        } else if self.fill_paced(vp, pfn, &mut window, region_end, t) {
            self.ra_window = window;
            return Access::Yield;
        }
        if self.memcg.is_some() {
            // Charged to the reading task's memcg, the whole window before any page enters
            // the LRU (the limit reclaim a charge runs cannot take a page of it).
            let memcg = self.task_memcg(t.task);
            self.mem_cgroup_charge_forced(pfn, memcg, t);
            for &p in window.iter() {
                self.mem_cgroup_charge_forced(p, memcg, t);
            }
        }
        self.page_cache_insert(vp, pfn);
        let mut n = 1;
        for (i, &p) in window.iter().enumerate() {
            let at = vp + 1 + i as u32;
            // Another task may have read this page in while the window waited.
            if waited && pte_present(self.pte[at as usize]) {
                self.free_pages(p, 0);
                continue;
            }
            self.page_cache_insert(at, p);
            n += 1;
        }
        // Every page of the window is added to the page cache and the LRU, not only the one
        // asked for: `file_miss` each, as the readahead pages of a swap-in are charged (less
        // the `readahead_alloc` each paid as it was allocated).
        t.cost_ns += (n - 1) * (self.cfg.cost.file_miss_ns - ra_alloc);
        self.ra_window = window;
        self.vm.add(VmEvent::Pgpgin, 4 * n);
        let done = self.disk.submit_read(self.now + t.cost_ns, n);
        self.thrashing_wait(pfn, t);
        self.mark_accessed(pfn);
        Access::Block(done)
    }

    /// Whether a window of `have` read-ahead pages goes on to vpage `v`.
    #[inline]
    fn readahead_wants(&self, have: usize, v: u32, region_end: u32) -> bool {
        1 + (have as u64) < self.cfg.disk.readahead_pages
            && v < region_end
            && pte_is_none(self.pte[v as usize])
    }

    /// Fill a window one `readahead_alloc` at a time; true if it paused (the window is in
    /// `t.readahead`, for the task's next step), false once it is whole or a page failed.
    fn fill_paced(
        &mut self,
        vp: u32,
        first: u32,
        window: &mut Vec<u32>,
        region_end: u32,
        t: &mut TaskCtx,
    ) -> bool {
        let mut v = vp + 1 + window.len() as u32;
        while self.readahead_wants(window.len(), v, region_end) {
            let entries = t.slowpath_entries;
            let pause = match self.read_alloc(READAHEAD_GFP, t) {
                Some(Ok(p)) => {
                    window.push(p);
                    t.cost_ns += self.cfg.cost.readahead_alloc_ns;
                    v += 1;
                    // It went through the slow path, which woke kswapd. The kernel allocates
                    // the window's next pages one `readahead_alloc` apart while kswapd runs on
                    // another CPU: whether the next finds a page or enters direct reclaim
                    // depends on how far kswapd has got.
                    t.slowpath_entries != entries
                        && self.readahead_wants(window.len(), v, region_end)
                }
                Some(Err(_)) => return false,
                None => true,
            };
            if pause {
                t.readahead = Some(PendingReadahead {
                    vp,
                    first,
                    pages: std::mem::take(window),
                });
                return true;
            }
        }
        false
    }

    /// One page for a read miss's window. With `readahead_alloc` set, a page the fast path
    /// cannot give ends the task's step first (`None`) if the step has used time: the task
    /// asks again at its own time, so the kswapd wake-up of the slow path happens then and not
    /// at the start of the step, ahead of what the task did in it.
    fn read_alloc(&mut self, gfp: super::gfp::Gfp, t: &mut TaskCtx) -> Option<Result<u32, Access>> {
        if self.cfg.cost.readahead_alloc_ns == 0 || t.cost_ns == 0 || t.reclaiming_for(gfp, 0) {
            return Some(self.alloc_pages(gfp, 0, t));
        }
        self.alloc_pages_fast(gfp, 0, t).map(Ok)
    }

    /// A task gives up a part-filled read-ahead window (it moved on, or it ends): its pages,
    /// none of them in the page cache yet, go back to the allocator.
    pub fn readahead_free(&mut self, ra: PendingReadahead) {
        self.free_pages(ra.first, 0);
        for p in ra.pages {
            self.free_pages(p, 0);
        }
    }

    fn page_cache_alloc(&mut self, vp: u32, t: &mut TaskCtx) -> Result<u32, Access> {
        let pfn = self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t)?;
        t.cost_ns += self.cfg.cost.file_miss_ns;
        if self.memcg.is_some() {
            let memcg = self.task_memcg(t.task);
            self.mem_cgroup_charge_forced(pfn, memcg, t);
        }
        self.page_cache_insert(vp, pfn);
        Ok(pfn)
    }

    /// `filemap_add_folio`: insert a new page, check its shadow for a refault, add to the LRU.
    pub(crate) fn page_cache_insert(&mut self, vp: u32, pfn: u32) {
        self.frames.set_page(pfn, 0, vp);
        let shadow = pte_shadow(self.pte[vp as usize]);
        if shadow != SHADOW_NONE {
            self.workingset_refault(pfn, shadow);
        }
        self.pte[vp as usize] = pfn;
        self.stat.nr_file_pages += 1;
        self.lru_add(pfn);
    }

    #[inline]
    fn mark_dirty(&mut self, vp: u32, pfn: u32) {
        if !self.frames.test(pfn, pg::DIRTY) {
            self.frames.set(pfn, pg::DIRTY);
            self.stat.nr_dirty += 1;
            self.stat.nr_dirtied += 1;
            self.dirty_queue.push_back((vp, self.now));
            self.outbox.raise(Signal::Dirtied);
        }
    }
}

#[cfg(test)]
impl Machine {
    /// Tests: take every free page as a kernel page, then give them back until one movable
    /// page can be had at the min watermark and the next cannot (the machine needs
    /// `pcp_lists = false`).
    pub(crate) fn leave_one_movable_page(&mut self) {
        use crate::machine::watermark::alloc_flags::{ALLOC_NO_WATERMARKS, ALLOC_WMARK_MIN};
        use crate::machine::watermark::{MIGRATE_MOVABLE, MIGRATE_UNMOVABLE};
        let hz = MAX_NR_ZONES - 1;
        let mut held = Vec::new();
        while let Some(p) =
            self.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, hz, MIGRATE_UNMOVABLE)
        {
            self.mark_kernel_pages(p, 0);
            held.push(p);
        }
        // Give pages back, highest zone first (taken first), until one movable page passes
        // the min watermark, then return that page.
        for p in held {
            self.free_pages(p, 0);
            if let Some(p) = self.get_page_from_freelist(0, ALLOC_WMARK_MIN, hz, MIGRATE_MOVABLE) {
                self.free_pages(p, 0);
                return;
            }
        }
        unreachable!("all memory is free again")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine whose free memory is at the point where one more movable page can be had
    /// at the min watermark and the next cannot: a read miss gets its own page, and its first
    /// readahead page must enter direct reclaim. The LRU holds only `cached` clean,
    /// unreferenced pages of file region `r` (vpages from `base`).
    fn at_the_min_watermark(cached: u32) -> (Machine, u32) {
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\npcp_lists = false\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        let task = m.add_task("reader", 0);
        let r = m.add_region(task, 1024, false).unwrap();
        let base = m.regions[r].base;
        let mut t = TaskCtx {
            task,
            ..TaskCtx::default()
        };
        for vp in base + 512..base + 512 + cached {
            let pfn = m.page_cache_alloc(vp, &mut t).unwrap();
            assert_eq!(m.frames.owner(pfn), vp);
        }
        m.leave_one_movable_page();
        (m, base)
    }

    /// `at_the_min_watermark(1)` with a read-ahead window paced by `readahead_alloc`.
    fn paced_at_the_min_watermark() -> (Machine, u32) {
        let (mut m, base) = at_the_min_watermark(1);
        m.cfg.cost.file_miss_ns = 20_000;
        m.cfg.cost.readahead_alloc_ns = 5_000;
        (m, base)
    }

    /// Free pages in all zones.
    fn free(m: &Machine) -> u64 {
        (0..MAX_NR_ZONES).map(|z| m.zones[z].free_pages()).sum()
    }

    /// With `readahead_alloc`, a window's page that the fast path cannot give ends the step
    /// before the slow path (whose kswapd wake-up then happens at the task's own time), and one
    /// that went through the slow path ends it after: the window waits in the task, out of the
    /// page cache, and the next attempts at the same page fill it, then read it in whole.
    #[test]
    fn a_paced_window_yields_around_the_slow_path_and_then_completes() {
        let (mut m, base) = paced_at_the_min_watermark();
        m.cfg.disk.readahead_pages = 4;
        let free0 = free(&m);
        let mut t = TaskCtx::default();
        // The page asked for comes at the min watermark; the first read-ahead page cannot
        // come off the fast path, and the step has used time: yield before the slow path.
        assert_eq!(
            m.file_access(base, base + 1024, false, &mut t),
            Access::Yield
        );
        let ra = t.readahead.as_ref().expect("the window waits in the task");
        assert_eq!((ra.vp, ra.pages.len()), (base, 0));
        assert!(
            !pte_present(m.pte[base as usize]),
            "not in the page cache yet"
        );
        assert_eq!(free(&m), free0 - 1);
        let slowpath = m.cfg.cost.slowpath_ns;
        assert_eq!(
            t.cost_ns,
            slowpath + 20_000,
            "the page asked for, nothing more yet"
        );
        assert_eq!(m.vm.get(VmEvent::PgstealDirect), 0);
        // Its next step goes into the slow path at once (direct reclaim frees the cached
        // page), gets the page, and yields again: kswapd may run before the next one.
        t.begin_step();
        assert_eq!(
            m.file_access(base, base + 1024, false, &mut t),
            Access::Yield
        );
        assert!(m.vm.get(VmEvent::PgstealDirect) >= 1);
        assert_eq!(t.readahead.as_ref().map(|r| r.pages.len()), Some(1));
        // Then the window ends at the first page it cannot get, and is read in whole.
        let mut steps = 0;
        let done = loop {
            t.begin_step();
            match m.file_access(base, base + 1024, false, &mut t) {
                Access::Block(at) => break at,
                Access::Yield => steps += 1,
                a => panic!("{a:?}"),
            }
            assert!(steps < 8, "the window never completed");
        };
        assert!(done > 0 && t.readahead.is_none());
        let n = (base..base + 4)
            .take_while(|&v| pte_present(m.pte[v as usize]))
            .count() as u64;
        assert!(n >= 2, "the page asked for and the one read-ahead page");
        assert_eq!(m.vm.get(VmEvent::Pgpgin), 4 * n);
    }

    /// A window given up (the task moved on, or ended) leaves no page allocated.
    #[test]
    fn a_window_given_up_returns_its_pages() {
        let (mut m, base) = paced_at_the_min_watermark();
        let free0 = free(&m);
        let mut t = TaskCtx::default();
        assert_eq!(
            m.file_access(base, base + 1024, false, &mut t),
            Access::Yield
        );
        assert_eq!(free(&m), free0 - 1);
        m.readahead_free(t.readahead.take().unwrap());
        assert_eq!(free(&m), free0);
    }

    /// A buffered write charges `file_write` whether the page was cached or is added now (a
    /// new page also pays `file_miss`); a read hit charges `file_hit`. Distinct values, so a
    /// swapped key shows.
    #[test]
    fn writes_charge_file_write_and_read_hits_file_hit() {
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n\
                    [cost]\nfile_hit = \"1us\"\nfile_write = \"7us\"\nfile_miss = \"50us\"\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        let task = m.add_task("writer", 0);
        let r = m.add_region(task, 16, false).unwrap();
        let (base, end) = (m.regions[r].base, m.regions[r].base + 16);
        let mut cost = |write: bool| {
            let mut t = TaskCtx {
                task,
                ..TaskCtx::default()
            };
            assert_eq!(m.file_access(base, end, write, &mut t), Access::Done);
            t.cost_ns
        };
        assert_eq!(cost(true), 57_000, "a new page: file_miss + file_write");
        assert_eq!(cost(true), 7_000, "a cached page rewritten: file_write");
        assert_eq!(cost(false), 1_000, "a read hit: file_hit");
    }

    /// Regression (generated scenarios, issue 15): direct reclaim entered by a readahead
    /// page's allocation freed the page the read miss had just put in the page cache, and the
    /// read then marked the free frame accessed (PG_referenced on a page in the buddy or on a
    /// per-CPU list). The window's pages now stay off the LRU, as the kernel's stay locked,
    /// until every one is allocated.
    #[test]
    fn readahead_reclaim_cannot_free_the_page_being_read() {
        let (mut m, base) = at_the_min_watermark(1);
        m.cfg.disk.readahead_pages = 4;
        let mut t = TaskCtx::default();
        let a = m.file_access(base, base + 1024, false, &mut t);
        assert!(matches!(a, Access::Block(_)), "{a:?}");
        // The readahead allocations did reclaim (the cached page).
        assert!(m.vm.get(VmEvent::PgstealDirect) >= 1);
        let pte = m.pte[base as usize];
        assert!(
            pte_present(pte),
            "the page being read was reclaimed under the reader"
        );
        let pfn = pte_pfn(pte);
        assert_eq!(m.frames.owner(pfn), base);
        assert_eq!(
            m.frames.page_flags(pfn),
            pg::LRU | pg::REFERENCED,
            "an inactive page-cache page marked accessed once"
        );
        // Every page of the window is in the page cache, on the LRU.
        let mut v = base + 1;
        while pte_present(m.pte[v as usize]) {
            assert_eq!(m.frames.owner(pte_pfn(m.pte[v as usize])), v);
            assert!(m.frames.test(pte_pfn(m.pte[v as usize]), pg::LRU));
            v += 1;
        }
        assert!(v > base + 1, "no readahead page was allocated");
    }
}
