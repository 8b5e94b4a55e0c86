//! A Xen host (`[xen]`): dom0's drivers in the host machine (blkback with its switches, the B0
//! array, the pressure detector), one device per `[[guest.vbd]]` with its rings, and in the
//! world the rings' kthreads, the balloon worker and the guests' blkfront jobs.

use std::rc::Rc;

use crate::actors::blkfront::Blkfront;
use crate::actors::xen_balloon::BalloonWorker;
use crate::actors::xen_blkback::BlkbackRing;
use crate::engine::ActorId;
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::memory::TaskCtx;
use crate::machine::xen::policy::{BlkbackPool, GnttabBacking, PersistentGrants};
use crate::machine::xen::{XenBackend, BLKIF_MAX_SEGMENTS_PER_REQUEST};
use crate::machine::{Machine, PAGE_SIZE};
use crate::observe::xen::XenActors;
use crate::scenario::Scenario;
use crate::sim_error::SimError;
use crate::world::{Actor, MachineId};

use super::cast::{Add, Cast, Member};

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
pub(crate) fn install_dom0(
    scn: &Scenario,
    m: &mut Machine,
    blkback: (
        Rc<dyn BlkbackPool>,
        Rc<dyn PersistentGrants>,
        Rc<dyn GnttabBacking>,
    ),
) -> Result<(), SimError> {
    let Some(x) = &scn.xen else {
        return Ok(());
    };
    let (pool, grants, backing) = blkback;
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

/// Cast the rings' kthreads and the balloon worker on dom0 (`host`, machine `dom0`) and each
/// guest's blkio jobs on its machine (`first..`), started at their start, and link the rings
/// to their actors in dom0's drivers.
pub(crate) fn cast_xen(
    cast: &mut Cast,
    scn: &Scenario,
    host: &mut Machine,
    dom0: MachineId,
    first: MachineId,
) -> Result<Option<XenActors>, SimError> {
    if scn.xen.is_none() {
        return Ok(None);
    }
    let add = |cast: &mut Cast, m: MachineId, a: Box<dyn Actor>, start: Option<u64>| {
        cast.push(Add {
            member: Member::Actor(m, a),
            start,
        });
        (cast.len() - 1) as ActorId
    };
    let balloon = add(cast, dom0, Box::new(BalloonWorker), None);
    let n = host.xen().rings.len();
    let mut rings = Vec::new();
    for r in 0..n {
        let x = host.xen();
        let ring = &x.rings[r];
        let dev = &x.devices[ring.dev];
        let name = format!("blkback.{}.{}-{}", dev.domid, dev.name, ring.queue);
        let a = BlkbackRing::new(name, r, ring.cpu, ring.task, balloon);
        let id = add(
            cast,
            dom0,
            Box::new(a),
            Some(crate::machine::xen::LRU_INTERVAL_NS),
        );
        host.xen_mut().rings[r].backend = id;
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
            let d = &host.xen().devices[first_dev + v];
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
            let persistent = host.xen().rings[ring].persistent;
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
            let id = add(cast, first + i, Box::new(job), Some(start));
            host.xen_mut().rings[ring].frontend = Some(id);
            jobs.push((g.name.clone(), w.name.clone(), vbd.name.clone(), id));
        }
    }
    Ok(Some(XenActors { rings, jobs }))
}
