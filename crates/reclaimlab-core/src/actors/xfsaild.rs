//! xfsaild, the AIL pusher (`fs/xfs/xfs_trans_ail.c`), with the log worker (`xfs_log_worker`,
//! every `xfssyncd_centisecs`: a log force and a push of the whole AIL): it writes the oldest
//! dirty inode clusters when the log is three quarters full or when a shrinker or a create
//! waiting for log space asked for everything to be pushed, as many at once as the I/O queue
//! takes (mechanisms §A.6). It polls every `aild_period` while there is anything to do, and sleeps otherwise.

use std::any::Any;

use crate::world::{Actor, StepCx, Wake};

/// pid of xfsaild in trace output.
pub const XFSAILD_PID: u32 = 80;

#[derive(Debug, Default)]
pub struct Xfsaild {
    /// Cluster writes it issued.
    pub pushed: u64,
}

impl Actor for Xfsaild {
    fn name(&self) -> &str {
        "xfsaild"
    }

    fn pid(&self) -> Option<u32> {
        Some(XFSAILD_PID)
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let m = cx.machine();
        m.xfs_catch_up(now);
        let Some(fs) = m.fs.as_mut() else {
            return Wake::Done;
        };
        let n = fs.xfsaild_push(now);
        self.pushed += n;
        let cost = n * fs.cfg.flush_cluster_ns;
        let period = fs.cfg.aild_period_ns;
        // Next: the earliest of the log worker's next run, the next write completing (a push may
        // then go on), and the poll period while there is dirty metadata.
        let mut next = fs.xfs.next_log_work_ns;
        if let Some(done) = fs.xfs.io.next_done() {
            next = next.min(done);
        }
        if !fs.xfs.ail.is_empty() {
            next = next.min(now + period);
        }
        cx.charge_cpu(cost);
        Wake::At(next.max(now + cost).max(now + 1))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
