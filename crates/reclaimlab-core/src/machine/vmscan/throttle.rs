//! Reclaim throttling (`reclaim_throttle`, core-mm §5.13): a reclaiming task that is getting
//! ahead of the I/O, or making no progress, sleeps on the node's wait queue until writeback
//! completes or a timeout passes.
//!
//! Time. kswapd's WRITEBACK throttle comes at the end of a `balance_pgdat` priority iteration,
//! so the kswapd actor sleeps until the wake-up computed here and the world runs on meanwhile.
//! Direct reclaim runs inside a step of the allocating task, on that task's clock
//! (`now + sc.cost_ns`): its throttles advance that clock and record the wait in
//! `sc.sleep_ns` (elapsed time, not CPU time). Write completions are
//! facts known in advance (the device queue is FIFO), so the WRITEBACK wake-up, "more than
//! `SWAP_CLUSTER_MAX` pages finished writeback since the sleep began", is computed exactly.
//! NOPROGRESS sleepers are woken early by another reclaimer's progress in the kernel; the
//! model runs one reclaimer's pass at a time, so they sleep their full jiffy. ISOLATED
//! (`too_many_isolated`) needs reclaimers whose passes overlap, which the model does not have:
//! it is never taken.

use super::{ScanControl, SWAP_CLUSTER_MAX};
use crate::machine::tracepoint::Tracepoint;
pub use crate::machine::zone::ThrottleReason;
use crate::machine::{Machine, JIFFY_NS, MAX_NR_ZONES};

impl Machine {
    /// `reclaim_throttle` for a reclaimer that starts sleeping at `start`: returns when it
    /// wakes (`start` when the throttle is skipped) and records the `mm_vmscan_throttled`
    /// event. Completions due by `start` are delivered first: the wake-up counts from there.
    pub fn reclaim_throttle(&mut self, reason: ThrottleReason, start: u64) -> u64 {
        if reason != ThrottleReason::Writeback && self.skip_throttle_noprogress() {
            return start;
        }
        self.process_io_completions(start);
        let timeout = start + reason.timeout_jiffies() * JIFFY_NS;
        let wake = match reason {
            // Woken once more than SWAP_CLUSTER_MAX pages (per throttled task: kswapd is the
            // only one) have finished writeback.
            ThrottleReason::Writeback => self
                .nth_writeback_completion(SWAP_CLUSTER_MAX as usize + 1)
                .map_or(timeout, |t| t.min(timeout)),
            ThrottleReason::Noprogress | ThrottleReason::Congested => timeout,
        };
        let slept = wake.saturating_sub(start);
        let nid = self.nid;
        self.trace(|| {
            let tp = Tracepoint::Throttled {
                nid,
                usec_timeout: reason.timeout_jiffies() * JIFFY_NS / 1000,
                usec_delayed: slept / 1000,
                reason,
            };
            (wake, tp)
        });
        wake
    }

    /// A throttle inside a direct reclaim pass: the task's clock moves to the wake-up, and
    /// the writeback finished by then is visible to the rest of the pass.
    pub(super) fn throttle_in_pass(&mut self, reason: ThrottleReason, sc: &mut ScanControl) {
        // A task that goes to sleep issues what its block plug holds first.
        if sc.plugged {
            self.blk_finish_plug(sc);
        }
        let start = self.now + sc.cost_ns;
        let wake = self.reclaim_throttle(reason, start);
        sc.cost_ns += wake - start;
        sc.sleep_ns += wake - start;
        self.process_io_completions(wake);
    }

    /// `skip_throttle_noprogress`: kswapd has given up on the node, or writeback is not what
    /// holds reclaim back (write-pending pages are at most half of the reclaimable ones).
    fn skip_throttle_noprogress(&self) -> bool {
        if self.kswapd.failures >= super::MAX_RECLAIM_RETRIES {
            return true;
        }
        let reclaimable: u64 = (0..MAX_NR_ZONES)
            .filter(|&z| self.zones[z].is_managed())
            .map(|z| self.zone_reclaimable_pages(z))
            .sum();
        let write_pending = self.stat.nr_dirty + self.stat.nr_writeback;
        2 * write_pending <= reclaimable
    }

    /// When the `n`-th of the writes now in flight, on either device, will have completed.
    fn nth_writeback_completion(&self, n: usize) -> Option<u64> {
        let (a, b) = (&self.swapdev.completions, &self.disk.completions);
        if a.len() + b.len() < n {
            return None;
        }
        // Both queues are in time order: merge the first `n`.
        let (mut i, mut j, mut last) = (0, 0, 0);
        for _ in 0..n {
            let take_a = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.0 <= y.0,
                (Some(_), None) => true,
                _ => false,
            };
            if take_a {
                last = a[i].0;
                i += 1;
            } else {
                last = b[j].0;
                j += 1;
            }
        }
        Some(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::frames::pg;

    /// A 256 MiB machine with `n` swap writes in flight, submitted at time 0 (pfns 0..n are
    /// the pages being written).
    fn machine_writing(n: u32, bandwidth: &str) -> Machine {
        let text = format!(
            "name = \"t\"\n[host]\nram = \"256MiB\"\n[swap]\nsize = \"256MiB\"\n\
             bandwidth = \"{bandwidth}\"\nlatency_jitter = 0.0\n[[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        let scn = crate::scenario::parse_str(&text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, true).unwrap();
        for pfn in 0..n {
            // Owned by some vpage (which one does not matter to the end of writeback).
            m.frames.set_page(pfn, pg::SWAPBACKED | pg::WRITEBACK, pfn);
            m.stat.nr_writeback += 1;
            m.swapdev.submit_write(0, pfn);
        }
        m
    }

    #[test]
    fn writeback_throttle_wakes_after_33_completions() {
        // 1 GiB/s: one page every 3,815 ns, then the 40 us write latency.
        let mut m = machine_writing(100, "1GiB/s");
        let done: Vec<u64> = m.swapdev.completions.iter().map(|c| c.0).collect();
        // Asleep from the moment the 10th write completes: woken by the 33 after it.
        let start = done[9];
        let wake = m.reclaim_throttle(ThrottleReason::Writeback, start);
        assert_eq!(wake, done[9 + 33]);
        // The ten already finished were delivered first.
        assert_eq!(m.stat.nr_writeback, 90);
        let Tracepoint::Throttled {
            usec_timeout,
            usec_delayed,
            reason,
            ..
        } = m.tracepoints.buf.last().unwrap().1
        else {
            panic!("no mm_vmscan_throttled event")
        };
        assert_eq!((usec_timeout, reason), (100_000, ThrottleReason::Writeback));
        assert_eq!(usec_delayed, (done[42] - done[9]) / 1000);
    }

    #[test]
    fn writeback_throttle_times_out_after_hz_over_10() {
        // 40 pages at 1 MiB/s take far longer than 100 ms to finish.
        let mut m = machine_writing(40, "1MiB/s");
        assert_eq!(
            m.reclaim_throttle(ThrottleReason::Writeback, 0),
            100_000_000
        );
        // Fewer than 33 writes in flight: only the timeout can end the sleep.
        let mut m = machine_writing(20, "1GiB/s");
        assert_eq!(
            m.reclaim_throttle(ThrottleReason::Writeback, 0),
            100_000_000
        );
    }

    #[test]
    fn noprogress_throttle_is_skipped_unless_writeback_dominates() {
        // An idle machine (its LRU empty, so reclaimable falls back to the free pages):
        // 100 pages under writeback are far less than half, so direct reclaim does not sleep.
        let mut m = machine_writing(100, "1MiB/s");
        assert_eq!(m.reclaim_throttle(ThrottleReason::Noprogress, 5), 5);
        // Dirty and writeback pages above half the reclaimable ones: one jiffy (4 ms at
        // HZ=250).
        m.stat.nr_dirty = m.total_free_pages() / 2;
        assert_eq!(
            m.reclaim_throttle(ThrottleReason::Noprogress, 5),
            5 + JIFFY_NS
        );
        assert_eq!(
            m.reclaim_throttle(ThrottleReason::Congested, 5),
            5 + JIFFY_NS
        );
    }
}
