//! The OOM killer (`mm/oom_kill.c`, core-mm §3.5): when reclaim cannot help, pick the task
//! with the highest badness and kill it; its memory comes back when the oom_reaper (an actor)
//! or its own exit tears its address space down.

use super::gfp::{self, Gfp};
use super::signal::Signal;
use super::vmstat::VmEvent;
use super::watermark::alloc_flags::*;
use super::{Access, Machine, TaskCtx, JIFFY_NS, PAGE_ALLOC_COSTLY_ORDER, ZONE_NORMAL};

/// One recorded OOM kill.
#[derive(Debug, Clone, PartialEq)]
pub struct OomKill {
    pub time_ns: u64,
    pub victim: String,
    pub victim_task: usize,
    pub trigger_task: usize,
    pub rss_pages: u64,
    pub swapents: u64,
    pub badness: i64,
}

impl Machine {
    /// `__alloc_pages_may_oom` + `out_of_memory` (core-mm §3.5).
    pub(super) fn may_oom(
        &mut self,
        gfp: Gfp,
        order: u32,
        hz: usize,
        mt: usize,
        t: &mut TaskCtx,
    ) -> Result<u32, Access> {
        // Someone may have freed memory meanwhile: one last try at the high watermark.
        if let Some(p) = self.get_page_from_freelist(order, ALLOC_WMARK_HIGH | ALLOC_CPUSET, hz, mt)
        {
            return Ok(p);
        }
        if order > PAGE_ALLOC_COSTLY_ORDER
            || gfp & (gfp::__GFP_RETRY_MAYFAIL | gfp::__GFP_THISNODE) != 0
            || hz < ZONE_NORMAL
        {
            return Err(Access::Retry(JIFFY_NS));
        }
        if gfp & gfp::__GFP_FS == 0 {
            // A global OOM without __GFP_FS reports progress without killing (the caller loops).
            t.no_progress_loops = 0;
            return Err(Access::Retry(JIFFY_NS));
        }
        if self.oom_victim_pending.is_some() {
            // A victim is still exiting: wait for its memory instead of killing another task.
            t.no_progress_loops = 0;
            return Err(Access::Retry(JIFFY_NS));
        }
        let Some((victim, badness)) = self.select_bad_process() else {
            self.oom_panic = Some("Out of memory and no killable processes".to_string());
            self.outbox.raise(Signal::Panic);
            return Err(Access::Killed);
        };
        self.oom_kill_process(victim, badness, t.task, self.now + t.cost_ns);
        t.no_progress_loops = 0;
        if victim == t.task {
            Err(Access::Killed)
        } else {
            Err(Access::Retry(JIFFY_NS))
        }
    }

    /// `select_bad_process`: the task with the highest badness (rss and swap entries, moved
    /// by `oom_score_adj`), if any may be killed.
    fn select_bad_process(&self) -> Option<(usize, i64)> {
        let totalpages = self.total_managed_pages() + self.swap.total;
        self.tasks
            .iter()
            .enumerate()
            .filter(|(_, m)| m.alive && !m.oom_killed && m.oom_score_adj > -1000)
            .map(|(i, m)| {
                let points = (m.rss_anon + m.swapents) as i64
                    + m.oom_score_adj as i64 * totalpages as i64 / 1000;
                (i, points)
            })
            // Highest badness wins; ties go to the earlier task (deterministic).
            .fold(None::<(usize, i64)>, |best, (i, p)| match best {
                Some((_, bp)) if bp >= p => best,
                _ => Some((i, p)),
            })
    }

    /// `oom_kill_process`: kill `victim` at `at` (on behalf of `trigger`).
    fn oom_kill_process(&mut self, victim: usize, badness: i64, trigger: usize, at: u64) {
        let m = &mut self.tasks[victim];
        m.oom_killed = true;
        self.vm.add(VmEvent::OomKill, 1);
        self.oom_kills.push(OomKill {
            time_ns: at,
            victim: m.name.clone(),
            victim_task: victim,
            trigger_task: trigger,
            rss_pages: m.rss_anon,
            swapents: m.swapents,
            badness,
        });
        self.oom_victim_pending = Some(victim);
        self.outbox.raise(Signal::OomKill(victim));
    }

    /// `out_of_memory` called by kswapd (the multi-generational LRU's `min_ttl_ms`): no task
    /// triggered it, so the victim stands as its own trigger in the record. Nothing happens
    /// while an earlier victim is still exiting or when no task may be killed (kswapd does not
    /// panic). Returns whether it killed.
    pub(crate) fn oom_kill_by_kswapd(&mut self, at: u64) -> bool {
        if self.oom_victim_pending.is_some() {
            return false;
        }
        let Some((victim, badness)) = self.select_bad_process() else {
            return false;
        };
        self.oom_kill_process(victim, badness, victim, at);
        true
    }

    /// The oom_reaper's work on the victim: its address space goes back, and the next kill
    /// may happen.
    pub fn oom_reap(&mut self, task: usize) {
        self.exit_mmap(task);
        self.oom_victim_pending = None;
    }
}
