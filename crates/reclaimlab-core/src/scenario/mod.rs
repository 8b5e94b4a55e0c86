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

#[derive(Debug, Clone, PartialEq)]
pub struct HostConfig {
    /// RAM given to the machine (ignored when `zoneinfo` is set).
    pub ram_bytes: u64,
    pub cpus: u32,
    /// Actors pinned to a busy CPU wait for it (run-queue time); off: they never wait.
    pub cpu_contention: bool,
    /// THP enabled (`always` or `madvise`): raises the default min_free_kbytes (core-mm §2.1).
    pub thp: bool,
    /// `transparent_hugepage/defrag`: the gfp mask of THP faults (`machine/huge_memory.rs`).
    pub thp_defrag: ThpDefrag,
    pub machine: MachineType,
    /// Explicit RAM below 4 GiB, overriding the machine type's rule.
    pub lowmem_bytes: Option<u64>,
    /// A captured `/proc/zoneinfo`: zones, spanned/present/managed pages are taken from it.
    /// Stored as given in the scenario; resolved relative to the scenario file's directory.
    pub zoneinfo: Option<String>,
    /// An aged zone: one long-lived unmovable kernel page pinned at boot in every
    /// `fragment_stride`-page aligned block of this zone (index), so no free block of that size
    /// or larger can ever form there, by reclaim or by compaction.
    pub fragmented_zone: Option<usize>,
    /// Pages per pinned page in `fragmented_zone`: a power of two, 2..=1024.
    pub fragment_stride: u32,
    /// Memory the running kernel already holds when the scenario starts (slab, page tables,
    /// an initramfs), held as unmovable kernel pages for the whole run.
    pub kernel_used_bytes: u64,
    /// Model 6.1's per-CPU page lists (order-0 pages cached per CPU, invisible to the
    /// watermark checks); off: every free goes straight to the buddy.
    pub pcp_lists: bool,
    /// Anonymous memory has page-table pages (one unmovable page per 2 MiB touched).
    pub page_tables: bool,
    /// NR_FREE_PAGES drifts per CPU as in 6.1 (`machine/vmstat_drift.rs`).
    pub vmstat_drift: bool,
}

impl HostConfig {
    /// The RAM layout the zones are sized from (when no zoneinfo is given).
    pub fn ram_layout(&self) -> RamLayout {
        RamLayout {
            ram_bytes: self.ram_bytes,
            machine: self.machine,
            lowmem_bytes: self.lowmem_bytes,
        }
    }
}

/// Stride of `fragmented_zone` when the scenario does not give one: no order-3 block (eight
/// pages, a network jumbo-frame buffer or a SLUB high-order slab) can form.
pub const DEFAULT_FRAGMENT_STRIDE: u32 = 8;

/// `vm.*` sysctls. `None` means "the kernel's computed default".
#[derive(Debug, Clone, PartialEq)]
pub struct Sysctl {
    pub min_free_kbytes: Option<u64>,
    /// 1..=3000
    pub watermark_scale_factor: u64,
    /// 0 disables boosting; in 1/10000 of the high watermark.
    pub watermark_boost_factor: u64,
    /// `vm.compaction_proactiveness`: 0..=100, 0 turns proactive compaction off.
    pub compaction_proactiveness: u64,
    /// One ratio per zone: DMA, DMA32, Normal, Movable (Device is always 0).
    pub lowmem_reserve_ratio: [u64; 4],
    /// 0..=200
    pub swappiness: u64,
    /// `vm.page-cluster`: swap readahead reads up to 2^page_cluster pages (capped at 2^5).
    pub page_cluster: u64,
    /// `vm.vfs_cache_pressure`: percent weight of the dentry and inode caches in the
    /// superblock shrinker's count.
    pub vfs_cache_pressure: u64,
}

/// The swap device: size 0 means no swap. Latency + bandwidth model, FIFO queue.
#[derive(Debug, Clone, PartialEq)]
pub struct SwapDevice {
    pub size_bytes: u64,
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    /// Bytes per second, shared by reads and writes.
    pub bandwidth_bytes_per_sec: u64,
    /// Each request's latency is `latency * (1 + jitter * u)`, u uniform in [-1, 1), drawn
    /// from the device's own random stream.
    pub latency_jitter: f64,
    /// Request slots: a writer waits when they are all in use.
    pub nr_requests: u64,
    /// Largest request in bytes (`max_sectors_kb`): reclaim's block plug holds swap-outs until
    /// they fill one, or its pass ends. 0: no plug, each swap-out is issued at once.
    pub max_request_bytes: u64,
    /// A rotational device: 6.1 reads ahead by slot position instead of by virtual address.
    pub rotational: bool,
}

/// The block device behind files (page cache misses and writeback).
#[derive(Debug, Clone, PartialEq)]
pub struct DiskDevice {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub bandwidth_bytes_per_sec: u64,
    /// Per-request latency spread, as for the swap device.
    pub latency_jitter: f64,
    /// Request slots, as for the swap device.
    pub nr_requests: u64,
    /// Pages read per sequential read-ahead request.
    pub readahead_pages: u64,
}

/// Dirty page-cache limits and the flusher (core-mm §10.2 item 5: an abstraction).
#[derive(Debug, Clone, PartialEq)]
pub struct WritebackConfig {
    /// `vm.dirty_background_ratio`: the flusher starts above this % of available memory.
    pub dirty_background_ratio: u64,
    /// `vm.dirty_ratio`: writers are throttled above this % of available memory.
    pub dirty_ratio: u64,
}

/// The `[fs]` table describes the machine's filesystem (its keys are declared in
/// `sections/fs.rs`).
pub use crate::machine::fs::FsConfig;

/// The `[cost]` table is the machine's CPU cost model (its defaults are declared with its keys).
pub use crate::machine::cost::CostModel;

#[derive(Debug, Clone, PartialEq)]
pub struct OomConfig {
    /// May the OOM killer kill a workload? If false, a scenario whose workloads cannot fit in
    /// RAM + swap is rejected up front.
    pub allowed: bool,
    /// Delay between the kill and the oom_reaper freeing the victim's memory.
    pub reaper_delay_ns: u64,
    /// End the run at the host's first OOM kill.
    pub stop_on_kill: bool,
}

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
    pub anon: Option<AnonSpec>,
    pub file: Option<FileSpec>,
    pub trace: Option<TraceSpec>,
    pub highorder: Option<HighOrderSpec>,
    pub fsmark: Option<FsmarkSpec>,
    pub simoops: Option<SimoopsSpec>,
    pub drop_caches: Option<DropCachesSpec>,
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
