//! Legacy `do_shrink_slab` (v3.12 - v5.11, as in v5.0; mechanisms §A.1): whoever calls next
//! takes the whole backlog, the windup clamp limits one call to half the cache while its own
//! share is small, and whatever it does not scan goes back, so GFP_NOFS callers grow
//! `nr_deferred` by their delta each time without bound.

use crate::machine::shrinker::{
    batch_loop, delta, Deferred, ShrinkControl, ShrinkOutcome, Shrinkable, ShrinkerDeferral,
    ShrinkerParams, SHRINK_EMPTY,
};

#[derive(Debug)]
pub struct Legacy;

impl ShrinkerDeferral for Legacy {
    fn do_shrink_slab(
        &self,
        cache: &mut dyn Shrinkable,
        d: &mut Deferred,
        p: ShrinkerParams,
        sc: &mut ShrinkControl,
    ) -> ShrinkOutcome {
        legacy_do_shrink_slab(cache, d, p, sc, |freeable, prio, _, _| {
            delta(freeable, prio, p.seeks)
        })
    }
}

/// The legacy body with its `delta` computation given by the caller (`freeable`, priority,
/// the deferred state, batch size), which is where the legacy variants differ.
pub(super) fn legacy_do_shrink_slab(
    cache: &mut dyn Shrinkable,
    d: &mut Deferred,
    p: ShrinkerParams,
    sc: &mut ShrinkControl,
    delta_of: impl Fn(u64, i32, &mut Deferred, u64) -> u64,
) -> ShrinkOutcome {
    let batch = p.batch_size();
    let freeable = cache.count_objects(sc);
    if freeable == 0 || freeable == SHRINK_EMPTY {
        return ShrinkOutcome::counted_nothing(freeable);
    }
    // atomic_xchg: this call owns the whole backlog; a concurrent caller would see 0.
    let nr = std::mem::take(&mut d.nr_deferred);
    let delta = delta_of(freeable, sc.priority, d, batch);
    let (mut total, next_deferred) = match nr.checked_add(delta) {
        Some(t) => (t, t),
        // The kernel's "negative objects" guard: scan the cache once, keep the backlog.
        None => (freeable, nr),
    };
    // Windup clamp: a backlog alone may not empty more than half the cache.
    if delta < freeable / 4 {
        total = total.min(freeable / 2);
    }
    total = total.min(freeable.saturating_mul(2));
    let planned = total;
    let l = batch_loop(cache, sc, total, batch, freeable);
    // The remainder is deferred from the unclamped total: the clamp hides work, it does not
    // drop it.
    let next = next_deferred.saturating_sub(l.scanned);
    d.nr_deferred += next;
    ShrinkOutcome {
        freeable,
        nr,
        delta,
        planned,
        scanned: l.scanned,
        batches: l.batches,
        freed: l.freed,
        remaining: l.left,
        new_nr: d.nr_deferred,
        stopped: l.stopped,
    }
}
