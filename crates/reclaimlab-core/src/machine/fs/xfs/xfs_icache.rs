//! XFS inode reclaim (`xfs_icache.c`): inodes the VFS evicted are tagged reclaimable in
//! their AG and freed by a walk, from the shrinker (`xfs_reclaim_inodes_nr`, the superblock
//! shrinker's `free_cached_objects`) or from the background worker. How the walk treats
//! inodes that are not clean is the `[policy] xfs_reclaim` switch (mechanisms §A.6: X0-X3),
//! the [`XfsReclaimWalk`] trait; the walk itself is here.
//!
//! Time: the walk runs on the reclaimer's clock. A log force or a synchronous cluster write
//! puts the reclaimer to sleep until it is done, and it holds the AG's reclaim lock across
//! that sleep: a concurrent walker's trylock fails, and its blocking retry waits for the
//! lock. That serialisation, and the I/O behind it, is where the latency tail comes from.

use super::super::inode::{VfsState, XfsState};
use super::super::{Filesystem, NONE};
use crate::machine::page_counter::CounterId;
use crate::machine::Machine;

/// `XFS_LOOKUP_BATCH`: inodes per gang lookup; the walk's budget drops by this much per batch
/// whatever it freed.
pub const XFS_LOOKUP_BATCH: usize = 32;

/// How one reclaim walk proceeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkMode {
    /// Take the per-AG reclaim lock (trylock, then a blocking pass if some AG was skipped and
    /// `sync_wait`); false: 6.1's lockless `xfs_icwalk`.
    pub ag_lock: bool,
    /// `SYNC_WAIT`: wait for pinned inodes (log force) and write dirty ones back
    /// synchronously; false: skip them.
    pub sync_wait: bool,
}

/// `[policy] xfs_reclaim`: what a shrinker-driven reclaim walk may wait for.
pub trait XfsReclaimWalk: std::fmt::Debug {
    fn mode(&self, kswapd: bool) -> WalkMode;
}

/// Time a walk took: CPU, and the part of it spent asleep.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkCost {
    pub cpu_ns: u64,
    pub sleep_ns: u64,
    pub freed: u64,
}

impl Filesystem {
    /// `xfs_inode_set_reclaim_tag`: the VFS evicted the inode; XFS reclaim owns it now.
    pub fn xfs_inode_mark_reclaimable(&mut self, ino: u32) {
        let i = self.icache.i[ino as usize];
        debug_assert_eq!(i.vfs, VfsState::Reclaimable);
        self.xfs.ags[i.ag as usize].reclaimable.insert(i.agino, ino);
        self.xfs.nr_reclaimable += 1;
    }

    /// `xfs_iget` finding the inode tagged reclaimable: it is recycled for the VFS with one
    /// reference (the caller's new dentry).
    pub fn xfs_iget_recycle(&mut self, ino: u32) {
        let i = &mut self.icache.i[ino as usize];
        debug_assert_eq!(i.vfs, VfsState::Reclaimable);
        i.vfs = VfsState::Live;
        i.i_count = 1;
        i.referenced = false;
        let (ag, agino) = (i.ag, i.agino);
        self.xfs.ags[ag as usize].reclaimable.remove(&agino);
        self.xfs.nr_reclaimable -= 1;
    }

    /// A new in-core inode in `ag`, in the next slot of the AG's inode chunks, its object
    /// charged to `memcg`.
    pub fn xfs_ialloc(&mut self, ag: u32, file: u32, state: XfsState, memcg: CounterId) -> u32 {
        let a = &mut self.xfs.ags[ag as usize];
        let agino = a.next_agino;
        a.next_agino += 1;
        let ino = self.icache.alloc(ag, agino, file, state, memcg);
        let c = (agino / self.block_inodes()) as usize;
        let a = &mut self.xfs.ags[ag as usize];
        if a.clusters.len() <= c {
            a.clusters.resize_with(c + 1, Vec::new);
        }
        a.clusters[c].push(ino);
        ino
    }
}

impl Machine {
    /// `xfs_reclaim_inodes_nr(nr)`: kick the background worker and the AIL, then walk up to
    /// `nr` reclaimable inodes as the policy says for this caller. `clock` is the caller's
    /// time when the walk starts.
    pub fn xfs_reclaim_inodes_nr(
        &mut self,
        fs: &mut Filesystem,
        nr: u64,
        kswapd: bool,
        clock: u64,
    ) -> WalkCost {
        fs.xfs.reclaim_work_queued = true;
        fs.xfs_ail_push_all();
        let mode = self.policy.xfs_reclaim.mode(kswapd);
        self.xfs_reclaim_walk(fs, nr as i64, mode, clock)
    }

    /// The background worker's walk (`xfs_reclaim_worker`): every AG, non-blocking, no
    /// budget.
    pub fn xfs_reclaim_worker(&mut self, fs: &mut Filesystem, clock: u64) -> WalkCost {
        fs.stats.reclaim_worker_runs += 1;
        fs.xfs.reclaim_work_queued = false;
        let mode = WalkMode {
            ag_lock: true,
            sync_wait: false,
        };
        self.xfs_reclaim_walk(fs, i64::MAX, mode, clock)
    }

    /// `xfs_reclaim_inodes_ag` (X0-X2) / `xfs_icwalk` (X3).
    fn xfs_reclaim_walk(
        &mut self,
        fs: &mut Filesystem,
        mut nr: i64,
        mode: WalkMode,
        clock: u64,
    ) -> WalkCost {
        let mut cost = WalkCost::default();
        let mut skipped = false;
        for ag in 0..fs.xfs.ags.len() {
            if nr <= 0 {
                break;
            }
            skipped |= self.reclaim_ag(fs, ag, &mut nr, mode, false, clock, &mut cost);
        }
        // Some AG was busy and the caller may block: go round again, waiting for each lock.
        if skipped && mode.sync_wait && nr > 0 {
            for ag in 0..fs.xfs.ags.len() {
                if nr <= 0 {
                    break;
                }
                self.reclaim_ag(fs, ag, &mut nr, mode, true, clock, &mut cost);
            }
        }
        cost
    }

    /// One AG's part of the walk, from its cursor, in batches of [`XFS_LOOKUP_BATCH`].
    /// Returns true if the AG's lock was busy and it was skipped.
    #[allow(clippy::too_many_arguments)]
    fn reclaim_ag(
        &mut self,
        fs: &mut Filesystem,
        ag: usize,
        nr: &mut i64,
        mode: WalkMode,
        blocking: bool,
        clock: u64,
        cost: &mut WalkCost,
    ) -> bool {
        if fs.xfs.ags[ag].reclaimable.is_empty() {
            return false;
        }
        let now = |c: &WalkCost| clock + c.cpu_ns + c.sleep_ns;
        if mode.ag_lock {
            let busy = fs.xfs.ags[ag].lock_until;
            if busy > now(cost) {
                if !blocking {
                    fs.stats.ag_lock_skips += 1;
                    return true;
                }
                fs.stats.ag_lock_waits += 1;
                let wait = busy - now(cost);
                cost.sleep_ns += wait;
                fs.stats.reclaim_wait_ns += wait;
            }
        }
        let cluster_inodes = fs.cfg.cluster_inodes as u32;
        let mut first = fs.xfs.ags[ag].cursor;
        let mut done = false;
        let mut batch: Vec<(u32, u32)> = Vec::with_capacity(XFS_LOOKUP_BATCH);
        while *nr > 0 {
            batch.clear();
            batch.extend(
                fs.xfs.ags[ag]
                    .reclaimable
                    .range(first..)
                    .take(XFS_LOOKUP_BATCH)
                    .map(|(&a, &i)| (a, i)),
            );
            let Some(&(last, _)) = batch.last() else {
                done = true;
                break;
            };
            first = last + 1;
            for &(_, ino) in &batch {
                cost.cpu_ns += fs.cfg.inode_scan_ns;
                let mut state = fs.icache.i[ino as usize].xfs;
                // Grab under SYNC_TRYLOCK: an inode whose cluster is being written is skipped.
                if state == XfsState::Flushing {
                    continue;
                }
                if state == XfsState::Pinned {
                    if !mode.sync_wait {
                        continue;
                    }
                    // xfs_iunpin_wait: force the log, sleep until it is on disk.
                    let t = fs.cfg.logforce_latency_ns;
                    cost.sleep_ns += t;
                    fs.stats.reclaim_wait_ns += t;
                    fs.stats.reclaim_log_forces += 1;
                    let lvs = fs.xlog_cil_push();
                    self.xfs_cil_committed(fs, lvs);
                    state = fs.icache.i[ino as usize].xfs;
                }
                if state == XfsState::Dirty {
                    if !mode.sync_wait {
                        continue;
                    }
                    // xfs_iflush + synchronous xfs_bwrite of the cluster, then wait for it.
                    let at = now(cost);
                    let i = fs.icache.i[ino as usize];
                    let c = i.agino / cluster_inodes;
                    let done_at = fs
                        .xfs_iflush_cluster(at, i.ag, c)
                        .expect("a dirty inode's cluster has something to write");
                    let wait = done_at - at;
                    cost.sleep_ns += wait;
                    fs.stats.reclaim_wait_ns += wait;
                    fs.stats.reclaim_sync_writes += 1;
                    fs.xfs_buf_ioend(done_at);
                    state = fs.icache.i[ino as usize].xfs;
                }
                if state != XfsState::Clean {
                    continue;
                }
                self.xfs_reclaim_inode(fs, ino);
                cost.cpu_ns += fs.cfg.free_object_ns;
                cost.freed += 1;
            }
            *nr -= XFS_LOOKUP_BATCH as i64;
        }
        let end = now(cost);
        let a = &mut fs.xfs.ags[ag];
        a.cursor = if done { 0 } else { first };
        if mode.ag_lock {
            // Held from the walk's start in this AG to its end, sleeps included.
            a.lock_until = a.lock_until.max(end);
        }
        false
    }

    /// `xfs_reclaim_inode`: untag and free a clean reclaimable inode (its slab object goes
    /// back; a page may empty).
    fn xfs_reclaim_inode(&mut self, fs: &mut Filesystem, ino: u32) {
        let i = fs.icache.i[ino as usize];
        let a = &mut fs.xfs.ags[i.ag as usize];
        a.reclaimable.remove(&i.agino);
        fs.xfs.nr_reclaimable -= 1;
        fs.stats.xs_ig_reclaims += 1;
        self.fs_inode_free(fs, ino);
    }

    /// Free an evicted inode (XFS: reclaimed; ext4: `destroy_inode` at eviction): its slab
    /// object and item go back, it leaves its cluster, whose buffer may go with it.
    pub fn fs_inode_free(&mut self, fs: &mut Filesystem, ino: u32) {
        let i = fs.icache.i[ino as usize];
        let c = i.agino / fs.block_inodes();
        let members = &mut fs.xfs.ags[i.ag as usize].clusters[c as usize];
        if let Some(k) = members.iter().position(|&x| x == ino) {
            members.swap_remove(k);
        }
        if i.file != NONE {
            fs.files[i.file as usize].ino = NONE;
        }
        self.fs_item_put(fs, ino);
        fs.icache.release(ino);
        self.kmem_cache_free_memcg(fs.inode_cache, i.memcg, 1);
        self.fs_block_put(fs, i.ag, c);
    }
}
