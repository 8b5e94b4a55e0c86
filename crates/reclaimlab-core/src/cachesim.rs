//! Fixed-capacity textbook caches for `reclaimlab lru`: LRU, FIFO and CLOCK over a trace's
//! object ids, with no watermarks, daemons or second list. This is the "ideal" single-list
//! baseline to put beside the kernel's two-list LRU, and the piece that is checked against an
//! outside implementation: on the same trace and capacity it reports exactly the misses of
//! libCacheSim's `LRU`, `FIFO` and `Clock` (default parameters, reader with `ignore_obj_size`).
//!
//! Semantics (libCacheSim's):
//! - Capacity counts objects; every object has size 1, whatever the record says. Records of
//!   size 0 are skipped by the reader (libCacheSim's `ignore_size_zero_req`) and are not requests.
//! - A miss inserts the object (after evicting one if the cache is full); nothing bypasses.
//! - LRU: a hit moves the object to the head; the tail is evicted.
//! - FIFO: hits change nothing; the oldest insertion is evicted.
//! - CLOCK (libCacheSim `Clock`, 1-bit counter): an object is inserted with its reference bit
//!   clear; a hit sets it. To evict, look at the oldest object: if its bit is set, clear it and
//!   make it the newest ("second chance"), and repeat; otherwise evict it. Kept as a ring with a
//!   hand, which is the same order without moving anything.
//!
//! Speed: an [`IdMap`] (open addressing, ≤ 50 % load) maps ids to slots; slots live in flat
//! arrays (LRU: an intrusive doubly linked list of `u32` indices; FIFO and CLOCK: a ring). A
//! request costs one hash probe sequence and a few array writes, and nothing is allocated per
//! request. Memory: about 24 bytes per slot plus 32–64 bytes of table per cached object.

use std::path::Path;
use std::time::Instant;

use crate::trace::idmap::IdMap;
use crate::trace::{detect, Compression, TraceError, TraceFormat, TraceReader};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Lru,
    Fifo,
    Clock,
}

impl Policy {
    pub const NAMES: &'static [&'static str] = &["lru", "fifo", "clock"];
    pub fn name(self) -> &'static str {
        match self {
            Policy::Lru => "lru",
            Policy::Fifo => "fifo",
            Policy::Clock => "clock",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "lru" => Some(Policy::Lru),
            "fifo" => Some(Policy::Fifo),
            "clock" => Some(Policy::Clock),
            _ => None,
        }
    }
}

/// Largest capacity accepted (slot indices are `u32`, one value is reserved).
pub const MAX_CAPACITY: u64 = u32::MAX as u64 - 1;

/// FIFO and CLOCK: how many slots ahead of the hand a miss prefetches the id-table line of
/// (the object a later miss will evict).
const VICTIM_AHEAD: usize = 4;

/// Capacity up to which the id table is sized at once instead of growing as objects arrive.
const PRESIZE: usize = 1 << 20;

/// A fixed-capacity cache of object ids.
pub trait Cache {
    /// One request for `id`: true on a hit. A miss inserts `id`.
    fn access(&mut self, id: u64) -> bool;
    /// Start fetching the id-table line a request for `id` will read (a hint; no effect on
    /// results).
    fn prefetch(&self, id: u64);
    /// Second prefetch stage, closer to the request: look `id` up and start fetching its slot's
    /// metadata. Returns the slot as a hint for [`Cache::prefetch_neighbours`] (`u32::MAX`: none).
    #[inline(always)]
    fn prefetch_slot(&self, _id: u64) -> u32 {
        u32::MAX
    }
    /// Third stage: start fetching what serving a hit on slot `hint` will touch besides it.
    #[inline(always)]
    fn prefetch_neighbours(&self, _hint: u32) {}
    /// Objects currently cached.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

const NIL: u32 = u32::MAX;
/// `prefetch_slot`'s hint for a request that looks like a miss.
const MISS_HINT: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

/// Least recently used.
#[derive(Debug, Clone)]
pub struct Lru {
    cap: usize,
    map: IdMap,
    ids: Vec<u64>,
    links: Vec<Link>,
    head: u32,
    tail: u32,
}

impl Lru {
    pub fn new(capacity: u32) -> Self {
        assert!((1..u32::MAX).contains(&capacity), "capacity out of range");
        let cap = capacity as usize;
        Lru {
            cap,
            map: IdMap::with_capacity(cap.min(PRESIZE)),
            ids: Vec::with_capacity(cap.min(PRESIZE)),
            links: Vec::with_capacity(cap.min(PRESIZE)),
            head: NIL,
            tail: NIL,
        }
    }

    #[inline(always)]
    fn push_head(&mut self, s: u32) {
        self.links[s as usize] = Link {
            prev: NIL,
            next: self.head,
        };
        if self.head != NIL {
            self.links[self.head as usize].prev = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    #[inline(always)]
    fn unlink(&mut self, s: u32) {
        let Link { prev, next } = self.links[s as usize];
        if prev != NIL {
            self.links[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.links[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    /// Ids from most to least recently used (for tests).
    pub fn order(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.ids.len());
        let mut s = self.head;
        while s != NIL {
            out.push(self.ids[s as usize]);
            s = self.links[s as usize].next;
        }
        out
    }
}

impl Cache for Lru {
    #[inline(always)]
    fn access(&mut self, id: u64) -> bool {
        match self.map.find(id) {
            Ok(s) => {
                if s != self.head {
                    self.unlink(s);
                    self.push_head(s);
                }
                true
            }
            Err(free) => {
                if self.ids.len() < self.cap {
                    let s = self.ids.len() as u32;
                    self.ids.push(id);
                    self.links.push(Link {
                        prev: NIL,
                        next: NIL,
                    });
                    self.map.insert_at(free, id, s);
                    self.push_head(s);
                } else {
                    let s = self.tail;
                    let old = std::mem::replace(&mut self.ids[s as usize], id);
                    self.map.insert_at(free, id, s);
                    self.map.remove(old);
                    if s != self.head {
                        self.unlink(s);
                        self.push_head(s);
                    }
                }
                false
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, id: u64) {
        self.map.prefetch(id);
    }

    #[inline(always)]
    fn prefetch_slot(&self, id: u64) -> u32 {
        match self.map.get(id) {
            Some(s) => {
                prefetch_ptr(self.links.as_ptr().wrapping_add(s as usize));
                s
            }
            None => {
                // A miss will reuse the tail slot (or one near it) and remove its id.
                if self.tail != NIL {
                    prefetch_ptr(self.links.as_ptr().wrapping_add(self.tail as usize));
                    prefetch_ptr(self.ids.as_ptr().wrapping_add(self.tail as usize));
                }
                MISS_HINT
            }
        }
    }

    #[inline(always)]
    fn prefetch_neighbours(&self, hint: u32) {
        if hint == MISS_HINT {
            if self.ids.len() == self.cap && self.tail != NIL {
                self.map.prefetch(self.ids[self.tail as usize]);
            }
            return;
        }
        if let Some(l) = self.links.get(hint as usize) {
            if l.prev != NIL {
                prefetch_ptr(self.links.as_ptr().wrapping_add(l.prev as usize));
            }
            if l.next != NIL {
                prefetch_ptr(self.links.as_ptr().wrapping_add(l.next as usize));
            }
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// First in, first out: a ring of slots; the hand points at the oldest.
#[derive(Debug, Clone)]
pub struct Fifo {
    cap: usize,
    map: IdMap,
    ids: Vec<u64>,
    hand: usize,
}

impl Fifo {
    pub fn new(capacity: u32) -> Self {
        assert!((1..u32::MAX).contains(&capacity), "capacity out of range");
        let cap = capacity as usize;
        Fifo {
            cap,
            map: IdMap::with_capacity(cap.min(PRESIZE)),
            ids: Vec::with_capacity(cap.min(PRESIZE)),
            hand: 0,
        }
    }
}

impl Cache for Fifo {
    #[inline(always)]
    fn access(&mut self, id: u64) -> bool {
        match self.map.find(id) {
            Ok(_) => true,
            Err(free) => {
                if self.ids.len() < self.cap {
                    self.map.insert_at(free, id, self.ids.len() as u32);
                    self.ids.push(id);
                } else {
                    let s = self.hand;
                    let old = std::mem::replace(&mut self.ids[s], id);
                    self.map.insert_at(free, id, s as u32);
                    self.map.remove(old);
                    self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
                    // The object a later miss evicts is known: fetch its table line.
                    self.map
                        .prefetch(self.ids[(self.hand + VICTIM_AHEAD) % self.cap]);
                }
                false
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, id: u64) {
        self.map.prefetch(id);
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// CLOCK (second chance) with a one-bit reference counter, as libCacheSim's `Clock`.
#[derive(Debug, Clone)]
pub struct Clock {
    cap: usize,
    map: IdMap,
    ids: Vec<u64>,
    referenced: Vec<bool>,
    hand: usize,
}

impl Clock {
    pub fn new(capacity: u32) -> Self {
        assert!((1..u32::MAX).contains(&capacity), "capacity out of range");
        let cap = capacity as usize;
        Clock {
            cap,
            map: IdMap::with_capacity(cap.min(PRESIZE)),
            ids: Vec::with_capacity(cap.min(PRESIZE)),
            referenced: Vec::with_capacity(cap.min(PRESIZE)),
            hand: 0,
        }
    }
}

impl Cache for Clock {
    #[inline(always)]
    fn access(&mut self, id: u64) -> bool {
        match self.map.find(id) {
            Ok(s) => {
                self.referenced[s as usize] = true;
                true
            }
            Err(free) => {
                if self.ids.len() < self.cap {
                    self.map.insert_at(free, id, self.ids.len() as u32);
                    self.ids.push(id);
                    self.referenced.push(false);
                } else {
                    let mut s = self.hand;
                    while self.referenced[s] {
                        self.referenced[s] = false;
                        s = if s + 1 == self.cap { 0 } else { s + 1 };
                    }
                    let old = std::mem::replace(&mut self.ids[s], id);
                    self.map.insert_at(free, id, s as u32);
                    self.map.remove(old);
                    self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
                    // A later miss probably evicts an object a little ahead of the hand.
                    self.map
                        .prefetch(self.ids[(self.hand + VICTIM_AHEAD) % self.cap]);
                }
                false
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, id: u64) {
        self.map.prefetch(id);
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// What one `lru` run found.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheSimResult {
    pub policy: Policy,
    pub capacity: u32,
    /// Requests (records that were not skipped).
    pub requests: u64,
    pub misses: u64,
    /// oracleGeneral records skipped because their object size is 0.
    pub skipped: u64,
    /// Wall-clock time of the whole run: opening, reading (and decompressing) and simulating.
    pub wall_ns: u64,
}

impl CacheSimResult {
    /// misses / requests (0 for an empty trace).
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests as f64
        }
    }
}

/// How many requests ahead the id table is prefetched; slot metadata is prefetched half as far
/// ahead, its neighbours a quarter.
const LOOKAHEAD: usize = 16;

/// Hint the CPU to fetch the cache line holding `p` (never faults; no effect on results).
#[inline(always)]
fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing into the program and never faults.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Replay the trace through `cache`, in order. Requests pass through a small ring so that the
/// table line of each one is prefetched `LOOKAHEAD` requests before it is served: the table is
/// larger than the CPU caches and its lookups are random, so this overlaps their latency.
fn replay<C: Cache>(reader: &mut TraceReader, mut cache: C) -> Result<(u64, u64), TraceError> {
    let mut misses = 0u64;
    let mut ring = [0u64; LOOKAHEAD];
    let mut hints = [u32::MAX; LOOKAHEAD];
    let mut n = 0usize;
    let requests = reader.for_each_object(|id| {
        cache.prefetch(id);
        if n >= LOOKAHEAD / 2 {
            let k = (n - LOOKAHEAD / 2) % LOOKAHEAD;
            hints[k] = cache.prefetch_slot(ring[k]);
        }
        if n >= 3 * LOOKAHEAD / 4 {
            cache.prefetch_neighbours(hints[(n - 3 * LOOKAHEAD / 4) % LOOKAHEAD]);
        }
        let slot = n % LOOKAHEAD;
        if n >= LOOKAHEAD {
            misses += u64::from(!cache.access(ring[slot]));
        }
        ring[slot] = id;
        n += 1;
    })?;
    for k in n.saturating_sub(LOOKAHEAD)..n {
        misses += u64::from(!cache.access(ring[k % LOOKAHEAD]));
    }
    Ok((requests, misses))
}

/// Replay every request of an open trace through a fresh cache: (requests, misses).
pub fn simulate(
    reader: &mut TraceReader,
    policy: Policy,
    capacity: u32,
) -> Result<(u64, u64), TraceError> {
    if capacity == 0 || capacity as u64 > MAX_CAPACITY {
        return Err(TraceError::file(
            reader.path(),
            format!("the capacity must be between 1 and {MAX_CAPACITY} objects, found {capacity}"),
        ));
    }
    match policy {
        Policy::Lru => replay(reader, Lru::new(capacity)),
        Policy::Fifo => replay(reader, Fifo::new(capacity)),
        Policy::Clock => replay(reader, Clock::new(capacity)),
    }
}

/// `reclaimlab lru`: open `path` (format and compression from the file name unless given) and
/// replay it through a `policy` cache of `capacity` objects.
pub fn simulate_file(
    path: &Path,
    format: Option<TraceFormat>,
    compression: Option<Compression>,
    policy: Policy,
    capacity: u32,
) -> Result<CacheSimResult, TraceError> {
    let t0 = Instant::now();
    let (guessed_format, guessed_compression) = detect(path);
    let format = format.or(guessed_format).ok_or_else(|| {
        TraceError::file(
            &path.display().to_string(),
            "cannot tell the trace format from the file name (expected a name ending in \
             .oracleGeneral, .bin or .csv, optionally followed by .zst); give the format \
             explicitly: oracle or csv",
        )
    })?;
    let compression = compression.unwrap_or(guessed_compression);
    let mut reader = TraceReader::open(path, format, compression)?;
    let (requests, misses) = simulate(&mut reader, policy, capacity)?;
    Ok(CacheSimResult {
        policy,
        capacity,
        requests,
        misses,
        skipped: reader.skipped(),
        wall_ns: t0.elapsed().as_nanos() as u64,
    })
}

#[cfg(test)]
mod tests {
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
}
