//! The filesystem's own kernel memory besides dentries and inodes, as real allocations of the
//! machine: slab objects from `machine::slab` and buffer pages from the buddy allocator.
//!
//! * XFS: an `xfs_ili` (inode log item) for every inode that was logged, from its first change
//!   until XFS reclaim frees the inode; an `xfs_buf` and its pages for every inode cluster
//!   buffer and every directory block. XFS buffer pages are neither page cache nor slab
//!   (`xfs_buf_alloc_pages`): they show only as memory gone from `MemFree`.
//! * ext4: its inode-table and directory blocks are pages of the block device's page cache,
//!   each with a `buffer_head` (`Buffers` in meminfo), on the file LRU and reclaimed as file
//!   pages (`bdev.rs`); a `jbd2_journal_head` for every metadata block the running transaction
//!   dirtied, freed when it commits; a `jbd2_inode` for every inode with data written in
//!   ordered mode, freed when the inode is evicted.
//!
//! * XFS logs a change by formatting the item into a buffer (`xlog_cil_alloc_shadow_bufs`: a
//!   plain `kmalloc`), which the item keeps in the CIL (`li_lv`) until a checkpoint takes it;
//!   the checkpoint's log vectors are freed when it commits (`xlog_cil_committed`). Every
//!   logged inode's item holds one (`kmalloc-512` for an inode's core and its small forks)
//!   from its create to the checkpoint after it, and every inode cluster buffer's item one
//!   (`kmalloc-8k`, the cluster's logged regions). The sizes are the guest's: a calibration
//!   trial boot of xfs-create-stat, 10,000 creates inside one checkpoint, grew `kmalloc-512`
//!   by one object per created inode and `kmalloc-8k` by one per inode cluster
//!   (docs/MODEL.md). They are unreclaimable slab, `SUnreclaim` in meminfo.
//!
//! Which caches count as reclaimable slab follows their `SLAB_RECLAIM_ACCOUNT` flag in 6.1:
//! `xfs_ili`, `xfs_buf`, `buffer_head` and `jbd2_journal_head` (`SLAB_TEMPORARY`) are
//! reclaimable, `jbd2_inode` and the `kmalloc` shadows are not.
//!
//! Abstractions ([recon], documented in docs/MODEL.md): no XFS buffer cache shrinker
//! (`xfs_buftarg_shrink`). An XFS inode cluster's buffer lives while the cluster has an
//! in-core inode or is the one its AG is filling; an XFS directory block lives for the run
//! (the directory is in use as long as files are created in it); an ext4 transaction's
//! journal heads go at its commit (checkpointing is taken as immediate).
//! An inode cluster buffer's 8 KiB log buffer lives as long as the buffer (the kernel frees
//! it with the checkpoint that wrote it, and a later create in the cluster formats a new
//! one).

use super::super::gfp::{Gfp, GFP_NOFS};
use super::super::memory::{Access, TaskCtx};
use super::super::slab::CacheId;
use super::super::{Machine, PAGE_SIZE};
use super::{Filesystem, FsConfig, FsType};

/// An XFS inode cluster buffer: its pages (empty: not in memory).
#[derive(Debug, Clone, Default)]
pub struct BlockBuf {
    pub pages: Vec<u32>,
    /// XFS: its log item holds a shadow buffer (the buffer came in for a create, which logs
    /// it; one read in for a lookup is not logged).
    pub shadow: bool,
}

/// A directory: entries created in it and (XFS) the pages of its blocks (ext4's are the block
/// device's, `bdev.rs`).
#[derive(Debug, Clone, Default)]
pub struct Dir {
    pub entries: u64,
    pub pages: Vec<u32>,
}

/// Counters of the filesystem's kernel memory (summary.json `fs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaStats {
    pub block_bufs_allocated: u64,
    pub block_bufs_freed: u64,
    pub dir_blocks: u64,
    pub journal_commits: u64,
}

/// Bytes of an XFS inode log item's shadow buffer (`kmalloc-512`).
pub const XFS_ILI_SHADOW_BYTES: u64 = 512;
/// Bytes of an XFS inode cluster buffer's log item shadow (`kmalloc-8k`).
pub const XFS_CLUSTER_SHADOW_BYTES: u64 = 8192;

/// The filesystem's kernel memory besides dentries and inodes.
#[derive(Debug)]
pub struct FsMeta {
    /// The per-inode private object: `xfs_ili` (XFS) or `jbd2_inode` (ext4).
    pub item_cache: CacheId,
    /// XFS: the per-inode item's shadow buffer (`kmalloc-512`).
    pub item_shadow_cache: Option<CacheId>,
    /// The buffer's head: `xfs_buf` (XFS) or `buffer_head` (ext4).
    pub buf_cache: CacheId,
    /// XFS: an inode cluster buffer's log item shadow (`kmalloc-8k`).
    pub block_shadow_cache: Option<CacheId>,
    /// `jbd2_journal_head` (ext4 only).
    pub journal_head_cache: Option<CacheId>,
    /// Pages of one inode block's buffer.
    pub block_pages: u32,
    /// Inodes per inode block (XFS: `cluster_inodes`; ext4: 4096 / on-disk inode size).
    pub block_inodes: u32,
    /// Pages held by XFS metadata buffers (inode clusters and directory blocks).
    pub buf_pages: u64,
    pub dirs: Vec<Dir>,
    /// ext4: where its inodes and directory entries are on the device.
    pub ext4: super::bdev::Ext4Layout,
    /// ext4: the running transaction (starts at 1).
    pub tid: u64,
    /// ext4: journal heads held by the running transaction.
    pub journal_heads: u64,
    pub next_commit_ns: u64,
    pub stats: MetaStats,
}

/// What one create or inode read needs besides its dentry and inode, decided before anything
/// is allocated (none of it can change while the allocations reclaim: see [`Machine::fs_reserve`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaPlan {
    /// A per-inode item (`xfs_ili` / `jbd2_inode`).
    pub item: bool,
    /// XFS: a new buffer for the inode's cluster.
    pub inode_block: bool,
    /// XFS: a new directory block.
    pub dir_block: bool,
    /// Journal heads the running transaction gains.
    pub journal_heads: u64,
}

/// Objects and pages taken for a plan, not yet attached to anything.
#[derive(Debug, Default)]
pub struct Reserve {
    objs: Vec<CacheId>,
    inode_pages: Vec<u32>,
    dir_pages: Vec<u32>,
    /// The new inode block's buffer has a log item shadow (among `objs`).
    block_shadow: bool,
}

impl FsConfig {
    /// Bytes of one on-disk inode (the key, or the filesystem's default).
    pub fn disk_inode_bytes(&self) -> u64 {
        self.disk_inode_size.unwrap_or(match self.fs_type {
            FsType::Xfs => 512,
            FsType::Ext4 => 256,
        })
    }
}

impl Filesystem {
    /// Inodes per inode block.
    pub fn block_inodes(&self) -> u32 {
        self.meta.block_inodes
    }

    /// The cluster the AG is filling (the one of its last allocated inode), if any: its
    /// buffer stays while the AG allocates from it.
    pub fn filling_cluster(&self, ag: u32) -> Option<u32> {
        let a = &self.xfs.ags[ag as usize];
        (a.next_agino > 0).then(|| (a.next_agino - 1) / self.block_inodes())
    }

    /// The next inode of `ag` (its AG inode number's cluster).
    fn next_cluster(&self, ag: u32) -> u32 {
        self.xfs.ags[ag as usize].next_agino / self.block_inodes()
    }

    fn block_buf(&self, ag: u32, c: u32) -> Option<&BlockBuf> {
        self.xfs.ags[ag as usize].bufs.get(c as usize)
    }

    /// What an XFS create in directory `dir` (in `ag`) needs (ext4's plan is made with its
    /// blocks held: `Machine::ext4_create_begin`).
    pub fn plan_create(&self, ag: u32, dir: u32) -> MetaPlan {
        let c = self.next_cluster(ag);
        let buf = self.block_buf(ag, c);
        let inode_block = buf.is_none_or(|b| b.pages.is_empty());
        let entries = self.meta.dirs.get(dir as usize).map_or(0, |d| d.entries);
        let dir_block = entries.is_multiple_of(self.cfg.dirents_per_block);
        MetaPlan {
            item: true,
            inode_block,
            dir_block,
            journal_heads: 0,
        }
    }

    /// What reading an inode back into `ag` needs: XFS, its cluster's buffer if not in memory
    /// (ext4's block is looked up before: `Machine::ext4_iget_block`).
    pub fn plan_read(&self, ag: u32) -> MetaPlan {
        let c = self.next_cluster(ag);
        MetaPlan {
            inode_block: self.cfg.fs_type == FsType::Xfs
                && self.block_buf(ag, c).is_none_or(|b| b.pages.is_empty()),
            ..Default::default()
        }
    }
}

impl Machine {
    /// The caches of a filesystem's kernel memory (`kmem_cache_create` at module init).
    pub fn fs_meta_caches(&mut self, cfg: &FsConfig) -> FsMeta {
        let frag = cfg.slab_fragmentation;
        let (mut item_shadow_cache, mut block_shadow_cache) = (None, None);
        let (item_cache, buf_cache, journal_head_cache, block_pages, block_inodes) = match cfg
            .fs_type
        {
            FsType::Xfs => {
                let ili = self.kmem_cache_create("xfs_ili", cfg.ili_size, true, frag);
                let buf = self.kmem_cache_create("xfs_buf", cfg.xfs_buf_size, true, frag);
                item_shadow_cache =
                    Some(self.kmem_cache_create("kmalloc-512", XFS_ILI_SHADOW_BYTES, false, frag));
                block_shadow_cache = Some(self.kmem_cache_create(
                    "kmalloc-8k",
                    XFS_CLUSTER_SHADOW_BYTES,
                    false,
                    frag,
                ));
                let bytes = cfg.cluster_inodes * cfg.disk_inode_bytes();
                (
                    ili,
                    buf,
                    None,
                    bytes.div_ceil(PAGE_SIZE),
                    cfg.cluster_inodes,
                )
            }
            FsType::Ext4 => {
                let jinode = self.kmem_cache_create("jbd2_inode", cfg.jbd2_inode_size, false, frag);
                let bh = self.kmem_cache_create("buffer_head", cfg.buffer_head_size, true, frag);
                let jh =
                    self.kmem_cache_create("jbd2_journal_head", cfg.journal_head_size, true, frag);
                let per_block = (PAGE_SIZE / cfg.disk_inode_bytes()).max(1);
                self.bdev = Some(Box::new(super::bdev::BdevCache::new(bh)));
                (jinode, bh, Some(jh), 1, per_block)
            }
        };
        FsMeta {
            item_cache,
            item_shadow_cache,
            buf_cache,
            block_shadow_cache,
            journal_head_cache,
            block_pages: block_pages.max(1) as u32,
            block_inodes: block_inodes.max(1) as u32,
            buf_pages: 0,
            dirs: Vec::new(),
            ext4: Default::default(),
            tid: 1,
            journal_heads: 0,
            next_commit_ns: cfg.journal_commit_ns,
            stats: MetaStats::default(),
        }
    }

    /// Allocate what `plan` needs, before the filesystem's state changes: the objects from
    /// their slab caches with `gfp`, buffer pages with GFP_NOFS (`xfs_buf_alloc_pages`, and the
    /// block device's mapping for ext4, never enter the filesystem). Any of it may reclaim and
    /// prune this filesystem; the plan cannot change meanwhile: a new inode block is one the AG
    /// is not filling yet (reclaim frees no buffer of a block that has no in-core inode but
    /// the filling one's, and never the filling one's), directory blocks stay, and the
    /// transaction commits only in [`fs_catch_up`](Self::fs_catch_up). On failure everything
    /// taken is given back.
    pub fn fs_reserve(
        &mut self,
        plan: MetaPlan,
        gfp: Gfp,
        t: &mut TaskCtx,
    ) -> Result<Reserve, Access> {
        let mut r = Reserve::default();
        match self.fs_reserve_into(plan, gfp, t, &mut r) {
            Ok(()) => Ok(r),
            Err(a) => {
                self.fs_unreserve(r);
                Err(a)
            }
        }
    }

    fn fs_reserve_into(
        &mut self,
        plan: MetaPlan,
        gfp: Gfp,
        t: &mut TaskCtx,
        r: &mut Reserve,
    ) -> Result<(), Access> {
        let fs = self.fs.as_ref().expect("a filesystem is mounted");
        let (item, buf, jh, block_pages) = (
            fs.meta.item_cache,
            fs.meta.buf_cache,
            fs.meta.journal_head_cache,
            fs.meta.block_pages,
        );
        let (item_shadow, block_shadow) = (fs.meta.item_shadow_cache, fs.meta.block_shadow_cache);
        if plan.item {
            self.kmem_cache_alloc(item, gfp, t)?;
            r.objs.push(item);
            if let Some(sh) = item_shadow {
                self.kmem_cache_alloc(sh, gfp, t)?;
                r.objs.push(sh);
            }
        }
        if let Some(jh) = jh {
            for _ in 0..plan.journal_heads {
                self.kmem_cache_alloc(jh, gfp, t)?;
                r.objs.push(jh);
            }
        }
        if plan.inode_block {
            self.kmem_cache_alloc(buf, gfp, t)?;
            r.objs.push(buf);
            if let Some(sh) = block_shadow.filter(|_| plan.item) {
                self.kmem_cache_alloc(sh, gfp, t)?;
                r.objs.push(sh);
                r.block_shadow = true;
            }
            for _ in 0..block_pages {
                let pfn = self.alloc_pages(GFP_NOFS, 0, t)?;
                self.mark_kernel_pages(pfn, 0);
                r.inode_pages.push(pfn);
            }
        }
        if plan.dir_block {
            self.kmem_cache_alloc(buf, gfp, t)?;
            r.objs.push(buf);
            let pfn = self.alloc_pages(GFP_NOFS, 0, t)?;
            self.mark_kernel_pages(pfn, 0);
            r.dir_pages.push(pfn);
        }
        Ok(())
    }

    /// Give back a reserve that was not used.
    fn fs_unreserve(&mut self, r: Reserve) {
        for id in r.objs {
            self.kmem_cache_free(id, 1);
        }
        for pfn in r.inode_pages.into_iter().chain(r.dir_pages) {
            self.free_pages(pfn, 0);
        }
    }

    /// Attach a reserve to the inode `ino` just created or read in directory `dir` (`None`:
    /// a read, no directory change). Before the inode's own block got it, the AG moved on from
    /// the block it was filling: that one's buffer goes if no in-core inode is left in it.
    pub fn fs_attach(
        &mut self,
        fs: &mut Filesystem,
        r: Reserve,
        ino: u32,
        dir: Option<u32>,
        prev_filling: Option<u32>,
    ) {
        let i = fs.icache.i[ino as usize];
        let c = i.agino / fs.block_inodes();
        let item_cache = fs.meta.item_cache;
        if r.objs.contains(&item_cache) {
            fs.icache.i[ino as usize].item = true;
        }
        if fs
            .meta
            .item_shadow_cache
            .is_some_and(|sh| r.objs.contains(&sh))
        {
            fs.icache.i[ino as usize].lv = true;
        }
        if let Some(jh) = fs.meta.journal_head_cache {
            fs.meta.journal_heads += r.objs.iter().filter(|&&o| o == jh).count() as u64;
        }
        let a = &mut fs.xfs.ags[i.ag as usize];
        if a.bufs.len() <= c as usize {
            a.bufs.resize_with(c as usize + 1, Default::default);
        }
        if !r.inode_pages.is_empty() {
            debug_assert!(a.bufs[c as usize].pages.is_empty());
            fs.meta.buf_pages += r.inode_pages.len() as u64;
            a.bufs[c as usize].pages = r.inode_pages;
            a.bufs[c as usize].shadow = r.block_shadow;
            fs.meta.stats.block_bufs_allocated += 1;
        }
        if let Some(d) = dir {
            let dirs = &mut fs.meta.dirs;
            if dirs.len() <= d as usize {
                dirs.resize_with(d as usize + 1, Default::default);
            }
            let dd = &mut dirs[d as usize];
            if !r.dir_pages.is_empty() {
                fs.meta.buf_pages += r.dir_pages.len() as u64;
                fs.meta.stats.dir_blocks += 1;
                dd.pages.extend(r.dir_pages);
            }
            dd.entries += 1;
        }
        if let Some(p) = prev_filling.filter(|&p| p != c) {
            self.fs_block_put(fs, i.ag, p);
        }
    }

    /// An inode of block (`ag`, `c`) left memory (or the AG stopped filling the block): the
    /// block's buffer goes with the last in-core inode, unless the AG is filling the block.
    pub fn fs_block_put(&mut self, fs: &mut Filesystem, ag: u32, c: u32) {
        if fs.filling_cluster(ag) == Some(c) {
            return;
        }
        let a = &mut fs.xfs.ags[ag as usize];
        if a.clusters.get(c as usize).is_some_and(|m| !m.is_empty()) {
            return;
        }
        let Some(b) = a.bufs.get_mut(c as usize) else {
            return;
        };
        if b.pages.is_empty() {
            return;
        }
        let pages = std::mem::take(&mut b.pages);
        let shadow = std::mem::take(&mut b.shadow);
        fs.meta.buf_pages -= pages.len() as u64;
        fs.meta.stats.block_bufs_freed += 1;
        for pfn in pages {
            self.free_pages(pfn, 0);
        }
        self.kmem_cache_free(fs.meta.buf_cache, 1);
        if let Some(sh) = fs.meta.block_shadow_cache.filter(|_| shadow) {
            self.kmem_cache_free(sh, 1);
        }
    }

    /// The inode's private item goes with it (`xfs_inode_item_destroy`, `jbd2_free_inode`).
    pub fn fs_item_put(&mut self, fs: &mut Filesystem, ino: u32) {
        let i = &mut fs.icache.i[ino as usize];
        if i.item {
            i.item = false;
            self.kmem_cache_free(fs.meta.item_cache, 1);
        }
        if std::mem::take(&mut i.lv) {
            if let Some(sh) = fs.meta.item_shadow_cache {
                self.kmem_cache_free(sh, 1);
            }
        }
    }

    /// A CIL checkpoint committed (`xlog_cil_committed` freeing the checkpoint's log
    /// vectors): the `n` inode items' formatted buffers it wrote go back.
    pub fn xfs_cil_committed(&mut self, fs: &Filesystem, n: u64) {
        if let Some(sh) = fs.meta.item_shadow_cache.filter(|_| n > 0) {
            self.kmem_cache_free(sh, n);
        }
    }

    /// ext4's journal commits due by `at` (`jbd2_journal_commit_transaction`, checkpointed at
    /// once): the running transaction's journal heads are freed, its blocks are clean (the
    /// block device's pages can be reclaimed again) and a new one starts.
    pub fn jbd2_catch_up(&mut self, at: u64) {
        let Some(fs) = self.fs.as_mut() else {
            return;
        };
        let Some(jh) = fs.meta.journal_head_cache else {
            return;
        };
        if fs.meta.next_commit_ns > at {
            return;
        }
        let interval = fs.cfg.journal_commit_ns;
        let n = (at - fs.meta.next_commit_ns) / interval + 1;
        fs.meta.next_commit_ns += n * interval;
        let heads = std::mem::take(&mut fs.meta.journal_heads);
        if heads > 0 {
            fs.meta.tid += 1;
            fs.meta.stats.journal_commits += 1;
            self.kmem_cache_free(jh, heads);
            self.bdev_commit();
        }
    }
}
