//! The XFS background inode reclaim worker (`xfs_reclaim_worker`): every
//! `xfssyncd_centisecs / 6 * 10` ms (5 s by default [6.1]) it walks every AG without blocking
//! and frees the clean reclaimable inodes (mechanisms §A.6).

use std::any::Any;

use crate::world::{Actor, StepCx, Wake};

#[derive(Debug, Default)]
pub struct XfsReclaimWorker;

impl XfsReclaimWorker {
    /// The worker's period for `xfssyncd_centisecs`.
    pub fn period_ns(centisecs: u64) -> u64 {
        centisecs / 6 * 10 * 1_000_000
    }
}

impl Actor for XfsReclaimWorker {
    fn name(&self) -> &str {
        "xfs-reclaim"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let m = cx.machine();
        m.xfs_catch_up(now);
        let Some(mut fs) = m.fs.take() else {
            return Wake::Done;
        };
        let period = Self::period_ns(fs.cfg.xfssyncd_centisecs);
        let mut cost = 0;
        if fs.xfs.nr_reclaimable > 0 {
            let w = m.xfs_reclaim_worker(&mut fs, now);
            cost = w.cpu_ns;
        }
        m.fs = Some(fs);
        cx.charge_cpu(cost);
        Wake::At(now + period.max(cost).max(1))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
