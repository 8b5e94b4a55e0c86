//! Swap space and the block-device model shared by the swap device and the file disk.
//!
//! Abstraction (core-mm §10.2 item 7): a device is a FIFO queue with a fixed bandwidth shared by
//! reads and writes, plus a fixed per-request latency for each direction. Swap slots are only
//! counted (slot placement does not matter for reclaim); a swapped page's PTE holds its entry.
//! No swap readahead (window of one page), so `swap_ra` stays 0.

use std::collections::VecDeque;

use super::PAGE_SIZE;
use crate::scenario::NS_PER_SEC;

#[derive(Debug, Clone, Default)]
pub struct SwapSpace {
    pub total: u64,
    pub used: u64,
}

impl SwapSpace {
    #[inline]
    pub fn has_free(&self) -> bool {
        self.used < self.total
    }
    /// `vm_swap_full`: more than half of swap in use.
    #[inline]
    pub fn is_half_full(&self) -> bool {
        self.used * 2 > self.total
    }
    #[inline]
    pub fn alloc(&mut self) -> bool {
        if self.used < self.total {
            self.used += 1;
            true
        } else {
            false
        }
    }
    #[inline]
    pub fn free(&mut self) {
        debug_assert!(self.used > 0);
        self.used -= 1;
    }
}

#[derive(Debug, Clone)]
pub struct BlockDevice {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub ns_per_page: u64,
    /// When the device finishes transferring what is queued.
    pub busy_until: u64,
    /// Pending write completions (time, pfn), in completion order.
    pub completions: VecDeque<(u64, u32)>,
}

impl BlockDevice {
    pub fn new(read_latency_ns: u64, write_latency_ns: u64, bandwidth_bytes_per_sec: u64) -> Self {
        let ns_per_page = (PAGE_SIZE as u128 * NS_PER_SEC as u128)
            .div_ceil(bandwidth_bytes_per_sec.max(1) as u128) as u64;
        BlockDevice {
            read_latency_ns,
            write_latency_ns,
            ns_per_page,
            busy_until: 0,
            completions: VecDeque::new(),
        }
    }

    /// Queue a one-page write of `pfn`; its completion is delivered through `completions`.
    #[inline]
    pub fn submit_write(&mut self, now: u64, pfn: u32) -> u64 {
        let start = self.busy_until.max(now);
        self.busy_until = start + self.ns_per_page;
        let done = self.busy_until + self.write_latency_ns;
        self.completions.push_back((done, pfn));
        done
    }

    /// Queue a read of `pages` pages; returns when the data is there (the reader waits).
    #[inline]
    pub fn submit_read(&mut self, now: u64, pages: u64) -> u64 {
        let start = self.busy_until.max(now);
        self.busy_until = start + self.ns_per_page * pages;
        self.busy_until + self.read_latency_ns
    }

    pub fn next_completion(&self) -> Option<u64> {
        self.completions.front().map(|c| c.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GIB;

    #[test]
    fn fifo_queue_shares_bandwidth() {
        // 1 GiB/s: 4096 bytes take 3815 ns (rounded up).
        let mut d = BlockDevice::new(80_000, 40_000, GIB);
        assert_eq!(d.ns_per_page, 3815);
        let t1 = d.submit_write(1000, 7);
        assert_eq!(t1, 1000 + 3815 + 40_000);
        let t2 = d.submit_read(1000, 2);
        assert_eq!(t2, 1000 + 3 * 3815 + 80_000);
        assert_eq!(d.next_completion(), Some(t1));
    }

    #[test]
    fn swap_slots_and_half_full() {
        let mut s = SwapSpace { total: 4, used: 0 };
        assert!(s.alloc() && s.alloc());
        assert!(!s.is_half_full());
        assert!(s.alloc());
        assert!(s.is_half_full());
        assert!(s.alloc());
        assert!(!s.alloc());
        s.free();
        assert!(s.has_free());
    }
}
