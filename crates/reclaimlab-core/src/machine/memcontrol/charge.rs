//! Charging pages to memcgs on the machine (`mm/memcontrol.c`, docs/design/memcg-psi.md §3):
//! `mem_cgroup_charge` after a page is allocated (anonymous fault, page-cache insertion,
//! swap-in), the uncharge when the frame is freed, the swap charge when reclaim gives a page a
//! slot (`mem_cgroup_try_charge_swap`) and its uncharge when the slot is freed, and the path a
//! charge over `memory.max` takes: `try_charge_memcg`'s retry loop around
//! `try_to_free_mem_cgroup_pages`, then the memcg OOM killer (`memory.oom.group`).
//!
//! Abstracted: no per-CPU charge stock (every charge takes exactly its pages from the counter,
//! so `memory.current` is the pages in use, never a stock above them); the loop's stock drain
//! is kept as the extra pass it makes. The kernel's memcg OOM waits for a victim that is still
//! exiting; here the charging task's fault returns and retries a jiffy later, so the
//! oom_reaper can run. A charge that ends without a page (ENOMEM) makes the fault retry a
//! jiffy later (`VM_FAULT_OOM`, which on v2 retries the fault). Page-cache charges of a read's
//! window are forced when their reclaim and OOM path fail (the read itself never fails here).

use super::mem_cgroup::MemCgroups;
use super::{
    find_max_overage, first_over_high, jiffies_to_ns, memcg_memory_event, try_charge_counters,
    MemcgEvent, OverHighLoop, OverHighStep, MAX_RECLAIM_RETRIES, MEMCG_CHARGE_BATCH,
};
use crate::machine::config::CgroupConfig;
use crate::machine::gfp::{Gfp, GFP_KERNEL};
use crate::machine::oom_kill::OomKill;
use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
use crate::machine::psi::PsiGroupId;
use crate::machine::signal::Signal;
use crate::machine::vmstat::VmEvent;
use crate::machine::{Access, Machine, TaskCtx, HZ, JIFFY_NS};

/// How a charge that cannot be had ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeFail {
    /// The charging task was the OOM victim.
    Killed,
    /// Retry the fault later (a victim is exiting, or ENOMEM).
    Retry,
}

impl Machine {
    /// Give the machine its memory cgroups (`[[cgroup]]`); without this call it has none.
    /// Each memcg gets its PSI group under its parent's (`memory.pressure`): the memcgs are
    /// numbered parents first, so creating the groups in id order makes a memcg's PSI group
    /// id its memcg id.
    pub fn setup_memcg(&mut self, cgroups: &[CgroupConfig]) -> Result<(), String> {
        let n = self.frames.len();
        let mc = MemCgroups::new(cgroups, n)?;
        for id in 1..mc.len() as CounterId {
            let parent = mc.memory.parent(id).unwrap_or(ROOT_COUNTER);
            let g = self.psi.add_group(parent as PsiGroupId, self.now)?;
            debug_assert_eq!(g, id as PsiGroupId);
        }
        self.memcg = Some(Box::new(mc));
        Ok(())
    }

    /// The PSI group of `task`: its memcg's (the system group without cgroups; a task in the
    /// root memcg counts in the system group, as the root cgroup's tasks do).
    #[inline]
    pub fn task_psi_group(&self, task: usize) -> PsiGroupId {
        self.task_memcg(task) as PsiGroupId
    }

    /// The memcg `task` runs in (the root without cgroups).
    #[inline]
    pub fn task_memcg(&self, task: usize) -> CounterId {
        match &self.memcg {
            None => ROOT_COUNTER,
            Some(mc) => mc.task_memcg(task),
        }
    }

    /// The memcg frame `pfn` is charged to.
    #[inline]
    pub fn folio_memcg(&self, pfn: u32) -> CounterId {
        match &self.memcg {
            None => ROOT_COUNTER,
            Some(mc) => mc.frame[pfn as usize],
        }
    }

    /// `mem_cgroup_charge` for task `t`'s page `pfn`, just allocated: charge its memcg (or
    /// the swap entry's owner, `owner`), reclaiming and OOM-killing inside it as needed. On
    /// failure the caller frees the page.
    #[inline]
    pub fn mem_cgroup_charge(
        &mut self,
        pfn: u32,
        owner: CounterId,
        t: &mut TaskCtx,
    ) -> Result<(), ChargeFail> {
        if owner == ROOT_COUNTER {
            return Ok(());
        }
        self.try_charge_memcg(owner, 1, t)?;
        if let Some(mc) = &mut self.memcg {
            mc.frame[pfn as usize] = owner;
        }
        self.note_over_high(owner, 1, t);
        Ok(())
    }

    /// After a charge of `n` pages to memcg `id` by task `t` (§4.1): if `id` or an ancestor
    /// is over its `memory.high`, the pages are the task's debt, paid (reclaim, then the
    /// penalty's sleep) once it passes a charge batch. The kernel records a whole 64-page
    /// stock refill as debt and pays on the fault's return to user space; without a stock,
    /// paying at every 64th page charged over high is the same rate.
    #[inline]
    pub(super) fn note_over_high(&mut self, id: CounterId, n: u64, t: &mut TaskCtx) {
        let Some(mc) = &self.memcg else { return };
        if first_over_high(&mc.memory, &mc.swap, id).is_none() {
            return;
        }
        t.memcg_nr_pages_over_high += n;
        if t.memcg_nr_pages_over_high >= MEMCG_CHARGE_BATCH {
            self.mem_cgroup_handle_over_high(id, t);
        }
    }

    /// `mem_cgroup_handle_over_high` (§4.2) for task `t` in memcg `id`: reclaim on the
    /// over-high memcgs of its chain while that helps, then sleep the penalty (6.1's
    /// quadratic delay, capped at 2 s; none at or below HZ/100 jiffies). The sleep is on the
    /// task's clock (`t.sleep_ns`).
    pub fn mem_cgroup_handle_over_high(&mut self, id: CounterId, t: &mut TaskCtx) {
        let nr = std::mem::take(&mut t.memcg_nr_pages_over_high);
        let Some(mut l) = OverHighLoop::new(nr) else {
            return;
        };
        loop {
            let got = self.reclaim_high(id, l.request(), t);
            let mc = self.memcg.as_ref().expect("cgroups");
            let mem = find_max_overage(&mc.memory, id);
            let swap = find_max_overage(&mc.swap, id);
            match l.after_pass(got, mem, swap, HZ) {
                OverHighStep::Again => continue,
                OverHighStep::Done => return,
                OverHighStep::Sleep(j) => {
                    // The penalty's sleep is a memory stall (psi_memstall_enter around the
                    // killable sleep).
                    let ns = jiffies_to_ns(j, HZ);
                    self.psi.memstall_enter(&mut t.psi, self.now + t.cost_ns);
                    t.cost_ns += ns;
                    t.sleep_ns += ns;
                    self.psi.memstall_leave(&mut t.psi, self.now + t.cost_ns);
                    if let Some(mc) = &mut self.memcg {
                        mc.throttled_ns[id as usize] += ns;
                    }
                    return;
                }
            }
        }
    }

    /// `try_to_free_mem_cgroup_pages` as 6.1's callers make it, `try_charge_memcg` and
    /// `reclaim_high` alike: inside a memory stall of the charging task, with the charge's
    /// `gfp` (a page charge's is GFP_KERNEL).
    fn memcg_reclaim_stalled(&mut self, id: CounterId, nr: u64, gfp: Gfp, t: &mut TaskCtx) -> u64 {
        self.psi.memstall_enter(&mut t.psi, self.now + t.cost_ns);
        let got = self.try_to_free_mem_cgroup_pages_gfp(id, nr, gfp, t);
        self.psi.memstall_leave(&mut t.psi, self.now + t.cost_ns);
        got
    }

    /// `reclaim_high`: limit reclaim of `nr` pages on each memcg of `id`'s chain (below the
    /// root) that is over its `memory.high`, counting a `high` event for each.
    fn reclaim_high(&mut self, id: CounterId, nr: u64, t: &mut TaskCtx) -> u64 {
        if self.memcg.is_none() {
            return 0;
        }
        let mut got = 0;
        // Up the chain by parent links, the root left out.
        let mut next = Some(id);
        while let Some(m) = next {
            let memory = &self.memcg.as_ref().expect("cgroups").memory;
            next = memory.parent(m);
            if memory.is_root(m) {
                continue;
            }
            let over = self.memcg.as_ref().is_some_and(|mc| {
                let c = mc.memory.get(m);
                c.usage > c.high
            });
            if !over {
                continue;
            }
            self.memcg_event(m, MemcgEvent::High);
            got += self.memcg_reclaim_stalled(m, nr, GFP_KERNEL, t);
        }
        got
    }

    /// The same for a page whose allocation may not sleep (swap readahead): the counter only,
    /// no reclaim. False: over the limit, free the page.
    pub fn mem_cgroup_charge_nowait(&mut self, pfn: u32, owner: CounterId) -> bool {
        let Some(mc) = &mut self.memcg else {
            return true;
        };
        if owner == ROOT_COUNTER {
            return true;
        }
        if mc.memory.try_charge(owner, 1).is_err() {
            return false;
        }
        mc.frame[pfn as usize] = owner;
        true
    }

    /// A page-cache page the read cannot do without: a full charge, forced if it fails.
    pub fn mem_cgroup_charge_forced(&mut self, pfn: u32, owner: CounterId, t: &mut TaskCtx) {
        if self.mem_cgroup_charge(pfn, owner, t).is_ok() {
            return;
        }
        if let Some(mc) = &mut self.memcg {
            mc.memory.charge(owner, 1);
            mc.frame[pfn as usize] = owner;
        }
    }

    /// `mem_cgroup_uncharge` of a frame being freed (its last user is gone). Out of line:
    /// `free_frame` calls it only with cgroups.
    #[inline(never)]
    pub fn mem_cgroup_uncharge(&mut self, pfn: u32) {
        if let Some(mc) = &mut self.memcg {
            let id = std::mem::replace(&mut mc.frame[pfn as usize], ROOT_COUNTER);
            if id != ROOT_COUNTER {
                mc.memory.uncharge(id, 1);
            }
        }
    }

    /// Migration moves the charge with the page (`mem_cgroup_migrate`).
    #[inline]
    pub fn mem_cgroup_migrate(&mut self, old: u32, new: u32) {
        if let Some(mc) = &mut self.memcg {
            mc.frame[new as usize] = std::mem::replace(&mut mc.frame[old as usize], ROOT_COUNTER);
        }
    }

    /// `mem_cgroup_try_charge_swap` when reclaim gave frame `pfn` (vpage `vp`) a slot. False:
    /// the memcg's `memory.swap.max` refused it (the caller frees the slot and keeps the page).
    pub fn mem_cgroup_try_charge_swap(&mut self, pfn: u32, vp: u32) -> bool {
        let Some(mc) = &mut self.memcg else {
            return true;
        };
        let id = mc.frame[pfn as usize];
        if id == ROOT_COUNTER {
            return true;
        }
        if let Err(over) = mc.swap.try_charge(id, 1) {
            let (events, tree, local) = (&mut mc.events, &mc.memory, mc.localevents);
            memcg_memory_event(events, tree, over, MemcgEvent::SwapMax, local);
            memcg_memory_event(events, tree, id, MemcgEvent::SwapFail, local);
            return false;
        }
        mc.swap_owner.insert(vp, id);
        true
    }

    /// `mem_cgroup_uncharge_swap`: vpage `vp`'s slot is freed (or forgotten by its exiting
    /// owner).
    #[inline(always)]
    pub fn mem_cgroup_uncharge_swap(&mut self, vp: u32) {
        if self.memcg.is_some() {
            self.memcg_uncharge_swap_slot(vp);
        }
    }

    #[cold]
    #[inline(never)]
    fn memcg_uncharge_swap_slot(&mut self, vp: u32) {
        let mc = self.memcg.as_mut().expect("cgroups");
        if let Some(id) = mc.swap_owner.remove(&vp) {
            mc.swap.uncharge(id, 1);
        }
    }

    /// The memcg a swapped-out vpage's slot was charged to (the swap-in charges it again);
    /// its owner's when the slot has none recorded.
    #[inline]
    pub fn swap_entry_memcg(&self, vp: u32) -> CounterId {
        match &self.memcg {
            None => ROOT_COUNTER,
            Some(mc) => match mc.swap_owner.get(&vp) {
                Some(&id) => id,
                None => self
                    .anon_owner(vp)
                    .map_or(ROOT_COUNTER, |t| mc.task_memcg(t)),
            },
        }
    }

    /// Count a fault (and a major one) in memcg `id`'s `memory.stat`.
    #[inline]
    pub fn memcg_count_fault(&mut self, id: CounterId, major: bool) {
        if let Some(mc) = &mut self.memcg {
            let st = &mut mc.stat[id as usize];
            st.pgfault += 1;
            st.pgmajfault += major as u64;
        }
    }

    /// `memcg_memory_event`.
    pub fn memcg_event(&mut self, id: CounterId, e: MemcgEvent) {
        if let Some(mc) = &mut self.memcg {
            let local = mc.localevents;
            memcg_memory_event(&mut mc.events, &mc.memory, id, e, local);
        }
    }

    /// `try_charge_memcg` (spec §3.2) for `n` pages of memcg `id` on task `t`'s clock.
    fn try_charge_memcg(
        &mut self,
        id: CounterId,
        n: u64,
        t: &mut TaskCtx,
    ) -> Result<(), ChargeFail> {
        self.try_charge_memcg_gfp(id, n, GFP_KERNEL, t)
    }

    /// [`try_charge_memcg`](Self::try_charge_memcg) for a charge whose reclaim runs with
    /// `gfp` (a kernel-memory charge: the allocation's context).
    pub(super) fn try_charge_memcg_gfp(
        &mut self,
        id: CounterId,
        n: u64,
        gfp: Gfp,
        t: &mut TaskCtx,
    ) -> Result<(), ChargeFail> {
        let mut batch = n;
        let mut retries = MAX_RECLAIM_RETRIES;
        let mut drained = false;
        loop {
            let mc = self.memcg.as_mut().expect("a charge needs cgroups");
            let over = match try_charge_counters(&mut mc.memory, id, n, &mut batch) {
                Ok(()) => return Ok(()),
                Err(over) => over,
            };
            self.memcg_event(over, MemcgEvent::Max);
            let reclaimed = self.memcg_reclaim_stalled(over, n, gfp, t);
            let margin = self.memcg.as_ref().map_or(0, |mc| mc.memory.margin(over));
            if margin >= n {
                continue;
            }
            // drain_all_stock: no stock here, but the loop makes its pass.
            if !drained {
                drained = true;
                continue;
            }
            if reclaimed > 0 && n <= 8 {
                continue;
            }
            if retries > 0 {
                retries -= 1;
                continue;
            }
            return Err(self.mem_cgroup_oom(over, t));
        }
    }

    /// `mem_cgroup_oom` + `mem_cgroup_out_of_memory` (spec §3.4, §3.5): kill the task of
    /// `over`'s subtree with the highest badness (the later on a tie), and with
    /// `memory.oom.group` every task of the highest such cgroup on its path up to `over`.
    fn mem_cgroup_oom(&mut self, over: CounterId, t: &mut TaskCtx) -> ChargeFail {
        self.memcg_event(over, MemcgEvent::Oom);
        let mc = self.memcg.as_ref().expect("cgroups");
        let in_subtree = |task: usize| {
            let m = mc.task_memcg(task);
            mc.memory.ancestors(m).any(|a| a == over)
        };
        // A victim still exiting: wait for its memory (the fault retries).
        if (0..self.tasks.len()).any(|i| {
            let tm = &self.tasks[i];
            tm.alive && tm.oom_killed && in_subtree(i)
        }) {
            return ChargeFail::Retry;
        }
        let totalpages = {
            let max = mc.memory.get(over).max;
            let swap = mc.swap.get(over).max.min(self.swap.total);
            max.saturating_add(swap).max(1)
        };
        let mut best: Option<(usize, i64)> = None;
        for m in mc.memory.preorder(over) {
            for (i, tm) in self.tasks.iter().enumerate() {
                if mc.task_memcg(i) != m || !tm.alive || tm.oom_killed || tm.oom_score_adj <= -1000
                {
                    continue;
                }
                let points = (tm.rss_anon + tm.swapents) as i64
                    + tm.oom_score_adj as i64 * (totalpages / 1000) as i64;
                if best.is_none_or(|(_, bp)| points >= bp) {
                    best = Some((i, points));
                }
            }
        }
        let Some((victim, badness)) = best else {
            // Nothing to kill: ENOMEM, and the fault retries.
            return ChargeFail::Retry;
        };
        // The highest memory.oom.group cgroup from the victim's memcg up to `over`.
        let vm = mc.task_memcg(victim);
        let mut group = None;
        for a in mc.memory.ancestors(vm) {
            if mc.oom_group[a as usize] {
                group = Some(a);
            }
            if a == over {
                break;
            }
        }
        let mut victims = vec![(victim, badness)];
        if let Some(g) = group {
            for m in mc.memory.preorder(g) {
                for (i, tm) in self.tasks.iter().enumerate() {
                    if mc.task_memcg(i) == m
                        && i != victim
                        && tm.alive
                        && !tm.oom_killed
                        && tm.oom_score_adj > -1000
                    {
                        victims.push((i, 0));
                    }
                }
            }
            self.memcg_event(g, MemcgEvent::OomGroupKill);
        }
        let mut self_killed = false;
        for (v, badness) in victims {
            let vmemcg = self.task_memcg(v);
            self.memcg_event(vmemcg, MemcgEvent::OomKill);
            let m = &mut self.tasks[v];
            m.oom_killed = true;
            self.vm.add(VmEvent::OomKill, 1);
            self.oom_kills.push(OomKill {
                time_ns: self.now + t.cost_ns,
                victim: m.name.clone(),
                victim_task: v,
                trigger_task: t.task,
                rss_pages: m.rss_anon,
                swapents: m.swapents,
                badness,
            });
            self.outbox.raise(Signal::OomKill(v));
            self_killed |= v == t.task;
        }
        if self_killed {
            ChargeFail::Killed
        } else {
            ChargeFail::Retry
        }
    }
}

impl ChargeFail {
    /// What the fault that could not charge its page returns.
    pub fn access(self) -> Access {
        match self {
            ChargeFail::Killed => Access::Killed,
            ChargeFail::Retry => Access::Retry(JIFFY_NS),
        }
    }
}
