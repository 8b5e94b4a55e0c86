//! `[policy] blkback_grants`: persistent grants in blkback (mechanisms.md §C, seed 003).

mod none;
mod v38;
mod v61;

use super::{Switch, Variant};
use crate::machine::xen::PersistentGrants;

pub static SWITCH: Switch<dyn PersistentGrants> = Switch {
    name: "blkback_grants",
    spec: "mechanisms.md §C",
    summary: "Xen blkback persistent grants: none, v3.8's fixed cap, or 6.1's cap with purge (Xen scenarios)",
    default: "v61",
    preset: None,
    variants: &[
        Variant {
            name: "none",
            kernel: "<= 3.7",
            summary: "every segment is mapped and unmapped per request (one TLB flush per unmap batch)",
            make: || Box::new(none::MapUnmap),
        },
        Variant {
            name: "v38",
            kernel: "3.8 - 3.10",
            summary: "up to 352 grants per device (32 x 11) kept mapped until disconnect; beyond, map and unmap per request",
            make: || Box::new(v38::FixedCap),
        },
        Variant {
            name: "v61",
            kernel: "3.11 - 6.1",
            summary: "up to max_persistent_grants per ring; a 100 ms purge drops idle grants (60 s) and the overflow's excess + 50 in gref order",
            make: || Box::new(v61::Purged),
        },
    ],
};
