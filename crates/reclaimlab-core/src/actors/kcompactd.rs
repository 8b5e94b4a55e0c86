//! kcompactd (`mm/compaction.c`, core-mm §4.6): woken by kswapd before its nap with the order
//! it could not satisfy; compacts the zones up to the classzone once per wake.

use std::any::Any;

use crate::machine::compaction::CompactStats;
use crate::machine::vmstat::VmEvent;
use crate::machine::Signal;
use crate::world::{Actor, StepCx, Wake};

#[derive(Debug, Default)]
pub struct Kcompactd;

impl Actor for Kcompactd {
    fn name(&self) -> &str {
        "kcompactd0"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let m = cx.machine();
        if let Some((order, hz)) = m.kcompactd_wake.take() {
            m.vm.add(VmEvent::CompactDaemonWake, 1);
            let mut st = CompactStats::default();
            m.compact_zones(order, hz, &mut st);
            m.account_compaction(&st, true);
            let cost = m.compaction_cost(&st);
            cx.charge_cpu(cost);
        }
        Wake::Idle
    }

    fn wants(&self, signal: Signal) -> bool {
        signal == Signal::KcompactdWake
    }

    fn on_signal(&mut self, _signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        Some(Wake::IfIdle(cx.now()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
