//! CPU time: each machine has a set of CPUs; every actor runs on one of them (its home CPU)
//! and each step charges the CPU time its work cost.
//!
//! Two disciplines. `dedicated` (the default) never delays anyone: a CPU's busy time is
//! accounted, but an actor due while its CPU is still busy runs at once, as if it had a CPU of
//! its own (today's results, and the right model when CPUs outnumber busy threads). `shared`
//! models contention: an actor due while its CPU is busy waits until the CPU is free, and the
//! wait is counted as run-queue time. The first actor to wait holds the CPU's next turn, so two
//! busy threads on one CPU take turns chunk by chunk (round robin) instead of the running one
//! keeping it. Actors are pinned to their home CPU (no load balancing): a deliberate
//! simplification that keeps the schedule deterministic and easy to read.

use super::ActorId;

/// One CPU's accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// CPU time charged by the actors that ran on it.
    pub busy_ns: u64,
    /// Time actors spent due but waiting for it (`shared` only).
    pub runq_wait_ns: u64,
    /// When the work charged so far ends.
    pub busy_until: u64,
    /// The actor that has waited for this CPU and runs on it next.
    pub next_turn: Option<ActorId>,
}

#[derive(Debug, Clone, Default)]
pub struct Cpus {
    /// Delay actors while their CPU is busy.
    pub shared: bool,
    pub cpu: Vec<CpuTime>,
}

impl Cpus {
    pub fn new(n: u32, shared: bool) -> Cpus {
        Cpus {
            shared,
            cpu: vec![CpuTime::default(); n.max(1) as usize],
        }
    }

    /// Actor `who` on `cpu` is due at `now`: `None` if it may run, or the time to try again
    /// (the wait is counted). `still_waiting(a)` says whether actor `a`, which holds the next
    /// turn, is still due by now (a turn held by an actor that went elsewhere lapses).
    #[inline]
    pub fn admit(
        &mut self,
        cpu: u32,
        now: u64,
        who: ActorId,
        still_waiting: impl Fn(ActorId) -> bool,
    ) -> Option<u64> {
        if !self.shared {
            return None;
        }
        let c = self.slot(cpu);
        if c.busy_until > now {
            c.runq_wait_ns += c.busy_until - now;
            c.next_turn.get_or_insert(who);
            return Some(c.busy_until);
        }
        match c.next_turn {
            Some(a) if a != who && still_waiting(a) => Some(now),
            Some(a) if a == who => {
                c.next_turn = None;
                None
            }
            _ => {
                c.next_turn = None;
                None
            }
        }
    }

    /// A step that began at `now` on `cpu` cost `ns` of CPU time.
    #[inline]
    pub fn charge(&mut self, cpu: u32, now: u64, ns: u64) {
        let c = self.slot(cpu);
        c.busy_ns += ns;
        c.busy_until = c.busy_until.max(now + ns);
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

    /// The accounting of `cpu`; a CPU number past the last wraps around. Charged on every
    /// event: an actor's CPU is nearly always in range, and the test skips a division.
    #[inline]
    fn slot(&mut self, cpu: u32) -> &mut CpuTime {
        let n = self.cpu.len();
        let i = cpu as usize;
        let i = if i < n { i } else { i % n };
        &mut self.cpu[i]
    }

    pub fn busy_ns(&self) -> u64 {
        self.cpu.iter().map(|c| c.busy_ns).sum()
    }

    pub fn runq_wait_ns(&self) -> u64 {
        self.cpu.iter().map(|c| c.runq_wait_ns).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedicated_accounts_without_delay() {
        let mut c = Cpus::new(2, false);
        assert_eq!(c.admit(0, 10, 1, |_| true), None);
        c.charge(0, 10, 100);
        assert_eq!(c.admit(0, 50, 2, |_| true), None, "dedicated never delays");
        c.charge(0, 50, 100);
        assert_eq!(c.cpu[0].busy_ns, 200);
        assert_eq!(c.runq_wait_ns(), 0);
    }

    #[test]
    fn shared_delays_until_the_cpu_is_free_and_counts_the_wait() {
        let mut c = Cpus::new(2, true);
        c.charge(1, 0, 100);
        assert_eq!(c.admit(1, 40, 7, |_| true), Some(100));
        assert_eq!(c.cpu[1].runq_wait_ns, 60);
        assert_eq!(c.admit(0, 40, 8, |_| true), None, "another CPU is free");
        // At 100 the runner (actor 3) is due again, but actor 7 waited: 7 goes first.
        assert_eq!(c.admit(1, 100, 3, |_| true), Some(100));
        assert_eq!(c.admit(1, 100, 7, |_| true), None);
        c.charge(1, 100, 50);
        assert_eq!(c.admit(1, 120, 3, |_| true), Some(150));
        // A turn held by an actor that is no longer waiting lapses.
        assert_eq!(c.admit(1, 150, 9, |_| false), None);
    }
}
