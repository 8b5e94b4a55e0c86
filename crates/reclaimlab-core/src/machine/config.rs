//! The machine's configuration, as the scenario's machine tables give it (`[host]`,
//! `[sysctl]`, `[swap]`, `[disk]`, `[writeback]`, `[oom]`; `[cost]` is `cost.rs`): declared
//! here, with the machine that reads them, and filled by the scenario's declarations
//! (`scenario/sections/machine.rs`, whose `section!` lines must name every field: the struct's
//! `Default` is generated from them). The scenario holds these structs and the machine keeps
//! them whole in its [`MachineConfig`](super::MachineConfig): a key is a field here, a line
//! there, and its use.

use super::blkdev::DeviceParams;
use super::huge_memory::ThpDefrag;
use super::layout::{MachineType, RamLayout};

#[derive(Debug, Clone, PartialEq)]
pub struct HostConfig {
    /// RAM given to the machine (ignored when `zoneinfo` is set).
    pub ram_bytes: u64,
    pub cpus: u32,
    /// Threads share their CPU as 6.1's fair scheduler shares it (run-queue time); off: they
    /// never wait.
    pub cpu_contention: bool,
    /// With contention, threads move to an idle CPU (at wake-up, and an idle CPU takes a
    /// waiting thread); off: pinned to their home CPU.
    pub cpu_migration: bool,
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
    /// `/sys/kernel/mm/lru_gen/enabled`: the multi-generational LRU's capability bits
    /// (`lru_gen::sysfs::LRU_GEN_*`; bits beyond the three are ignored, as the kernel does).
    /// Read only with `[policy] lru = "mglru"` (a kernel built with `CONFIG_LRU_GEN`).
    pub lru_gen_enabled: u64,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`: the thrashing protection; 0 is off.
    pub lru_gen_min_ttl_ms: u64,
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

impl SwapDevice {
    /// The block device's queue model.
    pub fn device(&self) -> DeviceParams {
        DeviceParams {
            read_latency_ns: self.read_latency_ns,
            write_latency_ns: self.write_latency_ns,
            bandwidth_bytes_per_sec: self.bandwidth_bytes_per_sec,
            latency_jitter: self.latency_jitter,
            nr_requests: self.nr_requests,
        }
    }
}

impl DiskDevice {
    /// The block device's queue model.
    pub fn device(&self) -> DeviceParams {
        DeviceParams {
            read_latency_ns: self.read_latency_ns,
            write_latency_ns: self.write_latency_ns,
            bandwidth_bytes_per_sec: self.bandwidth_bytes_per_sec,
            latency_jitter: self.latency_jitter,
            nr_requests: self.nr_requests,
        }
    }
}

/// `[[cgroup]]`: one memory cgroup (cgroup v2) below the root, its interface files' values as
/// the kernel's files take them (`max`, or bytes with an optional K, M, G... suffix; read by
/// `memcontrol::parse_memory_knob`). The root is implicit and has no limits.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupConfig {
    pub name: String,
    /// The parent cgroup's name; `None`: the root.
    pub parent: Option<String>,
    pub memory: CgroupMemory,
}

/// A cgroup's `memory.*` files (`memory.max = "100M"` in TOML is this table's `max`).
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupMemory {
    pub max: String,
    pub high: String,
    pub low: String,
    pub min: String,
    pub swap: CgroupSwap,
    pub oom: CgroupOom,
}

/// `memory.swap.*`.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupSwap {
    pub max: String,
}

/// `memory.oom.*`.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupOom {
    /// `memory.oom.group`: 1 kills the whole cgroup when the OOM killer picks one of its tasks.
    pub group: u64,
}
