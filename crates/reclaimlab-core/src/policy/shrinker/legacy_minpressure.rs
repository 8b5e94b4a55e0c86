//! v4.19/v4.20 "minimal pressure" (172b06c32b94, reverted in Feb 2019 as seed 002's patch
//! 2/2; mechanisms §A.1 "A1+"): legacy, but every call asks for at least a batch (or the whole
//! cache if smaller), so small caches are always scanned. NOFS callers then defer a batch each.

use super::legacy::legacy_do_shrink_slab;
use crate::machine::shrinker::{
    delta, Deferred, ShrinkControl, ShrinkOutcome, Shrinkable, ShrinkerDeferral, ShrinkerParams,
};

#[derive(Debug)]
pub struct LegacyMinPressure;

impl ShrinkerDeferral for LegacyMinPressure {
    fn do_shrink_slab(
        &self,
        cache: &mut dyn Shrinkable,
        d: &mut Deferred,
        p: ShrinkerParams,
        sc: &mut ShrinkControl,
    ) -> ShrinkOutcome {
        legacy_do_shrink_slab(cache, d, p, sc, |freeable, prio, _, batch| {
            delta(freeable, prio, p.seeks).max(freeable.min(batch))
        })
    }
}
