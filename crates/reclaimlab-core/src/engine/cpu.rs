//! CPU time: each machine has a set of CPUs; every actor runs on one of them (its home CPU)
//! and each step charges the CPU time its work cost.
//!
//! Two disciplines. `dedicated` (the default) never delays anyone: a CPU's busy time is
//! accounted, but an actor due while its CPU is still busy runs at once, as if it had a CPU of
//! its own (today's results, and the right model when CPUs outnumber busy threads). `shared`
//! models contention: an actor due while its CPU is busy waits until the CPU is free, and the
//! wait is counted as run-queue time. Actors are pinned to their home CPU (no load balancing):
//! a deliberate simplification that keeps the schedule deterministic and easy to read.

/// One CPU's accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// CPU time charged by the actors that ran on it.
    pub busy_ns: u64,
    /// Time actors spent due but waiting for it (`shared` only).
    pub runq_wait_ns: u64,
    /// When the work charged so far ends.
    pub busy_until: u64,
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

    /// An actor on `cpu` is due at `now`: `None` if it may run, or the time its CPU frees up
    /// (the wait is counted).
    #[inline]
    pub fn admit(&mut self, cpu: u32, now: u64) -> Option<u64> {
        if !self.shared {
            return None;
        }
        let n = self.cpu.len();
        let c = &mut self.cpu[cpu as usize % n];
        if c.busy_until > now {
            c.runq_wait_ns += c.busy_until - now;
            return Some(c.busy_until);
        }
        None
    }

    /// A step that began at `now` on `cpu` cost `ns` of CPU time.
    #[inline]
    pub fn charge(&mut self, cpu: u32, now: u64, ns: u64) {
        let n = self.cpu.len();
        let c = &mut self.cpu[cpu as usize % n];
        c.busy_ns += ns;
        c.busy_until = c.busy_until.max(now + ns);
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
        assert_eq!(c.admit(0, 10), None);
        c.charge(0, 10, 100);
        assert_eq!(c.admit(0, 50), None, "dedicated never delays");
        c.charge(0, 50, 100);
        assert_eq!(c.cpu[0].busy_ns, 200);
        assert_eq!(c.runq_wait_ns(), 0);
    }

    #[test]
    fn shared_delays_until_the_cpu_is_free_and_counts_the_wait() {
        let mut c = Cpus::new(2, true);
        c.charge(1, 0, 100);
        assert_eq!(c.admit(1, 40), Some(100));
        assert_eq!(c.cpu[1].runq_wait_ns, 60);
        assert_eq!(c.admit(0, 40), None, "another CPU is free");
        assert_eq!(c.admit(1, 100), None);
    }
}
