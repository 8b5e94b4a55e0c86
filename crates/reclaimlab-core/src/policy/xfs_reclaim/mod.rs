//! `[policy] xfs_reclaim`: what XFS inode reclaim from the shrinker may wait for
//! (mechanisms §A.6, X0-X3). With `SYNC_WAIT` a reclaimer forces the log for pinned inodes
//! and writes dirty clusters synchronously, holding its AG's reclaim lock meanwhile; without
//! it, it frees only clean inodes and never waits.

mod x0;
mod x1;
mod x2;
mod x3;

use super::{Switch, Variant};
use crate::machine::fs::xfs::xfs_icache::XfsReclaimWalk;

pub static SWITCH: Switch<dyn XfsReclaimWalk> = Switch {
    name: "xfs_reclaim",
    spec: "mechanisms §A.6; seed 002",
    summary: "XFS inode reclaim from the shrinker: whether it waits on log forces and inode writeback",
    default: "X3",
    preset: None,
    variants: &[
        Variant {
            name: "X0",
            kernel: "seed 002 experiment",
            summary: "SYNC_TRYLOCK only for everyone: skip pinned and dirty inodes, never wait",
            make: || Box::new(x0::SkipWriteback),
        },
        Variant {
            name: "X1",
            kernel: "<= 5.8",
            summary: "SYNC_TRYLOCK | SYNC_WAIT for everyone: log force and synchronous cluster writes; blocking AG-lock retry",
            make: || Box::new(x1::SyncWait),
        },
        Variant {
            name: "X2",
            kernel: "seed 002 patch",
            summary: "X1 for direct reclaim; kswapd without SYNC_WAIT (clean inodes only)",
            make: || Box::new(x2::KswapdNonBlocking),
        },
        Variant {
            name: "X3",
            kernel: "5.9 - 6.1",
            summary: "xfs_icwalk: lockless, never blocks, frees clean inodes; writeback only by AIL pushing",
            make: || Box::new(x3::Icwalk),
        },
    ],
};
