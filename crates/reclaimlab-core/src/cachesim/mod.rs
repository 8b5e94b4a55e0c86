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

use crate::trace::{detect, Compression, TraceError, TraceFormat, TraceReader};

mod clock;
mod fifo;
mod lru;

pub use clock::Clock;
pub use fifo::Fifo;
pub use lru::Lru;

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
pub(super) const VICTIM_AHEAD: usize = 4;

/// Capacity up to which the id table is sized at once instead of growing as objects arrive.
pub(super) const PRESIZE: usize = 1 << 20;

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

pub(super) const NIL: u32 = u32::MAX;
/// `prefetch_slot`'s hint for a request that looks like a miss.
pub(super) const MISS_HINT: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    pub(super) prev: u32,
    pub(super) next: u32,
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
pub(super) fn prefetch_ptr<T>(p: *const T) {
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
mod tests;
