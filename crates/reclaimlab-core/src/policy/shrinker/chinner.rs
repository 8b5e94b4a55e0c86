//! Dave Chinner's "mm: shrinker deferral cleanup" (seed 002, Feb 2019, not merged in this
//! form; mechanisms §A.2): only kswapd takes deferred work, `dcount / priority` of it per call
//! (all of it at priority 0), with no windup clamp; direct reclaim does only its own delta. A
//! filesystem's `count_objects` says up front when the caller cannot scan (`will_defer`), and
//! the whole share is deferred for kswapd. Scanned objects count against the backlog taken;
//! the sub-batch remainder of a kswapd call is dropped, not deferred.

use crate::machine::shrinker::{
    batch_loop, delta, BatchLoop, Deferred, ShrinkControl, ShrinkOutcome, Shrinkable,
    ShrinkerDeferral, ShrinkerParams, TraceStyle, SHRINK_EMPTY,
};

#[derive(Debug)]
pub struct KswapdOnlyDeferral;

impl ShrinkerDeferral for KswapdOnlyDeferral {
    fn do_shrink_slab(
        &self,
        cache: &mut dyn Shrinkable,
        d: &mut Deferred,
        p: ShrinkerParams,
        sc: &mut ShrinkControl,
    ) -> ShrinkOutcome {
        let batch = p.batch_size();
        sc.will_defer = false;
        let freeable = cache.count_objects(sc);
        if freeable == 0 || freeable == SHRINK_EMPTY {
            return ShrinkOutcome::counted_nothing(freeable);
        }
        let own = delta(freeable, sc.priority, p.seeks);
        let mut scan = own;
        if scan == 0 {
            // The patch returns before touching the backlog, even in kswapd.
            return ShrinkOutcome {
                freeable,
                new_nr: d.nr_deferred,
                ..Default::default()
            };
        }
        let mut dcount = 0;
        if sc.kswapd {
            dcount = std::mem::take(&mut d.nr_deferred);
            scan += if sc.priority != 0 {
                dcount / sc.priority as u64
            } else {
                dcount
            };
        }
        scan = scan.min(freeable.saturating_mul(2));
        let planned = scan;
        let l = if sc.will_defer {
            BatchLoop {
                left: scan,
                stopped: true,
                ..Default::default()
            }
        } else {
            batch_loop(cache, sc, scan, batch, freeable)
        };
        let next = if dcount > 0 {
            dcount.saturating_sub(l.scanned)
        } else {
            l.left
        };
        d.nr_deferred += next;
        ShrinkOutcome {
            freeable,
            nr: dcount,
            delta: own,
            planned,
            scanned: l.scanned,
            batches: l.batches,
            freed: l.freed,
            remaining: l.left,
            new_nr: d.nr_deferred,
            stopped: l.stopped,
        }
    }

    fn trace_style(&self) -> TraceStyle {
        TraceStyle::Chinner
    }
}
