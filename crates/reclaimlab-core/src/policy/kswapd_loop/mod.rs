//! `[policy] kswapd_loop`: what `balance_pgdat` does with the order and with a sweep that ends
//! unbalanced (core-mm §4.4).

mod v2_6_36;
mod v6_1;

use super::{Switch, Variant};
use crate::actors::kswapd::KswapdLoop;

pub static SWITCH: Switch<dyn KswapdLoop> = Switch {
    name: "kswapd_loop",
    spec: "core-mm §4.4",
    summary: "balance_pgdat's order handling and restart of an unbalanced sweep",
    default: "v6.1",
    preset: Some(super::ERA),
    variants: &[
        Variant {
            name: "v2.6.36",
            kernel: "2.6.36 - 3.x",
            summary: "loop_again: an unbalanced sweep restarts at DEF_PRIORITY; order kept",
            make: || Box::new(v2_6_36::LoopAgain),
        },
        Variant {
            name: "v6.1",
            kernel: "6.1",
            summary: "reclaim at order 0 once compact_gap pages are freed; no restart",
            make: || Box::new(v6_1::OrderZeroAfterGap),
        },
    ],
};
