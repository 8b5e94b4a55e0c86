//! The scenario schema's declarations: one `section!` per table, one line per key.
//!
//! To add a key: add the field to its struct in `scenario/mod.rs`, then one line to the
//! table's `section!` here (`field: default => Key::new("name", Ty::.., "doc")` and any
//! builder calls: `.unit`, `.why`, `.unset`, `.rule`, `.check`, `.only_if`). The parser, the
//! `--show-defaults` printer, the struct's `Default` and `docs/scenario-reference.md` follow;
//! regenerate the reference with `RECLAIMLAB_WRITE_DOCS=1 cargo test -p reclaimlab-core
//! scenario_reference`.
//!
//! To add a table: declare its section (in `machine.rs` if it describes a machine) and list it
//! as a child of its parent: `Embedded` (always there), `Optional` or `Array`.

mod cgroup;
mod fs;
mod guest;
mod machine;
mod policy;
mod workload;
mod xen;

// Every section, for a later table kind (`[[guest]]`) to embed and for the tests.
#[allow(unused_imports)]
pub use cgroup::{CGROUP, CGROUP_MEMORY, CGROUP_OOM, CGROUP_SWAP, CONTROLLER};
#[allow(unused_imports)]
pub use fs::FS;
#[allow(unused_imports)]
pub use guest::{GUEST, KVM};
#[allow(unused_imports)]
pub use machine::{COST, DISK, HOST, OOM, SWAP, SYSCTL, WRITEBACK};
#[allow(unused_imports)]
pub use workload::{
    ANON, DROP_CACHES, FILE, FSMARK, HIGHORDER, LRU_GEN, MEMORY_RECLAIM, SIMOOPS, STAT, TRACE,
    WORKLOAD,
};
#[allow(unused_imports)]
pub use xen::{BLKBACK, BLKIO, VBD, XEN, XEN_COST};

use super::schema::{section, Array, Embedded, Fix, Optional, Rule, Ty, Unique};
use super::source::describe_size;
use super::{
    ControllerConfig, CostModel, DiskDevice, FsConfig, HostConfig, OomConfig, PolicyConfig,
    Scenario, SimConfig, SwapDevice, Sysctl, WritebackConfig, NS_PER_MS, NS_PER_SEC,
};

section! {
    SimConfig => pub static SIM = "sim", "The run: seed, length and sampling." {
        seed: 1 => Key::new(
            "seed",
            // TOML integers stop at 2^63-1; larger seeds are written as decimal strings.
            Ty::UInt { min: 0, max: u64::MAX },
            "seed of every random stream (--seed overrides it)",
        );
        duration_ns: None => Key::new("duration", Ty::Duration { min: 1 }, "stop at this simulated time")
            .unset("when every workload has exited");
        sample_interval_ns: 100 * NS_PER_MS => Key::new(
            "sample_interval",
            Ty::Duration { min: 1 },
            "simulated time between time-series samples",
        );
        max_duration_ns: 3600 * NS_PER_SEC => Key::new(
            "max_duration",
            Ty::Duration { min: 1 },
            "cap on simulated time when duration is unset (guards against a workload that never ends)",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

/// A machine section embedded in the scenario under its own name.
macro_rules! embed {
    ($T:ty, $SEC:path, $field:ident) => {
        Embedded::<Scenario, $T> {
            section: &$SEC,
            get: |s| &s.$field,
            get_mut: |s| &mut s.$field,
        }
    };
}

section! {
    Scenario => pub static ROOT = "", "The top level of a scenario file." {
        name: "scenario".to_string() => Key::new(
            "name",
            Ty::Text { what: "scenario name" },
            "free-form name (names the results directory)",
        )
        .rule("the scenario file's name without its extension");
        sim: SimConfig::default();
        host: HostConfig::default();
        sysctl: Sysctl::default();
        swap: SwapDevice::default();
        disk: DiskDevice::default();
        writeback: WritebackConfig::default();
        cost: CostModel::default();
        oom: OomConfig::default();
        policy: PolicyConfig::default();
        fs: None;
        xen: None;
        cgroups: Vec::new();
        controller: None;
        guests: Vec::new();
        workloads: Vec::new();
    }
    children: [
        embed!(SimConfig, SIM, sim),
        embed!(HostConfig, HOST, host),
        embed!(Sysctl, SYSCTL, sysctl),
        embed!(SwapDevice, SWAP, swap),
        embed!(DiskDevice, DISK, disk),
        embed!(WritebackConfig, WRITEBACK, writeback),
        embed!(CostModel, COST, cost),
        embed!(OomConfig, OOM, oom),
        policy::PolicyTable::<Scenario> {
            get: |s| &s.policy,
            get_mut: |s| &mut s.policy,
        },
        Optional::<Scenario, FsConfig> {
            section: &fs::FS,
            get: |s| s.fs.as_ref(),
            put: |s, c| s.fs = Some(c),
        },
        Optional::<Scenario, super::XenConfig> {
            section: &xen::XEN,
            get: |s| s.xen.as_ref(),
            put: |s, c| s.xen = Some(c),
        },
        Array::<Scenario, crate::machine::config::CgroupConfig> {
            section: &CGROUP,
            get: |s| &s.cgroups,
            get_mut: |s| &mut s.cgroups,
            missing: ("", ""),
            optional_if: |_| true,
            unique: Some(Unique {
                key: "name",
                value: |c| c.name.as_str(),
                help: "every cgroup needs its own name (workloads join it by name, and it names its output directory)",
            }),
        },
        Optional::<Scenario, ControllerConfig> {
            section: &CONTROLLER,
            get: |s| s.controller.as_ref(),
            put: |s, c| s.controller = Some(c),
        },
        // Before the workloads: a scenario whose guests do the work needs no host workload.
        Array::<Scenario, super::GuestConfig> {
            section: &GUEST,
            get: |s| &s.guests,
            get_mut: |s| &mut s.guests,
            missing: ("", ""),
            optional_if: |_| true,
            unique: Some(Unique {
                key: "name",
                value: |g| g.name.as_str(),
                help: "every guest needs its own name (it names its result directory and its VM)",
            }),
        },
        Array::<Scenario, super::Workload> {
            section: &WORKLOAD,
            get: |s| &s.workloads,
            get_mut: |s| &mut s.workloads,
            missing: (
                "the scenario has no workloads",
                "add a [[workload]] table with a name and a [workload.anon] or [workload.file] table",
            ),
            optional_if: |s| !s.guests.is_empty(),
            unique: Some(Unique {
                key: "name",
                value: |w| w.name.as_str(),
                help: "every workload needs its own name (it labels counters and OOM kills)",
            }),
        },
    ],
    rules: [
        CAPACITY,
        FS_WORKLOADS,
        guest::HOST_HINTING,
        xen::XEN_HOST,
        cgroup::CGROUP_TREE,
        cgroup::CONTROLLER_CGROUPS,
        workload::LRU_GEN_WRITES,
    ],
    derived: None,
}

/// The fsmark and simoops workloads work on the filesystem, which must be there.
const FS_WORKLOADS: Rule<Scenario> = Rule {
    name: "filesystem workloads have a filesystem",
    doc: "a `[workload.fsmark]`, `[workload.simoops]` or `[workload.stat]` table needs an `[fs]` table",
    check: |s, _| {
        if s.fs.is_some() {
            return Ok(());
        }
        match s
            .workloads
            .iter()
            .position(|w| w.fsmark.is_some() || w.simoops.is_some() || w.stat.is_some())
        {
            Some(i) => {
                let w = &s.workloads[i];
                let table = if w.fsmark.is_some() {
                    "fsmark"
                } else if w.simoops.is_some() {
                    "simoops"
                } else {
                    "stat"
                };
                Err(Fix::new(
                    format!(
                        "workload \"{}\" has a [workload.{table}] table but the scenario has no filesystem",
                        w.name
                    ),
                    "add an [fs] table (its defaults describe a 4-AG XFS volume)",
                )
                .at(format!("workload[{i}].{table}")))
            }
            None => Ok(()),
        }
    },
};

/// With OOM kills forbidden, the anonymous working sets must fit in RAM + swap, or the run
/// could only end in a stuck allocation. (Page cache is reclaimable, so file sizes do not
/// count; summing all workloads is conservative when they do not overlap in time.) Skipped
/// with a zoneinfo, whose RAM is not known here.
const CAPACITY: Rule<Scenario> = Rule {
    name: "the workloads fit",
    doc: "with `oom.allowed = false`, the workloads' anonymous sizes must fit in `host.ram` + \
          `swap.size` (skipped with a zoneinfo)",
    check: |s, _| {
        if s.oom.allowed || s.host.zoneinfo.is_some() {
            return Ok(());
        }
        let need: u128 = s
            .workloads
            .iter()
            .filter_map(|w| w.anon.as_ref())
            .map(|a| a.size_bytes as u128)
            .sum();
        let have = s.host.ram_bytes as u128 + s.swap.size_bytes as u128;
        if need <= have {
            return Ok(());
        }
        let show = |v: u128| u64::try_from(v).map_or_else(|_| format!("{v} bytes"), describe_size);
        let mut fix = Fix::new(
            format!(
                "the workloads' anonymous working sets ({}) exceed RAM + swap ({} = {} + {}) and \
                 no OOM kill is allowed",
                show(need),
                show(have),
                describe_size(s.host.ram_bytes),
                describe_size(s.swap.size_bytes),
            ),
            "set allowed = true in [oom], add swap ([swap] size = ...), or shrink the workloads",
        )
        .at("oom.allowed");
        if let Some(i) = s.workloads.iter().rposition(|w| w.anon.is_some()) {
            fix = fix.at(format!("workload[{i}].anon.size"));
        }
        Err(fix)
    },
};
