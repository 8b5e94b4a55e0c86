//! Each cache against a straightforward reference implementation.

use super::*;
use std::collections::VecDeque;

/// Straightforward reference implementations, written the way libCacheSim describes them:
/// a queue with the newest at the front.
fn reference(policy: Policy, cap: usize, trace: &[u64]) -> u64 {
    let mut q: VecDeque<(u64, bool)> = VecDeque::new();
    let mut misses = 0;
    for &id in trace {
        if let Some(i) = q.iter().position(|(x, _)| *x == id) {
            match policy {
                Policy::Lru => {
                    let e = q.remove(i).unwrap();
                    q.push_front(e);
                }
                Policy::Fifo => {}
                Policy::Clock => q[i].1 = true,
            }
            continue;
        }
        misses += 1;
        if q.len() == cap {
            if policy == Policy::Clock {
                while q.back().unwrap().1 {
                    let (x, _) = q.pop_back().unwrap();
                    q.push_front((x, false));
                }
            }
            q.pop_back();
        }
        q.push_front((id, false));
    }
    misses
}

fn run(policy: Policy, cap: u32, trace: &[u64]) -> u64 {
    let mut c: Box<dyn Cache> = match policy {
        Policy::Lru => Box::new(Lru::new(cap)),
        Policy::Fifo => Box::new(Fifo::new(cap)),
        Policy::Clock => Box::new(Clock::new(cap)),
    };
    let m = trace.iter().filter(|&&id| !c.access(id)).count() as u64;
    assert!(c.len() <= cap as usize);
    m
}

#[test]
fn matches_reference_on_random_traces() {
    let mut x: u64 = 42;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for case in 0..60 {
        let universe = 1 + next() % 200;
        let len = 500 + (next() % 2000) as usize;
        // A skewed mix: a hot set and a uniform tail.
        let trace: Vec<u64> = (0..len)
            .map(|_| {
                let r = next();
                if r % 3 == 0 {
                    r % 5
                } else {
                    (r >> 8) % universe
                }
            })
            .collect();
        for cap in [1u32, 2, 3, 7, 16, 50, 150, 300] {
            for policy in [Policy::Lru, Policy::Fifo, Policy::Clock] {
                assert_eq!(
                    run(policy, cap, &trace),
                    reference(policy, cap as usize, &trace),
                    "case {case} {policy:?} cap {cap}"
                );
            }
        }
    }
}

#[test]
fn looping_scan_larger_than_cache() {
    // LRU and FIFO miss on every request of a loop over cap + 1 objects; CLOCK too, since
    // every reference bit is clear when it comes round.
    let trace: Vec<u64> = (0..10).flat_map(|_| 0..11u64).collect();
    for policy in [Policy::Lru, Policy::Fifo, Policy::Clock] {
        assert_eq!(run(policy, 10, &trace), trace.len() as u64, "{policy:?}");
    }
    // A loop that fits misses only the first time round.
    let trace: Vec<u64> = (0..10).flat_map(|_| 0..10u64).collect();
    for policy in [Policy::Lru, Policy::Fifo, Policy::Clock] {
        assert_eq!(run(policy, 10, &trace), 10, "{policy:?}");
    }
}

#[test]
fn lru_order_and_clock_second_chance() {
    let mut c = Lru::new(3);
    for id in [1, 2, 3, 1, 4] {
        c.access(id);
    }
    assert_eq!(c.order(), vec![4, 1, 3]);

    // CLOCK: 1 2 3 fill; hit 1 sets its bit; 4 must evict 2 (1 gets a second chance);
    // then 1 is still cached and 2 is not.
    let mut k = Clock::new(3);
    for id in [1, 2, 3, 1, 4] {
        k.access(id);
    }
    assert!(k.access(1));
    assert!(k.access(3));
    assert!(!k.access(2));
}

/// The prefetching replay loop serves requests in order, including traces shorter than its
/// lookahead and the requests left in its ring at the end.
#[test]
fn file_replay_matches_reference_at_every_length() {
    let dir = std::env::temp_dir().join(format!("reclaimlab-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.oracleGeneral");
    let mut x: u64 = 7;
    for len in [
        0usize, 1, 2, 5, 8, 11, 12, 15, 16, 17, 31, 33, 100, 1000, 5000,
    ] {
        let trace: Vec<u64> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % 40
            })
            .collect();
        let bytes: Vec<u8> = trace
            .iter()
            .enumerate()
            .flat_map(|(i, &id)| crate::trace::oracle_record(i as u32, id, 4096, -1))
            .collect();
        std::fs::write(&p, bytes).unwrap();
        for cap in [1u32, 4, 10, 39, 64] {
            for policy in [Policy::Lru, Policy::Fifo, Policy::Clock] {
                let r = simulate_file(&p, None, None, policy, cap).unwrap();
                assert_eq!(r.requests, len as u64);
                assert_eq!(
                    r.misses,
                    reference(policy, cap as usize, &trace),
                    "len {len} cap {cap} {policy:?}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_capacity_is_an_error() {
    let dir = std::env::temp_dir().join(format!("reclaimlab-cachesim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.oracleGeneral");
    std::fs::write(&p, crate::trace::oracle_record(0, 1, 1, -1)).unwrap();
    let e = simulate_file(&p, None, None, Policy::Lru, 0).unwrap_err();
    assert!(e.message.contains("capacity must be between 1"), "{e}");
    let r = simulate_file(&p, None, None, Policy::Lru, 5).unwrap();
    assert_eq!((r.requests, r.misses), (1, 1));
    let e = simulate_file(&dir.join("t.dat"), None, None, Policy::Lru, 5).unwrap_err();
    assert!(e.message.contains("cannot tell the trace format"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
