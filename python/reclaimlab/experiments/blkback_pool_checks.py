"""The checks of the blkback-pool reproduction (seed 000, mechanisms.md §E.B), each a function
of the figures its runs give, so that the reproduction, its sensitivity sweep and the tests
(which feed them broken set-ups) compute them the same way. Every band is stated next to the
thread's figure it is drawn around, with its reason."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..tables import markdown_table
from .checks import Check, band_check, fmt, range_check

if TYPE_CHECKING:  # pandas is imported where it is used: the CLI starts without it
    import pandas as pd

#: B1's dom0 swap-out and swap-in in the thread (v2 message, mechanisms.md §B.6).
B1_PSWPOUT, B1_PSWPIN = 185_799, 76_672
#: The swap-out cut against B1 the thread measured: v2 (B2) 185,799 -> 3,325 (55.9x) and
#: v13 (B3) -> 3,967 (46.8x); the swap-in cut: -> 212 (361.7x) and -> 867 (88.4x).
CUT_OUT = {"B2": B1_PSWPOUT / 3_325, "B3": B1_PSWPOUT / 3_967}
CUT_IN = {"B2": B1_PSWPIN / 212, "B3": B1_PSWPIN / 867}
SOURCE = {"B2": "seed 000 v2 (B2, 10 ms)", "B3": "seed 000 v13 (B3, 10 ms)"}
#: Band of a swap-out cut: within a factor of 2 of the thread's. The thread's two measurements
#: of the same idea differ by 1.19x (55.9x vs 46.8x), and its swap-out at one setting moves by
#: 1.2x between messages (3,325 vs 3,967 at 10 ms); its dom0's load and its guests' I/O mix
#: are not given, so a factor of 2 is what "the same effect" can mean here.
CUT_BAND = (0.5, 2.0)
#: Band of a swap-in cut: within a factor of 4. Swap-in after the patch is a few hundred pages
#: and the thread's two measurements of it differ by 4.1x (212 vs 867).
CUT_IN_BAND = (0.25, 4.0)
#: The calibration's tolerance: dom0's service load is set so that B1's swap-out is the
#: thread's; the swept range of that load keeps it within a quarter of it.
CALIBRATION_BAND = (0.75, 1.25)
#: B1's swap-in is predicted from the calibrated load: within a factor of 2 (as a cut).
B1_PSWPIN_BAND = (0.5, 2.0)
#: The thread's dd throughput spread: standard deviation 2.5-4.4 MB/s around 419 MB/s on the
#: ramdisk (0.6-1 %); the slow disk repeats to the tenth. A difference inside +-1 % is noise.
NOISE_PCT = 1.0
#: The dd rates the set-up is calibrated to: the network disk's steady 38.7 MB/s (its
#: bandwidth is set from it) and the ramdisk's 417.8 MB/s at max_buffer_pages 1024 (the guest's
#: cost per write is set from it).
NETWORK_MBPS, RAMDISK_MBPS = 38.7, 417.8
RATE_BAND = (0.9, 1.1)
#: Between passes a ring's pool exceeds its target by at most what completions return: 32
#: pending requests x (32 segments + 1 indirect page) with the default frontend (spec §B.3).
OVER_TARGET_BOUND = 32 * 33
#: The idle kthread's wait (LRU_INTERVAL, 100 ms) plus one 4 ms jiffy of timer rounding.
CONVERGE_MS = 100 + 4

E_B1_BANDS = (
    "E.B.1's bands: B1's swap-out is a calibration input (dom0's service load is set from it, "
    f"tolerance {CALIBRATION_BAND[0]}-{CALIBRATION_BAND[1]} of the thread's); everything else "
    f"is a prediction. Swap-out cuts within x{CUT_BAND[1]:g} either way of the thread's (its "
    "two measurements of the idea differ by 1.2x, its set-up's load is not given); swap-in "
    f"cuts within x{CUT_IN_BAND[1]:g} (its two measurements differ by 4.1x); B1's swap-in "
    f"within x{B1_PSWPIN_BAND[1]:g}.")


def swap_figures(run: Any) -> dict[str, int]:
    """Dom0's swap traffic of a run (the sweep's figures)."""
    return {"pswpin": int(run.vmstat["pswpin"]), "pswpout": int(run.vmstat["pswpout"])}


def e_b1_calibration(b1: dict[str, int]) -> list[Check]:
    """B1's swap-out (calibration) and swap-in (prediction) against the thread's."""
    return [
        band_check("E.B.1.B1.pswpout", "B1's dom0 swap-out, the figure dom0's service load is "
                   "calibrated to", b1["pswpout"], B1_PSWPOUT, *CALIBRATION_BAND,
                   source="seed 000 v2, B1 pswpout", role="calibration"),
        band_check("E.B.1.B1.pswpin", "B1's dom0 swap-in at the calibrated load",
                   b1["pswpin"], B1_PSWPIN, *B1_PSWPIN_BAND, source="seed 000 v2, B1 pswpin"),
    ]


def _cut_check(cid: str, claim: str, before: int, after: int, figure: float,
               band: tuple[float, float], source: str, what: str, label: str) -> Check:
    """A cut (before / after) against the thread's cut; no swap at all after the patch is
    said in words and does not pass (an infinite cut is not a measurement)."""
    if after == 0 or before == 0:
        zero = f"no {what} under {label}" if after == 0 else f"no {what} under B1"
        return Check(cid, claim, f"ratio to {source}'s {fmt(round(figure, 1))}x in "
                     f"[{fmt(band[0])}, {fmt(band[1])}]", None, False, figure=round(figure, 2),
                     band=band, zero=zero, source=source)
    return band_check(cid, claim, round(before / after, 2), round(figure, 2), *band,
                      source=source)


def e_b1_checks(b1: dict[str, int], new: dict[str, int], label: str) -> list[Check]:
    """``label`` (B2 or B3, 10 ms) against B1: the swap-out cut and the swap-in cut, each in a
    band around the thread's, and swap-in falling more than swap-out."""
    out = _cut_check(f"E.B.1.{label}", f"{label} at 10 ms cuts dom0 pswpout against B1 as the "
                     "thread measured", b1["pswpout"], new["pswpout"], CUT_OUT[label], CUT_BAND,
                     SOURCE[label], "swap-out", label)
    pin = _cut_check(f"E.B.1.pswpin.{label}", "and cuts pswpin as the thread measured",
                     b1["pswpin"], new["pswpin"], CUT_IN[label], CUT_IN_BAND, SOURCE[label],
                     "swap-in", label)
    cut_in = b1["pswpin"] / new["pswpin"] if new["pswpin"] else math.inf
    cut_out = b1["pswpout"] / new["pswpout"] if new["pswpout"] else math.inf
    more = Check(f"E.B.1.pswpin-more.{label}", f"under {label} pswpin falls more than pswpout",
                 f"pswpin cut > pswpout cut ({fmt(round(cut_out, 1))}x)", round(cut_in, 1),
                 math.isfinite(cut_in) and cut_in > cut_out, source="spec §E.B.1")
    return [out, pin, more]


def sweep_checks(old: dict[str, Any], new: dict[str, Any]) -> list[Check]:
    """E.B.1 at one point of the service-load sweep (old: B1, new: B3)."""
    fig = {k: int(v) for k, v in old.items()}, {k: int(v) for k, v in new.items()}
    return [e_b1_calibration(fig[0])[0], *e_b1_checks(fig[0], fig[1], "B3")[:2]]


#: The thread's duration sweep under B3 (v13 message, pswpout at 1, 10 and 100 ms): 5,095,
#: 3,967, 3,348; so 1 ms leaves 1.28x what 10 ms does and 100 ms 0.84x (v2's B2: 1.93x and
#: 1.00x). Band of the 1 ms ratio: 0.8-2, whose lower edge (1.03) keeps "1 ms leaves more"
#: and whose upper edge is the cuts' factor of 2 (v2's 1.93 is inside); of the 100 ms ratio:
#: a factor of 2 either way (v2's 1.00 is inside).
DURATION_OUT = {1: 5_095, 10: 3_967, 100: 3_348}
SHORT_BAND, LONG_BAND = (0.8, 2.0), (0.5, 2.0)


def e_b2_checks(pswpout: dict[int, int]) -> list[Check]:
    """The squeeze duration (B3): 1 ms leaves more swap-out than 10 ms, 100 ms gains little;
    and the two ratios against the thread's."""
    o1, o10, o100 = pswpout[1], pswpout[10], pswpout[100]
    src = "seed 000 v13 (B3) duration sweep"
    got = [
        Check("E.B.2.short", "1 ms leaves more swap-out than 10 ms", f"> {o10:,}", o1, o1 > o10,
              source="spec §E.B.2"),
        Check("E.B.2.returns", "and 100 ms gains little over 10 ms: diminishing returns above "
              "10 ms", f"10 -> 100 ms gain < 1/5 of the 1 -> 10 ms gain ({o1 - o10:,})",
              o10 - o100, o1 > o10 and o10 - o100 < (o1 - o10) / 5, source="spec §E.B.2"),
    ]
    for cid, ms, claim, num, fig, band in (
            ("E.B.2.short.size", 1, "swap-out at 1 ms against 10 ms, as the thread measured",
             o1, DURATION_OUT[1] / DURATION_OUT[10], SHORT_BAND),
            ("E.B.2.returns.size", 100, "swap-out at 100 ms against 10 ms, as the thread "
             "measured", o100, DURATION_OUT[100] / DURATION_OUT[10], LONG_BAND)):
        if o10 == 0 or num == 0:
            got.append(Check(cid, claim, f"ratio to {src}'s {fig:.2f} in [{band[0]}, {band[1]}]",
                             None, False, figure=round(fig, 3), band=band,
                             zero=f"no swap-out at {10 if o10 == 0 else ms} ms", source=src))
        else:
            got.append(band_check(cid, claim, round(num / o10, 3), round(fig, 3), *band,
                                  source=src))
    return got


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def e_b3_checks(mbps: dict[tuple[str, int], list[float]],
                busy: dict[tuple[str, int], float] | None = None) -> list[Check]:
    """dd with max_buffer_pages 1024 and 0: the change of the mean rate within the thread's
    noise on the network disk and the ramdisk; beyond it where dom0 is the bottleneck
    (control; ``busy``: the busiest dom0 CPU's share of dd's time, which must be at least
    90 % there); the absolute rates the set-up was calibrated to."""
    got = []
    change = {}
    for dev in {d for d, _ in mbps}:
        a, b = _mean(mbps[(dev, 1024)]), _mean(mbps[(dev, 0)])
        change[dev] = (a, b, round((b - a) / a * 100, 2))
    for dev in ("network", "ramdisk"):
        if dev in change:
            a, b, pct = change[dev]
            got.append(range_check(
                f"E.B.3.{dev}", f"max_buffer_pages = 0 leaves dd's throughput unchanged ({dev}: "
                f"{a:.1f} vs {b:.1f} MB/s), change in %", pct, -NOISE_PCT, NOISE_PCT,
                source="the thread's run-to-run spread, about 1 %"))
    if "dom0-bound" in change:
        a, b, pct = change["dom0-bound"]
        share = min((busy or {}).get(("dom0-bound", m), 0.0) for m in (1024, 0))
        c = range_check(
            "E.B.3.dom0-bound", f"where dom0's ring CPU is the bottleneck (ramdisk, no guest "
            f"cost per write; the busiest dom0 CPU busy {share:.0%} of dd's time: {a:.0f} vs "
            f"{b:.0f} MB/s) the permanent squeeze does cost throughput: the allocation is "
            "hidden only under I/O latency; change in %", pct, -100.0, -NOISE_PCT,
            source="beyond the thread's ~1 % spread", role="control")
        if share < 0.9:
            c.passed, c.zero = False, f"dom0 is not the bottleneck (busiest CPU {share:.0%})"
        got.append(c)
    if ("network", 1024) in mbps:
        steady = mbps[("network", 1024)][1:]
        got.append(band_check("E.B.3.network.rate", "the network disk's steady dd rate (its "
                              "bandwidth is set from it)", round(_mean(steady), 2), NETWORK_MBPS,
                              *RATE_BAND, source="seed 000 v2, dd runs 2-5",
                              role="calibration"))
    if ("ramdisk", 1024) in mbps:
        got.append(band_check("E.B.3.ramdisk.rate", "the ramdisk's dd rate (the guest's cost "
                              "per write is set from it)", round(_mean(mbps[("ramdisk", 1024)]),
                                                                 2),
                              RAMDISK_MBPS, *RATE_BAND, source="seed 000 v13, ramdisk average",
                              role="calibration"))
    return got


def busiest_cpu_share(run: Any, runs_mb_per_s: list[float], run_bytes: int) -> float:
    """The busiest dom0 CPU's busy time over the time dd's runs took (not the pauses between
    them), from the run's time series."""
    import pandas as pd
    ts = pd.read_csv(run.path / "timeseries.csv")
    last = ts.iloc[-1]
    busy = [last[c] for c in ts.columns if c.startswith("cpu") and c.endswith("_busy_ns")]
    io_ns = sum(run_bytes / (r * 1e6) for r in runs_mb_per_s if r > 0) * 1e9
    # A run's rate spans its first request to its last completion; the CPU also works just
    # before and after, so a saturated CPU can read a little over 1: it is 1.
    return min(max(busy) / io_ns, 1.0) if busy and io_ns else 0.0


def e_b4_unpopulated(ram_b1: int, ram_b3: int, squeezes: int, *, ram_pages: int) -> Check:
    """With unpopulated backing, B3's squeezes change dom0's memory by about nothing: dom0's
    RAM (its reservation less what the balloon gave Xen, pages) under B3 against B1. (Free
    pages at the end would not do: under pressure both sit at the watermarks, whatever the
    backing.)"""
    pct = round(abs(ram_b3 - ram_b1) / ram_pages * 100, 3)
    c = range_check("E.B.4.unpopulated", "with unpopulated backing, squeezing (B3, "
                    f"{squeezes:,} squeezes) changes dom0's RAM by about 0: |B3 - B1| dom0 "
                    "pages not given to Xen, % of dom0's RAM", pct, 0.0, 1.0,
                    source="spec §B.2, §E.B.4")
    if squeezes == 0:
        c.passed, c.zero = False, "no squeeze under B3: nothing was tested"
    return c


def ring_samples(df: pd.DataFrame, starts_ms: tuple[int, ...]) -> pd.DataFrame:
    """One row per (cut, ring): the cut (ms), the ring's pool and the time since its last
    completion (NaN before the first)."""
    import pandas as pd
    rows = []
    for _, r in df[df["status"] == "ok"].iterrows():
        cut = float(str(r["sim.duration"]).removesuffix("ms"))
        for i, start in enumerate(starts_ms):
            span = r.get(f"span{i}_ms")
            idle = math.nan if span is None or pd.isna(span) else cut - (start + span)
            rows.append({"cut_ms": cut, "ring": i, "pool": int(r[f"pool{i}"]), "idle_ms": idle})
    return pd.DataFrame(rows)


def e_b4_pool_checks(samples: pd.DataFrame, target: int) -> list[Check]:
    """The pool over time, from rings sampled between housekeeping passes (``ring_samples``):
    over its target by at most what completions return, and seen over it (else the samples
    missed what the invariant is about); back at or under it within one idle loop pass."""
    excess = samples["pool"] - target
    over = samples[excess > 0]
    most = int(excess.max()) if len(samples) else 0
    target_c = range_check(
        "E.B.4.target", f"between housekeeping passes a ring's pool exceeds its target "
        f"({target}) only by the pages completions returned since the last pass; pages over "
        f"the target at the worst of {len(samples)} samples ({len(over)} over)", most, 1,
        OVER_TARGET_BOUND, source="spec §B.3: 32 pending requests x 33 pages",
        role="invariant")
    idle = samples[samples["idle_ms"].notna()]
    late = idle[idle["idle_ms"] > CONVERGE_MS]
    longest = float(idle[idle["pool"] > target]["idle_ms"].max()) if (
        idle["pool"] > target).any() else 0.0
    conv = range_check(
        "E.B.4.converge", "outside pressure the pool converges within one loop pass, <= 100 ms "
        f"when idle: the longest time after a ring's last completion that its pool was still "
        f"over its target, ms ({len(late)} samples idle longer than {CONVERGE_MS} ms)",
        round(longest, 1), 0.0, CONVERGE_MS, source="spec §E.B.4 (LRU_INTERVAL + one jiffy)",
        role="invariant")
    if late.empty:
        conv.passed, conv.zero = False, f"no sample idle longer than {CONVERGE_MS} ms"
    return [target_c, conv]


def samples_table(samples: pd.DataFrame, target: int) -> str:
    """Per ring: samples, those over the target, the worst excess, the longest idle time over
    the target, and the samples idle past one loop pass."""
    rows = []
    for ring, s in samples.groupby("ring"):
        over = s[s["pool"] > target]
        idle_over = over["idle_ms"].dropna()
        late = s[s["idle_ms"] > CONVERGE_MS]
        rows.append([ring, len(s), len(over), int((s["pool"] - target).max()),
                     f"{idle_over.max():.0f}" if len(idle_over) else "-", len(late),
                     int((late["pool"] > target).sum())])
    return markdown_table(["ring", "samples", "over target", "most pages over",
                           "longest idle while over (ms)", f"idle > {CONVERGE_MS} ms",
                           "of those over"], rows)
