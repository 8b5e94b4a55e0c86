//! What a workload thread does, as the scenario's `[workload.*]` tables describe it (their keys
//! and defaults are declared in `scenario/sections/workload.rs`).

use crate::engine::units::NS_PER_SEC;
pub use crate::trace::Compression;
use crate::trace::TraceFormat;

/// How a high-order allocation asks for memory (its gfp mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighOrderGfp {
    /// GFP_ATOMIC|__GFP_COMP|__GFP_NOWARN, unmovable (network receive buffers, SLUB high-order
    /// slabs from interrupt context): wakes kswapd at the order, never reclaims, fails instead.
    Atomic,
    /// GFP_KERNEL|__GFP_COMP, unmovable: direct reclaim and direct compaction, retried.
    Kernel,
    /// A THP fault in a madvised region, movable, its mask by `[host] thp_defrag`: with
    /// "madvise" (the default) GFP_TRANSHUGE, direct compaction and reclaim, no retry beyond
    /// the first failure for costly orders (falls back); with "never" no reclaim at all.
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

/// An fsmark-like creator (`[workload.fsmark]`): threads creating empty (or small) files as
/// fast as they can, each thread in its own directories (XFS places each directory in the
/// next allocation group). The inode allocation runs inside the create transaction, so a
/// share of it is GFP_NOFS: that is what defers superblock shrinker work (seed 002).
#[derive(Debug, Clone, PartialEq)]
pub struct FsmarkSpec {
    pub threads: u32,
    /// Files each thread creates.
    pub files: u64,
    pub files_per_dir: u64,
    /// Bytes of data written into each file (0: empty files, as the seed's inode test).
    pub file_size_bytes: u64,
    /// Share of creates whose dentry and inode are allocated with GFP_NOFS.
    pub nofs_fraction: f64,
    /// Application time between two creates.
    pub think_ns: u64,
    /// Anonymous memory the process holds (its own buffers), so it has a size the OOM killer
    /// can see.
    pub rss_bytes: u64,
}

/// A simoops-like load (`[workload.simoops]`): worker threads that, per unit of work,
/// allocate and touch fresh memory, open and read files of a data set, and think; the time of
/// each allocation and the work rate are what simoops reports.
#[derive(Debug, Clone, PartialEq)]
pub struct SimoopsSpec {
    pub threads: u32,
    /// Files in the data set (on disk at the start, not cached).
    pub files: u64,
    pub file_size_bytes: u64,
    /// Files opened and read per unit of work.
    pub reads_per_unit: u64,
    /// Memory allocated (faulted in) per unit of work.
    pub alloc_bytes: u64,
    /// Units whose memory a thread keeps before freeing the oldest.
    pub keep_units: u64,
    /// CPU time of a unit besides its allocations and reads.
    pub think_ns: u64,
}

/// A metadata walker (`[workload.stat]`): passes of path lookups and `stat` over the files of
/// the filesystem's namespace, in creation order.
#[derive(Debug, Clone, PartialEq)]
pub struct StatSpec {
    /// Walking threads; thread k takes files k, k + threads, ...
    pub threads: u32,
    /// Passes over the files present when each pass starts.
    pub passes: u64,
    /// CPU of a lookup and stat whose dentry is cached.
    pub hit_ns: u64,
    /// Application time between two lookups.
    pub think_ns: u64,
}

/// `echo N > /proc/sys/vm/drop_caches` at a time (`[workload.drop_caches]`).
#[derive(Debug, Clone, PartialEq)]
pub struct DropCachesSpec {
    /// 1: page cache, 2: slab (dentries and inodes), 3: both.
    pub value: u64,
    /// Delay after the workload's start.
    pub after_ns: u64,
}

/// Writes of `memory.reclaim` (`[workload.memory_reclaim]`): proactive reclaim of a byte
/// count from a cgroup's subtree, once or at an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryReclaimSpec {
    /// Bytes each write asks for.
    pub amount_bytes: u64,
    /// Delay of the first write after the workload's start.
    pub after_ns: u64,
    /// Time between two writes; `None`: one write.
    pub every_ns: Option<u64>,
    /// The cgroup written to (a `[[cgroup]]` name); `None`: the workload's own.
    pub target: Option<String>,
}

/// Writes of `/sys/kernel/debug/lru_gen` (`[workload.lru_gen]`): commands of the
/// multi-generational LRU (`+` aging, `-` eviction), once or at an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct LruGenSpec {
    /// The text each write writes: commands separated by newlines, `,` or `;`; a command's
    /// `seq` may be `max_seq` or `max_seq-N`, read from the lru_gen file just before the write.
    pub commands: String,
    /// Delay of the first write after the workload's start.
    pub after_ns: u64,
    /// Time between two writes; `None`: one write.
    pub every_ns: Option<u64>,
}

/// `[guest.workload.blkio]`: block I/O of a Xen domU on one of its VBDs.
#[derive(Debug, Clone, PartialEq)]
pub struct BlkioSpec {
    /// The guest's VBD.
    pub vbd: String,
    /// "sequential", "random" or "fresh_grefs".
    pub pattern: String,
    pub write: bool,
    pub bs_bytes: u64,
    /// I/Os to do; `None`: until the workload's duration.
    pub count: Option<u64>,
    pub iodepth: u32,
    /// The program's guest CPU per I/O.
    pub think_ns: u64,
    /// Runs of `count` I/Os, `pause_ns` apart.
    pub repeat: u64,
    pub pause_ns: u64,
}
