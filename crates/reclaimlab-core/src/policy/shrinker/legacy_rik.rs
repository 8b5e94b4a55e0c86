//! Rik van Riel's small-cache proposal (Jan 2019, not merged; mechanisms §A.1 "A1r"):
//! legacy, but when the priority shift rounds a cache's delta to 0 the cache size accumulates
//! in `small_scan` until a whole unit of pressure is due, and a zero-seek shrinker's delta
//! rounds up. The seed calls it "broken and buggy"; it is here to compare.

use super::legacy::legacy_do_shrink_slab;
use crate::machine::shrinker::{
    delta, Deferred, ShrinkControl, ShrinkOutcome, Shrinkable, ShrinkerDeferral, ShrinkerParams,
};

#[derive(Debug)]
pub struct LegacySmallScan;

impl ShrinkerDeferral for LegacySmallScan {
    fn do_shrink_slab(
        &self,
        cache: &mut dyn Shrinkable,
        d: &mut Deferred,
        p: ShrinkerParams,
        sc: &mut ShrinkControl,
    ) -> ShrinkOutcome {
        let seeks = p.seeks;
        legacy_do_shrink_slab(cache, d, p, sc, |freeable, prio, d, _| {
            if seeks == 0 {
                return freeable.div_ceil(2);
            }
            let mut dl = delta(freeable, prio, seeks);
            if dl == 0 {
                d.small_scan += freeable;
                let k = d.small_scan >> prio;
                dl = 4 * k / seeks;
                if dl != 0 {
                    d.small_scan -= k << prio;
                }
            }
            dl
        })
    }
}
