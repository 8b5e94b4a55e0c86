"""The checks of seed 003 (mechanisms.md §E.C), each a function of figures read from runs, so
that a test can hand it the runs of a deliberately broken set-up and see it fail.

Each check says its role: ``calibration`` (a figure the costs were fitted to, shown so the fit
can be seen to hold), ``prediction`` (nothing in the set-up was chosen by looking at it) or
``invariant`` (a rule of the kernel code the model follows, §C.3-§C.5). Where the thread or
the spec gives a figure the band is two-sided, on the ratio ours / theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .checks import Check, band_check, holds_check, range_check
from .persistent_grants_calibration import X1, X5, Calibration

#: The thread's figures without persistent grants (§E.C.1): 650k at its 5-guest bottleneck,
#: "only 400,000" at 10 guests.
THREAD_PEAK, THREAD_AT_10 = X5, 400_000
#: "About": the thread's figures are round numbers from one experiment.
ABOUT = (0.85, 1.15)
#: A calibration input must be met by the fit to within the engine's granularity (1 ns of a
#: cost moves one guest's IOPS by about 0.01 %).
FITTED = (0.99, 1.01)
#: §E.C.2: IOPS at 10 guests at least those at 5, and at most twice (each guest is bound by
#: its own vCPU, so twice the guests cannot do more than twice the I/O), give or take 1 % for
#: the requests a 200 ms run cuts off at its end (linear scaling sits on the upper edge).
SCALING = (1.0, 2.02)
#: §E.C.4 "within a few %" of the guest's CPU per request without persistent grants.
FEW_PERCENT = (0.95, 1.05)
#: §C.5: the caps (v3.8: 32 x 11 per device; 6.1: max_persistent_grants per ring).
SPEC_CAP = {"v38": 352, "v61": 1056}
#: §C.5: a purge while overflowed at the cap removes (1056 / 100) x 5 = 50 grants; one purge
#: per LRU_INTERVAL of 100 ms.
PURGE_PER_PASS = (1056 // 100) * 5
#: §C.5: the purge's pass 1 drops grants unused for persistent_grant_unused_seconds (60).
IDLE_SECONDS = 60

SRC_THREAD = "seed 003"
SRC_X1 = "seed 003's 650k / 5 (§C.6 x_g)"


def calibration_checks(cal: Calibration) -> list[Check]:
    """The two calibration inputs, met by the fitted costs."""
    return [
        band_check("E.C.1.cal.x1", f"one guest alone (fitted: guest_request = "
                   f"{cal.guest_request_ns} ns)", round(cal.x1), X1, *FITTED, source=SRC_X1,
                   role="calibration"),
        band_check("E.C.1.cal.x5", f"dom0's ceiling with 5 rings, its guests made fast (fitted: "
                   f"flush_contention = {cal.flush_contention_ns} ns)", round(cal.x5_ceiling),
                   X5, *FITTED, source=SRC_THREAD, role="calibration"),
    ]


def _steps(values: Sequence[float]) -> list[tuple[float, float]]:
    return list(zip(values, values[1:]))


def collapse_checks(none: Mapping[int, int]) -> list[Check]:
    """E.C.1 on the curve without persistent grants (guests -> IOPS)."""
    guests = sorted(none)
    peak_g = max(guests, key=lambda g: none[g])
    peak = band_check("E.C.1.peak", f"IOPS peak near 650k around 5 guests (peak at {peak_g})",
                      none[peak_g], THREAD_PEAK, *ABOUT, source=SRC_THREAD, role="calibration")
    if not 4 <= peak_g <= 6:
        peak.passed = False
        peak.expected += ", at 4-6 guests"
    tail = [none[g] for g in guests if g >= peak_g]
    return [
        peak,
        band_check("E.C.1.fall", "and about 400k at 10 guests", none[guests[-1]], THREAD_AT_10,
                   *ABOUT, source=SRC_THREAD),
        holds_check("E.C.1.decline", f"IOPS fall at every guest added past the peak "
                    f"({peak_g} to {guests[-1]})", [b < a for a, b in _steps(tail)],
                    source=SRC_THREAD + ": 'if more than 5 guests are used, the performance "
                    "declines'"),
    ]


def scaling_checks(variant: str, iops: Mapping[int, int]) -> list[Check]:
    """E.C.2 for a persistent-grants variant's curve (guests -> IOPS)."""
    guests = sorted(iops)
    at5, at10 = iops[5], iops[guests[-1]]
    return [
        range_check(f"E.C.2.{variant}", f"with persistent grants ({variant}) IOPS at 10 guests "
                    f"against 5 ({at10:,} / {at5:,})", round(at10 / at5, 3), *SCALING,
                    source="spec §E.C.2; at most about 2x for twice the guests"),
        holds_check(f"E.C.2.knee.{variant}", f"and do not decline at any guest added ({variant})",
                    [b >= a for a, b in _steps([iops[g] for g in guests])],
                    source="spec §E.C.2"),
    ]


def flush_checks(variant: str, xen: Mapping[str, Any]) -> list[Check]:
    """E.C.3: unmap hypercalls and TLB flushes per request (a run's ``summary["xen"]``)."""
    if variant == "none":
        band, when = (0.98, 1.0), "no persistent grants; requests in flight at the end are not " \
                                  "yet unmapped"
    else:
        band, when = (0.0, 0.0), f"{variant}, after the warm-up maps"
    return [range_check(f"E.C.3.{variant}.{what}", f"{label} per request, 10 guests ({when})",
                        round(xen[f"{what}_per_request"], 4), *band, source="spec §E.C.3",
                        role="invariant")
            for what, label in (("unmap_hypercalls", "unmap hypercalls"),
                                ("tlb_flushes", "TLB flushes"))]


def vcpu_checks(x5: Mapping[tuple[int, int], float],
                x10: Mapping[tuple[int, int], float]) -> list[Check]:
    """E.C.1 against dom0's vCPUs V, from IOPS at 5 and 10 guests by (V, seed): the collapsed
    level at 10 guests falls as V grows, and the fall from 5 to 10 guests, 1 - X10 / X5, grows
    with V (spec: the flush IPIs' cost grows with V). Points: each seed's steps to the next V."""
    vs = sorted({v for v, _ in x10})
    seeds = sorted({s for _, s in x10})
    level = [x10[(b, s)] < x10[(a, s)] for s in seeds for a, b in _steps(vs)]

    def fall(v: int, s: int) -> float:
        return 1 - x10[(v, s)] / x5[(v, s)]

    grows = [fall(b, s) > fall(a, s) for s in seeds for a, b in _steps(vs)]
    span = f"V = {vs[0]}-{vs[-1]}, seeds {seeds[0]}-{seeds[-1]}"
    return [
        holds_check("E.C.1.V.level", f"IOPS at 10 guests fall as dom0's vCPUs grow ({span})",
                    level, source="spec §E.C.1: flush IPI cost grows with V"),
        holds_check("E.C.1.V.fall", f"the fall from 5 to 10 guests (1 - X10/X5) grows with "
                    f"dom0's vCPUs ({span})", grows,
                    source="spec §E.C.1: the fall comes from flush IPIs whose cost grows with V"),
    ]


def split_check(points: Sequence[tuple[int, float | None]]) -> Check:
    """E.C.1's 10-guest prediction over the fixed part of a flush: (flush ns, IOPS at 10 guests
    with flush_contention re-fitted to the 5-guest point, or None where no fit exists)."""
    lo, hi = ABOUT
    ok = [x is not None and lo <= x / THREAD_AT_10 <= hi for _, x in points]
    return holds_check("E.C.1.fall.split", f"about 400k at 10 guests over [xen.cost] flush = "
                       f"{points[0][0]}-{points[-1][0]} ns, each re-calibrated",
                       ok, source=f"{SRC_THREAD}, ratio in [{lo}, {hi}]")


def copy_check(points: Sequence[tuple[int, float, float]]) -> Check:
    """E.C.4 over the copy cost: (guest_copy ns, guest CPU per request without persistent
    grants, with 6.1's), the claim holding where the ratio is within a few %."""
    lo, hi = FEW_PERCENT
    ok = [lo <= pg / none <= hi for _, none, pg in points]
    return holds_check("E.C.4", f"the guest's CPU per request with persistent grants within a "
                       f"few % of granting each page, guest_copy = {points[0][0]}-"
                       f"{points[-1][0]} ns (spec §C.6's 0.3-1 µs)", ok,
                       source=f"spec §E.C.4, ratio in [{lo}, {hi}]")


def flood_checks(variant: str, x: Mapping[str, Any]) -> list[Check]:
    """E.C.5's cap and churn for a guest granting a fresh page per segment (``x`` is the run's
    ``summary["xen"]``)."""
    ring = x["devices"][0]["rings"][0]
    held = x["mapped_pages"]
    churn_ok = x["map_ops"] == x["segments"] and x["unmap_ops"] == x["segments"] - held
    return [
        band_check(f"E.C.5.cap.{variant}", f"persistent_gnt_c reaches the cap and never passes "
                   f"it ({variant})", ring["persistent_gnt_max_seen"], SPEC_CAP[variant],
                   1.0, 1.0, source="spec §C.5", role="invariant"),
        Check(f"E.C.5.churn.{variant}", f"each segment beyond the cap costs a map and an unmap "
              f"({variant})", f"maps = segments, unmaps = segments - still mapped ({held})",
              f"{x['segments']:,} segments, {x['map_ops']:,} maps, {x['unmap_ops']:,} unmaps",
              churn_ok, role="invariant", source="spec §E.C.5"),
    ]


def purge_check(purged_early: int, purged_late: int, passes: int) -> Check:
    """E.C.5: 6.1's purge while overflowed, from two runs of the flood ``passes`` purge
    intervals apart: grants purged per pass between them."""
    return band_check("E.C.5.purge", "6.1's purge removes persistent_gnt_c - max + 50 per 100 ms "
                      f"while overflowed ({purged_late:,} - {purged_early:,} over {passes} "
                      "passes)", round((purged_late - purged_early) / passes, 2),
                      PURGE_PER_PASS, 0.9, 1.1, source="spec §C.5", role="invariant")


def idle_check(held: int, before: Mapping[str, Any], after: Mapping[str, Any],
               at: tuple[float, float]) -> Check:
    """E.C.5: grants idle 60 s are purged, from runs ending ``at`` = (just under, just over)
    60 s after the guest's last I/O: ``held`` grants kept at its end, the runs'
    ``summary["xen"]``."""
    def left(x: Mapping[str, Any]) -> int:
        return x["devices"][0]["rings"][0]["persistent_gnt_c"]

    ok = (held > 0 and left(before) == held and before["persistent_purged"] == 0
          and left(after) == 0 and after["persistent_purged"] == held)
    return Check("E.C.5.idle", "6.1's purge drops every grant idle for 60 s, none earlier",
                 f"all {held} held {at[0]:g} s after the last I/O, none at {at[1]:g} s",
                 f"{left(before)} held at {at[0]:g} s, {left(after)} at {at[1]:g} s "
                 f"({after['persistent_purged']} purged)", ok, role="invariant",
                 source=f"spec §C.5: persistent_grant_unused_seconds = {IDLE_SECONDS}, purge "
                 "every 100 ms")
