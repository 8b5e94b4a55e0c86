//! Inode cluster buffer I/O (`xfs_buf.c`, as far as reclaim waits on it): a queue of
//! `io_queue_depth` slots, each write taking `io_latency`. xfsaild's writes and reclaim's
//! synchronous writes share it, so a reclaimer that must write waits behind the pusher.
//! [recon]: the device model of mechanisms §A.6 (`t_io`, queue depth).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Default)]
pub struct ClusterIo {
    /// When each slot is free again.
    pub slots: Vec<u64>,
    /// Writes in flight: (completion time, issue number, AG, cluster).
    pub inflight: BinaryHeap<Reverse<(u64, u64, u32, u32)>>,
    seq: u64,
}

impl ClusterIo {
    pub fn new(depth: u64) -> ClusterIo {
        ClusterIo {
            slots: vec![0; depth.max(1) as usize],
            inflight: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Queue a write of cluster (`ag`, `cluster`) at `at`; returns its completion time.
    pub fn submit(&mut self, at: u64, latency: u64, ag: u32, cluster: u32) -> u64 {
        // The slot that frees first (lowest index on ties).
        let (i, &free) = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|&(i, &t)| (t, i))
            .expect("at least one slot");
        let done = at.max(free) + latency;
        self.slots[i] = done;
        self.seq += 1;
        self.inflight.push(Reverse((done, self.seq, ag, cluster)));
        done
    }

    /// A read (an inode cluster read on a cold lookup) through the same slots; returns when
    /// it completes. Nothing changes state at its end.
    pub fn read(&mut self, at: u64, latency: u64) -> u64 {
        let (i, &free) = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|&(i, &t)| (t, i))
            .expect("at least one slot");
        let done = at.max(free) + latency;
        self.slots[i] = done;
        done
    }

    /// Cluster writes submitted and not yet complete at `at`. Reads are not counted: a
    /// pusher keeps its own writes queued (up to the queue depth) whatever the readers booked,
    /// so a stream of cold reads delays the writes but cannot starve them.
    pub fn writes_in_flight(&self, at: u64) -> usize {
        self.inflight.iter().filter(|Reverse(e)| e.0 > at).count()
    }

    /// The earliest completion still pending.
    pub fn next_done(&self) -> Option<u64> {
        self.inflight.peek().map(|Reverse(e)| e.0)
    }

    /// Pop the writes done by `at`.
    pub fn pop_done(&mut self, at: u64) -> Option<(u32, u32)> {
        match self.inflight.peek() {
            Some(Reverse(e)) if e.0 <= at => {
                let Reverse((_, _, ag, c)) = self.inflight.pop().expect("peeked");
                Some((ag, c))
            }
            _ => None,
        }
    }
}
