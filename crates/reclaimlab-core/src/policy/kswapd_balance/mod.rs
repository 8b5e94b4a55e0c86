//! `[policy] kswapd_balance`: when is a node balanced, so kswapd may stop reclaiming and sleep
//! (core-mm §4.5, §4.8). The seed 004 thread argues over exactly this rule.
//!
//! The historical rules ask the machine's watermark test (the `watermark_check` switch, whose
//! preset for them is the old per-order test) with classzone 0, which has no lowmem reserve,
//! as those kernels' sleep checks did. They plug into 6.1's node-based `balance_pgdat`: the
//! rule decides when kswapd stops; the per-zone shrinking of the old kernels is not modelled.

mod v2_6_36;
mod v2_6_38;
mod v3_0;
mod v6_1;

use super::{Switch, Variant};
use crate::machine::policy::{PgdatBalanced, WatermarkCheck};
use crate::machine::zone::Zone;

pub use v2_6_36::AllZones;
pub use v2_6_38::AnyZone;
pub use v3_0::QuarterOfNode;
pub use v6_1::AnyZoneWithReserve;

pub static SWITCH: Switch<dyn PgdatBalanced> = Switch {
    name: "kswapd_balance",
    spec: "core-mm §4.5, §4.8; seed 004",
    summary: "when kswapd considers the node balanced and stops reclaiming",
    default: "v6.1",
    preset: None,
    variants: &[
        Variant {
            name: "v2.6.36",
            kernel: "2.6.36",
            summary: "every populated zone meets high at the order (sleeping_prematurely)",
            make: || Box::new(AllZones),
        },
        Variant {
            name: "v2.6.38",
            kernel: "2.6.38",
            summary: "order > 0: any zone <= classzone meets high at the order; every zone at order 0",
            make: || Box::new(AnyZone),
        },
        Variant {
            name: "v3.0",
            kernel: "2.6.39 - 3.0",
            summary: "order > 0: balanced zones hold >= 25% of the node's present pages; every zone at order 0",
            make: || Box::new(QuarterOfNode),
        },
        Variant {
            name: "v6.1",
            kernel: "6.1",
            summary: "any managed zone <= hz meets high + lowmem_reserve[hz] at the order",
            make: || Box::new(AnyZoneWithReserve),
        },
    ],
};

fn populated(z: &Zone) -> bool {
    z.span.present > 0 && z.is_managed()
}

/// The old `zone_watermark_ok_safe(zone, order, high_wmark_pages(zone), 0, 0)` (2.6.36 on):
/// classzone 0.
fn high_ok(z: &Zone, check: &dyn WatermarkCheck, order: u32) -> bool {
    check.ok_safe(z, order, z.high_wmark_pages(), 0, 0)
}

/// The first half of the 2.6.38 and 3.0 rules: every zone must meet high at order 0, and at
/// order 0 that is all. `Some(answer)` when it decides, `None` when the high-order half must.
fn order0_decides(zones: &[Zone], check: &dyn WatermarkCheck, order: u32) -> Option<bool> {
    if !all_zones_ok(zones, check, 0) {
        return Some(false);
    }
    (order == 0).then_some(true)
}

fn all_zones_ok(zones: &[Zone], check: &dyn WatermarkCheck, order: u32) -> bool {
    zones
        .iter()
        .filter(|z| populated(z))
        .all(|z| high_ok(z, check, order))
}

#[cfg(test)]
mod tests;
