//! The guests of a run (`[[guest]]`): each a machine of its own, built and given its kernel
//! threads by the same functions as the host, from its view of the scenario
//! (`GuestConfig::as_machine`); a KVM guest's VM process and memory slot on the host; its
//! background allocations. Xen domUs are guests without a slot (see `xen.rs`).

use crate::actors::guest_background::GuestBackground;
use crate::actors::vm::Vm;
use crate::machine::Machine;
use crate::observe::guests::Guest;
use crate::scenario::{GuestConfig, Scenario};
use crate::sim_error::SimError;
use crate::virt::GuestMemory;
use crate::world::MachineId;

use super::cast::{Add, Cast, Member};
use super::kthreads::kernel_threads;
use super::machine::{furnish, params};
use super::policies::{variants, KthreadPolicies};
use super::workloads::{cast_workloads, WorkloadThreads};

/// A guest built before the world: its view of the scenario, its machine, its threads, its
/// kernel threads' policies and its slot on the host.
pub(crate) struct GuestBuild {
    view: Scenario,
    pub machine: Machine,
    pub vcpus: u32,
    threads: WorkloadThreads,
    kthreads: KthreadPolicies,
    /// The task of its background allocations (`None`: it has none).
    background: Option<usize>,
    /// Its memory slot on the host (`None`: a Xen domU, whose memory is its own reservation).
    slot: Option<GuestMemory>,
}

/// Each guest's random streams are its own: the run's seed mixed with its index.
fn guest_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Build every guest of `scn`: its machine (the guest's tables over the host scenario) with
/// its policy variants, its workload threads, and its VM process and memory slot on `host`.
pub(crate) fn build_guests(
    scn: &Scenario,
    host: &mut Machine,
    seed: u64,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Vec<GuestBuild>, SimError> {
    let mut out = Vec::new();
    for (i, g) in scn.guests.iter().enumerate() {
        let view = g.as_machine(scn);
        let gseed = guest_seed(seed, i);
        let v = variants(&view.policy.choices);
        let mut m = Machine::new(params(&view, gseed, false, v.watermarks, v.machine)?)
            .map_err(|e| SimError::Config(format!("guest {}: {e}", g.name)))?;
        let kvm = scn.xen.is_none();
        let threads = furnish(
            &view,
            &mut m,
            kvm.then_some(g),
            v.drivers,
            gseed,
            g.start_ns,
            poll,
        )?;
        // Its own task (the guest's kernel and daemons), never an OOM victim.
        let background = (g.background_frees > 0).then(|| m.add_task("background", -1000));
        let slot = if kvm {
            Some(vm_process(scn, g, &m, host)?)
        } else {
            None
        };
        out.push(GuestBuild {
            view,
            machine: m,
            vcpus: g.vcpus.max(1),
            threads,
            kthreads: v.kthreads,
            background,
            slot,
        });
    }
    Ok(out)
}

/// The VM's process on the host: its guest RAM is one anonymous region, frame for page, in
/// the guest's host cgroup when it names one (charged, limited and protected there, and its
/// host faults' memory stalls counted in that cgroup's pressure).
fn vm_process(
    scn: &Scenario,
    g: &GuestConfig,
    m: &Machine,
    host: &mut Machine,
) -> Result<GuestMemory, SimError> {
    let frames = m.frames.len() as u64;
    let task = host.add_task(&g.name, 0);
    if let (Some(name), Some(mc)) = (&g.cgroup, host.memcg.as_mut()) {
        let id = mc
            .id_of(name)
            .ok_or_else(|| SimError::Config(format!("guest {}: no cgroup named {name}", g.name)))?;
        mc.set_task_memcg(task, id);
    }
    let psi_group = host.task_psi_group(task);
    let r = host
        .add_region(task, frames, true)
        .map_err(|e| SimError::Config(format!("guest {}: {e}", g.name)))?;
    Ok(GuestMemory::new(
        task,
        host.regions[r].base,
        frames as u32,
        g.discard_inhibited,
        scn.host.thp,
        g.kvm.clone(),
        psi_group,
    ))
}

/// The guests in the world: their actors (on machines `first..`, in scenario order, each
/// started at its VM's start) and each KVM guest's link to `host`.
pub(crate) struct CastGuests {
    pub guests: Vec<Guest>,
    /// (guest, its memory slot on `host`) of each KVM guest.
    pub links: Vec<(MachineId, GuestMemory)>,
}

/// Cast the guests' actors: a KVM guest's VM, then every guest's workloads, kernel threads
/// and background.
pub(crate) fn cast_guests(
    cast: &mut Cast,
    scn: &Scenario,
    seed: u64,
    host: MachineId,
    first: MachineId,
    guests: Vec<GuestParts>,
) -> CastGuests {
    let mut out = CastGuests {
        guests: Vec::new(),
        links: Vec::new(),
    };
    for (i, (g, parts)) in scn.guests.iter().zip(guests).enumerate() {
        let id = first + i;
        let kvm_guest = parts.slot.is_some();
        if let Some(slot) = parts.slot {
            let vm = Vm::new(&g.name, host, slot.task, g.shutdown_ns);
            cast.push(Add {
                member: Member::Actor(id, Box::new(vm)),
                start: Some(g.start_ns),
            });
            out.links.push((id, slot));
        }
        let workloads = cast_workloads(cast, id, parts.threads);
        let kswapd = kernel_threads(cast, id, &parts.view, parts.kthreads, g.start_ns, kvm_guest);
        if let Some(task) = parts.background {
            let vcpus = g.vcpus.max(1);
            for cpu in 0..vcpus {
                let a = GuestBackground::new(
                    &g.name,
                    cpu,
                    vcpus,
                    g.background_frees,
                    g.background_lifetime_ns,
                    g.start_ns,
                    task,
                    guest_seed(seed, i),
                );
                cast.push(Add {
                    member: Member::Actor(id, Box::new(a)),
                    start: Some(g.start_ns),
                });
            }
        }
        out.guests.push(Guest {
            name: g.name.clone(),
            vcpus: g.vcpus,
            start_ns: g.start_ns,
            hinting: g.policy.choices.get("hinting"),
            kvm: g.kvm.clone(),
            id,
            threads: workloads.threads,
            kswapd,
        });
    }
    out
}

/// What of a built guest goes into the world besides its machine.
pub(crate) struct GuestParts {
    view: Scenario,
    threads: WorkloadThreads,
    kthreads: KthreadPolicies,
    background: Option<usize>,
    slot: Option<GuestMemory>,
}

/// Split built guests into their machines and vCPUs (for the world) and the rest.
pub(crate) fn split(guests: Vec<GuestBuild>) -> (Vec<Machine>, Vec<u32>, Vec<GuestParts>) {
    let mut ms = Vec::new();
    let mut cpus = Vec::new();
    let mut parts = Vec::new();
    for g in guests {
        ms.push(g.machine);
        cpus.push(g.vcpus);
        parts.push(GuestParts {
            view: g.view,
            threads: g.threads,
            kthreads: g.kthreads,
            background: g.background,
            slot: g.slot,
        });
    }
    (ms, cpus, parts)
}
