//! kcompactd (`mm/compaction.c`, core-mm §4.6): woken by kswapd before its nap with the order
//! it could not satisfy, it compacts the zones up to the classzone once per wake. With
//! proactive compaction (`[policy] kcompactd` = "v6.1", `vm.compaction_proactiveness` > 0) it
//! also wakes when nothing has woken it for 500 ms and compacts a fragmented node.

use std::any::Any;

use crate::machine::compaction::{
    CompactStats, COMPACT_MAX_DEFER_SHIFT, HPAGE_FRAG_CHECK_INTERVAL_NS,
};
use crate::machine::psi::{PsiTask, PSI_SYSTEM};
use crate::machine::vmstat::VmEvent;
use crate::machine::Signal;
use crate::world::{Actor, StepCx, Wake};

/// `[policy] kcompactd` (variants in `crate::policy::kcompactd`): read by kcompactd, and by
/// kswapd, which wakes it.
pub trait KcompactdPolicy: std::fmt::Debug {
    /// Does kswapd wake kcompactd for the order it was asked for before it naps?
    fn woken_by_kswapd(&self) -> bool;
    /// Does kcompactd also compact on its own, every 500 ms, a node whose free memory is
    /// fragmented (proactive compaction, `vm.compaction_proactiveness`)?
    fn proactive(&self) -> bool;
}

#[derive(Debug)]
pub struct Kcompactd {
    policy: Box<dyn KcompactdPolicy>,
    /// When the proactive check is next due: the end of kcompactd's timed wait, restarted
    /// after each wake (`wait_event_freezable_timeout` in the kernel's loop).
    check_at: u64,
    /// kcompactd as PSI counts it (system group, CPU 0): a wake's compaction
    /// (`kcompactd_do_work`) is a memory stall, a proactive run is not.
    psi: PsiTask,
}

impl Kcompactd {
    /// The thread as the node boots it: its first timed wait ends 500 ms into the run.
    pub fn new(policy: Box<dyn KcompactdPolicy>, now: u64) -> Kcompactd {
        Kcompactd {
            policy,
            check_at: now + HPAGE_FRAG_CHECK_INTERVAL_NS,
            psi: PsiTask::new(PSI_SYSTEM, 0),
        }
    }

    /// When its first proactive check is due, if the variant makes any (a proactiveness of 0
    /// ends them at the first).
    pub fn proactive_check_at(&self) -> Option<u64> {
        self.policy.proactive().then_some(self.check_at)
    }
}

impl Actor for Kcompactd {
    fn name(&self) -> &str {
        "kcompactd0"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let m = cx.machine();
        let proactive = self.policy.proactive() && m.cfg.sysctl.compaction_proactiveness != 0;
        m.psi.run(&mut self.psi, now);
        let mut end = now;
        if let Some((order, hz)) = m.kcompactd_wake.take() {
            m.vm.add(VmEvent::CompactDaemonWake, 1);
            let mut st = CompactStats::default();
            m.compact_zones(order, hz, &mut st);
            m.account_compaction(&st, true);
            let cost = m.compaction_cost(&st);
            end = now + cost;
            m.psi.memstall_enter(&mut self.psi, now);
            m.psi.memstall_leave(&mut self.psi, end);
            cx.charge_cpu(cost);
            // A wake restarts the timed wait.
            self.check_at = now + cost + HPAGE_FRAG_CHECK_INTERVAL_NS;
        } else if proactive && now >= self.check_at {
            let mut timeout = HPAGE_FRAG_CHECK_INTERVAL_NS;
            let mut cost = 0;
            if m.should_proactive_compact_node() {
                let before = m.fragmentation_score_node();
                let mut st = CompactStats::default();
                m.proactive_compact_node(&mut st);
                // 6.1 counts proactive compaction's scans in the general counters only, not
                // in kcompactd's own (compact_daemon_*), and not as a kcompactd wake.
                m.account_compaction(&st, false);
                cost = m.compaction_cost(&st);
                // No progress: back off 64 periods (32 s).
                if m.fragmentation_score_node() >= before {
                    timeout <<= COMPACT_MAX_DEFER_SHIFT;
                }
                end = now + cost;
                cx.charge_cpu(cost);
            }
            self.check_at = now + cost + timeout;
        }
        let m = cx.machine();
        m.psi.sleep(&mut self.psi, false, end);
        if proactive {
            Wake::At(self.check_at)
        } else {
            Wake::Idle
        }
    }

    fn wants(&self, signal: Signal) -> bool {
        signal == Signal::KcompactdWake
    }

    fn on_signal(&mut self, _signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        // Now, even with the proactive check pending later.
        Some(Wake::NoLaterThan(cx.now()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
