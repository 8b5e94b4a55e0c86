//! The log as inode reclaim meets it (`xfs_log_cil.c`, `xfs_log.c`): a logged inode is pinned
//! in the CIL until the next checkpoint writes it to the log (then it is dirty in the AIL);
//! log space is held from the change until the inode is written back in place. When the log
//! is full, a create waits for space (mechanisms §A.6). Space is counted in inodes [recon].

use super::super::inode::XfsState;
use super::super::Filesystem;

impl Filesystem {
    /// `xfs_trans_log_inode` + commit: the inode is pinned in the CIL and holds log space.
    pub fn xfs_trans_log_inode(&mut self, ino: u32) {
        let i = &mut self.icache.i[ino as usize];
        if i.xfs == XfsState::Clean {
            self.xfs.log_used += 1;
        }
        i.xfs = XfsState::Pinned;
        self.xfs.cil.push(ino);
    }

    /// Is there log space for one more inode change (`xlog_grant_head_check`)?
    pub fn log_space_available(&self) -> bool {
        self.xfs.log_used < self.cfg.log_inodes
    }

    /// `xlog_cil_push_work`: checkpoint the CIL; its pinned inodes become dirty in the AIL.
    /// Also what a log force does (`xfs_log_force`, `xfs_iunpin_wait`).
    pub fn xlog_cil_push(&mut self) {
        if self.xfs.cil.is_empty() {
            return;
        }
        self.stats.cil_checkpoints += 1;
        for k in 0..self.xfs.cil.len() {
            let ino = self.xfs.cil[k];
            let i = &mut self.icache.i[ino as usize];
            if i.xfs == XfsState::Pinned {
                i.xfs = XfsState::Dirty;
                self.xfs.ail.push_back(ino);
            }
        }
        self.xfs.cil.clear();
    }
}
