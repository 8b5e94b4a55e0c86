//! The fair scheduler's decisions for threads pinned to one CPU, as 6.1's CFS makes them
//! (kernel/sched/fair.c): who keeps a CPU, who waits, and when a waiting thread takes over.
//!
//! Why it matters to reclaim: kswapd shares a CPU with the threads that allocate. Whether a
//! woken kswapd runs at once or waits for the allocating thread's slice to end decides how far
//! free memory falls below the low watermark, and so how often the allocator reclaims itself
//! (docs/MODEL.md, "Development on the fifth sitting's boots", item 13).
//!
//! What is modelled, all threads at nice 0 (weight 1024, so virtual time is CPU time):
//! - each thread's `vruntime` grows by the CPU time it is charged; each CPU keeps a
//!   `min_vruntime` that never goes back;
//! - the running thread keeps its CPU while it stays runnable, until a tick or a wake-up says
//!   otherwise (there is no switch at the end of each of its steps);
//! - a tick (every 1/HZ) with other threads waiting ends its turn if it has run longer than its
//!   slice (the period, `sched_latency` for up to `sched_nr_latency` threads, shared equally,
//!   never below `min_granularity`), or longer than `min_granularity` while its vruntime leads
//!   the leftmost waiter's by more than that slice;
//! - a thread that wakes is placed at max(its vruntime, `min_vruntime` - `sched_latency` / 2)
//!   (sleepers are credited half a period), and ends the running thread's turn at once if that
//!   one's vruntime leads its own by more than `wakeup_granularity`;
//! - when the running thread sleeps or its turn ends, the waiter with the least vruntime runs.
//!
//! The tunables are 6.1's defaults scaled by 1 + log2(CPUs), at most 8 CPUs counted
//! (`SCHED_TUNABLESCALING_LOG`). Not modelled: nice levels, group scheduling, the next, last
//! and skip buddies (the last buddy only acts with at least `sched_nr_latency` threads), the
//! fork-time placement after the leftmost thread (`START_DEBIT`: a thread's first wake-up is
//! placed as a sleeper's), and load balancing between CPUs: threads stay on their home CPU.

use super::ActorId;

/// The scheduler's tunables for a machine (`Default`: all zero, for a machine whose CPUs are
/// never shared).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tunables {
    /// `sysctl_sched_latency`: the period in which every runnable thread should run once.
    pub latency: u64,
    /// `sysctl_sched_min_granularity`: the shortest turn.
    pub min_granularity: u64,
    /// `sysctl_sched_wakeup_granularity`: the lead a woken thread must have to preempt.
    pub wakeup_granularity: u64,
    /// `sched_nr_latency`: beyond this many threads the period grows with their number.
    pub nr_latency: u64,
    /// The tick's period (1/HZ).
    pub tick: u64,
}

impl Tunables {
    /// 6.1's defaults (6 ms, 0.75 ms, 1 ms) for a machine of `cpus` CPUs with a tick every
    /// `tick` ns: `update_sysctl` multiplies them by 1 + ilog2(min(cpus, 8)).
    pub fn for_cpus(cpus: u32, tick: u64) -> Tunables {
        let factor = 1 + u64::from(cpus.clamp(1, 8).ilog2());
        Tunables {
            latency: 6_000_000 * factor,
            min_granularity: 750_000 * factor,
            wakeup_granularity: 1_000_000 * factor,
            nr_latency: 8,
            tick,
        }
    }

    /// `__sched_period`: the time in which `nr` runnable threads should each run once.
    pub fn period(&self, nr: u64) -> u64 {
        if nr > self.nr_latency {
            nr * self.min_granularity
        } else {
            self.latency
        }
    }

    /// `sched_slice` of one of `nr` runnable threads of equal weight: its share of the
    /// period, never below `min_granularity` (6.1's `BASE_SLICE`).
    pub fn slice(&self, nr: u64) -> u64 {
        let nr = nr.max(1);
        (self.period(nr) / nr).max(self.min_granularity)
    }

    /// `place_entity` for a thread waking: credited at most half a period of sleep.
    pub fn place_waking(&self, vruntime: u64, min_vruntime: u64) -> u64 {
        vruntime.max(min_vruntime.saturating_sub(self.latency / 2))
    }

    /// `wakeup_preempt_entity`: does a thread woken at `woken` take the CPU at once from one
    /// running at `curr`?
    pub fn wakeup_preempts(&self, curr: u64, woken: u64) -> bool {
        curr > woken && curr - woken > self.wakeup_granularity
    }

    /// `check_preempt_tick` at a tick, with `nr` runnable threads (the running one included):
    /// does the running thread, `ran` ns into its turn at vruntime `curr`, give up the CPU to
    /// the leftmost waiter at `leftmost`?
    pub fn tick_preempts(&self, nr: u64, ran: u64, curr: u64, leftmost: u64) -> bool {
        let ideal = self.slice(nr);
        if ran > ideal {
            return true;
        }
        ran >= self.min_granularity && curr > leftmost && curr - leftmost > ideal
    }
}

/// One CPU's run queue (its `cfs_rq`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQueue {
    /// The thread that has the CPU: running, or between two of its steps. It stays here while
    /// it sleeps until another thread takes the CPU (the CPU idles meanwhile).
    pub curr: Option<ActorId>,
    /// Runnable threads waiting for the CPU, in the order they came.
    pub waiting: Vec<ActorId>,
    pub min_vruntime: u64,
    /// CPU time the current thread has run since it got the CPU.
    pub ran: u64,
    /// Its turn ends when its present step does (a tick or a wake-up said so).
    pub need_resched: bool,
    /// The last tick looked at: ticks at or before it have been (or needed no) checking.
    pub tick_seen: u64,
    /// Turns ended by a woken thread, and by a tick.
    pub wakeup_preemptions: u64,
    pub tick_preemptions: u64,
    /// Threads that came from another CPU (woken here or taken while waiting there).
    pub migrations: u64,
}

impl RunQueue {
    /// The waiter with the least vruntime (ties: the lower id), and its vruntime.
    pub fn leftmost(&self, vruntime: &[u64]) -> Option<(ActorId, u64)> {
        self.waiting
            .iter()
            .map(|&a| (a, vruntime[a as usize]))
            .min_by_key(|&(a, v)| (v, a))
    }

    /// `update_min_vruntime`: follow the least of the running thread's vruntime (`curr_v`,
    /// if it is on the queue) and the leftmost waiter's, never going back.
    pub fn update_min_vruntime(&mut self, curr_v: Option<u64>, vruntime: &[u64]) {
        let left = self.leftmost(vruntime).map(|(_, v)| v);
        let v = match (curr_v, left) {
            (Some(c), Some(l)) => c.min(l),
            (Some(c), None) => c,
            (None, Some(l)) => l,
            (None, None) => return,
        };
        self.min_vruntime = self.min_vruntime.max(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: u64 = 4_000_000;

    #[test]
    fn tunables_scale_with_the_log_of_the_cpus() {
        // 6.1 on the validation guest's 2 vCPUs: factor 2.
        let t = Tunables::for_cpus(2, TICK);
        assert_eq!(
            (t.latency, t.min_granularity, t.wakeup_granularity),
            (12_000_000, 1_500_000, 2_000_000)
        );
        // 1 CPU: factor 1; 4: 3; 64 counts as 8: 4.
        assert_eq!(Tunables::for_cpus(1, TICK).latency, 6_000_000);
        assert_eq!(Tunables::for_cpus(4, TICK).min_granularity, 2_250_000);
        assert_eq!(Tunables::for_cpus(64, TICK).wakeup_granularity, 4_000_000);
    }

    #[test]
    fn slices_share_the_period_and_stop_at_the_minimum() {
        let t = Tunables::for_cpus(2, TICK);
        assert_eq!(t.slice(1), 12_000_000);
        assert_eq!(t.slice(2), 6_000_000);
        assert_eq!(t.slice(3), 4_000_000);
        // 8 threads: 12 / 8 = 1.5 ms, the minimum itself; 9: the period grows to 9 x 1.5 ms.
        assert_eq!(t.slice(8), 1_500_000);
        assert_eq!(t.period(9), 13_500_000);
        assert_eq!(t.slice(9), 1_500_000);
    }

    #[test]
    fn a_sleeper_is_credited_half_a_period_at_most() {
        let t = Tunables::for_cpus(2, TICK);
        // Slept long: placed 6 ms behind min_vruntime.
        assert_eq!(t.place_waking(1_000_000, 50_000_000), 44_000_000);
        // Slept briefly: keeps its own vruntime.
        assert_eq!(t.place_waking(47_000_000, 50_000_000), 47_000_000);
        // Early in a run there is nothing to go back from.
        assert_eq!(t.place_waking(0, 2_000_000), 0);
    }

    #[test]
    fn a_woken_thread_preempts_only_with_more_than_the_wakeup_granularity() {
        let t = Tunables::for_cpus(2, TICK);
        // A long sleeper 6 ms behind preempts; one 2 ms behind does not (strictly more).
        assert!(t.wakeup_preempts(50_000_000, 44_000_000));
        assert!(!t.wakeup_preempts(50_000_000, 48_000_000));
        assert!(t.wakeup_preempts(50_000_000, 47_999_999));
        assert!(!t.wakeup_preempts(50_000_000, 51_000_000));
    }

    #[test]
    fn a_tick_ends_a_turn_past_its_slice_or_too_far_ahead() {
        let t = Tunables::for_cpus(2, TICK);
        // Two threads: slice 6 ms.
        assert!(t.tick_preempts(2, 6_000_001, 0, 0));
        assert!(!t.tick_preempts(2, 6_000_000, 0, 0));
        // Inside the slice, past min_granularity, 6 ms + 1 ahead of the leftmost: preempted.
        assert!(t.tick_preempts(2, 2_000_000, 20_000_001, 14_000_000));
        assert!(!t.tick_preempts(2, 2_000_000, 20_000_000, 14_000_000));
        // Not yet min_granularity into its turn: however far ahead, it keeps the CPU.
        assert!(!t.tick_preempts(2, 1_499_999, 90_000_000, 0));
    }

    #[test]
    fn min_vruntime_follows_the_least_and_never_goes_back() {
        let v = vec![10, 30, 20];
        let mut rq = RunQueue {
            waiting: vec![1, 2],
            ..RunQueue::default()
        };
        rq.update_min_vruntime(Some(25), &v);
        assert_eq!(rq.min_vruntime, 20);
        assert_eq!(rq.leftmost(&v), Some((2, 20)));
        rq.waiting.clear();
        rq.update_min_vruntime(Some(5), &v);
        assert_eq!(rq.min_vruntime, 20, "never goes back");
        rq.update_min_vruntime(None, &v);
        assert_eq!(rq.min_vruntime, 20);
    }
}
