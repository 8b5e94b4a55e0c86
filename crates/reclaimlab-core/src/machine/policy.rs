//! The policy switches the memory model's allocator, watermarks and kswapd's balance test
//! consult. Each is a small trait; the variants, one file each, live in
//! `crate::policy::<switch>/` and are picked by name from the scenario. The other switches sit
//! beside the code that consults them: `FreePageHinting` in `page_reporting.rs`, the Xen
//! backend's in `xen/policy.rs`, kswapd's in `actors/kswapd.rs`, kcompactd's in
//! `actors/kcompactd.rs`.

use super::watermark::Watermarks;
use super::zone::Zone;
use super::MAX_NR_ZONES;

/// `[policy] watermark_check`: `zone_watermark_ok`, the test every allocation and kswapd's
/// balance check make against a zone (core-mm §2.5).
pub trait WatermarkCheck: std::fmt::Debug {
    /// Does `zone` have enough free memory above `mark` for a block of `order`, for an
    /// allocation whose highest usable zone is `hz`, with these `alloc_flags`?
    fn ok(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool;
    /// `zone_watermark_ok_safe` (kswapd's checks): the same test on the exact free count when
    /// the zone's counter is below its `percpu_drift_mark`.
    fn ok_safe(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        self.ok(zone, order, mark, hz, flags)
    }
    /// A variant that is exactly one of the machine's own tests says which, so the allocator's
    /// hot path can call it directly (inlined) instead of through the trait object.
    fn builtin(&self) -> Option<BuiltinCheck> {
        None
    }
}

/// The watermark tests the memory model itself implements (`machine/watermark.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinCheck {
    /// 6.1's `__zone_watermark_ok`.
    FreeBlocks,
    /// The 2.6.36 - 4.3 per-order test with the old reserve scaling.
    PerOrder,
}

impl BuiltinCheck {
    /// The test on the zone's counter (`zone_page_state`), as the allocator makes it.
    #[inline(always)]
    pub fn ok(self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        self.ok_with(zone.nr_free_pages_state(), zone, order, mark, hz, flags)
    }

    /// `zone_watermark_ok_safe`: exact below the zone's drift mark.
    #[inline]
    pub fn ok_safe(self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        self.ok_with(zone.nr_free_pages_safe(), zone, order, mark, hz, flags)
    }

    #[inline(always)]
    fn ok_with(self, free: i64, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        use super::watermark::alloc_flags::{ALLOC_MIN_RESERVE, ALLOC_NON_BLOCK};
        use super::watermark::{zone_watermark_ok, zone_watermark_ok_legacy};
        match self {
            BuiltinCheck::FreeBlocks => zone_watermark_ok(
                free,
                &zone.free_area.nr_free,
                zone.nr_reserved_highatomic,
                zone.lowmem_reserve[hz],
                order,
                mark,
                flags,
            ),
            BuiltinCheck::PerOrder => {
                let mut mark = mark;
                if flags & ALLOC_MIN_RESERVE != 0 {
                    mark -= mark / 2;
                }
                if flags & ALLOC_NON_BLOCK != 0 {
                    mark -= mark / 4;
                }
                zone_watermark_ok_legacy(
                    free,
                    &zone.free_area.nr_free,
                    zone.lowmem_reserve[hz],
                    order,
                    mark,
                )
            }
        }
    }
}

/// `[policy] watermark_boost`: the zone's `watermark_boost` after an external fragmentation
/// event (a fallback steal below pageblock size; core-mm §1.6).
pub trait WatermarkBoost: std::fmt::Debug {
    /// The new boost of a zone whose boost is `boost`, high watermark (unboosted) `high` and
    /// managed pages `managed`, under `vm.watermark_boost_factor` = `factor`; `None` leaves
    /// the zone unboosted and kswapd asleep.
    fn boost(&self, boost: u64, high: u64, managed: u64, factor: u64) -> Option<u64>;
}

/// `[policy] watermarks`: how min_free_kbytes defaults and how the per-zone watermarks follow
/// from it (core-mm §2.1, §2.2).
pub trait WatermarkSetup: std::fmt::Debug {
    /// The boot-time `vm.min_free_kbytes` of a machine with these zones; `thp` is whether the
    /// host has transparent huge pages configured.
    fn min_free_kbytes_default(&self, managed: &[u64; MAX_NR_ZONES], thp: bool) -> u64;
    /// Each zone's min/low/high watermarks.
    fn setup(
        &self,
        managed: &[u64; MAX_NR_ZONES],
        present: &[u64; MAX_NR_ZONES],
        min_free_kbytes: u64,
        watermark_scale_factor: u64,
    ) -> [Watermarks; MAX_NR_ZONES];
    /// How the default is computed, in words (for `--show-defaults`).
    fn describe(&self) -> &'static str;
}

/// `[policy] kswapd_balance`: "is the node balanced?", which lets kswapd stop and sleep and
/// lets `wakeup_kswapd` skip the wake (core-mm §4.5, §4.8).
pub trait PgdatBalanced: std::fmt::Debug {
    /// Balanced for an allocation of `order` whose highest usable zone is `hz`; `check` is the
    /// machine's `zone_watermark_ok`.
    fn balanced(
        &self,
        zones: &[Zone; MAX_NR_ZONES],
        check: &dyn WatermarkCheck,
        order: u32,
        hz: usize,
    ) -> bool;
}

/// `[policy] lru`: which page-replacement algorithm the kernel is built with. Read once when
/// the machine is built: the multi-generational LRU changes the LRU's data structures
/// (`Machine::lru_gen`), not a decision the reclaim code could take per call.
pub trait PageReplacement: std::fmt::Debug {
    /// The kernel has `CONFIG_LRU_GEN` (its `lru_gen/enabled` then decides whether it is on).
    fn lru_gen_built(&self) -> bool;
}
