//! A simoops-like worker thread (`[workload.simoops]`, after Chris Mason's simoops): units of
//! work, each of which allocates and touches `alloc` bytes of fresh memory (the allocation
//! whose latency simoops reports), opens and reads `reads_per_unit` files picked at random
//! from the data set, and thinks. It keeps the memory of its last `keep_units` units and frees
//! the oldest once the new unit's memory is held, so it allocates steadily without growing.

use super::spec::SimoopsSpec;
use super::task::{Origin, Task, Work};
use super::QUANTUM_NS;
use crate::engine::histogram::Latency;
use crate::engine::Rng;
use crate::machine::{Access, Machine, PAGE_SIZE};
use crate::world::{StepCx, Wake};

/// Where a unit of work is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Faulting in page `.0` of the unit's allocation.
    Alloc(u32),
    /// Reading file number `.0` of the unit (`.1`: its data page, once open).
    Read(u64, Option<u32>),
    Think,
}

pub type Simoops = Task<SimoopsWork>;

#[derive(Debug)]
pub struct SimoopsWork {
    spec: SimoopsSpec,
    rng: Rng,
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
        let work = SimoopsWork {
            rng: Rng::for_actor(o.seed, &name),
            spec: spec.clone(),
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
        };
        Ok(Task::from_origin(o, name, work))
    }

    fn slot_base(&self, unit: u64) -> u32 {
        self.work.base + (unit % self.work.spec.keep_units) as u32 * self.work.alloc_pages
    }

    fn run(&mut self, m: &mut Machine, now: u64) -> Wake {
        loop {
            if self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
            let t = now + self.ctx.cost_ns;
            match self.work.phase {
                Phase::Alloc(k) => {
                    if k == 0 {
                        self.work.unit_started = t;
                        self.work.alloc_started = t;
                    }
                    if k == self.work.alloc_pages {
                        self.work.alloc_latency.record(t - self.work.alloc_started);
                        let stall = std::mem::take(&mut self.work.alloc_stall) + self.ctx.stall_ns;
                        if stall > 0 {
                            self.work.reclaim_latency.record(stall);
                        }
                        // Counted here; what follows in this step starts afresh.
                        self.stall_ns += self.ctx.stall_ns;
                        self.ctx.stall_ns = 0;
                        // Release the oldest unit's memory now that the new one is held: its
                        // pages go back to the free lists while this unit reads and thinks, so
                        // the page cache and the other threads take them, and the next
                        // allocation competes for memory like any other instead of finding
                        // its own frees still there.
                        if self.work.units + 1 >= self.work.spec.keep_units {
                            let slot = self.slot_base(self.work.units + 1);
                            m.zap_anon_range(self.task, slot, self.work.alloc_pages);
                        }
                        self.work.phase = Phase::Read(0, None);
                        continue;
                    }
                    let vp = self.slot_base(self.work.units) + k;
                    match m.anon_access(vp, true, &mut self.ctx) {
                        Access::Done => self.work.phase = Phase::Alloc(k + 1),
                        a => return self.not_done(m, now, a),
                    }
                }
                Phase::Read(i, None) => {
                    if i >= self.work.spec.reads_per_unit || self.work.files.1 == 0 {
                        self.work.phase = Phase::Think;
                        continue;
                    }
                    self.work.file =
                        self.work.files.0 + self.work.rng.below(self.work.files.1) as u32;
                    match m.fs_open(self.work.file, &mut self.ctx) {
                        Ok(wait) => {
                            self.work.phase = Phase::Read(i, Some(0));
                            if let Some(until) = wait {
                                return self.not_done(m, now, Access::Block(until));
                            }
                        }
                        Err(a) => return self.not_done(m, now, a),
                    }
                }
                Phase::Read(i, Some(j)) => {
                    let f = m.fs.as_ref().expect("mounted").files[self.work.file as usize];
                    if j >= f.npages || f.data == crate::machine::fs::NONE {
                        m.fs_close(self.work.file);
                        self.work.phase = Phase::Read(i + 1, None);
                        continue;
                    }
                    let vp = f.data + j;
                    match m.file_access(vp, f.data + f.npages, false, &mut self.ctx) {
                        Access::Done => self.work.phase = Phase::Read(i, Some(j + 1)),
                        Access::Block(until) => {
                            self.work.phase = Phase::Read(i, Some(j + 1));
                            return self.not_done(m, now, Access::Block(until));
                        }
                        a => return self.not_done(m, now, a),
                    }
                }
                Phase::Think => {
                    self.ctx.cost_ns += self.work.spec.think_ns;
                    let end = now + self.ctx.cost_ns;
                    self.work.unit_latency.record(end - self.work.unit_started);
                    self.work.units += 1;
                    self.work.phase = Phase::Alloc(0);
                    return Wake::At(end);
                }
            }
        }
    }
}

impl Work for SimoopsWork {
    fn step(t: &mut Simoops, cx: &mut StepCx) -> Wake {
        let wake = t.chunk(cx, Simoops::run);
        if matches!(t.work.phase, Phase::Alloc(_)) {
            t.work.alloc_stall += t.ctx.stall_ns;
        }
        wake
    }
}
