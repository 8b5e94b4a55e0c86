//! The worked examples of mechanisms §A.4 (seed 002's cache: 1,800,000 freeable objects,
//! seeks 2), computed by each variant against a fixed cache, and the windup and drain figures
//! of §A.4 / §E.A.3.

use super::SWITCH;
use crate::machine::gfp::{GFP_KERNEL, GFP_NOFS};
use crate::machine::shrinker::{
    delta, Deferred, FixedCache, ShrinkControl, ShrinkOutcome, ShrinkerParams, SHRINK_EMPTY,
};

const FREEABLE: u64 = 1_800_000;

/// One call of `variant` at `prio` with `nr` deferred: (outcome, scan_objects calls).
fn call(
    variant: &str,
    nr: u64,
    prio: i32,
    batch: u64,
    seeks: u64,
    kswapd: bool,
    nofs: bool,
) -> (ShrinkOutcome, u64) {
    let v = SWITCH.make(variant);
    let mut cache = FixedCache::new(FREEABLE);
    let mut d = Deferred {
        nr_deferred: nr,
        small_scan: 0,
    };
    let gfp = if nofs { GFP_NOFS } else { GFP_KERNEL };
    let mut sc = ShrinkControl::new(gfp, prio, kswapd);
    let out = v.do_shrink_slab(&mut cache, &mut d, ShrinkerParams { batch, seeks }, &mut sc);
    assert_eq!(out.new_nr, d.nr_deferred);
    (out, cache.scan_calls)
}

#[test]
fn delta_is_878_not_800() {
    assert_eq!(FREEABLE >> 12, 439);
    assert_eq!(delta(FREEABLE, 12, 2), 878);
    assert_eq!(delta(FREEABLE, 12, 0), 900_000);
}

#[test]
fn s1_no_backlog_batch_1024_defers_all_batch_128_scans_768() {
    for v in ["legacy", "legacy_rik", "chinner", "v61"] {
        for kswapd in [false, true] {
            let (o, calls) = call(v, 0, 12, 1024, 2, kswapd, false);
            assert_eq!(
                (o.planned, o.scanned, o.new_nr, calls),
                (878, 0, 878, 0),
                "{v}"
            );
            let (o, calls) = call(v, 0, 12, 128, 2, kswapd, false);
            assert_eq!(
                (o.planned, o.scanned, o.new_nr, calls),
                (878, 768, 110, 6),
                "{v}"
            );
        }
    }
    // A1+: the minimal-pressure clamp raises delta to a batch, which is scanned.
    let (o, calls) = call("legacy_minpressure", 0, 12, 1024, 2, false, false);
    assert_eq!((o.delta, o.scanned, o.new_nr, calls), (1024, 1024, 0, 1));
}

#[test]
fn s2_backlog_handoff_batch_1024() {
    // (variant, kswapd) -> planned, scanned, calls, new nr_deferred
    let cases = [
        ("legacy", false, 900_000, 899_072, 878, 101_806),
        ("legacy", true, 900_000, 899_072, 878, 101_806),
        ("chinner", false, 878, 0, 0, 1_000_878),
        ("chinner", true, 84_211, 83_968, 82, 916_032),
        ("v61", false, 1_122, 1_024, 1, 999_854),
        ("v61", true, 1_122, 1_024, 1, 999_854),
    ];
    for (v, kswapd, planned, scanned, calls, new_nr) in cases {
        let (o, c) = call(v, 1_000_000, 12, 1024, 2, kswapd, false);
        assert_eq!(
            (o.planned, o.scanned, c, o.new_nr),
            (planned, scanned, calls, new_nr),
            "{v} kswapd={kswapd}"
        );
    }
    // Legacy does 1000x its own delta.
    let (o, _) = call("legacy", 1_000_000, 12, 1024, 2, false, false);
    assert!(o.planned >= 1000 * o.delta);
}

#[test]
fn s2_backlog_handoff_batch_128() {
    let cases = [
        ("legacy", false, 899_968, 7_031, 100_910),
        ("chinner", false, 768, 6, 1_000_110),
        ("chinner", true, 84_096, 657, 915_904),
        ("v61", false, 1_024, 8, 999_854),
    ];
    for (v, kswapd, scanned, calls, new_nr) in cases {
        let (o, c) = call(v, 1_000_000, 12, 128, 2, kswapd, false);
        assert_eq!((o.scanned, c, o.new_nr), (scanned, calls, new_nr), "{v}");
    }
}

#[test]
fn s3_nofs_caller_puts_everything_back() {
    let (o, _) = call("legacy", 1_000_000, 12, 1024, 2, false, true);
    assert_eq!((o.planned, o.scanned, o.new_nr), (900_000, 0, 1_000_878));
    assert!(o.stopped);
    let (o, _) = call("chinner", 1_000_000, 12, 1024, 2, false, true);
    assert_eq!((o.scanned, o.new_nr), (0, 1_000_878));
    let (o, _) = call("v61", 1_000_000, 12, 1024, 2, false, true);
    assert_eq!((o.planned, o.scanned, o.new_nr), (1_122, 0, 1_000_878));
}

#[test]
fn zero_seek_shrinker() {
    for v in ["legacy", "chinner", "v61"] {
        let (o, calls) = call(v, 0, 12, 1024, 0, false, false);
        assert_eq!(
            (o.delta, o.scanned, o.new_nr, calls),
            (900_000, 899_072, 928, 878),
            "{v}"
        );
    }
}

#[test]
fn planned_scan_per_priority() {
    // prio, legacy, chinner kswapd, chinner direct, v61 (mechanisms §A.4, nr = 1M, batch 1024)
    let rows: [(i32, u64, u64, u64, u64); 8] = [
        (12, 900_000, 84_211, 878, 1_122),
        (10, 900_000, 103_514, 3_514, 4_490),
        (8, 900_000, 139_062, 14_062, 17_968),
        (6, 900_000, 222_916, 56_250, 71_875),
        (4, 900_000, 475_000, 225_000, 287_500),
        (3, 1_450_000, 783_333, 450_000, 575_000),
        (1, 2_800_000, 2_800_000, 1_800_000, 2_300_000),
        (0, 3_600_000, 3_600_000, 3_600_000, 3_600_000),
    ];
    for (prio, legacy, ck, cd, v61) in rows {
        let p = |v, k| call(v, 1_000_000, prio, 1024, 2, k, false).0.planned;
        assert_eq!(p("legacy", false), legacy, "legacy p{prio}");
        assert_eq!(p("chinner", true), ck, "chinner kswapd p{prio}");
        assert_eq!(p("chinner", false), cd, "chinner direct p{prio}");
        assert_eq!(p("v61", false), v61, "v61 p{prio}");
    }
}

/// Calls of a pure GFP_NOFS stream at priority 12 until nr_deferred reaches `target`, or
/// `None` within `limit` calls; with the final nr_deferred.
fn nofs_windup(variant: &str, target: u64, limit: u64) -> (Option<u64>, u64) {
    let v = SWITCH.make(variant);
    let mut cache = FixedCache::new(FREEABLE);
    let mut d = Deferred::default();
    let p = ShrinkerParams {
        batch: 1024,
        seeks: 2,
    };
    for i in 1..=limit {
        let mut sc = ShrinkControl::new(GFP_NOFS, 12, false);
        v.do_shrink_slab(&mut cache, &mut d, p, &mut sc);
        if d.nr_deferred >= target {
            return (Some(i), d.nr_deferred);
        }
    }
    (None, d.nr_deferred)
}

#[test]
fn windup_legacy_unbounded_v61_saturates_chinner_like_legacy() {
    assert_eq!(nofs_windup("legacy", 1_000_000, 10_000).0, Some(1_139));
    let (_, nr) = nofs_windup("legacy", u64::MAX, 10_000);
    assert_eq!(nr, 10_000 * 878, "legacy grows by delta per call, no cap");
    assert_eq!(nofs_windup("chinner", 1_000_000, 10_000).0, Some(1_139));
    let (at, _) = nofs_windup("v61", 3_600_000, 10_000);
    assert_eq!(at, Some(4_101));
    let (_, nr) = nofs_windup("v61", u64::MAX, 10_000);
    assert_eq!(nr, 3_600_000, "2 x freeable");
}

#[test]
fn chinner_kswapd_drains_v61_hovers() {
    let run = |variant: &str, kswapd: bool, calls: u32| {
        let v = SWITCH.make(variant);
        let mut cache = FixedCache::new(FREEABLE);
        let mut d = Deferred {
            nr_deferred: 1_000_000,
            small_scan: 0,
        };
        let p = ShrinkerParams {
            batch: 1024,
            seeks: 2,
        };
        for _ in 0..calls {
            let mut sc = ShrinkControl::new(GFP_KERNEL, 12, kswapd);
            v.do_shrink_slab(&mut cache, &mut d, p, &mut sc);
        }
        d.nr_deferred
    };
    let after48 = run("chinner", true, 48);
    assert!((11_000..14_000).contains(&after48), "{after48}");
    // Direct reclaim never drains it under chinner.
    assert!(run("chinner", false, 48) >= 1_000_000);
    // 6.1 at p = 12, batch 1024: scans only when (nr >> 12) + 878 >= 1024, so it settles near
    // (1024 - 878) << 12 = 598,016.
    let settled = run("v61", false, 20_000);
    assert!((598_016..598_016 + 4096).contains(&settled), "{settled}");
}

#[test]
fn count_zero_or_empty_returns_at_once() {
    for v in [
        "legacy",
        "legacy_minpressure",
        "legacy_rik",
        "chinner",
        "v61",
    ] {
        let variant = SWITCH.make(v);
        let mut cache = FixedCache::new(0);
        let mut d = Deferred {
            nr_deferred: 5,
            small_scan: 0,
        };
        let mut sc = ShrinkControl::new(GFP_KERNEL, 12, true);
        let p = ShrinkerParams { batch: 0, seeks: 2 };
        let o = variant.do_shrink_slab(&mut cache, &mut d, p, &mut sc);
        assert_eq!(o.freeable, SHRINK_EMPTY);
        assert_eq!(d.nr_deferred, 5, "{v}: backlog untouched");
    }
}

#[test]
fn rik_small_scan_accumulates() {
    let v = SWITCH.make("legacy_rik");
    // 1000 objects at p = 12: delta 0 each call until small_scan reaches 4096.
    let mut cache = FixedCache::new(1000);
    let mut d = Deferred::default();
    let p = ShrinkerParams { batch: 0, seeks: 2 };
    let mut deltas = Vec::new();
    for _ in 0..5 {
        let mut sc = ShrinkControl::new(GFP_KERNEL, 12, false);
        deltas.push(v.do_shrink_slab(&mut cache, &mut d, p, &mut sc).delta);
    }
    assert_eq!(deltas, [0, 0, 0, 0, 2]);
    assert_eq!(d.small_scan, 5000 - 4096);
}
