//! The `/proc/vmstat` vocabulary: every counter with the kernel's name, in the kernel's order
//! (core-mm §7.1 and Appendix A), and the text format.
//!
//! Kernel configuration assumed (it decides which items exist; a generic x86_64 distro kernel):
//!
//! | option | value | items it adds |
//! |---|---|---|
//! | CONFIG_NUMA | y | numa_* zone items, `zone_reclaim_failed` |
//! | CONFIG_ZSMALLOC | y | `nr_zspages` |
//! | CONFIG_SWAP | y | `nr_swapcached`, `swap_ra`, `swap_ra_hit` |
//! | CONFIG_NUMA_BALANCING | y | `pgpromote_*`, `numa_pte_updates` … `numa_pages_migrated` |
//! | CONFIG_MIGRATION | y | `pgmigrate_*`, `thp_migration_*` |
//! | CONFIG_COMPACTION | y | `compact_*` |
//! | CONFIG_HUGETLB_PAGE | y | `htlb_buddy_alloc_*` |
//! | CONFIG_CMA | **n** | (no `cma_alloc_*`; `nr_free_cma` is always printed) |
//! | CONFIG_TRANSPARENT_HUGEPAGE | y, with PUD THP (x86_64) | `thp_*`, `thp_split_pud` |
//! | CONFIG_MEMORY_BALLOON, CONFIG_BALLOON_COMPACTION | y | `balloon_*` |
//! | CONFIG_DEBUG_TLBFLUSH | **n** | (no `nr_tlb_*`) |
//! | CONFIG_KSM | y | `ksm_swpin_copy`, `cow_ksm` |
//! | CONFIG_ZSWAP | y | `zswpin`, `zswpout` |
//! | CONFIG_X86 | y | `direct_map_level{2,3}_splits` |
//! | CONFIG_ZONE_DEVICE | y | `_device` zone suffix (`pgalloc_device`, …) |
//! | CONFIG_SHADOW_CALL_STACK | **n** | (no `nr_shadow_call_stack`) |
//!
//! Units: every gauge is in pages, as the kernel prints it, with two kernel exceptions the caller
//! must respect: `nr_kernel_stack` is in KiB, and the five THP-sized node items
//! (`nr_anon_transparent_hugepages`, `nr_shmem_hugepages`, `nr_shmem_pmdmapped`,
//! `nr_file_hugepages`, `nr_file_pmdmapped`) are *kept* in base pages and *printed* divided by
//! 512, which [`format_vmstat`] (and the zoneinfo printer) does. `pgpgin`/`pgpgout` are KiB.

use std::fmt::Write;

use crate::machine::MAX_NR_ZONES;

/// Base pages per PMD-sized THP (2 MiB / 4 KiB).
pub const HPAGE_PMD_NR: u64 = 512;

/// Defines a `#[repr(usize)]` counter enum whose discriminants are the printing order, its
/// length constant, an `ALL` array and `name()`.
macro_rules! counters {
    ($(#[$meta:meta])* $vis:vis enum $ty:ident, $count:ident { $($var:ident => $name:literal,)* }) => {
        $(#[$meta])*
        #[repr(usize)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $ty { $($var,)* }

        impl $ty {
            /// Every item, in /proc/vmstat order (the index equals the discriminant).
            pub const ALL: [$ty; $count] = [$($ty::$var,)*];
            const NAMES: [&'static str; $count] = [$($name,)*];

            /// The kernel's name for the item.
            #[inline]
            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            /// Look an item up by its kernel name.
            pub fn from_name(name: &str) -> Option<$ty> {
                Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
            }
        }
    };
}

/// Number of zone items (`enum zone_stat_item`).
pub const NR_ZONE_STATS: usize = 11;
counters! {
    /// Per-zone gauges (`enum zone_stat_item`, 6.1).
    pub enum ZoneStat, NR_ZONE_STATS {
        NrFreePages => "nr_free_pages",
        NrZoneInactiveAnon => "nr_zone_inactive_anon",
        NrZoneActiveAnon => "nr_zone_active_anon",
        NrZoneInactiveFile => "nr_zone_inactive_file",
        NrZoneActiveFile => "nr_zone_active_file",
        NrZoneUnevictable => "nr_zone_unevictable",
        NrZoneWritePending => "nr_zone_write_pending",
        NrMlock => "nr_mlock",
        NrBounce => "nr_bounce",
        NrZspages => "nr_zspages",
        NrFreeCma => "nr_free_cma",
    }
}

/// Number of NUMA event items (`enum numa_stat_item`).
pub const NR_NUMA_STATS: usize = 6;
counters! {
    /// Per-zone NUMA allocation events (CONFIG_NUMA).
    pub enum NumaStat, NR_NUMA_STATS {
        NumaHit => "numa_hit",
        NumaMiss => "numa_miss",
        NumaForeign => "numa_foreign",
        NumaInterleave => "numa_interleave",
        NumaLocal => "numa_local",
        NumaOther => "numa_other",
    }
}

/// Number of node items (`enum node_stat_item` for the configuration above).
pub const NR_NODE_STATS: usize = 43;
counters! {
    /// Per-node gauges and counters (`enum node_stat_item`, 6.1).
    pub enum NodeStat, NR_NODE_STATS {
        NrInactiveAnon => "nr_inactive_anon",
        NrActiveAnon => "nr_active_anon",
        NrInactiveFile => "nr_inactive_file",
        NrActiveFile => "nr_active_file",
        NrUnevictable => "nr_unevictable",
        NrSlabReclaimable => "nr_slab_reclaimable",
        NrSlabUnreclaimable => "nr_slab_unreclaimable",
        NrIsolatedAnon => "nr_isolated_anon",
        NrIsolatedFile => "nr_isolated_file",
        WorkingsetNodes => "workingset_nodes",
        WorkingsetRefaultAnon => "workingset_refault_anon",
        WorkingsetRefaultFile => "workingset_refault_file",
        WorkingsetActivateAnon => "workingset_activate_anon",
        WorkingsetActivateFile => "workingset_activate_file",
        WorkingsetRestoreAnon => "workingset_restore_anon",
        WorkingsetRestoreFile => "workingset_restore_file",
        WorkingsetNodereclaim => "workingset_nodereclaim",
        NrAnonPages => "nr_anon_pages",
        NrMapped => "nr_mapped",
        NrFilePages => "nr_file_pages",
        NrDirty => "nr_dirty",
        NrWriteback => "nr_writeback",
        NrWritebackTemp => "nr_writeback_temp",
        NrShmem => "nr_shmem",
        NrShmemHugepages => "nr_shmem_hugepages",
        NrShmemPmdmapped => "nr_shmem_pmdmapped",
        NrFileHugepages => "nr_file_hugepages",
        NrFilePmdmapped => "nr_file_pmdmapped",
        NrAnonTransparentHugepages => "nr_anon_transparent_hugepages",
        NrVmscanWrite => "nr_vmscan_write",
        NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
        NrDirtied => "nr_dirtied",
        NrWritten => "nr_written",
        NrThrottledWritten => "nr_throttled_written",
        NrKernelMiscReclaimable => "nr_kernel_misc_reclaimable",
        NrFollPinAcquired => "nr_foll_pin_acquired",
        NrFollPinReleased => "nr_foll_pin_released",
        NrKernelStack => "nr_kernel_stack",
        NrPageTablePages => "nr_page_table_pages",
        NrSecPageTablePages => "nr_sec_page_table_pages",
        NrSwapcached => "nr_swapcached",
        PgpromoteSuccess => "pgpromote_success",
        PgpromoteCandidate => "pgpromote_candidate",
    }
}

impl NodeStat {
    /// Items the kernel keeps in base pages but prints in PMD-sized THP units.
    #[inline]
    pub fn printed_in_thp(self) -> bool {
        matches!(
            self,
            NodeStat::NrAnonTransparentHugepages
                | NodeStat::NrFileHugepages
                | NodeStat::NrShmemHugepages
                | NodeStat::NrShmemPmdmapped
                | NodeStat::NrFilePmdmapped
        )
    }

    /// The value as printed, given the stored value (base pages for the THP items).
    #[inline]
    pub fn printed_value(self, stored: u64) -> u64 {
        if self.printed_in_thp() {
            stored / HPAGE_PMD_NR
        } else {
            stored
        }
    }
}

/// Number of event counters (`enum vm_event_item` for the configuration above).
pub const NR_VM_EVENTS: usize = 110;
counters! {
    /// Global event counters (`enum vm_event_item`, 6.1), summed over CPUs.
    pub enum VmEvent, NR_VM_EVENTS {
        Pgpgin => "pgpgin",
        Pgpgout => "pgpgout",
        Pswpin => "pswpin",
        Pswpout => "pswpout",
        PgallocDma => "pgalloc_dma",
        PgallocDma32 => "pgalloc_dma32",
        PgallocNormal => "pgalloc_normal",
        PgallocMovable => "pgalloc_movable",
        PgallocDevice => "pgalloc_device",
        AllocstallDma => "allocstall_dma",
        AllocstallDma32 => "allocstall_dma32",
        AllocstallNormal => "allocstall_normal",
        AllocstallMovable => "allocstall_movable",
        AllocstallDevice => "allocstall_device",
        PgskipDma => "pgskip_dma",
        PgskipDma32 => "pgskip_dma32",
        PgskipNormal => "pgskip_normal",
        PgskipMovable => "pgskip_movable",
        PgskipDevice => "pgskip_device",
        Pgfree => "pgfree",
        Pgactivate => "pgactivate",
        Pgdeactivate => "pgdeactivate",
        Pglazyfree => "pglazyfree",
        Pgfault => "pgfault",
        Pgmajfault => "pgmajfault",
        Pglazyfreed => "pglazyfreed",
        Pgrefill => "pgrefill",
        Pgreuse => "pgreuse",
        PgstealKswapd => "pgsteal_kswapd",
        PgstealDirect => "pgsteal_direct",
        PgdemoteKswapd => "pgdemote_kswapd",
        PgdemoteDirect => "pgdemote_direct",
        PgscanKswapd => "pgscan_kswapd",
        PgscanDirect => "pgscan_direct",
        PgscanDirectThrottle => "pgscan_direct_throttle",
        PgscanAnon => "pgscan_anon",
        PgscanFile => "pgscan_file",
        PgstealAnon => "pgsteal_anon",
        PgstealFile => "pgsteal_file",
        ZoneReclaimFailed => "zone_reclaim_failed",
        Pginodesteal => "pginodesteal",
        SlabsScanned => "slabs_scanned",
        KswapdInodesteal => "kswapd_inodesteal",
        KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
        KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
        Pageoutrun => "pageoutrun",
        Pgrotated => "pgrotated",
        DropPagecache => "drop_pagecache",
        DropSlab => "drop_slab",
        OomKill => "oom_kill",
        NumaPteUpdates => "numa_pte_updates",
        NumaHugePteUpdates => "numa_huge_pte_updates",
        NumaHintFaults => "numa_hint_faults",
        NumaHintFaultsLocal => "numa_hint_faults_local",
        NumaPagesMigrated => "numa_pages_migrated",
        PgmigrateSuccess => "pgmigrate_success",
        PgmigrateFail => "pgmigrate_fail",
        ThpMigrationSuccess => "thp_migration_success",
        ThpMigrationFail => "thp_migration_fail",
        ThpMigrationSplit => "thp_migration_split",
        CompactMigrateScanned => "compact_migrate_scanned",
        CompactFreeScanned => "compact_free_scanned",
        CompactIsolated => "compact_isolated",
        CompactStall => "compact_stall",
        CompactFail => "compact_fail",
        CompactSuccess => "compact_success",
        CompactDaemonWake => "compact_daemon_wake",
        CompactDaemonMigrateScanned => "compact_daemon_migrate_scanned",
        CompactDaemonFreeScanned => "compact_daemon_free_scanned",
        HtlbBuddyAllocSuccess => "htlb_buddy_alloc_success",
        HtlbBuddyAllocFail => "htlb_buddy_alloc_fail",
        UnevictablePgsCulled => "unevictable_pgs_culled",
        UnevictablePgsScanned => "unevictable_pgs_scanned",
        UnevictablePgsRescued => "unevictable_pgs_rescued",
        UnevictablePgsMlocked => "unevictable_pgs_mlocked",
        UnevictablePgsMunlocked => "unevictable_pgs_munlocked",
        UnevictablePgsCleared => "unevictable_pgs_cleared",
        UnevictablePgsStranded => "unevictable_pgs_stranded",
        ThpFaultAlloc => "thp_fault_alloc",
        ThpFaultFallback => "thp_fault_fallback",
        ThpFaultFallbackCharge => "thp_fault_fallback_charge",
        ThpCollapseAlloc => "thp_collapse_alloc",
        ThpCollapseAllocFailed => "thp_collapse_alloc_failed",
        ThpFileAlloc => "thp_file_alloc",
        ThpFileFallback => "thp_file_fallback",
        ThpFileFallbackCharge => "thp_file_fallback_charge",
        ThpFileMapped => "thp_file_mapped",
        ThpSplitPage => "thp_split_page",
        ThpSplitPageFailed => "thp_split_page_failed",
        ThpDeferredSplitPage => "thp_deferred_split_page",
        ThpSplitPmd => "thp_split_pmd",
        ThpScanExceedNonePte => "thp_scan_exceed_none_pte",
        ThpScanExceedSwapPte => "thp_scan_exceed_swap_pte",
        ThpScanExceedSharePte => "thp_scan_exceed_share_pte",
        ThpSplitPud => "thp_split_pud",
        ThpZeroPageAlloc => "thp_zero_page_alloc",
        ThpZeroPageAllocFailed => "thp_zero_page_alloc_failed",
        ThpSwpout => "thp_swpout",
        ThpSwpoutFallback => "thp_swpout_fallback",
        BalloonInflate => "balloon_inflate",
        BalloonDeflate => "balloon_deflate",
        BalloonMigrate => "balloon_migrate",
        SwapRa => "swap_ra",
        SwapRaHit => "swap_ra_hit",
        KsmSwpinCopy => "ksm_swpin_copy",
        CowKsm => "cow_ksm",
        Zswpin => "zswpin",
        Zswpout => "zswpout",
        DirectMapLevel2Splits => "direct_map_level2_splits",
        DirectMapLevel3Splits => "direct_map_level3_splits",
    }
}

impl VmEvent {
    /// `pgalloc_<zone>` for zone index `zone` (0 = DMA .. 4 = Device).
    #[inline]
    pub fn pgalloc(zone: usize) -> VmEvent {
        debug_assert!(zone < MAX_NR_ZONES);
        VmEvent::ALL[VmEvent::PgallocDma as usize + zone]
    }

    /// `allocstall_<zone>`, indexed by the allocation's gfp_zone (its highest_zoneidx).
    #[inline]
    pub fn allocstall(zone: usize) -> VmEvent {
        debug_assert!(zone < MAX_NR_ZONES);
        VmEvent::ALL[VmEvent::AllocstallDma as usize + zone]
    }

    /// `pgskip_<zone>`: pages passed over during LRU isolation because they sit in this zone.
    #[inline]
    pub fn pgskip(zone: usize) -> VmEvent {
        debug_assert!(zone < MAX_NR_ZONES);
        VmEvent::ALL[VmEvent::PgskipDma as usize + zone]
    }
}

/// The global event counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmEvents {
    pub c: [u64; NR_VM_EVENTS],
}

impl Default for VmEvents {
    fn default() -> Self {
        Self::new()
    }
}

impl VmEvents {
    pub fn new() -> VmEvents {
        VmEvents {
            c: [0; NR_VM_EVENTS],
        }
    }

    #[inline]
    pub fn add(&mut self, ev: VmEvent, n: u64) {
        self.c[ev as usize] += n;
    }

    #[inline]
    pub fn get(&self, ev: VmEvent) -> u64 {
        self.c[ev as usize]
    }

    /// (name, value) pairs in /proc/vmstat order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        VmEvent::ALL.iter().map(|&e| (e.name(), self.c[e as usize]))
    }
}

/// Every /proc/vmstat name in order, the trailing deprecated `nr_unstable` included.
pub fn vmstat_names() -> Vec<&'static str> {
    let mut v =
        Vec::with_capacity(NR_ZONE_STATS + NR_NUMA_STATS + NR_NODE_STATS + 2 + NR_VM_EVENTS + 1);
    v.extend(ZoneStat::ALL.iter().map(|s| s.name()));
    v.extend(NumaStat::ALL.iter().map(|s| s.name()));
    v.extend(NodeStat::ALL.iter().map(|s| s.name()));
    v.push("nr_dirty_threshold");
    v.push("nr_dirty_background_threshold");
    v.extend(VmEvent::ALL.iter().map(|s| s.name()));
    v.push("nr_unstable");
    v
}

/// `/proc/vmstat` text: zone items, NUMA items, node items (THP-sized ones divided by 512),
/// the two dirty thresholds (pages), the events, then `nr_unstable 0`. One `name value` line
/// each.
pub fn format_vmstat(
    zone: &[u64; NR_ZONE_STATS],
    numa: &[u64; NR_NUMA_STATS],
    node: &[u64; NR_NODE_STATS],
    dirty_threshold: u64,
    dirty_background_threshold: u64,
    events: &[u64; NR_VM_EVENTS],
) -> String {
    let mut s = String::with_capacity(6 * 1024);
    for (item, v) in ZoneStat::ALL.iter().zip(zone) {
        let _ = writeln!(s, "{} {}", item.name(), v);
    }
    for (item, v) in NumaStat::ALL.iter().zip(numa) {
        let _ = writeln!(s, "{} {}", item.name(), v);
    }
    for (item, &v) in NodeStat::ALL.iter().zip(node) {
        let _ = writeln!(s, "{} {}", item.name(), item.printed_value(v));
    }
    let _ = writeln!(s, "nr_dirty_threshold {dirty_threshold}");
    let _ = writeln!(
        s,
        "nr_dirty_background_threshold {dirty_background_threshold}"
    );
    for (item, v) in VmEvent::ALL.iter().zip(events) {
        let _ = writeln!(s, "{} {}", item.name(), v);
    }
    s.push_str("nr_unstable 0\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appendix A of core-mm.md, written out for the configuration in the module docs.
    const REFERENCE: &str = "
        nr_free_pages nr_zone_inactive_anon nr_zone_active_anon nr_zone_inactive_file
        nr_zone_active_file nr_zone_unevictable nr_zone_write_pending nr_mlock nr_bounce
        nr_zspages nr_free_cma
        numa_hit numa_miss numa_foreign numa_interleave numa_local numa_other
        nr_inactive_anon nr_active_anon nr_inactive_file nr_active_file nr_unevictable
        nr_slab_reclaimable nr_slab_unreclaimable nr_isolated_anon nr_isolated_file workingset_nodes
        workingset_refault_anon workingset_refault_file workingset_activate_anon
        workingset_activate_file workingset_restore_anon workingset_restore_file
        workingset_nodereclaim nr_anon_pages nr_mapped nr_file_pages nr_dirty nr_writeback
        nr_writeback_temp nr_shmem nr_shmem_hugepages nr_shmem_pmdmapped nr_file_hugepages
        nr_file_pmdmapped nr_anon_transparent_hugepages nr_vmscan_write nr_vmscan_immediate_reclaim
        nr_dirtied nr_written nr_throttled_written nr_kernel_misc_reclaimable nr_foll_pin_acquired
        nr_foll_pin_released nr_kernel_stack nr_page_table_pages nr_sec_page_table_pages
        nr_swapcached pgpromote_success pgpromote_candidate
        nr_dirty_threshold nr_dirty_background_threshold
        pgpgin pgpgout pswpin pswpout
        pgalloc_dma pgalloc_dma32 pgalloc_normal pgalloc_movable pgalloc_device
        allocstall_dma allocstall_dma32 allocstall_normal allocstall_movable allocstall_device
        pgskip_dma pgskip_dma32 pgskip_normal pgskip_movable pgskip_device
        pgfree pgactivate pgdeactivate pglazyfree pgfault pgmajfault pglazyfreed pgrefill pgreuse
        pgsteal_kswapd pgsteal_direct pgdemote_kswapd pgdemote_direct pgscan_kswapd pgscan_direct
        pgscan_direct_throttle pgscan_anon pgscan_file pgsteal_anon pgsteal_file
        zone_reclaim_failed pginodesteal slabs_scanned kswapd_inodesteal
        kswapd_low_wmark_hit_quickly kswapd_high_wmark_hit_quickly pageoutrun pgrotated
        drop_pagecache drop_slab oom_kill
        numa_pte_updates numa_huge_pte_updates numa_hint_faults numa_hint_faults_local
        numa_pages_migrated
        pgmigrate_success pgmigrate_fail thp_migration_success thp_migration_fail
        thp_migration_split
        compact_migrate_scanned compact_free_scanned compact_isolated compact_stall compact_fail
        compact_success compact_daemon_wake compact_daemon_migrate_scanned
        compact_daemon_free_scanned
        htlb_buddy_alloc_success htlb_buddy_alloc_fail
        unevictable_pgs_culled unevictable_pgs_scanned unevictable_pgs_rescued
        unevictable_pgs_mlocked unevictable_pgs_munlocked unevictable_pgs_cleared
        unevictable_pgs_stranded
        thp_fault_alloc thp_fault_fallback thp_fault_fallback_charge thp_collapse_alloc
        thp_collapse_alloc_failed thp_file_alloc thp_file_fallback thp_file_fallback_charge
        thp_file_mapped thp_split_page thp_split_page_failed thp_deferred_split_page thp_split_pmd
        thp_scan_exceed_none_pte thp_scan_exceed_swap_pte thp_scan_exceed_share_pte thp_split_pud
        thp_zero_page_alloc thp_zero_page_alloc_failed thp_swpout thp_swpout_fallback
        balloon_inflate balloon_deflate balloon_migrate
        swap_ra swap_ra_hit ksm_swpin_copy cow_ksm zswpin zswpout
        direct_map_level2_splits direct_map_level3_splits
        nr_unstable";

    #[test]
    fn order_matches_appendix_a() {
        let reference: Vec<&str> = REFERENCE.split_whitespace().collect();
        assert_eq!(vmstat_names(), reference);
    }

    #[test]
    fn discriminants_are_indices() {
        for (i, e) in VmEvent::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i);
            assert_eq!(VmEvent::from_name(e.name()), Some(*e));
        }
        for (i, e) in NodeStat::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i);
        }
        for (i, e) in ZoneStat::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i);
        }
        for (i, e) in NumaStat::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i);
        }
        assert_eq!(ZoneStat::ALL[NR_ZONE_STATS - 1], ZoneStat::NrFreeCma);
        assert_eq!(
            NodeStat::ALL[NR_NODE_STATS - 1],
            NodeStat::PgpromoteCandidate
        );
        assert_eq!(
            VmEvent::ALL[NR_VM_EVENTS - 1],
            VmEvent::DirectMapLevel3Splits
        );
    }

    #[test]
    fn zone_indexed_events() {
        use crate::machine::{ZONE_DEVICE, ZONE_DMA, ZONE_MOVABLE, ZONE_NORMAL, ZONE_SUFFIXES};
        assert_eq!(VmEvent::pgalloc(ZONE_DMA), VmEvent::PgallocDma);
        assert_eq!(
            VmEvent::allocstall(ZONE_MOVABLE),
            VmEvent::AllocstallMovable
        );
        assert_eq!(VmEvent::pgskip(ZONE_NORMAL), VmEvent::PgskipNormal);
        assert_eq!(VmEvent::pgskip(ZONE_DEVICE), VmEvent::PgskipDevice);
        for (z, sfx) in ZONE_SUFFIXES.iter().enumerate() {
            assert_eq!(VmEvent::pgalloc(z).name(), format!("pgalloc_{sfx}"));
            assert_eq!(VmEvent::allocstall(z).name(), format!("allocstall_{sfx}"));
            assert_eq!(VmEvent::pgskip(z).name(), format!("pgskip_{sfx}"));
        }
    }

    #[test]
    fn events_add_get() {
        let mut ev = VmEvents::new();
        ev.add(VmEvent::Pswpout, 3);
        ev.add(VmEvent::Pswpout, 4);
        assert_eq!(ev.get(VmEvent::Pswpout), 7);
        assert_eq!(ev.get(VmEvent::Pswpin), 0);
        assert_eq!(ev.named().nth(3), Some(("pswpout", 7)));
    }

    #[test]
    fn format_divides_thp_items_and_ends_with_nr_unstable() {
        let zone = [0u64; NR_ZONE_STATS];
        let numa = [0u64; NR_NUMA_STATS];
        let mut node = [0u64; NR_NODE_STATS];
        node[NodeStat::NrAnonTransparentHugepages as usize] = 3 * 512 + 100;
        node[NodeStat::NrShmemHugepages as usize] = 1024;
        node[NodeStat::NrShmemPmdmapped as usize] = 511;
        node[NodeStat::NrFileHugepages as usize] = 512;
        node[NodeStat::NrFilePmdmapped as usize] = 2048;
        node[NodeStat::NrAnonPages as usize] = 1000;
        let mut events = [0u64; NR_VM_EVENTS];
        events[VmEvent::Pgfault as usize] = 42;
        let text = format_vmstat(&zone, &numa, &node, 1234, 617, &events);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), vmstat_names().len());
        assert!(text.ends_with("direct_map_level3_splits 0\nnr_unstable 0\n"));
        assert!(lines.contains(&"nr_anon_transparent_hugepages 3"));
        assert!(lines.contains(&"nr_shmem_hugepages 2"));
        assert!(lines.contains(&"nr_shmem_pmdmapped 0"));
        assert!(lines.contains(&"nr_file_hugepages 1"));
        assert!(lines.contains(&"nr_file_pmdmapped 4"));
        assert!(lines.contains(&"nr_anon_pages 1000"));
        assert!(lines.contains(&"nr_dirty_threshold 1234"));
        assert!(lines.contains(&"nr_dirty_background_threshold 617"));
        assert!(lines.contains(&"pgfault 42"));
        for (line, name) in lines.iter().zip(vmstat_names()) {
            assert_eq!(line.split(' ').next(), Some(name));
        }
    }
}
