//! What a run reports of the filesystem and its workloads (`[fs]`, the fsmark, simoops, stat
//! and drop_caches tables): summary.json's shrinker, slab, fs and latency objects, the
//! `slabinfo` and shrinker debugfs files, and the workloads' direct-reclaim stall.

use serde_json::{json, Value};

use crate::actors::workload::fsmark::Fsmark;
use crate::actors::workload::simoops::Simoops;
use crate::actors::workload::stat::Stat;
use crate::engine::histogram::{Latency, Percentiles};
use crate::engine::ActorId;
use crate::machine::Machine;
use crate::world::World;

fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e6 * 1000.0).round() / 1000.0
}

fn percentiles(p: Percentiles) -> Value {
    json!({
        "count": p.count,
        "p50_ns": p.p50,
        "p95_ns": p.p95,
        "p99_ns": p.p99,
        "p99.9_ns": p.p999,
        "max_ns": p.max,
        "mean_ns": p.mean,
    })
}

/// Direct-reclaim stall of the filesystem workloads' threads (for the headline).
pub fn fs_threads_stall_ns(world: &World, ids: &[ActorId]) -> u64 {
    ids.iter()
        .filter_map(|&id| world.actor(id))
        .map(|a| {
            let any = a.as_any();
            any.downcast_ref::<Fsmark>()
                .map(|f| f.stall_ns)
                .unwrap_or(0)
                + any
                    .downcast_ref::<Simoops>()
                    .map(|s| s.stall_ns)
                    .unwrap_or(0)
                + any.downcast_ref::<Stat>().map(|s| s.stall_ns).unwrap_or(0)
        })
        .sum()
}

/// summary.json's `shrinkers`, `slab`, `fs` and `latency` objects; `None` for a run with
/// neither shrinkers nor filesystem workloads (its summary is as before).
pub fn fs_summary(world: &World, ids: &[ActorId], end_ns: u64) -> Option<Value> {
    let m = &world.machines[0];
    if m.shrinkers.is_empty() && ids.is_empty() {
        return None;
    }
    let shrinkers: Vec<Value> = m
        .shrinkers
        .list
        .iter()
        .map(|s| {
            json!({
                "name": format!("{}-{}", s.name, s.id),
                "batch": s.params.batch_size(),
                "seeks": s.params.seeks,
                "calls": s.stats.calls,
                "scanned": s.stats.scanned,
                "freed": s.stats.freed,
                "stopped": s.stats.stopped,
                "nr_deferred": s.deferred.nr_deferred,
                "max_nr_deferred": s.stats.max_deferred,
                "deferred_taken_kswapd": s.stats.taken_kswapd,
                "deferred_taken_direct": s.stats.taken_direct,
                "direct_calls": s.stats.direct_calls,
                "max_direct_planned": s.stats.max_direct_planned,
            })
        })
        .collect();
    let slab: Vec<Value> = m
        .slab
        .caches
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "active_objs": c.objects,
                "pages": c.nr_pages(),
                "allocs": c.allocs,
                "frees": c.frees,
            })
        })
        .collect();
    let mut out = json!({ "shrinkers": shrinkers, "slab": slab });
    if let Some(fs) = m.fs.as_ref() {
        let st = &fs.stats;
        out["fs"] = json!({
            "files": fs.files.len(),
            "inodes_in_memory": fs.icache.nr_inodes,
            "dentries": fs.dcache.nr_dentry,
            "dentry_lru": fs.dcache.nr_lru,
            "inode_lru": fs.icache.nr_lru,
            "xfs_reclaimable": fs.xfs.nr_reclaimable,
            "log_used": fs.xfs.log_used,
            "creates": st.creates,
            "lookups_cached": st.lookups_cached,
            "lookups_recycled": st.lookups_recycled,
            "lookups_cold": st.lookups_cold,
            "dentries_pruned": st.dentries_pruned,
            "inodes_evicted": st.inodes_evicted,
            "xs_ig_reclaims": st.xs_ig_reclaims,
            "reclaim_log_forces": st.reclaim_log_forces,
            "reclaim_sync_writes": st.reclaim_sync_writes,
            "reclaim_wait_ms": ms(st.reclaim_wait_ns),
            "ag_lock_skips": st.ag_lock_skips,
            "ag_lock_waits": st.ag_lock_waits,
            "aild_cluster_writes": st.aild_cluster_writes,
            "cil_checkpoints": st.cil_checkpoints,
            "log_space_waits": st.log_space_waits,
            "log_space_wait_ms": ms(st.log_space_wait_ns),
            "reclaim_worker_runs": st.reclaim_worker_runs,
            "type": fs.cfg.fs_type.name(),
            "xs_ig_attempts": st.xs_ig_attempts,
            "xs_ig_found": st.xs_ig_found,
            "xs_ig_missed": st.xs_ig_missed,
            "block_buffers_allocated": fs.meta.stats.block_bufs_allocated,
            "block_buffers_freed": fs.meta.stats.block_bufs_freed,
            "directory_blocks": fs.meta.stats.dir_blocks,
            "buffer_pages": fs.meta.buf_pages,
            "journal_commits": fs.meta.stats.journal_commits,
        });
        if let Some(bd) = m.bdev.as_ref() {
            let b = &bd.stats;
            out["fs"]["bdev"] = json!({
                "pages": bd.nr_pages,
                "lookups": b.lookups,
                "hits": b.hits,
                "reads": b.reads,
                "released": b.released,
                "busy": b.busy,
            });
        }
    }
    // The workloads' own reports: simoops's latencies and rates, fsmark's create rate.
    let mut alloc = Latency::new();
    let mut reclaim = Latency::new();
    let mut unit = Latency::new();
    let mut create = Latency::new();
    let (mut units, mut created, mut simoops_threads) = (0u64, 0u64, 0u64);
    let mut lookup = Latency::new();
    let (mut lookups, mut stat_passes, mut stat_threads) = (0u64, 0u64, 0u64);
    let mut fsmark_killed = false;
    let mut fsmark_end = 0u64;
    for a in ids.iter().filter_map(|&id| world.actor(id)) {
        if let Some(s) = a.as_any().downcast_ref::<Simoops>() {
            alloc.merge(&s.alloc_latency);
            reclaim.merge(&s.reclaim_latency);
            unit.merge(&s.unit_latency);
            units += s.units;
            simoops_threads += 1;
        }
        if let Some(s) = a.as_any().downcast_ref::<Stat>() {
            lookup.merge(&s.lookup_latency);
            lookups += s.lookups;
            stat_passes += s.passes;
            stat_threads += 1;
        }
        if let Some(f) = a.as_any().downcast_ref::<Fsmark>() {
            create.merge(&f.create_latency);
            created += f.created;
            fsmark_killed |= f.killed;
            fsmark_end = fsmark_end.max(f.finished_ns.unwrap_or(end_ns));
        }
    }
    let secs = end_ns.max(1) as f64 / 1e9;
    let allocstall: u64 = (0..crate::machine::MAX_NR_ZONES)
        .map(|z| m.vm.get(crate::machine::vmstat::VmEvent::allocstall(z)))
        .sum();
    let rate = |n: u64, s: f64| (n as f64 / s * 1000.0).round() / 1000.0;
    let mut latency = json!({});
    if simoops_threads > 0 {
        latency["allocation"] = percentiles(alloc.percentiles());
        latency["direct_reclaim"] = percentiles(reclaim.percentiles());
        latency["unit"] = percentiles(unit.percentiles());
        out["simoops"] = json!({
            "threads": simoops_threads,
            "units": units,
            "work_rate": rate(units, secs),
            "alloc_stall_rate": rate(allocstall, secs),
        });
    }
    if create.count() > 0 || created > 0 {
        latency["create"] = percentiles(create.percentiles());
        out["fsmark"] = json!({
            "files_created": created,
            "create_rate": rate(created, fsmark_end.max(1) as f64 / 1e9),
            "oom_killed": fsmark_killed,
            "finished_ns": fsmark_end,
        });
    }
    if stat_threads > 0 {
        latency["lookup"] = percentiles(lookup.percentiles());
        out["stat"] = json!({
            "threads": stat_threads,
            "lookups": lookups,
            "passes": stat_passes,
            "lookup_rate": rate(lookups, secs),
        });
    }
    out["latency"] = latency;
    Some(out)
}

/// A `/proc/slabinfo`-style table of the machine's slab caches (version 2.1 columns; the
/// tunables and per-CPU figures SLUB prints as 0).
pub fn slabinfo_text(m: &Machine) -> String {
    use std::fmt::Write;
    let mut s = String::from("slabinfo - version: 2.1\n");
    s.push_str(
        "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n",
    );
    for c in &m.slab.caches {
        let num_objs = c.nr_slabs() * c.objs_per_slab;
        let _ = writeln!(
            s,
            "{:<17} {:>6} {:>6} {:>6} {:>4} {:>4} : tunables {:>4} {:>4} {:>4} : slabdata {:>6} {:>6} {:>6}",
            c.name,
            c.objects,
            num_objs,
            c.object_size,
            c.objs_per_slab,
            1u64 << c.order,
            0,
            0,
            0,
            c.nr_slabs(),
            c.nr_slabs(),
            0
        );
    }
    s
}

/// 6.1's shrinker debugfs (`CONFIG_SHRINKER_DEBUG`), one block per shrinker: the `count`
/// file's line (memcg inode 1 = root, then the count per node) and the run's totals.
pub fn shrinker_debugfs_text(m: &mut Machine) -> String {
    use crate::machine::gfp::GFP_KERNEL;
    use crate::machine::shrinker::ShrinkControl;
    use std::fmt::Write;
    let mut s = String::new();
    let mut list = std::mem::take(&mut m.shrinkers.list);
    for sh in list.iter_mut() {
        let mut sc = ShrinkControl::new(GFP_KERNEL, 0, false);
        let count = sh.ops.count_objects(m, &mut sc);
        let count = if count == crate::machine::shrinker::SHRINK_EMPTY {
            0
        } else {
            count
        };
        let st = sh.stats;
        let _ = writeln!(
            s,
            "/sys/kernel/debug/shrinker/{}-{}/count: 1 {count}\n  calls {} scanned {} freed {} stopped {} nr_deferred {} max_nr_deferred {}",
            sh.name, sh.id, st.calls, st.scanned, st.freed, st.stopped, sh.deferred.nr_deferred, st.max_deferred
        );
    }
    m.shrinkers.list = list;
    s
}
