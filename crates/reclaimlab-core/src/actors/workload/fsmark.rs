//! An fsmark-like creator thread (`[workload.fsmark]`): creates its files back to back, each
//! thread in its own directories, a directory per `files_per_dir` files (XFS places each new
//! directory in the next allocation group). Each create allocates a dentry and an inode
//! (GFP_NOFS for `nofs_fraction` of creates: metadata allocated inside a transaction or under
//! a filesystem lock), logs the inode and, with a file size, writes the data into the page
//! cache. When the log is full it waits
//! for xfsaild to free space (mechanisms §A.6 recipe; seed 002's fsmark).

use std::any::Any;

use super::spec::FsmarkSpec;
use super::{Origin, QUANTUM_NS};
use crate::engine::histogram::Latency;
use crate::engine::Rng;
use crate::machine::fs::NONE;
use crate::machine::gfp::{Gfp, GFP_KERNEL, GFP_NOFS};
use crate::machine::{Access, Machine, Signal, TaskCtx, PAGE_SIZE};
use crate::world::{Actor, StepCx, Wake};

/// Creates per step at most (bounds the work between two events).
const CREATES_PER_STEP: u32 = 256;

#[derive(Debug)]
pub struct Fsmark {
    pub name: String,
    pub pid: u32,
    pub cpu: u32,
    pub task: usize,
    pub start_ns: u64,
    deadline_ns: Option<u64>,
    spec: FsmarkSpec,
    /// This thread's number among the workload's creators.
    index: u32,
    rng: Rng,
    ctx: TaskCtx,
    /// Its own anonymous memory: (first page, pages, pages touched so far).
    rss: (u32, u32, u32),
    /// First page of its files' data (NONE for empty files) and pages per file.
    data: (u32, u32),
    /// The create under way: its metadata gfp (kept across retries) and when it began.
    current: Option<(Gfp, u64)>,
    /// Data pages of the last file still to write: (next page, end).
    writing: Option<(u32, u32)>,
    pub created: u64,
    /// Time of each create, from its first attempt to its end (waits included).
    pub create_latency: Latency,
    pub stall_ns: u64,
    /// Time waiting for log space, I/O and allocation back-offs.
    pub wait_ns: u64,
    pub finished_ns: Option<u64>,
    pub killed: bool,
}

impl Fsmark {
    /// Creator thread `index` of a workload; its anonymous memory and data range are taken
    /// from the machine here.
    pub fn build(
        o: &Origin,
        spec: &FsmarkSpec,
        index: u32,
        m: &mut Machine,
    ) -> Result<Fsmark, String> {
        let name = format!("{}/fsmark{index}", o.workload);
        let rss_pages = spec.rss_bytes.div_ceil(PAGE_SIZE) as u32;
        let rss_base = if rss_pages > 0 {
            let r = m.add_region(o.task, rss_pages as u64, true)?;
            m.regions[r].base
        } else {
            0
        };
        let pages = spec.file_size_bytes.div_ceil(PAGE_SIZE) as u32;
        let data_base = if pages > 0 {
            let r = m.add_region(o.task, spec.files * pages as u64, false)?;
            m.regions[r].base
        } else {
            NONE
        };
        m.mmget(o.task);
        Ok(Fsmark {
            rng: Rng::for_actor(o.seed, &name),
            name,
            pid: o.pid,
            cpu: o.cpu,
            task: o.task,
            start_ns: o.start_ns,
            deadline_ns: o.deadline_ns,
            spec: spec.clone(),
            index,
            ctx: TaskCtx {
                task: o.task,
                ..Default::default()
            },
            rss: (rss_base, rss_pages, 0),
            data: (data_base, pages),
            current: None,
            writing: None,
            created: 0,
            create_latency: Latency::new(),
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

    /// What an access or create that did not complete means for the step: `Some(wake)`
    /// ends it.
    fn not_done(&mut self, m: &mut Machine, now: u64, a: Access) -> Option<Wake> {
        let t = now + self.ctx.cost_ns;
        match a {
            Access::Done => None,
            Access::Block(until) => {
                self.wait_ns += until.saturating_sub(t);
                Some(Wake::At(until.max(t)))
            }
            Access::Retry(sleep) => {
                self.wait_ns += sleep;
                Some(Wake::At(t + sleep))
            }
            Access::Yield => Some(Wake::At(t)),
            Access::Killed => Some(self.finish(m, t, true)),
        }
    }

    fn run(&mut self, m: &mut Machine, now: u64) -> Wake {
        if self.finished_ns.is_some() {
            return Wake::Done;
        }
        if self.deadline_ns.is_some_and(|d| now >= d) {
            return self.finish(m, now, false);
        }
        // Its own buffers first.
        while self.rss.2 < self.rss.1 {
            let vp = self.rss.0 + self.rss.2;
            match m.anon_access(vp, true, &mut self.ctx) {
                Access::Done => self.rss.2 += 1,
                a => return self.not_done(m, now, a).expect("not done"),
            }
            if self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
        }
        let mut n = 0;
        loop {
            if let Some((vp, end)) = self.writing {
                match m.file_access(vp, end, true, &mut self.ctx) {
                    Access::Done | Access::Block(_) => {
                        self.writing = (vp + 1 < end).then_some((vp + 1, end));
                    }
                    a => return self.not_done(m, now, a).expect("not done"),
                }
                continue;
            }
            if self.created >= self.spec.files {
                return self.finish(m, now + self.ctx.cost_ns, false);
            }
            if n >= CREATES_PER_STEP || self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
            let t0 = now + self.ctx.cost_ns;
            let (gfp, started) = *self.current.get_or_insert_with(|| {
                let nofs = self.spec.nofs_fraction >= 1.0
                    || (self.spec.nofs_fraction > 0.0
                        && self.rng.next_f64() < self.spec.nofs_fraction);
                (if nofs { GFP_NOFS } else { GFP_KERNEL }, t0)
            });
            let threads = self.spec.threads.max(1) as u64;
            let dir = self.index as u64 + (self.created / self.spec.files_per_dir) * threads;
            let (base, pages) = self.data;
            let data = if pages > 0 {
                (base + self.created as u32 * pages, pages)
            } else {
                (NONE, 0)
            };
            match m.fs_create(dir as u32, gfp, data, &mut self.ctx) {
                Ok(_) => {
                    self.current = None;
                    self.created += 1;
                    n += 1;
                    self.ctx.cost_ns += self.spec.think_ns;
                    let end = now + self.ctx.cost_ns;
                    self.create_latency.record(end - started);
                    if pages > 0 {
                        self.writing = Some((data.0, data.0 + pages));
                    }
                }
                Err(a) => return self.not_done(m, now, a).expect("not done"),
            }
        }
    }
}

impl Actor for Fsmark {
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
