//! Linux 6.1 `do_shrink_slab` (since 5.13, commit 18bb473e5031 "shrink deferred objects
//! proportional to priority"; mechanisms §A.3): every caller, kswapd or direct, takes the
//! backlog but does only `nr >> priority` of it plus its own delta, and puts the rest back
//! clamped to twice the cache, so `nr_deferred` is bounded.

use crate::machine::shrinker::{
    batch_loop, delta, Deferred, ShrinkControl, ShrinkOutcome, Shrinkable, ShrinkerDeferral,
    ShrinkerParams, SHRINK_EMPTY,
};

#[derive(Debug)]
pub struct ProportionalDeferral;

impl ShrinkerDeferral for ProportionalDeferral {
    fn do_shrink_slab(
        &self,
        cache: &mut dyn Shrinkable,
        d: &mut Deferred,
        p: ShrinkerParams,
        sc: &mut ShrinkControl,
    ) -> ShrinkOutcome {
        let batch = p.batch_size();
        let freeable = cache.count_objects(sc);
        if freeable == 0 || freeable == SHRINK_EMPTY {
            return ShrinkOutcome::counted_nothing(freeable);
        }
        let nr = std::mem::take(&mut d.nr_deferred);
        let own = delta(freeable, sc.priority, p.seeks);
        let cap = freeable.saturating_mul(2);
        let total = ((nr >> sc.priority) + own).min(cap);
        let l = batch_loop(cache, sc, total, batch, freeable);
        let next = (nr + own).saturating_sub(l.scanned).min(cap);
        d.nr_deferred += next;
        ShrinkOutcome {
            freeable,
            nr,
            delta: own,
            planned: total,
            scanned: l.scanned,
            batches: l.batches,
            freed: l.freed,
            remaining: l.left,
            new_nr: d.nr_deferred,
            stopped: l.stopped,
        }
    }
}
