//! Scenario: the validated description of one simulation run.
//!
//! This file holds the *types* and their defaults, the one place where every default is written
//! down. Parsing (TOML with spans, units, precise errors) lives in `parse.rs`; turning a scenario
//! back into TOML for `--show-defaults` lives in `show.rs`; unit parsing in `units.rs`.
//!
//! All sizes are bytes, all times are nanoseconds, after parsing.

pub mod parse;
pub mod show;
pub mod units;

pub use crate::trace::{Compression, TraceFormat};
pub use parse::{parse_file, parse_str, ScenarioError};

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;
pub const GIB: u64 = 1024 * MIB;
pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_SEC: u64 = 1_000_000_000;

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
    pub workloads: Vec<Workload>,
}

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

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            duration_ns: None,
            sample_interval_ns: 100 * NS_PER_MS,
            max_duration_ns: 3600 * NS_PER_SEC,
        }
    }
}

/// QEMU machine type: decides how much RAM sits below 4 GiB (DMA32) versus above (Normal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineType {
    /// q35: guests with more than 2.75 GiB get 2 GiB below 4 GiB.
    Q35,
    /// i440fx (`pc`): guests with 3.5 GiB or more get 3 GiB below 4 GiB.
    I440fx,
}

impl MachineType {
    pub const NAMES: &'static [&'static str] = &["q35", "i440fx"];
    pub fn name(self) -> &'static str {
        match self {
            MachineType::Q35 => "q35",
            MachineType::I440fx => "i440fx",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "q35" => Some(MachineType::Q35),
            "i440fx" => Some(MachineType::I440fx),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct HostConfig {
    /// RAM given to the machine (ignored when `zoneinfo` is set).
    pub ram_bytes: u64,
    pub cpus: u32,
    /// THP enabled (`always` or `madvise`): raises the default min_free_kbytes (core-mm §2.1).
    pub thp: bool,
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
}

/// Stride of `fragmented_zone` when the scenario does not give one: no order-3 block (eight
/// pages, a network jumbo-frame buffer or a SLUB high-order slab) can form.
pub const DEFAULT_FRAGMENT_STRIDE: u32 = 8;

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            ram_bytes: 4 * GIB,
            cpus: 2,
            thp: true,
            machine: MachineType::Q35,
            lowmem_bytes: None,
            zoneinfo: None,
            fragmented_zone: None,
            fragment_stride: DEFAULT_FRAGMENT_STRIDE,
        }
    }
}

/// `vm.*` sysctls. `None` means "the kernel's computed default".
#[derive(Debug, Clone, PartialEq)]
pub struct Sysctl {
    pub min_free_kbytes: Option<u64>,
    /// 1..=3000
    pub watermark_scale_factor: u64,
    /// One ratio per zone: DMA, DMA32, Normal, Movable (Device is always 0).
    pub lowmem_reserve_ratio: [u64; 4],
    /// 0..=200
    pub swappiness: u64,
}

impl Default for Sysctl {
    fn default() -> Self {
        Sysctl {
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            lowmem_reserve_ratio: [256, 256, 32, 0],
            swappiness: 60,
        }
    }
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
}

impl Default for SwapDevice {
    fn default() -> Self {
        SwapDevice {
            size_bytes: 0,
            read_latency_ns: 80 * NS_PER_US,
            write_latency_ns: 40 * NS_PER_US,
            bandwidth_bytes_per_sec: GIB,
            latency_jitter: 0.1,
        }
    }
}

/// The block device behind files (page cache misses and writeback).
#[derive(Debug, Clone, PartialEq)]
pub struct DiskDevice {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub bandwidth_bytes_per_sec: u64,
    /// Per-request latency spread, as for the swap device.
    pub latency_jitter: f64,
    /// Pages read per sequential read-ahead request.
    pub readahead_pages: u64,
}

impl Default for DiskDevice {
    fn default() -> Self {
        DiskDevice {
            read_latency_ns: 100 * NS_PER_US,
            write_latency_ns: 50 * NS_PER_US,
            bandwidth_bytes_per_sec: GIB,
            latency_jitter: 0.1,
            readahead_pages: 32,
        }
    }
}

/// Dirty page-cache limits and the flusher (core-mm §10.2 item 5: an abstraction).
#[derive(Debug, Clone, PartialEq)]
pub struct WritebackConfig {
    /// `vm.dirty_background_ratio`: the flusher starts above this % of available memory.
    pub dirty_background_ratio: u64,
    /// `vm.dirty_ratio`: writers are throttled above this % of available memory.
    pub dirty_ratio: u64,
}

impl Default for WritebackConfig {
    fn default() -> Self {
        WritebackConfig {
            dirty_background_ratio: 10,
            dirty_ratio: 20,
        }
    }
}

/// The `[cost]` table is the machine's CPU cost model.
pub use crate::machine::cost::CostModel;

#[derive(Debug, Clone, PartialEq)]
pub struct OomConfig {
    /// May the OOM killer kill a workload? If false, a scenario whose workloads cannot fit in
    /// RAM + swap is rejected up front.
    pub allowed: bool,
    /// Delay between the kill and the oom_reaper freeing the victim's memory.
    pub reaper_delay_ns: u64,
}

impl Default for OomConfig {
    fn default() -> Self {
        OomConfig {
            allowed: true,
            reaper_delay_ns: NS_PER_MS,
        }
    }
}

/// `[policy]`: the variant chosen for every switch of the policy registry (`crate::policy`),
/// defaults and presets resolved.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolicyConfig {
    pub choices: crate::policy::Choices,
}

/// One process. It has an anonymous-memory thread, a file-I/O thread and a trace-replay thread,
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
}

/// How a high-order allocation asks for memory (its gfp mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighOrderGfp {
    /// GFP_ATOMIC|__GFP_COMP|__GFP_NOWARN, unmovable (network receive buffers, SLUB high-order
    /// slabs from interrupt context): wakes kswapd at the order, never reclaims, fails instead.
    Atomic,
    /// GFP_KERNEL|__GFP_COMP, unmovable: direct reclaim and direct compaction, retried.
    Kernel,
    /// GFP_TRANSHUGE (a madvised THP fault), movable: direct compaction and reclaim, no retry
    /// beyond the first failure for costly orders (falls back).
    Transhuge,
}

impl HighOrderGfp {
    pub const NAMES: &'static [&'static str] = &["atomic", "kernel", "transhuge"];
    pub fn name(self) -> &'static str {
        match self {
            HighOrderGfp::Atomic => "atomic",
            HighOrderGfp::Kernel => "kernel",
            HighOrderGfp::Transhuge => "transhuge",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        [
            HighOrderGfp::Atomic,
            HighOrderGfp::Kernel,
            HighOrderGfp::Transhuge,
        ]
        .into_iter()
        .find(|g| g.name() == s)
    }
}

/// How long each block of a high-order stream lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetimes {
    /// Every block lives exactly `lifetime`: blocks are freed in allocation order, so
    /// neighbours allocated together are freed together and merge again (network buffers).
    Fixed,
    /// Exponentially distributed with mean `lifetime`: blocks are freed in random order, so a
    /// long-lived survivor pins its pageblock while its neighbours come and go. This is how
    /// slab pages fragment memory (one live object keeps its slab page).
    Exponential,
}

impl Lifetimes {
    pub const NAMES: &'static [&'static str] = &["fixed", "exponential"];
    pub fn name(self) -> &'static str {
        match self {
            Lifetimes::Fixed => "fixed",
            Lifetimes::Exponential => "exponential",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        [Lifetimes::Fixed, Lifetimes::Exponential]
            .into_iter()
            .find(|l| l.name() == s)
    }
}

/// Allocations of 2^order pages at a steady rate, each freed after `lifetime`: a network
/// buffer pool, a slab cache with high-order slabs, huge-page faults.
#[derive(Debug, Clone, PartialEq)]
pub struct HighOrderSpec {
    /// 0..=10 (0 with gfp "kernel": long-lived unmovable slab pages, a fragmentation source).
    pub order: u32,
    /// Allocations per simulated second.
    pub rate_per_sec: u64,
    /// Each block is freed this long after it was allocated.
    pub lifetime_ns: u64,
    /// Whether `lifetime` is exact or the mean of an exponential draw.
    pub lifetimes: Lifetimes,
    pub gfp: HighOrderGfp,
    /// Stop after this many allocation attempts (`None`: until the workload's duration).
    pub count: Option<u64>,
}

impl Default for HighOrderSpec {
    fn default() -> Self {
        HighOrderSpec {
            order: 3,
            rate_per_sec: 1000,
            lifetime_ns: 10 * NS_PER_MS,
            lifetimes: Lifetimes::Fixed,
            gfp: HighOrderGfp::Atomic,
            count: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AccessPattern {
    Sequential,
    Random,
    /// Zipf over the pages with exponent `alpha`; page 0 hottest.
    Zipf {
        alpha: f64,
    },
}

impl AccessPattern {
    pub const NAMES: &'static [&'static str] = &["sequential", "random", "zipf"];
}

#[derive(Debug, Clone, PartialEq)]
pub struct AnonSpec {
    pub size_bytes: u64,
    pub pattern: AccessPattern,
    /// How many times the whole region is touched (each pass = `size / 4 KiB` accesses).
    pub passes: u64,
    /// Fraction of accesses that write (dirty the page). Anonymous pages are dirty after first touch anyway.
    pub write_fraction: f64,
    /// Application CPU time between two accesses (the work the program does per page touched).
    pub think_ns: u64,
    /// Sleep after the passes, holding the memory, before exiting.
    pub hold_ns: u64,
}

impl Default for AnonSpec {
    fn default() -> Self {
        AnonSpec {
            size_bytes: 0,
            pattern: AccessPattern::Sequential,
            passes: 1,
            write_fraction: 1.0,
            think_ns: 0,
            hold_ns: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Read,
    Write,
}

impl FileOp {
    pub const NAMES: &'static [&'static str] = &["read", "write"];
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileSpec {
    pub size_bytes: u64,
    pub op: FileOp,
    /// Sequential passes over the file.
    pub passes: u64,
    pub hold_ns: u64,
}

impl Default for FileSpec {
    fn default() -> Self {
        FileSpec {
            size_bytes: 0,
            op: FileOp::Read,
            passes: 1,
            hold_ns: 0,
        }
    }
}

/// What an oracleGeneral trace's objects are (the format does not say; CSV records do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// Pages of an anonymous region of the process.
    Anon,
    /// Pages of files, through the page cache (one file per object).
    File,
}

impl TraceKind {
    pub const NAMES: &'static [&'static str] = &["anon", "file"];
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Anon => "anon",
            TraceKind::File => "file",
        }
    }
}

/// How an oracleGeneral object's size maps to pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectSize {
    /// The object spans `ceil(size / 4 KiB)` pages (its largest size in the trace) and each
    /// request touches `ceil(size / 4 KiB)` of them from its start, in order.
    Pages,
    /// Every object is one page, whatever its size (libCacheSim's `ignore_obj_size`, and what
    /// `reclaimlab lru` does).
    Ignore,
}

impl ObjectSize {
    pub const NAMES: &'static [&'static str] = &["pages", "ignore"];
    pub fn name(self) -> &'static str {
        match self {
            ObjectSize::Pages => "pages",
            ObjectSize::Ignore => "ignore",
        }
    }
}

/// When a trace's records are replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceTime {
    /// As fast as the simulated machine allows (the access costs and `think` only).
    Ignore,
    /// At their timestamps: record `r` of a pass arrives `(t_r - t_first) * unit_ns` after the
    /// pass starts; a thread running late replays without waiting until it has caught up.
    Trace { unit_ns: u64 },
}

impl TraceTime {
    pub const NAMES: &'static [&'static str] = &["ignore", "trace"];
}

/// `[workload.trace]`: replay a recorded page-access trace.
///
/// Objects map to pages densely: a first pass over the trace (at the start of the run) gives
/// every distinct object a contiguous range of pages, anonymous objects in one anonymous region
/// of the process and file objects one after another in a file region (each object a file of
/// its own, so read-ahead stops at its end), in order of first appearance. The replay then
/// streams the file again, once per pass; nothing but the id table (about 40 bytes per distinct
/// object) is held in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpec {
    /// The trace file, resolved against the scenario file's directory.
    pub path: String,
    pub format: TraceFormat,
    pub compression: Compression,
    /// oracleGeneral only.
    pub kind: TraceKind,
    /// oracleGeneral only.
    pub object_size: ObjectSize,
    /// oracleGeneral only: fraction of requests that write, drawn from the thread's own random
    /// stream (CSV records say whether they write).
    pub write_fraction: f64,
    /// Times the trace is replayed.
    pub passes: u64,
    pub time: TraceTime,
    /// Application CPU time between two page accesses.
    pub think_ns: u64,
    /// Sleep after the passes, holding the memory, before exiting.
    pub hold_ns: u64,
    /// Replay only the first N records of each pass (skipped size-0 records do not count).
    pub max_records: Option<u64>,
}

impl TraceSpec {
    /// Duration of one trace time unit when `time = "trace"` and `time_unit` is not given:
    /// oracleGeneral timestamps are seconds, CSV ones nanoseconds.
    pub fn default_time_unit_ns(format: TraceFormat) -> u64 {
        match format {
            TraceFormat::Oracle => NS_PER_SEC,
            TraceFormat::Csv => 1,
        }
    }
}

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec {
            path: String::new(),
            format: TraceFormat::Oracle,
            compression: Compression::None,
            kind: TraceKind::Anon,
            object_size: ObjectSize::Pages,
            write_fraction: 0.0,
            passes: 1,
            time: TraceTime::Ignore,
            think_ns: 0,
            hold_ns: 0,
            max_records: None,
        }
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            name: "scenario".to_string(),
            sim: SimConfig::default(),
            host: HostConfig::default(),
            sysctl: Sysctl::default(),
            swap: SwapDevice::default(),
            disk: DiskDevice::default(),
            writeback: WritebackConfig::default(),
            cost: CostModel::default(),
            oom: OomConfig::default(),
            policy: PolicyConfig::default(),
            workloads: Vec::new(),
        }
    }
}
