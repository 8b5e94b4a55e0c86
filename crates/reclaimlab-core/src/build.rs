//! Building what a run is made of from its scenario: the host machine (its zones, from the RAM
//! or a captured zoneinfo, and its parameters and policies) and a machine's workload threads.
//! `run.rs` builds the host and the world; `run_virt.rs` builds guests with the same pieces.

use crate::actors::workload::trace::TraceReplay;
use crate::actors::workload::{Origin, Thread};
use crate::machine::blkdev::DeviceParams;
use crate::machine::layout::{self, ZoneLayout};
use crate::machine::{Machine, MachineConfig, MachineParams, MachinePolicies, PAGE_SIZE};
use crate::observe::ftrace::TaskId;
use crate::policy;
use crate::scenario::Scenario;
use crate::sim_error::SimError;
use crate::world::Actor;

/// Workload threads get pids from here on, in thread order (kswapd0 is 70).
pub const FIRST_TASK_PID: u32 = 1000;

/// The machine's zones: from a captured `/proc/zoneinfo` or sized from the configured RAM.
pub fn host_layout(scn: &Scenario) -> Result<ZoneLayout, SimError> {
    host_zones(scn).map(|(layout, _)| layout)
}

/// The host's zones and, when they come from a captured zoneinfo, the protection its kernel
/// printed.
fn host_zones(scn: &Scenario) -> Result<(ZoneLayout, Option<Protection>), SimError> {
    match &scn.host.zoneinfo {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| SimError::Config(format!("cannot read zoneinfo {path}: {e}")))?;
            layout::parse_zoneinfo(&text)
                .map(|p| {
                    let prot = p.protection();
                    (p.layout, Some(prot))
                })
                .map_err(|e| SimError::Config(format!("{path}: {e}")))
        }
        None => ZoneLayout::for_host(&scn.host.ram_layout())
            .map(|l| (l, None))
            .map_err(SimError::Config),
    }
}

type Protection = [[u64; crate::machine::MAX_NR_ZONES]; crate::machine::MAX_NR_ZONES];

/// The host machine a scenario describes, all memory free.
pub fn host_machine(scn: &Scenario, seed: u64, trace: bool) -> Result<Machine, SimError> {
    Machine::new(host_params(scn, seed, trace)?).map_err(SimError::Config)
}

/// What the host machine of a scenario is built from (a caller may change a policy or a
/// parameter before building it).
pub fn host_params(scn: &Scenario, seed: u64, trace: bool) -> Result<MachineParams, SimError> {
    let choices = &scn.policy.choices;
    let device = |read, write, bw, jitter, nr_requests| DeviceParams {
        read_latency_ns: read,
        write_latency_ns: write,
        bandwidth_bytes_per_sec: bw,
        latency_jitter: jitter,
        nr_requests,
    };
    let (s, d) = (&scn.swap, &scn.disk);
    let (layout, captured_protection) = host_zones(scn)?;
    Ok(MachineParams {
        layout,
        captured_protection,
        thp: scn.host.thp,
        min_free_kbytes: scn.sysctl.min_free_kbytes,
        watermark_scale_factor: scn.sysctl.watermark_scale_factor,
        lowmem_reserve_ratio: scn.sysctl.lowmem_reserve_ratio,
        fragmented_zone: scn.host.fragmented_zone,
        fragment_stride: scn.host.fragment_stride,
        kernel_used_pages: scn.host.kernel_used_bytes / PAGE_SIZE,
        cpus: scn.host.cpus.max(1),
        swap_pages: s.size_bytes / PAGE_SIZE,
        swap_rotational: s.rotational,
        swap_plug_pages: s.max_request_bytes.div_ceil(PAGE_SIZE),
        swapdev: device(
            s.read_latency_ns,
            s.write_latency_ns,
            s.bandwidth_bytes_per_sec,
            s.latency_jitter,
            s.nr_requests,
        ),
        disk: device(
            d.read_latency_ns,
            d.write_latency_ns,
            d.bandwidth_bytes_per_sec,
            d.latency_jitter,
            d.nr_requests,
        ),
        config: MachineConfig {
            swappiness: scn.sysctl.swappiness,
            page_cluster: scn.sysctl.page_cluster,
            pcp_lists: scn.host.pcp_lists,
            cost: scn.cost.clone(),
            readahead_pages: d.readahead_pages.max(1),
            dirty_ratio: scn.writeback.dirty_ratio,
            dirty_background_ratio: scn.writeback.dirty_background_ratio,
            watermark_boost_factor: scn.sysctl.watermark_boost_factor,
            compaction_proactiveness: scn.sysctl.compaction_proactiveness,
            thp_defrag: scn.host.thp_defrag,
            page_tables: scn.host.page_tables,
            vmstat_drift: scn.host.vmstat_drift,
        },
        watermarks: policy::watermarks::SWITCH.make(choices.get("watermarks")),
        policy: MachinePolicies {
            balance: policy::kswapd_balance::SWITCH.make(choices.get("kswapd_balance")),
            wmark_check: policy::watermark_check::SWITCH.make(choices.get("watermark_check")),
            boost: policy::watermark_boost::SWITCH.make(choices.get("watermark_boost")),
            shrinker: policy::shrinker::SWITCH
                .make(choices.get("shrinker"))
                .into(),
            xfs_reclaim: policy::xfs_reclaim::SWITCH.make(choices.get("xfs_reclaim")),
        },
        seed,
        trace,
    })
}

/// A machine's workload threads, built from its `[[workload]]`s.
pub(crate) struct WorkloadThreads {
    pub threads: Vec<Thread>,
    /// The filesystem workloads' threads (their own actor types): (start, who, actor).
    pub fs_threads: Vec<(u64, TaskId, Box<dyn Actor>)>,
    /// Anonymous pages of the traces' objects (known only once the traces are scanned).
    pub trace_anon_pages: u64,
}

/// Build the threads of `workloads` on `machine` (its processes, regions and files), in
/// scenario order, their times shifted by `offset_ns` (a guest's start).
pub(crate) fn workload_threads(
    workloads: &[crate::scenario::Workload],
    machine: &mut Machine,
    cpus: u32,
    seed: u64,
    offset_ns: u64,
    poll: &mut dyn FnMut() -> bool,
) -> Result<WorkloadThreads, SimError> {
    // Workload threads, in scenario order: each workload is a process of the machine.
    let mut threads: Vec<Thread> = Vec::new();
    // The filesystem workloads' threads (their own actor types), after the others.
    let mut fs_threads: Vec<(u64, TaskId, Box<dyn Actor>)> = Vec::new();
    let mut trace_anon_pages = 0u64;
    for w in workloads {
        let task = machine.add_task(&w.name, w.oom_score_adj);
        let start_ns = w.start_ns + offset_ns;
        let deadline = w.duration_ns.map(|d| start_ns + d);
        let origin = |i: usize| Origin {
            workload: &w.name,
            task,
            pid: FIRST_TASK_PID + i as u32,
            cpu: (i as u32 + 1) % cpus,
            seed,
            start_ns,
            deadline_ns: deadline,
        };
        let region = |m: &mut Machine, pages: u64, anon: bool| {
            m.add_region(task, pages, anon)
                .map(|r| m.regions[r].base)
                .map_err(SimError::Config)
        };
        if let Some(a) = &w.anon {
            let pages = a.size_bytes.div_ceil(PAGE_SIZE);
            let base = region(machine, pages, true)?;
            threads.push(Thread::anon(&origin(threads.len()), a, base, pages as u32));
        }
        if let Some(f) = &w.file {
            let pages = f.size_bytes.div_ceil(PAGE_SIZE);
            let base = region(machine, pages, false)?;
            threads.push(Thread::file(&origin(threads.len()), f, base, pages as u32));
        }
        if let Some(spec) = &w.trace {
            let mut replay = TraceReplay::scan_polled(spec, poll)
                .map_err(SimError::Trace)?
                .ok_or(SimError::Interrupted)?;
            let mut bases = [0u32; 2];
            for (i, (pages, anon)) in [(replay.anon_pages, true), (replay.file_pages, false)]
                .into_iter()
                .enumerate()
            {
                if pages > 0 {
                    bases[i] = region(machine, pages, anon)?;
                }
            }
            trace_anon_pages += replay.anon_pages;
            replay.place(bases[0], bases[1]);
            threads.push(Thread::trace(&origin(threads.len()), spec, replay));
        }
        if let Some(spec) = &w.highorder {
            threads.push(Thread::highorder(
                &origin(threads.len()),
                spec,
                machine.cfg.thp_defrag,
            ));
        }
        crate::run_fs::build_fs_threads(w, machine, &origin, threads.len(), &mut fs_threads)
            .map_err(SimError::Config)?;
    }
    Ok(WorkloadThreads {
        threads,
        fs_threads,
        trace_anon_pages,
    })
}
