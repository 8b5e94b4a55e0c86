//! Watermarks and reserves (core-mm §2) and the per-CPU list sizing (§1.5), in exact integer
//! arithmetic as Linux 6.1 does it, plus the historical variants the seed threads argue about.
//!
//! Everything here is a pure function of zone sizes and sysctls; nothing allocates. All inputs
//! are arrays indexed by zone number (`ZONE_DMA` .. `ZONE_DEVICE`) of a single node.

use crate::machine::{MAX_NR_ZONES, MAX_ORDER, PAGEBLOCK_ORDER, PAGE_SHIFT, ZONE_NORMAL};

/// Migratetypes (6.1, CONFIG_CMA=n; ISOLATE is not modelled).
pub const MIGRATE_UNMOVABLE: usize = 0;
pub const MIGRATE_MOVABLE: usize = 1;
pub const MIGRATE_RECLAIMABLE: usize = 2;
pub const MIGRATE_HIGHATOMIC: usize = 3;
pub const MIGRATE_TYPES: usize = 4;
/// The three migratetypes with per-CPU lists (UNMOVABLE, MOVABLE, RECLAIMABLE).
pub const MIGRATE_PCPTYPES: usize = 3;

/// Lower and upper clamp of the computed `min_free_kbytes` (6.1; 2.6.x capped at 65536).
pub const MIN_FREE_KBYTES_FLOOR: u64 = 128;
pub const MIN_FREE_KBYTES_CAP: u64 = 262_144;
/// Default `vm.watermark_scale_factor` (what the boot-time computation uses).
pub const DEFAULT_WATERMARK_SCALE_FACTOR: u64 = 10;
/// Pages per pageblock (order 9).
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;
/// kswapd never aims below this many pages per zone (SWAP_CLUSTER_MAX).
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// `alloc_flags` bits (6.1.192 naming, core-mm §0 and §2.5).
pub mod alloc_flags {
    /// The low bits select the watermark to check against.
    pub const ALLOC_WMARK_MIN: u32 = 0;
    pub const ALLOC_WMARK_LOW: u32 = 1;
    pub const ALLOC_WMARK_HIGH: u32 = 2;
    /// Ignore watermarks entirely (PF_MEMALLOC, TIF_MEMDIE with no reserves left...).
    pub const ALLOC_NO_WATERMARKS: u32 = 4;
    /// Selects the watermark index from the low bits. Linux 6.1 defines it as
    /// `ALLOC_NO_WATERMARKS - 1` = 3 (7 was the 2.6.x value, when NO_WATERMARKS was 0x08), so
    /// `flags & ALLOC_WMARK_MASK` never includes the NO_WATERMARKS bit.
    pub const ALLOC_WMARK_MASK: u32 = ALLOC_NO_WATERMARKS - 1;
    /// OOM victim: may dip further into the reserves.
    pub const ALLOC_OOM: u32 = 0x08;
    /// Caller cannot sleep (GFP_ATOMIC): another quarter of the min reserve.
    pub const ALLOC_NON_BLOCK: u32 = 0x10;
    /// `__GFP_HIGH`: half of the min reserve.
    pub const ALLOC_MIN_RESERVE: u32 = 0x20;
    pub const ALLOC_CPUSET: u32 = 0x40;
    pub const ALLOC_CMA: u32 = 0x80;
    pub const ALLOC_NOFRAGMENT: u32 = 0x100;
    /// May use (and create) the high-order atomic reserve.
    pub const ALLOC_HIGHATOMIC: u32 = 0x200;
    /// Allocation made on behalf of kswapd (boosting may be set).
    pub const ALLOC_KSWAPD: u32 = 0x800;
    /// Any of these grants access below the plain watermark.
    pub const ALLOC_RESERVES: u32 =
        ALLOC_NON_BLOCK | ALLOC_MIN_RESERVE | ALLOC_HIGHATOMIC | ALLOC_OOM;
}
use alloc_flags::*;

/// `_watermark[]` of one zone (without `watermark_boost`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// 6.1 computes it for every zone; used only by NUMA memory tiering.
    pub promo: u64,
}

/// Floor of the square root, exact for every u64.
#[inline]
pub fn isqrt(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    // Float estimate, then fix up by at most a few steps so the result is exact.
    let mut r = (n as f64).sqrt() as u64;
    while r.checked_mul(r).is_none_or(|sq| sq > n) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= n) {
        r += 1;
    }
    r
}

/// Index of the highest set bit, 1-based; 0 for 0 (the kernel's `fls`).
#[inline]
pub fn fls(x: u64) -> u64 {
    (u64::BITS - x.leading_zeros()) as u64
}

/// `nr_free_buffer_pages()`: Σ over zones ≤ NORMAL of max(0, managed − high). `high` is the
/// effective high watermark (boost included) and may be all zero (first boot).
#[inline]
pub fn nr_free_buffer_pages(
    managed: &[u64; MAX_NR_ZONES],
    wmarks: &[Watermarks; MAX_NR_ZONES],
) -> u64 {
    (0..=ZONE_NORMAL)
        .map(|z| managed[z].saturating_sub(wmarks[z].high))
        .sum()
}

/// The boot-time sqrt rule (`init_per_zone_wmark_min`, §2.1), without the THP override:
/// `clamp(floor(sqrt(lowmem_kbytes * 16)), 128, 262144)`, where lowmem_kbytes is
/// `nr_free_buffer_pages() * 4` at a moment when every watermark is still 0.
#[inline]
pub fn min_free_kbytes_sqrt(managed: &[u64; MAX_NR_ZONES]) -> u64 {
    let lowmem_kbytes =
        nr_free_buffer_pages(managed, &[Watermarks::default(); MAX_NR_ZONES]) << (PAGE_SHIFT - 10);
    isqrt(lowmem_kbytes * 16).clamp(MIN_FREE_KBYTES_FLOOR, MIN_FREE_KBYTES_CAP)
}

/// `set_recommended_min_free_kbytes()` (khugepaged start, §2.1): the value THP asks for, in
/// kB, given the watermarks in force at that moment (they feed the 5 % cap through
/// `nr_free_buffer_pages`). The caller raises min_free_kbytes to it when it is larger.
#[inline]
pub fn thp_recommended_min_free_kbytes(
    managed: &[u64; MAX_NR_ZONES],
    wmarks: &[Watermarks; MAX_NR_ZONES],
) -> u64 {
    // Populated zones a GFP_USER allocation may use (Movable needs no anti-fragmentation help).
    let nr_zones = managed[..=ZONE_NORMAL].iter().filter(|&&m| m > 0).count() as u64;
    // Two free pageblocks per zone, plus on average two nearly free pageblocks for every pair of
    // the three per-CPU migratetypes to fall back between.
    let mut pages = PAGEBLOCK_NR_PAGES * nr_zones * 2
        + PAGEBLOCK_NR_PAGES * nr_zones * (MIGRATE_PCPTYPES * MIGRATE_PCPTYPES) as u64;
    // Never more than 5 % of lowmem.
    pages = pages.min(nr_free_buffer_pages(managed, wmarks) / 20);
    pages << (PAGE_SHIFT - 10)
}

/// Machines whose total managed memory is below 512 MiB boot with THP disabled
/// (`hugepage_init` clears the THP flags, so khugepaged never starts and the THP raise of
/// min_free_kbytes does not happen). An administrator can still enable THP later through sysfs,
/// which runs the same raise.
pub const THP_MIN_TOTALRAM_PAGES: u64 = (512 << 20) >> PAGE_SHIFT;

/// Whether a kernel built with THP `enabled=always|madvise` actually boots with THP on, given the
/// zones' managed pages (`totalram_pages()` = Σ managed over all zones).
#[inline]
pub fn thp_enabled_by_default(managed: &[u64; MAX_NR_ZONES]) -> bool {
    managed.iter().sum::<u64>() >= THP_MIN_TOTALRAM_PAGES
}

/// Default `vm.min_free_kbytes` of a freshly booted machine (§2.1).
///
/// Order of events modelled: `init_per_zone_wmark_min` (postcore initcall) computes the sqrt
/// value with all watermarks 0 and then sets the watermarks from it (with the default
/// watermark_scale_factor, since boot-time sysctl files are applied later by user space). When
/// `thp` is on, khugepaged starts afterwards (subsys initcall) and `set_recommended_min_free_kbytes`
/// raises the value to 5632 pages per populated zone ≤ NORMAL, capped at 5 % of
/// `nr_free_buffer_pages()` — which at that moment is Σ (managed − high) with the sqrt-based
/// high watermarks. That cap only binds for guests below ~1 GiB per populated zone.
///
/// `thp` means "THP is enabled on the running machine". Below 512 MiB of managed memory the
/// kernel turns THP off at boot ([`thp_enabled_by_default`]); callers modelling a default
/// configuration should pass `thp && thp_enabled_by_default(managed)`. Passing `true` there
/// models an administrator who enabled THP through sysfs after boot, which raises the value
/// with the same formula and the same (sqrt-based) watermarks.
pub fn min_free_kbytes_default(managed: &[u64; MAX_NR_ZONES], thp: bool) -> u64 {
    let sqrt_value = min_free_kbytes_sqrt(managed);
    if !thp {
        return sqrt_value;
    }
    let boot_wmarks = setup_per_zone_wmarks(managed, sqrt_value, DEFAULT_WATERMARK_SCALE_FACTOR);
    sqrt_value.max(thp_recommended_min_free_kbytes(managed, &boot_wmarks))
}

/// `__setup_per_zone_wmarks` as in 6.1 (§2.2), on managed pages. No highmem on x86_64, so every
/// zone (Movable and Device included) counts as lowmem.
pub fn setup_per_zone_wmarks(
    managed: &[u64; MAX_NR_ZONES],
    min_free_kbytes: u64,
    watermark_scale_factor: u64,
) -> [Watermarks; MAX_NR_ZONES] {
    let pages_min = min_free_kbytes >> (PAGE_SHIFT - 10);
    let lowmem_pages: u64 = managed.iter().sum();
    let mut out = [Watermarks::default(); MAX_NR_ZONES];
    if lowmem_pages == 0 {
        return out;
    }
    for (wm, &m) in out.iter_mut().zip(managed.iter()) {
        // u128 keeps pages_min * managed exact for any plausible input.
        let min = (pages_min as u128 * m as u128 / lowmem_pages as u128) as u64;
        let scaled = (m as u128 * watermark_scale_factor as u128 / 10_000) as u64;
        let gap = (min / 4).max(scaled);
        *wm = Watermarks {
            min,
            low: min + gap,
            high: min + 2 * gap,
            promo: min + 3 * gap,
        };
    }
    out
}

/// Pre-4.6 watermarks (§2.2 "Historical", 2.6.36 – 4.5): `low = min + min/4`,
/// `high = min + min/2`, no scale factor. Pass present pages to model kernels before 3.8 (which
/// used `present_pages`), or managed pages for 3.8 – 4.5. `promo` is 0 (did not exist).
pub fn setup_per_zone_wmarks_legacy(
    present: &[u64; MAX_NR_ZONES],
    min_free_kbytes: u64,
) -> [Watermarks; MAX_NR_ZONES] {
    let pages_min = min_free_kbytes >> (PAGE_SHIFT - 10);
    let lowmem_pages: u64 = present.iter().sum();
    let mut out = [Watermarks::default(); MAX_NR_ZONES];
    if lowmem_pages == 0 {
        return out;
    }
    for (wm, &p) in out.iter_mut().zip(present.iter()) {
        let min = (pages_min as u128 * p as u128 / lowmem_pages as u128) as u64;
        *wm = Watermarks {
            min,
            low: min + min / 4,
            high: min + min / 2,
            promo: 0,
        };
    }
    out
}

/// `vm.watermark_boost_factor` as 6.1 boots with it: a boost of up to 150 % of the high mark.
pub const DEFAULT_WATERMARK_BOOST_FACTOR: u64 = 15_000;

/// `boost_watermark` (core-mm §1.6): a zone's `watermark_boost` after an external
/// fragmentation event: one pageblock more, up to `high × factor / 10000` (at least one
/// pageblock). `None` (no boost) when the factor is 0 or the zone is smaller than four
/// pageblocks, where boosting would take a large share of it.
pub fn boost_watermark(boost: u64, high: u64, managed: u64, factor: u64) -> Option<u64> {
    let pageblock = 1u64 << PAGEBLOCK_ORDER;
    if factor == 0 || pageblock * 4 > managed {
        return None;
    }
    let max_boost = (high * factor / 10_000).max(pageblock);
    Some((boost + pageblock).min(max_boost))
}

/// `vm.lowmem_reserve_ratio` as 6.1 boots with it (DMA, DMA32, Normal, Movable).
pub const DEFAULT_LOWMEM_RESERVE_RATIO: [u64; 4] = [256, 256, 32, 0];

/// `setup_per_zone_lowmem_reserve` (§2.3). `result[i][j]` is what zone `i` keeps back from an
/// allocation whose highest usable zone is `j`: `(Σ managed of zones i+1..=j) / ratio[i]`, or 0
/// when j ≤ i, `ratio[i] == 0` or zone i has no managed pages. `ratio` covers DMA, DMA32, Normal,
/// Movable; the topmost zone (Device) protects nothing.
pub fn setup_lowmem_reserve(
    managed: &[u64; MAX_NR_ZONES],
    ratio: &[u64; 4],
) -> [[u64; MAX_NR_ZONES]; MAX_NR_ZONES] {
    let mut out = [[0u64; MAX_NR_ZONES]; MAX_NR_ZONES];
    for i in 0..MAX_NR_ZONES - 1 {
        let r = ratio[i];
        if r == 0 || managed[i] == 0 {
            continue;
        }
        let mut above = 0u64;
        for j in i + 1..MAX_NR_ZONES {
            above += managed[j];
            out[i][j] = above / r;
        }
    }
    out
}

/// The `lowmem_reserve` a machine boots with. A machine built from a captured zoneinfo keeps
/// the protection its kernel printed (`captured`) while the ratio is 6.1's default: that
/// kernel computed it at boot, from managed counts the file no longer shows. A ratio set in
/// the scenario, or no capture, computes it with [`setup_lowmem_reserve`].
pub fn boot_lowmem_reserve(
    managed: &[u64; MAX_NR_ZONES],
    ratio: &[u64; 4],
    captured: Option<&[[u64; MAX_NR_ZONES]; MAX_NR_ZONES]>,
) -> [[u64; MAX_NR_ZONES]; MAX_NR_ZONES] {
    match captured {
        Some(c) if *ratio == DEFAULT_LOWMEM_RESERVE_RATIO => *c,
        _ => setup_lowmem_reserve(managed, ratio),
    }
}

/// `calculate_totalreserve_pages` for one node (§2.4): Σ over zones of
/// `min(managed, max_{j ≥ i} lowmem_reserve[i][j] + high)`. `wmarks` should be the effective
/// watermarks (boost included; boost is 0 right after setup).
pub fn totalreserve_pages(
    managed: &[u64; MAX_NR_ZONES],
    wmarks: &[Watermarks; MAX_NR_ZONES],
    lowmem_reserve: &[[u64; MAX_NR_ZONES]; MAX_NR_ZONES],
) -> u64 {
    (0..MAX_NR_ZONES)
        .map(|i| {
            let max_reserve = lowmem_reserve[i][i..].iter().copied().max().unwrap_or(0);
            (max_reserve + wmarks[i].high).min(managed[i])
        })
        .sum()
}

/// Linux 6.1 `__zone_watermark_ok` (§2.5). `free_pages` is NR_FREE_PAGES of the zone (may be
/// passed negative by callers that already subtracted something), `nr_free[o][mt]` the number
/// of free blocks of order `o` on migratetype `mt`'s list, `lowmem_reserve` the zone's
/// protection against the allocation's highest_zoneidx, `mark` the (boosted) watermark.
/// CONFIG_CMA is off, so free CMA pages never need subtracting.
#[inline]
pub fn zone_watermark_ok(
    free_pages: i64,
    nr_free: &[[u64; MIGRATE_TYPES]; MAX_ORDER],
    nr_reserved_highatomic: u64,
    lowmem_reserve: u64,
    order: u32,
    mark: u64,
    alloc_flags: u32,
) -> bool {
    debug_assert!((order as usize) < MAX_ORDER);
    let mut free = free_pages - ((1i64 << order) - 1);
    let mut min = mark as i64;
    if alloc_flags & ALLOC_RESERVES == 0 {
        // Callers without reserve rights cannot count the high-order atomic reserve.
        free -= nr_reserved_highatomic as i64;
    } else {
        if alloc_flags & ALLOC_MIN_RESERVE != 0 {
            min -= min / 2;
            if alloc_flags & ALLOC_NON_BLOCK != 0 {
                min -= min / 4;
            }
        }
        if alloc_flags & ALLOC_OOM != 0 {
            min -= min / 2;
        }
    }
    if free <= min + lowmem_reserve as i64 {
        return false;
    }
    if order == 0 {
        return true;
    }
    let may_use_highatomic = alloc_flags & (ALLOC_HIGHATOMIC | ALLOC_OOM) != 0;
    for lists in nr_free.iter().skip(order as usize) {
        if lists[..MIGRATE_PCPTYPES].iter().any(|&n| n > 0) {
            return true;
        }
        if may_use_highatomic && lists[MIGRATE_HIGHATOMIC] > 0 {
            return true;
        }
    }
    false
}

/// The 2.6.36 – ~4.3 check (§2.5 "Historical"): after the order-0 test, walk the orders below
/// the request; at each step the pages in smaller blocks stop counting and the mark halves, and
/// what is left must still exceed it. Flags are not modelled (the seed threads' kswapd and
/// direct-reclaim checks pass none).
#[inline]
pub fn zone_watermark_ok_legacy(
    free_pages: i64,
    nr_free: &[[u64; MIGRATE_TYPES]; MAX_ORDER],
    lowmem_reserve: u64,
    order: u32,
    mark: u64,
) -> bool {
    debug_assert!((order as usize) < MAX_ORDER);
    let mut free = free_pages - ((1i64 << order) - 1);
    let mut min = mark as i64;
    if free <= min + lowmem_reserve as i64 {
        return false;
    }
    for (o, lists) in nr_free.iter().enumerate().take(order as usize) {
        let blocks: u64 = lists.iter().sum();
        free -= (blocks << o) as i64;
        min >>= 1;
        if free <= min {
            return false;
        }
    }
    true
}

/// `zone_batchsize` (§1.5): pages moved between a per-CPU list and the buddy lists at a time.
/// About a quarter of 1/1024 of the zone, at most 256/4, rounded to 2^n − 1; at least 1.
#[inline]
pub fn pcp_batch(managed: u64) -> u64 {
    let b = ((managed >> 10).min((1 << 20) >> PAGE_SHIFT) / 4).max(1);
    let x = b + b / 2;
    let pow = 1u64 << (fls(x) - 1);
    (pow - 1).max(1)
}

/// `zone_highsize` with `percpu_pagelist_high_fraction = 0` (§1.5): the zone's low watermark
/// split across the node's CPUs, but at least four batches.
#[inline]
pub fn pcp_high(low_wmark: u64, cpus: u64, batch: u64) -> u64 {
    (low_wmark / cpus.max(1)).max(batch << 2)
}

/// `calculate_normal_threshold`: the per-CPU vmstat drift allowed before folding into the
/// zone counter: 2·fls(cpus)·(1 + fls(managed / 128 MiB)), at most 125.
#[inline]
pub fn stat_threshold(managed: u64, cpus: u64) -> u64 {
    let mem = managed >> (27 - PAGE_SHIFT);
    (2 * fls(cpus) * (1 + fls(mem))).min(125)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_exact() {
        for n in 0..10_000u64 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        assert_eq!(isqrt(u64::MAX), u32::MAX as u64);
        assert_eq!(isqrt(267_893_760), 16_367);
        let big = 4_294_967_295u64 * 4_294_967_295;
        assert_eq!(isqrt(big), 4_294_967_295);
        assert_eq!(isqrt(big - 1), 4_294_967_294);
    }

    #[test]
    fn fls_matches_kernel() {
        assert_eq!(fls(0), 0);
        assert_eq!(fls(1), 1);
        assert_eq!(fls(2), 2);
        assert_eq!(fls(23), 5);
        assert_eq!(fls(1 << 40), 41);
    }

    #[test]
    fn flag_values() {
        assert_eq!(ALLOC_WMARK_MASK, 3);
        assert_eq!(ALLOC_NO_WATERMARKS & ALLOC_WMARK_MASK, 0);
        assert_eq!(ALLOC_RESERVES, 0x238);
    }

    #[test]
    fn batch_and_high() {
        // 63 for every zone with at least 256 Ki managed pages (1 GiB), 1 for DMA.
        assert_eq!(pcp_batch(3840), 1);
        assert_eq!(pcp_batch(0), 1);
        assert_eq!(pcp_batch(772_917), 63);
        assert_eq!(pcp_batch(262_144), 63);
        // 128 MiB: b = 32768>>10 = 32 /4 = 8 -> 8+4 = 12 -> 8 - 1 = 7.
        assert_eq!(pcp_batch(32_768), 7);
        assert_eq!(pcp_high(17_353, 2, 63), 8676);
        assert_eq!(pcp_high(85, 2, 1), 42);
        assert_eq!(pcp_high(10, 4, 63), 252);
        assert_eq!(pcp_high(10, 0, 1), 10);
    }

    #[test]
    fn thresholds_match_fixture() {
        // From the 6.18 host capture: 2 CPUs.
        assert_eq!(stat_threshold(3840, 2), 4);
        assert_eq!(stat_threshold(772_917, 2), 24);
        // Capped at 125.
        assert_eq!(stat_threshold(1 << 40, 1024), 125);
    }
}
