//! X1 (<= v5.8, the stored 4.x `xfs_icache.c`): `SYNC_TRYLOCK | SYNC_WAIT` for every
//! reclaimer, kswapd included: log forces for pinned inodes, synchronous cluster writes for
//! dirty ones, and a blocking pass over AGs whose lock was busy.

use crate::machine::fs::xfs::xfs_icache::{WalkMode, XfsReclaimWalk};

#[derive(Debug)]
pub struct SyncWait;

impl XfsReclaimWalk for SyncWait {
    fn mode(&self, _kswapd: bool) -> WalkMode {
        WalkMode {
            ag_lock: true,
            sync_wait: true,
        }
    }
}
