//! The grant side of dom0 (`drivers/xen/grant-table.c`) and what its hypercalls cost in Xen
//! (mechanisms.md §C.3, §C.6). (Each ring's page cache, `gnttab_page_cache`, is the ring's
//! `pool` in `blkback.rs`, beside the path that uses it.)
//!
//! - Map and unmap hypercalls: a map batch holds at most 11 operations; Xen flushes the TLBs
//!   of dom0's dirty CPU mask once per [`GNTTAB_UNMAP_BATCH_SIZE`] unmaps, under one global
//!   flush lock, and every other dom0 CPU takes an IPI.
//!
//! The flush lock is where seed 003's collapse comes from in this model: flushes are
//! serialised, a flusher spins until the lock is free, and each other ring unmapping at the
//! same time makes every flush longer (mechanisms.md §C.6's `b·G` contention term, here
//! counted rather than assumed). The costs
//! are `[xen.cost]` estimates (mechanisms.md §C.6 gives their shape, not their values).

use super::{XenBackend, BLKIF_MAX_SEGMENTS_PER_REQUEST, GNTTAB_UNMAP_BATCH_SIZE};

/// A pool page that is not a dom0 frame (unpopulated ZONE_DEVICE memory).
pub const NO_FRAME: u32 = u32::MAX;

/// Totals of the grant path (synthetic metrics; the kernel exports none of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XenCounters {
    pub map_hypercalls: u64,
    pub map_ops: u64,
    pub unmap_hypercalls: u64,
    pub unmap_ops: u64,
    pub tlb_flushes: u64,
    pub ipis: u64,
    /// Time flushers spent spinning on the flush lock.
    pub flush_wait_ns: u64,
    /// Pool pages allocated (the pool grew) and freed by a shrink.
    pub pool_grown: u64,
    pub pool_freed: u64,
    /// Housekeeping steps that shrank a pool below `max_buffer_pages` (a squeeze).
    pub squeezes: u64,
    /// Times the pressure detector ran (its shrinker's `count_objects`).
    pub pressure_calls: u64,
    /// Persistent grants removed by the purge.
    pub purged: u64,
    /// Requests served, and their segments.
    pub requests: u64,
    pub segments: u64,
    /// Segments served from an existing persistent grant (no map).
    pub persistent_hits: u64,
}

/// Xen's TLB-flush lock: the flushes it is booked for, as (start, end), by start.
///
/// Rings run in steps of a few requests, so one ring may book flushes later in time than the
/// flush another ring asks for next: a flush takes the first gap in the bookings at or after
/// the time it is asked for, not the end of the queue.
#[derive(Debug, Clone, Default)]
pub struct FlushLock {
    booked: Vec<(u64, u64)>,
}

impl FlushLock {
    /// A flush asked for at `t` (no earlier than `floor`, the world's current time) that
    /// holds the lock `hold_ns`. Returns the time from `t` until it is done and the part
    /// spent spinning.
    pub fn flush(&mut self, floor: u64, t: u64, hold_ns: u64) -> (u64, u64) {
        self.booked.retain(|&(_, e)| e > floor);
        let mut start = t;
        let mut at = self.booked.len();
        for (i, &(s, e)) in self.booked.iter().enumerate() {
            if e <= start {
                continue;
            }
            if s >= start + hold_ns {
                at = i;
                break;
            }
            start = e;
        }
        let at = at.min(self.booked.partition_point(|&(s, _)| s < start));
        self.booked.insert(at, (start, start + hold_ns));
        (start + hold_ns - t, start - t)
    }
}

/// Map hypercalls for `ops` new mappings: batches of at most 11.
pub fn map_batches(ops: u64) -> u64 {
    ops.div_ceil(BLKIF_MAX_SEGMENTS_PER_REQUEST as u64)
}

impl XenBackend {
    /// The cost of mapping `ops` grants (`GNTTABOP_map_grant_ref` in batches of 11), counted.
    pub fn map_grants(&mut self, ops: u64) -> u64 {
        if ops == 0 {
            return 0;
        }
        let calls = map_batches(ops);
        self.counters.map_hypercalls += calls;
        self.counters.map_ops += ops;
        calls * self.cost.map_ns + ops * self.cost.map_op_ns
    }

    /// Ring `ring` unmaps `ops` grants in `calls` hypercalls, starting at `t` (its step began
    /// at `floor`): each hypercall's operations are flushed once per 32. Returns the time it
    /// took the unmapping CPU, and the IPI cost each other dom0 CPU took.
    pub fn unmap_grants(
        &mut self,
        ring: usize,
        ops: u64,
        calls: u64,
        floor: u64,
        t: u64,
    ) -> (u64, u64) {
        if ops == 0 {
            return (0, 0);
        }
        let c = &self.cost;
        let mut cost = calls * c.unmap_ns + ops * c.unmap_op_ns;
        let flushes = calls.max(ops.div_ceil(GNTTAB_UNMAP_BATCH_SIZE as u64));
        let v = self.dom0_cpus as u64;
        // The other rings unmapping now: their CPUs flush too, and the lock's cache line and
        // the IPI acknowledgements are shared with them.
        let others = self
            .rings
            .iter()
            .enumerate()
            .filter(|&(i, r)| i != ring && r.mapped_now > 0)
            .count() as u64;
        let hold = c.flush_ns + c.flush_cpu_ns * v + c.flush_contention_ns * others;
        let ipi = c.ipi_ns;
        for _ in 0..flushes {
            let (took, spun) = self.flush_lock.flush(floor, t + cost, hold);
            cost += took;
            self.counters.flush_wait_ns += spun;
        }
        self.counters.unmap_hypercalls += calls;
        self.counters.unmap_ops += ops;
        self.counters.tlb_flushes += flushes;
        self.counters.ipis += flushes * (v - 1);
        (cost, flushes * ipi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushes_are_serialised_in_the_first_gap() {
        let mut l = FlushLock::default();
        assert_eq!(l.flush(100, 100, 10), (10, 0), "a free lock: just the hold");
        // Asked at 105 while the first runs to 110: waits 5.
        assert_eq!(l.flush(100, 105, 10), (15, 5));
        // One booked far ahead (300-310); one asked at 130 fits in the gap before it.
        assert_eq!(l.flush(100, 300, 10), (10, 0));
        assert_eq!(l.flush(100, 130, 10), (10, 0));
        // At 125 the gap before 130 is too short: it waits until 140.
        assert_eq!(l.flush(100, 125, 10), (25, 15));
    }

    #[test]
    fn map_batches_hold_at_most_eleven_operations() {
        assert_eq!(map_batches(0), 0);
        assert_eq!(map_batches(11), 1);
        assert_eq!(map_batches(12), 2);
        assert_eq!(map_batches(33), 3);
    }
}
