//! The encoding of a page-table entry and of the workingset shadow entry it keeps (the
//! kernel's `pte_*` helpers and `mm/workingset.c`'s packing). Every file that reads or writes
//! `pte[vpage]` (`memory.rs`, reclaim, compaction, swap readahead, the guests' memory slot)
//! takes the encoding from here, so none of them depends on the fault paths in `memory.rs`.
//!
//! `pte[vpage]` (4 bytes per vpage) says where the page is. As in a real page table, a resident
//! anonymous entry also carries the present/mapped bit and the hardware accessed (young) and
//! dirty bits, so a user access touches only this array; and, as the kernel keeps the
//! workingset shadow entry of an evicted page in the slot the page left (core-mm §5.11), a
//! non-resident entry keeps it in its spare bits:
//!
//! | bits  | resident entry (bit 31 clear)     | non-resident entry (bit 31, `PTE_SWAP`, set)      |
//! |-------|-----------------------------------|---------------------------------------------------|
//! | 0-27  | frame number (`PTE_PFN_MASK`)     | shadow: eviction age (`SHADOW_AGE_MASK`)          |
//! | 28    | `PTE_DIRTY`                       | shadow: `SHADOW_WORKINGSET`                       |
//! | 29    | `PTE_YOUNG`                       | `PTE_NOSHADOW`: no shadow; bits 0-28 all ones     |
//! | 30    | `PTE_MAPPED` (clear: an unmapped  | `PTE_NOSWAP`: no copy anywhere ("none": never     |
//! |       | swap-cache or page-cache page)    | touched, or a file page not cached); clear: the   |
//! |       |                                   | only copy is on the swap device                   |
//!
//! `PTE_NONE` (all ones) is a none entry without a shadow. Build non-resident entries with
//! [`pte_mk_swap`] and [`pte_mk_none`] and read their shadow with [`pte_shadow`]; test them
//! with [`pte_is_swap`] and [`pte_is_none`].
//!
//! The eviction age has 28 bits: refault distances are taken modulo 2^28 pages (1 TiB of
//! evictions), as the kernel truncates its eviction counter to the bits a shadow entry has.

/// A none entry without a shadow (never touched, or dropped).
pub const PTE_NONE: u32 = u32::MAX;
/// Set in every non-resident entry: swap entries and none entries alike.
pub const PTE_SWAP: u32 = 0x8000_0000;
/// Resident and mapped by its owner; a resident entry without it is an unmapped swap-cache page.
pub const PTE_MAPPED: u32 = 0x4000_0000;
/// Hardware accessed bit, harvested by `folio_referenced`.
pub const PTE_YOUNG: u32 = 0x2000_0000;
/// Hardware dirty bit, moved to the page at unmap time.
pub const PTE_DIRTY: u32 = 0x1000_0000;
/// Frame number bits of a resident entry (frames are limited to 2^28, 1 TiB of RAM).
pub const PTE_PFN_MASK: u32 = 0x0fff_ffff;
/// Non-resident entry: not on swap either (a none entry).
pub const PTE_NOSWAP: u32 = 0x4000_0000;
/// Non-resident entry: no shadow entry (the shadow bits are then all ones).
pub const PTE_NOSHADOW: u32 = 0x2000_0000;
/// The shadow entry's bits in a non-resident entry.
pub const PTE_SHADOW_MASK: u32 = 0x1fff_ffff;

/// Mapped, present and its accessed bit set: what reclaim's reverse-map walk and the aging walk
/// count as a young entry.
#[inline]
pub fn pte_young(pte: u32) -> bool {
    pte & (PTE_SWAP | PTE_MAPPED | PTE_YOUNG) == PTE_MAPPED | PTE_YOUNG
}

#[inline]
pub fn pte_present(pte: u32) -> bool {
    pte & PTE_SWAP == 0
}
#[inline]
pub fn pte_pfn(pte: u32) -> u32 {
    pte & PTE_PFN_MASK
}
/// Non-resident with its only copy on the swap device.
#[inline]
pub fn pte_is_swap(pte: u32) -> bool {
    pte & (PTE_SWAP | PTE_NOSWAP) == PTE_SWAP
}
/// Non-resident and not on swap: a first touch (anonymous) or a page-cache miss (file).
#[inline]
pub fn pte_is_none(pte: u32) -> bool {
    pte & (PTE_SWAP | PTE_NOSWAP) == PTE_SWAP | PTE_NOSWAP
}
/// The shadow entry of a non-resident entry, or `SHADOW_NONE`.
#[inline]
pub fn pte_shadow(pte: u32) -> u32 {
    debug_assert!(!pte_present(pte));
    if pte & PTE_NOSHADOW != 0 {
        SHADOW_NONE
    } else {
        pte & PTE_SHADOW_MASK
    }
}
#[inline]
fn shadow_bits(shadow: u32) -> u32 {
    if shadow == SHADOW_NONE {
        PTE_NOSHADOW | PTE_SHADOW_MASK
    } else {
        debug_assert!(shadow <= PTE_SHADOW_MASK);
        shadow
    }
}
/// A swap entry carrying `shadow` (or `SHADOW_NONE`).
#[inline]
pub fn pte_mk_swap(shadow: u32) -> u32 {
    PTE_SWAP | shadow_bits(shadow)
}
/// A none entry carrying `shadow` (or `SHADOW_NONE`, which gives `PTE_NONE`).
#[inline]
pub fn pte_mk_none(shadow: u32) -> u32 {
    PTE_SWAP | PTE_NOSWAP | shadow_bits(shadow)
}
/// "No shadow entry" as the workingset functions see it (not a PTE bit pattern).
pub const SHADOW_NONE: u32 = u32::MAX;
pub const SHADOW_WORKINGSET: u32 = 0x1000_0000;
pub const SHADOW_AGE_MASK: u32 = 0x0fff_ffff;

/// Entries of one page-table page (x86_64: 512 8-byte PTEs, 2 MiB of address space).
pub const PTRS_PER_PTE: u32 = 512;
