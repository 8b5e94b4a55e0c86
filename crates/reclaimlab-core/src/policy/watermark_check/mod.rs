//! `[policy] watermark_check`: the `zone_watermark_ok` test (core-mm §2.5).

mod v2_6_36;
mod v6_1;

use super::{Switch, Variant};
use crate::machine::policy::WatermarkCheck;

pub use v2_6_36::PerOrder;
pub use v6_1::FreeBlocks;

pub static SWITCH: Switch<dyn WatermarkCheck> = Switch {
    name: "watermark_check",
    spec: "core-mm §2.5",
    summary: "the zone watermark test of every allocation and of kswapd's balance check",
    default: "v6.1",
    preset: Some(super::ERA),
    variants: &[
        Variant {
            name: "v2.6.36",
            kernel: "2.6.36 - 4.3",
            summary:
                "per-order test: blocks below the order stop counting, the mark halves per order",
            make: || Box::new(PerOrder),
        },
        Variant {
            name: "v6.1",
            kernel: "6.1",
            summary:
                "free pages above mark + reserve, then any free block of the order on a usable list",
            make: || Box::new(FreeBlocks),
        },
    ],
};
