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
pub mod parse;
mod schema;
mod sections;
pub mod show;
mod source;
mod tables;
#[cfg(test)]
mod tests;
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

/// Dirty page-cache limits and the flusher (core-mm §10.2 item 5: an abstraction).
#[derive(Debug, Clone, PartialEq)]
pub struct WritebackConfig {
    /// `vm.dirty_background_ratio`: the flusher starts above this % of available memory.
    pub dirty_background_ratio: u64,
    /// `vm.dirty_ratio`: writers are throttled above this % of available memory.
    pub dirty_ratio: u64,
}

/// The `[cost]` table is the machine's CPU cost model (its defaults are declared with its keys).
pub use crate::machine::cost::CostModel;

#[derive(Debug, Clone, PartialEq)]
pub struct OomConfig {
    /// May the OOM killer kill a workload? If false, a scenario whose workloads cannot fit in
    /// RAM + swap is rejected up front.
    pub allowed: bool,
    /// Delay between the kill and the oom_reaper freeing the victim's memory.
    pub reaper_delay_ns: u64,
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
    pub fn name(self) -> &'static str {
        match self {
            AccessPattern::Sequential => "sequential",
            AccessPattern::Random => "random",
            AccessPattern::Zipf { .. } => "zipf",
        }
    }
    /// `"zipf"` gives the default exponent, [`DEFAULT_ZIPF_ALPHA`].
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "sequential" => Some(AccessPattern::Sequential),
            "random" => Some(AccessPattern::Random),
            "zipf" => Some(AccessPattern::Zipf {
                alpha: DEFAULT_ZIPF_ALPHA,
            }),
            _ => None,
        }
    }
}

/// Zipf exponent when `pattern = "zipf"` is given without `zipf_alpha`. (A constant rather
/// than a section default because `AccessPattern::Zipf` carries its alpha.)
pub const DEFAULT_ZIPF_ALPHA: f64 = 1.0;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Read,
    Write,
}

impl FileOp {
    pub const NAMES: &'static [&'static str] = &["read", "write"];
    pub fn name(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Write => "write",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        [FileOp::Read, FileOp::Write]
            .into_iter()
            .find(|o| o.name() == s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileSpec {
    pub size_bytes: u64,
    pub op: FileOp,
    /// Sequential passes over the file.
    pub passes: u64,
    pub hold_ns: u64,
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
    pub fn from_name(s: &str) -> Option<Self> {
        [TraceKind::Anon, TraceKind::File]
            .into_iter()
            .find(|k| k.name() == s)
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
    pub fn from_name(s: &str) -> Option<Self> {
        [ObjectSize::Pages, ObjectSize::Ignore]
            .into_iter()
            .find(|o| o.name() == s)
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
    pub fn name(self) -> &'static str {
        match self {
            TraceTime::Ignore => "ignore",
            TraceTime::Trace { .. } => "trace",
        }
    }
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

// Enums stored in the scenario by name (see `schema::Conv`).
schema::named_conv!(
    MachineType,
    HighOrderGfp,
    Lifetimes,
    AccessPattern,
    FileOp,
    TraceKind,
    ObjectSize,
    TraceFormat,
    Compression,
);
