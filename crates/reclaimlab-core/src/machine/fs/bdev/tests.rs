//! ext4's metadata blocks as the block device's page cache: reclaim evicts them when clean
//! and free, activates them while held or journalled, and a block read again is a refault.

use super::Held;
use crate::machine::fs::{FsConfig, FsType, NONE};
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::lru::{LRU_ACTIVE_FILE, LRU_INACTIVE_FILE};
use crate::machine::page_counter::ROOT_COUNTER;
use crate::machine::pte::{pte_present, pte_shadow, SHADOW_NONE};
use crate::machine::vmscan::ScanControl;
use crate::machine::vmstat::VmEvent;
use crate::machine::{Access, Machine, TaskCtx, MAX_NR_ZONES};

/// A 256 MiB machine with swap and ext4 (2 block groups, 16 inodes per inode-table block,
/// 64 entries per directory block, reads of 5 ms).
fn ext4_machine() -> Machine {
    let text = "name = \"t\"\n[host]\nram = \"256MiB\"\n[swap]\nsize = \"64MiB\"\n\
                [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
    let mut m = super::super::tests::host_machine(text);
    m.mount_fs(
        FsConfig {
            fs_type: FsType::Ext4,
            ..super::super::tests::config()
        },
        100,
    );
    m
}

/// `n` empty files created in directory 0 (block group 0).
fn create(m: &mut Machine, n: u32) {
    let mut t = TaskCtx::default();
    for _ in 0..n {
        m.fs_create(0, GFP_KERNEL, (NONE, 0), &mut t).unwrap();
    }
}

/// An ext4 machine with `n` files created in directory 0 and the transaction committed.
fn committed_files(n: u32) -> Machine {
    let mut m = ext4_machine();
    create(&mut m, n);
    let commit = m.fs.as_ref().unwrap().cfg.journal_commit_ns;
    m.jbd2_catch_up(commit);
    m
}

/// One reclaim pass over the whole file LRU: deactivate the active list, then shrink the
/// inactive one. Returns the pages reclaimed.
fn reclaim_file(m: &mut Machine) -> u64 {
    let mut sc = ScanControl::new(GFP_KERNEL, 0, MAX_NR_ZONES - 1, u64::MAX, false);
    m.shrink_active_list(1 << 20, LRU_ACTIVE_FILE, &mut sc);
    m.shrink_inactive_list(1 << 20, LRU_INACTIVE_FILE, &mut sc)
}

fn buffer_heads(m: &Machine) -> u64 {
    m.slab.caches[m.bdev.as_ref().unwrap().buf_cache].objects
}

fn vpage(m: &Machine, b: u32) -> u32 {
    m.bdev.as_ref().unwrap().vpage(b)
}

/// Evict every dentry and inode (ext4 frees an evicted inode at once).
fn evict_inodes(m: &mut Machine) {
    let mut fs = m.fs.take().unwrap();
    m.prune_dcache_sb(&mut fs, u64::MAX >> 1, ROOT_COUNTER);
    m.prune_icache_sb(&mut fs, u64::MAX >> 1, true, ROOT_COUNTER);
    assert_eq!(fs.icache.nr_inodes, 0);
    m.fs = Some(fs);
}

/// 32 files: two inode-table blocks (inodes 0-15, 16-31 of group 0) and one directory
/// block, each a page of the device's cache with a buffer_head, dirtied by the running
/// transaction (a journal head each). Reclaim cannot take them before the commit (it
/// activates them), and takes all three after it, leaving shadows.
#[test]
fn journalled_blocks_are_kept_until_the_commit_then_evicted() {
    let mut m = ext4_machine();
    create(&mut m, 32);
    let jh = m.fs.as_ref().unwrap().meta.journal_head_cache.unwrap();
    assert_eq!(m.nr_blockdev_pages(), 3);
    assert_eq!(buffer_heads(&m), 3);
    assert_eq!(m.slab.caches[jh].objects, 3);
    assert_eq!(m.stat.nr_file_pages, 3, "the device's pages are page cache");
    assert_eq!(m.bdev.as_ref().unwrap().dirty.len(), 3);
    m.bdev_check().unwrap();
    // The inode blocks were used 16 times each, the directory block 32: all active.
    assert_eq!(m.lruvec.size(LRU_ACTIVE_FILE), 3);
    let activate0 = m.vm.get(VmEvent::Pgactivate);
    assert_eq!(
        reclaim_file(&mut m),
        0,
        "journalled blocks are not reclaimed"
    );
    let bd = m.bdev.as_ref().unwrap();
    assert_eq!((bd.nr_pages, bd.stats.busy, bd.stats.released), (3, 3, 0));
    assert_eq!(m.vm.get(VmEvent::Pgactivate) - activate0, 3, "activated");
    assert_eq!(m.lruvec.size(LRU_ACTIVE_FILE), 3);

    let commit = m.fs.as_ref().unwrap().cfg.journal_commit_ns;
    m.jbd2_catch_up(commit);
    assert_eq!(m.slab.caches[jh].objects, 0);
    assert!(m.bdev.as_ref().unwrap().dirty.is_empty());
    assert_eq!(reclaim_file(&mut m), 3);
    assert_eq!(m.nr_blockdev_pages(), 0);
    assert_eq!(
        buffer_heads(&m),
        0,
        "the buffer_heads went with their pages"
    );
    assert_eq!(m.stat.nr_file_pages, 0);
    for b in 0..3 {
        let pte = m.pte[vpage(&m, b) as usize];
        assert!(
            !pte_present(pte) && pte_shadow(pte) != SHADOW_NONE,
            "block {b}"
        );
    }
    assert_eq!(m.bdev.as_ref().unwrap().stats.released, 3);
    m.bdev_check().unwrap();
    // The check sees a count that does not match the pages.
    m.bdev.as_mut().unwrap().nr_pages += 1;
    assert!(m.bdev_check().is_err());
}

/// After the blocks were evicted and the inodes too, a stat of file 0 reads its directory
/// block and then its inode-table block back (5 ms each, one after the other): two file
/// refaults, both activated (their refault distances, 1 to 3 evictions, are within the
/// workingset: with swap, the 256 anonymous pages count), `pgpgin` 8 kB. File 1 is in the
/// same blocks: no read.
#[test]
fn an_evicted_block_read_again_is_a_refault() {
    let mut m = committed_files(32);
    assert_eq!(reclaim_file(&mut m), 3);
    evict_inodes(&mut m);
    // 256 anonymous pages: with swap, the workingset a file refault is measured against.
    let task = m.add_task("a", 0);
    let r = m.add_region(task, 256, true).unwrap();
    let base = m.regions[r].base;
    let mut t = TaskCtx {
        task,
        ..TaskCtx::default()
    };
    for vp in base..base + 256 {
        assert_eq!(m.anon_access(vp, true, &mut t), Access::Done);
    }
    assert_eq!(m.stat.nr_anon_pages, 256);
    let (refault0, activate0) = (m.stat.workingset_refault[1], m.stat.workingset_activate[1]);
    let pgpgin0 = m.vm.get(VmEvent::Pgpgin);
    let mut t = TaskCtx::default();
    let at = m.now;
    let wait = m.fs_open(0, &mut t).unwrap();
    m.fs_close(0);
    let latency = m.fs.as_ref().unwrap().cfg.io_latency_ns;
    assert_eq!(wait, Some(at + 2 * latency));
    assert_eq!(m.stat.workingset_refault[1] - refault0, 2);
    assert_eq!(m.stat.workingset_activate[1] - activate0, 2);
    assert_eq!(m.vm.get(VmEvent::Pgpgin) - pgpgin0, 8);
    assert_eq!((m.nr_blockdev_pages(), buffer_heads(&m)), (2, 2));
    assert_eq!(m.bdev.as_ref().unwrap().stats.reads, 2);
    assert_eq!(
        m.fs_open(1, &mut t).unwrap(),
        None,
        "its blocks are in memory"
    );
    m.fs_close(1);
    assert_eq!(m.bdev.as_ref().unwrap().stats.reads, 2);
    // Nothing is held once the lookups are over.
    assert!(m.bdev.as_ref().unwrap().blocks.iter().all(|b| b.count == 0));
}

/// A block an operation holds (`b_count`) is activated by reclaim, not evicted; once let go
/// it is evicted like the others. `drop_caches` frees clean free blocks with their buffers.
#[test]
fn a_held_block_is_not_reclaimed() {
    let mut m = committed_files(32);
    // Hold the directory block (device block 1: the inode block was looked up first).
    let mut t = TaskCtx::default();
    assert_eq!(m.bdev_getblk(1, false, 0, &mut t).unwrap(), None);
    let held = Held {
        inode: NONE,
        dir: 1,
    };
    assert_eq!(reclaim_file(&mut m), 2, "the two inode-table blocks");
    let bd = m.bdev.as_ref().unwrap();
    assert_eq!((bd.nr_pages, bd.stats.busy), (1, 1));
    assert!(pte_present(m.pte[vpage(&m, 1) as usize]));
    m.bdev_put(held);
    assert_eq!(m.drop_pagecache(), 1);
    assert_eq!((m.nr_blockdev_pages(), buffer_heads(&m)), (0, 0));
    assert_eq!(m.stat.nr_file_pages, 0);
}

/// The order a create follows: it holds its blocks before its other allocations, so the
/// reclaim those enter (here the journal heads' new slab page, with memory at the min
/// watermark and only the device's pages on the LRU) activates the held blocks and evicts
/// the others. 32 files and a commit leave three clean blocks (0: inode-table block 0, 1: the
/// directory block, 2: inode-table block 1); file 32 starts inode-table block 2 (device block
/// 3, a new page) and adds its entry to block 1.
#[test]
fn a_create_keeps_its_blocks_through_the_reclaim_its_allocations_enter() {
    let text = "name = \"t\"\n[host]\nram = \"64MiB\"\npcp_lists = false\n\
                [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
    let mut m = super::super::tests::host_machine(text);
    let cfg = FsConfig {
        fs_type: FsType::Ext4,
        ..super::super::tests::config()
    };
    // No superblock shrinking: reclaim can free nothing but the device's pages.
    m.mount_fs(cfg.clone(), 0);
    create(&mut m, 32);
    m.jbd2_catch_up(cfg.journal_commit_ns);
    let jh = m.fs.as_ref().unwrap().meta.journal_head_cache.unwrap();
    assert_eq!(
        m.slab.caches[jh].nr_slabs(),
        0,
        "the commit emptied the journal heads"
    );
    // One movable page (the new block's) passes the min watermark; the next allocation not.
    m.leave_one_movable_page();
    let mut t = TaskCtx::default();
    let file = m.fs_create(0, GFP_KERNEL, (NONE, 0), &mut t).unwrap();
    assert_eq!(file, 32);
    assert!(
        m.vm.get(VmEvent::PgstealDirect) >= 1,
        "the create reclaimed"
    );
    let bd = m.bdev.as_ref().unwrap();
    assert!(bd.stats.busy >= 1, "a held block met: {:?}", bd.stats);
    for b in [1, 3] {
        assert!(pte_present(m.pte[vpage(&m, b) as usize]), "block {b}");
        assert!(bd.blocks[b as usize].jdirty, "block {b}");
    }
    assert!(bd.stats.released >= 1, "{:?}", bd.stats);
    assert_eq!(m.slab.caches[jh].objects, 2);
    m.bdev_check().unwrap();
}
