//! What a run reports of a Xen host (`[xen]`): the summary's `xen` object (blkback's pools,
//! grants and rings, the balloon, each blkio job's figures) and the `xen/log_stats` file.

use serde_json::{json, Value};

use crate::actors::blkfront::{Blkfront, BlkioRun, BlkioStats};
use crate::actors::xen_blkback::BlkbackRing;
use crate::engine::ActorId;
use crate::machine::PAGE_SIZE;
use crate::world::World;

/// The Xen actors of a run, to read their figures at the end.
pub struct XenActors {
    pub rings: Vec<ActorId>,
    /// (guest, workload, VBD, actor) of each blkio job.
    pub jobs: Vec<(String, String, String, ActorId)>,
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

/// The summary's `xen` object and the files of a Xen run (`xen/log_stats`); `variant(switch)`
/// is the run's choice for a policy switch.
pub fn xen_outputs(
    world: &World,
    actors: &XenActors,
    variant: &dyn Fn(&str) -> &'static str,
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
        "blkback_pool": variant("blkback_pool"),
        "blkback_backing": variant("blkback_backing"),
        "blkback_grants": variant("blkback_grants"),
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
