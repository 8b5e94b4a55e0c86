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
//!
//! One entry lives outside the heap, in the "hot" slot: most events are an actor that runs and
//! reschedules itself ahead of everyone else (kswapd's priority iterations, a device completing
//! one request after another), and for that actor a pop is one comparison of the hot entry with
//! the heap's root and a reschedule is a store: no sift at all. The slot goes to the actor that
//! ran last when it reschedules itself, if its entry is earlier than the one the slot holds
//! (which then goes into the heap); so it holds the earlier of the two, the likelier next pop.
//! `pop` takes whichever of the slot and the root is smaller in (time, seq), so the order is
//! exactly the heap's.

pub type ActorId = u32;

/// `pos` value of an actor that has no pending wake-up.
const NOT_QUEUED: u32 = u32::MAX;
/// `pos` value of the actor whose entry is in the hot slot.
const HOT: u32 = u32::MAX - 1;
/// No actor (an empty hot slot, no in-flight root).
const NOBODY: ActorId = u32::MAX;
const ARITY: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    actor: ActorId,
}

/// The empty hot slot: after every real entry (no `schedule` reaches seq u64::MAX), so `pop`
/// needs no separate test for it.
const EMPTY: Entry = Entry {
    time: u64::MAX,
    seq: u64::MAX,
    actor: NOBODY,
};

impl Entry {
    /// (time, seq) < (other's), as one 128-bit comparison: a subtract with borrow and no
    /// branch, where comparing the tuple branches twice (the heap's scans of four children
    /// mispredicted often).
    #[inline]
    fn before(&self, other: &Entry) -> bool {
        self.key() < other.key()
    }

    #[inline]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

#[derive(Debug)]
pub struct EventQueue {
    /// Min-heap on (time, seq) of every pending wake-up but the hot one: its first `len`
    /// entries, followed by at least `ARITY` `EMPTY` ones, so every node's four children can be
    /// read without a bounds test (padding never precedes a real entry) and the root of an
    /// empty heap reads as `EMPTY`.
    heap: Vec<Entry>,
    len: usize,
    /// Index in `heap` of each actor's entry, `HOT` or `NOT_QUEUED`.
    pos: Vec<u32>,
    /// The pending wake-up kept outside the heap (`EMPTY` if none).
    hot: Entry,
    /// Sequence number of the most recent `schedule`.
    seq: u64,
    now: u64,
    /// The actor last popped from the heap, whose entry still sits at the root (or `NOBODY`):
    /// an actor that reschedules itself right after it runs updates the root in place (one
    /// sift-down), half the cost of removing it and inserting it again. Its key is still the
    /// smallest in the heap (nothing can be scheduled before now, and later schedules get larger
    /// sequence numbers), so the heap order holds; it counts as not scheduled.
    inflight: ActorId,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            heap: vec![EMPTY; ARITY],
            len: 0,
            pos: Vec::new(),
            hot: EMPTY,
            seq: 0,
            now: 0,
            inflight: NOBODY,
        }
    }
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
    #[inline]
    pub fn schedule(&mut self, actor: ActorId, time: u64) {
        let time = time.max(self.now);
        self.seq += 1;
        let seq = self.seq;
        match self.pos[actor as usize] {
            HOT => self.write_hot(time, seq, actor),
            // Just popped from the hot slot (or idle): the slot is usually free again.
            NOT_QUEUED if self.hot.actor == NOBODY => {
                self.write_hot(time, seq, actor);
                self.pos[actor as usize] = HOT;
            }
            _ => self.schedule_slow(Entry { time, seq, actor }),
        }
    }

    /// The hot slot's fields, stored one by one from registers. Building the entry on the
    /// stack and copying it in as one 16-byte store made the next read of the slot wait for a
    /// failed store-to-load forwarding (most of the fast path's time, under perf).
    #[inline(always)]
    fn write_hot(&mut self, time: u64, seq: u64, actor: ActorId) {
        self.hot.time = time;
        self.hot.seq = seq;
        self.hot.actor = actor;
    }

    /// The rest of `schedule`: the heap, or the hot slot changing hands.
    fn schedule_slow(&mut self, e: Entry) {
        let actor = e.actor;
        if self.inflight == actor {
            self.inflight = NOBODY;
            if self.hot.actor == NOBODY {
                self.remove_at(0);
                self.set_hot(e);
            } else if e.before(&self.hot) {
                // The slot's entry takes the root's place; the earlier one becomes hot.
                let old = self.hot;
                self.set_hot(e);
                self.sift_down(0, old);
            } else {
                // Its new key is no smaller than the old one: it can only move down.
                self.sift_down(0, e);
            }
            return;
        }
        let p = self.pos[actor as usize];
        if p == NOT_QUEUED {
            // The slot is taken: the earlier entry keeps it, the other goes into the heap.
            let e = if e.before(&self.hot) {
                let old = self.hot;
                self.set_hot(e);
                old
            } else {
                e
            };
            self.push(e);
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

    #[inline]
    fn set_hot(&mut self, e: Entry) {
        self.hot = e;
        self.pos[e.actor as usize] = HOT;
    }

    /// Schedule `actor` at `time` unless it is already due at or before max(time, now); then its
    /// entry, sequence number included, stays as it is.
    #[inline]
    pub fn schedule_no_later_than(&mut self, actor: ActorId, time: u64) {
        if self.due_raw(actor) > time.max(self.now) {
            self.schedule(actor, time);
        }
    }

    /// Drop any pending wake-up of `actor`.
    pub fn cancel(&mut self, actor: ActorId) {
        if self.inflight == actor {
            self.settle();
            return;
        }
        match self.pos[actor as usize] {
            NOT_QUEUED => {}
            HOT => {
                self.hot = EMPTY;
                self.pos[actor as usize] = NOT_QUEUED;
            }
            p => self.remove_at(p as usize),
        }
    }

    /// The time `actor` is scheduled for. A wake-up at `u64::MAX` reads as none, as it always
    /// has (the old queue used `u64::MAX` as its "not scheduled" mark), though `pop(u64::MAX)`
    /// still returns it.
    #[inline]
    pub fn due(&self, actor: ActorId) -> Option<u64> {
        let d = self.due_raw(actor);
        (d != u64::MAX).then_some(d)
    }

    /// Pop the entry with the smallest (time, seq) if its time is <= `limit`, setting the clock
    /// to its time.
    #[inline]
    pub fn pop(&mut self, limit: u64) -> Option<ActorId> {
        self.settle();
        let root = &self.heap[0];
        let from_hot = self.hot.before(root);
        let e = if from_hot { self.hot } else { *root };
        if e.actor == NOBODY || e.time > limit {
            return None;
        }
        if from_hot {
            self.hot = EMPTY;
            self.pos[e.actor as usize] = NOT_QUEUED;
        } else {
            self.inflight = e.actor;
        }
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
        if self.hot.actor != NOBODY && self.hot.time != u64::MAX {
            return false;
        }
        if self.inflight != NOBODY {
            // The root is not scheduled: look at the rest (its children hold their minimum).
            return (1..1 + ARITY).all(|c| self.heap[c].time == u64::MAX);
        }
        // The root is the earliest entry: all are at u64::MAX iff it is.
        self.heap[0].time == u64::MAX
    }

    /// Number of actors with a pending wake-up.
    pub fn len(&self) -> usize {
        self.len - usize::from(self.inflight != NOBODY) + usize::from(self.hot.actor != NOBODY)
    }

    /// Drop the popped actor's entry if it was not rescheduled.
    #[inline]
    fn settle(&mut self) {
        if self.inflight != NOBODY {
            self.inflight = NOBODY;
            self.remove_at(0);
        }
    }

    #[inline]
    fn due_raw(&self, actor: ActorId) -> u64 {
        if self.inflight == actor {
            return u64::MAX;
        }
        match self.pos[actor as usize] {
            NOT_QUEUED => u64::MAX,
            HOT => self.hot.time,
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
    /// The four children are always read (the padding past the end never wins), so picking the
    /// smallest is a fixed sequence of 128-bit comparisons the compiler turns into conditional
    /// moves: with a handful of actors the children's order is unpredictable, and the
    /// branching scan it replaces mispredicted much of the time.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let key = e.key();
        loop {
            let first = ARITY * i + 1;
            if first >= self.len {
                break;
            }
            let c: &[Entry; ARITY] = self.heap[first..first + ARITY]
                .try_into()
                .expect("padded heap");
            let (mut m, mut mk) = (0, c[0].key());
            for (j, child) in c.iter().enumerate().skip(1) {
                let k = child.key();
                let less = k < mk;
                m = if less { j } else { m };
                mk = if less { k } else { mk };
            }
            if mk >= key {
                break;
            }
            let child = c[m];
            self.place(i, child);
            i = first + m;
        }
        self.place(i, e);
    }

    /// Add `e` at the end and sift it up.
    fn push(&mut self, e: Entry) {
        let i = self.len;
        self.len += 1;
        if self.heap.len() < self.len + ARITY {
            self.heap.push(EMPTY);
        }
        self.sift_up(i, e);
    }

    /// Remove the entry at `i`; the last entry fills the hole and is sifted whichever way it must.
    fn remove_at(&mut self, i: usize) {
        debug_assert!(i < self.len, "remove_at past the end");
        let removed = self.heap[i].actor;
        self.pos[removed as usize] = NOT_QUEUED;
        self.len -= 1;
        let last = std::mem::replace(&mut self.heap[self.len], EMPTY);
        if i < self.len {
            if i > 0 && last.before(&self.heap[(i - 1) / ARITY]) {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
    }
}

#[cfg(test)]
mod tests;
