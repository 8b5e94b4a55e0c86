//! The virtualization part of building and reporting a run (`[[guest]]`): each guest's
//! machine, its VM process and memory slot on the host, its kernel threads, workloads and
//! hinting worker, and what the run reports of it. `run.rs` calls these.

use serde_json::{json, Value};

use crate::actors::blkdev_io::{BlkdevIo, Device};
use crate::actors::flusher::{Flusher, FLUSHER_PERIOD_NS};
use crate::actors::guest_background::GuestBackground;
use crate::actors::hinting_worker::HintingWorker;
use crate::actors::kcompactd::Kcompactd;
use crate::actors::kswapd::Kswapd;
use crate::actors::oom_reaper::OomReaper;
use crate::actors::vm::Vm;
use crate::actors::workload::Thread;
use crate::build::{host_params, workload_threads, WorkloadThreads};
use crate::engine::ActorId;
use crate::machine::{Machine, PAGE_SIZE};
use crate::observe::render;
use crate::policy;
use crate::scenario::Scenario;
use crate::sim_error::SimError;
use crate::virt::GuestMemory;
use crate::world::{MachineId, World};

/// A guest built before the world: its machine, its threads and its slot on the host.
pub(crate) struct GuestBuild {
    pub machine: Machine,
    pub vcpus: u32,
    threads: WorkloadThreads,
    /// Its memory slot on the host (`None`: a Xen domU, whose memory is its own reservation).
    slot: Option<GuestMemory>,
}

/// The actors of a guest in the world.
pub struct GuestActors {
    pub id: MachineId,
    pub threads: Vec<ActorId>,
    pub kswapd: ActorId,
    pub worker: Option<ActorId>,
}

/// Each guest's random streams are its own: the run's seed mixed with its index.
fn guest_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Build every guest of `scn`: its machine (the guest's tables over the host scenario), its
/// workload threads, and its VM process and memory slot on `host`.
pub(crate) fn build_guests(
    scn: &Scenario,
    host: &mut Machine,
    seed: u64,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Vec<GuestBuild>, SimError> {
    let mut out = Vec::new();
    for (i, g) in scn.guests.iter().enumerate() {
        let gs = g.as_machine(scn);
        let gseed = guest_seed(seed, i);
        let mut m = Machine::new(host_params(&gs, gseed, false)?)
            .map_err(|e| SimError::Config(format!("guest {}: {e}", g.name)))?;
        let kvm = scn.xen.is_none();
        if kvm {
            let hinting = policy::hinting::SWITCH.make(g.policy.choices.get("hinting"));
            m.make_guest(hinting, g.page_reporting_order, g.kvm.clone());
        }
        let threads = workload_threads(
            &g.workloads,
            &mut m,
            g.vcpus.max(1),
            gseed,
            g.start_ns,
            poll,
        )?;
        for t in &threads.threads {
            m.mmget(t.task);
        }
        if !kvm {
            out.push(GuestBuild {
                machine: m,
                vcpus: g.vcpus.max(1),
                threads,
                slot: None,
            });
            continue;
        }
        // The VM's process: its guest RAM is one anonymous region, frame for page.
        let frames = m.frames.len() as u64;
        let task = host.add_task(&g.name, 0);
        let r = host
            .add_region(task, frames, true)
            .map_err(|e| SimError::Config(format!("guest {}: {e}", g.name)))?;
        let slot = GuestMemory::new(
            task,
            host.regions[r].base,
            frames as u32,
            g.discard_inhibited,
            scn.host.thp,
            g.kvm.clone(),
        );
        out.push(GuestBuild {
            machine: m,
            vcpus: g.vcpus.max(1),
            threads,
            slot: Some(slot),
        });
    }
    Ok(out)
}

/// Put the guests' machines' actors into the world (machines `first..`, in scenario order),
/// link each KVM guest to `host`, and start them at their VM's start.
pub(crate) fn start_guests(
    world: &mut World,
    scn: &Scenario,
    seed: u64,
    host: MachineId,
    first: MachineId,
    slots: Vec<Option<GuestMemory>>,
    threads: Vec<WorkloadThreads>,
) -> Vec<GuestActors> {
    let mut out = Vec::new();
    for (i, ((g, slot), th)) in scn.guests.iter().zip(slots).zip(threads).enumerate() {
        let id = first + i;
        let choices = &g.policy.choices;
        if let Some(slot) = slot {
            let task = slot.task;
            world.link_guest(id, host, slot);
            let vm = world.add_actor_on(id, Box::new(Vm::new(&g.name, host, task, g.shutdown_ns)));
            world.start(vm, g.start_ns);
        }
        let ids: Vec<ActorId> = th
            .threads
            .into_iter()
            .map(|t| {
                let start = t.start_ns;
                let a = world.add_actor_on(id, Box::new(t));
                world.start(a, start);
                a
            })
            .collect();
        for (start, _, a) in th.fs_threads {
            let a = world.add_actor_on(id, a);
            world.start(a, start);
        }
        let kswapd = world.add_actor_on(
            id,
            Box::new(Kswapd::new(
                policy::kswapd_loop::SWITCH.make(choices.get("kswapd_loop")),
                policy::kcompactd::SWITCH.make(choices.get("kcompactd")),
            )),
        );
        world.add_actor_on(
            id,
            Box::new(BlkdevIo {
                device: Device::Swap,
            }),
        );
        world.add_actor_on(
            id,
            Box::new(BlkdevIo {
                device: Device::Disk,
            }),
        );
        let flusher = world.add_actor_on(id, Box::new(Flusher));
        world.start(flusher, g.start_ns + FLUSHER_PERIOD_NS);
        world.add_actor_on(id, Box::new(OomReaper::new(scn.oom.reaper_delay_ns)));
        let kcompactd = Kcompactd::new(
            policy::kcompactd::SWITCH.make(choices.get("kcompactd")),
            g.start_ns,
        );
        let first_check = kcompactd.proactive_check_at();
        let kcompactd = world.add_actor_on(id, Box::new(kcompactd));
        if let Some(t) = first_check {
            world.start(kcompactd, t);
        }
        let worker = (world.guest_memory(id).is_some())
            .then(|| world.add_actor_on(id, Box::new(HintingWorker::default())));
        if g.background_frees > 0 {
            // Its own task (the guest's kernel and daemons), never an OOM victim.
            let task = world.machines[id].add_task("background", -1000);
            let vcpus = g.vcpus.max(1);
            for cpu in 0..vcpus {
                let a = world.add_actor_on(
                    id,
                    Box::new(GuestBackground::new(
                        &g.name,
                        cpu,
                        vcpus,
                        g.background_frees,
                        g.background_lifetime_ns,
                        g.start_ns,
                        task,
                        guest_seed(seed, i),
                    )),
                );
                world.start(a, g.start_ns);
            }
        }
        out.push(GuestActors {
            id,
            threads: ids,
            kswapd,
            worker,
        });
    }
    out
}

/// Split built guests into their machines (for the world), vCPUs, slots and threads.
pub(crate) fn split(
    guests: Vec<GuestBuild>,
) -> (
    Vec<Machine>,
    Vec<u32>,
    Vec<Option<GuestMemory>>,
    Vec<WorkloadThreads>,
) {
    let mut ms = Vec::new();
    let mut cpus = Vec::new();
    let mut slots = Vec::new();
    let mut threads = Vec::new();
    for g in guests {
        ms.push(g.machine);
        cpus.push(g.vcpus);
        slots.push(g.slot);
        threads.push(g.threads);
    }
    (ms, cpus, slots, threads)
}

/// What a guest's own summary.json records besides its row (the run it belongs to).
pub struct RunInfo<'a> {
    pub seed: u64,
    pub engine_version: &'a str,
    pub end_ns: u64,
    pub events: u64,
    pub stop_reason: &'a str,
    pub scenario_toml: &'a str,
}

/// The result files of each guest (`guests/<name>/vmstat`, `zoneinfo`, `buddyinfo` and a
/// `summary.json` of its own, so that a guest's directory is a result directory `compare` and
/// `report` read like any other) and the summary's `guests` array.
pub fn guest_outputs(
    world: &World,
    scn: &Scenario,
    actors: &[GuestActors],
    peaks: &[u64],
    info: &RunInfo,
) -> (Vec<(String, String)>, Value) {
    let mut files = Vec::new();
    let mut rows = Vec::new();
    for (k, (g, a)) in scn.guests.iter().zip(actors).enumerate() {
        let m = &world.machines[a.id];
        let dir = format!("guests/{}", g.name);
        let cpus = g.vcpus as u64;
        files.push((format!("{dir}/vmstat"), render::vmstat_text(m)));
        files.push((format!("{dir}/zoneinfo"), render::zoneinfo_text(m, cpus)));
        files.push((format!("{dir}/buddyinfo"), render::buddyinfo_text(m, cpus)));
        let slot = world.guest_memory(a.id).expect("a guest has a slot");
        let host = &world.machines[0];
        let gs = m.guest.as_deref().expect("a guest machine");
        let st = &gs.stats;
        let threads: Vec<Value> = a
            .threads
            .iter()
            .filter_map(|&id| world.actor(id))
            .filter_map(|t| t.as_any().downcast_ref::<Thread>())
            .map(|t| {
                json!({
                    "name": t.name,
                    "finished_s": t.finished_ns.map(|n| n as f64 / 1e9),
                    "killed": t.killed,
                    "stall_ms": t.stall_ns as f64 / 1e6,
                })
            })
            .collect();
        let killed = host.oom_kills.iter().find(|o| o.victim_task == slot.task);
        let s = &slot.stats;
        let row = json!({
            "name": g.name,
            "hinting": g.policy.choices.get("hinting"),
            "start_s": g.start_ns as f64 / 1e9,
            "killed_at_s": killed.map(|o| o.time_ns as f64 / 1e9),
            "host_rss_bytes": host.tasks[slot.task].rss_anon * PAGE_SIZE,
            "host_rss_peak_bytes": peaks.get(k).copied().unwrap_or(0),
            "reports": st.reports,
            "blocks_reported": st.blocks,
            "bytes_reported": st.pages * PAGE_SIZE,
            "report_passes": st.passes,
            "blocked_in_reports_ms": st.blocked_ns as f64 / 1e6,
            "frees_captured": st.captured,
            "frees_lost": st.lost,
            "isolate_failed": st.isolate_failed,
            "host_faults": s.host_faults,
            "host_refaults": s.refaults,
            "host_discard_ranges": s.discard_ranges,
            "host_discarded_bytes": s.discarded_pages * PAGE_SIZE,
            "host_thp_splits": s.thp_splits,
            "host_wait_ms": s.wait_ns as f64 / 1e6,
            "kvm_costs_ns": {"report": g.kvm.report_ns, "isolate": g.kvm.isolate_ns},
            "threads": threads,
        });
        let kswapd = world
            .actor(a.kswapd)
            .and_then(|k| k.as_any().downcast_ref::<Kswapd>())
            .expect("a guest has a kswapd");
        let guest_threads: Vec<&Thread> = a
            .threads
            .iter()
            .filter_map(|&id| world.actor(id))
            .filter_map(|t| t.as_any().downcast_ref::<Thread>())
            .collect();
        let summary = crate::observe::summary::build(&crate::observe::summary::SummaryInput {
            name: &g.name,
            scenario_toml: info.scenario_toml,
            seed: info.seed,
            engine_version: info.engine_version,
            node: m,
            kswapd,
            threads: &guest_threads,
            cpus: &world.cpus[a.id],
            end_ns: info.end_ns,
            events: info.events,
            stop_reason: info.stop_reason,
            extra: Some(json!({ "guest": row.clone() })),
            extra_stall_ns: 0,
        });
        files.push((format!("{dir}/summary.json"), summary));
        rows.push(row);
    }
    (files, Value::Array(rows))
}
