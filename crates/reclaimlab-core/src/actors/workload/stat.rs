//! A metadata walker (`[workload.stat]`): passes over the files of the `[fs]` namespace (what
//! the fsmark workloads created, in creation order), a path lookup and `stat` of each, as
//! `find -exec stat` or `ls -l` over fs_mark's directories does. A lookup whose dentry is
//! cached costs `hit_cost`; one whose dentry was pruned allocates a new dentry and finds the
//! inode in memory (XFS: recycles it if XFS reclaim had it) or reads it back from disk at the
//! filesystem's `io_latency`, allocating the inode again (`Machine::fs_open`). Lookups are
//! never inside a transaction: their allocations are GFP_KERNEL.

use std::any::Any;

use super::spec::StatSpec;
use super::{Origin, QUANTUM_NS};
use crate::engine::histogram::Latency;
use crate::machine::{Access, Machine, Signal, TaskCtx};
use crate::world::{Actor, StepCx, Wake};

#[derive(Debug)]
pub struct Stat {
    pub name: String,
    pub pid: u32,
    pub cpu: u32,
    pub task: usize,
    pub start_ns: u64,
    deadline_ns: Option<u64>,
    spec: StatSpec,
    /// This thread's number among the workload's walkers, and how many there are: thread k
    /// looks up files k, k + threads, ...
    index: u32,
    ctx: TaskCtx,
    /// The pass under way: the next file and the pass's end (files present at its start).
    cursor: Option<(u32, u32)>,
    /// The lookup under way began at this time (kept across retries and the inode read).
    started: Option<u64>,
    pub passes: u64,
    pub lookups: u64,
    pub lookup_latency: Latency,
    pub stall_ns: u64,
    pub wait_ns: u64,
    pub finished_ns: Option<u64>,
    pub killed: bool,
}

impl Stat {
    pub fn build(o: &Origin, spec: &StatSpec, index: u32, m: &mut Machine) -> Stat {
        m.mmget(o.task);
        Stat {
            name: format!("{}/stat{index}", o.workload),
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
            cursor: None,
            started: None,
            passes: 0,
            lookups: 0,
            lookup_latency: Latency::new(),
            stall_ns: 0,
            wait_ns: 0,
            finished_ns: None,
            killed: false,
        }
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

    /// The lookup of the file at the cursor is done (at `end`): record it, move on.
    fn done_one(&mut self, end: u64) {
        let (next, stop) = self.cursor.expect("a pass is under way");
        let started = self.started.take().unwrap_or(end);
        self.lookup_latency.record(end - started);
        self.lookups += 1;
        let next = next + self.spec.threads.max(1);
        if next >= stop {
            self.cursor = None;
            self.passes += 1;
        } else {
            self.cursor = Some((next, stop));
        }
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
            let Some((file, _)) = self.cursor else {
                if self.passes >= self.spec.passes {
                    return self.finish(m, t, false);
                }
                let n = m.fs.as_ref().expect("mounted").files.len() as u32;
                if self.index >= n {
                    // Nothing (more) for this thread to walk: the pass is empty.
                    self.passes += 1;
                    continue;
                }
                self.cursor = Some((self.index, n));
                continue;
            };
            let started = *self.started.get_or_insert(t);
            match m.fs_open(file, &mut self.ctx) {
                Ok(None) => {
                    self.ctx.cost_ns += self.spec.hit_ns;
                    m.fs_close(file);
                    self.ctx.cost_ns += self.spec.think_ns;
                    self.done_one(now + self.ctx.cost_ns);
                }
                Ok(Some(until)) => {
                    // The inode is read back; the stat completes when the read does.
                    m.fs_close(file);
                    self.started = Some(started);
                    self.done_one(until.max(t));
                    return self.not_done(m, now, Access::Block(until));
                }
                Err(a) => return self.not_done(m, now, a),
            }
        }
    }
}

impl Actor for Stat {
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
