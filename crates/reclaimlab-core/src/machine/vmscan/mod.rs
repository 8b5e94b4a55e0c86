//! LRU reclaim for one node (`mm/vmscan.c`, core-mm §5): `shrink_node` → `shrink_lruvec` →
//! `shrink_list`, direct reclaim (`try_to_free_pages`, core-mm §3.4) and `pgdat_balanced`. The
//! per-page work of a pass (isolation, `shrink_folio_list`, `shrink_active_list`) is in
//! `folio_list.rs`.

mod folio_list;
mod scan_control;
mod throttle;

pub use scan_control::*;
pub use throttle::ThrottleReason;

use super::gfp::{gfp_zone, Gfp};
use super::lru::{
    is_active_lru, is_file_lru, ANON, EVICTABLE_LRUS, FILE, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE,
    LRU_INACTIVE_ANON, LRU_INACTIVE_FILE,
};
use super::tracepoint::Tracepoint;
use super::vmstat::VmEvent;
use super::{Machine, TaskCtx, MAX_NR_ZONES, PAGE_ALLOC_COSTLY_ORDER};

impl Machine {
    /// `pgdat_balanced(order, highest_zoneidx)` under the scenario's `kswapd_balance` rule.
    pub fn pgdat_balanced(&self, order: u32, hz: usize) -> bool {
        self.policy
            .balance
            .balanced(&self.zones, self.policy.wmark_check.as_ref(), order, hz)
    }

    /// `shrink_node` (core-mm §5.2): one pass over the node's LRU lists (and, later, slab).
    /// A pass that runs past `sc.quantum_end` yields with `sc.preempted` set; calling again
    /// with the same `sc` resumes it.
    pub fn shrink_node(&mut self, sc: &mut ScanControl) {
        loop {
            if sc.cursor.is_none() {
                // Writeback that finished while reclaim was running is visible to it.
                self.process_io_completions(self.now + sc.cost_ns);
                sc.nr = ReclaimStat::default();
                sc.node_reclaimed0 = sc.nr_reclaimed;
                self.prepare_scan_count(sc);
            }
            self.shrink_lruvec(sc);
            if sc.preempted {
                return;
            }
            // shrink_slab after the LRU (core-mm §6); whole slab pages it emptied count as
            // reclaimed (reclaimed_slab), objects do not.
            if !self.shrinkers.is_empty() {
                self.shrink_slab_in_pass(sc);
            }
            let reclaimed_now = sc.nr_reclaimed - sc.node_reclaimed0;
            if sc.kswapd {
                if sc.nr.writeback > 0 && sc.nr.writeback == sc.nr.taken {
                    self.kswapd.pgdat_writeback = true;
                }
                if sc.nr.unqueued_dirty == sc.nr.file_taken {
                    self.kswapd.pgdat_dirty = true;
                }
            }
            // kswapd meeting pages it already marked for immediate reclaim still under
            // writeback (sc.nr.immediate) throttles on WRITEBACK: the kswapd actor sleeps
            // after this priority iteration (`reclaim_throttle`).
            if sc.kswapd && sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
                self.kswapd.lruvec_congested = true;
            }
            if !sc.kswapd && self.kswapd.lruvec_congested {
                self.throttle_in_pass(ThrottleReason::Congested, sc);
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

    /// `shrink_lruvec` (core-mm §5.4), resumed from `sc.cursor` when a previous call yielded.
    pub fn shrink_lruvec(&mut self, sc: &mut ScanControl) {
        let nr_to_reclaim = sc.nr_to_reclaim;
        let (mut nr, targets, mut reclaimed, mut scan_adjusted) = match sc.cursor.take() {
            Some(c) => (c.nr, c.targets, c.reclaimed, c.scan_adjusted),
            None => {
                let targets = self.get_scan_count(sc);
                // Direct reclaim at DEF_PRIORITY scans its whole targets (proportional).
                let proportional = !sc.kswapd && sc.priority == DEF_PRIORITY;
                (targets, targets, 0, proportional)
            }
        };
        sc.preempted = false;
        // Index positions in `nr`: 0 IA, 1 AA, 2 IF, 3 AF.
        while nr[0] > 0 || nr[3] > 0 || nr[2] > 0 {
            if sc.cost_ns >= sc.quantum_end {
                sc.cursor = Some(LruvecCursor {
                    nr,
                    targets,
                    reclaimed,
                    scan_adjusted,
                });
                sc.preempted = true;
                return;
            }
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

    /// `snapshot_refaults`: remember the activation counts for the next `prepare_scan_count`.
    pub fn snapshot_refaults(&mut self) {
        self.lruvec.refaults = self.stat.workingset_activate;
    }

    /// `try_to_free_pages` + `do_try_to_free_pages` (core-mm §3.4): direct reclaim by the
    /// allocating task. Returns the number of pages reclaimed, or `None` when the pass used up
    /// its quantum: it is then kept in `t.reclaim` and the next call for the same request
    /// resumes it. Its time goes to `t`.
    pub fn try_to_free_pages(&mut self, gfp: Gfp, order: u32, t: &mut TaskCtx) -> Option<u64> {
        let mut sc = match t.reclaim.take() {
            Some((g, o, sc)) if (g, o) == (gfp, order) => sc,
            _ => {
                let sc = ScanControl::new(gfp, order, gfp_zone(gfp), SWAP_CLUSTER_MAX, false);
                // Reclaim runs on the task's clock: its events are stamped from where the
                // task is.
                let start = self.now + t.cost_ns;
                let may_writepage = sc.may_writepage;
                self.trace(|| {
                    let tp = Tracepoint::DirectReclaimBegin {
                        order,
                        gfp,
                        may_writepage,
                    };
                    (start, tp)
                });
                Box::new(sc)
            }
        };
        sc.cost_ns = t.cost_ns;
        sc.sleep_ns = 0;
        sc.quantum_end = t.cost_ns + RECLAIM_QUANTUM_NS;
        let reclaimed = self.do_try_to_free_pages(&mut sc);
        t.cost_ns = sc.cost_ns;
        t.sleep_ns += sc.sleep_ns;
        let Some(reclaimed) = reclaimed else {
            t.reclaim = Some((gfp, order, sc));
            return None;
        };
        let end = self.now + t.cost_ns;
        self.trace(|| {
            let nr_reclaimed = reclaimed;
            (end, Tracepoint::DirectReclaimEnd { nr_reclaimed })
        });
        Some(reclaimed)
    }

    /// `None`: preempted (see [`try_to_free_pages`](Self::try_to_free_pages)).
    fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) -> Option<u64> {
        // A resumed pass re-enters the priority loop where it stopped.
        let mut resumed = sc.cursor.is_some();
        loop {
            if !resumed {
                self.vm.add(VmEvent::allocstall(sc.reclaim_idx), 1);
            }
            loop {
                if !resumed {
                    sc.nr_scanned = 0;
                }
                resumed = false;
                self.shrink_zones(sc);
                if sc.preempted {
                    return None;
                }
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
                return Some(sc.nr_reclaimed);
            }
            if sc.compaction_ready {
                return Some(1);
            }
            if sc.skipped_deactivate && !sc.force_deactivate {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            return Some(0);
        }
    }

    /// `shrink_zones`: one node, so one `shrink_node` per priority pass.
    fn shrink_zones(&mut self, sc: &mut ScanControl) {
        if sc.cursor.is_none() && sc.order > PAGE_ALLOC_COSTLY_ORDER {
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
        if sc.preempted {
            return;
        }
        // consider_reclaim_throttle: direct reclaim that has reached priority 1 without
        // reclaiming anything waits a jiffy for writeback (kswapd throttles on WRITEBACK).
        if !sc.kswapd && sc.priority == 1 && sc.nr_reclaimed == 0 {
            self.throttle_in_pass(ThrottleReason::Noprogress, sc);
        }
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
