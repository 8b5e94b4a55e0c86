//! Consistency checks of the slab caches and the filesystem model, run with the machine's
//! other invariants: every slab page is an allocated kernel frame held by exactly one cache,
//! no cache holds more objects than its pages fit, nor more pages than its objects need under
//! its fragmentation; LRU and reclaimable counts equal the objects flagged so; log space
//! equals the inodes not yet clean; every file points at a live inode and dentry. With
//! cgroups: each queued dentry and inode is on the list of the memcg it is charged to, and
//! each memcg's charged objects are the dentries and inodes charged to it.

use crate::machine::frames::FrameState;
use crate::machine::fs::inode::{VfsState, XfsState};
use crate::machine::fs::NONE;
use crate::machine::Machine;

pub fn check(node: &Machine) -> Result<(), String> {
    let mut held = std::collections::HashSet::new();
    for c in &node.slab.caches {
        if c.objects > c.nr_slabs() * c.objs_per_slab {
            return Err(format!(
                "slab {}: {} objects in {} slabs of {}",
                c.name,
                c.objects,
                c.nr_slabs(),
                c.objs_per_slab
            ));
        }
        // Allocations add only the page they need and frees trim to what the fragmentation
        // allows, so a cache never holds more: a page beyond that is lost to accounting.
        if c.nr_slabs() > c.min_pages(c.objects) {
            return Err(format!(
                "slab {}: {} slabs for {} objects (at most {})",
                c.name,
                c.nr_slabs(),
                c.objects,
                c.min_pages(c.objects)
            ));
        }
        for pfn in c.pages.iter().flat_map(|&p| p..p + (1 << c.order)) {
            if node.frames.state(pfn) != FrameState::Allocated {
                return Err(format!(
                    "slab {}: page {pfn} is not an allocated frame",
                    c.name
                ));
            }
            if !held.insert(pfn) {
                return Err(format!("slab page {pfn} held twice"));
            }
        }
    }
    let Some(fs) = node.fs.as_ref() else {
        return Ok(());
    };
    let d_lru = fs.dcache.d.iter().filter(|d| d.alive && d.on_lru).count() as u64;
    let queued = fs.dcache.lru.iter().count() as u64;
    if d_lru != fs.dcache.nr_lru || queued != d_lru || fs.dcache.lru.len() != queued {
        return Err(format!(
            "dentry LRU: {} counted, {} queued, {d_lru} flagged",
            fs.dcache.nr_lru, queued
        ));
    }
    let live = |i: &&crate::machine::fs::inode::Inode| i.vfs != VfsState::Free;
    let i_lru = fs.icache.i.iter().filter(live).filter(|i| i.on_lru).count() as u64;
    let queued = fs.icache.lru.iter().count() as u64;
    if i_lru != fs.icache.nr_lru || queued != i_lru || fs.icache.lru.len() != queued {
        return Err(format!(
            "inode LRU: {} counted, {} queued, {i_lru} flagged",
            fs.icache.nr_lru, queued
        ));
    }
    for (memcg, id) in fs.dcache.lru.iter() {
        if fs.dcache.d[id as usize].memcg != memcg {
            return Err(format!("dentry {id} on memcg {memcg}'s list, not its own"));
        }
    }
    for (memcg, id) in fs.icache.lru.iter() {
        if fs.icache.i[id as usize].memcg != memcg {
            return Err(format!("inode {id} on memcg {memcg}'s list, not its own"));
        }
    }
    if let Some(mc) = &node.memcg {
        let mut own = vec![0u64; mc.len()];
        for d in fs.dcache.d.iter().filter(|d| d.alive) {
            own[d.memcg as usize] += 1;
        }
        for i in fs.icache.i.iter().filter(live) {
            own[i.memcg as usize] += 1;
        }
        for (id, k) in mc.kmem.iter().enumerate().skip(1) {
            if k.objects != own[id] {
                return Err(format!(
                    "memcg {}: {} charged slab objects but {} dentries and inodes",
                    mc.names[id], k.objects, own[id]
                ));
            }
        }
    }
    let inodes = fs.icache.i.iter().filter(live).count() as u64;
    let dentries = fs.dcache.d.iter().filter(|d| d.alive).count() as u64;
    let (ic, dc) = (
        &node.slab.caches[fs.inode_cache],
        &node.slab.caches[fs.dentry_cache],
    );
    if inodes != ic.objects || dentries != dc.objects {
        return Err(format!(
            "{inodes} inodes and {dentries} dentries but {} and {} slab objects",
            ic.objects, dc.objects
        ));
    }
    let tagged: u64 = fs.xfs.ags.iter().map(|a| a.reclaimable.len() as u64).sum();
    let reclaimable = fs
        .icache
        .i
        .iter()
        .filter(|i| i.vfs == VfsState::Reclaimable)
        .count() as u64;
    if tagged != fs.xfs.nr_reclaimable || reclaimable != tagged {
        return Err(format!(
            "reclaimable inodes: {} counted, {tagged} tagged, {reclaimable} in that state",
            fs.xfs.nr_reclaimable
        ));
    }
    let unclean = fs
        .icache
        .i
        .iter()
        .filter(live)
        .filter(|i| i.xfs != XfsState::Clean)
        .count() as u64;
    if unclean != fs.xfs.log_used {
        return Err(format!(
            "log space {} but {unclean} inodes not clean",
            fs.xfs.log_used
        ));
    }
    for (n, f) in fs.files.iter().enumerate() {
        if f.dentry != NONE {
            let d = fs.dcache.d[f.dentry as usize];
            if !d.alive || d.file != n as u32 || d.inode != f.ino {
                return Err(format!("file {n}: dentry {} does not name it", f.dentry));
            }
        }
        if f.ino != NONE {
            let i = fs.icache.i[f.ino as usize];
            if i.vfs == VfsState::Free || i.file != n as u32 {
                return Err(format!("file {n}: inode {} is not its own", f.ino));
            }
        }
    }
    Ok(())
}
