//! The simulation: builds the machine from a scenario, runs the actors, collects the output.

use std::collections::VecDeque;
use std::time::Instant;

use crate::engine::{ActorId, EventQueue};
use crate::mm::layout::{self, ZoneLayout};
use crate::mm::node::Node;
use crate::mm::node::FIRST_TASK_PID;
use crate::mm::PAGE_SIZE;
use crate::observe::ftrace::{TaskId, TraceFormat, Tracer};
use crate::observe::render;
use crate::observe::timeseries::Sampler;
use crate::reclaim::kswapd::{self, Kswapd};
use crate::scenario::{Scenario, NS_PER_SEC};
use crate::workload::trace::TraceReplay;
use crate::workload::{Origin, Step, Thread};

/// How often the invariant checker runs (every frame in exactly one place; free + used = total;
/// counters never decrease). It is a debugging and testing aid: off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvariantMode {
    #[default]
    Off,
    /// After every event (use on small scenarios).
    EveryEvent,
    /// After every Nth event.
    Periodic(u64),
}

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    pub invariants: InvariantMode,
    /// Record an ftrace stream of the reclaim events in this format.
    pub trace: Option<TraceFormat>,
}

/// Columnar time series: `columns[0]` is `time_ns`; every column has the same length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeseries {
    pub columns: Vec<(String, Vec<i64>)>,
}

#[derive(Debug, Clone)]
pub struct RunOutput {
    /// `/proc/vmstat` text at the end of the run.
    pub vmstat: String,
    /// `/proc/zoneinfo` text at the end of the run.
    pub zoneinfo: String,
    /// `/proc/buddyinfo` text at the end of the run.
    pub buddyinfo: String,
    /// `summary.json` content (pretty-printed, keys in a fixed order, trailing newline).
    pub summary_json: String,
    pub timeseries: Timeseries,
    /// The vmstat event counters as (name, value), in /proc/vmstat order.
    pub counters: Vec<(String, u64)>,
    /// Wall-clock time of the run (not part of any output file: it is not deterministic).
    pub wall_ns: u64,
    /// Events processed.
    pub events: u64,
    /// The `trace` file (ftrace text), when `RunOptions::trace` asked for one.
    pub trace: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The scenario is valid TOML but describes a machine that cannot be built.
    Config(String),
    /// An invariant check failed (a simulator bug); the message says which and when.
    Invariant(String),
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Interrupted,
    /// A workload's trace file cannot be read or is malformed (the error names the record).
    Trace(crate::trace::TraceError),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "configuration error: {m}"),
            SimError::Invariant(m) => write!(f, "invariant violated: {m}"),
            SimError::Interrupted => write!(f, "interrupted"),
            SimError::Trace(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SimError {}

/// Run one scenario to completion. `progress(now_ns, end_ns)` is called before the first event
/// and then about every 20 ms of wall time; returning `false` stops the run with `Interrupted`.
pub fn run(
    scenario: &Scenario,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<RunOutput, SimError> {
    let mut sim = Sim::new(scenario, opts)?;
    sim.run(progress)?;
    Ok(sim.output())
}

/// The flusher wakes this often to write old dirty pages (`dirty_writeback_centisecs`).
const FLUSHER_PERIOD_NS: u64 = 5 * NS_PER_SEC;
/// Dirty pages older than this are written on the periodic wake (`dirty_expire_centisecs`).
const DIRTY_EXPIRE_NS: u64 = 30 * NS_PER_SEC;
/// Pages the flusher submits per step; it then waits for the disk queue to drain.
const FLUSHER_BATCH: u64 = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Actor {
    Thread(usize),
    Kswapd,
    SwapIo,
    DiskIo,
    Flusher,
    OomReaper,
    Sampler,
    Kcompactd,
}

struct Sim<'a> {
    scn: &'a Scenario,
    opts: RunOptions,
    seed: u64,
    q: EventQueue,
    actors: Vec<Actor>,
    node: Node,
    kswapd: Kswapd,
    kswapd_id: ActorId,
    swapio_id: ActorId,
    diskio_id: ActorId,
    flusher_id: ActorId,
    reaper_id: ActorId,
    kcompactd_id: ActorId,
    threads: Vec<Thread>,
    thread_ids: Vec<ActorId>,
    /// Threads of each task (process).
    task_threads: Vec<Vec<usize>>,
    /// Pending oom_reaper work: (time, task).
    reap: VecDeque<(u64, usize)>,
    sampler: Sampler,
    end_ns: u64,
    has_duration: bool,
    events: u64,
    invariants: crate::observe::invariants::Checker,
    stop_reason: String,
    /// An error a step ran into (a trace that became unreadable); the run stops with it.
    failure: Option<SimError>,
    wall_start: Instant,
    wall_ns: u64,
}

/// The machine's zones: from a captured `/proc/zoneinfo` or sized from the configured RAM.
pub fn host_layout(scn: &Scenario) -> Result<ZoneLayout, SimError> {
    match &scn.host.zoneinfo {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| SimError::Config(format!("cannot read zoneinfo {path}: {e}")))?;
            layout::parse_zoneinfo(&text)
                .map(|p| p.layout)
                .map_err(|e| SimError::Config(format!("{path}: {e}")))
        }
        None => ZoneLayout::for_host(&scn.host).map_err(SimError::Config),
    }
}

impl<'a> Sim<'a> {
    fn new(scn: &'a Scenario, opts: &RunOptions) -> Result<Sim<'a>, SimError> {
        let seed = opts.seed.unwrap_or(scn.sim.seed);
        let layout = host_layout(scn)?;
        let mut node = Node::new(scn, &layout, seed).map_err(SimError::Config)?;
        let mut q = EventQueue::new();
        let mut actors = Vec::new();
        let mut add = |q: &mut EventQueue, a: Actor| {
            let id = q.add_actor();
            actors.push(a);
            id
        };
        let kswapd_id = add(&mut q, Actor::Kswapd);
        let swapio_id = add(&mut q, Actor::SwapIo);
        let diskio_id = add(&mut q, Actor::DiskIo);
        let flusher_id = add(&mut q, Actor::Flusher);
        let reaper_id = add(&mut q, Actor::OomReaper);
        let sampler_id = add(&mut q, Actor::Sampler);
        let kcompactd_id = add(&mut q, Actor::Kcompactd);

        let mut threads = Vec::new();
        let mut task_threads = Vec::new();
        let mut trace_anon_pages = 0u64;
        for w in &scn.workloads {
            let task = node.add_task(&w.name, w.oom_score_adj);
            let deadline = w.duration_ns.map(|d| w.start_ns + d);
            let mut mine = Vec::new();
            let o = Origin {
                workload: &w.name,
                task,
                seed,
                start_ns: w.start_ns,
                deadline_ns: deadline,
            };
            if let Some(a) = &w.anon {
                let pages = a.size_bytes.div_ceil(PAGE_SIZE);
                let r = node
                    .add_region(task, pages, true)
                    .map_err(SimError::Config)?;
                mine.push(threads.len());
                threads.push(Thread::anon(&o, a, node.regions[r].base, pages as u32));
            }
            if let Some(f) = &w.file {
                let pages = f.size_bytes.div_ceil(PAGE_SIZE);
                let r = node
                    .add_region(task, pages, false)
                    .map_err(SimError::Config)?;
                mine.push(threads.len());
                threads.push(Thread::file(&o, f, node.regions[r].base, pages as u32));
            }
            if let Some(spec) = &w.trace {
                let mut replay = TraceReplay::scan(spec).map_err(SimError::Trace)?;
                let mut bases = [0u32; 2];
                for (i, (pages, anon)) in [(replay.anon_pages, true), (replay.file_pages, false)]
                    .into_iter()
                    .enumerate()
                {
                    if pages > 0 {
                        let r = node
                            .add_region(task, pages, anon)
                            .map_err(SimError::Config)?;
                        bases[i] = node.regions[r].base;
                    }
                }
                trace_anon_pages += replay.anon_pages;
                replay.place(bases[0], bases[1]);
                mine.push(threads.len());
                threads.push(Thread::trace(&o, spec, replay));
            }
            if let Some(spec) = &w.highorder {
                mine.push(threads.len());
                threads.push(Thread::highorder(&o, spec));
            }
            task_threads.push(mine);
        }
        if !scn.oom.allowed && trace_anon_pages > 0 {
            // The parser checked the anon tables; the traces' anonymous sizes are known only now.
            let anon: u64 = scn
                .workloads
                .iter()
                .filter_map(|w| w.anon.as_ref())
                .map(|a| a.size_bytes.div_ceil(PAGE_SIZE))
                .sum();
            let need = anon + trace_anon_pages;
            let have = node.total_managed_pages() + node.swap.total;
            if need > have {
                return Err(SimError::Config(format!(
                    "the workloads' anonymous memory ({need} pages, {trace_anon_pages} of them \
                     traces' objects) exceeds RAM + swap ({have} pages) and no OOM kill is \
                     allowed: set allowed = true in [oom], add swap, or replay a smaller trace"
                )));
            }
        }
        let thread_ids: Vec<ActorId> = (0..threads.len())
            .map(|i| add(&mut q, Actor::Thread(i)))
            .collect();
        for (i, t) in threads.iter().enumerate() {
            q.schedule(thread_ids[i], t.start_ns);
        }
        // kswapd starts asleep, waiting for the first wakeup_kswapd.
        node.kswapd.waiting = true;
        q.schedule(sampler_id, 0);
        q.schedule(flusher_id, FLUSHER_PERIOD_NS);
        let (end_ns, has_duration) = match scn.sim.duration_ns {
            Some(d) => (d, true),
            None => (scn.sim.max_duration_ns, false),
        };
        if let Some(format) = opts.trace {
            node.trace = Some(Box::new(Tracer::new(format, scn.host.cpus)));
        }
        for (i, t) in threads.iter().enumerate() {
            let cpu = (i as u32 + 1) % scn.host.cpus.max(1);
            node.trace_tasks
                .push(TaskId::new(&t.name, FIRST_TASK_PID + i as u32, cpu));
        }
        let sampler = Sampler::new(&node);
        let invariants = crate::observe::invariants::Checker::new(&node);
        node.now = 0;
        Ok(Sim {
            scn,
            opts: opts.clone(),
            seed,
            q,
            actors,
            node,
            kswapd: Kswapd::new(
                crate::policy::kswapd_loop::SWITCH.make(scn.policy.choices.get("kswapd_loop")),
                crate::policy::kcompactd::SWITCH.make(scn.policy.choices.get("kcompactd")),
            ),
            kswapd_id,
            swapio_id,
            diskio_id,
            flusher_id,
            reaper_id,
            kcompactd_id,
            threads,
            thread_ids,
            task_threads,
            reap: VecDeque::new(),
            sampler,
            end_ns,
            has_duration,
            events: 0,
            invariants,
            stop_reason: String::new(),
            failure: None,
            wall_start: Instant::now(),
            wall_ns: 0,
        })
    }

    fn run(&mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<(), SimError> {
        let mut last_report = Instant::now();
        self.stop_reason = "duration reached".into();
        // Once before the first event, so a caller can always stop a run it started.
        if !progress(0, self.end_ns) {
            return Err(SimError::Interrupted);
        }
        while let Some(a) = self.q.pop(self.end_ns) {
            self.node.now = self.q.now();
            self.step(a);
            if let Some(e) = self.failure.take() {
                return Err(e);
            }
            self.after_step();
            self.events += 1;
            match self.opts.invariants {
                InvariantMode::Off => {}
                InvariantMode::EveryEvent => self.check_invariants()?,
                InvariantMode::Periodic(n) => {
                    if n > 0 && self.events.is_multiple_of(n) {
                        self.check_invariants()?;
                    }
                }
            }
            if self.events.is_multiple_of(1024) && last_report.elapsed().as_millis() >= 20 {
                last_report = Instant::now();
                if !progress(self.q.now(), self.end_ns) {
                    return Err(SimError::Interrupted);
                }
            }
            if let Some(p) = &self.node.oom_panic {
                self.stop_reason = format!("kernel panic: {p}");
                break;
            }
            if !self.has_duration
                && self.reap.is_empty()
                && self.threads.iter().all(|t| t.is_finished())
            {
                self.stop_reason = "all workloads finished".into();
                break;
            }
        }
        if self.q.now() >= self.end_ns && !self.has_duration {
            self.stop_reason = "max_duration reached".into();
        }
        if self.has_duration {
            self.q.advance_to(self.end_ns);
        }
        self.node.now = self.q.now();
        if self.opts.invariants != InvariantMode::Off {
            self.check_invariants()?;
        }
        self.wall_ns = self.wall_start.elapsed().as_nanos() as u64;
        Ok(())
    }

    fn step(&mut self, a: ActorId) {
        let now = self.q.now();
        let actor = self.actors[a as usize];
        // The task trace events are attributed to (kswapd, or the workload thread); I/O
        // completions and the other kernel helpers emit no reclaim events.
        self.node.current = match actor {
            Actor::Thread(i) => 1 + i,
            _ => 0,
        };
        match actor {
            Actor::Thread(i) => match self.threads[i].step(&mut self.node) {
                Step::At(t) => self.q.schedule(a, t),
                Step::Finished => {
                    if let Some(e) = self.threads[i].error.take() {
                        self.failure = Some(SimError::Trace(e));
                    }
                    self.thread_finished(i)
                }
            },
            Actor::Kswapd => {
                let next = self.kswapd.step(&mut self.node);
                self.schedule_kswapd(next);
            }
            Actor::SwapIo | Actor::DiskIo => self.node.process_io_completions(now),
            Actor::Flusher => self.flusher_step(),
            Actor::OomReaper => {
                while let Some(&(t, task)) = self.reap.front() {
                    if t > now {
                        self.q.schedule(a, t);
                        break;
                    }
                    self.reap.pop_front();
                    self.exit_mm(task);
                    self.node.oom_victim_pending = None;
                }
            }
            Actor::Kcompactd => {
                // kcompactd: compact for the order kswapd handed over, one pass per wake.
                if let Some((order, hz)) = self.node.kcompactd_wake.take() {
                    self.node
                        .vm
                        .add(crate::observe::vmstat::VmEvent::CompactDaemonWake, 1);
                    let mut st = crate::mm::compaction::CompactStats::default();
                    self.node.compact_zones(order, hz, &mut st);
                    self.node.account_compaction(&st, true);
                    self.node
                        .vm
                        .add(crate::observe::vmstat::VmEvent::PgmigrateSuccess, 0);
                }
            }
            Actor::Sampler => {
                let awake = !self.kswapd.is_asleep();
                self.sampler.sample(now, &self.node, awake);
                self.q.schedule(a, now + self.scn.sim.sample_interval_ns);
            }
        }
    }

    fn schedule_kswapd(&mut self, next: kswapd::Next) {
        match next {
            kswapd::Next::At(t) => self.q.schedule(self.kswapd_id, t),
            kswapd::Next::Sleep => self.q.cancel(self.kswapd_id),
        }
    }

    /// Work that a step requested of other actors.
    fn after_step(&mut self) {
        if self.node.kswapd.wake_requested {
            // What kswapd does on waking (its kswapd_wake event) happens in its own context.
            self.node.current = 0;
            let next = self.kswapd.wake(&mut self.node);
            self.schedule_kswapd(next);
        }
        if self.node.kcompactd_wake.is_some() && self.q.due(self.kcompactd_id).is_none() {
            self.q.schedule(self.kcompactd_id, self.q.now());
        }
        if let Some(t) = self.node.swapdev.next_completion() {
            self.q.schedule_no_later_than(self.swapio_id, t);
        }
        if let Some(t) = self.node.disk.next_completion() {
            self.q.schedule_no_later_than(self.diskio_id, t);
        }
        if let Some(victim) = self.node.oom_kill_event.take() {
            let now = self.q.now();
            for &i in &self.task_threads[victim] {
                self.threads[i].stop(now, true);
                self.threads[i].release(&mut self.node);
                self.q.cancel(self.thread_ids[i]);
            }
            let t = now + self.scn.oom.reaper_delay_ns;
            self.reap.push_back((t, victim));
            self.q.schedule_no_later_than(self.reaper_id, t);
        }
        if self.node.stat.nr_dirty > 0 && self.q.due(self.flusher_id).is_none() {
            self.q.schedule(self.flusher_id, self.q.now());
        }
    }

    fn thread_finished(&mut self, i: usize) {
        self.threads[i].release(&mut self.node);
        let task = self.threads[i].task;
        if self.task_threads[task]
            .iter()
            .all(|&j| self.threads[j].is_finished())
            && !self.node.tasks[task].oom_killed
        {
            self.exit_mm(task);
        }
    }

    /// `exit_mmap`: the process's anonymous memory and swap go back.
    fn exit_mm(&mut self, task: usize) {
        for r in self.node.tasks[task].anon_regions.clone() {
            self.node.free_anon_region(r);
        }
        self.node.tasks[task].alive = false;
    }

    /// The writeback flusher: background writeback above the background threshold, and
    /// periodic writeback of pages dirty for longer than the expiry.
    fn flusher_step(&mut self) {
        let now = self.q.now();
        let (_, bg) = self.node.dirty_limits();
        let over_bg = self.node.stat.nr_dirty > bg;
        let older_than = if over_bg {
            u64::MAX
        } else {
            now.saturating_sub(DIRTY_EXPIRE_NS)
        };
        let n = self.node.writeback_dirty(FLUSHER_BATCH, older_than);
        let next = if n > 0 {
            self.node.disk.busy_until.max(now + 1)
        } else if self.node.stat.nr_dirty > 0 {
            now + FLUSHER_PERIOD_NS
        } else {
            // Idle until a page is dirtied (after_step reschedules it).
            return;
        };
        self.q.schedule(self.flusher_id, next);
    }

    fn check_invariants(&mut self) -> Result<(), SimError> {
        self.invariants
            .check(&self.node)
            .map_err(|m| SimError::Invariant(format!("at {} ns: {m}", self.q.now())))
    }

    fn output(mut self) -> RunOutput {
        let now = self.q.now();
        // A final sample at the end time, unless one was just taken.
        let awake = !self.kswapd.is_asleep();
        if self.sampler.last_time() != Some(now) {
            self.sampler.sample(now, &self.node, awake);
        }
        let cpus = self.scn.host.cpus as u64;
        let node = &self.node;
        let counters: Vec<(String, u64)> =
            node.vm.named().map(|(n, v)| (n.to_string(), v)).collect();
        let summary = crate::observe::summary::build(&crate::observe::summary::SummaryInput {
            scn: self.scn,
            seed: self.seed,
            node,
            kswapd: &self.kswapd,
            threads: &self.threads,
            end_ns: now,
            events: self.events,
            stop_reason: &self.stop_reason,
        });
        RunOutput {
            vmstat: render::vmstat_text(node),
            zoneinfo: render::zoneinfo_text(node, cpus),
            buddyinfo: render::buddyinfo_text(node, cpus),
            summary_json: summary,
            timeseries: self.sampler.finish(),
            counters,
            wall_ns: self.wall_ns,
            events: self.events,
            trace: node.trace.as_ref().map(|t| t.finish()),
        }
    }
}
