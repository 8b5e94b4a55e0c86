//! A run: build the world a scenario describes (its machine, kernel threads, workload threads
//! and observers), run it to its end, and render the outputs. This is the only module that
//! knows the scenario, the policy registry, the actors and the observers all at once.

use std::time::Instant;

use crate::boot::{Built, Ctx};
use crate::machine::Machine;
use crate::observe::ftrace::TraceFormat;
use crate::observe::output::Ended;
use crate::scenario::Scenario;
use crate::world::{Stop, World};

pub use crate::boot::{host_layout, host_machine, host_params, FIRST_TASK_PID};
pub use crate::observe::output::RunOutput;
pub use crate::sim_error::SimError;

/// Engine version recorded in every summary: the package version and a digest of the engine's
/// source (`build.rs`), so that it changes whenever simulated results may. Declared where runs
/// are made and handed to the summary (`reclaimlab_core::ENGINE_VERSION` too).
pub const ENGINE_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+",
    env!("RECLAIMLAB_SOURCE_DIGEST")
);

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
    // Reading the traces before the run can take a while: a stop asked meanwhile is honoured.
    let mut run = Run::build(scenario, opts, None, &mut || progress(0, end_ns))?;
    run.go(progress)?;
    Ok(run.output())
}

/// A run being set up or under way. [`run`] is `new`, `go`, `output`; a caller that wants to
/// add an actor or observer of its own, or start from a machine it changed, uses the steps.
pub struct Run<'a> {
    scn: &'a Scenario,
    opts: RunOptions,
    seed: u64,
    /// The world `boot` made and the ids of its members the run reads.
    built: Built,
    end_ns: u64,
    has_duration: bool,
    events: u64,
    stop_reason: String,
    wall_start: Instant,
    wall_ns: u64,
}

impl<'a> Run<'a> {
    /// The world of `scn`: its host machine, kernel threads, workloads and sampler.
    pub fn new(scn: &'a Scenario, opts: &RunOptions) -> Result<Run<'a>, SimError> {
        Run::build(scn, opts, None, &mut || true)
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
        machine: Machine,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Run<'a>, SimError> {
        Run::build(scn, opts, Some(machine), poll)
    }

    /// The world `crate::boot` makes of `scn` (around `machine`, or the host it describes).
    fn build(
        scn: &'a Scenario,
        opts: &RunOptions,
        machine: Option<Machine>,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Run<'a>, SimError> {
        let ctx = Ctx {
            seed: opts.seed.unwrap_or(scn.sim.seed),
            trace: opts.trace,
            invariants: opts.invariants != InvariantMode::Off,
        };
        let built = crate::boot::world(scn, &ctx, machine, poll)?;
        let (end_ns, has_duration) = match scn.sim.duration_ns {
            Some(d) => (d, true),
            None => (scn.sim.max_duration_ns, false),
        };
        Ok(Run {
            scn,
            opts: opts.clone(),
            seed: ctx.seed,
            built,
            end_ns,
            has_duration,
            events: 0,
            stop_reason: String::new(),
            wall_start: Instant::now(),
            wall_ns: 0,
        })
    }

    /// The world, to add actors or observers before the run starts.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.built.world
    }

    pub fn world(&self) -> &World {
        &self.built.world
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
            let (ran, stop) = self.built.world.run(self.end_ns, batch, !self.has_duration);
            if let Some(f) = self.built.world.take_failure() {
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
                if !progress(self.built.world.now(), self.end_ns) {
                    return Err(SimError::Interrupted);
                }
            }
            if let Some((_, why)) = &self.built.world.panic {
                self.stop_reason = format!("kernel panic: {why}");
                break;
            }
            if self.scn.oom.stop_on_kill && !self.built.world.machines[0].oom_kills.is_empty() {
                self.stop_reason = "OOM kill on the host".into();
                break;
            }
            if !self.has_duration && !self.built.world.held_open() {
                self.stop_reason = "all workloads finished".into();
                break;
            }
            if stop == Stop::Idle {
                break;
            }
        }
        if self.built.world.now() >= self.end_ns && !self.has_duration {
            self.stop_reason = "max_duration reached".into();
        }
        if self.has_duration && self.stop_reason == "duration reached" {
            self.built.world.advance_to(self.end_ns);
        } else {
            self.built.world.advance_to(self.built.world.now());
        }
        if self.opts.invariants != InvariantMode::Off {
            self.check_invariants()?;
        }
        self.wall_ns = self.wall_start.elapsed().as_nanos() as u64;
        Ok(())
    }

    fn check_invariants(&mut self) -> Result<(), SimError> {
        let now = self.built.world.now();
        let checker = self
            .built
            .invariants
            .as_mut()
            .expect("checker built when invariants are on");
        for (m, c) in checker.iter_mut().enumerate() {
            let which = if m == 0 {
                String::new()
            } else {
                format!("guest {}: ", self.scn.guests[m - 1].name)
            };
            c.check(&self.built.world.machines[m])
                .map_err(|e| SimError::Invariant(format!("at {now} ns: {which}{e}")))?;
        }
        for (g, h, slot) in self.built.world.guest_memories() {
            slot.check(&self.built.world.machines[h]).map_err(|e| {
                SimError::Invariant(format!(
                    "at {now} ns: guest {}: {e}",
                    self.scn.guests[g - 1].name
                ))
            })?;
        }
        Ok(())
    }

    /// The run's outputs, rendered (`observe::output`).
    pub fn output(mut self) -> RunOutput {
        let scenario_toml = crate::scenario::to_toml(self.scn);
        let choices = &self.scn.policy.choices;
        crate::observe::output::render(
            &mut self.built.world,
            &Ended {
                name: &self.scn.name,
                scenario_toml: &scenario_toml,
                seed: self.seed,
                engine_version: ENGINE_VERSION,
                cpus: self.scn.host.cpus,
                events: self.events,
                stop_reason: &self.stop_reason,
                wall_ns: self.wall_ns,
                sampler: self.built.sampler,
                vm_rss: self.built.vm_rss,
                kswapd: self.built.kswapd,
                threads: &self.built.threads,
                fs_threads: &self.built.fs_threads,
                guests: &self.built.guests,
                xen: self.built.xen.as_ref(),
                variant: &|s| choices.get(s),
            },
        )
    }
}
