//! The writeback flusher (`fs/fs-writeback.c` worker, core-mm §10.2 item 5: an abstraction):
//! background writeback above the background threshold, and periodic writeback of pages dirty
//! for longer than the expiry.

use std::any::Any;

use crate::machine::{Machine, Signal};
use crate::world::{Actor, StepCx, Wake};

const NS_PER_SEC: u64 = 1_000_000_000;
/// The flusher wakes this often to write old dirty pages (`dirty_writeback_centisecs`).
pub const FLUSHER_PERIOD_NS: u64 = 5 * NS_PER_SEC;
/// Dirty pages older than this are written on the periodic wake (`dirty_expire_centisecs`).
pub const DIRTY_EXPIRE_NS: u64 = 30 * NS_PER_SEC;
/// Pages the flusher submits per step; it then waits for the disk queue to drain.
pub const FLUSHER_BATCH: u64 = 256;

#[derive(Debug, Default)]
pub struct Flusher;

/// More dirty pages than the background threshold (`wb_over_bg_thresh`): background
/// writeback runs until they are back under it.
fn over_background_thresh(m: &Machine) -> bool {
    let (_, bg) = m.dirty_limits();
    m.stat.nr_dirty > bg
}

impl Actor for Flusher {
    fn name(&self) -> &str {
        "flusher"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let m = cx.machine();
        let older_than = if over_background_thresh(m) {
            u64::MAX
        } else {
            now.saturating_sub(DIRTY_EXPIRE_NS)
        };
        let n = m.writeback_dirty(FLUSHER_BATCH, older_than);
        let tag = m.disk.get_tag(now);
        if n > 0 {
            Wake::At(m.disk.busy_until.max(now + 1))
        } else if tag > now {
            // Every request slot is busy: go on when one is free.
            Wake::At(tag)
        } else if m.stat.nr_dirty > 0 {
            Wake::At(now + FLUSHER_PERIOD_NS)
        } else {
            // Idle until a page is dirtied.
            Wake::Idle
        }
    }

    fn wants(&self, signal: Signal) -> bool {
        signal == Signal::Dirtied
    }

    /// A page was dirtied. Past the background threshold, background writeback starts now,
    /// as the writer's `balance_dirty_pages` starts it (`wb_start_background_writeback`),
    /// even when the flusher is between its periodic wake-ups; below it, an idle flusher only
    /// schedules its periodic check for the page's expiry.
    fn on_signal(&mut self, _signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        let now = cx.now();
        if over_background_thresh(cx.machine()) {
            Some(Wake::NoLaterThan(now))
        } else {
            Some(Wake::IfIdle(now))
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
