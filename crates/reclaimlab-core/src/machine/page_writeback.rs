//! Dirty limits and writeback (`mm/page-writeback.c`): the dirty thresholds, the flusher's
//! batch, and the end of writeback as device completions arrive.

use super::frames::pg;
use super::lru::{self};
use super::pte::*;
use super::vmstat::VmEvent;
use super::*;

impl Machine {
    /// Dirtyable memory (`global_dirtyable_memory`): free pages above the reserves plus file LRU.
    pub fn dirtyable_memory(&self) -> u64 {
        let reserve: u64 = self.totalreserve_pages();
        let free = self.total_free_pages().saturating_sub(reserve);
        free + self.node_lru_size(lru::LRU_INACTIVE_FILE) + self.node_lru_size(lru::LRU_ACTIVE_FILE)
    }

    /// (`dirty_thresh`, `background_thresh`) in pages (`global_dirty_limits`).
    pub fn dirty_limits(&self) -> (u64, u64) {
        let avail = self.dirtyable_memory();
        let thresh = avail * self.cfg.writeback.dirty_ratio / 100;
        let mut bg = avail * self.cfg.writeback.dirty_background_ratio / 100;
        if bg >= thresh {
            bg = thresh / 2;
        }
        (thresh, bg)
    }

    /// `totalreserve_pages` (core-mm §2.4).
    pub fn totalreserve_pages(&self) -> u64 {
        self.zones
            .iter()
            .map(|z| {
                let max_reserve = z.lowmem_reserve.iter().copied().max().unwrap_or(0);
                (max_reserve + z.high_wmark_pages()).min(z.managed())
            })
            .sum()
    }
}

impl Machine {
    // ---------------------------------------------------------------- writeback completion

    /// `folio_end_writeback`: clear writeback; a page reclaim wanted goes to the inactive tail.
    pub fn end_writeback(&mut self, pfn: u32) {
        let f = self.frames.link_flags(pfn);
        debug_assert!(f & pg::WRITEBACK != 0);
        self.frames.clear(pfn, pg::WRITEBACK);
        self.stat.nr_writeback -= 1;
        self.stat.nr_written += 1;
        if f & pg::RECLAIM != 0 {
            self.frames.clear(pfn, pg::RECLAIM);
            // folio_rotate_reclaimable: a clean page on the LRU moves to the inactive tail,
            // losing PG_active. Reclaim activated it when it found it under writeback (to keep
            // it out of the way while the write ran); now it is the first to go.
            if f & pg::LRU != 0 && f & pg::DIRTY == 0 && self.lru_gen.is_some() {
                self.lru_gen_rotate(pfn);
                self.vm.add(VmEvent::Pgrotated, 1);
            } else if f & pg::LRU != 0 && f & pg::DIRTY == 0 {
                let z = self.zone_of(pfn);
                // The page's memcg's lruvec (the machine's one without cgroups).
                let lv = match &mut self.memcg {
                    None => &mut self.lruvec,
                    Some(mc) => mc.lruvec_of(mc.frame[pfn as usize], &mut self.lruvec),
                };
                lv.del(&mut self.frames, pfn, lru::lru_of(f), z);
                self.frames.clear(pfn, pg::ACTIVE);
                let l = lru::lru_of(f & !pg::ACTIVE);
                lv.add_tail(&mut self.frames, pfn, l, z);
                self.vm.add(VmEvent::Pgrotated, 1);
            }
        }
    }

    /// Deliver every device completion due by `t` (called by the I/O actors and by reclaim,
    /// which runs long enough for completions to land during it).
    pub fn process_io_completions(&mut self, t: u64) {
        while let Some(&(when, pfn)) = self.swapdev.completions.front() {
            if when > t {
                break;
            }
            self.swapdev.completions.pop_front();
            self.end_writeback(pfn);
        }
        while let Some(&(when, pfn)) = self.disk.completions.front() {
            if when > t {
                break;
            }
            self.disk.completions.pop_front();
            self.end_writeback(pfn);
        }
    }

    /// The flusher: start writeback of up to `max` dirty file pages, oldest first, that were
    /// dirtied before `older_than`, while the disk has free request slots. Returns the number
    /// of pages submitted.
    pub fn writeback_dirty(&mut self, max: u64, older_than: u64) -> u64 {
        let mut n = 0;
        while n < max && self.disk.get_tag(self.now) == self.now {
            let Some(&(vp, when)) = self.dirty_queue.front() else {
                break;
            };
            if when > older_than {
                break;
            }
            self.dirty_queue.pop_front();
            let pfn = self.pte[vp as usize];
            if !pte_present(pfn) || !self.frames.test(pfn, pg::DIRTY) {
                continue;
            }
            if self.frames.test(pfn, pg::WRITEBACK) {
                // Still being written: look again later.
                self.dirty_queue.push_back((vp, when));
                break;
            }
            self.start_file_writeback(pfn, self.now);
            n += 1;
        }
        n
    }

    /// Clean a dirty file page by writing it to disk at time `t` (flusher or kswapd
    /// `pageout`).
    pub fn start_file_writeback(&mut self, pfn: u32, t: u64) {
        self.frames.clear(pfn, pg::DIRTY);
        self.frames.set(pfn, pg::WRITEBACK);
        self.stat.nr_dirty -= 1;
        self.stat.nr_writeback += 1;
        self.vm.add(VmEvent::Pgpgout, 4);
        self.disk.submit_write(t, pfn);
        self.outbox.raise(Signal::DiskIo);
    }
}
