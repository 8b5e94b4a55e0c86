//! The actor contract: anything that runs on a machine's CPU and changes the world over time
//! (a workload thread, kswapd, the flusher, a device's completion handler...). The engine never
//! lists actor types: a new actor is a new type implementing [`Actor`], added to the world by
//! whoever builds it.

use std::any::Any;

use crate::engine::ActorId;
use crate::engine::EventQueue;
use crate::machine::{Machine, Signal};

/// Index of a machine in the world.
pub type MachineId = usize;

/// When an actor wants to run next, as it says after a step or a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// At this time, replacing any pending wake-up.
    At(u64),
    /// At this time, unless already due earlier.
    NoLaterThan(u64),
    /// At this time, unless already due at all.
    IfIdle(u64),
    /// Not until a signal or another actor wakes it.
    Idle,
    /// Never again; the actor is finished.
    Done,
}

/// Why a run cannot go on (the actor that met it stops the world).
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A workload's trace became unreadable during the run.
    Trace(crate::trace::TraceError),
}

/// An actor of the simulation.
pub trait Actor {
    /// Unique name; also the name of its random stream.
    fn name(&self) -> &str;
    /// The machine it runs on (read once, when the actor is added to the world).
    fn machine(&self) -> MachineId {
        0
    }
    /// Its home CPU on that machine (read once, when the actor is added): where it runs, unless
    /// the scheduler moves it to an idle CPU (`[host] cpu_migration`).
    fn cpu(&self) -> u32 {
        0
    }
    /// Is it a thread the CPU's scheduler queues? An interrupt handler (a block device's
    /// completions) is not: it runs when due, whatever holds its CPU.
    fn is_thread(&self) -> bool {
        true
    }
    /// Its pid in trace output; `None` for helpers that emit no reclaim events.
    fn pid(&self) -> Option<u32> {
        None
    }
    /// Run one bounded chunk of work at `cx.now()`.
    fn step(&mut self, cx: &mut StepCx) -> Wake;
    /// Does it act on this signal of its machine?
    fn wants(&self, _signal: Signal) -> bool {
        false
    }
    /// A signal it wants was raised by the step that just ran; `None` leaves its schedule.
    fn on_signal(&mut self, _signal: Signal, _cx: &mut StepCx) -> Option<Wake> {
        None
    }
    /// A run without a fixed duration goes on while some actor says so (a workload that has
    /// not finished, a reaper with work queued).
    fn holds_run_open(&self) -> bool {
        false
    }
    /// For observers that read an actor's own figures (kswapd's awake time, a thread's stalls).
    fn as_any(&self) -> &dyn Any;
}

/// What an actor may touch while it runs: the clock, the machines, other actors' wake-ups, its
/// CPU's time, and the run's outcome. Lent per call, so an actor keeps no references.
pub struct StepCx<'a> {
    pub(super) now: u64,
    pub(super) me: ActorId,
    pub(super) home: MachineId,
    pub(super) machines: &'a mut [Machine],
    pub(super) queue: &'a mut EventQueue,
    pub(super) charged: u64,
    /// CPU time this step took from each other CPU of its machine (IPIs it sent).
    pub(super) stolen: u64,
    pub(super) failure: &'a mut Option<Failure>,
    pub(super) halts: &'a mut Vec<MachineId>,
}

impl StepCx<'_> {
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// This actor's id.
    pub fn me(&self) -> ActorId {
        self.me
    }

    /// Which machine the actor runs on.
    pub fn home(&self) -> MachineId {
        self.home
    }

    /// The machine the actor runs on.
    #[inline]
    pub fn machine(&mut self) -> &mut Machine {
        &mut self.machines[self.home]
    }

    /// Another machine (a vCPU touches guest and host memory, a backend serves a guest).
    pub fn machine_of(&mut self, id: MachineId) -> &mut Machine {
        &mut self.machines[id]
    }

    /// The CPU time this step cost (accumulates).
    #[inline]
    pub fn charge_cpu(&mut self, ns: u64) {
        self.charged += ns;
    }

    /// The step interrupted every other CPU of its machine, costing each `ns` (an IPI's
    /// handler): work due there is pushed back.
    pub fn interrupt_other_cpus(&mut self, ns: u64) {
        self.stolen += ns;
    }

    /// Change another actor's wake-up.
    pub fn wake(&mut self, actor: ActorId, wake: Wake) {
        super::apply(self.queue, actor, wake);
    }

    /// When this actor is due next, if it is.
    pub fn due(&self) -> Option<u64> {
        self.queue.due(self.me)
    }

    /// Stop every actor of machine `m` after this call (a VM killed or shut down by its host).
    pub fn halt_machine(&mut self, m: MachineId) {
        self.halts.push(m);
    }

    /// Stop the run with this failure after the current step.
    pub fn fail(&mut self, f: Failure) {
        if self.failure.is_none() {
            *self.failure = Some(f);
        }
    }
}
