//! LRU reclaim for one node (core-mm §5): `shrink_node` → `shrink_lruvec` → `shrink_list` →
//! `shrink_inactive_list`/`shrink_active_list` → `shrink_folio_list`, and direct reclaim
//! (`try_to_free_pages`, core-mm §3.4).

use super::{ReclaimStat, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::mm::frames::{pg, NIL};
use crate::mm::gfp::{self, gfp_zone, Gfp};
use crate::mm::lru::{
    is_active_lru, is_file_lru, ANON, EVICTABLE_LRUS, FILE, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE,
    LRU_INACTIVE_ANON, LRU_INACTIVE_FILE,
};
use crate::mm::node::{Node, TaskCtx, PTE_NONE, PTE_SWAP};
use crate::mm::{MAX_NR_ZONES, PAGE_ALLOC_COSTLY_ORDER};
use crate::observe::ftrace::ShrinkInactive;
use crate::observe::vmstat::VmEvent;

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

impl Node {
    /// `pgdat_balanced(order, highest_zoneidx)` under the scenario's `kswapd_balance` rule.
    pub fn pgdat_balanced(&self, order: u32, hz: usize) -> bool {
        self.policy
            .balance
            .balanced(&self.zones, self.policy.wmark_check.as_ref(), order, hz)
    }

    /// `shrink_node` (core-mm §5.2): one pass over the node's LRU lists (and, later, slab).
    pub fn shrink_node(&mut self, sc: &mut ScanControl) {
        loop {
            // Writeback that finished while reclaim was running is visible to it.
            self.process_io_completions(self.now + sc.cost_ns);
            sc.nr = ReclaimStat::default();
            let reclaimed0 = sc.nr_reclaimed;
            self.prepare_scan_count(sc);
            self.shrink_lruvec(sc);
            let reclaimed_now = sc.nr_reclaimed - reclaimed0;
            if sc.kswapd {
                if sc.nr.writeback > 0 && sc.nr.writeback == sc.nr.taken {
                    self.kswapd.pgdat_writeback = true;
                }
                if sc.nr.unqueued_dirty == sc.nr.file_taken {
                    self.kswapd.pgdat_dirty = true;
                }
            }
            if sc.kswapd && sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
                self.kswapd.lruvec_congested = true;
            }
            let again = self.should_continue_reclaim(reclaimed_now, sc);
            if reclaimed_now > 0 {
                self.kswapd.failures = 0;
            }
            if !again {
                break;
            }
        }
    }

    /// `should_continue_reclaim`: only reclaim/compaction mode (order > 0) repeats a pass.
    fn should_continue_reclaim(&self, reclaimed: u64, sc: &ScanControl) -> bool {
        if sc.order == 0 || (sc.order <= PAGE_ALLOC_COSTLY_ORDER && sc.priority >= DEF_PRIORITY - 2)
        {
            return false;
        }
        if reclaimed == 0 {
            return false;
        }
        // Enough free memory for compaction in some zone: stop (compaction_suitable != SKIPPED).
        for z in 0..=sc.reclaim_idx.min(MAX_NR_ZONES - 1) {
            let zone = &self.zones[z];
            if !zone.is_managed() {
                continue;
            }
            let gap = 2u64 << sc.order;
            let mark = if sc.order > PAGE_ALLOC_COSTLY_ORDER {
                zone.low_wmark_pages()
            } else {
                zone.min_wmark_pages()
            };
            if zone.free_pages() > mark + gap + zone.lowmem_reserve[sc.reclaim_idx] {
                return false;
            }
        }
        let mut inactive = self.lruvec.size(LRU_INACTIVE_FILE);
        if self.swap.has_free() {
            inactive += self.lruvec.size(LRU_INACTIVE_ANON);
        }
        inactive > (2u64 << sc.order)
    }

    /// `prepare_scan_count` (core-mm §5.2).
    pub fn prepare_scan_count(&mut self, sc: &mut ScanControl) {
        sc.anon_cost = self.lruvec.anon_cost;
        sc.file_cost = self.lruvec.file_cost;
        if !sc.force_deactivate {
            sc.may_deactivate[ANON] = self.stat.workingset_activate[ANON]
                != self.lruvec.refaults[ANON]
                || self.lruvec.inactive_is_low(false);
            sc.may_deactivate[FILE] = self.stat.workingset_activate[FILE]
                != self.lruvec.refaults[FILE]
                || self.lruvec.inactive_is_low(true);
        } else {
            sc.may_deactivate = [true; 2];
        }
        let inactive_file = self.lruvec.size(LRU_INACTIVE_FILE);
        sc.cache_trim_mode = (inactive_file >> sc.priority) > 0 && !sc.may_deactivate[FILE];
        let total_high: u64 = self
            .zones
            .iter()
            .filter(|z| z.is_managed())
            .map(|z| z.high_wmark_pages())
            .sum();
        let file = inactive_file + self.lruvec.size(LRU_ACTIVE_FILE);
        let free = self.total_free_pages();
        let anon = self.lruvec.size(LRU_INACTIVE_ANON);
        sc.file_is_tiny =
            file + free <= total_high && !sc.may_deactivate[ANON] && (anon >> sc.priority) > 0;
    }

    /// `get_scan_count` (core-mm §5.3): pages to scan per evictable list, in
    /// [INACTIVE_ANON, ACTIVE_ANON, INACTIVE_FILE, ACTIVE_FILE] order.
    pub fn get_scan_count(&self, sc: &ScanControl) -> [u64; 4] {
        #[derive(PartialEq)]
        enum Balance {
            Equal,
            Fract,
            Anon,
            File,
        }
        let swappiness = self.cfg.swappiness;
        let mut ap = 0u64;
        let mut fp = 0u64;
        let balance = if !sc.may_swap || !self.swap.has_free() {
            Balance::File
        } else if sc.priority == 0 && swappiness != 0 {
            Balance::Equal
        } else if sc.file_is_tiny {
            Balance::Anon
        } else if sc.cache_trim_mode {
            Balance::File
        } else {
            let total = sc.anon_cost + sc.file_cost;
            let a = total + sc.anon_cost;
            let f = total + sc.file_cost;
            let s = a + f;
            ap = swappiness * (s + 1) / (a + 1);
            fp = (200 - swappiness) * (s + 1) / (f + 1);
            Balance::Fract
        };
        let mut nr = [0u64; 4];
        for (i, &l) in EVICTABLE_LRUS.iter().enumerate() {
            let size = self.lruvec.size_upto(l, sc.reclaim_idx);
            let mut scan = size >> sc.priority;
            let file = is_file_lru(l);
            scan = match balance {
                Balance::Equal => scan,
                Balance::Fract => {
                    let num = if file { fp } else { ap };
                    let den = ap + fp;
                    if den == 0 {
                        0
                    } else {
                        (scan as u128 * num as u128 / den as u128) as u64
                    }
                }
                Balance::File => {
                    if file {
                        scan
                    } else {
                        0
                    }
                }
                Balance::Anon => {
                    if file {
                        0
                    } else {
                        scan
                    }
                }
            };
            nr[i] = scan;
        }
        nr
    }

    /// `shrink_lruvec` (core-mm §5.4).
    pub fn shrink_lruvec(&mut self, sc: &mut ScanControl) {
        let targets = self.get_scan_count(sc);
        let mut nr = targets;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let proportional = !sc.kswapd && sc.priority == DEF_PRIORITY;
        let mut reclaimed = 0u64;
        let mut scan_adjusted = proportional;
        // Index positions in `nr`: 0 IA, 1 AA, 2 IF, 3 AF.
        while nr[0] > 0 || nr[3] > 0 || nr[2] > 0 {
            for i in 0..4 {
                if nr[i] > 0 {
                    let n = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= n;
                    reclaimed += self.shrink_list(EVICTABLE_LRUS[i], n, sc);
                }
            }
            if reclaimed < nr_to_reclaim || scan_adjusted {
                continue;
            }
            // Enough reclaimed: scale the other type down to keep the scan proportional.
            let nr_file = nr[2] + nr[3];
            let nr_anon = nr[0] + nr[1];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (small, other, pct) = if nr_file > nr_anon {
                (
                    0usize,
                    2usize,
                    nr_anon * 100 / (targets[0] + targets[1] + 1),
                )
            } else {
                (
                    2usize,
                    0usize,
                    nr_file * 100 / (targets[2] + targets[3] + 1),
                )
            };
            nr[small] = 0;
            nr[small + 1] = 0;
            for l in [other, other + 1] {
                let done = targets[l] - nr[l];
                nr[l] = (targets[l] * (100 - pct) / 100).saturating_sub(done);
            }
            scan_adjusted = true;
        }
        sc.nr_reclaimed += reclaimed;
        if self.swap.total > 0 && self.lruvec.inactive_is_low(false) {
            self.shrink_active_list(SWAP_CLUSTER_MAX, LRU_ACTIVE_ANON, sc);
        }
    }

    fn shrink_list(&mut self, l: usize, n: u64, sc: &mut ScanControl) -> u64 {
        if is_active_lru(l) {
            let t = if is_file_lru(l) { FILE } else { ANON };
            if sc.may_deactivate[t] {
                self.shrink_active_list(n, l, sc);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(n, l, sc)
    }

    /// `isolate_lru_folios` (core-mm §5.6): take up to `n` pages from the tail of `l` into
    /// `self.scratch`. Returns the pages walked, skipped ones included.
    fn isolate_lru_folios(&mut self, n: u64, l: usize, sc: &ScanControl) -> u64 {
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
        self.trace_event(|tr, who| {
            tr.lru_isolate(
                who, ts, classzone, order, n, total_scan, nr_skipped, taken, l, may_unmap,
            )
        });
        total_scan
    }

    /// `shrink_inactive_list` (core-mm §5.7).
    fn shrink_inactive_list(&mut self, n: u64, l: usize, sc: &mut ScanControl) -> u64 {
        let file = is_file_lru(l);
        let scanned = self.isolate_lru_folios(n, l, sc);
        let taken = self.scratch.len() as u64;
        self.vm.add(
            if sc.kswapd {
                VmEvent::PgscanKswapd
            } else {
                VmEvent::PgscanDirect
            },
            scanned,
        );
        self.vm.add(
            if file {
                VmEvent::PgscanFile
            } else {
                VmEvent::PgscanAnon
            },
            scanned,
        );
        if taken == 0 {
            return 0;
        }
        let mut stat = ReclaimStat::default();
        let list = std::mem::take(&mut self.scratch);
        let reclaimed = self.shrink_folio_list(&list, sc, &mut stat);
        self.scratch = list;
        self.vm.add(
            if sc.kswapd {
                VmEvent::PgstealKswapd
            } else {
                VmEvent::PgstealDirect
            },
            reclaimed,
        );
        self.vm.add(
            if file {
                VmEvent::PgstealFile
            } else {
                VmEvent::PgstealAnon
            },
            reclaimed,
        );
        self.lruvec.note_cost(file, stat.pageout);
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
        if self.trace.is_some() {
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
            self.trace_event(|tr, who| tr.lru_shrink_inactive(who, ts, nid, &ev, prio, file));
        }
        reclaimed
    }

    /// `folio_check_references` (core-mm §5.8 step 7).
    #[inline]
    fn folio_check_references(&mut self, pfn: u32, anon: bool, stat: &mut ReclaimStat) -> FolioRef {
        let young = self.folio_referenced(pfn) > 0;
        let was_ref = self.frames.test_and_clear(pfn, pg::REFERENCED);
        if young {
            self.frames.set(pfn, pg::REFERENCED);
            if was_ref {
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
    fn shrink_folio_list(
        &mut self,
        list: &[u32],
        sc: &mut ScanControl,
        stat: &mut ReclaimStat,
    ) -> u64 {
        let cost = self.cfg.cost.clone();
        let mut reclaimed = 0u64;
        for &pfn in list {
            sc.nr_scanned += 1;
            let f = self.frames.flags[pfn as usize];
            let anon = f & pg::SWAPBACKED != 0;
            sc.cost_ns += if self.page_mapped(pfn) {
                cost.scan_mapped_ns
            } else {
                cost.scan_unmapped_ns
            };
            let out = self.decide_folio(pfn, f, anon, sc, stat);
            match out {
                Outcome::Free => {
                    self.frames.flags[pfn as usize] = 0;
                    self.free_frame(pfn);
                    sc.cost_ns += cost.free_page_ns;
                    reclaimed += 1;
                }
                Outcome::Keep => self.lru_add(pfn),
                Outcome::Activate => {
                    let f = self.frames.flags[pfn as usize];
                    if f & pg::SWAPCACHE != 0 && f & pg::WRITEBACK == 0 && self.swap.is_half_full()
                    {
                        self.drop_swap_copy(pfn);
                    }
                    self.frames.set(pfn, pg::ACTIVE);
                    stat.activate[if anon { ANON } else { FILE }] += 1;
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
        reclaimed
    }

    /// `folio_free_swap`: the page keeps its data in memory only, so it must be written again.
    fn drop_swap_copy(&mut self, pfn: u32) {
        self.frames.clear(pfn, pg::SWAPCACHE);
        self.frames.set(pfn, pg::DIRTY);
        self.swap.free();
        self.stat.nr_swapcached -= 1;
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
        let reference = self.folio_check_references(pfn, anon, stat);
        match reference {
            FolioRef::Activate => return Outcome::Activate,
            FolioRef::Keep => return Outcome::Keep,
            _ => {}
        }
        if anon && f & pg::SWAPCACHE == 0 {
            if sc.gfp & gfp::__GFP_IO == 0 {
                return Outcome::Keep;
            }
            if !self.swap.alloc() {
                return Outcome::Activate;
            }
            self.frames.set(pfn, pg::SWAPCACHE | pg::DIRTY);
            self.stat.nr_swapcached += 1;
        }
        if self.page_mapped(pfn) {
            // Only anonymous pages are mapped in the model (files are read and written).
            self.try_to_unmap(pfn);
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
        // Clean and unmapped: __remove_mapping, leaving a shadow entry behind.
        let vp = self.frames.owner[pfn as usize];
        if anon {
            self.stat.nr_swapcached -= 1;
            if vp == NIL {
                // Its process exited while the page was being written.
                self.swap.free();
            } else {
                let shadow = self.workingset_eviction(pfn);
                self.shadow[vp as usize] = shadow;
                self.pte[vp as usize] = PTE_SWAP;
            }
        } else {
            self.stat.nr_file_pages -= 1;
            if vp != NIL {
                let shadow = self.workingset_eviction(pfn);
                self.shadow[vp as usize] = shadow;
                self.pte[vp as usize] = PTE_NONE;
            }
        }
        Outcome::Free
    }

    /// `pageout`: start asynchronous writeback (swap for anon, the disk for file pages).
    fn pageout(&mut self, pfn: u32, anon: bool, sc: &mut ScanControl) {
        sc.cost_ns += self.cfg.cost.swapout_submit_ns;
        let ts = self.now + sc.cost_ns;
        self.trace_event(|tr, who| tr.write_folio(who, ts, pfn, !anon));
        self.stat.nr_vmscan_write += 1;
        if anon {
            self.frames.clear(pfn, pg::DIRTY);
            self.frames.set(pfn, pg::WRITEBACK | pg::RECLAIM);
            self.stat.nr_writeback += 1;
            self.vm.add(VmEvent::Pswpout, 1);
            self.vm.add(VmEvent::Pgpgout, 4);
            self.swapdev.submit_write(self.now + sc.cost_ns, pfn);
        } else {
            self.start_file_writeback(pfn);
            self.frames.set(pfn, pg::RECLAIM);
        }
    }

    /// `shrink_active_list` (core-mm §5.9): deactivate up to `n` pages from the active tail.
    pub fn shrink_active_list(&mut self, n: u64, l: usize, sc: &mut ScanControl) {
        let scanned = self.isolate_lru_folios(n, l, sc);
        self.vm.add(VmEvent::Pgrefill, scanned);
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
        let (ts, nid, prio, file) = (self.now + sc.cost_ns, self.nid, sc.priority, is_file_lru(l));
        self.trace_event(|tr, who| {
            tr.lru_shrink_active(who, ts, nid, nr_taken, 0, nr_deactivate, prio, file)
        });
    }

    /// `snapshot_refaults`: remember the activation counts for the next `prepare_scan_count`.
    pub fn snapshot_refaults(&mut self) {
        self.lruvec.refaults = self.stat.workingset_activate;
    }

    /// `try_to_free_pages` + `do_try_to_free_pages` (core-mm §3.4): direct reclaim by the
    /// allocating task. Returns the number of pages reclaimed; its time goes to `t`.
    pub fn try_to_free_pages(&mut self, gfp: Gfp, order: u32, t: &mut TaskCtx) -> u64 {
        let mut sc = ScanControl::new(gfp, order, gfp_zone(gfp), SWAP_CLUSTER_MAX, false);
        // Reclaim runs on the task's clock: its events are stamped from where the task is.
        let start = self.now + t.cost_ns;
        let may_writepage = sc.may_writepage;
        self.trace_event(|tr, who| tr.direct_reclaim_begin(who, start, order, gfp, may_writepage));
        sc.cost_ns = t.cost_ns;
        let reclaimed = self.do_try_to_free_pages(&mut sc);
        t.cost_ns = sc.cost_ns;
        let end = self.now + t.cost_ns;
        self.trace_event(|tr, who| tr.direct_reclaim_end(who, end, reclaimed));
        reclaimed
    }

    fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) -> u64 {
        loop {
            self.vm.add(VmEvent::allocstall(sc.reclaim_idx), 1);
            loop {
                sc.nr_scanned = 0;
                self.shrink_zones(sc);
                if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.compaction_ready {
                    break;
                }
                if sc.priority < DEF_PRIORITY - 2 {
                    sc.may_writepage = true;
                }
                sc.priority -= 1;
                if sc.priority < 0 {
                    break;
                }
            }
            self.snapshot_refaults();
            if sc.nr_reclaimed > 0 {
                return sc.nr_reclaimed;
            }
            if sc.compaction_ready {
                return 1;
            }
            if sc.skipped_deactivate && !sc.force_deactivate {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            return 0;
        }
    }

    /// `shrink_zones`: one node, so one `shrink_node` per priority pass.
    fn shrink_zones(&mut self, sc: &mut ScanControl) {
        if sc.order > PAGE_ALLOC_COSTLY_ORDER {
            let ready = self.zonelist(sc.reclaim_idx).any(|z| {
                let zone = &self.zones[z];
                zone.free_pages()
                    > zone.high_wmark_pages()
                        + (2u64 << sc.order)
                        + zone.lowmem_reserve[sc.reclaim_idx]
            });
            if ready {
                sc.compaction_ready = true;
                return;
            }
        }
        self.shrink_node(sc);
    }

    /// kswapd's `kswapd_age_node`: keep the inactive anon list from running low.
    pub fn kswapd_age_node(&mut self, sc: &mut ScanControl) {
        if self.swap.total > 0 && self.lruvec.inactive_is_low(false) {
            self.shrink_active_list(SWAP_CLUSTER_MAX, LRU_ACTIVE_ANON, sc);
        }
    }

    /// Count of pages on the evictable lists (for reports).
    pub fn lru_pages(&self) -> u64 {
        EVICTABLE_LRUS.iter().map(|&l| self.lruvec.size(l)).sum()
    }
}
