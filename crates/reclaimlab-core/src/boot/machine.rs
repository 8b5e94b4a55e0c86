//! One machine, host or guest, built from its view of the scenario (the host's tables, or a
//! guest's over them, `GuestConfig::as_machine`): its zones (from the RAM or a captured
//! zoneinfo), its parameters and policies, then what it carries before the run starts (a
//! filesystem, dom0's drivers, a guest's reporting) and its workloads' processes.

use crate::machine::layout::{self, ZoneLayout};
use crate::machine::policy::WatermarkSetup;
use crate::machine::{Machine, MachineConfig, MachineParams, MachinePolicies};
use crate::scenario::{GuestConfig, Scenario};
use crate::sim_error::SimError;

use super::policies::{variants, Drivers};
use super::workloads::{workload_threads, WorkloadThreads};

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

/// What the machine of a scenario (or of a guest's view of one) is built from (a caller may
/// change a policy or a parameter before building it).
pub fn host_params(scn: &Scenario, seed: u64, trace: bool) -> Result<MachineParams, SimError> {
    let v = variants(&scn.policy.choices);
    params(scn, seed, trace, v.watermarks, v.machine)
}

/// The machine's parameters, with the variants its memory model runs with (its part of the
/// [`Variants`](super::policies::Variants) made for it).
pub(crate) fn params(
    scn: &Scenario,
    seed: u64,
    trace: bool,
    watermarks: Box<dyn WatermarkSetup>,
    policy: MachinePolicies,
) -> Result<MachineParams, SimError> {
    let (layout, captured_protection) = host_zones(scn)?;
    Ok(MachineParams {
        layout,
        captured_protection,
        config: MachineConfig {
            host: scn.host.clone(),
            sysctl: scn.sysctl.clone(),
            swap: scn.swap.clone(),
            disk: scn.disk.clone(),
            writeback: scn.writeback.clone(),
            cost: scn.cost.clone(),
        },
        watermarks,
        policy,
        seed,
        trace,
    })
}

/// Make `m` the machine `view` describes before its workloads start: mount its filesystem,
/// install dom0's Xen drivers, make it a KVM guest (`kvm`: its `[[guest]]`), each with its
/// variant from `drivers`, then build its workloads' processes and threads, their times
/// shifted by `start_ns` (a guest's start). The host and every guest go through here; each
/// step is a no-op where the view has no such table.
pub(crate) fn furnish(
    view: &Scenario,
    m: &mut Machine,
    kvm: Option<&GuestConfig>,
    drivers: Drivers,
    seed: u64,
    start_ns: u64,
    poll: &mut dyn FnMut() -> bool,
) -> Result<WorkloadThreads, SimError> {
    if let Some(fs) = &view.fs {
        m.mount_fs(fs.clone(), view.sysctl.vfs_cache_pressure);
    }
    super::xen::install_dom0(view, m, drivers.blkback)?;
    if let Some(g) = kvm {
        m.make_guest(drivers.hinting, g.page_reporting_order, g.kvm.clone());
    }
    // Memory cgroups are the host's (a guest's view has none of its own).
    if kvm.is_none() && !view.cgroups.is_empty() {
        m.setup_memcg(&view.cgroups).map_err(SimError::Config)?;
    }
    let cpus = view.host.cpus.max(1);
    let threads = workload_threads(&view.workloads, m, cpus, seed, start_ns, poll)?;
    for t in &threads.threads {
        m.mmget(t.task);
    }
    Ok(threads)
}
