//! What a run reports of its KVM guests: each guest's own result files (`guests/<name>/vmstat`,
//! `zoneinfo`, `buddyinfo` and a `summary.json`) and the summary's `guests` array.

use serde_json::{json, Value};

use crate::actors::kswapd::Kswapd;
use crate::actors::workload::Thread;
use crate::engine::ActorId;
use crate::machine::PAGE_SIZE;
use crate::observe::render;
use crate::virt::KvmCost;
use crate::world::{MachineId, World};

/// A guest as the run reports it: what its scenario table says of it, and its actors.
pub struct Guest {
    pub name: String,
    pub vcpus: u32,
    /// Host time at which the VM starts.
    pub start_ns: u64,
    /// Its `hinting` variant.
    pub hinting: &'static str,
    pub kvm: KvmCost,
    /// Its machine in the world.
    pub id: MachineId,
    pub threads: Vec<ActorId>,
    pub kswapd: ActorId,
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

/// The result files of each guest (`guests/<name>/vmstat`, `zoneinfo`, `buddyinfo`,
/// `pressure/memory` and a
/// `summary.json` of its own, so that a guest's directory is a result directory `compare` and
/// `report` read like any other) and the summary's `guests` array.
pub fn guest_outputs(
    world: &World,
    guests: &[Guest],
    peaks: &[u64],
    info: &RunInfo,
) -> (Vec<(String, String)>, Value) {
    let mut files = Vec::new();
    let mut rows = Vec::new();
    for (k, g) in guests.iter().enumerate() {
        let m = &world.machines[g.id];
        let dir = format!("guests/{}", g.name);
        let cpus = g.vcpus as u64;
        files.push((format!("{dir}/vmstat"), render::vmstat_text(m)));
        files.push((format!("{dir}/zoneinfo"), render::zoneinfo_text(m, cpus)));
        files.push((format!("{dir}/buddyinfo"), render::buddyinfo_text(m, cpus)));
        let pressure = m.psi.read(crate::machine::psi::PSI_SYSTEM, info.end_ns);
        files.push((format!("{dir}/pressure/memory"), pressure.text()));
        // The guest kernel's /sys/kernel/debug/lru_gen{,_full}, under its MGLRU only.
        if m.lru_gen.is_some() {
            files.push((format!("{dir}/lru_gen"), m.lru_gen_debugfs()));
            files.push((format!("{dir}/lru_gen_full"), m.lru_gen_debugfs_full()));
        }
        let slot = world.guest_memory(g.id).expect("a guest has a slot");
        let host = &world.machines[0];
        let gs = m.guest.as_deref().expect("a guest machine");
        let st = &gs.stats;
        let threads: Vec<Value> = g
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
            "hinting": g.hinting,
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
            .actor(g.kswapd)
            .and_then(|k| k.as_any().downcast_ref::<Kswapd>())
            .expect("a guest has a kswapd");
        let guest_threads: Vec<&Thread> = g
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
            cpus: &world.cpus[g.id],
            end_ns: info.end_ns,
            events: info.events,
            stop_reason: info.stop_reason,
            extra: Some(match super::lru_gen::debugfs_writes(m) {
                Some(w) => json!({ "guest": row.clone(), "lru_gen_writes": w }),
                None => json!({ "guest": row.clone() }),
            }),
            extra_stall_ns: 0,
        });
        files.push((format!("{dir}/summary.json"), summary));
        rows.push(row);
    }
    (files, Value::Array(rows))
}
