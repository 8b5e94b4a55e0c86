//! `[policy] blkback_backing`: where a blkback pool page comes from (mechanisms.md §B.2).
//! Balloon pages are dom0 RAM, so pools cost dom0 memory and squeezing gives it back;
//! unpopulated pages are not RAM, so squeezing gives back about nothing.

mod balloon;
mod unpopulated;

use super::{Switch, Variant};
use crate::machine::xen::GnttabBacking;

pub static SWITCH: Switch<dyn GnttabBacking> = Switch {
    name: "blkback_backing",
    spec: "mechanisms.md §B.2",
    summary: "what backs blkback's pool pages: ballooned dom0 RAM or unpopulated ZONE_DEVICE memory (Xen scenarios)",
    default: "unpopulated",
    preset: None,
    variants: &[
        Variant {
            name: "balloon",
            kernel: "< 5.9, or 6.1 without XEN_UNPOPULATED_ALLOC",
            summary: "a pool page is a dom0 page handed to Xen (alloc_page may reclaim); freed pages come back after balloon_delay",
            make: || Box::new(balloon::Ballooned),
        },
        Variant {
            name: "unpopulated",
            kernel: "5.9 - 6.1 default",
            summary: "pool pages are ZONE_DEVICE pages over unpopulated address space: no dom0 RAM but 512 pages of memmap per 128 MiB section",
            make: || Box::new(unpopulated::Unpopulated),
        },
    ],
};
