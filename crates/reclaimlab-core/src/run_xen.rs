//! The Xen part of building and reporting a run (`[xen]`): dom0's drivers in the host machine
//! (blkback with its switches, the B0 array, the pressure detector), one device per
//! `[[guest.vbd]]` with its rings, and in the world the rings' kthreads, the balloon worker
//! and the guests' blkfront jobs; then what the run reports of them. `run.rs` calls these.

use std::rc::Rc;

use serde_json::{json, Value};

use crate::actors::blkfront::{Blkfront, BlkioRun, BlkioStats};
use crate::actors::xen_balloon::BalloonWorker;
use crate::actors::xen_blkback::BlkbackRing;
use crate::engine::ActorId;
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::memory::TaskCtx;
use crate::machine::xen::{XenBackend, BLKIF_MAX_SEGMENTS_PER_REQUEST};
use crate::machine::{Machine, PAGE_SIZE};
use crate::policy;
use crate::scenario::Scenario;
use crate::sim_error::SimError;
use crate::world::{MachineId, World};

/// Rings a VBD gets: its `queues`, else what 6.1's blkfront negotiates.
fn queues(scn: &Scenario, vcpus: u32, asked: Option<u32>) -> u32 {
    let x = scn.xen.as_ref().expect("a Xen scenario");
    let backend = match x.blkback.max_queues {
        0 => scn.host.cpus.max(1),
        n => n,
    };
    asked.unwrap_or_else(|| 4.min(vcpus.max(1)).min(backend))
}

/// Make the host machine dom0: its Xen drivers, the B0 array, the pressure detector, and a
/// device with its rings for every VBD of every guest.
pub(crate) fn install_dom0(scn: &Scenario, m: &mut Machine) -> Result<(), SimError> {
    let Some(x) = &scn.xen else {
        return Ok(());
    };
    let choices = &scn.policy.choices;
    let pool = Rc::from(policy::blkback_pool::SWITCH.make(choices.get("blkback_pool")));
    let grants = Rc::from(policy::blkback_grants::SWITCH.make(choices.get("blkback_grants")));
    let backing = Rc::from(policy::blkback_backing::SWITCH.make(choices.get("blkback_backing")));
    let mut xb = XenBackend::new(
        x.blkback.clone(),
        x.cost.clone(),
        pool,
        grants,
        backing,
        scn.host.cpus,
        scn.host.ram_bytes / PAGE_SIZE,
    );
    for (i, g) in scn.guests.iter().enumerate() {
        for v in &g.vbds {
            let q = queues(scn, g.vcpus, v.queues);
            let name = format!("{}/{}", g.name, v.name);
            xb.connect(&name, i as u32 + 1, v.device(), q, v.persistent);
        }
    }
    for r in 0..xb.rings.len() {
        let ring = &xb.rings[r];
        let dev = &xb.devices[ring.dev];
        let task = m.add_task(&format!("blkback.{}.{}", dev.domid, ring.queue), -1000);
        xb.rings[r].task = task;
    }
    let fixed = xb.pool.fixed_array();
    let pages = xb.params.reqs as u64 * BLKIF_MAX_SEGMENTS_PER_REQUEST as u64;
    m.xen = Some(Box::new(xb));
    if fixed {
        // B0 allocates its whole array when the module loads.
        let mut t = TaskCtx::default();
        for _ in 0..pages {
            let pfn = m.alloc_pages(GFP_KERNEL, 0, &mut t).map_err(|_| {
                SimError::Config(format!(
                    "dom0 cannot hold blkback's B0 array ({pages} pages): give [host] more ram \
                     or lower [xen.blkback] reqs"
                ))
            })?;
            m.mark_kernel_pages(pfn, 0);
            m.xen_mut().b0_pages.push(pfn);
        }
    }
    m.register_xen_shrinker();
    Ok(())
}

/// The Xen actors of a run, to read their figures at the end.
pub struct XenActors {
    pub rings: Vec<ActorId>,
    /// (guest, workload, VBD, actor) of each blkio job.
    pub jobs: Vec<(String, String, String, ActorId)>,
}

/// Add the rings' kthreads and the balloon worker on dom0 (machine `dom0`) and each guest's
/// blkio jobs on its machine (`first..`), and start them.
pub(crate) fn start_xen(
    world: &mut World,
    scn: &Scenario,
    dom0: MachineId,
    first: MachineId,
) -> Result<Option<XenActors>, SimError> {
    if scn.xen.is_none() {
        return Ok(None);
    }
    let balloon = world.add_actor_on(dom0, Box::new(BalloonWorker));
    let n = world.machines[dom0].xen().rings.len();
    let mut rings = Vec::new();
    for r in 0..n {
        let x = world.machines[dom0].xen();
        let ring = &x.rings[r];
        let dev = &x.devices[ring.dev];
        let name = format!("blkback.{}.{}-{}", dev.domid, dev.name, ring.queue);
        let a = BlkbackRing::new(name, r, ring.cpu, ring.task, balloon);
        let id = world.add_actor_on(dom0, Box::new(a));
        world.machines[dom0].xen_mut().rings[r].backend = id;
        world.start(id, crate::machine::xen::LRU_INTERVAL_NS);
        rings.push(id);
    }
    let mut jobs = Vec::new();
    let mut dev = 0usize;
    let mut gref_base = 0u32;
    for (i, g) in scn.guests.iter().enumerate() {
        let first_dev = dev;
        dev += g.vbds.len();
        let mut used = vec![0u32; g.vbds.len()];
        for w in &g.workloads {
            let Some(b) = &w.blkio else {
                continue;
            };
            let v = g
                .vbds
                .iter()
                .position(|v| v.name == b.vbd)
                .expect("checked by the parser");
            let d = &world.machines[dom0].xen().devices[first_dev + v];
            let q = used[v] as usize;
            let Some(&ring) = d.rings.get(q) else {
                return Err(SimError::Config(format!(
                    "guest {}: VBD {} has {} ring(s), one per blkio job: workload {} has none left; \
                     give the VBD more queues or the job another VBD",
                    g.name,
                    b.vbd,
                    d.rings.len(),
                    w.name
                )));
            };
            used[v] += 1;
            let vbd = &g.vbds[v];
            let persistent = world.machines[dom0].xen().rings[ring].persistent;
            let start = g.start_ns + w.start_ns;
            let end = w.duration_ns.map(|d| start + d);
            // Each job's grant references are its own range.
            gref_base = gref_base.wrapping_add(1 << 24);
            let job = Blkfront::new(
                format!("{}:{}", g.name, w.name),
                dom0,
                ring,
                q as u32 % g.vcpus.max(1),
                b.clone(),
                persistent,
                vbd.max_segments(),
                end,
                gref_base,
            );
            let id = world.add_actor_on(first + i, Box::new(job));
            world.machines[dom0].xen_mut().rings[ring].frontend = Some(id);
            world.start(id, start);
            jobs.push((g.name.clone(), w.name.clone(), vbd.name.clone(), id));
        }
    }
    Ok(Some(XenActors { rings, jobs }))
}

fn job_row(guest: &str, name: &str, vbd: &str, s: &BlkioStats, runs: &[BlkioRun]) -> Value {
    let secs = s.last_ns.saturating_sub(s.first_ns) as f64 / 1e9;
    let rate = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    json!({
        "guest": guest,
        "workload": name,
        "vbd": vbd,
        "requests": s.requests,
        "ios": s.ios,
        "bytes": s.bytes,
        "seconds": secs,
        "iops": rate(s.ios as f64),
        "mb_per_s": rate(s.bytes as f64) / 1e6,
        "mean_latency_us": if s.requests > 0 { s.latency_ns as f64 / s.requests as f64 / 1e3 } else { 0.0 },
        "guest_cpu_ns_per_request": if s.requests > 0 { s.guest_cpu_ns as f64 / s.requests as f64 } else { 0.0 },
        "guest_copied_bytes": s.copied_bytes,
        "runs_mb_per_s": runs
            .iter()
            .map(|r| {
                let secs = r.last_ns.saturating_sub(r.first_ns) as f64 / 1e9;
                if secs > 0.0 { r.bytes as f64 / secs / 1e6 } else { 0.0 }
            })
            .collect::<Vec<f64>>(),
    })
}

/// The summary's `xen` object and the files of a Xen run (`xen/log_stats`).
pub(crate) fn xen_outputs(
    world: &World,
    scn: &Scenario,
    actors: &XenActors,
) -> (Value, Vec<(String, String)>) {
    let dom0 = &world.machines[0];
    let x = dom0.xen();
    let c = &x.counters;
    let mut devices = Vec::new();
    for (d, dev) in x.devices.iter().enumerate() {
        let s = x.device_totals(d);
        let rings: Vec<Value> = dev
            .rings
            .iter()
            .map(|&r| {
                let ring = &x.rings[r];
                json!({
                    "queue": ring.queue,
                    "cpu": ring.cpu,
                    "pool_pages": ring.pool.len(),
                    "pool_pages_max": ring.pool_max,
                    "pool_over_target": ring.over_target,
                    "persistent_gnt_c": ring.pgnts.count(),
                    "persistent_gnt_max_seen": ring.pgnts.max_seen,
                    "max_pgrants": ring.max_pgrants,
                    "persistent": ring.persistent,
                    "mapped_pages": ring.mapped_pages(),
                })
            })
            .collect();
        devices.push(json!({
            "name": dev.name,
            "domid": dev.domid,
            "statistics": {
                "oo_req": s.oo_req, "rd_req": s.rd_req, "wr_req": s.wr_req, "f_req": s.f_req,
                "ds_req": s.ds_req, "rd_sect": s.rd_sect, "wr_sect": s.wr_sect,
            },
            "rings": rings,
        }));
    }
    let rows: Vec<Value> = actors
        .jobs
        .iter()
        .filter_map(|(g, w, v, id)| {
            let a = world.actor(*id)?.as_any().downcast_ref::<Blkfront>()?;
            Some(job_row(g, w, v, &a.stats, &a.runs))
        })
        .collect();
    let jobs: Vec<&BlkioStats> = actors
        .jobs
        .iter()
        .filter_map(|(_, _, _, id)| world.actor(*id)?.as_any().downcast_ref::<Blkfront>())
        .map(|a| &a.stats)
        .collect();
    let total = BlkioStats::total(&jobs);
    let (alloc_wait, blocked) = actors
        .rings
        .iter()
        .filter_map(|&id| world.actor(id)?.as_any().downcast_ref::<BlkbackRing>())
        .fold((0, 0), |(w, b), r| (w + r.alloc_wait_ns, b + r.blocked));
    let kb = PAGE_SIZE / 1024;
    let current = x.reservation.saturating_sub(x.balloon.out);
    let per_req = |v: u64| {
        if c.requests > 0 {
            v as f64 / c.requests as f64
        } else {
            0.0
        }
    };
    let summary = json!({
        "blkback_pool": scn.policy.choices.get("blkback_pool"),
        "blkback_backing": scn.policy.choices.get("blkback_backing"),
        "blkback_grants": scn.policy.choices.get("blkback_grants"),
        "balloon": {
            "current_kb": current * kb,
            "target_kb": x.reservation * kb,
            "ballooned_out_pages": x.balloon.out,
            "decrease_reservation_pages": x.balloon.decreased,
            "increase_reservation_pages": x.balloon.increased,
        },
        "unpopulated": {
            "sections": x.unpopulated.sections,
            "memmap_pages": x.unpopulated.memmap.len(),
        },
        "pool_pages": x.pool_pages(),
        "mapped_pages": x.mapped_pages(),
        "map_hypercalls": c.map_hypercalls,
        "map_ops": c.map_ops,
        "unmap_hypercalls": c.unmap_hypercalls,
        "unmap_ops": c.unmap_ops,
        "tlb_flushes": c.tlb_flushes,
        "ipis": c.ipis,
        "flush_wait_ms": c.flush_wait_ns as f64 / 1e6,
        "unmap_hypercalls_per_request": per_req(c.unmap_hypercalls),
        "tlb_flushes_per_request": per_req(c.tlb_flushes),
        "pool_pages_grown": c.pool_grown,
        "pool_pages_freed": c.pool_freed,
        "squeezes": c.squeezes,
        "pressure_calls": c.pressure_calls,
        "persistent_purged": c.purged,
        "persistent_hits": c.persistent_hits,
        "requests": c.requests,
        "segments": c.segments,
        "ring_alloc_wait_ms": alloc_wait as f64 / 1e6,
        "ring_alloc_blocked": blocked,
        "devices": devices,
        "jobs": rows,
        "aggregate": job_row("", "", "", &total, &[]),
    });
    let mut log = String::new();
    let mut lines: Vec<&(u64, String)> = x.rings.iter().flat_map(|r| r.log.iter()).collect();
    lines.sort_by_key(|(t, _)| *t);
    for (t, l) in lines {
        log.push_str(&format!("[{:>12.6}] {l}\n", *t as f64 / 1e9));
    }
    let mut files = Vec::new();
    if x.params.log_stats {
        files.push(("xen/log_stats".to_string(), log));
    }
    (summary, files)
}
