//! `[policy] blkback_pool`: what blkback's per-ring page pool keeps, and whether dom0's memory
//! pressure shrinks it (mechanisms.md §B.4, seed 000).

mod b0;
mod b1;
mod b2;
mod b3;

use super::{Switch, Variant};
use crate::machine::xen::BlkbackPool;

pub static SWITCH: Switch<dyn BlkbackPool> = Switch {
    name: "blkback_pool",
    spec: "mechanisms.md §B.4",
    summary: "Xen blkback's page pool and its reaction to dom0 memory pressure (Xen scenarios)",
    default: "B3",
    preset: None,
    variants: &[
        Variant {
            name: "B0",
            kernel: "<= 3.10",
            summary: "no pool: a global array of reqs x 11 pages allocated at module init caps requests in flight",
            make: || Box::new(b0::GlobalArray),
        },
        Variant {
            name: "B1",
            kernel: "3.11 - 5.5",
            summary: "per-ring pool grown on demand, shrunk to max_buffer_pages after each pass; blind to pressure",
            make: || Box::new(b1::Capped),
        },
        Variant {
            name: "B2",
            kernel: "seed v2 patch (2019)",
            summary: "blkback's own shrinker sets a module-global deadline; every ring squeezes to 0 until it",
            make: || Box::new(b2::GlobalSqueeze),
        },
        Variant {
            name: "B3",
            kernel: "5.6 - 6.1",
            summary: "xenbus \"xen-backend\" shrinker sets each device's deadline; its rings squeeze to 0 until it",
            make: || Box::new(b3::DeviceSqueeze),
        },
    ],
};
