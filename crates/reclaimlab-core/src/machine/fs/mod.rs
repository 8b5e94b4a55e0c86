//! One mounted filesystem (an XFS volume) as reclaim sees it (mechanisms §A.5, §A.6): the
//! dentry and inode caches with their LRU lists (`dcache.rs`, `inode.rs`), the superblock
//! shrinker that prunes them (`super.rs`), and XFS's own inode cache, log and AIL (`xfs/`).
//! The objects live in slab caches of the machine (`machine::slab`), so the cache competes
//! with page cache and anonymous memory for pages.
//!
//! Inodes and dentries are small records in arenas indexed by number; the LRU lists are
//! queues of those numbers with the kernel's lazy removal (an object that gains a reference
//! stays queued and is dropped when reclaim meets it).

pub mod dcache;
pub mod inode;
pub mod namei;
#[path = "super.rs"]
pub mod superblock;
pub mod xfs;

use super::slab::CacheId;
use dcache::Dcache;
use inode::Icache;
use xfs::XfsMount;

/// What a filesystem is built from (`[fs]`; the keys and defaults are declared in
/// `scenario/sections/fs.rs`). Every figure is [recon] unless marked: mechanisms §A.6 gives
/// the suggested values.
#[derive(Debug, Clone, PartialEq)]
pub struct FsConfig {
    /// Allocation groups (each with its own reclaim lock and cursor).
    pub ags: u32,
    /// Bytes per `xfs_inode` object (≈1 KiB).
    pub inode_size: u64,
    /// Bytes per dentry (≈0.2 KiB).
    pub dentry_size: u64,
    /// Slab fragmentation of both caches, percent (see `machine::slab`).
    pub slab_fragmentation: u64,
    /// Log capacity in inodes: creates wait for log space when it is full.
    pub log_inodes: u64,
    /// CIL checkpoint interval (`T_cil`): pinned items become dirty in the AIL.
    pub cil_interval_ns: u64,
    /// Inodes per cluster buffer (one write cleans the cluster).
    pub cluster_inodes: u64,
    /// Latency of one inode cluster write (`t_io`).
    pub io_latency_ns: u64,
    /// Cluster writes in flight at once.
    pub io_queue_depth: u64,
    /// A log force (`xfs_iunpin_wait`) costs this much waiting (`t_logforce`).
    pub logforce_latency_ns: u64,
    /// `fs.xfs.xfssyncd_centisecs` [6.1]: the background reclaim worker runs every
    /// `centisecs / 6 * 10` ms.
    pub xfssyncd_centisecs: u64,
    /// xfsaild's idle poll period and pause between pushes.
    pub aild_period_ns: u64,
    /// Superblock shrinker `batch` [6.1: 1024] and `seeks` [6.1: 2].
    pub shrinker_batch: u64,
    pub shrinker_seeks: u64,
    /// CPU per dentry / inode looked at by the shrinker, and per object freed.
    pub dentry_scan_ns: u64,
    pub inode_scan_ns: u64,
    pub free_object_ns: u64,
    /// CPU of one create (transaction, directory update) besides its allocations.
    pub create_ns: u64,
}

/// Counters of the filesystem model (summary.json `fs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FsStats {
    pub creates: u64,
    pub lookups_cached: u64,
    pub lookups_recycled: u64,
    pub lookups_cold: u64,
    pub dentries_pruned: u64,
    pub inodes_evicted: u64,
    /// `xs_ig_reclaims`: XFS inodes freed by reclaim.
    pub xs_ig_reclaims: u64,
    /// Log forces and synchronous cluster writes made by reclaim walks.
    pub reclaim_log_forces: u64,
    pub reclaim_sync_writes: u64,
    /// Time reclaim walks slept on log forces, cluster writes and AG locks.
    pub reclaim_wait_ns: u64,
    /// AG reclaim locks found busy (trylock) / waited for (blocking pass).
    pub ag_lock_skips: u64,
    pub ag_lock_waits: u64,
    /// Cluster writes issued by xfsaild.
    pub aild_cluster_writes: u64,
    pub cil_checkpoints: u64,
    /// Creates that had to wait for log space, and how long in all.
    pub log_space_waits: u64,
    pub log_space_wait_ns: u64,
    pub reclaim_worker_runs: u64,
}

/// The mounted filesystem.
#[derive(Debug)]
pub struct Filesystem {
    pub cfg: FsConfig,
    pub dcache: Dcache,
    pub icache: Icache,
    pub xfs: XfsMount,
    pub dentry_cache: CacheId,
    pub inode_cache: CacheId,
    /// `vm.vfs_cache_pressure` (percent).
    pub vfs_cache_pressure: u64,
    pub stats: FsStats,
    /// The namespace: every file ever created or known on disk, by number.
    pub files: Vec<FileEnt>,
}

/// A file of the namespace and what of it is cached.
#[derive(Debug, Clone, Copy)]
pub struct FileEnt {
    /// Its in-core inode, or [`NONE`] when XFS reclaim freed it (it is on disk only).
    pub ino: u32,
    /// Its dentry, or [`NONE`] when pruned.
    pub dentry: u32,
    /// First page of its data in the page cache's address space, [`NONE`] without data.
    pub data: u32,
    pub npages: u32,
    pub ag: u32,
}

/// No inode / dentry.
pub const NONE: u32 = u32::MAX;

#[cfg(test)]
mod tests;
