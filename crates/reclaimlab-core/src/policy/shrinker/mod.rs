//! `[policy] shrinker`: `do_shrink_slab`, how much one shrinker call scans and who does the
//! work a GFP_NOFS caller could not (mechanisms §A.1-§A.3; the seed 002 thread). Every variant
//! shares the contract and batch loop in `machine::shrinker`; they differ in how `nr_deferred`
//! is taken, clamped and put back.

mod chinner;
mod legacy;
mod legacy_minpressure;
mod legacy_rik;
mod v61;

use super::{Switch, Variant};
use crate::machine::gfp::{GFP_KERNEL, GFP_NOFS};
use crate::machine::shrinker::{
    Deferred, FixedCache, ShrinkControl, ShrinkOutcome, ShrinkerDeferral, ShrinkerParams,
};

pub use chinner::KswapdOnlyDeferral;
pub use legacy::Legacy;
pub use legacy_minpressure::LegacyMinPressure;
pub use legacy_rik::LegacySmallScan;
pub use v61::ProportionalDeferral;

pub static SWITCH: Switch<dyn ShrinkerDeferral> = Switch {
    name: "shrinker",
    spec: "mechanisms §A.0-§A.4; seed 002",
    summary: "do_shrink_slab: per-call scan count and what happens to deferred (nr_deferred) work",
    default: "v61",
    preset: None,
    variants: &[
        Variant {
            name: "legacy",
            kernel: "3.12 - 5.11 (as in 5.0)",
            summary: "the next caller takes all of nr_deferred; clamp to freeable/2 while delta < freeable/4; backlog unbounded",
            make: || Box::new(Legacy),
        },
        Variant {
            name: "legacy_minpressure",
            kernel: "4.19 - 4.20 (172b06c32b94)",
            summary: "legacy plus the minimal-pressure clamp delta = max(delta, min(freeable, batch))",
            make: || Box::new(LegacyMinPressure),
        },
        Variant {
            name: "legacy_rik",
            kernel: "RFC, Jan 2019 (not merged)",
            summary: "legacy plus a small_scan accumulator when delta rounds to 0; zero-seek delta (freeable+1)/2",
            make: || Box::new(LegacySmallScan),
        },
        Variant {
            name: "chinner",
            kernel: "seed 002 patch, Feb 2019 (not merged)",
            summary: "only kswapd takes deferred work, dcount/priority of it per call; no windup clamp; will_defer from count",
            make: || Box::new(KswapdOnlyDeferral),
        },
        Variant {
            name: "v61",
            kernel: "5.13 - 6.1",
            summary: "any caller does (nr >> priority) + delta; nr_deferred bounded by 2 * freeable",
            make: || Box::new(ProportionalDeferral),
        },
    ],
};

/// One `do_shrink_slab` call of `variant` on a filesystem-like cache of `freeable` objects
/// ([`FixedCache`]) holding `nr_deferred` deferred work, by kswapd or another caller, with
/// GFP_NOFS or GFP_KERNEL: what it planned, scanned and left deferred, and how many
/// `scan_objects` calls it made. `None` for an unknown variant. This is the engine's own code
/// path, for the reproduction's exact checks (mechanisms §A.4, §E.A.1-3).
#[allow(clippy::too_many_arguments)]
pub fn fixed_cache_call(
    variant: &str,
    freeable: u64,
    nr_deferred: u64,
    priority: i32,
    batch: u64,
    seeks: u64,
    kswapd: bool,
    nofs: bool,
) -> Option<(ShrinkOutcome, u64)> {
    let v = SWITCH.find(variant)?;
    let policy = (v.make)();
    let mut cache = FixedCache::new(freeable);
    let mut d = Deferred {
        nr_deferred,
        small_scan: 0,
    };
    let gfp = if nofs { GFP_NOFS } else { GFP_KERNEL };
    let mut sc = ShrinkControl::new(gfp, priority, kswapd);
    let out = policy.do_shrink_slab(&mut cache, &mut d, ShrinkerParams { batch, seeks }, &mut sc);
    Some((out, cache.scan_calls))
}

#[cfg(test)]
mod tests;
