//! The dentry cache (`fs/dcache.c`) as reclaim sees it: dentries pin their inode; an unused
//! dentry sits on the superblock's dentry LRU, where `prune_dcache_sb` gives it a second pass
//! if it was used again (`DCACHE_REFERENCED`) and frees it otherwise (mechanisms §A.5). The
//! LRU is memcg-aware (`machine::list_lru`): a dentry waits on the list of the memcg its object
//! is charged to, and a walk for one memcg sees only that memcg's dentries.

use super::NONE;
use crate::machine::list_lru::ListLru;
use crate::machine::page_counter::CounterId;

#[derive(Debug, Clone, Copy)]
pub struct Dentry {
    /// The inode it pins (holds one `i_count` reference on).
    pub inode: u32,
    /// The namespace entry (file) it names.
    pub file: u32,
    pub refcount: u32,
    /// `DCACHE_REFERENCED`.
    pub referenced: bool,
    /// `DCACHE_LRU_LIST`: queued on the LRU (possibly in use: removal is lazy).
    pub on_lru: bool,
    pub alive: bool,
    /// The memcg its object is charged to (the root: none).
    pub memcg: CounterId,
}

/// What the dentry LRU walk decided for one dentry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DentryIsolate {
    /// In use: dropped from the LRU.
    Removed,
    /// Referenced: flag cleared, moved to the tail.
    Rotated,
    /// Unused and unreferenced: freed; it pinned this inode.
    Freed { inode: u32, file: u32 },
    /// The list is empty.
    Empty,
}

#[derive(Debug, Default)]
pub struct Dcache {
    pub d: Vec<Dentry>,
    free: Vec<u32>,
    /// The superblock's `s_dentry_lru`, one list per memcg, oldest first.
    pub lru: ListLru,
    /// `list_lru_count` of the dentry LRU.
    pub nr_lru: u64,
    /// Dentries alive (`nr_dentry`).
    pub nr_dentry: u64,
}

impl Dcache {
    /// `d_alloc` + `d_instantiate`: a dentry in use (refcount 1) naming `file`, pinning `inode`,
    /// its object charged to `memcg`.
    pub fn d_alloc(&mut self, inode: u32, file: u32, memcg: CounterId) -> u32 {
        let d = Dentry {
            inode,
            file,
            refcount: 1,
            referenced: false,
            on_lru: false,
            alive: true,
            memcg,
        };
        self.nr_dentry += 1;
        match self.free.pop() {
            Some(i) => {
                self.d[i as usize] = d;
                i
            }
            None => {
                self.d.push(d);
                (self.d.len() - 1) as u32
            }
        }
    }

    /// `dget` on a cached dentry (a lookup hit).
    pub fn dget(&mut self, id: u32) {
        self.d[id as usize].refcount += 1;
    }

    /// `dput`: the last reference queues it on the LRU, or marks it referenced if it is
    /// still queued from before.
    pub fn dput(&mut self, id: u32) {
        let d = &mut self.d[id as usize];
        debug_assert!(d.alive && d.refcount > 0);
        d.refcount -= 1;
        if d.refcount > 0 {
            return;
        }
        if !d.on_lru {
            d.on_lru = true;
            self.lru.add(d.memcg, id);
            self.nr_lru += 1;
        } else {
            d.referenced = true;
        }
    }

    /// One step of the LRU walk (`dentry_lru_isolate`) from the head of `memcg`'s list.
    pub fn isolate_one(&mut self, memcg: CounterId) -> DentryIsolate {
        let Some(id) = self.lru.pop_front(memcg) else {
            return DentryIsolate::Empty;
        };
        let d = &mut self.d[id as usize];
        if d.refcount > 0 {
            d.on_lru = false;
            self.nr_lru -= 1;
            return DentryIsolate::Removed;
        }
        if d.referenced {
            d.referenced = false;
            self.lru.add(memcg, id);
            return DentryIsolate::Rotated;
        }
        d.on_lru = false;
        d.alive = false;
        let (inode, file) = (d.inode, d.file);
        d.inode = NONE;
        self.nr_lru -= 1;
        self.nr_dentry -= 1;
        self.free.push(id);
        DentryIsolate::Freed { inode, file }
    }
}
