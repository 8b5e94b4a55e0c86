//! The AIL and its pusher (`xfs_trans_ail.c`): dirty inodes wait in the AIL until their cluster
//! buffer is written; xfsaild keeps up to the queue depth of its cluster writes in flight (queued
//! behind whatever reads are already booked), when asked to push everything (`xfs_ail_push_all`,
//! which every shrinker call does) or when the log is three quarters full (tail pushing). A
//! finished write cleans the cluster's inodes and frees their log space (mechanisms §A.6).

use super::super::inode::{VfsState, XfsState};
use super::super::Filesystem;

impl Filesystem {
    /// `xfs_ail_push_all`.
    pub fn xfs_ail_push_all(&mut self) {
        self.xfs.push_all = true;
    }

    /// Cluster writes finished by `at` (`xfs_buf_ioend` → `xfs_iflush_done`): their flushing
    /// inodes are clean and give back their log space.
    pub fn xfs_buf_ioend(&mut self, at: u64) {
        while let Some((ag, c)) = self.xfs.io.pop_done(at) {
            let members = &self.xfs.ags[ag as usize].clusters[c as usize];
            for &ino in members {
                let i = &mut self.icache.i[ino as usize];
                if i.xfs == XfsState::Flushing {
                    i.xfs = XfsState::Clean;
                    self.xfs.log_used -= 1;
                }
            }
        }
    }

    /// `xfs_iflush_cluster` + submit: write every dirty (checkpointed, unpinned) inode of the
    /// cluster at `at`. Returns the write's completion time, or `None` if none was dirty.
    pub fn xfs_iflush_cluster(&mut self, at: u64, ag: u32, cluster: u32) -> Option<u64> {
        let mut any = false;
        for &ino in &self.xfs.ags[ag as usize].clusters[cluster as usize] {
            let i = &mut self.icache.i[ino as usize];
            if i.xfs == XfsState::Dirty && i.vfs != VfsState::Free {
                i.xfs = XfsState::Flushing;
                any = true;
            }
        }
        any.then(|| self.xfs.io.submit(at, self.cfg.io_latency_ns, ag, cluster))
    }

    /// Log space not on its way back (pinned or dirty, not flushing).
    fn log_held(&self) -> u64 {
        self.xfs.log_used
    }

    /// One round of `xfsaild_push` at `at`: returns the cluster writes issued.
    pub fn xfsaild_push(&mut self, at: u64) -> u64 {
        let tail_push = self.log_held() * 4 >= self.cfg.log_inodes * 3;
        if !self.xfs.push_all && !tail_push {
            return 0;
        }
        let depth = self.xfs.io.slots.len();
        let mut issued = 0;
        while self.xfs.io.writes_in_flight(at) < depth {
            let Some(ino) = self.xfs.ail.pop_front() else {
                self.xfs.push_all = false;
                break;
            };
            let i = self.icache.i[ino as usize];
            if i.xfs != XfsState::Dirty || i.vfs == VfsState::Free {
                continue;
            }
            let cluster = i.agino / self.cfg.cluster_inodes as u32;
            if self.xfs_iflush_cluster(at, i.ag, cluster).is_some() {
                issued += 1;
                self.stats.aild_cluster_writes += 1;
            }
        }
        issued
    }
}
