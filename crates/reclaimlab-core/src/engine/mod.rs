//! Discrete-event core: integer-nanosecond clock, a totally ordered event queue, and per-actor
//! random streams.
//!
//! Every actor has at most one pending wake-up. The queue orders entries by (time, sequence
//! number), where the sequence number is assigned when the entry is scheduled, so two actors due
//! at the same nanosecond run in the order they were scheduled: a total, reproducible order that
//! does not depend on hashing or on the machine. Rescheduling an actor bumps its generation;
//! stale entries are dropped when they reach the front.

pub mod cpu;
pub mod rng;

pub use rng::Rng;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub type ActorId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    time: u64,
    seq: u64,
    actor: ActorId,
    gen: u32,
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    /// Current generation per actor; an entry with an older generation is stale.
    gen: Vec<u32>,
    /// The time each actor is currently scheduled for (u64::MAX: not scheduled).
    due: Vec<u64>,
    now: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register an actor; returns its id. Actors start unscheduled.
    pub fn add_actor(&mut self) -> ActorId {
        self.gen.push(0);
        self.due.push(u64::MAX);
        (self.gen.len() - 1) as ActorId
    }

    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedule `actor` at `time` (not before now), replacing any pending wake-up.
    pub fn schedule(&mut self, actor: ActorId, time: u64) {
        let time = time.max(self.now);
        let a = actor as usize;
        self.gen[a] = self.gen[a].wrapping_add(1);
        self.due[a] = time;
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            time,
            seq: self.seq,
            actor,
            gen: self.gen[a],
        }));
    }

    /// Schedule `actor` at `time` unless it is already due earlier.
    pub fn schedule_no_later_than(&mut self, actor: ActorId, time: u64) {
        if self.due[actor as usize] > time.max(self.now) {
            self.schedule(actor, time);
        }
    }

    /// Drop any pending wake-up of `actor`.
    pub fn cancel(&mut self, actor: ActorId) {
        let a = actor as usize;
        self.gen[a] = self.gen[a].wrapping_add(1);
        self.due[a] = u64::MAX;
    }

    pub fn due(&self, actor: ActorId) -> Option<u64> {
        let d = self.due[actor as usize];
        (d != u64::MAX).then_some(d)
    }

    /// Pop the next live entry with time <= `limit`, advancing the clock to it.
    pub fn pop(&mut self, limit: u64) -> Option<ActorId> {
        while let Some(Reverse(e)) = self.heap.peek().copied() {
            if e.time > limit {
                return None;
            }
            self.heap.pop();
            let a = e.actor as usize;
            if e.gen != self.gen[a] {
                continue;
            }
            self.due[a] = u64::MAX;
            self.now = e.time;
            return Some(e.actor);
        }
        None
    }

    /// Advance the clock without running anything (end of the simulation).
    pub fn advance_to(&mut self, t: u64) {
        self.now = self.now.max(t);
    }

    pub fn is_empty(&self) -> bool {
        self.due.iter().all(|&d| d == u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_runs_in_schedule_order() {
        let mut q = EventQueue::new();
        let a = q.add_actor();
        let b = q.add_actor();
        let c = q.add_actor();
        q.schedule(b, 10);
        q.schedule(a, 10);
        q.schedule(c, 5);
        assert_eq!(q.pop(u64::MAX), Some(c));
        assert_eq!(q.now(), 5);
        assert_eq!(q.pop(u64::MAX), Some(b));
        assert_eq!(q.pop(u64::MAX), Some(a));
        assert_eq!(q.pop(u64::MAX), None);
    }

    #[test]
    fn reschedule_and_cancel_drop_stale_entries() {
        let mut q = EventQueue::new();
        let a = q.add_actor();
        let b = q.add_actor();
        q.schedule(a, 100);
        q.schedule(b, 50);
        q.schedule(a, 20);
        q.cancel(b);
        assert_eq!(q.pop(u64::MAX), Some(a));
        assert_eq!(q.now(), 20);
        assert_eq!(q.pop(u64::MAX), None);
        q.schedule(a, 30);
        q.schedule_no_later_than(a, 40);
        assert_eq!(q.due(a), Some(30));
        q.schedule_no_later_than(a, 25);
        assert_eq!(q.due(a), Some(25));
        assert_eq!(q.pop(24), None);
        assert_eq!(q.pop(25), Some(a));
    }
}
