//! The event queue: an indexed 4-ary min-heap holding exactly one entry per scheduled actor.
//!
//! A plain `BinaryHeap` cannot move or delete an entry, so rescheduling used to push a new entry
//! and leave the old one behind as a stale tombstone, to be skipped when it reached the front. In
//! a long run one actor (a device completion, kswapd) is rescheduled millions of times, so the
//! heap's size and the pop cost followed the history of the run rather than the number of actors.
//! Here each actor's position in the heap is recorded, so a reschedule updates its entry in place
//! and a cancel removes it: the heap never holds more entries than there are actors.
//!
//! The order is unchanged: entries compare by (time, seq), where `seq` is a global counter bumped
//! by every `schedule` (also those made through `schedule_no_later_than`), so actors due at the
//! same nanosecond run in the order they were (last) scheduled. `seq` is unique, so the order is
//! total and independent of the heap's shape.
//!
//! Four children per node rather than two: the heap is shallow (two levels for up to 20 actors),
//! and the four children of a node are adjacent, so sifting down touches fewer cache lines.

pub type ActorId = u32;

/// `pos` value of an actor that has no pending wake-up.
const NOT_QUEUED: u32 = u32::MAX;
const ARITY: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    actor: ActorId,
}

impl Entry {
    #[inline]
    fn before(&self, other: &Entry) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    /// Min-heap on (time, seq); `heap[0]` is the next wake-up.
    heap: Vec<Entry>,
    /// Index in `heap` of each actor's entry, or `NOT_QUEUED`.
    pos: Vec<u32>,
    /// Sequence number of the most recent `schedule`.
    seq: u64,
    now: u64,
    /// The actor last popped, whose entry still sits at the root: nearly every actor
    /// reschedules itself right after it runs, and updating the root in place (one sift-down)
    /// costs half of removing it and inserting it again. Its key is still the smallest in the
    /// heap (nothing can be scheduled before now, and later schedules get larger sequence
    /// numbers), so the heap order holds; it counts as not scheduled.
    inflight: Option<ActorId>,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register an actor; returns its id. Actors start unscheduled.
    pub fn add_actor(&mut self) -> ActorId {
        self.pos.push(NOT_QUEUED);
        (self.pos.len() - 1) as ActorId
    }

    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedule `actor` at `time` (not before now), replacing any pending wake-up.
    pub fn schedule(&mut self, actor: ActorId, time: u64) {
        let time = time.max(self.now);
        self.seq += 1;
        let e = Entry {
            time,
            seq: self.seq,
            actor,
        };
        if self.inflight == Some(actor) {
            // Its new key is no smaller than the old one: it can only move down.
            self.inflight = None;
            self.sift_down(0, e);
            return;
        }
        let p = self.pos[actor as usize];
        if p == NOT_QUEUED {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        } else {
            // The new entry has a larger seq, so it moves towards the root only if it is earlier.
            let i = p as usize;
            if e.time < self.heap[i].time {
                self.sift_up(i, e);
            } else {
                self.sift_down(i, e);
            }
        }
    }

    /// Schedule `actor` at `time` unless it is already due at or before max(time, now); then its
    /// entry, sequence number included, stays as it is.
    pub fn schedule_no_later_than(&mut self, actor: ActorId, time: u64) {
        if self.due_raw(actor) > time.max(self.now) {
            self.schedule(actor, time);
        }
    }

    /// Drop any pending wake-up of `actor`.
    pub fn cancel(&mut self, actor: ActorId) {
        if self.inflight == Some(actor) {
            self.settle();
            return;
        }
        let p = self.pos[actor as usize];
        if p != NOT_QUEUED {
            self.remove_at(p as usize);
        }
    }

    /// The time `actor` is scheduled for. A wake-up at `u64::MAX` reads as none, as it always
    /// has (the old queue used `u64::MAX` as its "not scheduled" mark), though `pop(u64::MAX)`
    /// still returns it.
    pub fn due(&self, actor: ActorId) -> Option<u64> {
        let d = self.due_raw(actor);
        (d != u64::MAX).then_some(d)
    }

    /// Pop the entry with the smallest (time, seq) if its time is <= `limit`, setting the clock
    /// to its time.
    pub fn pop(&mut self, limit: u64) -> Option<ActorId> {
        self.settle();
        let e = *self.heap.first()?;
        if e.time > limit {
            return None;
        }
        self.inflight = Some(e.actor);
        // Set, not max: after an `advance_to` past a pending entry the clock follows the entry,
        // exactly as before.
        self.now = e.time;
        Some(e.actor)
    }

    /// Advance the clock without running anything (end of the simulation).
    pub fn advance_to(&mut self, t: u64) {
        self.now = self.now.max(t);
    }

    /// No wake-up before `u64::MAX` is pending (see `due`).
    pub fn is_empty(&self) -> bool {
        if self.inflight.is_some() {
            // The root is not scheduled: look at the rest (its children hold their minimum).
            let n = self.heap.len();
            return (1..(1 + ARITY).min(n)).all(|c| self.heap[c].time == u64::MAX);
        }
        // The root is the earliest entry: all are at u64::MAX iff it is.
        self.heap.first().is_none_or(|e| e.time == u64::MAX)
    }

    /// Number of actors with a pending wake-up.
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.inflight.is_some())
    }

    /// Drop the popped actor's entry if it was not rescheduled.
    #[inline]
    fn settle(&mut self) {
        if self.inflight.take().is_some() {
            self.remove_at(0);
        }
    }

    #[inline]
    fn due_raw(&self, actor: ActorId) -> u64 {
        if self.inflight == Some(actor) {
            return u64::MAX;
        }
        match self.pos[actor as usize] {
            NOT_QUEUED => u64::MAX,
            p => self.heap[p as usize].time,
        }
    }

    #[inline]
    fn place(&mut self, i: usize, e: Entry) {
        self.heap[i] = e;
        self.pos[e.actor as usize] = i as u32;
    }

    /// Put `e` into the hole at `i`, moving it towards the root while it precedes its parent.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let p = self.heap[parent];
            if !e.before(&p) {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, e);
    }

    /// Put `e` into the hole at `i`, moving it towards the leaves while a child precedes it.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut m = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.heap[c].before(&self.heap[m]) {
                    m = c;
                }
            }
            let child = self.heap[m];
            if !child.before(&e) {
                break;
            }
            self.place(i, child);
            i = m;
        }
        self.place(i, e);
    }

    /// Remove the entry at `i`; the last entry fills the hole and is sifted whichever way it must.
    fn remove_at(&mut self, i: usize) {
        let removed = self.heap[i].actor;
        self.pos[removed as usize] = NOT_QUEUED;
        let last = self.heap.pop().expect("remove_at on an empty heap");
        if i < self.heap.len() {
            if i > 0 && last.before(&self.heap[(i - 1) / ARITY]) {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;

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

    #[test]
    fn one_entry_per_actor() {
        let mut q = EventQueue::new();
        let a = q.add_actor();
        let b = q.add_actor();
        for t in 0..1000 {
            q.schedule(a, 1000 - t);
            q.schedule_no_later_than(b, t);
        }
        assert_eq!(q.len(), 2);
        q.cancel(a);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(u64::MAX), Some(b));
        assert_eq!(q.len(), 0);
        assert!(q.is_empty());
    }

    #[test]
    fn schedule_no_later_than_keeps_sequence_number() {
        // b keeps its first scheduling's place ahead of a at the same nanosecond.
        let mut q = EventQueue::new();
        let a = q.add_actor();
        let b = q.add_actor();
        q.schedule(b, 10);
        q.schedule(a, 10);
        q.schedule_no_later_than(b, 10);
        assert_eq!(q.pop(u64::MAX), Some(b));
        assert_eq!(q.pop(u64::MAX), Some(a));
    }

    /// The queue as it was before the indexed heap: a `BinaryHeap` with per-actor generations,
    /// stale entries dropped when they reach the front. Kept as the reference the new queue must
    /// match operation for operation.
    mod reference {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;

        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        struct Entry {
            time: u64,
            seq: u64,
            actor: u32,
            gen: u32,
        }

        #[derive(Debug, Default)]
        pub struct GenHeap {
            heap: BinaryHeap<Reverse<Entry>>,
            seq: u64,
            gen: Vec<u32>,
            due: Vec<u64>,
            pub now: u64,
        }

        impl GenHeap {
            pub fn add_actor(&mut self) -> u32 {
                self.gen.push(0);
                self.due.push(u64::MAX);
                (self.gen.len() - 1) as u32
            }

            pub fn schedule(&mut self, actor: u32, time: u64) {
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

            pub fn schedule_no_later_than(&mut self, actor: u32, time: u64) {
                if self.due[actor as usize] > time.max(self.now) {
                    self.schedule(actor, time);
                }
            }

            pub fn cancel(&mut self, actor: u32) {
                let a = actor as usize;
                self.gen[a] = self.gen[a].wrapping_add(1);
                self.due[a] = u64::MAX;
            }

            pub fn due(&self, actor: u32) -> Option<u64> {
                let d = self.due[actor as usize];
                (d != u64::MAX).then_some(d)
            }

            pub fn pop(&mut self, limit: u64) -> Option<u32> {
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

            pub fn advance_to(&mut self, t: u64) {
                self.now = self.now.max(t);
            }

            pub fn is_empty(&self) -> bool {
                self.due.iter().all(|&d| d == u64::MAX)
            }
        }
    }

    /// A time for a random operation: mostly a little after now (with many exact ties), sometimes
    /// in the past (clamped), sometimes at or next to u64::MAX (the "not scheduled" mark of due()).
    fn random_time(r: &mut Rng, now: u64, spread: u64) -> u64 {
        match r.below(20) {
            0 => now.saturating_sub(r.below(spread + 1)),
            1 => u64::MAX - r.below(2),
            2 => now,
            _ => now.saturating_add(r.below(spread + 1)),
        }
    }

    #[test]
    fn matches_the_generation_heap_on_random_operations() {
        let mut r = Rng::for_actor(9, "engine::queue differential");
        let mut pops = 0u64;
        for case in 0..2000 {
            let max_actors = [4, 16, 64][r.below(3) as usize];
            let actors = 1 + r.below(max_actors) as u32;
            // Rare pops let the heap fill up, so cancels and reschedules sift through several
            // levels; frequent pops keep it nearly empty.
            let pop_weight = 1 + r.below(8);
            // Small spreads make same-nanosecond ties common; large ones exercise deep reorders.
            let spread = [0, 1, 3, 10, 1000][r.below(5) as usize];
            let mut q = EventQueue::new();
            let mut m = reference::GenHeap::default();
            for _ in 0..actors {
                assert_eq!(q.add_actor(), m.add_actor());
            }
            for step in 0..400 {
                let a = r.below(actors as u64) as u32;
                let now = m.now;
                // Weights: schedule 5, schedule_no_later_than 4, cancel 2, advance_to 1,
                // pop or (one time in eight) drain `pop_weight`.
                match r.below(12 + pop_weight) {
                    0..=4 => {
                        let t = random_time(&mut r, now, spread);
                        q.schedule(a, t);
                        m.schedule(a, t);
                    }
                    5..=8 => {
                        let t = random_time(&mut r, now, spread);
                        q.schedule_no_later_than(a, t);
                        m.schedule_no_later_than(a, t);
                    }
                    9..=10 => {
                        q.cancel(a);
                        m.cancel(a);
                    }
                    11 => {
                        // May move the clock past pending entries; pop then sets it back.
                        let t = random_time(&mut r, now, spread);
                        q.advance_to(t);
                        m.advance_to(t);
                    }
                    _ if r.below(8) == 0 => {
                        // Drain: the whole remaining order must agree.
                        while let Some(x) = m.pop(u64::MAX) {
                            assert_eq!(q.pop(u64::MAX), Some(x), "case {case} step {step}");
                            pops += 1;
                        }
                        assert_eq!(q.pop(u64::MAX), None, "case {case} step {step}");
                    }
                    _ => {
                        let limit = match r.below(3) {
                            0 => u64::MAX,
                            _ => random_time(&mut r, now, spread),
                        };
                        let got = q.pop(limit);
                        assert_eq!(got, m.pop(limit), "case {case} step {step}");
                        pops += got.is_some() as u64;
                    }
                }
                assert_eq!(q.now(), m.now, "case {case} step {step}");
                assert_eq!(q.is_empty(), m.is_empty(), "case {case} step {step}");
                for b in 0..actors {
                    assert_eq!(q.due(b), m.due(b), "case {case} step {step} actor {b}");
                }
                assert!(q.len() <= actors as usize);
            }
        }
        // Guard against a generator change that would make the test vacuous.
        assert!(pops > 100_000, "only {pops} pops");
    }
}
