//! High-order allocation streams (`[workload.highorder]`): kernel allocations of 2^order pages
//! at a steady rate, each held for its lifetime (network buffers, slab pages, huge pages).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Kind, Origin, Step, Thread};
use crate::machine::{Access, Machine};

/// A high-order allocation stream: its request shape and the blocks it holds.
#[derive(Debug, Clone)]
pub(super) struct HighOrderState {
    pub(super) order: u32,
    pub(super) gfp: crate::machine::gfp::Gfp,
    /// Retry a failed request after the back-off (non-costly GFP_KERNEL) instead of counting
    /// it as a failure and moving on.
    pub(super) retry: bool,
    pub(super) interval_ns: u64,
    pub(super) lifetime_ns: u64,
    /// Draw each lifetime from an exponential with mean `lifetime_ns` (else exact).
    pub(super) exponential: bool,
    pub(super) count: Option<u64>,
    pub(super) next_ns: u64,
    /// Blocks held, earliest free first: (time to free, allocation number, first frame). The
    /// allocation number keeps equal times in allocation order.
    pub(super) live: BinaryHeap<Reverse<(u64, u64, u32)>>,
    pub(super) stats: HighOrderStats,
}

/// Outcome counts of a high-order allocation stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HighOrderStats {
    pub attempts: u64,
    pub succeeded: u64,
    pub failed: u64,
}

/// Allocations handled per step at most (bounds the work between two events).
const HIGHORDER_BATCH: u32 = 64;

impl Thread {
    /// A high-order allocation thread.
    /// A high-order allocation thread; a THP stream's mask follows the host's `thp_defrag`.
    pub fn highorder(
        o: &Origin,
        spec: &super::spec::HighOrderSpec,
        defrag: crate::machine::huge_memory::ThpDefrag,
    ) -> Thread {
        use super::spec::HighOrderGfp;
        use crate::machine::gfp::*;
        let gfp = match spec.gfp {
            HighOrderGfp::Atomic => GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN,
            HighOrderGfp::Kernel => GFP_KERNEL | __GFP_COMP,
            HighOrderGfp::Transhuge => crate::machine::huge_memory::thp_fault_gfp(defrag),
        };
        let state = HighOrderState {
            order: spec.order,
            gfp,
            retry: spec.gfp == HighOrderGfp::Kernel
                && spec.order <= crate::machine::PAGE_ALLOC_COSTLY_ORDER,
            interval_ns: (crate::engine::units::NS_PER_SEC / spec.rate_per_sec).max(1),
            lifetime_ns: spec.lifetime_ns,
            exponential: spec.lifetimes == super::spec::Lifetimes::Exponential,
            count: spec.count,
            next_ns: o.start_ns,
            live: Default::default(),
            stats: HighOrderStats::default(),
        };
        Thread::new(
            o,
            "highorder",
            Kind::HighOrder(Box::new(state)),
            (0, 0),
            1,
            0,
        )
    }

    pub fn highorder_stats(&self) -> Option<HighOrderStats> {
        match &self.work.kind {
            Kind::HighOrder(h) => Some(h.stats),
            _ => None,
        }
    }

    /// Give back kernel memory the thread still holds (its process exited or was killed).
    pub fn release(&mut self, node: &mut Machine) {
        if let Kind::HighOrder(h) = &mut self.work.kind {
            while let Some(Reverse((_, _, pfn))) = h.live.pop() {
                node.free_pages(pfn, h.order);
            }
        }
    }

    pub(super) fn step_highorder(&mut self, node: &mut Machine) -> Step {
        let now = node.now;
        let Kind::HighOrder(h) = &mut self.work.kind else {
            unreachable!("step_highorder on another kind");
        };
        while let Some(&Reverse((t, _, pfn))) = h.live.peek() {
            if t > now {
                break;
            }
            h.live.pop();
            node.free_pages(pfn, h.order);
        }
        let mut n = 0;
        while h.next_ns <= now + self.ctx.cost_ns && n < HIGHORDER_BATCH {
            if h.count.is_some_and(|c| h.stats.attempts >= c) {
                let end = now + self.ctx.cost_ns;
                self.stop(end, false);
                self.stall_ns += self.ctx.stall_ns;
                return Step::Finished;
            }
            match node.alloc_pages(h.gfp, h.order, &mut self.ctx) {
                Ok(pfn) => {
                    node.mark_kernel_pages(pfn, h.order);
                    let life = if h.exponential {
                        // Inverse CDF; 1 - u is in (0, 1], so the log is finite.
                        let u = self.work.rng.next_f64();
                        (-(1.0 - u).ln() * h.lifetime_ns as f64) as u64
                    } else {
                        h.lifetime_ns
                    };
                    let free_at = (now + self.ctx.cost_ns).saturating_add(life);
                    h.live.push(Reverse((free_at, h.stats.attempts, pfn)));
                    h.stats.succeeded += 1;
                }
                Err(Access::Retry(sleep)) if h.retry => {
                    self.wait_ns += sleep;
                    let t = now + self.ctx.cost_ns + sleep;
                    self.stall_ns += self.ctx.stall_ns;
                    return Step::At(t);
                }
                Err(Access::Yield) => {
                    // Its direct reclaim yielded: the same request resumes it next step.
                    self.stall_ns += self.ctx.stall_ns;
                    return Step::At(now + self.ctx.cost_ns);
                }
                Err(Access::Killed) => {
                    self.stop(now + self.ctx.cost_ns, true);
                    self.stall_ns += self.ctx.stall_ns;
                    return Step::Finished;
                }
                Err(_) => h.stats.failed += 1,
            }
            h.stats.attempts += 1;
            self.work.accesses += 1;
            h.next_ns += h.interval_ns;
            n += 1;
        }
        let next = h
            .live
            .peek()
            .map_or(h.next_ns, |&Reverse((t, _, _))| t.min(h.next_ns));
        self.stall_ns += self.ctx.stall_ns;
        Step::At(next.max(now + self.ctx.cost_ns).max(now + 1))
    }
}
