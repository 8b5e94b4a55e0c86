//! The superblock shrinker (`fs/super.c`: `super_cache_count`, `super_cache_scan`;
//! mechanisms §A.5): one shrinker per filesystem over its dentry LRU, its inode LRU and the
//! filesystem's own cached objects (XFS: inodes tagged reclaimable). A scan splits its batch
//! in proportion to the three, prunes dentries (which unpins inodes), then inodes (which
//! hands them to XFS), then calls XFS reclaim.
//!
//! The shrinker is memcg-aware (`SHRINKER_MEMCG_AWARE`, as every superblock's in 6.1): a call
//! for memcg `sc.memcg` counts and prunes only that memcg's dentry and inode lists (the root's
//! call: the objects charged to no memcg). XFS's part is not per memcg in 6.1:
//! `xfs_fs_nr_cached_objects` counts, and `xfs_fs_free_cached_objects` reclaims, the whole
//! filesystem's reclaimable inodes in every memcg's call.

use super::dcache::DentryIsolate;
use super::inode::InodeIsolate;
use super::{Filesystem, FsType, NONE};
use crate::machine::page_counter::CounterId;
use crate::machine::shrinker::{ShrinkControl, ShrinkerOps, SHRINK_EMPTY, SHRINK_STOP};
use crate::machine::vmstat::VmEvent;
use crate::machine::Machine;

/// The registered superblock shrinker of the machine's filesystem (`sb->s_shrink`).
#[derive(Debug)]
pub struct SuperShrinker;

impl ShrinkerOps for SuperShrinker {
    fn scan_symbol(&self) -> &'static str {
        "super_cache_scan+0x0/0x1a0"
    }

    fn memcg_aware(&self) -> bool {
        true
    }

    fn memcg_bit(&self, m: &Machine, memcg: CounterId) -> bool {
        m.fs.as_ref()
            .is_some_and(|fs| fs.dcache.lru.bit(memcg) || fs.icache.lru.bit(memcg))
    }

    fn clear_memcg_bit(&mut self, m: &mut Machine, memcg: CounterId) {
        if let Some(fs) = m.fs.as_mut() {
            fs.dcache.lru.clear_bit(memcg);
            fs.icache.lru.clear_bit(memcg);
        }
    }

    fn count_objects(&mut self, m: &mut Machine, sc: &mut ShrinkControl) -> u64 {
        let Some(fs) = m.fs.as_ref() else {
            return 0;
        };
        // The seed 002 patch: a caller that cannot enter the filesystem is told up front.
        if !sc.may_enter_fs() {
            sc.will_defer = true;
        }
        let total =
            fs.xfs.nr_reclaimable + fs.dcache.lru.count(sc.memcg) + fs.icache.lru.count(sc.memcg);
        if total == 0 {
            return SHRINK_EMPTY;
        }
        // vfs_pressure_ratio: mult_frac(total, vfs_cache_pressure, 100).
        total * fs.vfs_cache_pressure / 100
    }

    fn scan_objects(&mut self, m: &mut Machine, sc: &mut ShrinkControl) -> u64 {
        if !sc.may_enter_fs() {
            return SHRINK_STOP;
        }
        let Some(mut fs) = m.fs.take() else {
            return SHRINK_STOP;
        };
        let clock = sc.clock + m.shrink_cost_ns;
        fs.xfs_buf_ioend(clock);
        let d = fs.dcache.lru.count(sc.memcg);
        let i = fs.icache.lru.count(sc.memcg);
        let f = fs.xfs.nr_reclaimable;
        let total = d + i + f + 1;
        let nr = sc.nr_to_scan;
        let dentries = nr * d / total;
        let inodes = nr * i / total;
        let objects = nr * f / total;
        let mut freed = m.prune_dcache_sb(&mut fs, dentries + 1, sc.memcg);
        freed += m.prune_icache_sb(&mut fs, inodes + 1, sc.kswapd, sc.memcg);
        if f > 0 {
            let clock = sc.clock + m.shrink_cost_ns;
            let w = m.xfs_reclaim_inodes_nr(&mut fs, objects + 1, sc.kswapd, clock);
            m.shrink_cost_ns += w.cpu_ns + w.sleep_ns;
            m.shrink_sleep_ns += w.sleep_ns;
        }
        m.fs = Some(fs);
        freed
    }
}

impl Machine {
    /// `prune_dcache_sb`: walk `nr` dentries of memcg `memcg`'s LRU; a freed dentry drops its
    /// inode's reference and its memcg charge. Returns dentries freed.
    pub fn prune_dcache_sb(&mut self, fs: &mut Filesystem, nr: u64, memcg: CounterId) -> u64 {
        let mut freed = 0;
        for _ in 0..nr {
            self.shrink_cost_ns += fs.cfg.dentry_scan_ns;
            match fs.dcache.isolate_one(memcg) {
                DentryIsolate::Empty => break,
                DentryIsolate::Removed | DentryIsolate::Rotated => {}
                DentryIsolate::Freed { inode, file } => {
                    if file != NONE {
                        fs.files[file as usize].dentry = NONE;
                    }
                    fs.icache.iput(inode);
                    // On memcg's list: charged to it.
                    self.kmem_cache_free_memcg(fs.dentry_cache, memcg, 1);
                    self.shrink_cost_ns += fs.cfg.free_object_ns;
                    fs.stats.dentries_pruned += 1;
                    freed += 1;
                }
            }
        }
        freed
    }

    /// `prune_icache_sb`: walk `nr` inodes of memcg `memcg`'s LRU; drop the page cache of
    /// those that have some (`kswapd_inodesteal` / `pginodesteal`, counted as reclaimed slab),
    /// evict the rest to XFS reclaim. Returns inodes evicted.
    pub fn prune_icache_sb(
        &mut self,
        fs: &mut Filesystem,
        nr: u64,
        kswapd: bool,
        memcg: CounterId,
    ) -> u64 {
        let mut freed = 0;
        for _ in 0..nr {
            self.shrink_cost_ns += fs.cfg.inode_scan_ns;
            let files = &fs.files;
            let pte = &self.pte;
            let outcome = fs.icache.isolate_one(memcg, |i| {
                let f = files[i.file as usize];
                if f.data == NONE {
                    return 0;
                }
                (f.data..f.data + f.npages)
                    .filter(|&vp| crate::machine::pte::pte_present(pte[vp as usize]))
                    .count() as u64
            });
            match outcome {
                InodeIsolate::Empty => break,
                InodeIsolate::Removed | InodeIsolate::Rotated => {}
                InodeIsolate::Invalidated(_) => {
                    let ino = fs
                        .icache
                        .lru
                        .front(memcg)
                        .expect("the inode is at the head");
                    let f = fs.files[fs.icache.i[ino as usize].file as usize];
                    let reap = self.invalidate_mapping_pages(f.data, f.npages);
                    if reap == 0 {
                        // Pages it cannot drop (dirty, under writeback): not shrinkable now.
                        fs.icache.remove_head(memcg);
                        continue;
                    }
                    let ev = if kswapd {
                        VmEvent::KswapdInodesteal
                    } else {
                        VmEvent::Pginodesteal
                    };
                    self.vm.add(ev, reap);
                    self.reclaimed_slab += reap;
                    self.shrink_cost_ns += reap * self.cfg.cost.free_page_ns;
                }
                InodeIsolate::Evicted(ino) => {
                    match fs.cfg.fs_type {
                        FsType::Xfs => fs.xfs_inode_mark_reclaimable(ino),
                        FsType::Ext4 => self.fs_inode_free(fs, ino),
                    }
                    fs.stats.inodes_evicted += 1;
                    freed += 1;
                }
            }
        }
        freed
    }
}

impl Machine {
    /// Mount the filesystem (`mount_bdev` + `xfs_fs_fill_super`): its slab caches, AGs and
    /// log, and its superblock shrinker, registered after any the machine already has.
    pub fn mount_fs(&mut self, cfg: super::FsConfig, vfs_cache_pressure: u64) {
        use crate::machine::shrinker::ShrinkerParams;
        let frag = cfg.slab_fragmentation;
        let inode_cache = match cfg.fs_type {
            FsType::Xfs => self.kmem_cache_create("xfs_inode", cfg.inode_size, true, frag),
            FsType::Ext4 => {
                self.kmem_cache_create("ext4_inode_cache", cfg.ext4_inode_size, true, frag)
            }
        };
        let dentry_cache = self.kmem_cache_create("dentry", cfg.dentry_size, true, frag);
        // SLAB_ACCOUNT in 6.1: the dentry cache and both filesystems' inode caches.
        self.slab.caches[dentry_cache].account = true;
        self.slab.caches[inode_cache].account = true;
        let meta = self.fs_meta_caches(&cfg);
        let params = ShrinkerParams {
            batch: cfg.shrinker_batch,
            seeks: cfg.shrinker_seeks,
        };
        let mut xfs = super::xfs::XfsMount {
            io: super::xfs::xfs_buf::ClusterIo::new(cfg.io_queue_depth),
            next_checkpoint_ns: cfg.cil_interval_ns,
            ..Default::default()
        };
        xfs.ags
            .resize_with(cfg.ags.max(1) as usize, Default::default);
        self.fs = Some(Box::new(Filesystem {
            cfg,
            dcache: Default::default(),
            icache: Default::default(),
            xfs,
            dentry_cache,
            inode_cache,
            meta,
            vfs_cache_pressure,
            stats: Default::default(),
            files: Vec::new(),
        }));
        let name = match self.fs.as_ref().map(|f| f.cfg.fs_type) {
            Some(FsType::Ext4) => "sb-ext4",
            _ => "sb-xfs",
        };
        self.shrinkers
            .register(name, params, Box::new(SuperShrinker));
    }
}
