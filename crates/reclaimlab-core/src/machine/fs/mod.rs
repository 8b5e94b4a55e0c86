//! One mounted filesystem (an XFS or ext4 volume) as reclaim sees it (mechanisms §A.5, §A.6):
//! the dentry and inode caches with their LRU lists (`dcache.rs`, `inode.rs`), the superblock
//! shrinker that prunes them (`super.rs`), XFS's own inode cache, log and AIL (`xfs/`), and the
//! filesystem's other kernel memory: log items, metadata buffers, directory blocks and the
//! ext4 journal (`meta.rs`). The objects live in slab caches of the machine
//! (`machine::slab`) and the buffers in pages of the buddy allocator, so the caches compete
//! with page cache and anonymous memory for pages.
//!
//! Inodes and dentries are small records in arenas indexed by number; the LRU lists are
//! queues of those numbers with the kernel's lazy removal (an object that gains a reference
//! stays queued and is dropped when reclaim meets it).

pub mod bdev;
pub mod dcache;
pub mod drop_caches;
pub mod inode;
pub mod meta;
pub mod namei;
#[path = "super.rs"]
pub mod superblock;
pub mod xfs;

use super::slab::CacheId;
use dcache::Dcache;
use inode::Icache;
use meta::FsMeta;
use xfs::XfsMount;

/// `[fs] type`: which filesystem is mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsType {
    /// XFS: inodes the VFS evicts go to XFS's own reclaim (AG walks, log, AIL).
    Xfs,
    /// ext4: the VFS inode and dentry caches only; an evicted inode is freed at once.
    Ext4,
}

impl FsType {
    pub const NAMES: &'static [&'static str] = &["xfs", "ext4"];
    pub fn name(self) -> &'static str {
        match self {
            FsType::Xfs => "xfs",
            FsType::Ext4 => "ext4",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "xfs" => Some(FsType::Xfs),
            "ext4" => Some(FsType::Ext4),
            _ => None,
        }
    }
}

/// What a filesystem is built from (`[fs]`; the keys and defaults are declared in
/// `scenario/sections/fs.rs`). Every figure is [recon] unless marked: mechanisms §A.6 gives
/// the suggested values.
#[derive(Debug, Clone, PartialEq)]
pub struct FsConfig {
    /// XFS or ext4.
    pub fs_type: FsType,
    /// Allocation groups (each with its own reclaim lock and cursor); ext4's block groups.
    pub ags: u32,
    /// Bytes per `xfs_inode` object (≈1 KiB).
    pub inode_size: u64,
    /// Bytes per `ext4_inode_cache` object (ext4 only).
    pub ext4_inode_size: u64,
    /// Bytes of one on-disk inode; `None`: 512 on XFS (v5), 256 on ext4.
    pub disk_inode_size: Option<u64>,
    /// Directory entries per directory block.
    pub dirents_per_block: u64,
    /// Bytes per `xfs_ili` (inode log item) and per `xfs_buf` (buffer head of XFS).
    pub ili_size: u64,
    pub xfs_buf_size: u64,
    /// Bytes per `buffer_head`, `jbd2_journal_head` and `jbd2_inode` (ext4).
    pub buffer_head_size: u64,
    pub journal_head_size: u64,
    pub jbd2_inode_size: u64,
    /// ext4's journal commit interval (`commit=` mount option).
    pub journal_commit_ns: u64,
    /// Bytes per dentry (≈0.2 KiB).
    pub dentry_size: u64,
    /// Slab fragmentation of both caches, percent (see `machine::slab`).
    pub slab_fragmentation: u64,
    /// Log capacity in inodes: creates wait for log space when it is full.
    pub log_inodes: u64,
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
    /// xfsaild CPU per cluster it flushes.
    pub flush_cluster_ns: u64,
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
    /// XFS's `xs_ig_attempts` / `xs_ig_found` / `xs_ig_missed`: `xfs_iget` calls (lookups
    /// whose dentry was not cached), those that found the inode in memory (recycled from
    /// reclaim included), those that read it from disk. ext4 has no such counters.
    pub xs_ig_attempts: u64,
    pub xs_ig_found: u64,
    pub xs_ig_missed: u64,
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
    /// Log items, buffers, directory blocks and the journal.
    pub meta: FsMeta,
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

/// The filesystem model on a small machine: creates charge slab pages, the superblock
/// shrinker prunes dentries then inodes then XFS-reclaimable inodes, NOFS callers are stopped,
/// and the reclaim walks differ as X0-X3 say.
#[cfg(test)]
mod tests {
    use super::inode::{VfsState, XfsState};
    use super::FsConfig;
    use crate::machine::gfp::{GFP_KERNEL, GFP_NOFS};
    use crate::machine::shrinker::{ShrinkControl, ShrinkerOps, SHRINK_STOP};
    use crate::machine::vmstat::VmEvent;
    use crate::machine::{Machine, TaskCtx};

    /// The host machine a scenario's text describes (the tests of `bdev/` build theirs here:
    /// a separate test file naming the scenario and run layers would read as an upward import).
    pub fn host_machine(text: &str) -> Machine {
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    pub fn config() -> FsConfig {
        FsConfig {
            fs_type: super::FsType::Xfs,
            ags: 2,
            inode_size: 1024,
            ext4_inode_size: 1176,
            disk_inode_size: None,
            dirents_per_block: 64,
            ili_size: 192,
            xfs_buf_size: 384,
            buffer_head_size: 104,
            journal_head_size: 112,
            jbd2_inode_size: 64,
            journal_commit_ns: 5_000_000_000,
            dentry_size: 192,
            slab_fragmentation: 0,
            log_inodes: 100_000,
            cluster_inodes: 32,
            io_latency_ns: 5_000_000,
            io_queue_depth: 4,
            logforce_latency_ns: 2_000_000,
            xfssyncd_centisecs: 3000,
            aild_period_ns: 20_000_000,
            flush_cluster_ns: 20_000,
            shrinker_batch: 1024,
            shrinker_seeks: 2,
            dentry_scan_ns: 200,
            inode_scan_ns: 500,
            free_object_ns: 1000,
            create_ns: 10_000,
        }
    }

    fn machine(xfs_reclaim: &str, shrinker: &str) -> Machine {
        let text = format!(
            "name = \"t\"\n[host]\nram = \"256MiB\"\n[policy]\nxfs_reclaim = \"{xfs_reclaim}\"\n\
             shrinker = \"{shrinker}\"\n[[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        let scn = crate::scenario::parse_str(&text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        m.mount_fs(config(), 100);
        m
    }

    fn create(m: &mut Machine, n: u32) {
        let mut t = TaskCtx::default();
        for k in 0..n {
            m.fs_create(k % 2, GFP_KERNEL, (super::NONE, 0), &mut t)
                .unwrap();
        }
    }

    fn scan(m: &mut Machine, gfp: u32, kswapd: bool, nr: u64) -> u64 {
        let mut sc = ShrinkControl::new(gfp, 12, kswapd);
        sc.nr_to_scan = nr;
        sc.nr_scanned = nr;
        let mut s = super::superblock::SuperShrinker;
        s.scan_objects(m, &mut sc)
    }

    #[test]
    fn creates_charge_slab_pages_and_pin_log_space() {
        let mut m = machine("X3", "v61");
        let free0 = m.total_free_pages();
        create(&mut m, 1000);
        let fs = m.fs.as_ref().unwrap();
        // 1000 inodes at 4 per page, 1000 dentries at 21 per page.
        assert_eq!(m.slab.caches[fs.inode_cache].nr_slabs(), 250);
        assert_eq!(m.slab.caches[fs.dentry_cache].nr_slabs(), 48);
        // What XFS allocates besides, from the declared sizes: an xfs_ili per logged inode;
        // per AG (500 inodes each) 16 cluster buffers of 32 inodes, and per directory (two of
        // 500 entries) 8 directory blocks, each an xfs_buf.
        let cfg = config();
        let per_page = |size: u64| crate::machine::PAGE_SIZE / size;
        let ili_pages = 1000u64.div_ceil(per_page(cfg.ili_size));
        let bufs = 2 * 500u64.div_ceil(32) + 2 * 500u64.div_ceil(cfg.dirents_per_block);
        assert_eq!(bufs, 48);
        let buf_pages = bufs.div_ceil(per_page(cfg.xfs_buf_size));
        assert_eq!(m.slab.caches[fs.meta.item_cache].objects, 1000);
        assert_eq!(m.slab.caches[fs.meta.item_cache].nr_slabs(), ili_pages);
        assert_eq!(m.slab.caches[fs.meta.buf_cache].objects, bufs);
        // Cluster buffers of 32 x 512-byte inodes (4 pages), directory blocks of a page.
        let buffer_pages = 32 * (32 * 512 / crate::machine::PAGE_SIZE) + 16;
        assert_eq!(fs.meta.buf_pages, buffer_pages);
        let slab = 250 + 48 + ili_pages + buf_pages;
        // And the log items' shadow buffers, unreclaimable: a 512-byte one per logged inode
        // (8 a page) and an 8 KiB one (an order-1 slab) per inode cluster buffer.
        let shadows = 1000 / 8 + 32 * 2;
        let shadow = |c: Option<crate::machine::slab::CacheId>| m.slab.caches[c.unwrap()].objects;
        assert_eq!(shadow(fs.meta.item_shadow_cache), 1000);
        assert_eq!(shadow(fs.meta.block_shadow_cache), 32);
        assert_eq!(m.slab.pages(), (slab, shadows));
        assert_eq!(free0 - m.total_free_pages(), slab + shadows + buffer_pages);
        assert_eq!(fs.xfs.log_used, 1000);
        assert_eq!(fs.xfs.cil.len(), 1000);
        // Every dentry is unused on the LRU, pinning its inode, which is not on the inode LRU.
        assert_eq!(
            (fs.dcache.nr_lru, fs.icache.nr_lru, fs.xfs.nr_reclaimable),
            (1000, 0, 0)
        );
        let mut sc = ShrinkControl::new(GFP_KERNEL, 12, false);
        let mut s = super::superblock::SuperShrinker;
        assert_eq!(s.count_objects(&mut m, &mut sc), 1000);
        assert!(!sc.will_defer);
        let mut sc = ShrinkControl::new(GFP_NOFS, 12, false);
        s.count_objects(&mut m, &mut sc);
        assert!(sc.will_defer, "a NOFS caller is told it will defer");
    }

    fn ext4_machine() -> Machine {
        let text = "name = \"t\"\n[host]\nram = \"256MiB\"\n[[workload]]\nname = \"w\"\n\
                    anon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        m.mount_fs(
            FsConfig {
                fs_type: super::FsType::Ext4,
                ..config()
            },
            100,
        );
        m
    }

    #[test]
    fn ext4_creates_charge_its_own_caches_and_journal() {
        let mut m = ext4_machine();
        let free0 = m.total_free_pages();
        let mut t = TaskCtx::default();
        // 1000 files of one page each in two directories (block groups): every create needs
        // a jbd2_inode (it has data), its inode-table block (16 inodes of 256 bytes) and its
        // directory block, each dirtied once in the running transaction: a journal head each.
        for k in 0..1000u32 {
            m.fs_create(k % 2, GFP_KERNEL, (k, 1), &mut t).unwrap();
        }
        let cfg = config();
        let fs = m.fs.as_ref().unwrap();
        let c = |id: usize| &m.slab.caches[id];
        assert_eq!(c(fs.inode_cache).name, "ext4_inode_cache");
        assert_eq!(c(fs.inode_cache).objs_per_slab, 4096 / cfg.ext4_inode_size);
        assert_eq!(c(fs.meta.item_cache).name, "jbd2_inode");
        assert_eq!(c(fs.meta.item_cache).objects, 1000);
        let blocks = 2 * 500u64.div_ceil(16) + 2 * 500u64.div_ceil(cfg.dirents_per_block);
        assert_eq!(blocks, 64 + 16);
        assert_eq!(c(fs.meta.buf_cache).name, "buffer_head");
        assert_eq!(c(fs.meta.buf_cache).objects, blocks);
        let jh = fs.meta.journal_head_cache.unwrap();
        assert_eq!(c(jh).objects, blocks, "one journal head per block dirtied");
        // The blocks are the block device's page cache: Buffers, and file pages.
        assert_eq!(m.nr_blockdev_pages(), blocks);
        assert_eq!(m.stat.nr_file_pages, blocks);
        // No XFS log: nothing pinned, no log space held.
        assert_eq!((fs.xfs.log_used, fs.xfs.cil.len()), (0, 0));
        let pages = |size: u64, n: u64| n.div_ceil(4096 / size);
        let reclaimable = pages(cfg.ext4_inode_size, 1000)
            + pages(cfg.dentry_size, 1000)
            + pages(cfg.buffer_head_size, blocks)
            + pages(cfg.journal_head_size, blocks);
        let unreclaimable = pages(cfg.jbd2_inode_size, 1000);
        assert_eq!(m.slab.pages(), (reclaimable, unreclaimable));
        assert_eq!(
            free0 - m.total_free_pages(),
            reclaimable + unreclaimable + blocks
        );
        // The commit frees the transaction's journal heads.
        m.jbd2_catch_up(cfg.journal_commit_ns);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(m.slab.caches[jh].objects, 0);
        assert_eq!(fs.meta.stats.journal_commits, 1);
    }

    #[test]
    fn ext4_eviction_frees_the_inode_at_once_without_xfs_reclaim() {
        let mut m = ext4_machine();
        let mut t = TaskCtx::default();
        for k in 0..64u32 {
            m.fs_create(0, GFP_KERNEL, (super::NONE, 0), &mut t)
                .unwrap();
            let _ = k;
        }
        let mut fs = m.fs.take().unwrap();
        m.prune_dcache_sb(&mut fs, u64::MAX >> 1, 0);
        let evicted = m.prune_icache_sb(&mut fs, u64::MAX >> 1, true, 0);
        assert_eq!(evicted, 64);
        assert_eq!((fs.icache.nr_inodes, fs.xfs.nr_reclaimable), (0, 0));
        assert_eq!(m.slab.caches[fs.inode_cache].objects, 0);
        // Empty files: no jbd2_inode. The four inode-table blocks and the directory's block
        // are the block device's page cache: they stay until page reclaim takes them.
        assert_eq!(m.slab.caches[fs.meta.item_cache].objects, 0);
        assert_eq!(fs.meta.stats.block_bufs_freed, 0);
        assert_eq!(m.nr_blockdev_pages(), 4 + 1);
        // The superblock shrinker counts only the VFS lists on ext4.
        m.fs = Some(fs);
        let mut sc = ShrinkControl::new(GFP_KERNEL, 12, false);
        let mut s = super::superblock::SuperShrinker;
        assert_eq!(
            s.count_objects(&mut m, &mut sc),
            crate::machine::shrinker::SHRINK_EMPTY
        );
    }

    #[test]
    fn nofs_scan_stops_and_prune_walks_dentries_then_inodes_then_xfs() {
        let mut m = machine("X3", "v61");
        create(&mut m, 1000);
        assert_eq!(scan(&mut m, GFP_NOFS, false, 1024), SHRINK_STOP);
        // All 1000 objects are dentries: d = 1024 * 1000 / 1001 = 1022 -> 1023 walked, all freed.
        let freed = scan(&mut m, GFP_KERNEL, false, 1024);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(fs.stats.dentries_pruned, 1000);
        assert_eq!((fs.dcache.nr_lru, fs.icache.nr_lru), (0, 999));
        assert_eq!(
            freed,
            1000 + 1,
            "1000 dentries; then i + 1 = 1 inode walked and evicted"
        );
        assert_eq!(fs.xfs.nr_reclaimable, 1);
        // The dentry pages emptied (perfect packing): counted as reclaimed slab.
        assert_eq!(m.slab.caches[fs.dentry_cache].nr_slabs(), 0);
        assert_eq!(m.reclaimed_slab, 48);
        // Next scan: inodes are now on the LRU; they are evicted to XFS. X3 frees none of them:
        // they are still pinned in the CIL.
        scan(&mut m, GFP_KERNEL, false, 1024);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(fs.icache.nr_lru, 0);
        assert_eq!(fs.xfs.nr_reclaimable, 1000);
        assert_eq!(fs.stats.xs_ig_reclaims, 0);
    }

    /// Prune every dentry and evict every inode to XFS, without any XFS reclaim.
    fn evict_all(m: &mut Machine) {
        let mut fs = m.fs.take().unwrap();
        m.prune_dcache_sb(&mut fs, u32::MAX as u64, 0);
        m.prune_icache_sb(&mut fs, u32::MAX as u64, true, 0);
        assert_eq!((fs.dcache.nr_lru, fs.icache.nr_lru), (0, 0));
        assert_eq!(fs.xfs.nr_reclaimable, fs.icache.nr_inodes);
        m.fs = Some(fs);
    }

    /// Checkpoint and write back everything, as xfsaild would over time.
    pub(super) fn writeback_all(m: &mut Machine) {
        let mut fs = m.fs.take().unwrap();
        let lvs = fs.xlog_cil_push();
        m.xfs_cil_committed(&fs, lvs);
        let mut t = 0;
        while !fs.xfs.ail.is_empty() || fs.xfs.io.next_done().is_some() {
            fs.xfs_ail_push_all();
            fs.xfsaild_push(t);
            t += 1_000_000;
            fs.xfs_buf_ioend(t);
        }
        assert_eq!(fs.xfs.log_used, 0);
        m.fs = Some(fs);
    }

    #[test]
    fn x1_direct_reclaim_forces_the_log_and_writes_clusters_x3_skips() {
        for (policy, forces, writes, reclaimed) in [("X1", 1, 1000 / 32 + 2, 1000), ("X3", 0, 0, 0)]
        {
            let mut m = machine(policy, "v61");
            create(&mut m, 1000);
            evict_all(&mut m);
            let mut fs = m.fs.take().unwrap();
            let before = (fs.stats.reclaim_log_forces, fs.stats.reclaim_sync_writes);
            let w = m.xfs_reclaim_inodes_nr(&mut fs, 2000, false, 0);
            let d = (
                fs.stats.reclaim_log_forces - before.0,
                fs.stats.reclaim_sync_writes - before.1,
            );
            assert_eq!(d.0, forces, "{policy}");
            // Per AG, the clusters of 500 inodes: 15 full and a partial one.
            assert_eq!(d.1 as u32, if writes > 0 { 32 } else { 0 }, "{policy}");
            assert_eq!(w.freed, reclaimed, "{policy}");
            if policy == "X1" {
                // One log force (2 ms) and 32 cluster writes on a 4-deep queue of 5 ms writes, one
                // at a time: at least 2 + 32 * 5 ms asleep.
                assert!(w.sleep_ns >= 162_000_000, "{}", w.sleep_ns);
                assert!(fs.xfs.ags.iter().all(|a| a.lock_until > 0));
            }
            let _ = writes;
            m.fs = Some(fs);
        }
    }

    #[test]
    fn x2_kswapd_frees_only_clean_direct_waits() {
        let mut m = machine("X2", "chinner");
        create(&mut m, 256);
        evict_all(&mut m);
        let mut fs = m.fs.take().unwrap();
        let w = m.xfs_reclaim_inodes_nr(&mut fs, 512, true, 0);
        assert_eq!((w.freed, w.sleep_ns), (0, 0), "kswapd never waits");
        assert!(fs.xfs.push_all, "but it pushes the AIL");
        let w = m.xfs_reclaim_inodes_nr(&mut fs, 512, false, 0);
        assert_eq!(w.freed, 256);
        assert!(w.sleep_ns > 0);
        assert!(fs.icache.i.iter().all(|i| i.vfs == VfsState::Free));
        m.fs = Some(fs);
    }

    /// 64 inodes created under X3 and checkpointed: dirty, in the AIL, two clusters (32
    /// inodes in each of 2 AGs) for xfsaild to push.
    fn checkpointed_inodes() -> Machine {
        let mut m = machine("X3", "v61");
        create(&mut m, 64);
        let mut fs = m.fs.take().unwrap();
        let lvs = fs.xlog_cil_push();
        m.xfs_cil_committed(&fs, lvs);
        m.fs = Some(fs);
        m
    }

    #[test]
    fn the_cil_checkpoints_at_an_eighth_of_the_log_and_the_log_worker_forces_it() {
        use super::xfs::xfs_log_cil::cil_space_limit;
        // XLOG_CIL_SPACE_LIMIT: log size >> 3 (a mkfs-default 2 GiB filesystem's 64 MiB log has
        // an 8 MiB CIL).
        assert_eq!(cil_space_limit(200_000), 25_000);
        assert_eq!(cil_space_limit(7), 1);
        let mut m = machine("X3", "v61");
        m.fs.as_mut().unwrap().cfg.log_inodes = 800;
        create(&mut m, 99);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!((fs.xfs.cil.len(), fs.stats.cil_checkpoints), (99, 0));
        assert!(fs.icache.i.iter().all(|i| i.xfs == XfsState::Pinned));
        // The hundredth logged inode fills the CIL: all of it goes to the AIL, dirty.
        create(&mut m, 1);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(
            (fs.xfs.cil.len(), fs.xfs.ail.len(), fs.stats.cil_checkpoints),
            (0, 100, 1)
        );
        assert!(fs.icache.i.iter().all(|i| i.xfs == XfsState::Dirty));
        // The checkpoint's log vectors are freed when it commits: no inode keeps its 512-byte
        // formatted buffer (unreclaimable kmalloc-512) past it; the log items stay.
        let objects = |m: &Machine, c: Option<crate::machine::slab::CacheId>| {
            m.slab.caches[c.unwrap()].objects
        };
        let (lv_cache, item_cache) = (fs.meta.item_shadow_cache, Some(fs.meta.item_cache));
        assert_eq!((objects(&m, lv_cache), objects(&m, item_cache)), (0, 100));
        // Below the limit, only the log worker checkpoints: every xfssyncd_centisecs (30 s).
        create(&mut m, 10);
        let period = super::xfs::log_work_period_ns(3000);
        assert_eq!(period, 30_000_000_000);
        m.xfs_catch_up(period - 1);
        assert_eq!(m.fs.as_ref().unwrap().xfs.cil.len(), 10);
        assert_eq!(objects(&m, lv_cache), 10);
        m.xfs_catch_up(period);
        assert_eq!(objects(&m, lv_cache), 0);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!((fs.xfs.cil.len(), fs.stats.cil_checkpoints), (0, 2));
        assert!(fs.xfs.push_all, "the log worker pushes the whole AIL");
        assert_eq!(fs.xfs.next_log_work_ns, 2 * period);
    }

    #[test]
    fn aild_cleans_and_frees_log_space_then_x3_reclaims() {
        let mut m = checkpointed_inodes();
        let fs = m.fs.as_mut().unwrap();
        assert!(fs.icache.i.iter().all(|i| i.xfs == XfsState::Dirty));
        fs.xfs_ail_push_all();
        assert_eq!(
            fs.xfsaild_push(0),
            2,
            "two clusters (32 inodes in each of 2 AGs)"
        );
        fs.xfs_buf_ioend(5_000_000);
        assert_eq!(fs.xfs.log_used, 0);
        assert!(fs.icache.i.iter().all(|i| i.xfs == XfsState::Clean));
        evict_all(&mut m);
        let mut fs = m.fs.take().unwrap();
        assert_eq!(m.xfs_reclaim_inodes_nr(&mut fs, 100, false, 0).freed, 64);
        assert_eq!(m.slab.caches[fs.inode_cache].nr_slabs(), 0);
        m.fs = Some(fs);
    }

    #[test]
    fn cold_reads_queued_ahead_do_not_starve_aild() {
        // Regression: readers booked the I/O slots seconds ahead, and xfsaild issued only
        // into a slot free "now", so it never wrote again and a full log stopped every create.
        let mut m = checkpointed_inodes();
        let fs = m.fs.as_mut().unwrap();
        for _ in 0..100 {
            fs.xfs.io.read(0, fs.cfg.io_latency_ns);
        }
        fs.xfs_ail_push_all();
        assert_eq!(
            fs.xfsaild_push(0),
            2,
            "both clusters queued behind the reads"
        );
        let depth = fs.xfs.io.slots.len() as u64;
        let done = fs.xfs.io.next_done().unwrap();
        assert!(
            done >= 100 / depth * fs.cfg.io_latency_ns,
            "the writes wait their turn: {done}"
        );
        fs.xfs_buf_ioend(u64::MAX);
        assert_eq!(fs.xfs.log_used, 0);
    }

    #[test]
    fn drop_slab_empties_clean_caches_and_counts_once() {
        let mut m = machine("X3", "v61");
        create(&mut m, 500);
        writeback_all(&mut m);
        m.drop_slab(0);
        assert_eq!(m.vm.get(VmEvent::DropSlab), 1);
        assert!(m.vm.get(VmEvent::SlabsScanned) >= 1500);
        // Inodes, dentries and log items are gone, and with them the cluster buffers but the
        // one each AG is filling; the directory blocks stay (no buffer cache shrinker).
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(fs.meta.buf_pages, 2 * 4 + 2 * 4);
        assert_eq!(m.slab.caches[fs.meta.buf_cache].objects, 2 + 2 * 4);
        // The two filling clusters' buffers keep their log items' 8 KiB shadows (unreclaimable,
        // two pages each); every inode's 512-byte shadow went with its log item.
        let shadow = |c: Option<crate::machine::slab::CacheId>| m.slab.caches[c.unwrap()].objects;
        assert_eq!(shadow(fs.meta.block_shadow_cache), 2);
        assert_eq!(shadow(fs.meta.item_shadow_cache), 0);
        assert_eq!(
            m.slab.pages(),
            (1, 4),
            "a page of xfs_buf objects, two order-1 shadows"
        );
        assert_eq!(m.fs.as_ref().unwrap().stats.xs_ig_reclaims, 500);
    }

    #[test]
    fn open_hits_recycles_or_reads_back() {
        let mut m = machine("X3", "v61");
        let mut t = TaskCtx::default();
        let f = m
            .fs_create(0, GFP_KERNEL, (super::NONE, 0), &mut t)
            .unwrap();
        assert_eq!(m.fs_open(f, &mut t).unwrap(), None);
        m.fs_close(f);
        assert_eq!(m.fs.as_ref().unwrap().stats.lookups_cached, 1);
        let cold = m.fs_add_cold_files(1, super::NONE, 0);
        let wait = m.fs_open(cold, &mut t).unwrap();
        assert_eq!(
            wait,
            Some(10_000 + 5_000_000),
            "after the create's 10 us, a cluster read"
        );
        m.fs_close(cold);
    }
}
