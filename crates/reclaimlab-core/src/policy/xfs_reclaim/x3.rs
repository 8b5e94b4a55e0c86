//! X3 (v5.9+, 6.1): `xfs_icwalk(XFS_ICWALK_RECLAIM)`, lockless and non-blocking: clean
//! inodes are freed, the rest skipped; writeback happens only by AIL pushing.

use crate::machine::fs::xfs::xfs_icache::{WalkMode, XfsReclaimWalk};

#[derive(Debug)]
pub struct Icwalk;

impl XfsReclaimWalk for Icwalk {
    fn mode(&self, _kswapd: bool) -> WalkMode {
        WalkMode {
            ag_lock: false,
            sync_wait: false,
        }
    }
}
