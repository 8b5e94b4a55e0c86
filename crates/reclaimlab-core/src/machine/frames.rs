//! Page frames as struct-of-arrays, and the intrusive doubly-linked lists threaded through them.
//!
//! Per frame: `flags` (u16, page flags; mapping state is in the page table), `order` (u8, the order of a free buddy block at its head frame),
//! `prev`/`next` (u32 list links, shared by the buddy free lists and the LRU lists: a frame is
//! on at most one list), and `owner` (u32, the virtual page mapped to it: the reverse map).
//! That is 15 bytes per frame: 2^20 frames (4 GiB) take 15 MiB.
//!
//! Frame indices play the role of PFNs inside the simulator. Each zone's frames start at a
//! multiple of 2^(MAX_ORDER-1) so buddy alignment is natural; see `Machine::new`.

pub const NIL: u32 = u32::MAX;

/// Page flags (a subset of the kernel's `PG_*` plus the PTE young bit and simulator bookkeeping).
pub mod pg {
    /// Head of a free buddy block (`PageBuddy`).
    pub const BUDDY: u16 = 1 << 0;
    pub const LRU: u16 = 1 << 1;
    pub const ACTIVE: u16 = 1 << 2;
    pub const REFERENCED: u16 = 1 << 3;
    pub const WORKINGSET: u16 = 1 << 4;
    pub const RECLAIM: u16 = 1 << 5;
    pub const DIRTY: u16 = 1 << 6;
    pub const WRITEBACK: u16 = 1 << 7;
    /// Anonymous (swap-backed) page.
    pub const SWAPBACKED: u16 = 1 << 8;
    pub const SWAPCACHE: u16 = 1 << 9;
    // (Mapped, accessed and PTE-dirty state live in the page table entry: `machine::memory::PTE_*`.)
    /// Not managed memory (zone padding): never free, never on a list.
    pub const RESERVED: u16 = 1 << 12;
    /// Allocated but not on the LRU (kernel allocations, pages in flight between owner and LRU).
    pub const ALLOCATED: u16 = 1 << 13;
}

#[derive(Debug, Clone)]
pub struct Frames {
    pub flags: Vec<u16>,
    pub order: Vec<u8>,
    pub prev: Vec<u32>,
    pub next: Vec<u32>,
    pub owner: Vec<u32>,
}

impl Frames {
    pub fn new(n: usize) -> Frames {
        Frames {
            flags: vec![pg::RESERVED; n],
            order: vec![0; n],
            prev: vec![NIL; n],
            next: vec![NIL; n],
            owner: vec![NIL; n],
        }
    }

    pub fn len(&self) -> usize {
        self.flags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// Bytes of frame state per frame (for the memory benchmark).
    pub const BYTES_PER_FRAME: usize = 2 + 1 + 4 + 4 + 4;

    #[inline]
    pub fn test(&self, pfn: u32, f: u16) -> bool {
        self.flags[pfn as usize] & f != 0
    }
    #[inline]
    pub fn set(&mut self, pfn: u32, f: u16) {
        self.flags[pfn as usize] |= f;
    }
    #[inline]
    pub fn clear(&mut self, pfn: u32, f: u16) {
        self.flags[pfn as usize] &= !f;
    }
    /// Clear `f` and return whether it was set.
    #[inline]
    pub fn test_and_clear(&mut self, pfn: u32, f: u16) -> bool {
        let old = self.flags[pfn as usize];
        self.flags[pfn as usize] = old & !f;
        old & f != 0
    }
}

/// An intrusive list: `head` is the most recently added end, `tail` the oldest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    /// Number of entries (not pages).
    pub len: u64,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    #[inline]
    pub fn push_head(&mut self, fr: &mut Frames, x: u32) {
        fr.prev[x as usize] = NIL;
        fr.next[x as usize] = self.head;
        if self.head != NIL {
            fr.prev[self.head as usize] = x;
        } else {
            self.tail = x;
        }
        self.head = x;
        self.len += 1;
    }

    #[inline]
    pub fn push_tail(&mut self, fr: &mut Frames, x: u32) {
        fr.next[x as usize] = NIL;
        fr.prev[x as usize] = self.tail;
        if self.tail != NIL {
            fr.next[self.tail as usize] = x;
        } else {
            self.head = x;
        }
        self.tail = x;
        self.len += 1;
    }

    #[inline]
    pub fn remove(&mut self, fr: &mut Frames, x: u32) {
        let p = fr.prev[x as usize];
        let n = fr.next[x as usize];
        if p != NIL {
            fr.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            fr.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
        fr.prev[x as usize] = NIL;
        fr.next[x as usize] = NIL;
        self.len -= 1;
    }

    /// Iterate from tail (oldest) to head. The list must not change during the walk.
    pub fn iter_from_tail<'a>(&self, fr: &'a Frames) -> impl Iterator<Item = u32> + 'a {
        let mut cur = self.tail;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let x = cur;
            cur = fr.prev[x as usize];
            Some(x)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_push_remove_order() {
        let mut fr = Frames::new(8);
        let mut l = List::default();
        l.push_head(&mut fr, 1);
        l.push_head(&mut fr, 2);
        l.push_tail(&mut fr, 3);
        assert_eq!(l.iter_from_tail(&fr).collect::<Vec<_>>(), vec![3, 1, 2]);
        l.remove(&mut fr, 1);
        assert_eq!(l.iter_from_tail(&fr).collect::<Vec<_>>(), vec![3, 2]);
        l.remove(&mut fr, 3);
        l.remove(&mut fr, 2);
        assert!(l.is_empty());
        assert_eq!(l.len, 0);
        assert_eq!(l.tail, NIL);
    }
}
