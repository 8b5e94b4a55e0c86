//! "Is the node balanced?": the rule kswapd uses to decide it may stop reclaiming and sleep,
//! and `wakeup_kswapd` uses to decide it need not wake kswapd. One function per kernel
//! variant (core-mm §4.5, §4.8), selected by `[policy] kswapd_balance`:
//!
//! | name | kernel | rule |
//! |---|---|---|
//! | `v2.6.36` | 2.6.36 `sleeping_prematurely` | every populated zone meets high at the order (old per-order watermark test) |
//! | `v2.6.38` | 2.6.38 patch 1/5 "any suitable zone" | order > 0: one zone <= classzone meets high at the order, and every zone meets order-0 high; order 0: every zone |
//! | `v3.0` | 2.6.39/3.0 `pgdat_balanced` | order > 0: zones meeting high at the order hold >= 25 % of the present pages up to classzone, and every zone meets order-0 high; order 0: every zone |
//! | `v6.1` | 6.1 `pgdat_balanced` | any managed zone <= hz meets high + lowmem_reserve[hz] at the order |
//!
//! The historical rules use the old watermark test (`zone_watermark_ok_legacy`, core-mm §2.5)
//! with classzone 0 (no lowmem reserve), as those kernels' sleep checks did. They plug into
//! 6.1's node-based `balance_pgdat`: the rule decides when kswapd stops and sleeps; the per-zone
//! shrinking of the old kernels is not modelled (documented in docs/MODEL.md).

use crate::mm::node::Node;
use crate::mm::watermark::{zone_watermark_ok_legacy, MIGRATE_TYPES};
use crate::mm::zone::Zone;
use crate::mm::{MAX_NR_ZONES, MAX_ORDER};
use crate::scenario::KswapdBalance;

impl Node {
    /// `pgdat_balanced(order, highest_zoneidx)` under the scenario's policy.
    pub fn pgdat_balanced(&self, order: u32, hz: usize) -> bool {
        pgdat_balanced(self.cfg.kswapd_balance, &self.zones, order, hz)
    }
}

pub fn pgdat_balanced(
    rule: KswapdBalance,
    zones: &[Zone; MAX_NR_ZONES],
    order: u32,
    hz: usize,
) -> bool {
    match rule {
        KswapdBalance::V2_6_36 => v2_6_36(zones, order),
        KswapdBalance::V2_6_38 => v2_6_38(zones, order, hz),
        KswapdBalance::V3_0 => v3_0(zones, order, hz),
        KswapdBalance::V6_1 => v6_1(zones, order, hz),
    }
}

fn populated(z: &Zone) -> bool {
    z.span.present > 0 && z.is_managed()
}

/// The old `zone_watermark_ok(zone, order, high_wmark_pages(zone), 0, 0)`.
fn legacy_high_ok(z: &Zone, order: u32) -> bool {
    let nr_free: &[[u64; MIGRATE_TYPES]; MAX_ORDER] = &z.free_area.nr_free;
    zone_watermark_ok_legacy(
        z.free_pages() as i64,
        nr_free,
        0,
        order,
        z.high_wmark_pages(),
    )
}

fn all_zones_ok(zones: &[Zone; MAX_NR_ZONES], order: u32) -> bool {
    zones
        .iter()
        .filter(|z| populated(z))
        .all(|z| legacy_high_ok(z, order))
}

/// 2.6.36: all zones must be balanced at the requested order.
pub fn v2_6_36(zones: &[Zone; MAX_NR_ZONES], order: u32) -> bool {
    all_zones_ok(zones, order)
}

/// 2.6.38 "stop high-order balancing when any suitable zone is balanced".
pub fn v2_6_38(zones: &[Zone; MAX_NR_ZONES], order: u32, classzone: usize) -> bool {
    if !all_zones_ok(zones, 0) {
        return false;
    }
    if order == 0 {
        return true;
    }
    zones[..=classzone.min(MAX_NR_ZONES - 1)]
        .iter()
        .filter(|z| populated(z))
        .any(|z| legacy_high_ok(z, order))
}

/// 2.6.39/3.0: the balanced zones must hold at least a quarter of the node's present pages up
/// to classzone, so a 16 MiB DMA zone can never balance a node on its own.
pub fn v3_0(zones: &[Zone; MAX_NR_ZONES], order: u32, classzone: usize) -> bool {
    if !all_zones_ok(zones, 0) {
        return false;
    }
    if order == 0 {
        return true;
    }
    let eligible = &zones[..=classzone.min(MAX_NR_ZONES - 1)];
    let present: u64 = eligible.iter().map(|z| z.span.present).sum();
    let balanced: u64 = eligible
        .iter()
        .filter(|z| populated(z) && legacy_high_ok(z, order))
        .map(|z| z.span.present)
        .sum();
    balanced >= present / 4
}

/// Linux 6.1 (core-mm §4.5): balanced when ANY managed zone <= hz meets its high watermark
/// (boost included) at `order`, counting its `lowmem_reserve[hz]`; also balanced when no
/// managed zone <= hz exists.
pub fn v6_1(zones: &[Zone; MAX_NR_ZONES], order: u32, hz: usize) -> bool {
    let mut any_managed = false;
    for zone in &zones[..=hz.min(MAX_NR_ZONES - 1)] {
        if !zone.is_managed() {
            continue;
        }
        any_managed = true;
        if zone.watermark_ok(order, zone.high_wmark_pages(), hz, 0) {
            return true;
        }
    }
    !any_managed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::buddy::FreeArea;
    use crate::mm::layout::ZoneSpan;
    use crate::mm::watermark::{Watermarks, MIGRATE_MOVABLE};
    use crate::mm::{ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE, ZONE_NORMAL};

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
            legacy_check: false,
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
            !v2_6_36(&z, 3),
            "Normal has no order-3 block: 2.6.36 is never balanced"
        );
        assert!(v2_6_36(&z, 0));
        assert!(
            v2_6_38(&z, 3, ZONE_MOVABLE),
            "DMA32 is a suitable balanced zone"
        );
        assert!(v3_0(&z, 3, ZONE_MOVABLE), "DMA32 holds > 25% of the node");
        assert!(
            v6_1(&z, 3, ZONE_MOVABLE),
            "DMA32 clears high + reserve with an order-3 block"
        );
    }

    #[test]
    fn any_zone_rules_still_require_order0_balance_everywhere() {
        let mut z = imbalanced();
        // Normal drops below its order-0 high watermark.
        z[ZONE_NORMAL].free_area.free_pages = 1000;
        z[ZONE_NORMAL].free_area.nr_free[0][MIGRATE_MOVABLE] = 1000;
        assert!(!v2_6_38(&z, 3, ZONE_MOVABLE));
        assert!(!v3_0(&z, 3, ZONE_MOVABLE));
        assert!(!v2_6_38(&z, 0, ZONE_MOVABLE));
        // 6.1 looks at one zone only: DMA32 still balances the node.
        assert!(v6_1(&z, 3, ZONE_MOVABLE));
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
            v2_6_38(&z, 3, ZONE_MOVABLE),
            "any-zone: the tiny DMA zone balances the node"
        );
        assert!(
            !v3_0(&z, 3, ZONE_MOVABLE),
            "25%: 3998 pages are far below a quarter of the node"
        );
        assert!(!v2_6_36(&z, 3));
        // 6.1: DMA's lowmem_reserve against a movable allocation is larger than the zone.
        let mut z61 = z.clone();
        z61[ZONE_DMA].lowmem_reserve[ZONE_MOVABLE] = 16_335;
        assert!(!v6_1(&z61, 3, ZONE_MOVABLE));
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
        assert!(v3_0(&z, 3, ZONE_MOVABLE));
        z[ZONE_NORMAL].span.present = 98;
        assert!(!v3_0(&z, 3, ZONE_MOVABLE), "98 < 398/4");
    }
}
