//! CPU time: each machine has a set of CPUs; every actor runs on one of them (its home CPU)
//! and each step charges the CPU time its work cost.
//!
//! Two disciplines. `dedicated` (the default) never delays anyone: a CPU's busy time is
//! accounted, but an actor due while its CPU is still busy runs at once, as if it had a CPU of
//! its own (the model the seed experiments assume, and the right one when CPUs outnumber busy
//! threads). `shared` models contention as 6.1's fair scheduler decides it (`fair.rs`): a
//! thread due while another has its CPU waits, and the wait is counted as run-queue time; the
//! thread that has the CPU keeps it between its steps until it sleeps, a tick ends its slice,
//! or a woken thread far enough behind it in virtual time preempts it. Threads are pinned to
//! their home CPU (no load balancing): a simplification that keeps the schedule easy to read.
//! Actors that stand for interrupt handlers (a block device's completions) are not threads:
//! they run when due on either discipline, as an interrupt preempts whatever runs.
//!
//! Decisions are taken lazily, when an actor comes to run: a waiting thread asks again when
//! the step under way ends (it cannot know before whether the running thread will sleep),
//! and the ticks passed since the last look are checked then.

use super::fair::{RunQueue, Tunables};
use super::ActorId;

/// One CPU's accounting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// CPU time charged by the actors that ran on it.
    pub busy_ns: u64,
    /// Time threads spent runnable but waiting for it (`shared` only).
    pub runq_wait_ns: u64,
    /// When the work charged so far ends.
    pub busy_until: u64,
    /// Who has it and who waits (`shared` only).
    pub rq: RunQueue,
}

#[derive(Debug, Clone, Default)]
pub struct Cpus {
    /// Delay threads while their CPU is taken.
    pub shared: bool,
    pub cpu: Vec<CpuTime>,
    /// Threads move to an idle CPU (`shared` only): a thread waking while its own CPU is
    /// taken runs on an idle one (6.1's `select_idle_sibling`), and a thread waiting for its
    /// CPU runs on one that has gone idle (newidle balancing). Off: pinned to their home CPU.
    pub migrate: bool,
    /// The scheduler's tunables for this machine's CPU count.
    pub tunables: Tunables,
    /// Each actor's virtual run time (CPU time at nice 0), by id.
    vruntime: Vec<u64>,
    /// The CPU each thread last ran or waited on (`NOWHERE`: not yet, its home then), by id.
    on_cpu: Vec<u32>,
}

/// `on_cpu` of a thread that has not come to run yet.
const NOWHERE: u32 = u32::MAX;

/// What `admit` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Run now, on this CPU.
    Run(u32),
    /// Ask again at this time.
    Wait(u64),
}

impl Cpus {
    /// `n` CPUs with a scheduler tick every `tick` ns; threads may `migrate` when `shared`.
    pub fn new(n: u32, shared: bool, migrate: bool, tick: u64) -> Cpus {
        Cpus {
            shared,
            cpu: vec![CpuTime::default(); n.max(1) as usize],
            migrate,
            tunables: Tunables::for_cpus(n.max(1), tick.max(1)),
            vruntime: Vec::new(),
            on_cpu: Vec::new(),
        }
    }

    /// Actor `who`, whose home is `cpu`, is due at `now`: where it runs, or when to ask again
    /// (a wait while the CPU is busy is counted). `thread`: it is scheduled (an interrupt
    /// handler is not). `due(a)` is when actor `a` is next due, if at all: a thread that has
    /// a CPU or waits for it and is not due by now has gone to sleep.
    #[inline]
    pub fn admit(
        &mut self,
        cpu: u32,
        now: u64,
        who: ActorId,
        thread: bool,
        due: impl Fn(ActorId) -> Option<u64>,
    ) -> Admit {
        if !self.shared || !thread {
            return Admit::Run(cpu);
        }
        let runnable = |a: ActorId| due(a).is_some_and(|d| d <= now);
        self.contended(cpu, now, who, &runnable)
    }

    fn contended(
        &mut self,
        home: u32,
        now: u64,
        who: ActorId,
        runnable: &dyn Fn(ActorId) -> bool,
    ) -> Admit {
        let w = who as usize;
        if self.vruntime.len() <= w {
            self.vruntime.resize(w + 1, 0);
            self.on_cpu.resize(w + 1, NOWHERE);
        }
        let mut i = match self.on_cpu[w] {
            NOWHERE => self.index(home),
            c => c as usize,
        };
        if self.migrate {
            let rq = &self.cpu[i].rq;
            let waking = rq.curr != Some(who) && !rq.waiting.contains(&who);
            if waking && !self.idle(i, now, who, runnable) {
                // Its own CPU is taken: it wakes on an idle one, if there is one.
                if let Some(j) = self.idle_cpu(i, now, who, runnable) {
                    self.move_thread(who, i, j);
                    i = j;
                }
            }
        }
        self.on_cpu[w] = i as u32;
        let Some(retry) = self.decide(i, now, who, runnable) else {
            return Admit::Run(i as u32);
        };
        // (A thread that holds its CPU and is due before its own step there ends stays: it
        // cannot run on two CPUs at once.)
        if self.migrate && self.cpu[i].rq.curr != Some(who) {
            if let Some(j) = self.idle_cpu(i, now, who, runnable) {
                // A CPU has gone idle: it takes the waiting thread.
                self.move_thread(who, i, j);
                let rq = &mut self.cpu[j].rq;
                rq.curr = Some(who);
                rq.ran = 0;
                rq.need_resched = false;
                rq.tick_seen = rq.tick_seen.max(now);
                self.on_cpu[w] = j as u32;
                return Admit::Run(j as u32);
            }
        }
        // The wait until then is run-queue time (an ask again at once is not).
        self.cpu[i].runq_wait_ns += retry - now;
        Admit::Wait(retry)
    }

    /// CPU `i` is idle at `now` for `who`: no step under way, and no runnable thread but
    /// `who` has it or waits for it.
    fn idle(&self, i: usize, now: u64, who: ActorId, runnable: &dyn Fn(ActorId) -> bool) -> bool {
        let c = &self.cpu[i];
        let other = |a: ActorId| a != who && runnable(a);
        c.busy_until <= now
            && !c.rq.curr.is_some_and(other)
            && !c.rq.waiting.iter().any(|&a| other(a))
    }

    /// The first CPU but `i` that is idle for `who`.
    fn idle_cpu(
        &self,
        i: usize,
        now: u64,
        who: ActorId,
        runnable: &dyn Fn(ActorId) -> bool,
    ) -> Option<usize> {
        (0..self.cpu.len()).find(|&j| j != i && self.idle(j, now, who, runnable))
    }

    /// Thread `who` leaves CPU `i` for `j`: its vruntime keeps its distance from the CPU's
    /// `min_vruntime` (6.1 takes the old one off when it leaves and adds the new one).
    fn move_thread(&mut self, who: ActorId, i: usize, j: usize) {
        let w = who as usize;
        // Both CPUs' min_vruntime as of now: the one left follows its running thread (if
        // another), the idle one its waiters if any.
        let curr_v = self.cpu[i]
            .rq
            .curr
            .filter(|&k| k != who)
            .map(|k| self.vruntime[k as usize]);
        self.cpu[i].rq.update_min_vruntime(curr_v, &self.vruntime);
        self.cpu[j].rq.update_min_vruntime(None, &self.vruntime);
        let (from, to) = (self.cpu[i].rq.min_vruntime, self.cpu[j].rq.min_vruntime);
        self.vruntime[w] = self.vruntime[w].saturating_sub(from) + to;
        self.cpu[j].rq.migrations += 1;
        let rq = &mut self.cpu[i].rq;
        rq.waiting.retain(|&a| a != who);
        if rq.curr == Some(who) {
            rq.curr = None;
        }
        if rq.waiting.is_empty() {
            // Nobody left to hand the CPU to.
            rq.need_resched = false;
        }
    }

    /// The fair scheduler's decision on CPU `i` for `who`: `None` if it runs now, or when to
    /// ask again.
    fn decide(
        &mut self,
        i: usize,
        now: u64,
        who: ActorId,
        runnable: &dyn Fn(ActorId) -> bool,
    ) -> Option<u64> {
        let t = self.tunables;
        let vr = &mut self.vruntime;
        let c = &mut self.cpu[i];
        let rq = &mut c.rq;
        if c.busy_until > now {
            // A step is under way: `who` wakes (or asks again) and waits for its end.
            if rq.curr != Some(who) && !rq.waiting.contains(&who) {
                // The running thread's vruntime as of now: its step was charged when it began.
                let curr_v = rq
                    .curr
                    .map(|k| vr[k as usize].saturating_sub(c.busy_until - now));
                wake(&t, rq, vr, who, now, curr_v);
            }
            return Some(c.busy_until);
        }
        // The CPU is between steps. A thread that had it or waited and is not due has slept.
        if rq.curr.is_some_and(|k| k != who && !runnable(k)) {
            rq.curr = None;
        }
        rq.waiting.retain(|&a| a == who || runnable(a));
        if rq.curr != Some(who) && !rq.waiting.contains(&who) {
            let curr_v = rq.curr.map(|k| vr[k as usize]);
            wake(&t, rq, vr, who, now, curr_v);
        }
        if let Some(k) = rq.curr {
            if !rq.need_resched && !rq.waiting.is_empty() {
                // The ticks since the last look (only those with threads waiting count).
                let tick = now / t.tick * t.tick;
                if tick > rq.tick_seen {
                    rq.tick_seen = tick;
                    let (_, left) = rq.leftmost(vr).expect("a waiter");
                    let nr = 1 + rq.waiting.len() as u64;
                    if t.tick_preempts(nr, rq.ran, vr[k as usize], left) {
                        rq.need_resched = true;
                        rq.tick_preemptions += 1;
                    }
                }
            }
            if !rq.need_resched {
                return if k == who { None } else { Some(now) };
            }
            // Its turn is over: it waits with the others (it may still be the leftmost).
            rq.waiting.push(k);
        }
        rq.update_min_vruntime(None, vr);
        let (next, _) = rq.leftmost(vr).expect("`who` at least waits");
        rq.waiting.retain(|&a| a != next);
        rq.curr = Some(next);
        rq.ran = 0;
        rq.need_resched = false;
        rq.tick_seen = rq.tick_seen.max(now);
        (next != who).then_some(now)
    }

    /// Actor `who`'s step that began at `now` on `cpu` cost `ns` of CPU time.
    #[inline]
    pub fn charge(&mut self, cpu: u32, now: u64, who: ActorId, ns: u64) {
        let shared = self.shared;
        if shared {
            if let Some(v) = self.vruntime.get_mut(who as usize) {
                *v += ns;
            }
        }
        let c = self.slot(cpu);
        c.busy_ns += ns;
        c.busy_until = c.busy_until.max(now + ns);
        if shared && c.rq.curr == Some(who) {
            c.rq.ran += ns;
        }
    }

    /// Every CPU but `cpu` loses `ns` at `now` (an interrupt it had to handle): work charged
    /// there ends that much later. Cold: only IPIs (Xen's TLB flushes) do this.
    #[cold]
    pub fn steal_others(&mut self, cpu: u32, now: u64, ns: u64) {
        let me = cpu as usize % self.cpu.len();
        for (i, c) in self.cpu.iter_mut().enumerate() {
            if i != me {
                c.busy_ns += ns;
                c.busy_until = c.busy_until.max(now) + ns;
            }
        }
    }

    /// The index of `cpu`; a CPU number past the last wraps around. Charged on every event:
    /// an actor's CPU is nearly always in range, and the test skips a division.
    #[inline]
    fn index(&self, cpu: u32) -> usize {
        let n = self.cpu.len();
        let i = cpu as usize;
        if i < n {
            i
        } else {
            i % n
        }
    }

    #[inline]
    fn slot(&mut self, cpu: u32) -> &mut CpuTime {
        let i = self.index(cpu);
        &mut self.cpu[i]
    }

    pub fn busy_ns(&self) -> u64 {
        self.cpu.iter().map(|c| c.busy_ns).sum()
    }

    pub fn runq_wait_ns(&self) -> u64 {
        self.cpu.iter().map(|c| c.runq_wait_ns).sum()
    }
}

/// Thread `who` wakes on a CPU whose running thread (if any) is at vruntime `curr_v`: it is
/// placed, queued, and may end the running thread's turn (`check_preempt_wakeup`).
fn wake(
    t: &Tunables,
    rq: &mut RunQueue,
    vr: &mut [u64],
    who: ActorId,
    now: u64,
    curr_v: Option<u64>,
) {
    rq.update_min_vruntime(curr_v, vr);
    let w = who as usize;
    vr[w] = t.place_waking(vr[w], rq.min_vruntime);
    if rq.waiting.is_empty() {
        // Ticks before anyone waited found the running thread alone: nothing to check.
        rq.tick_seen = rq.tick_seen.max(now);
    }
    rq.waiting.push(who);
    if let Some(c) = curr_v {
        if !rq.need_resched && t.wakeup_preempts(c, vr[w]) {
            rq.need_resched = true;
            rq.wakeup_preemptions += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const TICK: u64 = 4_000_000;
    const MS: u64 = 1_000_000;

    #[test]
    fn dedicated_accounts_without_delay() {
        let mut c = Cpus::new(2, false, true, TICK);
        assert_eq!(c.admit(0, 10, 1, true, |_| Some(10)), Admit::Run(0));
        c.charge(0, 10, 1, 100);
        assert_eq!(
            c.admit(0, 50, 2, true, |_| Some(50)),
            Admit::Run(0),
            "dedicated never delays"
        );
        c.charge(0, 50, 2, 100);
        assert_eq!(c.cpu[0].busy_ns, 200);
        assert_eq!(c.runq_wait_ns(), 0);
    }

    /// A thread's behaviour: the CPU time of a step begun at `t`, and when it is next due
    /// (`None`: it sleeps for good).
    type Behaviour = Box<dyn Fn(u64) -> (u64, Option<u64>)>;

    /// A minimal event loop over a 2-CPU machine, as `World::step` drives it: each actor is
    /// due once, in (time, order scheduled) order, from its start; all have home CPU 0 unless
    /// `homes` says otherwise. Returns who ran when and where, as (start, id, cpu).
    fn run_on(
        actors: Vec<(u64, Behaviour)>,
        until: u64,
        thread: &[bool],
        migrate: bool,
        homes: &[u32],
    ) -> (Cpus, Vec<(u64, u32, u32)>) {
        let mut cpus = Cpus::new(2, true, migrate, TICK);
        let mut queue: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut due: Vec<Option<u64>> = vec![None; actors.len()];
        let mut seq = 0;
        for (id, (start, _)) in actors.iter().enumerate() {
            seq += 1;
            queue.insert((*start, seq), id as u32);
            due[id] = Some(*start);
        }
        let mut ran = Vec::new();
        while let Some(((now, _), id)) = queue.pop_first() {
            if now > until {
                break;
            }
            due[id as usize] = None;
            let d = due.clone();
            let home = homes.get(id as usize).copied().unwrap_or(0);
            let next = match cpus.admit(home, now, id, thread[id as usize], |a| d[a as usize]) {
                Admit::Wait(t) => Some(t),
                Admit::Run(cpu) => {
                    let (cost, next) = (actors[id as usize].1)(now);
                    cpus.charge(cpu, now, id, cost);
                    ran.push((now, id, cpu));
                    next
                }
            };
            if let Some(t) = next {
                seq += 1;
                queue.insert((t.max(now), seq), id);
                due[id as usize] = Some(t.max(now));
            }
        }
        (cpus, ran)
    }

    /// `run_on` with every thread pinned to CPU 0; who ran when, as (start, id).
    fn run(actors: Vec<(u64, Behaviour)>, until: u64, thread: &[bool]) -> (Cpus, Vec<(u64, u32)>) {
        let (cpus, ran) = run_on(actors, until, thread, false, &[]);
        (cpus, ran.into_iter().map(|(t, id, _)| (t, id)).collect())
    }

    /// A thread that computes forever in steps of 100 us.
    fn hog() -> Behaviour {
        Box::new(|t| (100_000, Some(t + 100_000)))
    }

    /// The start of each turn: (time, who) whenever the runner changes.
    fn turns(ran: &[(u64, u32)]) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = Vec::new();
        for &(t, id) in ran {
            if out.last().map(|&(_, w)| w) != Some(id) {
                out.push((t, id));
            }
        }
        out
    }

    #[test]
    fn two_busy_threads_take_turns_of_a_slice_ended_by_the_next_tick() {
        // Two threads on a 2-CPU machine's CPU 0: slice 6 ms, so each turn ends at the first
        // tick (every 4 ms) past 6 ms of running: 8 ms turns. Thread 1 wakes 50 us in with
        // nothing to be credited (min_vruntime 50 us) and too little lead to preempt.
        let (cpus, ran) = run(vec![(0, hog()), (50_000, hog())], 40 * MS, &[true, true]);
        assert_eq!(
            turns(&ran),
            vec![
                (0, 0),
                (8 * MS, 1),
                (16 * MS, 0),
                (24 * MS, 1),
                (32 * MS, 0),
                (40 * MS, 1)
            ]
        );
        assert_eq!(cpus.cpu[0].rq.tick_preemptions, 5);
        assert_eq!(cpus.cpu[0].rq.wakeup_preemptions, 0);
        // Each waited its turns: 8 ms at a time (the first 7.95 ms), and thread 0 the first
        // step of thread 1's turn at 40 ms.
        assert_eq!(cpus.runq_wait_ns(), 5 * 8 * MS - 50_000 + 100_000);
    }

    #[test]
    fn a_long_sleeper_preempts_at_once_and_a_recent_one_waits_for_the_tick() {
        // A hog runs alone; a "kswapd" wakes at 50 ms and 51.5 ms and runs 1 ms each time.
        let kswapd: Behaviour = Box::new(|t| {
            (
                1_000_000,
                if t < 51 * MS {
                    Some(t.max(51_500_000))
                } else {
                    None
                },
            )
        });
        let (cpus, ran) = run(vec![(0, hog()), (50 * MS, kswapd)], 60 * MS, &[true, true]);
        let t = turns(&ran);
        // Placed at min_vruntime - 6 ms = 44 ms against the hog's 50 ms: a lead of 6 ms over
        // the 2 ms granularity, so it runs when the hog's step under way ends.
        assert_eq!(t[1], (50 * MS, 1));
        // Its first step ran it to 45 ms of vruntime; waking again 0.5 ms later it is placed
        // at its own 45 ms, 5.5 ms behind the hog: it preempts once more.
        assert_eq!(t[2], (51 * MS, 0));
        assert_eq!(t[3], (51_500_000, 1));
        assert_eq!(cpus.cpu[0].rq.wakeup_preemptions, 2);
    }

    #[test]
    fn a_sleeper_close_behind_waits_for_the_tick() {
        // Thread 1's first turn (8-16 ms) ends in a 1 ms sleep. Waking at 17 ms at its own
        // vruntime (8 ms, more than min_vruntime - 6 ms), it is 1 ms behind thread 0, under
        // the 2 ms granularity: it waits. At the 20 ms tick thread 0 has run 4 ms of its 6 ms
        // slice and leads by 4 ms, under the slice; at 24 ms it has run past its slice.
        let sleeper: Behaviour = Box::new(|t| {
            if (8 * MS..16 * MS - 100_000).contains(&t) || t >= 17 * MS {
                (100_000, Some(t + 100_000))
            } else {
                (100_000, Some(17 * MS))
            }
        });
        let (cpus, ran) = run(vec![(0, hog()), (50_000, sleeper)], 30 * MS, &[true, true]);
        let t = turns(&ran);
        assert_eq!(t[..4], [(0, 0), (8 * MS, 1), (16 * MS, 0), (24 * MS, 1)]);
        assert_eq!(cpus.cpu[0].rq.wakeup_preemptions, 0);
    }

    #[test]
    fn an_interrupt_handler_runs_at_once_while_the_cpu_is_taken() {
        let irq: Behaviour = Box::new(|t| (0, if t < 3 * MS { Some(t + MS) } else { None }));
        let (cpus, ran) = run(vec![(0, hog()), (550_000, irq)], 5 * MS, &[true, false]);
        let irqs: Vec<u64> = ran.iter().filter(|r| r.1 == 1).map(|r| r.0).collect();
        assert_eq!(irqs, vec![550_000, 1_550_000, 2_550_000, 3_550_000]);
        assert_eq!(cpus.runq_wait_ns(), 0);
    }

    #[test]
    fn a_thread_that_sleeps_gives_the_cpu_to_the_leftmost_waiter() {
        // Thread 2 runs 0.5 ms first and naps 0.1 ms; thread 0 computes from 0.1 ms to 3.5 ms
        // and sleeps; thread 1 woke at 1 ms. Thread 2 has run before (vruntime 0.5 ms), thread
        // 1 not (0): 1 goes first though it woke last.
        let burst: Behaviour =
            Box::new(|t| (100_000, (t < 3_500_000 - 100_000).then_some(t + 100_000)));
        let early: Behaviour =
            Box::new(|t| (500_000, Some(if t == 0 { 600_000 } else { t + 500_000 })));
        let (_, ran) = run(
            vec![(100_000, burst), (MS, hog()), (0, early)],
            3_900_000,
            &[true, true, true],
        );
        assert_eq!(turns(&ran), vec![(0, 2), (500_000, 0), (3_500_000, 1)]);
    }

    #[test]
    fn with_migration_a_thread_wakes_on_an_idle_cpu() {
        // Both threads' home is CPU 0; the second wakes while the first has it and runs on
        // CPU 1 at once, without waiting.
        let (cpus, ran) = run_on(
            vec![(0, hog()), (50_000, hog())],
            2 * MS,
            &[true, true],
            true,
            &[],
        );
        assert!(ran.iter().filter(|r| r.1 == 0).all(|r| r.2 == 0));
        assert!(ran.iter().filter(|r| r.1 == 1).all(|r| r.2 == 1));
        assert_eq!(ran.iter().find(|r| r.1 == 1).map(|r| r.0), Some(50_000));
        assert_eq!(cpus.runq_wait_ns(), 0);
    }

    #[test]
    fn with_migration_an_idle_cpu_takes_a_waiting_thread() {
        // Threads 0 and 1 compute on CPUs 0 and 1; thread 2 (home 0) wakes at 1 ms and waits
        // on CPU 0. Thread 1 sleeps at 3 ms: thread 2 runs on CPU 1 when its next ask comes
        // (the end of thread 0's step under way), not after thread 0's 8 ms turn.
        // Thread 1 computes until 3 ms and sleeps for good.
        let threads = || -> Vec<(u64, Behaviour)> {
            let short: Behaviour =
                Box::new(|t| (100_000, (t < 3 * MS - 100_000).then_some(t + 100_000)));
            vec![(0, hog()), (0, short), (MS, hog())]
        };
        let (cpus, ran) = run_on(threads(), 5 * MS, &[true, true, true], true, &[0, 1, 0]);
        let first = ran.iter().find(|r| r.1 == 2).copied();
        assert_eq!(first, Some((3 * MS, 2, 1)));
        assert!(ran.iter().filter(|r| r.1 == 0).all(|r| r.2 == 0));
        // Thread 2 waited 2 ms on CPU 0.
        assert_eq!(cpus.cpu[0].runq_wait_ns, 2 * MS);
        // Pinned, it waits for CPU 0 until thread 0's turn ends at the 8 ms tick.
        let (_, ran) = run_on(threads(), 9 * MS, &[true, true, true], false, &[0, 1, 0]);
        assert_eq!(ran.iter().find(|r| r.1 == 2).copied(), Some((8 * MS, 2, 0)));
    }
}
