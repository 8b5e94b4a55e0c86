//! What a run reports of its memory cgroups (cgroup v2's interface files, docs/design/
//! memcg-psi.md §7): each cgroup's `memory.current`, `memory.peak`, `memory.events`,
//! `memory.events.local`, `memory.swap.current`, `memory.swap.events`, `memory.stat`,
//! `memory.pressure` (its PSI group: the stalls of its tasks and its descendants') and its
//! limits as they read back, under `cgroup/<name>/` in the result directory, and the same
//! figures in summary.json's `cgroups` object. Nothing here without `[[cgroup]]`.
//!
//! `memory.stat` prints 6.1's keys in its order (without CONFIG_ZSWAP's); the ones the model
//! has values for are `anon`, `file`, the four LRU sizes, the `workingset_*` refault,
//! activate and restore counts, `pgscan*`, `pgsteal*`, `pgfault`, `pgmajfault`, `pgrefill`,
//! `pgactivate` and `pgdeactivate`, and the kernel memory charged to it: `kernel` (the pages
//! its slab objects charged, stock included), `slab_reclaimable`, `slab_unreclaimable` and
//! `slab` (the charged objects' bytes, `obj_full_size` each; machine/memcontrol/kmem.rs); the
//! others (kernel stacks, page tables, sockets, THP, shmem...) print 0.
//! Values are exact (the kernel's are flushed every 2 s). `anon` and `file` are the pages on
//! the memcg subtree's anon and file LRU lists (an abstraction: the kernel's `anon` counts
//! mapped anonymous pages, so it leaves out an unmapped swap-cache page the list holds).

use serde_json::{json, Map, Value};

use crate::machine::lru::{
    ANON, FILE, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE,
};
use crate::machine::memcontrol::mem_cgroup::MemCgroups;
use crate::machine::memcontrol::{memory_stat_keys, show_memory_knob, StatUnit};
use crate::machine::page_counter::CounterId;
use crate::machine::psi::PsiReading;
use crate::machine::{Machine, PAGE_SIZE};

use super::summary::pressure_lines;

/// `memory.stat` of memcg `id` as (key, value) in printed order, values in the file's units.
pub fn memory_stat(mc: &MemCgroups, node: &Machine, id: CounterId) -> Vec<(&'static str, u64)> {
    let size = mc.subtree_size(id, &node.lruvec);
    let st = mc.subtree_stat(id);
    let km = mc.subtree_kmem(id);
    memory_stat_keys(false)
        .map(|k| {
            // Kept in bytes by the kernel: printed as they are.
            let bytes = match k.name {
                "slab_reclaimable" => Some(km.slab_bytes[0]),
                "slab_unreclaimable" => Some(km.slab_bytes[1]),
                "slab" => Some(km.slab_bytes[0] + km.slab_bytes[1]),
                _ => None,
            };
            if let Some(b) = bytes {
                return (k.name, b);
            }
            let v = match k.name {
                "kernel" => km.kmem_pages,
                "pagetables" => km.pagetables,
                "anon" => size[LRU_INACTIVE_ANON] + size[LRU_ACTIVE_ANON],
                "file" => size[LRU_INACTIVE_FILE] + size[LRU_ACTIVE_FILE],
                "inactive_anon" => size[LRU_INACTIVE_ANON],
                "active_anon" => size[LRU_ACTIVE_ANON],
                "inactive_file" => size[LRU_INACTIVE_FILE],
                "active_file" => size[LRU_ACTIVE_FILE],
                "workingset_refault_anon" => st.workingset_refault[ANON],
                "workingset_refault_file" => st.workingset_refault[FILE],
                "workingset_activate_anon" => st.workingset_activate[ANON],
                "workingset_activate_file" => st.workingset_activate[FILE],
                "workingset_restore_anon" => st.workingset_restore[ANON],
                "workingset_restore_file" => st.workingset_restore[FILE],
                "pgscan" => st.pgscan_kswapd + st.pgscan_direct,
                "pgsteal" => st.pgsteal_kswapd + st.pgsteal_direct,
                "pgscan_kswapd" => st.pgscan_kswapd,
                "pgscan_direct" => st.pgscan_direct,
                "pgsteal_kswapd" => st.pgsteal_kswapd,
                "pgsteal_direct" => st.pgsteal_direct,
                "pgfault" => st.pgfault,
                "pgmajfault" => st.pgmajfault,
                "pgrefill" => st.pgrefill,
                "pgactivate" => st.pgactivate,
                "pgdeactivate" => st.pgdeactivate,
                _ => 0,
            };
            let v = match k.unit {
                StatUnit::Bytes => v * PAGE_SIZE,
                StatUnit::Count => v,
            };
            (k.name, v)
        })
        .collect()
}

/// The memcgs below the root, with their ids, in creation (declaration) order.
fn cgroups(mc: &MemCgroups) -> impl Iterator<Item = (CounterId, &str)> {
    mc.names
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, n)| (i as CounterId, n.as_str()))
}

/// The result directory's `cgroup/<name>/memory.*` files, as a read at `now` shows them.
pub fn memcg_files(node: &Machine, now: u64) -> Vec<(String, String)> {
    let Some(mc) = &node.memcg else {
        return Vec::new();
    };
    let pressure = node.psi.read_all(now);
    let mut out = Vec::new();
    for (id, name) in cgroups(mc) {
        let dir = format!("cgroup/{name}");
        let (mem, swap) = (mc.memory.get(id), mc.swap.get(id));
        let ev = &mc.events[id as usize];
        let stat: String = memory_stat(mc, node, id)
            .iter()
            .map(|(k, v)| format!("{k} {v}\n"))
            .collect();
        let bytes = |pages: u64| format!("{}\n", pages * PAGE_SIZE);
        for (file, text) in [
            ("memory.current", bytes(mem.usage)),
            ("memory.peak", bytes(mem.watermark)),
            ("memory.min", show_memory_knob(mem.min)),
            ("memory.low", show_memory_knob(mem.low)),
            ("memory.high", show_memory_knob(mem.high)),
            ("memory.max", show_memory_knob(mem.max)),
            ("memory.events", ev.hier.memory_events_text()),
            ("memory.events.local", ev.local.memory_events_text()),
            (
                "memory.oom.group",
                format!("{}\n", mc.oom_group[id as usize] as u8),
            ),
            ("memory.stat", stat),
            ("memory.swap.current", bytes(swap.usage)),
            ("memory.swap.max", show_memory_knob(swap.max)),
            ("memory.swap.events", ev.hier.swap_events_text()),
            ("memory.pressure", pressure[id as usize].text()),
        ] {
            out.push((format!("{dir}/{file}"), text));
        }
    }
    out
}

/// summary.json's `cgroups` at `now`: one object per cgroup, by name.
pub fn memcg_summary(node: &Machine, now: u64) -> Option<Value> {
    let mc = node.memcg.as_ref()?;
    let pressure = node.psi.read_all(now);
    let mut obj = Map::new();
    for (id, name) in cgroups(mc) {
        let (mem, swap) = (mc.memory.get(id), mc.swap.get(id));
        let e = &mc.events[id as usize].hier;
        let pro = &mc.proactive[id as usize];
        let stat: Map<String, Value> = memory_stat(mc, node, id)
            .into_iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let parent = mc
            .memory
            .parent(id)
            .map_or("", |p| mc.names[p as usize].as_str());
        obj.insert(
            name.to_string(),
            json!({
                "parent": parent,
                "memory.current": mem.usage * PAGE_SIZE,
                "memory.peak": mem.watermark * PAGE_SIZE,
                "memory.swap.current": swap.usage * PAGE_SIZE,
                "memory.events": {
                    "low": e.low,
                    "high": e.high,
                    "max": e.max,
                    "oom": e.oom,
                    "oom_kill": e.oom_kill,
                    "oom_group_kill": e.oom_group_kill,
                },
                "memory.swap.events": {"max": e.swap_max, "fail": e.swap_fail},
                // Not a kernel file: time its tasks slept in memory.high's penalty.
                "high_throttled_ns": mc.throttled_ns[id as usize],
                "memory.stat": stat,
                "memory.pressure": pressure_lines(&pressure[id as usize]),
                // Not kernel files: what writes of memory.reclaim and memory.high to it did
                // (a [workload.memory_reclaim] writer, a memcg_controller), in bytes.
                "proactive": {
                    "memory.reclaim": {
                        "writes": pro.reclaim_writes,
                        "eagain": pro.reclaim_eagain,
                        "requested": pro.reclaim_requested * PAGE_SIZE,
                        "reclaimed": pro.reclaim_reclaimed * PAGE_SIZE,
                    },
                    "memory.high": {
                        "writes": pro.high_writes,
                        "reclaimed": pro.high_reclaimed * PAGE_SIZE,
                    },
                },
            }),
        );
    }
    Some(Value::Object(obj))
}

/// The time series' columns of the cgroups, named after their files: the two sizes in bytes,
/// then `memory.pressure`'s totals (us) and avg10 (hundredths of a percent), as the system's
/// `psi_memory_*` columns are.
pub fn timeseries_names(node: &Machine) -> Vec<String> {
    let Some(mc) = &node.memcg else {
        return Vec::new();
    };
    cgroups(mc)
        .flat_map(|(_, n)| {
            [
                format!("cgroup/{n}/memory.current"),
                format!("cgroup/{n}/memory.swap.current"),
                format!("cgroup/{n}/memory.pressure.some_total_us"),
                format!("cgroup/{n}/memory.pressure.full_total_us"),
                format!("cgroup/{n}/memory.pressure.some_avg10_x100"),
                format!("cgroup/{n}/memory.pressure.full_avg10_x100"),
            ]
        })
        .collect()
}

/// Their values now, in [`timeseries_names`] order; `pressure`: every PSI group read now
/// ([`Psi::read_all`](crate::machine::psi::Psi::read_all)).
pub fn timeseries_values(node: &Machine, pressure: &[PsiReading], out: &mut Vec<u64>) {
    if let Some(mc) = &node.memcg {
        for (id, _) in cgroups(mc) {
            let p = &pressure[id as usize];
            out.extend([
                mc.memory.get(id).usage * PAGE_SIZE,
                mc.swap.get(id).usage * PAGE_SIZE,
                p.total_ns[0] / 1000,
                p.total_ns[1] / 1000,
                p.avg_x100(false, 0),
                p.avg_x100(true, 0),
            ]);
        }
    }
}
