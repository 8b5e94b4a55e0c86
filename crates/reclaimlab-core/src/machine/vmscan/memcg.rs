//! Reclaim with memory cgroups (`mm/vmscan.c`, docs/design/memcg-psi.md §5.2, §6): the
//! walk of `shrink_node_memcgs` over the target's subtree with each memcg's effective
//! protection, limit reclaim (`try_to_free_mem_cgroup_pages`), and the sizes and costs a pass
//! reads from its target's lruvec, which for a memcg are its subtree's.
//!
//! Only a machine with `[[cgroup]]` comes here; without, `shrink_node` scans the node's one
//! lruvec as before.
//!
//! Slab shrinkers run per memcg as in 6.1: after each visited memcg's `shrink_lruvec`,
//! `shrink_slab` for that memcg (every shrinker for the root; for another memcg the
//! memcg-aware ones with objects of its own, `machine/shrinker.rs`). Limit reclaim thus prunes
//! only its subtree's dentries and inodes (the objects charged to it, `memcontrol/kmem.rs`), and
//! a memcg skipped for its protection keeps its objects too.
//!
//! Abstracted: the workingset clock (`nonresident_age`) and the refault distance are the
//! node's (the root's), also for a page evicted by limit reclaim, whose shadow the kernel
//! measures against the target memcg's clock and workingset.

use super::{ScanControl, SWAP_CLUSTER_MAX};
use crate::machine::gfp::{Gfp, GFP_KERNEL};
use crate::machine::lru::{ANON, FILE, LRU_ACTIVE_ANON, NR_LRU_LISTS};
use crate::machine::memcontrol::mem_cgroup::MemcgStat;
use crate::machine::memcontrol::{get_nr_swap_pages, get_scan_count_protected, MemcgEvent};
use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
use crate::machine::vmstat::VmEvent;
use crate::machine::{Machine, TaskCtx, MAX_NR_ZONES};

impl Machine {
    /// Put memcg `id`'s lruvec in `self.lruvec` (the root's: put it back).
    #[inline]
    pub(crate) fn memcg_switch(&mut self, id: CounterId) {
        if let Some(mc) = &mut self.memcg {
            mc.switch_lruvec(id, &mut self.lruvec);
        }
    }

    /// The event counts of the memcg being scanned (None without cgroups).
    #[inline]
    pub(super) fn memcg_scan_stat(&mut self) -> Option<&mut MemcgStat> {
        self.memcg.as_mut().map(|mc| &mut mc.stat[mc.cur as usize])
    }

    /// Count `n` pages a reclaim pass scanned or reclaimed (`steal`) of one type, as 6.1's
    /// `shrink_inactive_list` and `evict_folios` do: the reclaimer's line (`pgscan_kswapd`,
    /// `pgsteal_direct`, ...: `reclaimer_offset`) in the memcg being scanned and, unless this
    /// is limit reclaim, in the node's counters; the type's line (`pgscan_anon`, ...) always.
    pub(super) fn count_reclaim(&mut self, steal: bool, file: bool, n: u64, sc: &ScanControl) {
        let kswapd = sc.kswapd;
        if let Some(st) = self.memcg_scan_stat() {
            *match (steal, kswapd) {
                (false, true) => &mut st.pgscan_kswapd,
                (false, false) => &mut st.pgscan_direct,
                (true, true) => &mut st.pgsteal_kswapd,
                (true, false) => &mut st.pgsteal_direct,
            } += n;
        }
        if !sc.cgroup_reclaim() {
            let line = match (steal, kswapd) {
                (false, true) => VmEvent::PgscanKswapd,
                (false, false) => VmEvent::PgscanDirect,
                (true, true) => VmEvent::PgstealKswapd,
                (true, false) => VmEvent::PgstealDirect,
            };
            self.vm.add(line, n);
        }
        let by_type = match (steal, file) {
            (false, false) => VmEvent::PgscanAnon,
            (false, true) => VmEvent::PgscanFile,
            (true, false) => VmEvent::PgstealAnon,
            (true, true) => VmEvent::PgstealFile,
        };
        self.vm.add(by_type, n);
    }

    /// Pages on list `l` of the node, every memcg's lruvec.
    #[inline]
    pub fn node_lru_size(&self, l: usize) -> u64 {
        match &self.memcg {
            None => self.lruvec.size(l),
            Some(mc) => mc.subtree_size(ROOT_COUNTER, &self.lruvec)[l],
        }
    }

    /// Pages per list per zone of the node, every memcg's lruvec.
    #[inline(never)]
    pub fn node_lru_zone_size(&self) -> [[u64; NR_LRU_LISTS]; MAX_NR_ZONES] {
        match &self.memcg {
            None => self.lruvec.zone_size,
            Some(mc) => mc.subtree_zone_size(ROOT_COUNTER, &self.lruvec),
        }
    }

    /// The list sizes of `sc`'s target (its subtree's, hierarchical as the kernel's memcg
    /// lruvec counts are).
    pub(super) fn target_sizes(&self, sc: &ScanControl) -> [u64; NR_LRU_LISTS] {
        match &self.memcg {
            None => std::array::from_fn(|l| self.lruvec.size(l)),
            Some(mc) => mc.subtree_size(sc.target_memcg, &self.lruvec),
        }
    }

    /// `lru_note_cost`: the cost goes to the lruvec of memcg `id` and every ancestor's, each
    /// decaying against its subtree's size.
    pub(super) fn lru_note_cost(&mut self, file: bool, n: u64) {
        let cur = self.memcg.as_ref().map_or(ROOT_COUNTER, |mc| mc.cur);
        self.lru_note_cost_of(cur, file, n);
    }

    /// `lru_note_cost` for a refault of a workingset page of memcg `id`
    /// (`workingset_refault`).
    pub(crate) fn note_refault_cost(&mut self, id: CounterId, file: bool) {
        self.lru_note_cost_of(id, file, 1);
    }

    fn lru_note_cost_of(&mut self, id: CounterId, file: bool, n: u64) {
        let Some(mc) = &mut self.memcg else {
            self.lruvec.note_cost(file, n);
            return;
        };
        // Up the chain by parent links (no list: this runs on every refault and reclaim batch).
        let mut next = Some(id);
        while let Some(a) = next {
            next = mc.memory.parent(a);
            let size: u64 = {
                let s = mc.subtree_size(a, &self.lruvec);
                s[..4].iter().sum()
            };
            mc.lruvec_of(a, &mut self.lruvec)
                .note_cost_sized(file, n, size);
        }
    }

    /// The scan target of one list of the memcg being scanned, under its protection
    /// (`get_scan_count`'s memcg step).
    #[inline(never)]
    pub(super) fn protected_scan(&self, size: u64, sc: &ScanControl) -> u64 {
        let mc = self.memcg.as_ref().expect("cgroups");
        let m = mc.cur;
        let prot = mc.memory.protection(sc.target_memcg, m);
        let usage = mc.memory.get(m).usage;
        get_scan_count_protected(size, usage, prot, sc.memcg_low_reclaim, sc.priority, true).scan
    }

    /// `prepare_scan_count`'s inputs from `sc`'s target with cgroups: its costs, its
    /// subtree's evictable list sizes, and whether it saw activations since its snapshot.
    #[inline(never)]
    pub(super) fn memcg_target_inputs(
        &self,
        sc: &ScanControl,
    ) -> ((u64, u64), [u64; 4], [bool; 2]) {
        let size = self.target_sizes(sc);
        (
            self.target_costs(sc),
            [size[0], size[1], size[2], size[3]],
            self.target_refaults_changed(sc),
        )
    }

    /// The memcg being scanned may not swap: its chain's `memory.swap.max` is used up.
    #[inline(never)]
    pub(super) fn memcg_swap_exhausted(&self) -> bool {
        match &self.memcg {
            None => false,
            Some(mc) => get_nr_swap_pages(&mc.swap, mc.cur, u64::MAX) == 0,
        }
    }

    /// `shrink_node_memcgs` (spec §5.2): every memcg of the target's subtree in pre-order,
    /// each with its effective protection: below `memory.min` never, below `memory.low` only
    /// in the low-reclaim retry (counting a `low` event). A pass that yields inside a memcg's
    /// `shrink_lruvec` resumes there.
    pub(super) fn shrink_node_memcgs(&mut self, sc: &mut ScanControl) {
        let target = sc.target_memcg;
        let mc = self.memcg.as_mut().expect("cgroups");
        let (mut cur, resumed) = match sc.memcg_pos.take() {
            Some(p) => (Some(p), true),
            None => {
                let rp = mc.recursiveprot;
                mc.memory.calculate_subtree_protection(target, rp);
                (Some(target), false)
            }
        };
        let mut first = true;
        while let Some(m) = cur {
            cur = self.memcg_preorder_next(target, m);
            let checked = !(resumed && first);
            first = false;
            if checked {
                let mc = self.memcg.as_ref().expect("cgroups");
                let (below_min, below_low) = (mc.memory.below_min(m), mc.memory.below_low(m));
                let (min, low) = mc.memory.protection(target, m);
                if below_min {
                    continue;
                }
                if below_low {
                    if !sc.memcg_low_reclaim {
                        sc.memcg_low_skipped = true;
                        continue;
                    }
                    self.memcg_event(m, MemcgEvent::Low);
                }
                if !sc.memcg_low_reclaim && low > min {
                    // get_scan_count scaled by memory.low: a fruitless reclaim retries below it.
                    sc.memcg_low_skipped = true;
                }
            }
            self.memcg_switch(m);
            self.shrink_lruvec(sc);
            self.memcg_switch(ROOT_COUNTER);
            if sc.preempted {
                sc.memcg_pos = Some(m);
                return;
            }
            // The memcg's slab objects after its pages (`shrink_slab(gfp, nid, memcg, prio)`).
            if !self.shrinkers.is_empty() {
                self.shrink_slab_in_pass(sc, m);
            }
        }
    }

    /// The memcg after `m` in the pre-order walk of `top`'s subtree. Reclaim's walks step with
    /// it instead of collecting the subtree: the tree does not change during reclaim, and the
    /// machine is borrowed mutably between two steps.
    fn memcg_preorder_next(&self, top: CounterId, m: CounterId) -> Option<CounterId> {
        self.memcg
            .as_ref()
            .expect("cgroups")
            .memory
            .preorder_next(top, m)
    }

    /// kswapd's `age_active_anon` over every memcg.
    pub(super) fn age_active_anon_memcgs(&mut self, sc: &mut ScanControl) {
        if self.memcg.is_none() {
            return;
        }
        let mut cur = Some(ROOT_COUNTER);
        while let Some(m) = cur {
            cur = self.memcg_preorder_next(ROOT_COUNTER, m);
            self.memcg_switch(m);
            if self.lruvec.inactive_is_low(false) {
                self.shrink_active_list(SWAP_CLUSTER_MAX, LRU_ACTIVE_ANON, sc);
            }
            self.memcg_switch(ROOT_COUNTER);
        }
    }

    /// `try_to_free_mem_cgroup_pages` (spec §6.2): limit reclaim of memcg `over`'s subtree
    /// for a charge of `n` pages, on task `t`'s clock, run to its end (it does not yield).
    /// Returns the pages reclaimed.
    pub fn try_to_free_mem_cgroup_pages(
        &mut self,
        over: CounterId,
        n: u64,
        t: &mut TaskCtx,
    ) -> u64 {
        self.try_to_free_mem_cgroup_pages_gfp(over, n, GFP_KERNEL, t)
    }

    /// The same for a charge made with `gfp`: reclaim keeps its context (a NOFS charge's
    /// shrinkers may not enter the filesystem).
    pub fn try_to_free_mem_cgroup_pages_gfp(
        &mut self,
        over: CounterId,
        n: u64,
        gfp: Gfp,
        t: &mut TaskCtx,
    ) -> u64 {
        let hz = self.highest_managed_zone();
        let mut sc = ScanControl::new(gfp, 0, hz, n.max(SWAP_CLUSTER_MAX), false);
        sc.target_memcg = over;
        sc.cost_ns = t.cost_ns;
        sc.quantum_end = u64::MAX;
        let reclaimed = self.do_try_to_free_pages(&mut sc).unwrap_or(0);
        t.cost_ns = sc.cost_ns;
        t.sleep_ns += sc.sleep_ns;
        reclaimed
    }

    /// `prepare_scan_count`'s refault test for `sc`'s target: activations since its last
    /// snapshot, per type.
    pub(super) fn target_refaults_changed(&self, sc: &ScanControl) -> [bool; 2] {
        match &self.memcg {
            Some(mc) if sc.cgroup_reclaim() => {
                let now = mc.subtree_stat(sc.target_memcg).workingset_activate;
                let snap = mc.lruvec(sc.target_memcg, &self.lruvec).refaults;
                [now[ANON] != snap[ANON], now[FILE] != snap[FILE]]
            }
            _ => [
                self.stat.workingset_activate[ANON] != self.lruvec.refaults[ANON],
                self.stat.workingset_activate[FILE] != self.lruvec.refaults[FILE],
            ],
        }
    }

    /// `snapshot_refaults` for `sc`'s target.
    pub(super) fn snapshot_target_refaults(&mut self, sc: &ScanControl) {
        match &mut self.memcg {
            Some(mc) if sc.cgroup_reclaim() => {
                let now = mc.subtree_stat(sc.target_memcg).workingset_activate;
                mc.lruvec_of(sc.target_memcg, &mut self.lruvec).refaults = now;
            }
            _ => self.snapshot_refaults(),
        }
    }

    /// The target's reclaim costs (`sc->anon_cost`, `sc->file_cost`).
    pub(super) fn target_costs(&self, sc: &ScanControl) -> (u64, u64) {
        match &self.memcg {
            Some(mc) if sc.cgroup_reclaim() => {
                let l = mc.lruvec(sc.target_memcg, &self.lruvec);
                (l.anon_cost, l.file_cost)
            }
            _ => (self.lruvec.anon_cost, self.lruvec.file_cost),
        }
    }
}
