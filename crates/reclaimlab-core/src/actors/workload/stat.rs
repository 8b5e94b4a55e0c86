//! A metadata walker (`[workload.stat]`): passes over the files of the `[fs]` namespace (what
//! the fsmark workloads created, in creation order), a path lookup and `stat` of each, as
//! `find -exec stat` or `ls -l` over fs_mark's directories does. A lookup whose dentry is
//! cached costs `hit_cost`; one whose dentry was pruned allocates a new dentry and finds the
//! inode in memory (XFS: recycles it if XFS reclaim had it) or reads it back from disk at the
//! filesystem's `io_latency`, allocating the inode again (`Machine::fs_open`; ext4 reads its
//! metadata blocks only when they are not in the block device's page cache). Lookups are
//! never inside a transaction: their allocations are GFP_KERNEL.

use super::spec::StatSpec;
use super::task::{Origin, Task, Work};
use super::QUANTUM_NS;
use crate::engine::histogram::Latency;
use crate::machine::{Access, Machine};
use crate::world::{StepCx, Wake};

pub type Stat = Task<StatWork>;

#[derive(Debug)]
pub struct StatWork {
    spec: StatSpec,
    /// This thread's number among the workload's walkers, and how many there are: thread k
    /// looks up files k, k + threads, ...
    index: u32,
    /// The pass under way: the next file and the pass's end (files present at its start).
    cursor: Option<(u32, u32)>,
    /// The lookup under way began at this time (kept across retries and the inode read).
    started: Option<u64>,
    pub passes: u64,
    pub lookups: u64,
    pub lookup_latency: Latency,
}

impl Stat {
    pub fn build(o: &Origin, spec: &StatSpec, index: u32, m: &mut Machine) -> Stat {
        m.mmget(o.task);
        let work = StatWork {
            spec: spec.clone(),
            index,
            cursor: None,
            started: None,
            passes: 0,
            lookups: 0,
            lookup_latency: Latency::new(),
        };
        Task::from_origin(o, format!("{}/stat{index}", o.workload), work)
    }

    /// The lookup of the file at the cursor is done (at `end`): record it, move on.
    fn done_one(&mut self, end: u64) {
        let (next, stop) = self.work.cursor.expect("a pass is under way");
        let started = self.work.started.take().unwrap_or(end);
        self.work.lookup_latency.record(end - started);
        self.work.lookups += 1;
        let next = next + self.work.spec.threads.max(1);
        if next >= stop {
            self.work.cursor = None;
            self.work.passes += 1;
        } else {
            self.work.cursor = Some((next, stop));
        }
    }

    fn run(&mut self, m: &mut Machine, now: u64) -> Wake {
        loop {
            if self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
            let t = now + self.ctx.cost_ns;
            let Some((file, _)) = self.work.cursor else {
                if self.work.passes >= self.work.spec.passes {
                    return self.finish(m, t, false);
                }
                let n = m.fs.as_ref().expect("mounted").files.len() as u32;
                if self.work.index >= n {
                    // Nothing (more) for this thread to walk: the pass is empty.
                    self.work.passes += 1;
                    continue;
                }
                self.work.cursor = Some((self.work.index, n));
                continue;
            };
            let started = *self.work.started.get_or_insert(t);
            match m.fs_open(file, &mut self.ctx) {
                Ok(None) => {
                    self.ctx.cost_ns += self.work.spec.hit_ns;
                    m.fs_close(file);
                    self.ctx.cost_ns += self.work.spec.think_ns;
                    self.done_one(now + self.ctx.cost_ns);
                }
                Ok(Some(until)) => {
                    // The inode is read back; the stat completes when the read does.
                    m.fs_close(file);
                    self.work.started = Some(started);
                    self.done_one(until.max(t));
                    return self.not_done(m, now, Access::Block(until));
                }
                Err(a) => return self.not_done(m, now, a),
            }
        }
    }
}

impl Work for StatWork {
    fn step(t: &mut Stat, cx: &mut StepCx) -> Wake {
        t.chunk(cx, Stat::run)
    }
}
