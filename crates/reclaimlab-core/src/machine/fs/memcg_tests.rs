//! The filesystem's objects under memory cgroups: dentries and inodes charged to the creating
//! task's memcg (`memcontrol/kmem.rs`), each on its memcg's list (`list_lru.rs`), and the
//! superblock shrinker run per memcg (`shrinker.rs`, `vmscan/memcg.rs`).
//!
//! Worked figures: a dentry costs its memcg 192 + 8 = 200 bytes (slot and obj_cgroup pointer),
//! an `xfs_inode` 1024 + 8 = 1032, an `ext4_inode_cache` object 1176 + 8 = 1184. The stock
//! keeps every byte of the pages charged, and a page is charged only when the stock cannot
//! cover an object, so after allocating B bytes (objects of at most a page) a memcg has charged
//! exactly ceil(B / 4096) pages.

use super::tests::config;
use super::FsType;
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
        super::FsConfig {
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
        m.fs_create(k % 2, GFP_KERNEL, (super::NONE, 0), &mut t)
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
    super::tests::writeback_all(m.fs.as_mut().unwrap());
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
            .filter(|i| i.memcg == id && i.vfs == super::inode::VfsState::Reclaimable)
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
