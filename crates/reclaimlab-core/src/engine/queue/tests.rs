//! The queue's tests, against the queue it replaced (a binary heap with stale entries).

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
        // The actor popped last: most real schedules are that actor rescheduling itself (the
        // hot slot's case), so half of the operations pick it.
        let mut last = 0;
        for step in 0..400 {
            let a = if r.below(2) == 0 {
                last
            } else {
                r.below(actors as u64) as u32
            };
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
                    last = got.unwrap_or(last);
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
