//! The world: machines, the actors that run on them, the observers that watch, one event queue
//! and one clock.
//!
//! One step of the world: pop the actor (or observer) due first; under the `shared` CPU
//! discipline, put it back if its CPU is still busy; run it with a [`StepCx`]; charge its CPU;
//! apply the [`Wake`] it returns; then hand every [`Signal`] its machine raised during the step
//! to the actors that want it (in signal order, then actor order), and the recorded tracepoints
//! to the trace sink. Ties at the same nanosecond run in the order they were scheduled, so the
//! whole run is deterministic.

pub mod actor;

use std::any::Any;

use crate::engine::cpu::{Admit, Cpus};
use crate::engine::{ActorId, EventQueue};
use crate::machine::tracepoint::Tracepoint;
use crate::machine::{Machine, Signal};
use crate::virt::GuestMemory;
pub use actor::{Actor, Failure, MachineId, StepCx, Wake};

/// Something that reads the world at times of its choosing and never changes it (the time
/// series sampler).
pub trait Observer {
    /// Read the world at `now`; returns when to look next.
    fn observe(&mut self, now: u64, world: &World) -> Option<u64>;
    fn as_any(&self) -> &dyn Any;
    /// The observer itself, to read its results once the run is over.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// Receives the tracepoints each actor's step recorded, in order, with who recorded them.
pub trait TraceSink {
    fn record(&mut self, machine: MachineId, actor: ActorId, ts: u64, tp: &Tracepoint);
    fn as_any(&self) -> &dyn Any;
}

/// Why [`World::run`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Nothing more is due by the limit.
    Idle,
    /// The budget of events is spent.
    Budget,
    /// A failure, a kernel panic, or no actor holds the run open any more (if asked).
    Halt,
}

enum Slot {
    Actor(Box<dyn Actor>),
    Observer(Option<Box<dyn Observer>>),
}

/// An actor or observer with what the world reads of it on every event, side by side (one
/// bounds check, one cache line).
struct Member {
    slot: Slot,
    /// Its machine and CPU, fixed when it is added (observers: 0, 0).
    home: MachineId,
    cpu: u32,
    /// A thread the CPU's scheduler queues (an interrupt handler is not).
    thread: bool,
    /// Finished for good.
    done: bool,
    /// Holds the run open (cached after each call into it).
    open: bool,
}

/// `wake` pushed back so that it is no earlier than `t` (an actor that waited on its host).
#[inline]
fn delayed(wake: Wake, t: u64) -> Wake {
    match wake {
        Wake::At(x) => Wake::At(x.max(t)),
        Wake::NoLaterThan(x) => Wake::At(x.max(t)),
        Wake::IfIdle(x) => Wake::IfIdle(x.max(t)),
        w => w,
    }
}

#[inline]
pub(crate) fn apply(q: &mut EventQueue, id: ActorId, wake: Wake) {
    match wake {
        Wake::At(t) => q.schedule(id, t),
        Wake::NoLaterThan(t) => q.schedule_no_later_than(id, t),
        Wake::IfIdle(t) => {
            if q.due(id).is_none() {
                q.schedule(id, t);
            }
        }
        Wake::Idle | Wake::Done => q.cancel(id),
    }
}

pub struct World {
    pub machines: Vec<Machine>,
    /// CPUs of each machine.
    pub cpus: Vec<Cpus>,
    /// Actors and observers, by id.
    members: Vec<Member>,
    n_open: usize,
    queue: EventQueue,
    /// Per machine, per signal kind: the actors that want it, in id order.
    subscribers: Vec<Vec<(Signal, Vec<ActorId>)>>,
    trace: Option<Box<dyn TraceSink>>,
    failure: Option<Failure>,
    /// The machine whose kernel panicked, and why.
    pub panic: Option<(MachineId, String)>,
    /// Per machine: the host it is a guest of and its memory slot there (`None`: not a guest).
    links: Vec<Option<(MachineId, GuestMemory)>>,
    /// Machines halted by an actor (a VM that was killed or shut down), to stop after the call.
    halts: Vec<MachineId>,
}

impl World {
    /// A world of these machines, each with `cpus[m]` CPUs; `(shared, migrate)`: the CPU
    /// discipline (`engine/cpu.rs`).
    pub fn new(machines: Vec<Machine>, cpus: &[u32], (shared, migrate): (bool, bool)) -> World {
        let n = machines.len();
        World {
            cpus: (0..n)
                .map(|m| Cpus::new(cpus[m], shared, migrate, 1_000_000_000 / crate::machine::HZ))
                .collect(),
            machines,
            members: Vec::new(),
            n_open: 0,
            queue: EventQueue::new(),
            subscribers: (0..n)
                .map(|_| {
                    (0..Signal::KINDS)
                        .map(|k| (Signal::of_kind(k, 0), Vec::new()))
                        .collect()
                })
                .collect(),
            trace: None,
            failure: None,
            panic: None,
            links: (0..n).map(|_| None).collect(),
            halts: Vec::new(),
        }
    }

    /// Make machine `guest` a guest of `host` with this memory slot: after every call into one
    /// of its actors, what it did to its memory is replayed on the host and the actor waits
    /// for that.
    pub fn link_guest(&mut self, guest: MachineId, host: MachineId, slot: GuestMemory) {
        assert!(guest != host, "a machine cannot be its own guest");
        self.links[guest] = Some((host, slot));
    }

    /// The memory slot of guest machine `m`.
    pub fn guest_memory(&self, m: MachineId) -> Option<&GuestMemory> {
        self.links[m].as_ref().map(|(_, s)| s)
    }

    /// The guests' memory slots: (guest, host, slot).
    pub fn guest_memories(&self) -> impl Iterator<Item = (MachineId, MachineId, &GuestMemory)> {
        self.links
            .iter()
            .enumerate()
            .filter_map(|(g, l)| l.as_ref().map(|(h, s)| (g, *h, s)))
    }

    /// Stop every actor of machine `m` for good (its VM is gone); its memory slot replays
    /// nothing more.
    pub fn halt_machine(&mut self, m: MachineId) {
        for i in 0..self.members.len() {
            let member = &mut self.members[i];
            if member.home != m || member.done || !matches!(member.slot, Slot::Actor(_)) {
                continue;
            }
            member.done = true;
            if member.open {
                member.open = false;
                self.n_open -= 1;
            }
            self.queue.cancel(i as ActorId);
        }
        if let Some((_, slot)) = &mut self.links[m] {
            slot.dead = true;
        }
    }

    /// Replay what the last call on guest machine `m` did on its host; the time the call's
    /// actor waits for it.
    #[inline]
    fn sync_guest(&mut self, m: MachineId) -> u64 {
        let Some((host, slot)) = self.links[m].as_mut() else {
            return 0;
        };
        let (g, h) = if m < *host {
            let (a, b) = self.machines.split_at_mut(*host);
            (&mut a[m], &mut b[0])
        } else {
            let (a, b) = self.machines.split_at_mut(m);
            (&mut b[0], &mut a[*host])
        };
        slot.sync(g, h)
    }

    /// Add an actor; it starts with the given wake-up (`Idle`: until something wakes it).
    pub fn add_actor(&mut self, actor: Box<dyn Actor>) -> ActorId {
        let m = actor.machine();
        self.add_actor_on(m, actor)
    }

    /// Add an actor to run on machine `m` (a guest's kernel threads and workloads are the
    /// same actors as a host's, on another machine).
    pub fn add_actor_on(&mut self, m: MachineId, actor: Box<dyn Actor>) -> ActorId {
        let id = self.queue.add_actor();
        for (sig, subs) in &mut self.subscribers[m] {
            if actor.wants(*sig) {
                subs.push(id);
            }
        }
        let open = actor.holds_run_open();
        self.n_open += open as usize;
        self.members.push(Member {
            home: m,
            cpu: actor.cpu(),
            thread: actor.is_thread(),
            done: false,
            open,
            slot: Slot::Actor(actor),
        });
        id
    }

    /// Add an observer.
    pub fn add_observer(&mut self, observer: Box<dyn Observer>) -> ActorId {
        let id = self.queue.add_actor();
        self.members.push(Member {
            slot: Slot::Observer(Some(observer)),
            home: 0,
            cpu: 0,
            thread: false,
            done: false,
            open: false,
        });
        id
    }

    /// Take an observer out of the world (it stops observing).
    pub fn remove_observer(&mut self, id: ActorId) -> Option<Box<dyn Observer>> {
        match &mut self.members[id as usize].slot {
            Slot::Observer(o) => {
                self.queue.cancel(id);
                o.take()
            }
            Slot::Actor(_) => None,
        }
    }

    /// Set when an actor or observer first runs.
    pub fn start(&mut self, id: ActorId, at: u64) {
        self.queue.schedule(id, at);
    }

    pub fn set_trace_sink(&mut self, sink: Box<dyn TraceSink>) {
        self.trace = Some(sink);
    }

    pub fn trace_sink(&self) -> Option<&dyn TraceSink> {
        self.trace.as_deref()
    }

    pub fn take_trace_sink(&mut self) -> Option<Box<dyn TraceSink>> {
        self.trace.take()
    }

    #[inline]
    pub fn now(&self) -> u64 {
        self.queue.now()
    }

    /// Actors and observers, by id.
    pub fn actor(&self, id: ActorId) -> Option<&dyn Actor> {
        match &self.members[id as usize].slot {
            Slot::Actor(a) => Some(a.as_ref()),
            Slot::Observer(_) => None,
        }
    }

    pub fn actors(&self) -> impl Iterator<Item = (ActorId, &dyn Actor)> {
        self.members
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.slot {
                Slot::Actor(a) => Some((i as ActorId, a.as_ref())),
                Slot::Observer(_) => None,
            })
    }

    pub fn observers(&self) -> impl Iterator<Item = &dyn Observer> {
        self.members.iter().filter_map(|s| match &s.slot {
            Slot::Observer(Some(o)) => Some(o.as_ref()),
            _ => None,
        })
    }

    /// Whether some actor still holds a run without a fixed duration open.
    pub fn held_open(&self) -> bool {
        self.n_open > 0
    }

    /// The failure an actor met, if any (the run stops).
    pub fn take_failure(&mut self) -> Option<Failure> {
        self.failure.take()
    }

    /// Advance the clock without running anything (the end of a run with a fixed duration).
    pub fn advance_to(&mut self, t: u64) {
        self.queue.advance_to(t);
        for m in &mut self.machines {
            m.now = self.queue.now();
        }
    }

    /// Run the next due actor or observer, if one is due at or before `limit`. Returns whether
    /// one ran.
    pub fn step(&mut self, limit: u64) -> bool {
        self.step_inlined(limit)
    }

    /// Run the events due by `limit`, at most `budget` of them, stopping early after an event
    /// that met a failure or a kernel panic or, with `until_closed`, after which no actor holds
    /// the run open. Returns how many ran and why it stopped. The same events as as many
    /// `step` calls with those checks between them, in one loop: most events are short (a
    /// kswapd priority iteration, one device completion), and the calls and checks between
    /// them were a fifth of the instructions of a run.
    pub fn run(&mut self, limit: u64, budget: u64, until_closed: bool) -> (u64, Stop) {
        let mut n = 0;
        while n < budget {
            if !self.step_inlined(limit) {
                return (n, Stop::Idle);
            }
            n += 1;
            if self.failure.is_some() || self.panic.is_some() || (until_closed && self.n_open == 0)
            {
                return (n, Stop::Halt);
            }
        }
        (n, Stop::Budget)
    }

    #[inline(always)]
    fn step_inlined(&mut self, limit: u64) -> bool {
        let Some(id) = self.queue.pop(limit) else {
            return false;
        };
        let now = self.queue.now();
        for m in &mut self.machines {
            m.now = now;
        }
        let i = id as usize;
        let member = &mut self.members[i];
        let (home, cpu, thread) = (member.home, member.cpu, member.thread);
        match &mut member.slot {
            Slot::Observer(o) => {
                let Some(mut obs) = o.take() else {
                    return true;
                };
                let next = obs.observe(now, self);
                if let Some(t) = next {
                    self.queue.schedule(id, t);
                }
                self.members[i].slot = Slot::Observer(Some(obs));
            }
            Slot::Actor(a) => {
                let q = &self.queue;
                let cpu = match self.cpus[home].admit(cpu, now, id, thread, |a| q.due(a)) {
                    Admit::Run(cpu) => cpu,
                    Admit::Wait(t) => {
                        self.queue.schedule(id, t);
                        return true;
                    }
                };
                self.machines[home].set_cpu(cpu);
                let mut cx = StepCx {
                    now,
                    me: id,
                    home,
                    machines: &mut self.machines,
                    queue: &mut self.queue,
                    charged: 0,
                    stolen: 0,
                    failure: &mut self.failure,
                    halts: &mut self.halts,
                };
                let mut wake = a.step(&mut cx);
                let mut charged = cx.charged;
                let stolen = cx.stolen;
                if self.links[home].is_some() {
                    // The vCPU waits for its host: faults, discards, report round trips.
                    let wait = self.sync_guest(home);
                    if wait > 0 {
                        charged += wait;
                        wake = delayed(wake, now + charged);
                    }
                }
                self.cpus[home].charge(cpu, now, id, charged);
                if stolen > 0 {
                    self.cpus[home].steal_others(cpu, now, stolen);
                }
                self.after_call(id, Some(wake));
                self.deliver(home);
                if self.links[home].is_some() || !self.halts.is_empty() {
                    self.after_guest_call(home);
                }
            }
        }
        true
    }

    /// After a call on guest machine `m`: its host's signals (a kswapd wake, an OOM kill
    /// from a host fault) go out now, and machines an actor halted stop.
    #[cold]
    fn after_guest_call(&mut self, m: MachineId) {
        if let Some((host, _)) = self.links[m] {
            self.deliver(host);
        }
        while let Some(h) = self.halts.pop() {
            self.halt_machine(h);
        }
    }

    /// Bookkeeping after a call into actor `id`: apply its wake, note whether it is finished
    /// or holds the run open, pass on its tracepoints. Inlined: after a step the wake is known
    /// to be there, and this runs once per event.
    #[inline(always)]
    fn after_call(&mut self, id: ActorId, wake: Option<Wake>) {
        let member = &mut self.members[id as usize];
        if let Some(wake) = wake {
            apply(&mut self.queue, id, wake);
            if wake == Wake::Done {
                member.done = true;
            }
        }
        if let Slot::Actor(a) = &member.slot {
            let open = a.holds_run_open() && !member.done;
            if open != member.open {
                member.open = open;
                if open {
                    self.n_open += 1;
                } else {
                    self.n_open -= 1;
                }
            }
        }
        if let Some(sink) = self.trace.as_deref_mut() {
            for (m, machine) in self.machines.iter_mut().enumerate() {
                for (ts, tp) in machine.tracepoints.buf.drain(..) {
                    sink.record(m, id, ts, &tp);
                }
            }
        }
    }

    /// An OOM kill on machine `m`: a VM process killed on its host takes its guest with it.
    #[cold]
    fn vm_killed(&mut self, m: MachineId, victim: usize) {
        let killed: Vec<MachineId> = self
            .guest_memories()
            .filter(|&(_, h, s)| h == m && s.task == victim)
            .map(|(g, _, _)| g)
            .collect();
        self.halts.extend(killed);
    }

    /// Hand the signals machine `m` raised to the actors that want them.
    #[inline]
    fn deliver(&mut self, m: usize) {
        while let Some(sig) = self.machines[m].outbox.take() {
            if let Signal::Panic = sig {
                let why = self.machines[m].oom_panic.clone().unwrap_or_default();
                self.panic.get_or_insert((m, why));
            }
            if let Signal::OomKill(victim) = sig {
                self.vm_killed(m, victim);
            }
            let k = sig.kind();
            for j in 0..self.subscribers[m][k].1.len() {
                let id = self.subscribers[m][k].1[j];
                let member = &mut self.members[id as usize];
                if member.done {
                    continue;
                }
                let Slot::Actor(a) = &mut member.slot else {
                    continue;
                };
                let now = self.queue.now();
                let cpu = member.cpu;
                self.machines[m].set_cpu(cpu);
                let mut cx = StepCx {
                    now,
                    me: id,
                    home: m,
                    machines: &mut self.machines,
                    queue: &mut self.queue,
                    charged: 0,
                    stolen: 0,
                    failure: &mut self.failure,
                    halts: &mut self.halts,
                };
                let wake = a.on_signal(sig, &mut cx);
                if self.links[m].is_some() {
                    // What a guest's handler did reaches its host too (its time is not
                    // charged: signal handlers run inside another actor's step).
                    self.sync_guest(m);
                }
                self.after_call(id, wake);
            }
        }
    }
}
