//! A guest's hinting worker: the deferred half of its hinting variant. Under free page
//! reporting (D4) it is the `page_reporting_process` work item, queued 2 s after a request; under
//! the RFC v8 capture arrays (D2) it is the per-CPU `hinting/N` kthread, for a pass its freeing
//! task did not reach. Each step is one unit of the variant's work (one report under D4); the
//! world makes the worker wait for the host's ack before its next step.

use std::any::Any;

use crate::machine::page_reporting::WorkStep;
use crate::machine::Signal;
use crate::world::{Actor, StepCx, Wake};

#[derive(Debug, Default)]
pub struct HintingWorker {
    /// Steps run (reports sent, passes finished).
    pub steps: u64,
}

impl Actor for HintingWorker {
    fn name(&self) -> &str {
        "hinting_worker"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let m = cx.machine();
        m.guest_mut().work_due = None;
        self.steps += 1;
        match m.guest_work(now) {
            // The world delays this by the report's round trip and discards.
            WorkStep::More => Wake::At(now),
            WorkStep::Finished(Some(delay)) => Wake::At(now + delay),
            WorkStep::Finished(None) => Wake::Idle,
        }
    }

    fn wants(&self, signal: Signal) -> bool {
        signal == Signal::HintingWork
    }

    fn on_signal(&mut self, _signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        let due = cx.machine().guest_mut().work_due?;
        Some(Wake::NoLaterThan(due))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
