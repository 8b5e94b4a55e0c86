//! A run: build the world a scenario describes (its machine, kernel threads, workload threads
//! and observers), run it to its end, and render the outputs. This is the only module that
//! knows the scenario, the policy registry, the actors and the observers all at once.

use std::time::Instant;

use crate::actors::blkdev_io::{BlkdevIo, Device};
use crate::actors::flusher::{Flusher, FLUSHER_PERIOD_NS};
use crate::actors::kcompactd::Kcompactd;
use crate::actors::kswapd::{Kswapd, KSWAPD_PID};
use crate::actors::oom_reaper::OomReaper;
use crate::actors::workload::Thread;
use crate::actors::xfs_reclaim_worker::XfsReclaimWorker;
use crate::actors::xfsaild::Xfsaild;
use crate::engine::ActorId;
use crate::machine::fs::FsType;
use crate::machine::{Machine, PAGE_SIZE};
use crate::observe::ftrace::{TaskId, TaskTracer, TraceFormat, Tracer};
use crate::observe::invariants::Checker;
use crate::observe::render;
use crate::observe::timeseries::{Sampler, Timeseries};
use crate::observe::vm_rss::VmRss;
use crate::policy;
use crate::scenario::Scenario;
use crate::world::{Stop, World};

pub use crate::build::{host_layout, host_machine, host_params, FIRST_TASK_PID};
use crate::build::{workload_threads, WorkloadThreads};
pub use crate::sim_error::SimError;

/// Engine version recorded in every summary; bump when simulated results may change. Declared
/// where runs are made and handed to the summary (`reclaimlab_core::ENGINE_VERSION` too).
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// More files of the result directory, by name: `slabinfo` and `shrinker_debugfs` when the
    /// machine has slab shrinkers, then `meminfo` (every run).
    pub extra_files: Vec<(String, String)>,
}

/// Run one scenario to completion. `progress(now_ns, end_ns)` is called before the first event
/// and then about every 20 ms of wall time; returning `false` stops the run with `Interrupted`.
pub fn run(
    scenario: &Scenario,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<RunOutput, SimError> {
    let end_ns = scenario
        .sim
        .duration_ns
        .unwrap_or(scenario.sim.max_duration_ns);
    let seed = opts.seed.unwrap_or(scenario.sim.seed);
    let machine = host_machine(scenario, seed, opts.trace.is_some())?;
    // Reading the traces before the run can take a while: a stop asked meanwhile is honoured.
    let mut run = Run::with_machine_polled(scenario, opts, machine, &mut || progress(0, end_ns))?;
    run.go(progress)?;
    Ok(run.output())
}

/// A run being set up or under way. [`run`] is `new`, `go`, `output`; a caller that wants to
/// add an actor or observer of its own, or start from a machine it changed, uses the steps.
pub struct Run<'a> {
    scn: &'a Scenario,
    opts: RunOptions,
    seed: u64,
    world: World,
    threads: Vec<ActorId>,
    fs_threads: Vec<ActorId>,
    kswapd: ActorId,
    sampler: ActorId,
    guests: Vec<crate::run_virt::GuestActors>,
    vm_rss: Option<ActorId>,
    xen: Option<crate::run_xen::XenActors>,
    end_ns: u64,
    has_duration: bool,
    events: u64,
    /// One checker per machine (the host first, then the guests).
    invariants: Option<Vec<Checker>>,
    stop_reason: String,
    wall_start: Instant,
    wall_ns: u64,
}

impl<'a> Run<'a> {
    /// The world of `scn`: its host machine, kernel threads, workloads and sampler.
    pub fn new(scn: &'a Scenario, opts: &RunOptions) -> Result<Run<'a>, SimError> {
        let seed = opts.seed.unwrap_or(scn.sim.seed);
        let machine = host_machine(scn, seed, opts.trace.is_some())?;
        Run::with_machine(scn, opts, machine)
    }

    /// The world of `scn` around a machine the caller built (from [`host_params`]).
    pub fn with_machine(
        scn: &'a Scenario,
        opts: &RunOptions,
        machine: Machine,
    ) -> Result<Run<'a>, SimError> {
        Run::with_machine_polled(scn, opts, machine, &mut || true)
    }

    /// [`with_machine`](Self::with_machine), calling `poll` while the workloads' traces are read;
    /// `SimError::Interrupted` when it returns false.
    pub fn with_machine_polled(
        scn: &'a Scenario,
        opts: &RunOptions,
        mut machine: Machine,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Run<'a>, SimError> {
        let seed = opts.seed.unwrap_or(scn.sim.seed);
        let cpus = scn.host.cpus.max(1);

        if let Some(fs) = &scn.fs {
            machine.mount_fs(fs.clone(), scn.sysctl.vfs_cache_pressure);
        }
        crate::run_xen::install_dom0(scn, &mut machine)?;
        let WorkloadThreads {
            threads,
            fs_threads,
            trace_anon_pages,
        } = workload_threads(&scn.workloads, &mut machine, cpus, seed, 0, poll)?;
        for t in &threads {
            machine.mmget(t.task);
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
            let have = machine.total_managed_pages() + machine.swap.total;
            if need > have {
                return Err(SimError::Config(format!(
                    "the workloads' anonymous memory ({need} pages, {trace_anon_pages} of them \
                     traces' objects) exceeds RAM + swap ({have} pages) and no OOM kill is \
                     allowed: set allowed = true in [oom], add swap, or replay a smaller trace"
                )));
            }
        }

        // Guests: machines of their own, each with its VM process on this host.
        let guests = crate::run_virt::build_guests(scn, &mut machine, seed, poll)?;
        let (guest_machines, vcpus, slots, guest_threads) = crate::run_virt::split(guests);

        let sampler = Sampler::new(&machine, cpus as usize, scn.sim.sample_interval_ns);
        let invariants = (opts.invariants != InvariantMode::Off).then(|| {
            std::iter::once(&machine)
                .chain(&guest_machines)
                .map(Checker::new)
                .collect::<Vec<_>>()
        });
        let mut machines = vec![machine];
        machines.extend(guest_machines);
        let mut all_cpus = vec![cpus];
        all_cpus.extend(vcpus);
        let mut world = World::new(machines, &all_cpus, scn.host.cpu_contention);
        let choices = &scn.policy.choices;

        // Registration order is the order of first scheduling: workload threads at their
        // start, the sampler at 0, the flusher at its first period (ties at one nanosecond run
        // in that order). The kernel threads start idle.
        let starts: Vec<(u64, TaskId)> = threads
            .iter()
            .map(|t| (t.start_ns, TaskId::new(&t.name, t.pid, t.cpu)))
            .collect();
        let thread_ids: Vec<ActorId> = threads
            .into_iter()
            .map(|t| world.add_actor(Box::new(t)))
            .collect();
        for (&id, &(start, _)) in thread_ids.iter().zip(&starts) {
            world.start(id, start);
        }
        let mut fs_ids = Vec::new();
        let mut fs_tasks = Vec::new();
        for (start, who, a) in fs_threads {
            let id = world.add_actor(a);
            world.start(id, start);
            fs_ids.push(id);
            fs_tasks.push((id, who));
        }
        let sampler_id = world.add_observer(Box::new(sampler));
        world.start(sampler_id, 0);
        let kswapd = world.add_actor(Box::new(Kswapd::new(
            policy::kswapd_loop::SWITCH.make(choices.get("kswapd_loop")),
            policy::kcompactd::SWITCH.make(choices.get("kcompactd")),
        )));
        world.add_actor(Box::new(BlkdevIo {
            device: Device::Swap,
        }));
        world.add_actor(Box::new(BlkdevIo {
            device: Device::Disk,
        }));
        let flusher = world.add_actor(Box::new(Flusher));
        world.start(flusher, FLUSHER_PERIOD_NS);
        world.add_actor(Box::new(OomReaper::new(scn.oom.reaper_delay_ns)));
        let kcompactd = Kcompactd::new(policy::kcompactd::SWITCH.make(choices.get("kcompactd")), 0);
        let first_check = kcompactd.proactive_check_at();
        let kcompactd = world.add_actor(Box::new(kcompactd));
        if let Some(t) = first_check {
            world.start(kcompactd, t);
        }
        // ext4 has no filesystem-private inode reclaim: no xfsaild, no reclaim worker.
        if let Some(fs) = scn.fs.as_ref().filter(|f| f.fs_type == FsType::Xfs) {
            let aild = world.add_actor(Box::new(Xfsaild::default()));
            world.start(aild, 0);
            let worker = world.add_actor(Box::new(XfsReclaimWorker));
            world.start(worker, XfsReclaimWorker::period_ns(fs.xfssyncd_centisecs));
        }

        let guests =
            crate::run_virt::start_guests(&mut world, scn, seed, 0, 1, slots, guest_threads);
        let xen = crate::run_xen::start_xen(&mut world, scn, 0, 1)?;
        let vm_rss = (!scn.guests.is_empty() && scn.xen.is_none()).then(|| {
            let names = scn.guests.iter().map(|g| g.name.clone()).collect();
            let id = world.add_observer(Box::new(VmRss::new(names, scn.sim.sample_interval_ns)));
            world.start(id, 0);
            id
        });

        if let Some(format) = opts.trace {
            let kswapd0 = TaskId::new("kswapd0", KSWAPD_PID, 0);
            let mut sink = TaskTracer::new(Tracer::new(format, cpus), kswapd0.clone());
            sink.set_task(kswapd, kswapd0);
            for (&id, (_, who)) in thread_ids.iter().zip(&starts) {
                sink.set_task(id, who.clone());
            }
            for (id, who) in &fs_tasks {
                sink.set_task(*id, who.clone());
            }
            world.set_trace_sink(Box::new(sink));
        }

        let (end_ns, has_duration) = match scn.sim.duration_ns {
            Some(d) => (d, true),
            None => (scn.sim.max_duration_ns, false),
        };
        Ok(Run {
            scn,
            opts: opts.clone(),
            seed,
            world,
            threads: thread_ids,
            fs_threads: fs_ids,
            kswapd,
            sampler: sampler_id,
            guests,
            vm_rss,
            xen,
            end_ns,
            has_duration,
            events: 0,
            invariants,
            stop_reason: String::new(),
            wall_start: Instant::now(),
            wall_ns: 0,
        })
    }

    /// The world, to add actors or observers before the run starts.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    pub fn world(&self) -> &World {
        &self.world
    }

    /// Run to the end (the duration, the last workload's exit, a panic or a failure).
    pub fn go(&mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<(), SimError> {
        let mut last_report = Instant::now();
        self.stop_reason = "duration reached".into();
        // Once before the first event, so a caller can always stop a run it started.
        if !progress(0, self.end_ns) {
            return Err(SimError::Interrupted);
        }
        loop {
            // Events run in batches that end where a check below is due (an invariant check,
            // the progress report every 1024 events); the world itself stops after an event
            // that fails, panics or closes the run, so every check sees the same events as
            // after each single step.
            let mut batch = 1024 - self.events % 1024;
            match self.opts.invariants {
                InvariantMode::Off => {}
                InvariantMode::EveryEvent => batch = 1,
                InvariantMode::Periodic(n) => {
                    if n > 0 {
                        batch = batch.min(n - self.events % n);
                    }
                }
            }
            let (ran, stop) = self.world.run(self.end_ns, batch, !self.has_duration);
            if let Some(f) = self.world.take_failure() {
                return Err(f.into());
            }
            if ran == 0 {
                break;
            }
            self.events += ran;
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
                if !progress(self.world.now(), self.end_ns) {
                    return Err(SimError::Interrupted);
                }
            }
            if let Some((_, why)) = &self.world.panic {
                self.stop_reason = format!("kernel panic: {why}");
                break;
            }
            if self.scn.oom.stop_on_kill && !self.world.machines[0].oom_kills.is_empty() {
                self.stop_reason = "OOM kill on the host".into();
                break;
            }
            if !self.has_duration && !self.world.held_open() {
                self.stop_reason = "all workloads finished".into();
                break;
            }
            if stop == Stop::Idle {
                break;
            }
        }
        if self.world.now() >= self.end_ns && !self.has_duration {
            self.stop_reason = "max_duration reached".into();
        }
        if self.has_duration && self.stop_reason == "duration reached" {
            self.world.advance_to(self.end_ns);
        } else {
            self.world.advance_to(self.world.now());
        }
        if self.opts.invariants != InvariantMode::Off {
            self.check_invariants()?;
        }
        self.wall_ns = self.wall_start.elapsed().as_nanos() as u64;
        Ok(())
    }

    fn check_invariants(&mut self) -> Result<(), SimError> {
        let now = self.world.now();
        let checker = self
            .invariants
            .as_mut()
            .expect("checker built when invariants are on");
        for (m, c) in checker.iter_mut().enumerate() {
            let which = if m == 0 {
                String::new()
            } else {
                format!("guest {}: ", self.scn.guests[m - 1].name)
            };
            c.check(&self.world.machines[m])
                .map_err(|e| SimError::Invariant(format!("at {now} ns: {which}{e}")))?;
        }
        for (g, h, slot) in self.world.guest_memories() {
            slot.check(&self.world.machines[h]).map_err(|e| {
                SimError::Invariant(format!(
                    "at {now} ns: guest {}: {e}",
                    self.scn.guests[g - 1].name
                ))
            })?;
        }
        Ok(())
    }

    /// The run's outputs, rendered.
    pub fn output(mut self) -> RunOutput {
        let now = self.world.now();
        let cpus = self.scn.host.cpus as u64;
        // A final sample at the end time, unless one was just taken.
        let mut sampler = self
            .world
            .remove_observer(self.sampler)
            .and_then(|o| o.into_any().downcast::<Sampler>().ok())
            .expect("the run has a sampler");
        if sampler.last_time() != Some(now) {
            sampler.sample(now, &self.world);
        }
        let mut vm_rss = self.vm_rss.and_then(|id| {
            self.world
                .remove_observer(id)
                .and_then(|o| o.into_any().downcast::<VmRss>().ok())
        });
        if let Some(v) = vm_rss.as_mut() {
            if v.last_time() != Some(now) {
                v.sample(now, &self.world);
            }
        }
        let mut fs_summary = crate::run_fs::fs_summary(&self.world, &self.fs_threads, now);
        let mut guest_files = Vec::new();
        if let Some(v) = &vm_rss {
            let scenario_toml = crate::scenario::to_toml(self.scn);
            let info = crate::run_virt::RunInfo {
                seed: self.seed,
                engine_version: ENGINE_VERSION,
                end_ns: now,
                events: self.events,
                stop_reason: &self.stop_reason,
                scenario_toml: &scenario_toml,
            };
            let (files, rows) = crate::run_virt::guest_outputs(
                &self.world,
                self.scn,
                &self.guests,
                &v.peaks(),
                &info,
            );
            guest_files = files;
            guest_files.push(("vm_rss.csv".to_string(), v.csv()));
            let mut obj = match fs_summary.take() {
                Some(serde_json::Value::Object(o)) => o,
                _ => serde_json::Map::new(),
            };
            obj.insert("guests".into(), rows);
            fs_summary = Some(serde_json::Value::Object(obj));
        }
        if let Some(xa) = &self.xen {
            let (obj, files) = crate::run_xen::xen_outputs(&self.world, self.scn, xa);
            let mut o = match fs_summary.take() {
                Some(serde_json::Value::Object(o)) => o,
                _ => serde_json::Map::new(),
            };
            o.insert("xen".into(), obj);
            fs_summary = Some(serde_json::Value::Object(o));
            guest_files.extend(files);
        }
        let fs_stall = crate::run_fs::fs_threads_stall_ns(&self.world, &self.fs_threads);
        let mut extra_files = Vec::new();
        if !self.world.machines[0].shrinkers.is_empty() {
            let m = &mut self.world.machines[0];
            extra_files.push(("slabinfo".to_string(), crate::run_fs::slabinfo_text(m)));
            let debugfs = crate::run_fs::shrinker_debugfs_text(m);
            extra_files.push(("shrinker_debugfs".to_string(), debugfs));
        }
        let meminfo = crate::observe::render::meminfo_text(&self.world.machines[0]);
        extra_files.push(("meminfo".to_string(), meminfo));
        extra_files.extend(guest_files);
        let node = &self.world.machines[0];
        let counters: Vec<(String, u64)> =
            node.vm.named().map(|(n, v)| (n.to_string(), v)).collect();
        let kswapd = self
            .world
            .actor(self.kswapd)
            .and_then(|a| a.as_any().downcast_ref::<Kswapd>())
            .expect("the run has a kswapd");
        let threads: Vec<&Thread> = self
            .threads
            .iter()
            .filter_map(|&id| self.world.actor(id))
            .filter_map(|a| a.as_any().downcast_ref::<Thread>())
            .collect();
        let scenario_toml = crate::scenario::to_toml(self.scn);
        let summary = crate::observe::summary::build(&crate::observe::summary::SummaryInput {
            name: &self.scn.name,
            scenario_toml: &scenario_toml,
            seed: self.seed,
            engine_version: ENGINE_VERSION,
            node,
            kswapd,
            threads: &threads,
            cpus: &self.world.cpus[0],
            end_ns: now,
            events: self.events,
            stop_reason: &self.stop_reason,
            extra: fs_summary,
            extra_stall_ns: fs_stall,
        });
        let trace = self
            .world
            .trace_sink()
            .and_then(|s| s.as_any().downcast_ref::<TaskTracer>())
            .map(|t| t.tracer.finish());
        RunOutput {
            vmstat: render::vmstat_text(node),
            zoneinfo: render::zoneinfo_text(node, cpus),
            buddyinfo: render::buddyinfo_text(node, cpus),
            summary_json: summary,
            timeseries: sampler.finish(),
            counters,
            wall_ns: self.wall_ns,
            events: self.events,
            trace,
            extra_files,
        }
    }
}
