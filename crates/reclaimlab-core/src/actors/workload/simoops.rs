//! A simoops-like worker thread (`[workload.simoops]`, after Chris Mason's simoops): units of
//! work, each of which allocates and touches `alloc` bytes of fresh memory (the allocation
//! whose latency simoops reports), opens and reads `reads_per_unit` files picked at random
//! from the data set, and thinks. It keeps the memory of its last `keep_units` units and frees
//! the oldest once the new unit's memory is held, so it allocates steadily without growing.

use std::any::Any;

use super::spec::SimoopsSpec;
use super::{Origin, QUANTUM_NS};
use crate::engine::histogram::Latency;
use crate::engine::Rng;
use crate::machine::{Access, Machine, Signal, TaskCtx, PAGE_SIZE};
use crate::world::{Actor, StepCx, Wake};

/// Where a unit of work is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Faulting in page `.0` of the unit's allocation.
    Alloc(u32),
    /// Reading file number `.0` of the unit (`.1`: its data page, once open).
    Read(u64, Option<u32>),
    Think,
}

#[derive(Debug)]
pub struct Simoops {
    pub name: String,
    pub pid: u32,
    pub cpu: u32,
    pub task: usize,
    pub start_ns: u64,
    deadline_ns: Option<u64>,
    spec: SimoopsSpec,
    rng: Rng,
    ctx: TaskCtx,
    /// The anonymous region: `keep_units` slots of `alloc_pages` pages.
    base: u32,
    alloc_pages: u32,
    /// The data set: its first file number and count.
    files: (u32, u64),
    phase: Phase,
    /// The file being read (chosen when its read starts).
    file: u32,
    unit_started: u64,
    alloc_started: u64,
    pub units: u64,
    pub alloc_latency: Latency,
    /// Direct-reclaim time of each allocation that entered direct reclaim.
    pub reclaim_latency: Latency,
    /// Direct reclaim of the allocation under way so far.
    alloc_stall: u64,
    pub unit_latency: Latency,
    pub stall_ns: u64,
    pub wait_ns: u64,
    pub finished_ns: Option<u64>,
    pub killed: bool,
}

impl Simoops {
    /// Worker thread `index`; `files` is the data set (first file number, count) the run
    /// registered with the filesystem.
    pub fn build(
        o: &Origin,
        spec: &SimoopsSpec,
        index: u32,
        files: (u32, u64),
        m: &mut Machine,
    ) -> Result<Simoops, String> {
        let name = format!("{}/simoops{index}", o.workload);
        let alloc_pages = spec.alloc_bytes.div_ceil(PAGE_SIZE) as u32;
        let r = m.add_region(o.task, alloc_pages as u64 * spec.keep_units, true)?;
        let base = m.regions[r].base;
        m.mmget(o.task);
        Ok(Simoops {
            rng: Rng::for_actor(o.seed, &name),
            name,
            pid: o.pid,
            cpu: o.cpu,
            task: o.task,
            start_ns: o.start_ns,
            deadline_ns: o.deadline_ns,
            spec: spec.clone(),
            ctx: TaskCtx {
                task: o.task,
                ..Default::default()
            },
            base,
            alloc_pages,
            files,
            phase: Phase::Alloc(0),
            file: 0,
            unit_started: o.start_ns,
            alloc_started: o.start_ns,
            units: 0,
            alloc_latency: Latency::new(),
            reclaim_latency: Latency::new(),
            alloc_stall: 0,
            unit_latency: Latency::new(),
            stall_ns: 0,
            wait_ns: 0,
            finished_ns: None,
            killed: false,
        })
    }

    fn finish(&mut self, m: &mut Machine, t: u64, killed: bool) -> Wake {
        if self.finished_ns.is_none() {
            self.finished_ns = Some(t);
            self.killed = killed;
            m.mmput(self.task);
        }
        Wake::Done
    }

    fn not_done(&mut self, m: &mut Machine, now: u64, a: Access) -> Wake {
        let t = now + self.ctx.cost_ns;
        match a {
            Access::Done => Wake::At(t),
            Access::Block(until) => {
                self.wait_ns += until.saturating_sub(t);
                Wake::At(until.max(t))
            }
            Access::Retry(sleep) => {
                self.wait_ns += sleep;
                Wake::At(t + sleep)
            }
            Access::Yield => Wake::At(t),
            Access::Killed => self.finish(m, t, true),
        }
    }

    fn slot_base(&self, unit: u64) -> u32 {
        self.base + (unit % self.spec.keep_units) as u32 * self.alloc_pages
    }

    fn run(&mut self, m: &mut Machine, now: u64) -> Wake {
        if self.finished_ns.is_some() {
            return Wake::Done;
        }
        if self.deadline_ns.is_some_and(|d| now >= d) {
            return self.finish(m, now, false);
        }
        loop {
            if self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
            let t = now + self.ctx.cost_ns;
            match self.phase {
                Phase::Alloc(k) => {
                    if k == 0 {
                        self.unit_started = t;
                        self.alloc_started = t;
                    }
                    if k == self.alloc_pages {
                        self.alloc_latency.record(t - self.alloc_started);
                        let stall = std::mem::take(&mut self.alloc_stall) + self.ctx.stall_ns;
                        if stall > 0 {
                            self.reclaim_latency.record(stall);
                        }
                        // Counted here; what follows in this step starts afresh.
                        self.stall_ns += self.ctx.stall_ns;
                        self.ctx.stall_ns = 0;
                        // Release the oldest unit's memory now that the new one is held: its
                        // pages go back to the free lists while this unit reads and thinks, so
                        // the page cache and the other threads take them, and the next
                        // allocation competes for memory like any other instead of finding
                        // its own frees still there.
                        if self.units + 1 >= self.spec.keep_units {
                            let slot = self.slot_base(self.units + 1);
                            m.zap_anon_range(self.task, slot, self.alloc_pages);
                        }
                        self.phase = Phase::Read(0, None);
                        continue;
                    }
                    let vp = self.slot_base(self.units) + k;
                    match m.anon_access(vp, true, &mut self.ctx) {
                        Access::Done => self.phase = Phase::Alloc(k + 1),
                        a => return self.not_done(m, now, a),
                    }
                }
                Phase::Read(i, None) => {
                    if i >= self.spec.reads_per_unit || self.files.1 == 0 {
                        self.phase = Phase::Think;
                        continue;
                    }
                    self.file = self.files.0 + self.rng.below(self.files.1) as u32;
                    match m.fs_open(self.file, &mut self.ctx) {
                        Ok(wait) => {
                            self.phase = Phase::Read(i, Some(0));
                            if let Some(until) = wait {
                                return self.not_done(m, now, Access::Block(until));
                            }
                        }
                        Err(a) => return self.not_done(m, now, a),
                    }
                }
                Phase::Read(i, Some(j)) => {
                    let f = m.fs.as_ref().expect("mounted").files[self.file as usize];
                    if j >= f.npages || f.data == crate::machine::fs::NONE {
                        m.fs_close(self.file);
                        self.phase = Phase::Read(i + 1, None);
                        continue;
                    }
                    let vp = f.data + j;
                    match m.file_access(vp, f.data + f.npages, false, &mut self.ctx) {
                        Access::Done => self.phase = Phase::Read(i, Some(j + 1)),
                        Access::Block(until) => {
                            self.phase = Phase::Read(i, Some(j + 1));
                            return self.not_done(m, now, Access::Block(until));
                        }
                        a => return self.not_done(m, now, a),
                    }
                }
                Phase::Think => {
                    self.ctx.cost_ns += self.spec.think_ns;
                    let end = now + self.ctx.cost_ns;
                    self.unit_latency.record(end - self.unit_started);
                    self.units += 1;
                    self.phase = Phase::Alloc(0);
                    return Wake::At(end);
                }
            }
        }
    }
}

impl Actor for Simoops {
    fn name(&self) -> &str {
        &self.name
    }
    fn cpu(&self) -> u32 {
        self.cpu
    }
    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }
    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        self.ctx.begin_step();
        let wake = self.run(cx.machine(), now);
        self.stall_ns += self.ctx.stall_ns;
        if matches!(self.phase, Phase::Alloc(_)) {
            self.alloc_stall += self.ctx.stall_ns;
        }
        cx.charge_cpu(self.ctx.cpu_ns());
        wake
    }
    fn wants(&self, signal: Signal) -> bool {
        matches!(signal, Signal::OomKill(_))
    }
    fn on_signal(&mut self, signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        match signal {
            Signal::OomKill(victim) if victim == self.task => {
                let now = cx.now();
                Some(self.finish(cx.machine(), now, true))
            }
            _ => None,
        }
    }
    fn holds_run_open(&self) -> bool {
        self.finished_ns.is_none()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
