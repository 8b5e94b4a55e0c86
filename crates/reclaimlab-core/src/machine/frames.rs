//! Page frames as struct-of-arrays, and the intrusive doubly-linked lists threaded through them.
//!
//! 12 bytes per frame, in two arrays (2^20 frames, 4 GiB, take 12 MiB; the kernel spends 64
//! bytes of `struct page` per frame). Every bit is used, so the layout is spelled out here and
//! only this file reads the raw words:
//!
//! `link[pfn]: u64`, the list links and most page flags:
//!
//! | bits  | field                                                                          |
//! |-------|--------------------------------------------------------------------------------|
//! | 0-7   | page flags `pg::LRU` ... `pg::SWAPCACHE` (bits 0-7 of the `u16` flag view)     |
//! | 8-35  | `prev` frame number; all ones (2^28 - 1) is `NIL`                              |
//! | 36-63 | `next`, same encoding                                                          |
//!
//! The buddy free lists and the LRU lists share the links: a frame is on at most one list.
//! (The per-CPU page lists keep their frame numbers in rings of their own, `zone::PerCpuPages`.)
//! Frame numbers fit in 28 bits with a value to spare for `NIL` because `Machine::new`
//! refuses more than 2^28 - 1 frames (`PTE_PFN_MASK`, 1 TiB). The flags are in the low byte
//! so that testing or setting one is a single instruction on the word; `NIL` as all ones
//! is what `u32::MAX` truncates to, so a `List` end converts with one mask.
//!
//! `owner[pfn]: u32`, the reverse map and the frame's state:
//!
//! | bits  | field                                                                          |
//! |-------|--------------------------------------------------------------------------------|
//! | 0-30  | state: a vpage below [`OWNER_LIMIT`] (the virtual page mapped to the frame),    |
//! |       | or one of the sentinels: no owner, free buddy block head (with its order in    |
//! |       | bits 0-3 and the migratetype list it is on in bits 4-5), free page on a        |
//! |       | per-CPU list (its migratetype list in bits 0-1), kernel allocation, reserved    |
//! |       | (zone padding)                                                                 |
//! | 31    | `pg::WORKINGSET` (bit 8 of the flag view)                                      |
//!
//! The sentinels replace the `BUDDY`, `ALLOCATED` and `RESERVED` flags and the buddy order:
//! a frame in one of those states has no owner and carries no other page flag, so they can
//! share the owner's bits. The `u16` flag view ([`Frames::flags`]) still presents them as flags.
//! `WORKINGSET` sits beside the owner because the code that reads it (eviction, deactivation)
//! reads the owner or the page table too; the flags the LRU code tests on every list move sit
//! beside the links it rewrites anyway.
//!
//! Frame indices play the role of PFNs inside the simulator. Each zone's frames start at a
//! multiple of 2^(MAX_ORDER-1) so buddy alignment is natural; see `Machine::new`.

pub const NIL: u32 = u32::MAX;

/// Page flags (a subset of the kernel's `PG_*` plus simulator bookkeeping), as a `u16` view.
/// Bits 0-8 are stored as flags (see the module comment); `BUDDY`, `RESERVED` and `ALLOCATED`
/// are states of the owner word and are set through [`Frames::set_flags`] or the buddy calls.
pub mod pg {
    pub const LRU: u16 = 1 << 0;
    pub const ACTIVE: u16 = 1 << 1;
    pub const REFERENCED: u16 = 1 << 2;
    pub const RECLAIM: u16 = 1 << 3;
    pub const DIRTY: u16 = 1 << 4;
    pub const WRITEBACK: u16 = 1 << 5;
    /// Anonymous (swap-backed) page.
    pub const SWAPBACKED: u16 = 1 << 6;
    pub const SWAPCACHE: u16 = 1 << 7;
    pub const WORKINGSET: u16 = 1 << 8;
    // (Mapped, accessed and PTE-dirty state live in the page table entry: `machine::pte::PTE_*`.)
    /// Head of a free buddy block (`PageBuddy`).
    pub const BUDDY: u16 = 1 << 9;
    /// Not managed memory (zone padding): never free, never on a list.
    pub const RESERVED: u16 = 1 << 10;
    /// Allocated but not yet given to an owner or the LRU (kernel allocations, and a page
    /// between the allocator and the fault that maps it).
    pub const ALLOCATED: u16 = 1 << 11;
    /// The flags a page in use can carry (stored bits; the others are owner states).
    pub const PAGE_FLAGS: u16 = (1 << 9) - 1;
}

/// Vpages must be below this: the owner values from here up are the sentinels.
pub const OWNER_LIMIT: u32 = ST_BUDDY;

/// One link's bits, and its `NIL`.
const M28: u32 = (1 << 28) - 1;
const PREV_SHIFT: u32 = 8;
const NEXT_SHIFT: u32 = 36;
/// The flags stored in `link` (bits 0-7 of the view, and of the word).
const LINK_FLAGS: u16 = 0xff;
const FLAGS: u64 = LINK_FLAGS as u64;
/// Both links `NIL`.
const NO_LINKS: u64 = (M28 as u64) << PREV_SHIFT | (M28 as u64) << NEXT_SHIFT;
const STATE: u32 = 0x7fff_ffff;
const OWNER_WS: u32 = 0x8000_0000;
/// Owner sentinels (see the module comment).
const ST_BUDDY: u32 = 0x7fff_ff00;
/// Just above the buddy states, so that `is_buddy_head_of_order` never matches it.
const ST_PCP: u32 = ST_BUDDY + 0x40;
const ST_ALLOCATED: u32 = 0x7fff_fffd;
const ST_RESERVED: u32 = 0x7fff_fffe;
const ST_NIL: u32 = 0x7fff_ffff;

/// `n` copies of `v`, in memory the kernel may back with transparent huge pages: a frame
/// array is as large as a tenth of a percent of the memory it models, tens to hundreds of
/// MiB for a host with guests, and with 4 KiB pages filling it cost more in page faults
/// than the fill itself (a third of building a 16-guest world). Only advice: where THP is
/// off or not offered for such memory, nothing changes; the contents are the same anyway.
fn filled<T: Copy>(n: usize, v: T) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    advise_huge_pages(out.as_ptr() as usize, n * std::mem::size_of::<T>());
    out.resize(n, v);
    out
}

/// `madvise(MADV_HUGEPAGE)` over the 2 MiB-aligned part of `[addr, addr + len)`.
#[cfg(target_os = "linux")]
fn advise_huge_pages(addr: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = addr.next_multiple_of(HUGE);
    let end = (addr + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: advice about memory this process owns (the vector's unused capacity); the
        // call neither reads nor writes it, and a refusal (EINVAL where THP is not built in)
        // leaves it as it was.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_addr: usize, _len: usize) {}

/// A frame number (or `NIL`) as a stored link.
#[inline]
fn raw(x: u32) -> u32 {
    debug_assert!(x == NIL || x < M28);
    x & M28
}
/// A stored link as a frame number (or `NIL`).
#[inline]
fn full(r: u32) -> u32 {
    if r == M28 {
        NIL
    } else {
        r
    }
}

/// What the state bits of an owner word say, for the invariant checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameState {
    /// Mapped by (or cached for) this vpage.
    Owner(u32),
    /// No owner: a free frame inside a buddy block, or a page whose owner went away.
    NoOwner,
    /// Head of a free buddy block of this order on this migratetype's list.
    Buddy {
        order: usize,
        mt: usize,
    },
    /// A free order-0 page on a per-CPU list of this migratetype.
    Pcp {
        mt: usize,
    },
    Allocated,
    Reserved,
    /// A sentinel value that encodes nothing (a corrupted word).
    Invalid(u32),
}

#[derive(Debug, Clone)]
pub struct Frames {
    link: Vec<u64>,
    owner: Vec<u32>,
}

impl Frames {
    /// `n` frames, all reserved (padding) until the zones free theirs.
    pub fn new(n: usize) -> Frames {
        Frames {
            link: filled(n, NO_LINKS),
            owner: filled(n, ST_RESERVED),
        }
    }

    /// Frames `[start, end)`, reserved since [`Frames::new`], become managed frames with no
    /// owner and no flags, ready for the buddy: what `set_flags(pfn, 0)` does to each, in one
    /// pass over the owner words (their links are `NIL` and their flags clear already).
    pub fn set_managed(&mut self, start: u32, end: u32) {
        let owner = &mut self.owner[start as usize..end as usize];
        debug_assert!(owner.iter().all(|&o| o == ST_RESERVED));
        owner.fill(ST_NIL);
    }

    pub fn len(&self) -> usize {
        self.link.len()
    }

    pub fn is_empty(&self) -> bool {
        self.link.is_empty()
    }

    /// Bytes of frame state per frame (for the memory benchmark).
    pub const BYTES_PER_FRAME: usize = 8 + 4;

    // ------------------------------------------------------------ flags

    /// All flags of a frame, the owner states included.
    #[inline]
    pub fn flags(&self, pfn: u32) -> u16 {
        let o = self.owner[pfn as usize];
        let s = o & STATE;
        let state = if s < ST_BUDDY {
            0
        } else if s < ST_BUDDY + 0x40 {
            pg::BUDDY
        } else if s == ST_ALLOCATED {
            pg::ALLOCATED
        } else if s == ST_RESERVED {
            pg::RESERVED
        } else {
            0
        };
        self.page_flags(pfn) | state
    }

    /// The stored page flags only (`pg::PAGE_FLAGS`): cheaper than [`Frames::flags`] where the
    /// frame is known to be a page in use.
    #[inline]
    pub fn page_flags(&self, pfn: u32) -> u16 {
        let l = (self.link[pfn as usize] & FLAGS) as u16;
        let ws = ((self.owner[pfn as usize] >> 31) as u16) << 8;
        l | ws
    }

    /// The flags stored beside the links (`LRU` ... `SWAPCACHE`, not `WORKINGSET`): one load,
    /// for the LRU code, which rewrites the links anyway.
    #[inline]
    pub fn link_flags(&self, pfn: u32) -> u16 {
        (self.link[pfn as usize] & FLAGS) as u16
    }

    /// Replace all flags. `ALLOCATED` or `RESERVED` put the frame in that state (dropping its
    /// owner); without them a frame in such a state gets no owner. Use
    /// [`Frames::set_buddy_head`] for `BUDDY`.
    #[inline]
    pub fn set_flags(&mut self, pfn: u32, f: u16) {
        debug_assert!(
            f & pg::BUDDY == 0,
            "buddy heads are set with set_buddy_head"
        );
        let i = pfn as usize;
        let s = self.owner[i] & STATE;
        let s = if f & pg::ALLOCATED != 0 {
            ST_ALLOCATED
        } else if f & pg::RESERVED != 0 {
            ST_RESERVED
        } else if s >= ST_BUDDY {
            ST_NIL
        } else {
            s
        };
        self.owner[i] = s | if f & pg::WORKINGSET != 0 { OWNER_WS } else { 0 };
        self.link[i] = (self.link[i] & !FLAGS) | (f & LINK_FLAGS) as u64;
    }

    /// A page given to its owner: these flags (page flags only) and owner `vp`.
    #[inline]
    pub fn set_page(&mut self, pfn: u32, f: u16, vp: u32) {
        debug_assert!(f & !pg::PAGE_FLAGS == 0 && vp < OWNER_LIMIT);
        let i = pfn as usize;
        self.owner[i] = vp | if f & pg::WORKINGSET != 0 { OWNER_WS } else { 0 };
        self.link[i] = (self.link[i] & !FLAGS) | (f & LINK_FLAGS) as u64;
    }

    #[inline]
    pub fn test(&self, pfn: u32, f: u16) -> bool {
        if f & !pg::PAGE_FLAGS != 0 {
            return self.flags(pfn) & f != 0;
        }
        let mut hit = false;
        if f & LINK_FLAGS != 0 {
            hit |= self.link[pfn as usize] & (f & LINK_FLAGS) as u64 != 0;
        }
        if f & pg::WORKINGSET != 0 {
            hit |= self.owner[pfn as usize] & OWNER_WS != 0;
        }
        hit
    }
    /// Set page flags (`pg::PAGE_FLAGS` only).
    #[inline]
    pub fn set(&mut self, pfn: u32, f: u16) {
        debug_assert!(f & !pg::PAGE_FLAGS == 0);
        if f & LINK_FLAGS != 0 {
            self.link[pfn as usize] |= (f & LINK_FLAGS) as u64;
        }
        if f & pg::WORKINGSET != 0 {
            self.owner[pfn as usize] |= OWNER_WS;
        }
    }
    /// Clear page flags (`pg::PAGE_FLAGS` only).
    #[inline]
    pub fn clear(&mut self, pfn: u32, f: u16) {
        debug_assert!(f & !pg::PAGE_FLAGS == 0);
        if f & LINK_FLAGS != 0 {
            self.link[pfn as usize] &= !((f & LINK_FLAGS) as u64);
        }
        if f & pg::WORKINGSET != 0 {
            self.owner[pfn as usize] &= !OWNER_WS;
        }
    }
    /// Clear `f` (page flags only) and return whether any of it was set.
    #[inline]
    pub fn test_and_clear(&mut self, pfn: u32, f: u16) -> bool {
        let old = self.test(pfn, f);
        self.clear(pfn, f);
        old
    }

    // ------------------------------------------------------------ reverse map

    /// The vpage mapped to the frame (`NIL` if none).
    #[inline]
    pub fn owner(&self, pfn: u32) -> u32 {
        let s = self.owner[pfn as usize] & STATE;
        if s < ST_BUDDY {
            s
        } else {
            NIL
        }
    }

    /// Set the owner; `NIL` clears it (a frame in an owner-less state stays in it).
    #[inline]
    pub fn set_owner(&mut self, pfn: u32, vp: u32) {
        let i = pfn as usize;
        let o = self.owner[i];
        let s = if vp == NIL {
            if o & STATE < ST_BUDDY {
                ST_NIL
            } else {
                o & STATE
            }
        } else {
            debug_assert!(vp < OWNER_LIMIT);
            debug_assert!(o & STATE < ST_BUDDY || o & STATE == ST_NIL || o & STATE == ST_ALLOCATED);
            vp
        };
        self.owner[i] = (o & OWNER_WS) | s;
    }

    // ------------------------------------------------------------ buddy heads

    /// Make `pfn` the head of a free block of `order` on migratetype `mt`'s list (no other
    /// flag, no owner).
    #[inline]
    pub fn set_buddy_head(&mut self, pfn: u32, order: usize, mt: usize) {
        debug_assert!(order < 16 && mt < 4);
        let i = pfn as usize;
        self.owner[i] = ST_BUDDY | (mt as u32) << 4 | order as u32;
        self.link[i] &= !FLAGS;
    }

    /// The frame is no longer a free block head: a free frame with no flags and no owner.
    #[inline]
    pub fn clear_buddy_head(&mut self, pfn: u32) {
        let i = pfn as usize;
        self.owner[i] = ST_NIL;
        self.link[i] &= !FLAGS;
    }

    /// The order of the free block whose head is `pfn`, if it is one.
    #[inline]
    pub fn buddy_order(&self, pfn: u32) -> Option<usize> {
        let b = (self.owner[pfn as usize] & STATE).wrapping_sub(ST_BUDDY);
        (b < 0x40).then_some((b & 0x0f) as usize)
    }

    /// Is `pfn` certainly outside every free buddy block: owned, allocated, reserved or on a
    /// per-CPU list? A frame inside a free block that is not its head has no owner, and a head
    /// carries its buddy state, so only those two need a search over the orders.
    #[inline]
    pub fn is_in_use(&self, pfn: u32) -> bool {
        let s = self.owner[pfn as usize] & STATE;
        s < ST_BUDDY || (s >= ST_PCP && s != ST_NIL)
    }

    /// Is `pfn` the head of a free block of exactly `order`?
    #[inline]
    pub fn is_buddy_head_of_order(&self, pfn: u32, order: usize) -> bool {
        // Any non-buddy state keeps bits above 0x30 after the subtraction, and orders are < 16.
        (self.owner[pfn as usize] & STATE).wrapping_sub(ST_BUDDY) & !0x30 == order as u32
    }

    /// The migratetype list a free block head is on. It can differ from its pageblock's type
    /// after a partial steal, so it is stored with the order.
    #[inline]
    pub fn buddy_list_mt(&self, pfn: u32) -> usize {
        debug_assert!(self.buddy_order(pfn).is_some());
        (((self.owner[pfn as usize] & STATE).wrapping_sub(ST_BUDDY) >> 4) & 3) as usize
    }

    // ------------------------------------------------------------ per-CPU lists

    /// Make `pfn`, a frame without flags or links (the buddy's, or freed), a free page on a
    /// per-CPU list of type `mt`; the type lets compaction find the list of a page by address.
    #[inline]
    pub fn set_pcp(&mut self, pfn: u32, mt: usize) {
        debug_assert!(mt < 3 && self.link[pfn as usize] & FLAGS == 0);
        self.owner[pfn as usize] = ST_PCP | mt as u32;
    }

    /// A page leaving a per-CPU list for the buddy: a plain free frame again.
    #[inline]
    pub fn clear_pcp(&mut self, pfn: u32) {
        debug_assert!(self.pcp_mt(pfn).is_some());
        self.owner[pfn as usize] = ST_NIL;
    }

    /// The migratetype list of a page on a per-CPU list, if it is on one.
    #[inline]
    pub fn pcp_mt(&self, pfn: u32) -> Option<usize> {
        let b = (self.owner[pfn as usize] & STATE).wrapping_sub(ST_PCP);
        (b < 3).then_some(b as usize)
    }

    // ------------------------------------------------------------ links

    #[inline]
    pub fn prev(&self, pfn: u32) -> u32 {
        full(self.prev_raw(pfn))
    }
    #[inline]
    pub fn next(&self, pfn: u32) -> u32 {
        full(self.next_raw(pfn))
    }
    #[inline]
    fn prev_raw(&self, pfn: u32) -> u32 {
        (self.link[pfn as usize] >> PREV_SHIFT) as u32 & M28
    }
    #[inline]
    fn next_raw(&self, pfn: u32) -> u32 {
        (self.link[pfn as usize] >> NEXT_SHIFT) as u32
    }
    #[inline]
    fn set_prev_raw(&mut self, pfn: u32, p: u32) {
        let w = &mut self.link[pfn as usize];
        *w = (*w & !((M28 as u64) << PREV_SHIFT)) | (p as u64) << PREV_SHIFT;
    }
    #[inline]
    fn set_next_raw(&mut self, pfn: u32, n: u32) {
        let w = &mut self.link[pfn as usize];
        *w = (*w & ((1 << NEXT_SHIFT) - 1)) | (n as u64) << NEXT_SHIFT;
    }
    /// Unlink `pfn`: its links become `NIL` and their old values are returned (one load and
    /// one store of its word, before its neighbours are written).
    #[inline]
    fn take_links_raw(&mut self, pfn: u32) -> (u32, u32) {
        let w = &mut self.link[pfn as usize];
        let v = *w;
        *w = (v & FLAGS) | NO_LINKS;
        ((v >> PREV_SHIFT) as u32 & M28, (v >> NEXT_SHIFT) as u32)
    }
    #[inline]
    fn set_links_raw(&mut self, pfn: u32, p: u32, n: u32) {
        let w = &mut self.link[pfn as usize];
        *w = (*w & FLAGS) | (p as u64) << PREV_SHIFT | (n as u64) << NEXT_SHIFT;
    }

    // ------------------------------------------------------------ checking

    /// Decode a frame's state bits (the invariant checker's view of the owner word).
    pub fn state(&self, pfn: u32) -> FrameState {
        let s = self.owner[pfn as usize] & STATE;
        match s {
            _ if s < ST_BUDDY => FrameState::Owner(s),
            ST_NIL => FrameState::NoOwner,
            ST_ALLOCATED => FrameState::Allocated,
            ST_RESERVED => FrameState::Reserved,
            _ if self.pcp_mt(pfn).is_some() => FrameState::Pcp {
                mt: (s - ST_PCP) as usize,
            },
            _ => {
                let b = s - ST_BUDDY;
                let (order, mt) = ((b & 0x0f) as usize, (b >> 4) as usize);
                if b < 0x40 && order < super::MAX_ORDER {
                    FrameState::Buddy { order, mt }
                } else {
                    FrameState::Invalid(s)
                }
            }
        }
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
        fr.set_links_raw(x, M28, raw(self.head));
        if self.head != NIL {
            fr.set_prev_raw(self.head, x);
        } else {
            self.tail = x;
        }
        self.head = x;
        self.len += 1;
    }

    #[inline]
    pub fn push_tail(&mut self, fr: &mut Frames, x: u32) {
        fr.set_links_raw(x, raw(self.tail), M28);
        if self.tail != NIL {
            fr.set_next_raw(self.tail, x);
        } else {
            self.head = x;
        }
        self.tail = x;
        self.len += 1;
    }

    #[inline]
    pub fn remove(&mut self, fr: &mut Frames, x: u32) {
        let (p, n) = fr.take_links_raw(x);
        if p != M28 {
            fr.set_next_raw(p, n);
        } else {
            self.head = full(n);
        }
        if n != M28 {
            fr.set_prev_raw(n, p);
        } else {
            self.tail = full(p);
        }
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
            cur = fr.prev(x);
            Some(x)
        })
    }
}

#[cfg(test)]
mod tests;
