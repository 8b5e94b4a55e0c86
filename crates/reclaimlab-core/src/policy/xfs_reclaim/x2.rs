//! X2, the seed 002 patch to `xfs_reclaim_inodes_nr`: kswapd walks with `SYNC_TRYLOCK` only
//! and frees just the clean inodes; direct reclaim keeps `SYNC_WAIT`, which throttles it on
//! its own dirty-inode I/O.

use crate::machine::fs::xfs::xfs_icache::{WalkMode, XfsReclaimWalk};

#[derive(Debug)]
pub struct KswapdNonBlocking;

impl XfsReclaimWalk for KswapdNonBlocking {
    fn mode(&self, kswapd: bool) -> WalkMode {
        WalkMode {
            ag_lock: true,
            sync_wait: !kswapd,
        }
    }
}
