//! Booting the world a scenario describes: building, before it runs, every machine (the host,
//! then each guest, by the same functions: `machine.rs`), its workload threads (`workloads.rs`),
//! its kernel threads (`kthreads.rs`), the policy variants they run with (`policies.rs`, the
//! only place that makes them from the registry), the guests' VM processes (`guests.rs`), a Xen
//! host's drivers and jobs (`xen.rs`), and the observers. The files hand back the actors they
//! make, in order (a cast, `cast.rs`), and [`world`] registers the whole cast in one place.
//! `run.rs` runs what [`world`] builds.

mod cast;
mod guests;
mod kthreads;
mod machine;
mod policies;
mod workloads;
mod xen;

use crate::actors::kswapd::KSWAPD_PID;
use crate::actors::memcg_controller::{MemcgControllerAgent, AGENT_PID};
use crate::engine::ActorId;
use crate::machine::{Machine, PAGE_SIZE};
use crate::observe::ftrace::{TaskId, TaskTracer, TraceFormat, Tracer};
use crate::observe::guests::Guest;
use crate::observe::invariants::Checker;
use crate::observe::timeseries::Sampler;
use crate::observe::vm_rss::VmRss;
use crate::observe::xen::XenActors;
use crate::scenario::Scenario;
use crate::sim_error::SimError;
use crate::world::Actor;
use crate::world::World;

pub use machine::{host_layout, host_machine, host_params};
pub use workloads::{FIRST_FS_TASK_PID, FIRST_TASK_PID};

use cast::{Add, Cast, Member};

/// What a world is built with besides the scenario and the host machine: the run's settings.
pub struct Ctx {
    /// The run's seed (the scenario's, or the one the caller asked for).
    pub seed: u64,
    /// Record an ftrace stream in this format.
    pub trace: Option<TraceFormat>,
    /// Build an invariant checker for every machine.
    pub invariants: bool,
}

/// A built world and the actors and observers the run reads at its end.
pub struct Built {
    pub world: World,
    /// The host's workload threads (`Thread`s) and filesystem workloads' actors.
    pub threads: Vec<ActorId>,
    pub fs_threads: Vec<ActorId>,
    pub kswapd: ActorId,
    pub sampler: ActorId,
    pub guests: Vec<Guest>,
    pub vm_rss: Option<ActorId>,
    pub xen: Option<XenActors>,
    /// One checker per machine (the host first, then the guests), when invariants are on.
    pub invariants: Option<Vec<Checker>>,
}

/// The world of `scn` around its host machine (`machine`: one a caller built from
/// [`host_params`]; `None`: the one `scn` describes), every actor registered and the periodic
/// ones started.
/// `poll` is called while the workloads' traces are read; `SimError::Interrupted` when it
/// returns false.
pub fn world(
    scn: &Scenario,
    ctx: &Ctx,
    machine: Option<Machine>,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Built, SimError> {
    let seed = ctx.seed;
    // The host's policy variants, all made here; a machine the caller built has its own.
    let v = policies::variants(&scn.policy.choices);
    let mut machine = match machine {
        Some(m) => m,
        None => Machine::new(machine::params(
            scn,
            seed,
            ctx.trace.is_some(),
            v.watermarks,
            v.machine,
        )?)
        .map_err(SimError::Config)?,
    };
    let cpus = scn.host.cpus.max(1);
    let threads = machine::furnish(scn, &mut machine, None, v.drivers, seed, 0, poll)?;
    check_anon_fits(scn, &machine, threads.trace_anon_pages)?;

    // Guests: machines of their own, each with its VM process on this host.
    let guests = guests::build_guests(scn, &mut machine, seed, poll)?;
    let (guest_machines, vcpus, guest_parts) = guests::split(guests);

    let sampler = Sampler::new(&machine, cpus as usize, scn.sim.sample_interval_ns);
    let invariants = ctx.invariants.then(|| {
        std::iter::once(&machine)
            .chain(&guest_machines)
            .map(Checker::new)
            .collect::<Vec<_>>()
    });

    // The cast, in registration order, which is the order of first scheduling: workload
    // threads at their start, the sampler at 0, the flusher at its first period (ties at one
    // nanosecond run in that order). The kernel threads start idle.
    let mut cast = Cast::new();
    let host = workloads::cast_workloads(&mut cast, 0, threads);
    let sampler_id = cast.len() as ActorId;
    cast.push(Add {
        member: Member::Observer(Box::new(sampler)),
        start: Some(0),
    });
    let kswapd = kthreads::kernel_threads(&mut cast, 0, scn, v.kthreads, 0, false);
    let cast_guests = guests::cast_guests(&mut cast, scn, seed, 0, 1, guest_parts);
    let xen = xen::cast_xen(&mut cast, scn, &mut machine, 0, 1)?;
    // The host's userspace memory controller, when `[policy] memcg_controller` runs one.
    let params = scn.controller.clone().unwrap_or_default();
    let agent =
        MemcgControllerAgent::new(&mut machine, &params, &*v.memcg_controller, 0).map(|a| {
            let who = TaskId::new(a.name(), AGENT_PID, 0);
            cast.push(Add {
                member: Member::Actor(0, Box::new(a)),
                start: Some(0),
            });
            ((cast.len() - 1) as ActorId, who)
        });
    let vm_rss = (!scn.guests.is_empty() && scn.xen.is_none()).then(|| {
        let names = scn.guests.iter().map(|g| g.name.clone()).collect();
        cast.push(Add {
            member: Member::Observer(Box::new(VmRss::new(names, scn.sim.sample_interval_ns))),
            start: Some(0),
        });
        (cast.len() - 1) as ActorId
    });
    let mut machines = vec![machine];
    machines.extend(guest_machines);
    let mut all_cpus = vec![cpus];
    all_cpus.extend(vcpus);
    let contention = (scn.host.cpu_contention, scn.host.cpu_migration);
    let mut world = World::new(machines, &all_cpus, contention);
    for (guest, slot) in cast_guests.links {
        world.link_guest(guest, 0, slot);
    }
    // Every member is registered here and nowhere else, in the cast's order, so its id is its
    // place in the cast (what the builders took it to be).
    for (place, add) in cast.into_iter().enumerate() {
        let id = match add.member {
            Member::Actor(m, actor) => world.add_actor_on(m, actor),
            Member::Observer(observer) => world.add_observer(observer),
        };
        assert_eq!(
            id as usize, place,
            "the world numbers its members as they come"
        );
        if let Some(at) = add.start {
            world.start(id, at);
        }
    }
    if let Some(format) = ctx.trace {
        let kswapd0 = TaskId::new("kswapd0", KSWAPD_PID, 0);
        let mut sink = TaskTracer::new(Tracer::new(format, cpus), kswapd0.clone());
        sink.set_task(kswapd, kswapd0);
        for (id, who) in host.tasks.into_iter().chain(agent) {
            sink.set_task(id, who);
        }
        world.set_trace_sink(Box::new(sink));
    }
    Ok(Built {
        world,
        threads: host.threads,
        fs_threads: host.fs_threads,
        kswapd,
        sampler: sampler_id,
        guests: cast_guests.guests,
        vm_rss,
        xen,
        invariants,
    })
}

/// The parser checked the anon tables against RAM + swap; the traces' anonymous sizes are
/// known only once they are read, so a run that allows no OOM kill is checked again here.
fn check_anon_fits(
    scn: &Scenario,
    machine: &Machine,
    trace_anon_pages: u64,
) -> Result<(), SimError> {
    if scn.oom.allowed || trace_anon_pages == 0 {
        return Ok(());
    }
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
    Ok(())
}
