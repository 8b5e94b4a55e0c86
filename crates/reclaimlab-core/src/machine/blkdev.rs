//! The block-device model shared by the swap device and the file disk.
//!
//! Abstraction (core-mm §10.2 item 7): a device is a FIFO queue with a fixed bandwidth shared by
//! reads and writes, plus a per-request latency for each direction drawn around its base value
//! (`latency_jitter`) from the device's own random stream. Requests complete in submission
//! order (a later request never completes before an earlier one).

use std::collections::VecDeque;

use super::PAGE_SIZE;
use crate::engine::Rng;

const NS_PER_SEC: u64 = 1_000_000_000;

/// What a device is: its latencies, bandwidth and latency spread.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceParams {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    /// Bytes per second, shared by reads and writes.
    pub bandwidth_bytes_per_sec: u64,
    /// Each request's latency is `latency * (1 + jitter * u)`, u uniform in [-1, 1).
    pub latency_jitter: f64,
}

#[derive(Debug, Clone)]
pub struct BlockDevice {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub ns_per_page: u64,
    jitter: f64,
    rng: Rng,
    /// When the device finishes transferring what is queued.
    pub busy_until: u64,
    /// Completion time of the last request (completions are in order).
    last_done: u64,
    /// Pending write completions (time, pfn), in completion order.
    pub completions: VecDeque<(u64, u32)>,
}

impl BlockDevice {
    pub fn new(
        read_latency_ns: u64,
        write_latency_ns: u64,
        bandwidth_bytes_per_sec: u64,
        jitter: f64,
        rng: Rng,
    ) -> Self {
        let ns_per_page = (PAGE_SIZE as u128 * NS_PER_SEC as u128)
            .div_ceil(bandwidth_bytes_per_sec.max(1) as u128) as u64;
        BlockDevice {
            read_latency_ns,
            write_latency_ns,
            ns_per_page,
            jitter,
            rng,
            busy_until: 0,
            last_done: 0,
            completions: VecDeque::new(),
        }
    }

    #[inline]
    fn latency(&mut self, base: u64) -> u64 {
        if self.jitter == 0.0 {
            return base;
        }
        let u = self.rng.next_f64() * 2.0 - 1.0;
        (base as f64 * (1.0 + self.jitter * u)) as u64
    }

    #[inline]
    fn submit(&mut self, now: u64, pages: u64, base_latency: u64) -> u64 {
        let start = self.busy_until.max(now);
        self.busy_until = start + self.ns_per_page * pages;
        let lat = self.latency(base_latency);
        self.last_done = (self.busy_until + lat).max(self.last_done);
        self.last_done
    }

    /// Queue a one-page write of `pfn`; its completion is delivered through `completions`.
    #[inline]
    pub fn submit_write(&mut self, now: u64, pfn: u32) -> u64 {
        let done = self.submit(now, 1, self.write_latency_ns);
        self.completions.push_back((done, pfn));
        done
    }

    /// Queue a read of `pages` pages; returns when the data is there (the reader waits).
    #[inline]
    pub fn submit_read(&mut self, now: u64, pages: u64) -> u64 {
        self.submit(now, pages, self.read_latency_ns)
    }

    pub fn next_completion(&self) -> Option<u64> {
        self.completions.front().map(|c| c.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const GIB: u64 = 1 << 30;

    #[test]
    fn fifo_queue_shares_bandwidth() {
        // 1 GiB/s: 4096 bytes take 3815 ns (rounded up).
        let mut d = BlockDevice::new(80_000, 40_000, GIB, 0.0, Rng::for_actor(1, "dev"));
        assert_eq!(d.ns_per_page, 3815);
        let t1 = d.submit_write(1000, 7);
        assert_eq!(t1, 1000 + 3815 + 40_000);
        let t2 = d.submit_read(1000, 2);
        assert_eq!(t2, 1000 + 3 * 3815 + 80_000);
        assert_eq!(d.next_completion(), Some(t1));
    }

    #[test]
    fn jittered_latency_stays_in_band_and_in_order() {
        let mut d = BlockDevice::new(80_000, 40_000, GIB, 0.5, Rng::for_actor(1, "dev"));
        let mut last = 0;
        for i in 0..1000u64 {
            let now = i * 1_000_000;
            let t = d.submit_write(now, i as u32);
            assert!(t >= last);
            let lat = t - now - 3815;
            assert!((20_000..60_000).contains(&lat), "latency {lat}");
            last = t;
        }
    }
}
