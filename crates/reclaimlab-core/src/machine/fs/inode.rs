//! The VFS inode cache (`fs/inode.c`) as reclaim sees it: an inode nobody references sits on
//! the superblock's inode LRU; `prune_icache_sb` rotates referenced ones, drops the page
//! cache of ones that still have pages (`kswapd_inodesteal` / `pginodesteal`), and evicts the
//! rest, which for XFS hands them to XFS reclaim (mechanisms §A.5). Inode page-cache pages are
//! the machine's own page-cache pages of the file's range. The LRU is memcg-aware
//! (`machine::list_lru`): an inode waits on the list of the memcg its object is charged to.

use super::super::frames::{pg, NIL};
use super::super::list_lru::ListLru;
use super::super::page_counter::CounterId;
use super::super::pte::{pte_pfn, pte_present, PTE_MAPPED, PTE_NONE};
use super::super::Machine;
use super::NONE;

/// XFS's view of an inode's metadata (mechanisms §A.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XfsState {
    /// Written back: reclaimable at once.
    Clean,
    /// Logged in the CIL, not yet checkpointed (`xfs_ipincount > 0`).
    Pinned,
    /// Checkpointed, in the AIL, not yet written back.
    Dirty,
    /// Its cluster buffer is being written (flush lock held).
    Flushing,
}

/// Where the inode is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VfsState {
    /// Known to the VFS (in use or on the inode LRU).
    Live,
    /// Evicted by the VFS, tagged reclaimable, waiting for XFS reclaim.
    Reclaimable,
    /// Slot free.
    Free,
}

#[derive(Debug, Clone, Copy)]
pub struct Inode {
    pub i_count: u32,
    /// `I_REFERENCED`.
    pub referenced: bool,
    pub on_lru: bool,
    pub vfs: VfsState,
    pub xfs: XfsState,
    pub ag: u32,
    /// Inode number within its AG (its cluster is `agino / cluster_inodes`).
    pub agino: u32,
    /// The namespace entry (file) it is.
    pub file: u32,
    /// It holds its private item (`xfs_ili` once logged; `jbd2_inode` once it has data).
    pub item: bool,
    /// XFS: its log item holds the buffer its last change was formatted into (`li_lv`,
    /// `kmalloc-512`), from the change until the checkpoint that writes it commits.
    pub lv: bool,
    /// The memcg its object is charged to (the root: none).
    pub memcg: CounterId,
}

/// What the inode LRU walk decided for one inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InodeIsolate {
    Removed,
    Rotated,
    /// It had page cache: this many pages were dropped; it stays at the head to be evicted on
    /// the retry.
    Invalidated(u64),
    /// Evicted (`I_FREEING`, `evict`): for XFS, tagged reclaimable.
    Evicted(u32),
    Empty,
}

#[derive(Debug, Default)]
pub struct Icache {
    pub i: Vec<Inode>,
    free: Vec<u32>,
    /// The superblock's `s_inode_lru`, one list per memcg, oldest first.
    pub lru: ListLru,
    pub nr_lru: u64,
    /// Inodes in memory (any state but Free): `nr_inodes`.
    pub nr_inodes: u64,
}

impl Icache {
    /// A new in-core inode with one reference (its dentry's), its object charged to `memcg`.
    pub fn alloc(
        &mut self,
        ag: u32,
        agino: u32,
        file: u32,
        xfs: XfsState,
        memcg: CounterId,
    ) -> u32 {
        let ino = Inode {
            i_count: 1,
            referenced: false,
            on_lru: false,
            vfs: VfsState::Live,
            xfs,
            ag,
            agino,
            file,
            item: false,
            lv: false,
            memcg,
        };
        self.nr_inodes += 1;
        match self.free.pop() {
            Some(i) => {
                self.i[i as usize] = ino;
                i
            }
            None => {
                self.i.push(ino);
                (self.i.len() - 1) as u32
            }
        }
    }

    /// XFS reclaim freed it (`xfs_reclaim_inode` → `__xfs_inode_free`).
    pub fn release(&mut self, ino: u32) {
        let i = &mut self.i[ino as usize];
        debug_assert!(i.vfs == VfsState::Reclaimable && !i.on_lru);
        i.vfs = VfsState::Free;
        i.file = NONE;
        self.nr_inodes -= 1;
        self.free.push(ino);
    }

    /// `ihold` / `igrab`: a new reference.
    pub fn iget(&mut self, ino: u32) {
        self.i[ino as usize].i_count += 1;
    }

    /// `iput`: the last reference queues it on the LRU (`__inode_add_lru`), or marks it
    /// referenced if it is still queued.
    pub fn iput(&mut self, ino: u32) {
        let i = &mut self.i[ino as usize];
        debug_assert!(i.vfs == VfsState::Live && i.i_count > 0);
        i.i_count -= 1;
        if i.i_count > 0 {
            return;
        }
        if !i.on_lru {
            i.on_lru = true;
            self.lru.add(i.memcg, ino);
            self.nr_lru += 1;
        } else {
            i.referenced = true;
        }
    }

    /// Drop the inode at the head of `memcg`'s list from the LRU without evicting it (its
    /// mapping cannot be shrunk now).
    pub fn remove_head(&mut self, memcg: CounterId) {
        if let Some(ino) = self.lru.pop_front(memcg) {
            self.i[ino as usize].on_lru = false;
            self.nr_lru -= 1;
        }
    }

    /// One step of `inode_lru_isolate` from the head of `memcg`'s list; `nrpages` says how
    /// many page-cache pages an inode still has (the caller drops them on `Invalidated`).
    pub fn isolate_one(
        &mut self,
        memcg: CounterId,
        nrpages: impl Fn(&Inode) -> u64,
    ) -> InodeIsolate {
        let Some(ino) = self.lru.front(memcg) else {
            return InodeIsolate::Empty;
        };
        let i = &mut self.i[ino as usize];
        if i.i_count > 0 {
            self.lru.pop_front(memcg);
            i.on_lru = false;
            self.nr_lru -= 1;
            return InodeIsolate::Removed;
        }
        if i.referenced {
            i.referenced = false;
            self.lru.rotate(memcg);
            return InodeIsolate::Rotated;
        }
        let n = nrpages(i);
        if n > 0 {
            return InodeIsolate::Invalidated(n);
        }
        self.lru.pop_front(memcg);
        i.on_lru = false;
        i.vfs = VfsState::Reclaimable;
        self.nr_lru -= 1;
        InodeIsolate::Evicted(ino)
    }
}

impl Machine {
    /// Clean page-cache pages of `[base, base + n)` that are resident (`nrpages` of the
    /// mapping as far as eviction can drop them).
    pub fn mapping_pages(&self, base: u32, n: u32) -> u64 {
        if base == NONE {
            return 0;
        }
        (base..base + n)
            .filter(|&vp| pte_present(self.pte[vp as usize]))
            .count() as u64
    }

    /// `invalidate_mapping_pages` over a file's range: drop its clean, unmapped pages that are
    /// not under writeback (no shadow entries are left, as for an evicted inode). Returns the
    /// pages freed. Dirty or busy pages stay; the inode then keeps them.
    pub fn invalidate_mapping_pages(&mut self, base: u32, n: u32) -> u64 {
        if base == NONE {
            return 0;
        }
        let mut freed = 0;
        for vp in base..base + n {
            let pte = self.pte[vp as usize];
            if !pte_present(pte) || pte & PTE_MAPPED != 0 {
                continue;
            }
            let pfn = pte_pfn(pte);
            let f = self.frames.page_flags(pfn);
            if f & (pg::DIRTY | pg::WRITEBACK) != 0 || f & pg::LRU == 0 {
                continue;
            }
            self.lru_del(pfn);
            self.pte[vp as usize] = PTE_NONE;
            self.stat.nr_file_pages -= 1;
            self.frames.set_owner(pfn, NIL);
            self.frames.set_flags(pfn, 0);
            self.free_frame(pfn);
            freed += 1;
        }
        freed
    }
}
