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
            t.cost_ns += self.cfg.cost.file_hit_ns;
            if write {
                self.mark_dirty(vp, pte);
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
            t.cost_ns += self.cfg.cost.file_hit_ns;
            self.mark_dirty(vp, pfn);
            self.mark_accessed(pfn);
            return Access::Done;
        }
        // Read miss: synchronous readahead of up to `readahead_pages` absent pages.
        let pfn = match self.page_cache_alloc(vp, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        let mut n = 1u64;
        let mut v = vp + 1;
        while n < self.cfg.readahead_pages && v < region_end && pte_is_none(self.pte[v as usize]) {
            // readahead_gfp_mask: __GFP_NORETRY, so a readahead page may enter direct reclaim
            // once but never retries or calls the OOM killer; readahead stops at the first
            // page it cannot get (the task does not sleep for it).
            match self.alloc_pages(READAHEAD_GFP, 0, t) {
                Ok(p) => self.page_cache_insert(v, p),
                Err(_) => break,
            }
            n += 1;
            v += 1;
        }
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
