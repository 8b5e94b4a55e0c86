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
            next_log_work_ns: super::xfs::log_work_period_ns(cfg.xfssyncd_centisecs),
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

/// The filesystem's objects under memory cgroups: dentries and inodes charged to the creating
/// task's memcg (`memcontrol/kmem.rs`), each on its memcg's list (`list_lru.rs`), and the
/// superblock shrinker run per memcg (`shrinker.rs`, `vmscan/memcg.rs`).
///
/// Worked figures: a dentry costs its memcg 192 + 8 = 200 bytes (slot and obj_cgroup pointer),
/// an `xfs_inode` 1024 + 8 = 1032. The stock
/// keeps every byte of the pages charged, and a page is charged only when the stock cannot
/// cover an object, so after allocating B bytes (objects of at most a page) a memcg has charged
/// exactly ceil(B / 4096) pages.
#[cfg(test)]
mod tests {
    use crate::machine::fs::tests::config;
    use crate::machine::fs::FsType;
    use crate::machine::gfp::{GFP_KERNEL, GFP_NOFS};
    use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
    use crate::machine::vmscan::ScanControl;
    use crate::machine::{Machine, TaskCtx, PAGE_SIZE};

    const A: CounterId = 1;
    const B: CounterId = 2;
    const C: CounterId = 3;

    /// A 256 MiB machine with memcgs a, b and c under the root and a filesystem of `fs_type`;
    /// task 1 runs in a, task 2 in b, task 0 in the root.
    fn machine(fs_type: FsType) -> Machine {
        let text = "name = \"t\"\n[host]\nram = \"256MiB\"\n[policy]\nxfs_reclaim = \"X3\"\n\
                    shrinker = \"v61\"\n[[cgroup]]\nname = \"a\"\n[[cgroup]]\nname = \"b\"\n\
                    [[cgroup]]\nname = \"c\"\n[[workload]]\nname = \"w\"\n\
                    anon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        m.setup_memcg(&scn.cgroups).unwrap();
        let mc = m.memcg.as_mut().unwrap();
        assert_eq!(
            (mc.id_of("a"), mc.id_of("b"), mc.id_of("c")),
            (Some(A), Some(B), Some(C))
        );
        mc.set_task_memcg(1, A);
        mc.set_task_memcg(2, B);
        m.mount_fs(
            crate::machine::fs::FsConfig {
                fs_type,
                ..config()
            },
            100,
        );
        m
    }

    fn create(m: &mut Machine, task: usize, n: u32) {
        let mut t = TaskCtx {
            task,
            ..Default::default()
        };
        for k in 0..n {
            m.fs_create(k % 2, GFP_KERNEL, (crate::machine::fs::NONE, 0), &mut t)
                .unwrap();
        }
    }

    fn usage(m: &Machine, id: CounterId) -> u64 {
        m.memcg.as_ref().unwrap().memory.get(id).usage
    }

    fn stat(m: &Machine, id: CounterId, key: &str) -> u64 {
        let mc = m.memcg.as_ref().unwrap();
        crate::observe::memcg::memory_stat(mc, m, id)
            .into_iter()
            .find(|(k, _)| *k == key)
            .unwrap()
            .1
    }

    #[test]
    fn a_memcgs_creates_charge_its_dentries_and_inodes_and_a_root_tasks_charge_nothing() {
        let mut m = machine(FsType::Xfs);
        create(&mut m, 1, 100);
        // 100 dentries and 100 XFS inodes: 100 * (200 + 1032) = 123,200 bytes, 31 pages.
        let bytes = 100 * (200 + 1032);
        assert_eq!(bytes, 123_200);
        assert_eq!(usage(&m, A), 31);
        assert_eq!(stat(&m, A, "slab_reclaimable"), 123_200);
        assert_eq!(stat(&m, A, "slab_unreclaimable"), 0);
        assert_eq!(stat(&m, A, "slab"), 123_200);
        assert_eq!(stat(&m, A, "kernel"), 31 * PAGE_SIZE);
        // The XFS log items and buffers created with them are not SLAB_ACCOUNT: no one's.
        assert_eq!(usage(&m, B), 0);
        // A root task's objects are charged to no memcg and wait on the root's list.
        create(&mut m, 0, 50);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(
            (fs.dcache.lru.count(ROOT_COUNTER), fs.dcache.lru.count(A)),
            (50, 100)
        );
        assert_eq!(usage(&m, A), 31);
        assert_eq!(m.memcg.as_ref().unwrap().kmem[0].objects, 0);
        // Freed by whoever frees them, the objects go back to their memcg: drop_caches empties
        // every memcg's lists; the stock keeps at most a page.
        crate::machine::fs::tests::writeback_all(&mut m);
        m.drop_slab(0);
        assert_eq!(stat(&m, A, "slab"), 0);
        assert!(usage(&m, A) <= 1, "{}", usage(&m, A));
        assert_eq!(usage(&m, A) * PAGE_SIZE, stat(&m, A, "kernel"));
    }

    #[test]
    fn limit_reclaim_prunes_its_own_dentries_and_not_a_siblings() {
        let mut m = machine(FsType::Xfs);
        create(&mut m, 1, 1000);
        create(&mut m, 2, 600);
        let before_a = usage(&m, A);
        let before_b = (usage(&m, B), stat(&m, B, "slab"));
        let mut t = TaskCtx {
            task: 1,
            ..Default::default()
        };
        let got = m.try_to_free_mem_cgroup_pages(A, 64, &mut t);
        assert!(got > 0);
        let fs = m.fs.as_ref().unwrap();
        // a's dentries were pruned (their inodes now on a's inode list, or evicted to XFS); b's
        // all stay.
        assert!(fs.dcache.lru.count(A) < 1000, "{}", fs.dcache.lru.count(A));
        assert_eq!(fs.dcache.lru.count(B), 600);
        assert_eq!(fs.icache.lru.count(B), 0);
        let evicted = |id| {
            fs.icache
                .i
                .iter()
                .filter(|i| {
                    i.memcg == id && i.vfs == crate::machine::fs::inode::VfsState::Reclaimable
                })
                .count() as u64
        };
        assert_eq!(evicted(B), 0);
        assert_eq!(
            fs.icache.lru.count(A) + evicted(A),
            1000 - fs.dcache.lru.count(A)
        );
        assert_eq!((usage(&m, B), stat(&m, B, "slab")), before_b);
        // a's charge fell with its objects: 200 bytes a dentry gone.
        let pruned = 1000 - fs.dcache.lru.count(A);
        assert_eq!(stat(&m, A, "slab"), 1000 * 1232 - pruned * 200);
        assert!(usage(&m, A) < before_a);
        // The root's objects (none) and memcg c's (none) were not visited either: c has no bit.
        assert!(!fs.dcache.lru.bit(C) && fs.dcache.lru.bit(A) && fs.dcache.lru.bit(B));
    }

    #[test]
    fn global_reclaim_walks_every_memcg_and_prunes_each_ones_share() {
        let mut m = machine(FsType::Xfs);
        create(&mut m, 0, 300);
        create(&mut m, 1, 1000);
        create(&mut m, 2, 600);
        let hz = m.highest_managed_zone();
        let mut sc = ScanControl::new(GFP_KERNEL, 0, hz, 1 << 20, false);
        sc.priority = 0;
        sc.quantum_end = u64::MAX;
        let sb = m
            .shrinkers
            .list
            .iter()
            .position(|s| s.name == "sb-xfs")
            .unwrap();
        let calls = m.shrinkers.list[sb].stats.calls;
        m.shrink_node(&mut sc);
        // One shrink_slab per memcg visited with objects: the root, a and b (c has none, its bit
        // is clear, so the superblock shrinker is not called for it).
        assert_eq!(m.shrinkers.list[sb].stats.calls - calls, 3);
        // At priority 0 each memcg's call plans 2 * freeable: its own dentries, and XFS's
        // reclaimable inodes, which are the filesystem's (1 after the root's call, 2 after a's).
        // One batch splits its scan in proportion, nearly all of it dentries, and prunes every
        // one; the inode list gets `inodes + 1` = 1 look, which evicts one inode to XFS.
        let fs = m.fs.as_ref().unwrap();
        for (id, n) in [(ROOT_COUNTER, 300), (A, 1000), (B, 600)] {
            assert_eq!(fs.dcache.lru.count(id), 0, "memcg {id}");
            // The pruned dentries' inodes wait on the list of their own memcg.
            assert_eq!(fs.icache.lru.count(id), n - 1, "memcg {id}");
        }
        assert_eq!(fs.xfs.nr_reclaimable, 3);
        assert_eq!(stat(&m, A, "slab"), 1000 * 1032);
        assert_eq!(stat(&m, B, "slab"), 600 * 1032);
    }

    #[test]
    fn nr_deferred_is_kept_per_memcg() {
        let mut m = machine(FsType::Xfs);
        create(&mut m, 1, 1000);
        create(&mut m, 2, 500);
        // A NOFS caller cannot prune: at priority 0, v6.1 defers its whole plan, 2 * freeable,
        // into the memcg's own nr_deferred.
        m.shrink_slab(GFP_NOFS, A, 0, false, 0);
        m.shrink_slab(GFP_NOFS, B, 0, false, 0);
        let s = &mut m.shrinkers.list[0];
        assert_eq!(s.deferred_of(A).nr_deferred, 2000);
        assert_eq!(s.deferred_of(B).nr_deferred, 1000);
        assert_eq!(s.deferred_of(C).nr_deferred, 0);
        assert_eq!(s.deferred.nr_deferred, 0, "the root's own stays empty");
        // a's next GFP_KERNEL call at priority 1 takes a's backlog (2000 >> 1) beside its own
        // delta ((1000 >> 1) * 4 / 2), capped at 2 * freeable: b's backlog is untouched.
        m.shrink_slab(GFP_KERNEL, A, 1, false, 0);
        let s = &mut m.shrinkers.list[0];
        assert_eq!(s.deferred_of(B).nr_deferred, 1000);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(fs.dcache.lru.count(A), 0);
        assert_eq!(fs.dcache.lru.count(B), 500);
    }

    #[test]
    fn a_charge_over_memory_max_reclaims_the_memcgs_own_dentries() {
        // The root's task creates 300 files, whose dentries are then pruned: their inodes stay in
        // memory, charged to no memcg, on the root's inode list. a's task opens each file: only
        // a new dentry (GFP_KERNEL), charged to a, on a's list after the close. Two pages hold 40
        // of a's 200-byte dentries, so a's charges go through limit reclaim, which prunes a's own
        // dentries (their inodes go back to the root's list) and lets every open through.
        let mut m = machine(FsType::Xfs);
        create(&mut m, 2, 100);
        create(&mut m, 0, 300);
        let mut fs = m.fs.take().unwrap();
        assert_eq!(m.prune_dcache_sb(&mut fs, 300, ROOT_COUNTER), 300);
        m.fs = Some(fs);
        let b = (usage(&m, B), stat(&m, B, "slab"));
        m.memcg.as_mut().unwrap().memory.set_max(A, 2);
        let mut t = TaskCtx {
            task: 1,
            ..Default::default()
        };
        let first = 100;
        for f in first..first + 300 {
            assert_eq!(m.fs_open(f, &mut t), Ok(None), "file {f}");
            m.fs_close(f);
            assert!(usage(&m, A) <= 2, "{}", usage(&m, A));
        }
        let mc = m.memcg.as_ref().unwrap();
        assert!(mc.events[A as usize].hier.max > 0);
        assert_eq!(mc.events[A as usize].hier.oom, 0);
        let fs = m.fs.as_ref().unwrap();
        assert_eq!(fs.stats.lookups_recycled, 300);
        // a's reclaim pruned a's dentries: fewer than 300 are left, each charged 200 bytes.
        let left = fs.dcache.lru.count(A);
        assert!(left < 300 && fs.stats.dentries_pruned == 300 + (300 - left));
        assert_eq!(stat(&m, A, "slab"), left * 200);
        assert_eq!(stat(&m, A, "slab_unreclaimable"), 0);
        // The inodes stayed the root's, whoever unpinned them; b lost nothing.
        assert!(fs
            .icache
            .i
            .iter()
            .skip(100)
            .take(300)
            .all(|i| i.memcg == ROOT_COUNTER));
        assert_eq!(fs.icache.lru.count(A), 0);
        assert_eq!((usage(&m, B), stat(&m, B, "slab")), b);
        assert_eq!(fs.dcache.lru.count(B), 100);
    }
}
