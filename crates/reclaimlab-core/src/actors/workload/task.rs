//! What every workload thread has in common, in one place: `Task<W>` holds a thread's identity
//! (name, pid, CPU, process), its schedule, its `TaskCtx`, the time it stalled and waited and
//! how it ended, and is the one `Actor` of every workload; `W` (`Work`) is what a workload
//! keeps for itself and its step. A workload file declares its state, its step and, where
//! its exit differs, what leaving the process means; OOM kills, the run's end and the
//! deadline are handled here for all of them.

use std::any::Any;
use std::fmt::Debug;
use std::ops::Deref;

use crate::machine::psi::{PsiGroupId, PsiTask};
use crate::machine::{Access, Machine, Signal, TaskCtx};
use crate::world::{Actor, StepCx, Wake};

/// Where a thread comes from: its workload (process), the run's seed and its schedule.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    pub workload: &'a str,
    pub task: usize,
    /// Its pid in trace output and the CPU it runs on.
    pub pid: u32,
    pub cpu: u32,
    pub seed: u64,
    pub start_ns: u64,
    pub deadline_ns: Option<u64>,
    /// The PSI group its stalls count in (its cgroup's; the system group without cgroups).
    pub psi_group: PsiGroupId,
}

/// A workload's own part of a thread.
pub trait Work: Sized + Debug + 'static {
    /// Whether the OOM killer's choice of the thread's process ends the thread (`false` for
    /// a one-shot command such as `drop_caches`, which runs to its end).
    const OOM_KILLABLE: bool = true;

    /// Run one bounded chunk of work at `cx.now()`.
    fn step(t: &mut Task<Self>, cx: &mut StepCx) -> Wake;

    /// Leave the process once finished: drop the thread's use of the address space (the
    /// last thread out tears it down).
    fn exit(t: &mut Task<Self>, m: &mut Machine) {
        m.mmput(t.task);
    }
}

#[derive(Debug)]
pub struct Task<W> {
    /// `workload/role`: also the name of its random stream.
    pub name: String,
    pub pid: u32,
    pub cpu: u32,
    /// Its process (`TaskMm`) in the machine.
    pub task: usize,
    pub start_ns: u64,
    pub deadline_ns: Option<u64>,
    pub ctx: TaskCtx,
    /// Time spent in direct reclaim.
    pub stall_ns: u64,
    /// Time spent waiting for I/O, log space and allocation back-offs.
    pub wait_ns: u64,
    pub finished_ns: Option<u64>,
    pub killed: bool,
    pub work: W,
}

impl<W> Task<W> {
    pub fn from_origin(o: &Origin, name: String, work: W) -> Task<W> {
        Task {
            name,
            pid: o.pid,
            cpu: o.cpu,
            task: o.task,
            start_ns: o.start_ns,
            deadline_ns: o.deadline_ns,
            ctx: TaskCtx {
                task: o.task,
                psi: PsiTask::new(o.psi_group, o.cpu as usize),
                ..Default::default()
            },
            stall_ns: 0,
            wait_ns: 0,
            finished_ns: None,
            killed: false,
            work,
        }
    }

    /// Mark the thread finished at `t`; `true` the first time (the caller then exits it).
    pub fn end(&mut self, t: u64, killed: bool) -> bool {
        if self.finished_ns.is_some() {
            return false;
        }
        self.finished_ns = Some(t);
        self.killed = killed;
        true
    }

    pub fn is_finished(&self) -> bool {
        self.finished_ns.is_some()
    }
}

impl<W: Work> Task<W> {
    /// Finish at `t` and leave the process (once).
    pub fn finish(&mut self, m: &mut Machine, t: u64, killed: bool) -> Wake {
        if self.end(t, killed) {
            W::exit(self, m);
        }
        Wake::Done
    }

    /// A timed writer's wake-up after a write that ended at `done`: the next write `every`
    /// after the one due at `*at` (no sooner than `done`, which `*at` becomes), or the end
    /// when it writes once. The cgroup and debugfs writers share it.
    pub fn next_write(
        &mut self,
        m: &mut Machine,
        at: &mut u64,
        every: Option<u64>,
        done: u64,
    ) -> Wake {
        match every {
            Some(every) => {
                *at = (*at + every).max(done);
                Wake::At(*at)
            }
            None => self.finish(m, done, false),
        }
    }

    /// The wake-up after an access or create that did not complete: wait for the I/O, back
    /// off and retry, yield, or die as the OOM victim.
    pub fn not_done(&mut self, m: &mut Machine, now: u64, a: Access) -> Wake {
        let t = now + self.ctx.cost_ns;
        match a {
            Access::Done | Access::Yield => Wake::At(t),
            Access::Block(until) => {
                self.wait_ns += until.saturating_sub(t);
                self.ctx.psi_iowait = true;
                Wake::At(until.max(t))
            }
            Access::Retry(sleep) => {
                self.wait_ns += sleep;
                Wake::At(t + sleep)
            }
            Access::Killed => self.finish(m, t, true),
        }
    }

    /// The usual step: a fresh `TaskCtx` step, the end at the deadline, `run` for the chunk,
    /// its direct-reclaim time counted and its CPU time charged.
    pub fn chunk(
        &mut self,
        cx: &mut StepCx,
        run: fn(&mut Self, &mut Machine, u64) -> Wake,
    ) -> Wake {
        let now = cx.now();
        self.ctx.begin_step();
        let m = cx.machine();
        let wake = if self.finished_ns.is_some() {
            Wake::Done
        } else if self.deadline_ns.is_some_and(|d| now >= d) {
            self.finish(m, now, false)
        } else {
            run(self, m, now)
        };
        self.stall_ns += self.ctx.stall_ns;
        cx.charge_cpu(self.ctx.cpu_ns());
        wake
    }
}

/// Observers read a workload's own figures through the task (`fsmark.created`).
impl<W> Deref for Task<W> {
    type Target = W;
    fn deref(&self) -> &W {
        &self.work
    }
}

/// The thread starts a step at `now` (`psi_enqueue` if it slept, then `psi_task_switch`): a
/// wait for a thrashing read ends with the wake-up. A thread is put on its machine's PSI CPUs
/// at its first step.
#[inline]
fn psi_runs(m: &mut Machine, ctx: &mut TaskCtx, now: u64) {
    if !ctx.psi_tracked {
        ctx.psi = m.psi.task(ctx.psi.group(), ctx.psi.cpu());
        ctx.psi_tracked = true;
    }
    if ctx.psi_thrash {
        ctx.psi_thrash = false;
        m.psi.set(&mut ctx.psi, true, false, false, now);
    } else {
        m.psi.run(&mut ctx.psi, now);
    }
}

/// The thread's step ended at `end` with `wake`: due again at once, it stays on its CPU
/// (no PSI change: a thread that keeps running costs nothing here); due later, it sleeps
/// from `end` (an I/O wait if its last access blocked on a read); done, it leaves PSI.
#[inline]
fn psi_stops(m: &mut Machine, ctx: &mut TaskCtx, end: u64, wake: Wake) {
    let iowait = std::mem::take(&mut ctx.psi_iowait);
    match wake {
        Wake::At(t) | Wake::NoLaterThan(t) | Wake::IfIdle(t) if t <= end => {}
        Wake::Done => {
            ctx.psi_thrash = false;
            m.psi.exit(&mut ctx.psi, end);
        }
        _ => m.psi.sleep(&mut ctx.psi, iowait, end),
    }
}

impl<W: Work> Actor for Task<W> {
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
        psi_runs(cx.machine(), &mut self.ctx, now);
        let steps = self.ctx.steps;
        let wake = W::step(self, cx);
        // A step that did no work (it ended, or waits for its start) used no time.
        let end = if self.ctx.steps != steps {
            now + self.ctx.cost_ns
        } else {
            now
        };
        psi_stops(cx.machine(), &mut self.ctx, end, wake);
        wake
    }

    fn wants(&self, signal: Signal) -> bool {
        W::OOM_KILLABLE && matches!(signal, Signal::OomKill(_))
    }

    /// The OOM killer chose this thread's process: it dies where it stands.
    fn on_signal(&mut self, signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        match signal {
            Signal::OomKill(victim) if victim == self.task => {
                let now = cx.now();
                let m = cx.machine();
                self.ctx.psi_thrash = false;
                m.psi.exit(&mut self.ctx.psi, now);
                Some(self.finish(m, now, true))
            }
            _ => None,
        }
    }

    fn holds_run_open(&self) -> bool {
        !self.is_finished()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
