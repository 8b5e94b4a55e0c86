//! X0, the seed's experiment: inode writeback skipped for every reclaimer (`SYNC_TRYLOCK`
//! alone). In the seed, fsmark was OOM-killed when the log filled: only the AIL could retire
//! dirty inodes, and it could not keep up.

use crate::machine::fs::xfs::xfs_icache::{WalkMode, XfsReclaimWalk};

#[derive(Debug)]
pub struct SkipWriteback;

impl XfsReclaimWalk for SkipWriteback {
    fn mode(&self, _kswapd: bool) -> WalkMode {
        WalkMode {
            ag_lock: true,
            sync_wait: false,
        }
    }
}
