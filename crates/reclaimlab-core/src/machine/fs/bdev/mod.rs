//! The block device's page cache (`fs/buffer.c`, `block/fops.c`): ext4's metadata blocks
//! (inode-table blocks and directory blocks) are pages of the data device's mapping, with a
//! `buffer_head` attached, on the file LRU like any file page (`Buffers` in meminfo).
//!
//! * Using a block is looking it up (`__getblk` → `touch_buffer`): a page in memory is marked
//!   accessed; an absent one is allocated, inserted (a refault if its shadow is there) and
//!   read (`bh_read`: one read at the filesystem's `io_latency` on its I/O queue, `pgpgin`),
//!   unless it is a new block that holds nothing on disk yet (a directory's next block, an
//!   inode-table block whose first inode is being created: `ext4_append`, and
//!   `__ext4_get_inode_loc` skipping the read when no other inode of the block is in use).
//! * While an operation uses a block it holds a reference (`b_count`); a block the running
//!   transaction dirtied is held by its journal head until the commit. Reclaim releases a
//!   page's buffer through `filemap_release_folio` → `try_to_free_buffers`, which fails for a
//!   held block: the folio is activated. A clean, free block's page is evicted with a shadow
//!   entry, and its `buffer_head` goes back to the slab.
//!
//! Abstractions (docs/MODEL.md): the journal's checkpoint is immediate (a committed block is
//! clean and free at once; in 6.1 it stays dirty, with its journal head, until the checkpoint
//! or the flusher writes it in place); the per-CPU `bh_lru` references to the most recently
//! used buffers are not held; only inode-table and directory blocks
//! are modelled (no bitmaps, group descriptors or htree index blocks); a create uses its
//! inode's block and the directory's last block, a lookup whose dentry is gone the block of
//! the file's entry; a file made before the run has its on-disk inode slot given at its
//! first lookup; inode write-back after the create does not touch the block again. The read
//! a create waits for is slept on the task's clock (`wait_on_buffer`).

use super::super::frames::pg;
use super::super::gfp::{__GFP_MOVABLE, GFP_NOFS};
use super::super::memory::{Access, TaskCtx};
use super::super::pte::{pte_pfn, pte_present, PTE_MAPPED};
use super::super::slab::CacheId;
use super::super::vmstat::VmEvent;
use super::super::Machine;
use super::NONE;

/// Vpages of the block device's mapping added at a time (one region each).
pub const BDEV_CHUNK: u32 = 16384;

/// The page-cache allocation of a metadata block (`__getblk` → `grow_dev_page`: the
/// device's mapping mask without `__GFP_FS`, movable).
pub const BDEV_GFP: super::super::gfp::Gfp = GFP_NOFS | __GFP_MOVABLE;

/// One metadata block's buffer state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferHead {
    /// References held by operations under way (`b_count`).
    pub count: u32,
    /// Dirtied by the running transaction: its journal head holds it until the commit.
    pub jdirty: bool,
}

/// Counters of the block device's page cache (summary.json `fs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BdevStats {
    /// Lookups of a block (`__getblk`), those that found its page, reads issued.
    pub lookups: u64,
    pub hits: u64,
    pub reads: u64,
    /// Pages reclaim evicted (buffers released), and found held (activated).
    pub released: u64,
    pub busy: u64,
}

/// The data device's page cache of metadata blocks (`bdev->bd_inode->i_mapping`).
#[derive(Debug)]
pub struct BdevCache {
    /// `buffer_head` slab cache.
    pub buf_cache: CacheId,
    /// First vpage of each region of [`BDEV_CHUNK`] vpages; block `b` is vpage
    /// `regions[b / BDEV_CHUNK] + b % BDEV_CHUNK`.
    regions: Vec<u32>,
    /// Every block used so far, by number (numbers are given in order of first use).
    pub blocks: Vec<BufferHead>,
    /// Blocks the running transaction dirtied.
    pub dirty: Vec<u32>,
    /// Pages in memory (`nr_blockdev_pages`).
    pub nr_pages: u64,
    pub stats: BdevStats,
}

/// ext4's on-disk layout as far as the model needs it: which block holds what.
#[derive(Debug, Default)]
pub struct Ext4Layout {
    /// Per block group: the next free on-disk inode, and the device block of each of its
    /// inode-table blocks ([`NONE`]: not used yet).
    next_ino: Vec<u32>,
    itable: Vec<Vec<u32>>,
    /// Per directory: the device blocks of its directory blocks.
    dir: Vec<Vec<u32>>,
    /// Per file: (block group, on-disk inode within it, device block of its entry);
    /// `(NONE, NONE, NONE)` for a file made before the run not looked up yet.
    file: Vec<(u32, u32, u32)>,
}

/// Blocks an operation holds (device block numbers, [`NONE`] for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub inode: u32,
    pub dir: u32,
}

impl Default for Held {
    fn default() -> Self {
        Held {
            inode: NONE,
            dir: NONE,
        }
    }
}

impl BdevCache {
    pub fn new(buf_cache: CacheId) -> Self {
        BdevCache {
            buf_cache,
            regions: Vec::new(),
            blocks: Vec::new(),
            dirty: Vec::new(),
            nr_pages: 0,
            stats: BdevStats::default(),
        }
    }

    /// The vpage of block `b` (its region exists).
    pub fn vpage(&self, b: u32) -> u32 {
        self.regions[(b / BDEV_CHUNK) as usize] + b % BDEV_CHUNK
    }

    /// The block whose page is vpage `vp`, if `vp` is the device's.
    pub fn block_of(&self, vp: u32) -> Option<u32> {
        self.regions
            .iter()
            .position(|&base| vp >= base && vp < base + BDEV_CHUNK)
            .map(|k| k as u32 * BDEV_CHUNK + (vp - self.regions[k]))
    }

    /// The regions' vpage ranges.
    pub fn ranges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.regions.iter().map(|&b| (b, BDEV_CHUNK))
    }
}

impl Ext4Layout {
    /// A device block for `slot` if it has none yet.
    fn block(slot: &mut u32, bdev: &mut BdevCache) -> u32 {
        if *slot == NONE {
            *slot = bdev.blocks.len() as u32;
            bdev.blocks.push(BufferHead::default());
        }
        *slot
    }

    /// The inode-table block holding on-disk inode `ino` of group `ag`.
    fn itable_block(&mut self, ag: u32, ino: u32, per_block: u32, bdev: &mut BdevCache) -> u32 {
        let (ag, k) = (ag as usize, (ino / per_block) as usize);
        if self.itable.len() <= ag {
            self.itable.resize_with(ag + 1, Vec::new);
        }
        if self.itable[ag].len() <= k {
            self.itable[ag].resize(k + 1, NONE);
        }
        Self::block(&mut self.itable[ag][k], bdev)
    }

    /// The next on-disk inode of group `ag`.
    fn next_ino(&mut self, ag: u32) -> &mut u32 {
        if self.next_ino.len() <= ag as usize {
            self.next_ino.resize(ag as usize + 1, 0);
        }
        &mut self.next_ino[ag as usize]
    }

    /// Block `k` of directory `d`.
    fn dir_block(&mut self, d: u32, k: usize, bdev: &mut BdevCache) -> u32 {
        let d = d as usize;
        if self.dir.len() <= d {
            self.dir.resize_with(d + 1, Vec::new);
        }
        if self.dir[d].len() <= k {
            self.dir[d].resize(k + 1, NONE);
        }
        Self::block(&mut self.dir[d][k], bdev)
    }

    fn file_mut(&mut self, file: u32) -> &mut (u32, u32, u32) {
        if self.file.len() <= file as usize {
            self.file.resize(file as usize + 1, (NONE, NONE, NONE));
        }
        &mut self.file[file as usize]
    }
}

impl Machine {
    /// Pages of the block device's page cache (meminfo's `Buffers`).
    pub fn nr_blockdev_pages(&self) -> u64 {
        self.bdev.as_ref().map_or(0, |b| b.nr_pages)
    }

    /// The cache's consistency (checked by `observe::invariants`): its page count is the pages
    /// present in its regions, each with one `buffer_head`; a held or journalled block is in
    /// memory; the running transaction has a journal head for each block it dirtied.
    pub fn bdev_check(&self) -> Result<(), String> {
        let Some(bd) = self.bdev.as_ref() else {
            return Ok(());
        };
        let present = bd
            .ranges()
            .flat_map(|(base, n)| base..base + n)
            .filter(|&vp| pte_present(self.pte[vp as usize]))
            .count() as u64;
        let heads = self.slab.caches[bd.buf_cache].objects;
        if present != bd.nr_pages || heads != bd.nr_pages {
            return Err(format!(
                "block device: {} pages counted, {present} present, {heads} buffer_heads",
                bd.nr_pages
            ));
        }
        for (b, h) in bd.blocks.iter().enumerate() {
            if (h.count > 0 || h.jdirty) && !pte_present(self.pte[bd.vpage(b as u32) as usize]) {
                return Err(format!("block device: block {b} {h:?} is not in memory"));
            }
        }
        let journal_heads = self.fs.as_ref().map_or(0, |fs| fs.meta.journal_heads);
        if journal_heads != bd.dirty.len() as u64 {
            return Err(format!(
                "block device: {} blocks dirtied, {journal_heads} journal heads",
                bd.dirty.len()
            ));
        }
        Ok(())
    }

    /// `__getblk` + `bh_read` of block `b`, holding it: its page is marked accessed if in
    /// memory; otherwise a page and a `buffer_head` are allocated (either may reclaim; the
    /// page is not in the page cache until both are there, so reclaim cannot see it) and,
    /// unless `fresh`, the block is read. Returns when the read completes (`None`: no read),
    /// reads queued from `at`.
    pub fn bdev_getblk(
        &mut self,
        b: u32,
        fresh: bool,
        at: u64,
        t: &mut TaskCtx,
    ) -> Result<Option<u64>, Access> {
        let bd = self
            .bdev
            .as_mut()
            .expect("an ext4 mount has its device's cache");
        bd.stats.lookups += 1;
        if b / BDEV_CHUNK >= bd.regions.len() as u32 {
            let r = self
                .add_region(0, BDEV_CHUNK as u64, false)
                .expect("room for the block device's mapping");
            let base = self.regions[r].base;
            self.bdev.as_mut().expect("cache").regions.push(base);
        }
        let bd = self.bdev.as_mut().expect("cache");
        let (vp, bh) = (bd.vpage(b), bd.buf_cache);
        let pte = self.pte[vp as usize];
        if pte_present(pte) {
            let bd = self.bdev.as_mut().expect("cache");
            bd.stats.hits += 1;
            bd.blocks[b as usize].count += 1;
            self.mark_accessed(pte_pfn(pte));
            return Ok(None);
        }
        let pfn = self.alloc_pages(BDEV_GFP, 0, t)?;
        if let Err(a) = self.kmem_cache_alloc(bh, GFP_NOFS, t) {
            self.free_pages(pfn, 0);
            return Err(a);
        }
        if self.memcg.is_some() {
            let memcg = self.task_memcg(t.task);
            self.mem_cgroup_charge_forced(pfn, memcg, t);
        }
        self.page_cache_insert(vp, pfn);
        self.mark_accessed(pfn);
        let bd = self.bdev.as_mut().expect("cache");
        bd.blocks[b as usize].count += 1;
        bd.nr_pages += 1;
        if fresh {
            return Ok(None);
        }
        bd.stats.reads += 1;
        self.vm.add(VmEvent::Pgpgin, 4);
        let fs = self.fs.as_mut().expect("mounted");
        Ok(Some(fs.xfs.io.read(at, fs.cfg.io_latency_ns)))
    }

    /// `brelse` of the blocks `h` holds.
    pub fn bdev_put(&mut self, h: Held) {
        let bd = self.bdev.as_mut().expect("cache");
        for b in [h.inode, h.dir] {
            if b != NONE {
                bd.blocks[b as usize].count -= 1;
            }
        }
    }

    /// `try_to_free_buffers` for a page reclaim is about to evict: `None` if it is not the
    /// block device's; `Some(false)` if its block is held or dirty in the running
    /// transaction (reclaim activates it); `Some(true)` once its `buffer_head` is freed.
    pub fn bdev_release_folio(&mut self, pfn: u32) -> Option<bool> {
        let vp = self.frames.owner(pfn);
        let bd = self.bdev.as_mut()?;
        let b = bd.block_of(vp)?;
        let h = bd.blocks[b as usize];
        if h.count > 0 || h.jdirty {
            bd.stats.busy += 1;
            return Some(false);
        }
        bd.stats.released += 1;
        bd.nr_pages -= 1;
        let bh = bd.buf_cache;
        self.kmem_cache_free(bh, 1);
        Some(true)
    }

    /// `drop_pagecache` over the device's mapping: clean pages of free blocks go with their
    /// buffers (no shadow, as for any invalidated page). Returns the pages freed.
    pub fn bdev_invalidate(&mut self) -> u64 {
        let Some(bd) = self.bdev.as_ref() else {
            return 0;
        };
        let ranges: Vec<(u32, u32)> = bd.ranges().collect();
        let mut freed = 0;
        for (base, n) in ranges {
            for vp in base..base + n {
                let pte = self.pte[vp as usize];
                if !pte_present(pte) || pte & PTE_MAPPED != 0 {
                    continue;
                }
                let pfn = pte_pfn(pte);
                if !self.frames.test(pfn, pg::LRU) || self.bdev_release_folio(pfn) != Some(true) {
                    continue;
                }
                freed += self.invalidate_mapping_pages(vp, 1);
            }
        }
        freed
    }

    /// `jbd2_journal_commit_transaction` with its checkpoint: the running transaction's
    /// blocks are clean.
    pub fn bdev_commit(&mut self) {
        if let Some(bd) = self.bdev.as_mut() {
            for b in std::mem::take(&mut bd.dirty) {
                bd.blocks[b as usize].jdirty = false;
            }
        }
    }

    /// Journal heads a transaction gains by dirtying the blocks of `h` (those not dirty in it).
    fn journal_heads_for(&self, h: Held) -> u64 {
        let bd = self.bdev.as_ref().expect("cache");
        [h.inode, h.dir]
            .into_iter()
            .filter(|&b| b != NONE && !bd.blocks[b as usize].jdirty)
            .count() as u64
    }

    /// Look up `b` for an operation that holds `h`: on failure `h` is let go.
    fn ext4_getblk_into(
        &mut self,
        h: Held,
        b: u32,
        fresh: bool,
        at: u64,
        t: &mut TaskCtx,
    ) -> Result<Option<u64>, Access> {
        self.bdev_getblk(b, fresh, at, t)
            .inspect_err(|_| self.bdev_put(h))
    }

    /// The blocks a create in directory `dir` of group `ag` uses, looked up and held before
    /// anything else is allocated (the inode's inode-table block, then the directory's block
    /// the entry goes in), and the journal heads its plan needs: one for each held block the
    /// running transaction has not dirtied yet, which cannot change before the create is
    /// attached (commits happen only in `fs_catch_up`). A read is slept on the task's clock.
    pub fn ext4_create_begin(
        &mut self,
        ag: u32,
        dir: u32,
        t: &mut TaskCtx,
    ) -> Result<(Held, u64), Access> {
        let fs = self.fs.as_mut().expect("mounted");
        let bd = self.bdev.as_mut().expect("cache");
        let per_block = fs.meta.block_inodes;
        let ino = *fs.meta.ext4.next_ino(ag);
        let iblk = fs.meta.ext4.itable_block(ag, ino, per_block, bd);
        let entries = fs.meta.dirs.get(dir as usize).map_or(0, |d| d.entries);
        let dpb = fs.cfg.dirents_per_block;
        let k = (entries / dpb) as usize;
        let dblk = fs.meta.ext4.dir_block(dir, k, bd);
        let fresh_dir = entries.is_multiple_of(dpb);
        let mut h = Held::default();
        let at = self.now + t.cost_ns;
        let mut done = self.ext4_getblk_into(h, iblk, ino.is_multiple_of(per_block), at, t)?;
        h.inode = iblk;
        let at = done.unwrap_or(self.now + t.cost_ns);
        if let Some(d) = self.ext4_getblk_into(h, dblk, fresh_dir, at, t)? {
            done = Some(d);
        }
        h.dir = dblk;
        if let Some(d) = done {
            let wait = d.saturating_sub(self.now + t.cost_ns);
            t.cost_ns += wait;
            t.sleep_ns += wait;
        }
        Ok((h, self.journal_heads_for(h)))
    }

    /// The create of `file` is attached: the held blocks are dirtied in the running
    /// transaction (their journal heads were reserved) and let go; the file keeps where its
    /// inode and entry are.
    pub fn ext4_create_end(&mut self, ag: u32, file: u32, h: Held) {
        let fs = self.fs.as_mut().expect("mounted");
        let ino = fs.meta.ext4.next_ino(ag);
        let disk_ino = *ino;
        *ino += 1;
        *fs.meta.ext4.file_mut(file) = (ag, disk_ino, h.dir);
        let bd = self.bdev.as_mut().expect("cache");
        for b in [h.inode, h.dir] {
            let bh = &mut bd.blocks[b as usize];
            if !bh.jdirty {
                bh.jdirty = true;
                bd.dirty.push(b);
            }
        }
        self.bdev_put(h);
    }

    /// A lookup of `file` whose dentry is gone reads the directory block of its entry
    /// (`ext4_lookup` → `ext4_find_entry`), held until the lookup ends.
    pub fn ext4_lookup_dir(
        &mut self,
        file: u32,
        t: &mut TaskCtx,
    ) -> Result<(Held, Option<u64>), Access> {
        let fs = self.fs.as_mut().expect("mounted");
        let dblk = fs.meta.ext4.file_mut(file).2;
        let mut h = Held::default();
        if dblk == NONE {
            return Ok((h, None));
        }
        let done = self.ext4_getblk_into(h, dblk, false, self.now + t.cost_ns, t)?;
        h.dir = dblk;
        Ok((h, done))
    }

    /// `ext4_iget` of `file`'s inode, not in memory: its inode-table block is looked up (read
    /// after `after`, the lookup's directory read, if any) and held with `h`.
    pub fn ext4_iget_block(
        &mut self,
        file: u32,
        mut h: Held,
        after: Option<u64>,
        t: &mut TaskCtx,
    ) -> Result<(Held, Option<u64>), Access> {
        let fs = self.fs.as_mut().expect("mounted");
        let bd = self.bdev.as_mut().expect("cache");
        let ag = fs.files[file as usize].ag;
        let per_block = fs.meta.block_inodes;
        let (_, mut ino, _) = *fs.meta.ext4.file_mut(file);
        if ino == NONE {
            // On disk before the run: its slot is given now.
            let next = fs.meta.ext4.next_ino(ag);
            ino = *next;
            *next += 1;
            let f = fs.meta.ext4.file_mut(file);
            (f.0, f.1) = (ag, ino);
        }
        let iblk = fs.meta.ext4.itable_block(ag, ino, per_block, bd);
        let at = after.unwrap_or(self.now + t.cost_ns);
        let done = self.ext4_getblk_into(h, iblk, false, at, t)?;
        h.inode = iblk;
        Ok((h, done.or(after)))
    }
}

#[cfg(test)]
mod tests;
