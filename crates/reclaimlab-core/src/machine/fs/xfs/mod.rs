//! XFS's side of the inode cache (mechanisms §A.6): per-AG reclaimable inodes with their
//! reclaim lock and cursor (`xfs_icache.rs`), the log's CIL and free space (`xfs_log_cil.rs`),
//! the AIL and its pusher xfsaild (`xfs_trans_ail.rs`), and inode cluster writes
//! (`xfs_buf.rs`). The times are parameters of `[fs]`; what follows them is the mechanism.

pub mod xfs_buf;
pub mod xfs_icache;
pub mod xfs_log_cil;
pub mod xfs_trans_ail;

use std::collections::{BTreeMap, VecDeque};

use xfs_buf::ClusterIo;

/// The log worker's period (`xfs_log_worker` is queued every `xfs_syncd_centisecs`).
pub fn log_work_period_ns(xfssyncd_centisecs: u64) -> u64 {
    xfssyncd_centisecs * 10_000_000
}

/// One allocation group's reclaim state (`struct xfs_perag`).
#[derive(Debug, Default)]
pub struct Ag {
    /// Inodes tagged `XFS_ICI_RECLAIM_TAG`, by AG inode number (the radix tree's order).
    pub reclaimable: BTreeMap<u32, u32>,
    /// `pag_ici_reclaim_cursor`: where the last reclaim walk of this AG stopped.
    pub cursor: u32,
    /// `pag_ici_reclaim_lock` is held until this time (a walk that slept holds it across
    /// its sleep; a trylock before then fails, a blocking lock waits).
    pub lock_until: u64,
    pub next_agino: u32,
    /// In-core inodes of each cluster (`agino / cluster_inodes`; ext4: inode-table block).
    pub clusters: Vec<Vec<u32>>,
    /// Each cluster's buffer (`machine::fs::meta`).
    pub bufs: Vec<super::meta::BlockBuf>,
}

/// The mount's XFS state (`struct xfs_mount` + `xfs_ail` + the log), one per filesystem.
#[derive(Debug, Default)]
pub struct XfsMount {
    pub ags: Vec<Ag>,
    /// Inodes tagged reclaimable over all AGs (`nr_cached_objects`).
    pub nr_reclaimable: u64,
    /// Pinned inodes logged since the last checkpoint (the CIL).
    pub cil: Vec<u32>,
    /// When the log worker next forces the log and pushes the AIL (`xfs_log_worker`).
    pub next_log_work_ns: u64,
    /// Dirty inodes in the AIL, oldest first (entries no longer dirty are skipped).
    pub ail: VecDeque<u32>,
    /// Log space in use, in inodes (pinned + dirty + flushing).
    pub log_used: u64,
    /// `xfs_ail_push_all` asked xfsaild to push everything in the AIL.
    pub push_all: bool,
    pub io: ClusterIo,
    /// The background reclaim worker is queued (`xfs_reclaim_work_queue`).
    pub reclaim_work_queued: bool,
}
