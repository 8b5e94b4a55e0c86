//! The page cache (`mm/filemap.c`, `mm/readahead.c`): buffered reads and writes of file pages.

use super::frames::pg;
use super::memory::*;
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
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        t.cost_ns += self.cfg.cost.file_miss_ns;
        let mut window = std::mem::take(&mut self.ra_window);
        window.clear();
        let mut v = vp + 1;
        while 1 + (window.len() as u64) < self.cfg.readahead_pages
            && v < region_end
            && pte_is_none(self.pte[v as usize])
        {
            // readahead_gfp_mask: __GFP_NORETRY, so a readahead page may enter direct reclaim
            // once but never retries or calls the OOM killer; readahead stops at the first
            // page it cannot get (the task does not sleep for it).
            match self.alloc_pages(READAHEAD_GFP, 0, t) {
                Ok(p) => window.push(p),
                Err(_) => break,
            }
            v += 1;
        }
        self.page_cache_insert(vp, pfn);
        for (i, &p) in window.iter().enumerate() {
            self.page_cache_insert(vp + 1 + i as u32, p);
        }
        let n = 1 + window.len() as u64;
        // Every page of the window is added to the page cache and the LRU, not only the one
        // asked for: `file_miss` each, as the readahead pages of a swap-in are charged.
        t.cost_ns += (n - 1) * self.cfg.cost.file_miss_ns;
        self.ra_window = window;
        self.vm.add(VmEvent::Pgpgin, 4 * n);
        let done = self.disk.submit_read(self.now + t.cost_ns, n);
        self.mark_accessed(pfn);
        Access::Block(done)
    }

    fn page_cache_alloc(&mut self, vp: u32, t: &mut TaskCtx) -> Result<u32, Access> {
        let pfn = self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t)?;
        t.cost_ns += self.cfg.cost.file_miss_ns;
        self.page_cache_insert(vp, pfn);
        Ok(pfn)
    }

    /// `filemap_add_folio`: insert a new page, check its shadow for a refault, add to the LRU.
    fn page_cache_insert(&mut self, vp: u32, pfn: u32) {
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
mod tests {
    use super::*;
    use crate::machine::watermark::alloc_flags::{ALLOC_NO_WATERMARKS, ALLOC_WMARK_MIN};
    use crate::machine::watermark::{MIGRATE_MOVABLE, MIGRATE_UNMOVABLE};

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
        let hz = MAX_NR_ZONES - 1;
        let mut held = Vec::new();
        while let Some(p) = m.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, hz, MIGRATE_UNMOVABLE)
        {
            m.mark_kernel_pages(p, 0);
            held.push(p);
        }
        // Give pages back, highest zone first (taken first), until one movable page passes
        // the min watermark, then return that page.
        for p in held {
            m.free_pages(p, 0);
            if let Some(p) = m.get_page_from_freelist(0, ALLOC_WMARK_MIN, hz, MIGRATE_MOVABLE) {
                m.free_pages(p, 0);
                return (m, base);
            }
        }
        unreachable!("all memory is free again")
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
        m.cfg.readahead_pages = 4;
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
