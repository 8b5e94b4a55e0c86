//! `[policy] watermark_boost`: what an external fragmentation event does (core-mm §1.6, §4.6).
//! Since 5.0, when an allocation steals less than a pageblock from another migratetype, the
//! zone's watermarks are raised for a while and kswapd is woken to reclaim the difference
//! (without writeback or swap), so that the next fallback can take a whole pageblock instead
//! of mixing another one. Earlier kernels only stole.

mod v2_6_36;
mod v6_1;

use super::{Switch, Variant};
use crate::machine::policy::WatermarkBoost;

pub static SWITCH: Switch<dyn WatermarkBoost> = Switch {
    name: "watermark_boost",
    spec: "core-mm §1.6",
    summary: "whether a fallback steal below pageblock size boosts the zone's watermarks",
    default: "v6.1",
    preset: Some(super::ERA),
    variants: &[
        Variant {
            name: "v2.6.36",
            kernel: "2.6.36 - 4.20",
            summary: "no boost: a fallback steal only moves the block",
            make: || Box::new(v2_6_36::NoBoost),
        },
        Variant {
            name: "v6.1",
            kernel: "5.0 - 6.1",
            summary: "boost_watermark: +1 pageblock per event up to high x watermark_boost_factor, kswapd woken (gfp none)",
            make: || Box::new(v6_1::BoostWatermark),
        },
    ],
};
