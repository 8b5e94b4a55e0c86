//! A userspace memory controller (`[policy] memcg_controller`, parameters in `[controller]`):
//! an agent that wakes every `interval`, reads each leaf cgroup's `memory.current`,
//! `memory.high` and the `some` total of its `memory.pressure`, and writes `memory.high` or
//! `memory.reclaim` as its variant decides (`policy/memcg_controller/`: none, senpai-like,
//! TMO-like). It is how fleets run proactive reclaim today: the kernel provides the pressure
//! signal and the two writes, the policy lives in user space.
//!
//! The agent is a task of the root cgroup on CPU 0. Its reads cost nothing here; its writes'
//! reclaim is charged to its CPU time and is not a memory stall (6.1 counts none for these
//! writes: `machine/memcontrol/writes.rs`). Each decision is left in the trace as a
//! `tracing_mark_write` line, what an agent that writes `trace_marker` leaves, and the writes
//! are counted per cgroup (summary.json `cgroups.<name>.proactive`). The leaf cgroups are the
//! ones controlled, as an agent runs one instance per workload cgroup.

use std::any::Any;
use std::fmt::Debug;

use crate::machine::page_counter::{CounterId, PAGE_COUNTER_MAX};
use crate::machine::psi::{PsiGroupId, PsiTask, PSI_SYSTEM};
use crate::machine::tracepoint::Tracepoint;
use crate::machine::{Machine, TaskCtx, PAGE_SIZE};
use crate::world::{Actor, StepCx, Wake};

/// The agent's pid in trace output (workload threads from 1000, filesystem workloads' from
/// 2000).
pub const AGENT_PID: u32 = 3000;

/// `[controller]`: the agent's parameters (each variant reads its own).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerConfig {
    /// Time between two adjustments.
    pub interval_ns: u64,
    /// senpai: the `some` stall per interval it steers toward.
    pub pressure_ns: u64,
    /// senpai: the largest cut of the limit in one interval (a fraction of it), and the
    /// largest raise.
    pub max_probe: f64,
    pub max_backoff: f64,
    /// senpai: how far the pressure must be from the target before a step reaches its
    /// largest (the error is divided by it and squared).
    pub coeff_probe: f64,
    pub coeff_backoff: f64,
    /// senpai: the limit is kept within these (bytes); `None`: no upper bound but the
    /// cgroup's own `memory.max`.
    pub min_size_bytes: u64,
    pub max_size_bytes: Option<u64>,
    /// TMO: the share of `memory.current` reclaimed per interval without pressure, and the
    /// `some` stall share of the interval at which it stops reclaiming.
    pub reclaim_ratio: f64,
    pub psi_threshold: f64,
}

/// What the agent reads of one cgroup at the end of an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupReading {
    /// `memory.current`, bytes.
    pub current: u64,
    /// `memory.high`, bytes; `None`: "max".
    pub high: Option<u64>,
    /// `memory.max`, bytes; `None`: "max".
    pub max: Option<u64>,
    /// The growth of `memory.pressure`'s `some` total over the interval, microseconds.
    pub some_us: u64,
    /// The interval it covers, ns.
    pub interval_ns: u64,
}

/// What the agent does to the cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Keep,
    /// Write `memory.high` (bytes).
    SetHigh(u64),
    /// Write `memory.reclaim` (bytes).
    Reclaim(u64),
}

/// `[policy] memcg_controller` (variants in `crate::policy::memcg_controller`): one instance
/// per controlled cgroup, so a variant may keep its own state (senpai its limit).
pub trait MemcgController: Debug {
    /// The variant's name, printed in its trace markers.
    fn name(&self) -> &'static str;
    /// Whether it runs at all (the agent is not started for "none").
    fn active(&self) -> bool {
        true
    }
    /// The decision at the end of an interval.
    fn decide(&mut self, r: &CgroupReading, p: &ControllerConfig) -> Decision;
}

/// One controlled cgroup.
#[derive(Debug)]
struct Controlled {
    id: CounterId,
    name: String,
    /// The `some` total (us) read at the last adjustment.
    last_some_us: u64,
    policy: Box<dyn MemcgController>,
}

/// The agent.
#[derive(Debug)]
pub struct MemcgControllerAgent {
    name: String,
    params: ControllerConfig,
    cgroups: Vec<Controlled>,
    ctx: TaskCtx,
    /// When the next adjustment is due.
    next_ns: u64,
    /// Adjustments made (per cgroup and interval) and the writes they led to.
    pub decisions: u64,
    pub high_writes: u64,
    pub reclaim_writes: u64,
}

impl MemcgControllerAgent {
    /// The agent over the leaf cgroups of `m` (each with a policy from `make`), its first
    /// adjustment one interval after `start_ns`. `None` when there is nothing to control.
    pub fn new(
        m: &mut Machine,
        params: &ControllerConfig,
        make: &dyn Fn() -> Box<dyn MemcgController>,
        start_ns: u64,
    ) -> Option<MemcgControllerAgent> {
        let probe = make();
        if !probe.active() || m.memcg.is_none() {
            return None;
        }
        // A process of its own that holds no memory and is never the OOM killer's victim.
        let task = m.add_task(&format!("{}-agent", probe.name()), -1000);
        let mc = m.memcg.as_ref()?;
        let n = mc.len() as CounterId;
        let leaves: Vec<CounterId> = (1..n)
            .filter(|&id| (1..n).all(|c| mc.memory.parent(c) != Some(id)))
            .collect();
        if leaves.is_empty() {
            return None;
        }
        let cgroups = leaves
            .into_iter()
            .map(|id| Controlled {
                id,
                name: mc.names[id as usize].clone(),
                last_some_us: 0,
                policy: make(),
            })
            .collect();
        Some(MemcgControllerAgent {
            name: format!("{}-agent", probe.name()),
            params: params.clone(),
            cgroups,
            ctx: TaskCtx {
                task,
                psi: PsiTask::new(PSI_SYSTEM, 0),
                ..Default::default()
            },
            next_ns: start_ns + params.interval_ns,
            decisions: 0,
            high_writes: 0,
            reclaim_writes: 0,
        })
    }

    /// What the agent reads of cgroup `c` at `now` (its pressure file's read aggregates the
    /// group, as a read of the kernel's file does).
    fn read(m: &mut Machine, c: &Controlled, interval_ns: u64, now: u64) -> (CgroupReading, u64) {
        let some_us = m.psi.read_now(c.id as PsiGroupId, now).total_ns[0] / 1000;
        let bytes = |pages: u64| (pages < PAGE_COUNTER_MAX).then_some(pages * PAGE_SIZE);
        let (current, high, max) = match m.memcg.as_ref() {
            Some(mc) => {
                let p = mc.memory.get(c.id);
                (p.usage * PAGE_SIZE, bytes(p.high), bytes(p.max))
            }
            None => (0, None, None),
        };
        let r = CgroupReading {
            current,
            high,
            max,
            some_us: some_us.saturating_sub(c.last_some_us),
            interval_ns,
        };
        (r, some_us)
    }
}

impl Actor for MemcgControllerAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        if now < self.next_ns {
            return Wake::At(self.next_ns);
        }
        self.ctx.begin_step();
        let m = cx.machine();
        m.psi.run(&mut self.ctx.psi, now);
        let interval = self.params.interval_ns;
        for c in &mut self.cgroups {
            let (r, total) = Self::read(m, c, interval, now);
            c.last_some_us = total;
            let d = c.policy.decide(&r, &self.params);
            self.decisions += 1;
            let reclaimed = match d {
                Decision::Keep => 0,
                Decision::SetHigh(bytes) => {
                    self.high_writes += 1;
                    m.memory_high_write(c.id, bytes / PAGE_SIZE, &mut self.ctx)
                }
                Decision::Reclaim(bytes) => {
                    self.reclaim_writes += 1;
                    m.memory_reclaim(c.id, bytes, &mut self.ctx).reclaimed()
                }
            };
            let at = now + self.ctx.cost_ns;
            let (who, cg) = (c.policy.name(), &c.name);
            m.trace(|| {
                let act = match d {
                    Decision::Keep => "keep".to_string(),
                    Decision::SetHigh(b) => format!("memory.high={b}"),
                    Decision::Reclaim(b) => format!("memory.reclaim={b}"),
                };
                let high = r.high.map_or("max".to_string(), |h| h.to_string());
                let text = format!(
                    "{who}: cgroup={cg} some_us={} current={} high={high} {act} reclaimed_pages={reclaimed}",
                    r.some_us, r.current
                );
                (at, Tracepoint::Marker { text })
            });
        }
        let end = now + self.ctx.cost_ns;
        m.psi.sleep(&mut self.ctx.psi, false, end);
        cx.charge_cpu(self.ctx.cpu_ns());
        self.next_ns = (self.next_ns + interval).max(end);
        Wake::At(self.next_ns)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
