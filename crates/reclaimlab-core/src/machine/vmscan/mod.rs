//! LRU reclaim for one node (`mm/vmscan.c`, core-mm §5): `shrink_node` → `shrink_lruvec` →
//! `shrink_list`, direct reclaim (`try_to_free_pages`, core-mm §3.4) and `pgdat_balanced`. The
//! per-page work of a pass (isolation, `shrink_folio_list`, `shrink_active_list`) is in
//! `folio_list.rs`.

mod folio_list;
mod lru_gen;
mod memcg;
mod scan_control;
mod throttle;

pub use scan_control::*;
pub use throttle::ThrottleReason;

use super::gfp::{gfp_zone, Gfp};
use super::lru::{
    self, is_active_lru, is_file_lru, ANON, EVICTABLE_LRUS, FILE, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE,
    LRU_INACTIVE_ANON, LRU_INACTIVE_FILE,
};
use super::signal::Signal;
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
            if self.memcg.is_some() {
                self.shrink_node_memcgs(sc);
            } else {
                self.shrink_lruvec(sc);
            }
            if sc.preempted {
                return;
            }
            // shrink_slab after the LRU (core-mm §6); whole slab pages it emptied count as
            // reclaimed (reclaimed_slab), objects do not. With cgroups shrink_node_memcgs ran
            // it for each memcg it visited.
            if self.memcg.is_none() && !self.shrinkers.is_empty() {
                self.shrink_slab_in_pass(sc, super::page_counter::ROOT_COUNTER);
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
        if self.lru_gen.is_some() {
            // The multi-generational LRU balances by its own feedback loop.
            return;
        }
        // The target's lruvec: the node's without cgroups; with them its subtree's.
        let (costs, size, refaulted) = match self.memcg {
            None => {
                let l = &self.lruvec;
                let act = &self.stat.workingset_activate;
                (
                    (l.anon_cost, l.file_cost),
                    [l.size(0), l.size(1), l.size(2), l.size(3)],
                    [act[ANON] != l.refaults[ANON], act[FILE] != l.refaults[FILE]],
                )
            }
            Some(_) => self.memcg_target_inputs(sc),
        };
        (sc.anon_cost, sc.file_cost) = costs;
        if !sc.force_deactivate {
            sc.may_deactivate[ANON] = refaulted[ANON]
                || lru::inactive_is_low(size[LRU_INACTIVE_ANON], size[LRU_ACTIVE_ANON]);
            sc.may_deactivate[FILE] = refaulted[FILE]
                || lru::inactive_is_low(size[LRU_INACTIVE_FILE], size[LRU_ACTIVE_FILE]);
        } else {
            sc.may_deactivate = [true; 2];
        }
        let inactive_file = size[LRU_INACTIVE_FILE];
        sc.cache_trim_mode = (inactive_file >> sc.priority) > 0 && !sc.may_deactivate[FILE];
        let total_high: u64 = self
            .zones
            .iter()
            .filter(|z| z.is_managed())
            .map(|z| z.high_wmark_pages())
            .sum();
        let file = inactive_file + size[LRU_ACTIVE_FILE];
        let free = self.total_free_pages();
        let anon = size[LRU_INACTIVE_ANON];
        // file_is_tiny is global reclaim's only.
        sc.file_is_tiny = !sc.cgroup_reclaim()
            && file + free <= total_high
            && !sc.may_deactivate[ANON]
            && (anon >> sc.priority) > 0;
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
        let swappiness = self.cfg.sysctl.swappiness;
        let mut ap = 0u64;
        let mut fp = 0u64;
        let memcg = self.memcg.is_some();
        let balance =
            if !sc.may_swap || !self.swap.has_free() || (memcg && self.memcg_swap_exhausted()) {
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
            let mut scan = if memcg {
                self.protected_scan(size, sc)
            } else {
                size >> sc.priority
            };
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
    /// With `[swap] max_request` its swap-outs wait in the reclaimer's block plug until the
    /// pass is over or they fill a request: a preempted pass keeps them plugged (only a task
    /// that sleeps flushes its plug), so a page stays under writeback, with PG_reclaim set,
    /// for the rest of the pass before its write is even issued (a TCG guest's kswapd held
    /// its plug 10 ms at the median, docs/VALIDATION.md).
    pub fn shrink_lruvec(&mut self, sc: &mut ScanControl) {
        sc.plugged = self.swap_plug_pages > 0;
        if self.lru_gen.is_some() {
            // 6.1: lru_gen_shrink_lruvec in place of the lists' scan (inside the same plug).
            sc.preempted = false;
            self.lru_gen_shrink_lruvec(sc);
        } else {
            self.shrink_lruvec_plugged(sc);
        }
        sc.plugged = false;
        if !sc.preempted {
            self.blk_finish_plug(sc);
        }
    }

    /// `blk_finish_plug`: the reclaimer's plugged swap-outs go to the device, each waiting for
    /// a request slot as it is issued. Also called when a plug reaches its request limit, and
    /// when a direct reclaim left preempted is abandoned.
    pub fn blk_finish_plug(&mut self, sc: &mut ScanControl) {
        let kind = sc.kswapd as usize;
        if self.swap_plug[kind].is_empty() {
            return;
        }
        let mut plug = std::mem::take(&mut self.swap_plug[kind]);
        for &pfn in &plug {
            self.wait_for_tag(true, sc);
            self.swapdev.submit_write(self.now + sc.cost_ns, pfn);
        }
        // The emptied buffer serves the next pass.
        plug.clear();
        self.swap_plug[kind] = plug;
        self.outbox.raise(Signal::SwapIo);
    }

    fn shrink_lruvec_plugged(&mut self, sc: &mut ScanControl) {
        let nr_to_reclaim = sc.nr_to_reclaim;
        let (mut nr, targets, mut reclaimed, proportional) = match sc.cursor.take() {
            Some(c) => (c.nr, c.targets, c.reclaimed, c.proportional),
            None => {
                let targets = self.get_scan_count(sc);
                // Direct reclaim at DEF_PRIORITY scans its whole targets (proportional).
                let proportional =
                    !sc.kswapd && !sc.cgroup_reclaim() && sc.priority == DEF_PRIORITY;
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
                    proportional,
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
            if reclaimed < nr_to_reclaim || proportional {
                continue;
            }
            // Enough reclaimed: stop the smaller type and cut the larger one down to the share
            // of its target the smaller had left, so the two end equally far through their
            // targets. 6.1 does not latch this (older kernels' `scan_adjusted`, removed by
            // "mm: vmscan: fix extreme overreclaim and swap floods"): the next round of batches
            // comes back here, finds the smaller type at 0 and stops, so a pass that has
            // reclaimed enough scans at most one more batch per list of the larger type.
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

    /// Drop the task's preempted direct reclaim, if it has one, issuing its plugged
    /// swap-outs (the pages are under writeback already and must reach the device).
    pub fn abandon_reclaim(&mut self, t: &mut TaskCtx) {
        if let Some((_, _, mut sc)) = t.reclaim.take() {
            sc.cost_ns = t.cost_ns;
            sc.sleep_ns = 0;
            self.blk_finish_plug(&mut sc);
            t.cost_ns = sc.cost_ns;
            t.sleep_ns += sc.sleep_ns;
        }
    }

    /// `None`: preempted (see [`try_to_free_pages`](Self::try_to_free_pages)).
    fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) -> Option<u64> {
        // A resumed pass re-enters the priority loop where it stopped.
        let mut resumed = sc.cursor.is_some();
        loop {
            if !resumed && !sc.cgroup_reclaim() {
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
            self.snapshot_target_refaults(sc);
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
            // Memcgs were spared for their memory.low: try again reclaiming them too.
            if sc.memcg_low_skipped && !sc.memcg_low_reclaim {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = false;
                sc.memcg_low_reclaim = true;
                sc.memcg_low_skipped = false;
                continue;
            }
            return Some(0);
        }
    }

    /// `shrink_zones`: one node, so one `shrink_node` per priority pass.
    fn shrink_zones(&mut self, sc: &mut ScanControl) {
        if sc.cursor.is_none() && sc.order > PAGE_ALLOC_COSTLY_ORDER && !sc.cgroup_reclaim() {
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
        if !sc.kswapd && sc.priority == 1 && sc.nr_reclaimed == 0 && !sc.cgroup_reclaim() {
            self.throttle_in_pass(ThrottleReason::Noprogress, sc);
        }
    }

    /// kswapd's `kswapd_age_node`: keep the inactive anon list from running low.
    #[inline]
    pub fn kswapd_age_node(&mut self, sc: &mut ScanControl) {
        if self.lru_gen.is_some() {
            self.lru_gen_age_node(sc);
            return;
        }
        if self.memcg.is_some() {
            if self.swap.total > 0 {
                self.age_active_anon_memcgs(sc);
            }
            return;
        }
        if self.swap.total > 0 && self.lruvec.inactive_is_low(false) {
            self.shrink_active_list(SWAP_CLUSTER_MAX, LRU_ACTIVE_ANON, sc);
        }
    }

    /// Count of pages on the evictable lists (for reports).
    pub fn lru_pages(&self) -> u64 {
        EVICTABLE_LRUS.iter().map(|&l| self.node_lru_size(l)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::gfp::GFP_KERNEL;
    use crate::machine::pte::PTE_YOUNG;
    use crate::machine::{Access, TaskCtx};

    /// A 64 MiB machine with 1 GiB of swap (`[swap] max_request` as given) whose one task
    /// has written `n` anonymous pages, their young bits already harvested: the next pass
    /// swaps them out.
    fn machine_with_anon(n: u32, max_request: &str) -> Machine {
        let text = format!(
            "name = \"t\"\n[host]\nram = \"64MiB\"\n[swap]\nsize = \"1GiB\"\n\
             latency_jitter = 0.0\nmax_request = \"{max_request}\"\n\
             [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        let scn = crate::scenario::parse_str(&text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        let task = m.add_task("w", 0);
        let region = m.add_region(task, n as u64, true).unwrap();
        let base = m.regions[region].base;
        let mut t = TaskCtx::default();
        for vp in base..base + n {
            assert!(matches!(m.anon_access(vp, true, &mut t), Access::Done));
            m.pte[vp as usize] &= !PTE_YOUNG;
        }
        m
    }

    /// One batch of a pass that scans the whole inactive anon list, then the pass yields.
    fn first_batch(m: &mut Machine, kswapd: bool) -> ScanControl {
        let mut sc = ScanControl::new(GFP_KERNEL, 0, MAX_NR_ZONES - 1, u64::MAX, kswapd);
        sc.priority = 0;
        sc.quantum_end = 1;
        m.shrink_node(&mut sc);
        assert!(sc.preempted);
        sc
    }

    /// 6.1's `shrink_lruvec` plugs the reclaimer's block queue: a page swapped out stays
    /// under writeback, with PG_reclaim set, until the pass ends or its request is full; a
    /// preempted pass keeps its plug. Without `max_request` each write is issued at once.
    #[test]
    fn a_reclaim_pass_holds_its_swap_outs_in_its_plug_until_it_ends() {
        let mut m = machine_with_anon(200, "1MiB");
        let mut sc = first_batch(&mut m, true);
        let written = m.vm.get(VmEvent::Pswpout);
        assert_eq!(written, SWAP_CLUSTER_MAX);
        assert_eq!(m.stat.nr_writeback, written);
        assert_eq!(m.swap_plug[1].len() as u64, written);
        assert!(m.swapdev.completions.is_empty());
        // The rest of the pass, then the plug goes to the device.
        sc.quantum_end = u64::MAX;
        m.shrink_node(&mut sc);
        assert!(!sc.preempted);
        let written = m.vm.get(VmEvent::Pswpout);
        assert_eq!(written, 200);
        assert!(m.swap_plug[1].is_empty());
        assert_eq!(m.swapdev.completions.len() as u64, written);

        // Issued: still queued at the device, or already done (no longer under writeback).
        let issued = |m: &Machine| {
            m.swapdev.completions.len() as u64 + m.vm.get(VmEvent::Pswpout) - m.stat.nr_writeback
        };
        // A 64 KiB request (16 pages): the plug is flushed each time it fills one.
        let mut m = machine_with_anon(200, "64KiB");
        first_batch(&mut m, true);
        assert_eq!(issued(&m), 32);
        assert!(m.swap_plug[1].is_empty());
        let mut m = machine_with_anon(200, "80KiB");
        first_batch(&mut m, true);
        assert_eq!((issued(&m), m.swap_plug[1].len()), (20, 12));

        // No plug: every swap-out is issued as it is written.
        let mut m = machine_with_anon(200, "0");
        first_batch(&mut m, true);
        assert_eq!(issued(&m), 32);
        assert!(m.swap_plug[1].is_empty());
    }

    /// A direct reclaim left preempted and then abandoned (its task asks for something else,
    /// or exits) issues what its plug holds: the pages are under writeback already.
    #[test]
    fn an_abandoned_direct_reclaim_issues_its_plug() {
        let mut m = machine_with_anon(200, "1MiB");
        let sc = first_batch(&mut m, false);
        assert_eq!(m.swap_plug[0].len(), 32);
        assert!(m.swapdev.completions.is_empty());
        let mut t = TaskCtx {
            reclaim: Some((GFP_KERNEL, 0, Box::new(sc))),
            ..TaskCtx::default()
        };
        m.abandon_reclaim(&mut t);
        assert!(t.reclaim.is_none());
        assert!(m.swap_plug[0].is_empty());
        assert_eq!(
            m.swapdev.completions.len() as u64 + 32 - m.stat.nr_writeback,
            32
        );
        // Their writes complete and end writeback as usual.
        let last = m.swapdev.completions.back().unwrap().0;
        m.process_io_completions(last);
        assert_eq!(m.stat.nr_writeback, 0);
    }

    /// `[cost] unmap` is charged for a page reclaim unmaps, not for one it finds referenced.
    #[test]
    fn unmap_is_charged_only_for_pages_reclaim_unmaps() {
        let cost = |young: bool, unmap_ns: u64| {
            let mut m = machine_with_anon(64, "0");
            m.cfg.cost.unmap_ns = unmap_ns;
            if young {
                for p in m.pte.iter_mut() {
                    *p |= PTE_YOUNG;
                }
            }
            first_batch(&mut m, true).cost_ns
        };
        // The first batch's 32 pages unmapped and written: 32 unmaps more.
        assert_eq!(cost(false, 50_000) - cost(false, 0), 32 * 50_000);
        // Its 32 pages referenced and kept: no unmap at all.
        assert_eq!(cost(true, 50_000), cost(true, 0));
    }
}
