//! The balance rules on hand-built zones: the thread's imbalanced host and the reviewer's
//! DMA corner case.

use super::*;
use crate::machine::buddy::FreeArea;
use crate::machine::layout::ZoneSpan;
use crate::machine::watermark::{Watermarks, MIGRATE_MOVABLE};
use crate::machine::MAX_NR_ZONES;
use crate::machine::{ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE, ZONE_NORMAL};
use crate::policy::watermark_check::{FreeBlocks, PerOrder};

/// A zone with `free` free pages split into order-0 pages plus `blocks[o]` blocks of order o.
fn zone(
    idx: usize,
    present: u64,
    high: u64,
    reserve_hz: u64,
    free0: u64,
    blocks: &[(usize, u64)],
) -> Zone {
    let mut fa = FreeArea::new(0, 0);
    fa.nr_free[0][MIGRATE_MOVABLE] = free0;
    let mut free = free0;
    for &(o, n) in blocks {
        fa.nr_free[o][MIGRATE_MOVABLE] = n;
        free += n << o;
    }
    fa.free_pages = free;
    let mut lowmem_reserve = [0; MAX_NR_ZONES];
    lowmem_reserve[ZONE_MOVABLE] = reserve_hz;
    Zone {
        idx,
        span: ZoneSpan {
            start_pfn: 0,
            spanned: present,
            present,
            managed: present,
        },
        free_area: fa,
        wmark: Watermarks {
            min: high / 2,
            low: high * 3 / 4,
            high,
            promo: high,
        },
        watermark_boost: 0,
        lowmem_reserve,
        nr_reserved_highatomic: 0,
        numa_hit: 0,
        pcp: Vec::new(),
        reclaim_active: false,
    }
}

fn empty(idx: usize) -> Zone {
    let mut z = zone(idx, 0, 0, 0, 0, &[]);
    z.span = ZoneSpan::default();
    z
}

/// The thread's imbalanced host: big DMA32, tiny Normal. DMA32 has plenty of order-3
/// blocks; Normal meets order-0 high but has only order-0 free pages.
fn imbalanced() -> [Zone; MAX_NR_ZONES] {
    [
        zone(ZONE_DMA, 3998, 21, 0, 3000, &[]),
        zone(ZONE_DMA32, 782_000, 4734, 13_281, 20_000, &[(3, 2000)]),
        zone(ZONE_NORMAL, 196_608, 1200, 0, 5000, &[]),
        empty(ZONE_MOVABLE),
        empty(4),
    ]
}

#[test]
fn all_zones_rule_keeps_kswapd_awake_on_a_fragmented_small_zone() {
    let z = imbalanced();
    assert!(
        !AllZones.balanced(&z, &PerOrder, 3, ZONE_MOVABLE),
        "Normal has no order-3 block: 2.6.36 is never balanced"
    );
    assert!(AllZones.balanced(&z, &PerOrder, 0, ZONE_MOVABLE));
    assert!(
        AnyZone.balanced(&z, &PerOrder, 3, ZONE_MOVABLE),
        "DMA32 is a suitable balanced zone"
    );
    assert!(
        QuarterOfNode.balanced(&z, &PerOrder, 3, ZONE_MOVABLE),
        "DMA32 holds > 25% of the node"
    );
    assert!(
        AnyZoneWithReserve.balanced(&z, &FreeBlocks, 3, ZONE_MOVABLE),
        "DMA32 clears high + reserve with an order-3 block"
    );
}

#[test]
fn any_zone_rules_still_require_order0_balance_everywhere() {
    let mut z = imbalanced();
    // Normal drops below its order-0 high watermark.
    z[ZONE_NORMAL].free_area.free_pages = 1000;
    z[ZONE_NORMAL].free_area.nr_free[0][MIGRATE_MOVABLE] = 1000;
    assert!(!AnyZone.balanced(&z, &PerOrder, 3, ZONE_MOVABLE));
    assert!(!QuarterOfNode.balanced(&z, &PerOrder, 3, ZONE_MOVABLE));
    assert!(!AnyZone.balanced(&z, &PerOrder, 0, ZONE_MOVABLE));
    // 6.1 looks at one zone only: DMA32 still balances the node.
    assert!(AnyZoneWithReserve.balanced(&z, &FreeBlocks, 3, ZONE_MOVABLE));
}

#[test]
fn corner_case_dma_alone_balances_any_zone_but_not_the_quarter_rule() {
    // Only the 16 MiB DMA zone has an order-3 block (the reviewer's corner case).
    let z = [
        zone(ZONE_DMA, 3998, 21, 0, 100, &[(3, 4)]),
        zone(ZONE_DMA32, 782_000, 4734, 13_281, 20_000, &[]),
        zone(ZONE_NORMAL, 196_608, 1200, 0, 5000, &[]),
        empty(ZONE_MOVABLE),
        empty(4),
    ];
    assert!(
        AnyZone.balanced(&z, &PerOrder, 3, ZONE_MOVABLE),
        "any-zone: the tiny DMA zone balances the node"
    );
    assert!(
        !QuarterOfNode.balanced(&z, &PerOrder, 3, ZONE_MOVABLE),
        "25%: 3998 pages are far below a quarter of the node"
    );
    assert!(!AllZones.balanced(&z, &PerOrder, 3, ZONE_MOVABLE));
    // 6.1: DMA's lowmem_reserve against a movable allocation is larger than the zone.
    let mut z61 = z.clone();
    z61[ZONE_DMA].lowmem_reserve[ZONE_MOVABLE] = 16_335;
    assert!(!AnyZoneWithReserve.balanced(&z61, &FreeBlocks, 3, ZONE_MOVABLE));
}

#[test]
fn quarter_rule_boundary() {
    // Normal alone holds exactly 25 % of present pages up to classzone: balanced.
    let mut z = [
        zone(ZONE_DMA, 0, 0, 0, 0, &[]),
        zone(ZONE_DMA32, 300, 10, 0, 20, &[]),
        zone(ZONE_NORMAL, 100, 10, 0, 0, &[(3, 4)]),
        empty(ZONE_MOVABLE),
        empty(4),
    ];
    z[0] = empty(ZONE_DMA);
    assert!(QuarterOfNode.balanced(&z, &PerOrder, 3, ZONE_MOVABLE));
    z[ZONE_NORMAL].span.present = 98;
    assert!(
        !QuarterOfNode.balanced(&z, &PerOrder, 3, ZONE_MOVABLE),
        "98 < 398/4"
    );
}
