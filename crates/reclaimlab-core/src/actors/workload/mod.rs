//! Workload threads: the actors that put pressure on memory.
//!
//! A scenario workload is a process (a `TaskMm` in the node); it runs an anonymous-memory
//! thread, a file-I/O thread and a trace-replay thread (`trace.rs`), in any combination. A
//! thread runs in chunks: up to `CHUNK_ACCESSES` page
//! accesses or `QUANTUM_NS` of simulated CPU time, whichever comes first, then yields so that
//! kswapd, I/O completions and the other threads interleave with it. A chunk also ends when the
//! thread blocks (major fault, read miss, allocation retry, dirty throttling).

pub mod drop_caches;
pub mod fsmark;
pub mod highorder;
pub mod lru_gen_write;
pub mod memory_reclaim;
pub mod simoops;
pub mod spec;
pub mod stat;
pub mod task;
pub mod trace;
pub mod zipf;

use crate::engine::units::{NS_PER_MS, NS_PER_US};
use crate::engine::Rng;
use crate::machine::{Access, Machine};
use crate::trace::TraceError;
use crate::world::{Failure, StepCx, Wake};
use spec::{AccessPattern, AnonSpec, FileOp, FileSpec};
pub use task::Origin;
use task::{Task, Work};
use trace::TraceReplay;
use zipf::Zipf;

/// Accesses per chunk (bounds the work between two events).
pub const CHUNK_ACCESSES: u32 = 1024;
/// Simulated CPU time per chunk.
pub const QUANTUM_NS: u64 = 100 * NS_PER_US;
/// Bounds of a `balance_dirty_pages` pause.
const DIRTY_PAUSE_MIN_NS: u64 = NS_PER_MS;
const DIRTY_PAUSE_MAX_NS: u64 = 200 * NS_PER_MS;

#[derive(Debug)]
enum Kind {
    Anon {
        pattern: AccessPattern,
        zipf: Option<Zipf>,
        write_fraction: f64,
        think_ns: u64,
    },
    File {
        write: bool,
    },
    Trace {
        replay: Box<TraceReplay>,
        think_ns: u64,
    },
    HighOrder(Box<highorder::HighOrderState>),
}

/// Random and Zipf accesses are drawn this many ahead so the alias-table column and the PTE of
/// each can be prefetched: a large working set is touched at memory latency otherwise. The
/// random numbers are drawn in the same order as without look-ahead, so results are identical.
const AHEAD: usize = 16;

#[derive(Debug, Clone)]
struct Lookahead {
    buf: [(u32, bool); AHEAD],
    pos: usize,
    len: usize,
}

impl Default for Lookahead {
    fn default() -> Self {
        Lookahead {
            buf: [(0, false); AHEAD],
            pos: 0,
            len: 0,
        }
    }
}

#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Holding,
}

/// What the simulation loop does with a thread after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    At(u64),
    Finished,
}

pub type Thread = Task<ThreadWork>;

#[derive(Debug)]
pub struct ThreadWork {
    kind: Kind,
    base: u32,
    pages: u32,
    passes: u64,
    pass: u64,
    pos: u64,
    hold_ns: u64,
    phase: Phase,
    rng: Rng,
    /// An access that must be retried (allocation back-off): (vpage, write).
    pending: Option<(u32, bool)>,
    ahead: Lookahead,
    /// Accesses completed.
    pub accesses: u64,
    /// A trace that could not be read during the run; the simulation stops with it.
    pub error: Option<TraceError>,
}

impl Thread {
    /// A thread named `<workload>/<role>` over `pages` vpages from `base`.
    fn new(
        o: &Origin,
        role: &str,
        kind: Kind,
        (base, pages): (u32, u32),
        passes: u64,
        hold_ns: u64,
    ) -> Thread {
        let name = format!("{}/{role}", o.workload);
        let work = ThreadWork {
            kind,
            base,
            pages,
            passes,
            pass: 0,
            pos: 0,
            hold_ns,
            phase: Phase::Running,
            rng: Rng::for_actor(o.seed, &name),
            pending: None,
            ahead: Lookahead::default(),
            accesses: 0,
            error: None,
        };
        Task::from_origin(o, name, work)
    }

    /// The thread of a `[workload.anon]` table over the region at `base`.
    pub fn anon(o: &Origin, spec: &AnonSpec, base: u32, pages: u32) -> Thread {
        let zipf = match spec.pattern {
            AccessPattern::Zipf { alpha } => Some(Zipf::new(pages as u64, alpha)),
            _ => None,
        };
        let kind = Kind::Anon {
            pattern: spec.pattern,
            zipf,
            write_fraction: spec.write_fraction,
            think_ns: spec.think_ns,
        };
        Thread::new(o, "anon", kind, (base, pages), spec.passes, spec.hold_ns)
    }

    /// The thread of a `[workload.file]` table over the file at `base`.
    pub fn file(o: &Origin, spec: &FileSpec, base: u32, pages: u32) -> Thread {
        let kind = Kind::File {
            write: spec.op == FileOp::Write,
        };
        Thread::new(o, "file", kind, (base, pages), spec.passes, spec.hold_ns)
    }

    /// A trace-replay thread. `replay` has been scanned and placed.
    pub fn trace(o: &Origin, spec: &spec::TraceSpec, replay: TraceReplay) -> Thread {
        let kind = Kind::Trace {
            replay: Box::new(replay),
            think_ns: spec.think_ns,
        };
        Thread::new(o, "trace", kind, (0, 0), spec.passes, spec.hold_ns)
    }

    pub fn is_trace(&self) -> bool {
        matches!(self.work.kind, Kind::Trace { .. })
    }

    /// Records replayed so far (trace threads; 0 for the others).
    pub fn records_replayed(&self) -> u64 {
        match &self.work.kind {
            Kind::Trace { replay, .. } => replay.records_replayed,
            _ => 0,
        }
    }

    /// Stop the thread (its process exited or was killed); `ThreadWork::exit` leaves the
    /// process.
    pub fn stop(&mut self, now: u64, killed: bool) {
        self.end(now, killed);
    }

    /// The next page to touch and whether the access writes.
    #[inline]
    fn next_access(&mut self, pte: &[u32]) -> (u32, bool) {
        if let Some(p) = self.work.pending.take() {
            return p;
        }
        match &self.work.kind {
            Kind::Anon {
                pattern: AccessPattern::Sequential,
                write_fraction,
                ..
            } => {
                let wf = *write_fraction;
                let write = wf >= 1.0 || (wf > 0.0 && self.work.rng.next_f64() < wf);
                (self.work.base + self.work.pos as u32, write)
            }
            Kind::Anon { .. } => {
                if self.work.ahead.pos == self.work.ahead.len {
                    self.refill_ahead(pte);
                }
                let a = self.work.ahead.buf[self.work.ahead.pos];
                self.work.ahead.pos += 1;
                a
            }
            Kind::File { write } => (self.work.base + self.work.pos as u32, *write),
            Kind::Trace { .. } | Kind::HighOrder(_) => {
                unreachable!("trace and high-order threads have their own steps")
            }
        }
    }

    /// Draw the next `AHEAD` random or Zipf accesses, prefetching what each will touch.
    fn refill_ahead(&mut self, pte: &[u32]) {
        let Kind::Anon {
            pattern,
            zipf,
            write_fraction,
            ..
        } = &self.work.kind
        else {
            unreachable!("look-ahead is for anonymous random and Zipf accesses");
        };
        let wf = *write_fraction;
        let mut words = [0u64; AHEAD];
        let mut cols = [0usize; AHEAD];
        let alias = match zipf {
            Some(zipf::Zipf::Alias(a)) => Some(a),
            _ => None,
        };
        // Pass 1: draw, in the same order as one access at a time (index, then write).
        for k in 0..AHEAD {
            match (pattern, alias) {
                (AccessPattern::Zipf { .. }, Some(a)) => {
                    words[k] = self.work.rng.next_u64();
                    cols[k] = a.column(words[k]);
                    prefetch(a.column_ptr(cols[k]));
                }
                (AccessPattern::Zipf { .. }, None) => {
                    cols[k] =
                        (zipf.as_ref().expect("zipf").sample(&mut self.work.rng) - 1) as usize;
                }
                _ => cols[k] = self.work.rng.below(self.work.pages as u64) as usize,
            }
            let write = wf >= 1.0 || (wf > 0.0 && self.work.rng.next_f64() < wf);
            self.work.ahead.buf[k].1 = write;
        }
        // Pass 2: resolve alias columns, prefetch the page-table entries.
        for k in 0..AHEAD {
            let idx = match alias {
                Some(a) if matches!(pattern, AccessPattern::Zipf { .. }) => {
                    a.resolve(cols[k], words[k])
                }
                _ => cols[k] as u64,
            };
            let vp = self.work.base + idx as u32;
            prefetch(&pte[vp as usize]);
            self.work.ahead.buf[k].0 = vp;
        }
        self.work.ahead.pos = 0;
        self.work.ahead.len = AHEAD;
    }

    /// Run one chunk at `node.now`.
    pub fn step(&mut self, node: &mut Machine) -> Step {
        let now = node.now;
        if self.is_finished() {
            return Step::Finished;
        }
        if self.deadline_ns.is_some_and(|d| now >= d) || self.work.phase == Phase::Holding {
            // A read stopped while its read-ahead window was filling leaves no pages behind.
            if let Some(ra) = self.ctx.readahead.take() {
                node.readahead_free(ra);
            }
            self.stop(now, false);
            return Step::Finished;
        }
        self.ctx.begin_step();
        if matches!(self.work.kind, Kind::Trace { .. }) {
            return self.step_trace(node);
        }
        if matches!(self.work.kind, Kind::HighOrder(_)) {
            return self.step_highorder(node);
        }
        let is_file = matches!(self.work.kind, Kind::File { .. });
        let think_ns = match self.work.kind {
            Kind::Anon { think_ns, .. } => think_ns,
            Kind::File { .. } | Kind::Trace { .. } | Kind::HighOrder(_) => 0,
        };
        let writes_file = matches!(self.work.kind, Kind::File { write: true });
        if writes_file {
            if let Some(pause) = dirty_throttle(node) {
                self.wait_ns += pause;
                return Step::At(now + pause);
            }
        }
        let region_end = self.work.base + self.work.pages;
        let mut n = 0;
        loop {
            if self.work.pass >= self.work.passes {
                return self.end_of_passes(now + self.ctx.cost_ns);
            }
            let (vp, write) = self.next_access(&node.pte);
            let r = if is_file {
                node.file_access(vp, region_end, write, &mut self.ctx)
            } else {
                node.anon_access(vp, write, &mut self.ctx)
            };
            self.ctx.cost_ns += think_ns;
            match r {
                Access::Done | Access::Block(_) => self.advance(),
                Access::Retry(_) | Access::Yield => self.work.pending = Some((vp, write)),
                Access::Killed => {}
            }
            n += 1;
            if let Some(step) = self.after_access(now, r, n) {
                return step;
            }
        }
    }

    /// One chunk of a trace-replay thread: the same chunking, blocking and retry rules as the
    /// other threads, with each record touching its pages in order (a record whose pages are
    /// not all done when the chunk ends goes on in the next chunk). With `time = "trace"` the
    /// thread sleeps until a record's arrival time.
    fn step_trace(&mut self, node: &mut Machine) -> Step {
        let now = node.now;
        let mut n = 0;
        loop {
            if self.work.pass >= self.work.passes {
                return self.end_of_passes(now + self.ctx.cost_ns);
            }
            let Kind::Trace { replay, think_ns } = &mut self.work.kind else {
                unreachable!("step_trace on a trace thread only");
            };
            let think_ns = *think_ns;
            if replay.cur.is_none() {
                match replay.fetch(&mut self.work.rng) {
                    Ok(true) => {}
                    Ok(false) => {
                        self.work.pass += 1;
                        continue;
                    }
                    Err(e) => {
                        self.work.error = Some(e);
                        self.stop(now + self.ctx.cost_ns, false);
                        self.stall_ns += self.ctx.stall_ns;
                        return Step::Finished;
                    }
                }
            }
            let t = now + self.ctx.cost_ns;
            if let Some(arrival) = replay.arrival(t) {
                if arrival > t {
                    return self.yield_at(arrival);
                }
            }
            let c = replay.cur.expect("fetched above");
            let r = if c.file {
                node.file_access(c.vp, c.object_end, c.write, &mut self.ctx)
            } else {
                node.anon_access(c.vp, c.write, &mut self.ctx)
            };
            self.ctx.cost_ns += think_ns;
            if matches!(r, Access::Done | Access::Block(_)) {
                replay.advance();
                self.work.accesses += 1;
            }
            n += 1;
            if let Some(step) = self.after_access(now, r, n) {
                return step;
            }
        }
    }

    /// What follows one access, once the caller has recorded its own progress: wait for I/O,
    /// back off and retry, die as the OOM victim, or end the chunk when it is long enough.
    /// `Some(step)` ends the chunk.
    #[inline]
    fn after_access(&mut self, now: u64, r: Access, n: u32) -> Option<Step> {
        let t = now + self.ctx.cost_ns;
        match r {
            Access::Done => {}
            Access::Block(until) => {
                self.wait_ns += until.saturating_sub(t);
                self.ctx.psi_iowait = true;
                return Some(self.yield_at(until.max(t)));
            }
            Access::Retry(sleep) => {
                self.wait_ns += sleep;
                return Some(self.yield_at(t + sleep));
            }
            // Direct reclaim or a paced read-ahead window yielded: let the others run, then
            // resume it.
            Access::Yield => return Some(self.yield_at(t)),
            Access::Killed => {
                self.stop(t, true);
                self.stall_ns += self.ctx.stall_ns;
                return Some(Step::Finished);
            }
        }
        (n >= CHUNK_ACCESSES || self.ctx.cost_ns >= QUANTUM_NS).then(|| self.yield_at(t))
    }

    #[inline]
    fn advance(&mut self) {
        self.work.accesses += 1;
        self.work.pos += 1;
        if self.work.pos >= self.work.pages as u64 {
            self.work.pos = 0;
            self.work.pass += 1;
        }
    }

    /// Every pass is done at `t`: hold the memory for `hold_ns` if asked, else exit.
    fn end_of_passes(&mut self, t: u64) -> Step {
        if self.work.hold_ns > 0 {
            self.work.phase = Phase::Holding;
            // The workload's `duration` ends the hold too: it exits then, holding or not.
            let until = t + self.work.hold_ns;
            let until = self.deadline_ns.map_or(until, |d| until.min(d.max(t)));
            return self.yield_at(until);
        }
        self.stop(t, false);
        Step::Finished
    }

    fn yield_at(&mut self, t: u64) -> Step {
        self.stall_ns += self.ctx.stall_ns;
        Step::At(t)
    }
}

/// `balance_dirty_pages`: a writer above the dirty limit pauses long enough for the disk to
/// write the excess (bounded like the kernel's pause).
fn dirty_throttle(node: &Machine) -> Option<u64> {
    let (thresh, _) = node.dirty_limits();
    let dirty = node.stat.nr_dirty + node.stat.nr_writeback;
    if dirty <= thresh {
        return None;
    }
    let excess = dirty - thresh;
    Some((excess * node.disk.ns_per_page).clamp(DIRTY_PAUSE_MIN_NS, DIRTY_PAUSE_MAX_NS))
}

impl Work for ThreadWork {
    fn step(t: &mut Thread, cx: &mut StepCx) -> Wake {
        let step = Thread::step(t, cx.machine());
        // What the chunk did on the CPU: accesses, faults, reclaim, think time.
        cx.charge_cpu(t.ctx.cpu_ns());
        match step {
            Step::At(at) => Wake::At(at),
            Step::Finished => {
                if let Some(e) = t.work.error.take() {
                    cx.fail(Failure::Trace(e));
                }
                Self::exit(t, cx.machine());
                Wake::Done
            }
        }
    }

    /// Give back the kernel memory it holds, then leave the process.
    fn exit(t: &mut Thread, m: &mut Machine) {
        m.abandon_reclaim(&mut t.ctx);
        t.release(m);
        m.mmput(t.task);
    }
}
