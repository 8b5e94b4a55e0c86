//! The log as inode reclaim meets it (`xfs_log_cil.c`, `xfs_log.c`): a logged inode is pinned
//! in the CIL until the next checkpoint writes it to the log (then it is dirty in the AIL);
//! log space is held from the change until the inode is written back in place. When the log
//! is full, a create waits for space (mechanisms §A.6). Space is counted in inodes [recon].
//!
//! When a checkpoint happens decides how long a new inode stays pinned, and so how long inode
//! reclaim, which skips pinned and dirty inodes, cannot free it. 6.1 has no timer for it: a
//! commit that takes the CIL past its space limit queues the push (`xlog_cil_push_background`,
//! the limit `XLOG_CIL_SPACE_LIMIT`, an eighth of the log for logs up to 256 MiB), and
//! otherwise only a log force checkpoints, the periodic one being the log worker's
//! (`xfs_log_worker`, every `xfssyncd_centisecs`). A mkfs-default 2 GiB filesystem has a 64 MiB
//! log: 8 MiB of CIL, thousands of creates. The push runs at once here (the kernel queues it
//! on a workqueue), and the CIL's space is counted in the log's unit, inodes.

use super::super::inode::XfsState;
use super::super::Filesystem;

/// `XLOG_CIL_SPACE_LIMIT` in logged inodes: an eighth of the log (at least one).
pub fn cil_space_limit(log_inodes: u64) -> u64 {
    (log_inodes / 8).max(1)
}

impl Filesystem {
    /// `xfs_trans_log_inode` + commit: the inode is pinned in the CIL and holds log space.
    pub fn xfs_trans_log_inode(&mut self, ino: u32) {
        let i = &mut self.icache.i[ino as usize];
        if i.xfs == XfsState::Clean {
            self.xfs.log_used += 1;
        }
        if i.xfs != XfsState::Pinned {
            i.xfs = XfsState::Pinned;
            self.xfs.cil.push(ino);
        }
    }

    /// `xlog_cil_push_background`, after a commit: checkpoint the CIL if it has reached its
    /// space limit. Returns what [`xlog_cil_push`](Self::xlog_cil_push) does.
    #[must_use]
    pub fn xlog_cil_push_background(&mut self) -> u64 {
        if (self.xfs.cil.len() as u64) < cil_space_limit(self.cfg.log_inodes) {
            return 0;
        }
        self.xlog_cil_push()
    }

    /// `xfs_log_worker`: force the log (checkpoint the CIL) and push everything in the AIL.
    /// Returns what [`xlog_cil_push`](Self::xlog_cil_push) does.
    #[must_use]
    pub fn xfs_log_worker(&mut self) -> u64 {
        let n = self.xlog_cil_push();
        self.xfs_ail_push_all();
        n
    }

    /// Is there log space for one more inode change (`xlog_grant_head_check`)?
    pub fn log_space_available(&self) -> bool {
        self.xfs.log_used < self.cfg.log_inodes
    }

    /// `xlog_cil_push_work`: checkpoint the CIL; its pinned inodes become dirty in the AIL.
    /// Also what a log force does (`xfs_log_force`, `xfs_iunpin_wait`). The checkpoint is
    /// taken as committed at once: returns how many inode log buffers it freed, for the
    /// caller to give back to their slab (`Machine::xfs_cil_committed`).
    #[must_use]
    pub fn xlog_cil_push(&mut self) -> u64 {
        if self.xfs.cil.is_empty() {
            return 0;
        }
        self.stats.cil_checkpoints += 1;
        let mut lvs = 0;
        for k in 0..self.xfs.cil.len() {
            let ino = self.xfs.cil[k];
            let i = &mut self.icache.i[ino as usize];
            if i.xfs == XfsState::Pinned {
                i.xfs = XfsState::Dirty;
                self.xfs.ail.push_back(ino);
            }
            lvs += std::mem::take(&mut i.lv) as u64;
        }
        self.xfs.cil.clear();
        lvs
    }
}
