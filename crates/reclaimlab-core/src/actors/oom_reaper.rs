//! The oom_reaper kthread (`mm/oom_kill.c`): tears down an OOM victim's address space a short
//! while after the kill, so the memory comes back even if the victim is stuck.

use std::any::Any;
use std::collections::VecDeque;

use crate::machine::Signal;
use crate::world::{Actor, StepCx, Wake};

#[derive(Debug)]
pub struct OomReaper {
    /// Delay between a kill and the reaping.
    pub delay_ns: u64,
    /// Pending work: (time, task).
    queue: VecDeque<(u64, usize)>,
}

impl OomReaper {
    pub fn new(delay_ns: u64) -> OomReaper {
        OomReaper {
            delay_ns,
            queue: VecDeque::new(),
        }
    }
}

impl Actor for OomReaper {
    fn name(&self) -> &str {
        "oom_reaper"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        while let Some(&(t, task)) = self.queue.front() {
            if t > now {
                return Wake::At(t);
            }
            self.queue.pop_front();
            cx.machine().oom_reap(task);
        }
        Wake::Idle
    }

    fn wants(&self, signal: Signal) -> bool {
        matches!(signal, Signal::OomKill(_))
    }

    fn on_signal(&mut self, signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        let Signal::OomKill(victim) = signal else {
            return None;
        };
        let t = cx.now() + self.delay_ns;
        self.queue.push_back((t, victim));
        Some(Wake::NoLaterThan(t))
    }

    /// A victim not yet reaped keeps the run going: its memory is still coming back.
    fn holds_run_open(&self) -> bool {
        !self.queue.is_empty()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
