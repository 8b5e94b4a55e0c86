//! Scenario: the validated description of one simulation run.
//!
//! This file holds the *types*. The scenario file's keys, their defaults (the `Default` impls
//! are generated from them), ranges, rules and docs are declared once, in `sections/`, with
//! the machinery in `schema.rs`; from those declarations come the parser (`parse.rs`, with
//! `source.rs` for positions), the `--show-defaults` printer (`show.rs`, `computed.rs`) and
//! `docs/scenario-reference.md` (`docs.rs`). Units are parsed and formatted in `units.rs`.
//!
//! All sizes are bytes, all times are nanoseconds, after parsing.

mod computed;
pub mod docs;
mod error;
pub mod parse;
mod schema;
mod sections;
pub mod show;
mod source;
mod tables;
#[cfg(test)]
mod tests;
pub mod units;
mod writer;

pub use crate::trace::{Compression, TraceFormat};
pub use parse::ScenarioError;

// The parser, the printer and the reference generator walk whichever top-level section they
// are handed; this module, which owns the scenario, hands them its own (`sections::ROOT`), so
// none of them reaches into the declarations that in turn use them.

/// Parse a scenario from TOML text. `file` is used in error messages and, through its stem, as
/// the default scenario name. Relative paths (`host.zoneinfo`, `workload.trace.path`) are
/// resolved against the current directory.
pub fn parse_str(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse::parse_str(&sections::ROOT, text, file)
}

/// Parse a scenario from TOML text whose relative paths (every key of type path: `host.zoneinfo`,
/// `cost.wakeup_latency_samples`, a workload's or a guest's `trace.path`...) are resolved
/// against `base_dir`, as if the text were a file there: what a front end that builds a
/// scenario from a file's text (a sweep point) gives to mean "the paths of that file".
pub fn parse_str_in(
    text: &str,
    file: &str,
    base_dir: &std::path::Path,
) -> Result<Scenario, ScenarioError> {
    parse::parse_str_in(&sections::ROOT, text, file, base_dir)
}

/// Read and parse a scenario file. Relative paths are resolved against the directory holding
/// the scenario file.
pub fn parse_file(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    parse::parse_file(&sections::ROOT, path)
}

/// Render a scenario as TOML, every setting shown (`--show-defaults`; see `show.rs`).
pub fn to_toml(s: &Scenario) -> String {
    show::to_toml(&sections::ROOT, s)
}

/// The scenario reference, as committed in `docs/scenario-reference.md` (see `docs.rs`).
pub fn reference() -> String {
    docs::reference(&sections::ROOT)
}

pub use crate::actors::workload::spec::*;
pub use crate::engine::units::{GIB, KIB, MIB, NS_PER_MS, NS_PER_SEC, NS_PER_US};
pub use crate::machine::huge_memory::ThpDefrag;
pub use crate::machine::layout::{MachineType, RamLayout};

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Free-form name (defaults to the file stem).
    pub name: String,
    pub sim: SimConfig,
    pub host: HostConfig,
    pub sysctl: Sysctl,
    pub swap: SwapDevice,
    pub disk: DiskDevice,
    pub writeback: WritebackConfig,
    pub cost: CostModel,
    pub oom: OomConfig,
    pub policy: PolicyConfig,
    /// A mounted filesystem (`[fs]`: XFS or ext4), for the fsmark, simoops and stat workloads.
    pub fs: Option<FsConfig>,
    /// A Xen host (`[xen]`): the machine is dom0 and the guests are domUs.
    pub xen: Option<XenConfig>,
    /// Memory cgroups (v2) below the root (`[[cgroup]]`), in declaration order.
    pub cgroups: Vec<CgroupConfig>,
    /// The userspace memory controller's parameters (`[controller]`; it runs when
    /// `[policy] memcg_controller` names one, with the defaults when the table is absent).
    pub controller: Option<ControllerConfig>,
    /// Virtual machines run by this host (`[[guest]]`), each a machine of its own.
    pub guests: Vec<GuestConfig>,
    pub workloads: Vec<Workload>,
}

/// A KVM guest (`[[guest]]`): a machine of its own whose RAM is anonymous memory of one process
/// (the VM) on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestConfig {
    pub name: String,
    pub ram_bytes: u64,
    pub vcpus: u32,
    pub machine: MachineType,
    /// Transparent huge pages in the guest kernel.
    pub thp: bool,
    /// The guest's anonymous memory has page-table pages.
    pub page_tables: bool,
    /// An aged guest: one pinned kernel page in every `fragment_stride` pages of its Normal
    /// zone, so no free block of that size forms there.
    pub fragment_stride: Option<u32>,
    /// Host time at which the VM starts (its workloads' times count from here).
    pub start_ns: u64,
    /// Host time at which the VM shuts down (its process exits); `None`: it runs to the end.
    pub shutdown_ns: Option<u64>,
    /// Memory the guest kernel holds after booting: touched, so host-resident from the start.
    pub boot_resident_bytes: u64,
    /// `page_reporting.page_reporting_order`: the smallest order the reporting variants report.
    pub page_reporting_order: u32,
    /// Pages a second the guest's own system allocates and frees besides its workloads,
    /// shared by its vCPUs.
    pub background_frees: u64,
    /// Mean lifetime of such a page (exponential).
    pub background_lifetime_ns: u64,
    /// Discards are inhibited on the host (device assignment, postcopy): reports are acked
    /// without discarding anything.
    pub discard_inhibited: bool,
    /// The host memory cgroup the VM's process runs in (its guest RAM is charged there);
    /// `None`: the root.
    pub cgroup: Option<String>,
    pub sysctl: Sysctl,
    pub swap: SwapDevice,
    pub cost: CostModel,
    pub kvm: KvmCost,
    pub policy: PolicyConfig,
    /// Xen domU only: its virtual block devices.
    pub vbds: Vec<Vbd>,
    pub workloads: Vec<Workload>,
}

/// `[xen]`: the hypervisor's memory, blkback's parameters and the grant path's costs.
#[derive(Debug, Clone, PartialEq)]
pub struct XenConfig {
    /// Physical memory the hypervisor owns.
    pub ram_bytes: u64,
    pub blkback: crate::machine::xen::BlkbackParams,
    pub cost: crate::machine::xen::XenCost,
}

/// `[[guest.vbd]]`: a Xen domU's virtual block device.
#[derive(Debug, Clone, PartialEq)]
pub struct Vbd {
    pub name: String,
    /// "ramdisk", "network" or "ssd".
    pub backend: String,
    pub latency_ns: Option<u64>,
    pub bandwidth: Option<u64>,
    pub queues: Option<u32>,
    /// The frontend offers persistent grants.
    pub persistent: bool,
    pub max_indirect_segments: u32,
}

/// The `[guest.kvm]` table: what crossing between a guest and its host costs.
pub use crate::virt::KvmCost;

#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Scenario seed; `--seed` overrides it.
    pub seed: u64,
    /// Stop at this simulated time. `None`: run until every workload has exited.
    pub duration_ns: Option<u64>,
    /// Fixed simulated interval between time-series samples.
    pub sample_interval_ns: u64,
    /// Hard cap on simulated time when `duration` is not given (guards against a workload that never ends).
    pub max_duration_ns: u64,
}

/// The `[fs]` table describes the machine's filesystem (its keys are declared in
/// `sections/fs.rs`).
pub use crate::machine::fs::FsConfig;

/// The `[cost]` table is the machine's CPU cost model (its defaults are declared with its keys).
pub use crate::machine::cost::CostModel;

/// The `[controller]` table is the userspace memory controller's own configuration.
pub use crate::actors::memcg_controller::ControllerConfig;

/// The machine tables (`[host]`, `[sysctl]`, `[swap]`, `[disk]`, `[writeback]`, `[oom]`) are
/// the machine's own configuration types.
pub use crate::machine::config::{
    CgroupConfig, DiskDevice, HostConfig, OomConfig, SwapDevice, Sysctl, WritebackConfig,
    DEFAULT_FRAGMENT_STRIDE,
};

/// `[policy]`: the variant chosen for every switch of the policy registry (`crate::policy`),
/// defaults and presets resolved.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolicyConfig {
    pub choices: crate::policy::Choices,
}

/// One process (`[[workload]]`). It has an anonymous-memory thread, a file-I/O thread and a trace-replay thread,
/// in any combination (at least one). They run side by side; the trace's anonymous objects are
/// a second anonymous region of the same process, its file objects files of their own.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    pub start_ns: u64,
    /// Exit at start + duration even if the passes are not done. `None`: run to completion.
    pub duration_ns: Option<u64>,
    /// -1000..=1000; -1000 is never OOM-killed.
    pub oom_score_adj: i32,
    /// The memory cgroup its process runs in (`[[cgroup]]` name); `None`: the root.
    pub cgroup: Option<String>,
    pub anon: Option<AnonSpec>,
    pub file: Option<FileSpec>,
    pub trace: Option<TraceSpec>,
    pub highorder: Option<HighOrderSpec>,
    pub fsmark: Option<FsmarkSpec>,
    pub simoops: Option<SimoopsSpec>,
    pub drop_caches: Option<DropCachesSpec>,
    /// Writes of `memory.reclaim` to a cgroup.
    pub memory_reclaim: Option<MemoryReclaimSpec>,
    pub lru_gen: Option<LruGenSpec>,
    /// Lookups and `stat` over the filesystem's files.
    pub stat: Option<StatSpec>,
    /// A Xen domU's block I/O job.
    pub blkio: Option<BlkioSpec>,
}

// Enums stored in the scenario by name (see `schema::Conv`).
schema::named_conv!(
    MachineType,
    ThpDefrag,
    HighOrderGfp,
    Lifetimes,
    AccessPattern,
    FileOp,
    TraceKind,
    ObjectSize,
    TraceFormat,
    Compression,
);
