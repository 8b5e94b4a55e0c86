//! The block-device model shared by the swap device and the file disk.
//!
//! Abstraction (core-mm §10.2 item 7): a device is a FIFO queue with a fixed bandwidth shared by
//! reads and writes, plus a per-request latency for each direction drawn around its base value
//! (`latency_jitter`) from the device's own random stream. Requests complete in submission
//! order (a later request never completes before an earlier one).
//!
//! The queue is bounded, as the block layer's is: a device has `nr_requests` request slots
//! (tags), and a writer that finds them all in use sleeps until one is released
//! (`blk_mq_get_tag`). That is what throttles swap-out to the device's speed. Reclaim submits
//! its writes a batch of at most `SWAP_CLUSTER_MAX` pages at a time under one plug, and the
//! swap slots of a batch are contiguous, so a batch merges into one request: the model counts
//! [`PAGES_PER_REQUEST`] pages per request and bounds the pages in flight by
//! `nr_requests * PAGES_PER_REQUEST` (an abstraction: request merging itself is not modelled).

use std::collections::VecDeque;

use super::PAGE_SIZE;
use crate::engine::Rng;

const NS_PER_SEC: u64 = 1_000_000_000;
/// Pages one request carries in the model (a reclaim batch, `SWAP_CLUSTER_MAX`, merged).
pub const PAGES_PER_REQUEST: u64 = 32;

/// What a device is: its latencies, bandwidth and latency spread.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceParams {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    /// Bytes per second, shared by reads and writes.
    pub bandwidth_bytes_per_sec: u64,
    /// Each request's latency is `latency * (1 + jitter * u)`, u uniform in [-1, 1).
    pub latency_jitter: f64,
    /// Request slots (`/sys/block/*/queue/nr_requests`).
    pub nr_requests: u64,
}

#[derive(Debug, Clone)]
pub struct BlockDevice {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub ns_per_page: u64,
    jitter: f64,
    /// Pages that may be in flight before a writer must wait for a request slot.
    max_inflight: usize,
    rng: Rng,
    /// When the device finishes transferring what is queued.
    pub busy_until: u64,
    /// Completion time of the last request (completions are in order).
    last_done: u64,
    /// Pending write completions (time, pfn), in completion order.
    pub completions: VecDeque<(u64, u32)>,
}

impl BlockDevice {
    pub fn new(p: &DeviceParams, rng: Rng) -> Self {
        let ns_per_page = (PAGE_SIZE as u128 * NS_PER_SEC as u128)
            .div_ceil(p.bandwidth_bytes_per_sec.max(1) as u128) as u64;
        BlockDevice {
            read_latency_ns: p.read_latency_ns,
            write_latency_ns: p.write_latency_ns,
            ns_per_page,
            jitter: p.latency_jitter,
            max_inflight: (p.nr_requests.max(1) * PAGES_PER_REQUEST) as usize,
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

    /// When a writer arriving at `t` gets a request slot: at `t` if fewer than the limit of
    /// pages are in flight then, else when enough earlier writes have completed.
    #[inline]
    pub fn get_tag(&self, t: u64) -> u64 {
        let n = self.completions.len();
        if n < self.max_inflight {
            return t;
        }
        // Completions are in time order: once the (n - max + 1)-th oldest is done, the new
        // write fits.
        self.completions[n - self.max_inflight].0.max(t)
    }

    /// Time by which `n` more of the pending writes will have completed (`None`: fewer are
    /// pending).
    pub fn nth_completion(&self, n: usize) -> Option<u64> {
        n.checked_sub(1)
            .and_then(|i| self.completions.get(i))
            .map(|c| c.0)
    }

    pub fn next_completion(&self) -> Option<u64> {
        self.completions.front().map(|c| c.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const GIB: u64 = 1 << 30;

    fn dev(jitter: f64, nr_requests: u64) -> BlockDevice {
        let p = DeviceParams {
            read_latency_ns: 80_000,
            write_latency_ns: 40_000,
            bandwidth_bytes_per_sec: GIB,
            latency_jitter: jitter,
            nr_requests,
        };
        BlockDevice::new(&p, Rng::for_actor(1, "dev"))
    }

    #[test]
    fn fifo_queue_shares_bandwidth() {
        // 1 GiB/s: 4096 bytes take 3815 ns (rounded up).
        let mut d = dev(0.0, 256);
        assert_eq!(d.ns_per_page, 3815);
        let t1 = d.submit_write(1000, 7);
        assert_eq!(t1, 1000 + 3815 + 40_000);
        let t2 = d.submit_read(1000, 2);
        assert_eq!(t2, 1000 + 3 * 3815 + 80_000);
        assert_eq!(d.next_completion(), Some(t1));
    }

    #[test]
    fn jittered_latency_stays_in_band_and_in_order() {
        let mut d = dev(0.5, 256);
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

    #[test]
    fn a_writer_waits_for_a_request_slot() {
        // One request slot: 32 pages may be in flight; the 33rd write waits for the first.
        let mut d = dev(0.0, 1);
        let mut done = Vec::new();
        for i in 0..32u32 {
            assert_eq!(d.get_tag(0), 0, "write {i} fits");
            done.push(d.submit_write(0, i));
        }
        assert_eq!(d.get_tag(0), done[0]);
        assert_eq!(d.get_tag(done[0] + 5), done[0] + 5);
        assert_eq!(d.nth_completion(3), Some(done[2]));
        assert_eq!(d.nth_completion(33), None);
        assert_eq!(d.nth_completion(0), None);
    }
}
