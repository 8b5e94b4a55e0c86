//! `[policy] watermarks`: the default min_free_kbytes and the watermarks derived from it
//! (core-mm §2.1, §2.2).

mod v2_6_36;
mod v6_1;

use super::{Switch, Variant};
use crate::machine::policy::WatermarkSetup;

pub static SWITCH: Switch<dyn WatermarkSetup> = Switch {
    name: "watermarks",
    spec: "core-mm §2.1, §2.2",
    summary: "default min_free_kbytes and the min/low/high watermarks of each zone",
    default: "v6.1",
    preset: Some(super::ERA),
    variants: &[
        Variant {
            name: "v2.6.36",
            kernel: "2.6.36 - 3.7",
            summary: "sqrt rule capped at 64 MiB; low = min + min/4, high = min + min/2 on present pages",
            make: || Box::new(v2_6_36::Legacy),
        },
        Variant {
            name: "v6.1",
            kernel: "6.1",
            summary: "sqrt rule capped at 256 MiB, raised for THP; gap = max(min/4, managed x scale factor)",
            make: || Box::new(v6_1::ScaleFactor),
        },
    ],
};
