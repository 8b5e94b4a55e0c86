//! The per-page half of a reclaim pass (`mm/vmscan.c`, core-mm §5.6 - §5.9): isolating pages
//! from an LRU list, `shrink_folio_list`'s decision for each, `pageout`, and deactivation by
//! `shrink_active_list`.

use super::{ReclaimStat, ScanControl};
use crate::machine::frames::{pg, NIL};
use crate::machine::gfp;
use crate::machine::lru::{is_file_lru, ANON, FILE};
use crate::machine::pte::{pte_mk_none, pte_mk_swap, pte_young};
use crate::machine::signal::Signal;
use crate::machine::tracepoint::{ShrinkInactive, Tracepoint};
use crate::machine::vmstat::VmEvent;
use crate::machine::{Machine, MAX_NR_ZONES};

/// Page outcome of `shrink_folio_list`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Free,
    Keep,
    Activate,
}

/// `folio_check_references` result.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FolioRef {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

impl Machine {
    /// `isolate_lru_folios` (core-mm §5.6): take up to `n` pages from the tail of `l` into
    /// `self.scratch`. Returns the pages walked, skipped ones included.
    pub(super) fn isolate_lru_folios(&mut self, n: u64, l: usize, sc: &ScanControl) -> u64 {
        self.scratch.clear();
        let mut scan = 0u64;
        let mut total_scan = 0u64;
        let mut skipped = [0u64; MAX_NR_ZONES];
        let mut skipped_list: Vec<u32> = Vec::new();
        while scan < n {
            let pfn = self.lruvec.lists[l].tail;
            if pfn == NIL {
                break;
            }
            let z = self.zone_of(pfn);
            total_scan += 1;
            self.lruvec.del(&mut self.frames, pfn, l, z);
            if z > sc.reclaim_idx {
                skipped[z] += 1;
                skipped_list.push(pfn);
                continue;
            }
            scan += 1;
            if !sc.may_unmap && self.page_mapped(pfn) {
                self.lruvec.add_head(&mut self.frames, pfn, l, z);
                continue;
            }
            self.frames.clear(pfn, pg::LRU);
            self.scratch.push(pfn);
        }
        // Skipped pages go back on the head of the list (this disturbs LRU order, as in the kernel).
        for pfn in skipped_list.into_iter().rev() {
            let z = self.zone_of(pfn);
            self.lruvec.add_head(&mut self.frames, pfn, l, z);
        }
        for (z, &s) in skipped.iter().enumerate() {
            if s > 0 {
                self.vm.add(VmEvent::pgskip(z), s);
            }
        }
        let (ts, taken) = (self.now + sc.cost_ns, self.scratch.len() as u64);
        let nr_skipped: u64 = skipped.iter().sum();
        let (classzone, order, may_unmap) = (sc.reclaim_idx, sc.order, sc.may_unmap);
        self.trace(|| {
            let tp = Tracepoint::LruIsolate {
                classzone,
                order,
                nr_requested: n,
                nr_scanned: total_scan,
                nr_skipped,
                nr_taken: taken,
                lru: l,
                may_unmap,
            };
            (ts, tp)
        });
        total_scan
    }

    /// `shrink_inactive_list` (core-mm §5.7).
    pub(crate) fn shrink_inactive_list(&mut self, n: u64, l: usize, sc: &mut ScanControl) -> u64 {
        // Writeback ends as its I/O completes, also during a long pass: each batch sees the
        // pages that finished by the reclaimer's clock (and rotated to the inactive tail).
        self.process_io_completions(self.now + sc.cost_ns);
        let file = is_file_lru(l);
        let scanned = self.isolate_lru_folios(n, l, sc);
        let taken = self.scratch.len() as u64;
        self.count_reclaim(false, file, scanned, sc);
        if taken == 0 {
            return 0;
        }
        let mut stat = ReclaimStat::default();
        let list = std::mem::take(&mut self.scratch);
        let reclaimed = self.shrink_folio_list(&list, sc, &mut stat);
        self.scratch = list;
        self.count_reclaim(true, file, reclaimed, sc);
        self.lru_note_cost(file, stat.pageout);
        let nr = &mut sc.nr;
        nr.dirty += stat.dirty;
        nr.congested += stat.congested;
        nr.unqueued_dirty += stat.unqueued_dirty;
        nr.writeback += stat.writeback;
        nr.immediate += stat.immediate;
        nr.taken += taken;
        if file {
            nr.file_taken += taken;
        }
        if self.tracepoints.enabled {
            let ev = ShrinkInactive {
                nr_scanned: taken,
                nr_reclaimed: reclaimed,
                nr_dirty: stat.dirty,
                nr_writeback: stat.writeback,
                nr_congested: stat.congested,
                nr_immediate: stat.immediate,
                nr_activate_anon: stat.activate[ANON],
                nr_activate_file: stat.activate[FILE],
                nr_ref_keep: stat.ref_keep,
                nr_unmap_fail: stat.unmap_fail,
            };
            let (ts, nid, prio) = (self.now + sc.cost_ns, self.nid, sc.priority);
            self.trace(|| {
                let tp = Tracepoint::LruShrinkInactive {
                    nid,
                    stat: ev,
                    priority: prio,
                    file,
                };
                (ts, tp)
            });
        }
        reclaimed
    }

    /// The look-around's share of `folio_referenced` under the multi-generational LRU: 1 if
    /// the folio's entry was young (the look-around then cleared it), else 0. Out of line and
    /// cold: the two-list path pays one test for it, not the look-around's code inlined into
    /// every scanned page's path (4.5 % more instructions on anon-overcommit-swap when it was
    /// inlined, BENCHMARKS.md).
    #[cold]
    #[inline(never)]
    fn lru_gen_referenced(&mut self, pfn: u32, sc: &mut ScanControl) -> u32 {
        let vp = self.frames.owner(pfn);
        if vp != NIL && pte_young(self.pte[vp as usize]) {
            self.lru_gen_look_around(vp, pfn, &mut sc.cost_ns);
            return 1;
        }
        0
    }

    /// `folio_check_references` (core-mm §5.8 step 7). Under the multi-generational LRU the
    /// reverse-map walk looks around a young entry first (`lru_gen_look_around`), which
    /// clears the entry and marks this isolated folio referenced: it is activated.
    #[inline]
    fn folio_check_references(
        &mut self,
        pfn: u32,
        anon: bool,
        sc: &mut ScanControl,
        stat: &mut ReclaimStat,
    ) -> FolioRef {
        let mut referenced = 0;
        if self.lru_gen.is_some() {
            referenced = self.lru_gen_referenced(pfn, sc);
        }
        referenced += self.folio_referenced(pfn);
        let young = referenced > 0;
        let was_ref = self.frames.test_and_clear(pfn, pg::REFERENCED);
        if young {
            self.frames.set(pfn, pg::REFERENCED);
            if was_ref || referenced > 1 {
                return FolioRef::Activate;
            }
            stat.ref_keep += 1;
            return FolioRef::Keep;
        }
        if was_ref && !anon {
            FolioRef::ReclaimClean
        } else {
            FolioRef::Reclaim
        }
    }

    /// `shrink_folio_list` (core-mm §5.8) over the isolated pages in `list`, oldest first.
    /// Survivors go back on the LRU; freed pages go to the buddy allocator.
    pub(super) fn shrink_folio_list(
        &mut self,
        list: &[u32],
        sc: &mut ScanControl,
        stat: &mut ReclaimStat,
    ) -> u64 {
        let cost = self.cfg.cost.clone();
        let mut reclaimed = 0u64;
        for &pfn in list {
            sc.nr_scanned += 1;
            let f = self.frames.page_flags(pfn);
            let anon = f & pg::SWAPBACKED != 0;
            sc.cost_ns += if self.page_mapped(pfn) {
                cost.scan_mapped_ns
            } else {
                cost.scan_unmapped_ns
            };
            let out = self.decide_folio(pfn, f, anon, sc, stat);
            match out {
                Outcome::Free => {
                    self.frames.set_flags(pfn, 0);
                    self.free_frame(pfn);
                    sc.cost_ns += cost.free_page_ns;
                    reclaimed += 1;
                }
                Outcome::Keep => {
                    if self.lru_gen.is_some() {
                        self.lru_gen_putback(pfn);
                    }
                    self.lru_add(pfn)
                }
                Outcome::Activate => {
                    let f = self.frames.link_flags(pfn);
                    if f & pg::SWAPCACHE != 0 && f & pg::WRITEBACK == 0 && self.swap.is_half_full()
                    {
                        self.folio_free_swap(pfn);
                    }
                    self.frames.set(pfn, pg::ACTIVE);
                    stat.activate[if anon { ANON } else { FILE }] += 1;
                    if self.lru_gen.is_some() {
                        // evict_folios' reject path: an activated folio loses its history.
                        self.lru_gen_putback(pfn);
                    }
                    self.lru_add(pfn);
                    // Pages put back on the active list advance the workingset clock.
                    self.lruvec.nonresident_age += 1;
                }
            }
        }
        self.vm.add(
            VmEvent::Pgactivate,
            stat.activate[ANON] + stat.activate[FILE],
        );
        if let Some(st) = self.memcg_scan_stat() {
            st.pgactivate += stat.activate[ANON] + stat.activate[FILE];
        }
        reclaimed
    }

    /// The per-page decision procedure of `shrink_folio_list`.
    fn decide_folio(
        &mut self,
        pfn: u32,
        f: u16,
        anon: bool,
        sc: &mut ScanControl,
        stat: &mut ReclaimStat,
    ) -> Outcome {
        // Under the multi-generational LRU a mapped folio that an aging walk or a look-around
        // met while it was isolated (`folio_update_gen` left it `PG_referenced`) is kept.
        if self.lru_gen.is_some() && f & pg::REFERENCED != 0 && self.page_mapped(pfn) {
            return Outcome::Keep;
        }
        if !anon {
            if f & (pg::DIRTY | pg::WRITEBACK) != 0 {
                stat.dirty += 1;
            }
            if f & pg::DIRTY != 0 && f & pg::WRITEBACK == 0 {
                stat.unqueued_dirty += 1;
            }
            if f & pg::WRITEBACK != 0 && f & pg::RECLAIM != 0 {
                stat.congested += 1;
            }
        }
        if f & pg::WRITEBACK != 0 {
            if sc.kswapd && f & pg::RECLAIM != 0 && self.kswapd.pgdat_writeback {
                stat.immediate += 1;
                return Outcome::Activate;
            }
            self.frames.set(pfn, pg::RECLAIM);
            stat.writeback += 1;
            return Outcome::Activate;
        }
        let reference = self.folio_check_references(pfn, anon, sc, stat);
        match reference {
            FolioRef::Activate => return Outcome::Activate,
            FolioRef::Keep => return Outcome::Keep,
            _ => {}
        }
        if anon && f & pg::SWAPCACHE == 0 && !self.pte_unused.is_empty() {
            let vp = self.frames.owner(pfn);
            if self.pte_unused_test(vp) {
                // s390 CMMA: the guest marked the page unused, so `try_to_unmap_one` drops the
                // entry without writing the page anywhere; the guest's next touch gets a zero
                // page.
                self.discard_unused(pfn, vp);
                return Outcome::Free;
            }
        }
        if anon && f & pg::SWAPCACHE == 0 {
            if sc.gfp & gfp::__GFP_IO == 0 {
                return Outcome::Keep;
            }
            let vp = self.frames.owner(pfn);
            if !self.swap.alloc(vp) {
                return Outcome::Activate;
            }
            // memory.swap.max: a memcg out of swap keeps the page (add_to_swap fails).
            if self.memcg.is_some() && !self.mem_cgroup_try_charge_swap(pfn, vp) {
                self.swap.free(vp);
                return Outcome::Activate;
            }
            self.frames.set(pfn, pg::SWAPCACHE | pg::DIRTY);
            self.stat.nr_swapcached += 1;
        }
        if self.page_mapped(pfn) {
            // Only anonymous pages are mapped in the model (files are read and written).
            self.try_to_unmap(pfn);
            sc.cost_ns += self.cfg.cost.unmap_ns;
        }
        if self.frames.test(pfn, pg::DIRTY) {
            if !anon && (!sc.kswapd || f & pg::RECLAIM == 0 || !self.kswapd.pgdat_dirty) {
                // Direct reclaim never writes file pages; kswapd only "seen twice" ones on a
                // node flagged dirty. Tag it so it is freed as soon as the flusher is done.
                self.stat.nr_vmscan_immediate_reclaim += 1;
                self.frames.set(pfn, pg::RECLAIM);
                return Outcome::Activate;
            }
            if reference == FolioRef::ReclaimClean || !sc.may_writepage {
                return Outcome::Keep;
            }
            self.pageout(pfn, anon, sc);
            stat.pageout += 1;
            return Outcome::Keep;
        }
        // A page with buffers (the block device's) gives them up first (`filemap_release_folio`):
        // a held or journalled block cannot, and the folio is activated.
        if !anon && self.bdev.is_some() && self.bdev_release_folio(pfn) == Some(false) {
            return Outcome::Activate;
        }
        // Clean and unmapped: __remove_mapping, leaving a shadow entry behind.
        let vp = self.frames.owner(pfn);
        if anon {
            self.stat.nr_swapcached -= 1;
            if vp == NIL {
                // Its process exited while the page was being written.
                self.swap.free(NIL);
            } else {
                let shadow = self.workingset_eviction(pfn);
                self.pte[vp as usize] = pte_mk_swap(shadow);
            }
        } else {
            self.stat.nr_file_pages -= 1;
            if vp != NIL {
                let shadow = self.workingset_eviction(pfn);
                self.pte[vp as usize] = pte_mk_none(shadow);
            }
        }
        Outcome::Free
    }

    /// `blk_mq_get_tag`: wait for a free request slot on the swap device (`anon`) or the disk.
    pub(super) fn wait_for_tag(&mut self, anon: bool, sc: &mut ScanControl) {
        let t = self.now + sc.cost_ns;
        let dev = if anon { &self.swapdev } else { &self.disk };
        let tag = dev.get_tag(t);
        sc.cost_ns += tag - t;
        sc.sleep_ns += tag - t;
        // What completed by then has ended writeback, so the pages under writeback are the
        // ones really in flight.
        self.process_io_completions(tag);
    }

    /// `pageout`: start asynchronous writeback (swap for anon, the disk for file pages). A
    /// swap-out inside `shrink_lruvec` goes into the reclaimer's plug (it takes its request
    /// slot when the plug is flushed); any other write first waits for a free request slot on
    /// its device (`blk_mq_get_tag`).
    fn pageout(&mut self, pfn: u32, anon: bool, sc: &mut ScanControl) {
        sc.cost_ns += self.cfg.cost.swapout_submit_ns;
        let plugged = anon && sc.plugged;
        if !plugged {
            self.wait_for_tag(anon, sc);
        }
        let ts = self.now + sc.cost_ns;
        self.trace(|| (ts, Tracepoint::WriteFolio { pfn, file: !anon }));
        self.stat.nr_vmscan_write += 1;
        if anon {
            self.frames.clear(pfn, pg::DIRTY);
            self.frames.set(pfn, pg::WRITEBACK | pg::RECLAIM);
            self.stat.nr_writeback += 1;
            self.vm.add(VmEvent::Pswpout, 1);
            self.vm.add(VmEvent::Pgpgout, 4);
            if plugged {
                let plug = &mut self.swap_plug[sc.kswapd as usize];
                plug.push(pfn);
                // A full request: the next swap-out would start another, and 6.1 flushes a
                // plug whose last request is that large (BLK_PLUG_FLUSH_SIZE) before adding it.
                if plug.len() as u64 >= self.swap_plug_pages {
                    self.blk_finish_plug(sc);
                }
            } else {
                self.swapdev.submit_write(self.now + sc.cost_ns, pfn);
                self.outbox.raise(Signal::SwapIo);
            }
        } else {
            self.start_file_writeback(pfn, ts);
            self.frames.set(pfn, pg::RECLAIM);
        }
    }

    /// `shrink_active_list` (core-mm §5.9): deactivate up to `n` pages from the active tail.
    pub fn shrink_active_list(&mut self, n: u64, l: usize, sc: &mut ScanControl) {
        let scanned = self.isolate_lru_folios(n, l, sc);
        if !sc.cgroup_reclaim() {
            self.vm.add(VmEvent::Pgrefill, scanned);
        }
        if let Some(st) = self.memcg_scan_stat() {
            st.pgrefill += scanned;
        }
        let list = std::mem::take(&mut self.scratch);
        let mut nr_deactivate = 0u64;
        for &pfn in &list {
            sc.cost_ns += if self.page_mapped(pfn) {
                self.cfg.cost.scan_mapped_ns
            } else {
                self.cfg.cost.scan_unmapped_ns
            };
            // folio_referenced harvests (clears) the young bits; only executable file pages
            // would be kept active for it, and the model has none.
            self.folio_referenced(pfn);
            self.frames.clear(pfn, pg::ACTIVE);
            self.frames.set(pfn, pg::WORKINGSET);
            self.lru_add(pfn);
            nr_deactivate += 1;
        }
        let nr_taken = list.len() as u64;
        self.scratch = list;
        self.vm.add(VmEvent::Pgdeactivate, nr_deactivate);
        if let Some(st) = self.memcg_scan_stat() {
            st.pgdeactivate += nr_deactivate;
        }
        let (ts, nid, prio, file) = (self.now + sc.cost_ns, self.nid, sc.priority, is_file_lru(l));
        self.trace(|| {
            let tp = Tracepoint::LruShrinkActive {
                nid,
                nr_taken,
                nr_active: 0,
                nr_deactivated: nr_deactivate,
                priority: prio,
                file,
            };
            (ts, tp)
        });
    }
}
