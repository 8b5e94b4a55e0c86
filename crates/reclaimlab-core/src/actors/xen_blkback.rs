//! A blkback ring's kthread (`xen_blkif_schedule`, mechanisms.md §B.3), one per ring, on a
//! dom0 CPU. Each step: deliver the device's completions that are due (in 6.1 they run from
//! the bio's end_io; here on the ring's CPU, the same work), take requests off the ring a few
//! at a time, and after each pass (or 100 ms without requests) do the housekeeping: the
//! persistent-grant purge and the pool shrink. Growing the pool in balloon mode allocates
//! dom0 memory, so a ring can wait in dom0's direct reclaim like any task.

use std::any::Any;

use crate::engine::ActorId;
use crate::machine::memory::{Access, TaskCtx};
use crate::machine::xen::blkback::Dispatch;
use crate::machine::xen::LRU_INTERVAL_NS;
use crate::world::{Actor, StepCx, Wake};

/// Requests mapped per step before the kthread lets others run (it would reach a
/// `cond_resched` about this often).
const REQUESTS_PER_STEP: u32 = 8;

#[derive(Debug)]
pub struct BlkbackRing {
    name: String,
    pub ring: usize,
    cpu: u32,
    ctx: TaskCtx,
    /// When the wait for requests times out into housekeeping.
    next_timeout: u64,
    /// Growing the pool must wait until then.
    retry_at: u64,
    balloon_worker: ActorId,
    /// Time spent waiting for dom0 memory, and steps that waited.
    pub alloc_wait_ns: u64,
    pub blocked: u64,
}

impl BlkbackRing {
    pub fn new(
        name: String,
        ring: usize,
        cpu: u32,
        task: usize,
        balloon_worker: ActorId,
    ) -> BlkbackRing {
        BlkbackRing {
            name,
            ring,
            cpu,
            ctx: TaskCtx {
                task,
                ..Default::default()
            },
            next_timeout: LRU_INTERVAL_NS,
            retry_at: 0,
            balloon_worker,
            alloc_wait_ns: 0,
            blocked: 0,
        }
    }
}

impl Actor for BlkbackRing {
    fn name(&self) -> &str {
        &self.name
    }

    fn cpu(&self) -> u32 {
        self.cpu
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let r = self.ring;
        let m = cx.machine();
        let mut w = m.blkback_complete(r, now);
        let answered = w.cpu_ns > 0 || !m.xen().rings[r].responses.is_empty();
        let mut cost = w.cpu_ns;
        let mut ipi = w.ipi_ns;
        let mut pass = false;
        let mut more = false;
        let mut no_slot = false;
        if now >= self.retry_at {
            for _ in 0..REQUESTS_PER_STEP {
                match m.blkback_dispatch(r, now + cost, &mut self.ctx) {
                    Dispatch::Done(c) => {
                        cost += c;
                        pass = true;
                    }
                    Dispatch::Empty => {
                        m.xen_mut().rings[r].waiting_reqs = false;
                        break;
                    }
                    Dispatch::NoSlot => {
                        no_slot = true;
                        break;
                    }
                    Dispatch::Blocked(a, c) => {
                        cost += c;
                        self.blocked += 1;
                        match a {
                            Access::Retry(sleep) => {
                                self.alloc_wait_ns += sleep;
                                self.retry_at = now + cost + sleep;
                            }
                            Access::Block(until) => self.retry_at = until.max(now + cost),
                            _ => self.retry_at = now + cost,
                        }
                        break;
                    }
                }
            }
            let ring = &m.xen().rings[r];
            // Without a free pending_req the kthread sleeps until one is freed: going on at
            // once would spin at the same instant (B0's array is shared by every ring, so
            // the slot may come from another ring's completion, later).
            more = !no_slot && !ring.requests.is_empty() && now + cost >= self.retry_at;
        }
        // Housekeeping after a pass that emptied the ring, or when the wait timed out.
        if (pass && !more) || now >= self.next_timeout {
            let h = m.blkback_housekeeping(r, now + cost);
            cost += h.cpu_ns;
            ipi += h.ipi_ns;
            w.balloon_at = match (w.balloon_at, h.balloon_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.next_timeout = now + cost + LRU_INTERVAL_NS;
        }
        let ring = &m.xen().rings[r];
        let frontend = ring.frontend;
        let next_done = ring.next_completion();
        // Completions left that are due already: go on at once.
        more |= next_done.is_some_and(|d| d <= now + cost);
        // `xen_blkif_schedule` waits on `pending_free_wq`, woken when any request is freed:
        // the first completion of any ring, a scheduler wake-up later.
        let slot_freed = no_slot
            .then(|| {
                m.xen()
                    .rings
                    .iter()
                    .filter_map(|x| x.next_completion())
                    .min()
            })
            .flatten()
            .map(|t| t.max(now + cost) + m.cfg.cost.wakeup_latency_ns);
        let evtchn = m.xen().cost.evtchn_ns;
        if let (true, Some(f)) = (answered, frontend) {
            cx.wake(f, Wake::NoLaterThan(now + cost + evtchn));
        }
        if let Some(at) = w.balloon_at {
            cx.wake(self.balloon_worker, Wake::NoLaterThan(at));
        }
        cx.charge_cpu(cost);
        if ipi > 0 {
            cx.interrupt_other_cpus(ipi);
        }
        let end = now + cost;
        if more {
            return Wake::At(end);
        }
        let mut next = self.next_timeout.max(end);
        if let Some(d) = next_done {
            next = next.min(d.max(end));
        }
        if self.retry_at > end {
            next = next.min(self.retry_at);
        }
        if let Some(t) = slot_freed {
            next = next.min(t);
        }
        Wake::At(next)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
