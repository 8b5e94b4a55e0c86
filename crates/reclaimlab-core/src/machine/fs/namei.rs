//! What workloads do to the filesystem (`fs/namei.c`, `xfs_create`, `xfs_iget`): create a
//! file, and open one to read it. Both allocate their objects from the slab caches first (an
//! allocation may reclaim, and reclaim may prune this very filesystem), then update the
//! caches. A create logs its new inode (pinned, holding log space) and waits when the log is
//! full; an open of a file whose inode XFS reclaim has freed reads the inode cluster back.

use super::inode::{VfsState, XfsState};
use super::{FileEnt, FsType, NONE};
use crate::machine::gfp::{Gfp, __GFP_NOFAIL, GFP_KERNEL, GFP_NOFS};
use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
use crate::machine::{Access, Machine, TaskCtx};

impl Machine {
    /// Make XFS's state current at `at`: finished cluster writes, the log worker's due runs.
    pub fn xfs_catch_up(&mut self, at: u64) {
        let Some(mut fs) = self.fs.take() else {
            return;
        };
        fs.xfs_buf_ioend(at);
        while fs.xfs.next_log_work_ns <= at {
            let lvs = fs.xfs_log_worker();
            self.xfs_cil_committed(&fs, lvs);
            fs.xfs.next_log_work_ns += super::xfs::log_work_period_ns(fs.cfg.xfssyncd_centisecs);
        }
        self.fs = Some(fs);
    }

    /// Make the filesystem's state current at `at`: XFS's finished cluster writes and due
    /// checkpoints, ext4's due journal commits.
    pub fn fs_catch_up(&mut self, at: u64) {
        self.xfs_catch_up(at);
        self.jbd2_catch_up(at);
    }

    /// `open(O_CREAT)` + `close` of a new file in directory `dir` (XFS: the directory's
    /// allocation group is `dir % ags`; ext4: its block group): a dentry and an inode from
    /// the slab with `gfp` (the workload's metadata allocation context: GFP_NOFS inside a
    /// transaction or under a filesystem lock), and what the filesystem allocates besides
    /// (`machine::fs::meta`): the inode's log item (XFS) or journal inode (ext4, a file with
    /// data), its block's buffer and a directory block when they are new, ext4's journal heads.
    /// XFS logs the inode. With `data` (first page, pages) the file has that range of the
    /// page cache's address space. Returns the file's number; `Err(Retry)` when the log is
    /// full (the caller waits and tries again), or the allocation's failure.
    pub fn fs_create(
        &mut self,
        dir: u32,
        gfp: Gfp,
        data: (u32, u32),
        t: &mut TaskCtx,
    ) -> Result<u32, Access> {
        let at = self.now + t.cost_ns;
        self.fs_catch_up(at);
        let fs = self.fs.as_mut().expect("a filesystem is mounted");
        let xfs = fs.cfg.fs_type == FsType::Xfs;
        if xfs && !fs.log_space_available() {
            // xlog_grant_head_wait: push the AIL and sleep until a write frees space.
            fs.xfs_ail_push_all();
            fs.stats.log_space_waits += 1;
            let until = fs.xfs.io.next_done().unwrap_or(at + fs.cfg.aild_period_ns);
            let wait = until.saturating_sub(at).max(1);
            fs.stats.log_space_wait_ns += wait;
            return Err(Access::Retry(wait));
        }
        let ag = dir % fs.xfs.ags.len() as u32;
        // ext4 looks up and holds its blocks first: reclaim cannot take them from the plan.
        let (held, plan) = if xfs {
            (None, fs.plan_create(ag, dir))
        } else {
            let (h, journal_heads) = self.ext4_create_begin(ag, dir, t)?;
            let plan = super::meta::MetaPlan {
                item: data.1 > 0,
                journal_heads,
                ..Default::default()
            };
            (Some(h), plan)
        };
        let reserve = self.fs_create_alloc(plan, gfp, t);
        let (reserve, dm, im) = match reserve {
            Ok(r) => r,
            Err(a) => {
                if let Some(h) = held {
                    self.bdev_put(h);
                }
                return Err(a);
            }
        };
        let mut fs = self.fs.take().expect("a filesystem is mounted");
        t.cost_ns += fs.cfg.create_ns;
        let file = fs.files.len() as u32;
        let filling = fs.filling_cluster(ag);
        let ino = fs.xfs_ialloc(ag, file, XfsState::Clean, im);
        let dentry = fs.dcache.d_alloc(ino, file, dm);
        fs.files.push(FileEnt {
            ino,
            dentry,
            data: data.0,
            npages: data.1,
            ag,
        });
        self.fs_attach(&mut fs, reserve, ino, Some(dir), filling);
        if xfs {
            // The commit, once the inode holds its log buffer (fs_attach): a checkpoint it
            // triggers frees that buffer with the others.
            fs.xfs_trans_log_inode(ino);
            let lvs = fs.xlog_cil_push_background();
            self.xfs_cil_committed(&fs, lvs);
        }
        // close: the dentry's last reference goes; it keeps the inode pinned in memory.
        fs.dcache.dput(dentry);
        fs.stats.creates += 1;
        self.fs = Some(fs);
        if let Some(h) = held {
            self.ext4_create_end(ag, file, h);
        }
        Ok(file)
    }

    /// A create's dentry, inode and what `plan` needs, with the memcgs the dentry and the
    /// inode were charged to; on failure nothing is kept.
    fn fs_create_alloc(
        &mut self,
        plan: super::meta::MetaPlan,
        gfp: Gfp,
        t: &mut TaskCtx,
    ) -> Result<(super::meta::Reserve, CounterId, CounterId), Access> {
        let fs = self.fs.as_ref().expect("a filesystem is mounted");
        let (dcache, icache) = (fs.dentry_cache, fs.inode_cache);
        // The inode's memcg charge: XFS's `xfs_inode_alloc` may not fail (__GFP_NOFAIL),
        // ext4's `ext4_alloc_inode` is GFP_NOFS.
        let icharge = match fs.cfg.fs_type {
            FsType::Xfs => gfp | __GFP_NOFAIL,
            FsType::Ext4 => GFP_NOFS,
        };
        let dm = self.kmem_cache_alloc(dcache, gfp, t)?;
        let im = match self.kmem_cache_alloc_charge(icache, gfp, icharge, t) {
            Ok(m) => m,
            Err(a) => {
                self.kmem_cache_free_memcg(dcache, dm, 1);
                return Err(a);
            }
        };
        match self.fs_reserve(plan, gfp, t) {
            Ok(r) => Ok((r, dm, im)),
            Err(a) => {
                self.kmem_cache_free_memcg(icache, im, 1);
                self.kmem_cache_free_memcg(dcache, dm, 1);
                Err(a)
            }
        }
    }

    /// Files that exist on disk but are not cached (a data set present before the run):
    /// `n` files of `pages` pages each from `data_base`, spread over the AGs.
    pub fn fs_add_cold_files(&mut self, n: u32, data_base: u32, pages: u32) -> u32 {
        let fs = self.fs.as_mut().expect("a filesystem is mounted");
        let first = fs.files.len() as u32;
        let ags = fs.xfs.ags.len() as u32;
        for k in 0..n {
            fs.files.push(FileEnt {
                ino: NONE,
                dentry: NONE,
                data: if pages > 0 {
                    data_base + k * pages
                } else {
                    NONE
                },
                npages: pages,
                ag: (first + k) % ags,
            });
        }
        first
    }

    /// Path lookup and open of `file` (`d_lookup` / `xfs_lookup` → `xfs_iget`): the dentry
    /// is held until [`fs_close`](Self::fs_close). A cached dentry is a hit; an inode still in
    /// memory gets a new dentry (an XFS-reclaimable one is recycled); otherwise the inode is
    /// read from disk, and the result is `Ok(Some(t))`: the caller waits until `t`. ext4
    /// reads the blocks it needs (the directory block of the entry, the inode's block) only
    /// when they are not in the block device's page cache (`bdev.rs`).
    pub fn fs_open(&mut self, file: u32, t: &mut TaskCtx) -> Result<Option<u64>, Access> {
        let at = self.now + t.cost_ns;
        self.fs_catch_up(at);
        let fs = self.fs.as_mut().expect("a filesystem is mounted");
        let f = fs.files[file as usize];
        if f.dentry != NONE {
            fs.dcache.dget(f.dentry);
            fs.dcache.d[f.dentry as usize].referenced = true;
            fs.stats.lookups_cached += 1;
            return Ok(None);
        }
        let (dcache, icache) = (fs.dentry_cache, fs.inode_cache);
        let icharge = match fs.cfg.fs_type {
            FsType::Xfs => GFP_KERNEL | __GFP_NOFAIL,
            FsType::Ext4 => GFP_NOFS,
        };
        let ext4 = fs.cfg.fs_type == FsType::Ext4;
        let (mut held, mut done) = if ext4 {
            let (h, d) = self.ext4_lookup_dir(file, t)?;
            (Some(h), d)
        } else {
            (None, None)
        };
        let put = |m: &mut Machine, held: Option<super::bdev::Held>| {
            if let Some(h) = held {
                m.bdev_put(h);
            }
        };
        let dm = match self.kmem_cache_alloc(dcache, GFP_KERNEL, t) {
            Ok(m) => m,
            Err(a) => {
                put(self, held);
                return Err(a);
            }
        };
        // The allocation may have reclaimed this file's inode: look again.
        let fs = self.fs.as_ref().expect("mounted");
        let cold = fs.files[file as usize].ino == NONE;
        let ag = fs.files[file as usize].ag;
        let mut reserve = None;
        let mut im = ROOT_COUNTER;
        if cold {
            im = match self.kmem_cache_alloc_charge(icache, GFP_KERNEL, icharge, t) {
                Ok(m) => m,
                Err(a) => {
                    self.kmem_cache_free_memcg(dcache, dm, 1);
                    put(self, held);
                    return Err(a);
                }
            };
            if let Some(h) = held {
                match self.ext4_iget_block(file, h, done, t) {
                    Ok((h, d)) => (held, done) = (Some(h), d),
                    Err(a) => {
                        self.kmem_cache_free_memcg(icache, im, 1);
                        self.kmem_cache_free_memcg(dcache, dm, 1);
                        return Err(a);
                    }
                }
            }
            // Reading the inode reads its block: a buffer unless it is in memory.
            let plan = self.fs.as_ref().expect("mounted").plan_read(ag);
            match self.fs_reserve(plan, GFP_KERNEL, t) {
                Ok(r) => reserve = Some(r),
                Err(a) => {
                    self.kmem_cache_free_memcg(icache, im, 1);
                    self.kmem_cache_free_memcg(dcache, dm, 1);
                    put(self, held);
                    return Err(a);
                }
            }
        }
        let at = self.now + t.cost_ns;
        let mut fs = self.fs.take().expect("a filesystem is mounted");
        let f = fs.files[file as usize];
        let mut wait = None;
        if fs.cfg.fs_type == FsType::Xfs {
            fs.stats.xs_ig_attempts += 1;
            if reserve.is_some() {
                fs.stats.xs_ig_missed += 1;
            } else {
                fs.stats.xs_ig_found += 1;
            }
        }
        let ino = if let Some(r) = reserve {
            fs.stats.lookups_cold += 1;
            if !ext4 {
                wait = Some(fs.xfs.io.read(at, fs.cfg.io_latency_ns));
            }
            let filling = fs.filling_cluster(f.ag);
            let ino = fs.xfs_ialloc(f.ag, file, XfsState::Clean, im);
            self.fs_attach(&mut fs, r, ino, None, filling);
            ino
        } else {
            let i = fs.icache.i[f.ino as usize];
            if i.vfs == VfsState::Reclaimable {
                fs.xfs_iget_recycle(f.ino);
            } else {
                fs.icache.iget(f.ino);
                fs.icache.i[f.ino as usize].referenced = true;
            }
            fs.stats.lookups_recycled += 1;
            f.ino
        };
        let dentry = fs.dcache.d_alloc(ino, file, dm);
        let fe = &mut fs.files[file as usize];
        fe.ino = ino;
        fe.dentry = dentry;
        self.fs = Some(fs);
        if let Some(h) = held {
            self.bdev_put(h);
            wait = done;
        }
        Ok(wait)
    }

    /// `close` of a file opened with [`fs_open`](Self::fs_open).
    pub fn fs_close(&mut self, file: u32) {
        let fs = self.fs.as_mut().expect("a filesystem is mounted");
        let d = fs.files[file as usize].dentry;
        fs.dcache.dput(d);
    }
}
