//! A run's outputs, rendered from the world at its end: `/proc/vmstat`, `zoneinfo`,
//! `buddyinfo`, summary.json (with the filesystem's, the guests' and Xen's objects), the time
//! series, the trace and the result directory's other files.

use crate::actors::kswapd::Kswapd;
use crate::actors::workload::Thread;
use crate::engine::ActorId;
use crate::machine::psi::PSI_SYSTEM;
use crate::world::World;

use super::ftrace::TaskTracer;
use super::guests::Guest;
use super::render;
use super::timeseries::{Sampler, Timeseries};
use super::vm_rss::VmRss;
use super::xen::XenActors;

#[derive(Debug, Clone)]
pub struct RunOutput {
    /// `/proc/vmstat` text at the end of the run.
    pub vmstat: String,
    /// `/proc/zoneinfo` text at the end of the run.
    pub zoneinfo: String,
    /// `/proc/buddyinfo` text at the end of the run.
    pub buddyinfo: String,
    /// `summary.json` content (pretty-printed, keys in a fixed order, trailing newline).
    pub summary_json: String,
    pub timeseries: Timeseries,
    /// The vmstat event counters as (name, value), in /proc/vmstat order.
    pub counters: Vec<(String, u64)>,
    /// Wall-clock time of the run (not part of any output file: it is not deterministic).
    pub wall_ns: u64,
    /// Events processed.
    pub events: u64,
    /// The `trace` file (ftrace text), when `RunOptions::trace` asked for one.
    pub trace: Option<String>,
    /// More files of the result directory, by name: `slabinfo` and `shrinker_debugfs` when the
    /// machine has slab shrinkers, then `meminfo` (every run).
    pub extra_files: Vec<(String, String)>,
}

/// What a run that has ended hands over for its outputs besides its world.
pub struct Ended<'a> {
    pub name: &'a str,
    /// The scenario as `--show-defaults` prints it (summary.json's `scenario`).
    pub scenario_toml: &'a str,
    pub seed: u64,
    pub engine_version: &'a str,
    /// The host's CPUs.
    pub cpus: u32,
    pub events: u64,
    pub stop_reason: &'a str,
    pub wall_ns: u64,
    pub sampler: ActorId,
    pub vm_rss: Option<ActorId>,
    pub kswapd: ActorId,
    /// The host's workload threads and filesystem workloads' actors.
    pub threads: &'a [ActorId],
    pub fs_threads: &'a [ActorId],
    pub guests: &'a [Guest],
    pub xen: Option<&'a XenActors>,
    /// The run's variant of a policy switch.
    pub variant: &'a dyn Fn(&str) -> &'static str,
}

/// Render the outputs of the run that ended in `world` (its sampler and VM RSS observer are
/// taken out of it for a last sample).
pub fn render(world: &mut World, e: &Ended) -> RunOutput {
    let now = world.now();
    let cpus = e.cpus as u64;
    // A final sample at the end time, unless one was just taken.
    let mut sampler = world
        .remove_observer(e.sampler)
        .and_then(|o| o.into_any().downcast::<Sampler>().ok())
        .expect("the run has a sampler");
    if sampler.last_time() != Some(now) {
        sampler.sample(now, world);
    }
    let mut vm_rss = e.vm_rss.and_then(|id| {
        world
            .remove_observer(id)
            .and_then(|o| o.into_any().downcast::<VmRss>().ok())
    });
    if let Some(v) = vm_rss.as_mut() {
        if v.last_time() != Some(now) {
            v.sample(now, world);
        }
    }
    let mut fs_summary = super::fs::fs_summary(world, e.fs_threads, now);
    let mut guest_files = Vec::new();
    if let Some(v) = &vm_rss {
        let info = super::guests::RunInfo {
            seed: e.seed,
            engine_version: e.engine_version,
            end_ns: now,
            events: e.events,
            stop_reason: e.stop_reason,
            scenario_toml: e.scenario_toml,
        };
        let (files, rows) = super::guests::guest_outputs(world, e.guests, &v.peaks(), &info);
        guest_files = files;
        guest_files.push(("vm_rss.csv".to_string(), v.csv()));
        let mut obj = match fs_summary.take() {
            Some(serde_json::Value::Object(o)) => o,
            _ => serde_json::Map::new(),
        };
        obj.insert("guests".into(), rows);
        fs_summary = Some(serde_json::Value::Object(obj));
    }
    if let Some(xa) = e.xen {
        let (obj, files) = super::xen::xen_outputs(world, xa, e.variant);
        let mut o = match fs_summary.take() {
            Some(serde_json::Value::Object(o)) => o,
            _ => serde_json::Map::new(),
        };
        o.insert("xen".into(), obj);
        fs_summary = Some(serde_json::Value::Object(o));
        guest_files.extend(files);
    }
    if let Some(cg) = super::memcg::memcg_summary(&world.machines[0], now) {
        let mut o = match fs_summary.take() {
            Some(serde_json::Value::Object(o)) => o,
            _ => serde_json::Map::new(),
        };
        o.insert("cgroups".into(), cg);
        fs_summary = Some(serde_json::Value::Object(o));
    }
    if let Some(w) = super::lru_gen::debugfs_writes(&world.machines[0]) {
        let mut o = match fs_summary.take() {
            Some(serde_json::Value::Object(o)) => o,
            _ => serde_json::Map::new(),
        };
        o.insert("lru_gen_writes".into(), w);
        fs_summary = Some(serde_json::Value::Object(o));
    }
    let fs_stall = super::fs::fs_threads_stall_ns(world, e.fs_threads);
    let mut extra_files = Vec::new();
    if !world.machines[0].shrinkers.is_empty() {
        let m = &mut world.machines[0];
        extra_files.push(("slabinfo".to_string(), super::fs::slabinfo_text(m)));
        let debugfs = super::fs::shrinker_debugfs_text(m);
        extra_files.push(("shrinker_debugfs".to_string(), debugfs));
    }
    let meminfo = super::render::meminfo_text(&world.machines[0]);
    extra_files.push(("meminfo".to_string(), meminfo));
    extra_files.extend(super::memcg::memcg_files(&world.machines[0], now));
    // /proc/pressure/memory as a read at the end of the run shows it.
    let pressure = world.machines[0].psi.read(PSI_SYSTEM, now).text();
    extra_files.push(("pressure/memory".to_string(), pressure));
    // /sys/kernel/debug/lru_gen and lru_gen_full, under the multi-generational LRU only.
    if world.machines[0].lru_gen.is_some() {
        extra_files.push(("lru_gen".to_string(), world.machines[0].lru_gen_debugfs()));
        let full = world.machines[0].lru_gen_debugfs_full();
        extra_files.push(("lru_gen_full".to_string(), full));
    }
    extra_files.extend(guest_files);
    let node = &world.machines[0];
    let counters: Vec<(String, u64)> = node.vm.named().map(|(n, v)| (n.to_string(), v)).collect();
    let kswapd = world
        .actor(e.kswapd)
        .and_then(|a| a.as_any().downcast_ref::<Kswapd>())
        .expect("the run has a kswapd");
    let threads: Vec<&Thread> = e
        .threads
        .iter()
        .filter_map(|&id| world.actor(id))
        .filter_map(|a| a.as_any().downcast_ref::<Thread>())
        .collect();
    let summary = super::summary::build(&super::summary::SummaryInput {
        name: e.name,
        scenario_toml: e.scenario_toml,
        seed: e.seed,
        engine_version: e.engine_version,
        node,
        kswapd,
        threads: &threads,
        cpus: &world.cpus[0],
        end_ns: now,
        events: e.events,
        stop_reason: e.stop_reason,
        extra: fs_summary,
        extra_stall_ns: fs_stall,
    });
    let trace = world
        .trace_sink()
        .and_then(|s| s.as_any().downcast_ref::<TaskTracer>())
        .map(|t| t.tracer.finish());
    RunOutput {
        vmstat: render::vmstat_text(node),
        zoneinfo: render::zoneinfo_text(node, cpus),
        buddyinfo: render::buddyinfo_text(node, cpus),
        summary_json: summary,
        timeseries: sampler.finish(),
        counters,
        wall_ns: e.wall_ns,
        events: e.events,
        trace,
        extra_files,
    }
}
