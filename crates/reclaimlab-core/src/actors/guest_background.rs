//! A guest's own background activity (`[[guest]] background_frees`): a guest is never idle.
//! Its kernel threads, timers and daemons allocate and free pages on every vCPU all the time,
//! which matters wherever a free is an event: the RFC v8 capture arrays (mechanisms.md §D2)
//! fill only from frees, so their last entries after a program's exit are reported only once
//! more frees arrive on that vCPU. The rate is measured (`scripts/validate-idle-frees.py`,
//! `validation/real/idle-frees*.json`); the pages' lifetime is an abstraction (an exponential
//! draw with the guest's `background_lifetime` as mean).
//!
//! One actor per vCPU, each with an equal share of the rate: order-0 GFP_KERNEL pages, each
//! freed when its lifetime ends. It does not keep a run open (a guest's idle hum is no
//! workload), and it ends with its guest (the world halts every actor of a halted machine).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::Rng;
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::TaskCtx;
use crate::world::{Actor, StepCx, Wake};

/// Allocations handled per step at most (bounds the work between two events).
const BATCH: u32 = 64;

#[derive(Debug)]
pub struct GuestBackground {
    name: String,
    cpu: u32,
    interval_ns: u64,
    lifetime_ns: u64,
    next_ns: u64,
    /// Pages held, earliest free first: (time to free, allocation number, frame).
    live: BinaryHeap<Reverse<(u64, u64, u32)>>,
    allocations: u64,
    rng: Rng,
    ctx: TaskCtx,
}

impl GuestBackground {
    /// The share of vCPU `cpu` of `rate` page frees a second over `vcpus` vCPUs, from `start`,
    /// charged to the guest's task `task`.
    // Actors do not see the scenario (world/actors sit below config), so the guest's facts
    // come one by one.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        guest: &str,
        cpu: u32,
        vcpus: u32,
        rate: u64,
        lifetime_ns: u64,
        start_ns: u64,
        task: usize,
        seed: u64,
    ) -> GuestBackground {
        let name = format!("{guest}/background/{cpu}");
        GuestBackground {
            rng: Rng::for_actor(seed, &name),
            name,
            cpu,
            interval_ns: (vcpus as u64 * crate::engine::units::NS_PER_SEC / rate.max(1)).max(1),
            lifetime_ns,
            next_ns: start_ns,
            live: BinaryHeap::new(),
            allocations: 0,
            ctx: TaskCtx {
                task,
                ..Default::default()
            },
        }
    }
}

impl Actor for GuestBackground {
    fn name(&self) -> &str {
        &self.name
    }

    fn cpu(&self) -> u32 {
        self.cpu
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let m = cx.machine();
        self.ctx.begin_step();
        while let Some(&Reverse((t, _, pfn))) = self.live.peek() {
            if t > now {
                break;
            }
            self.live.pop();
            m.free_pages(pfn, 0);
        }
        let mut n = 0;
        while self.next_ns <= now + self.ctx.cost_ns && n < BATCH {
            // A guest short of memory goes without this page (no retry: the next one is due soon
            // enough).
            if let Ok(pfn) = m.alloc_pages(GFP_KERNEL, 0, &mut self.ctx) {
                m.mark_kernel_pages(pfn, 0);
                // Inverse CDF; 1 - u is in (0, 1], so the log is finite.
                let u = self.rng.next_f64();
                let life = (-(1.0 - u).ln() * self.lifetime_ns as f64) as u64;
                let at = (now + self.ctx.cost_ns).saturating_add(life);
                self.live.push(Reverse((at, self.allocations, pfn)));
            }
            self.allocations += 1;
            self.next_ns += self.interval_ns;
            n += 1;
        }
        cx.charge_cpu(self.ctx.cpu_ns());
        let next = self
            .live
            .peek()
            .map_or(self.next_ns, |&Reverse((t, _, _))| t.min(self.next_ns));
        Wake::At(next.max(now + self.ctx.cost_ns).max(now + 1))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
