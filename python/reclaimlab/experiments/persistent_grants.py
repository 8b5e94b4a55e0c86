"""Seed 003: "xen/blkback: Persistent grant maps for xen blk drivers" (Roger Pau Monné and
Oliver Chick, v3.8). Without persistent grants every request's pages are unmapped when it
completes, and each unmap batch flushes the TLBs of every CPU dom0 has run on; with 24 dom0
vCPUs and guests doing I/O to ramdisks the flushes became the bottleneck at 5 guests
(650,000 IOPS) and throughput fell to 400,000 by 10 guests (mechanisms.md §C, §E.C).

One check group per statement of §E.C:

- ``E.C.1`` aggregate IOPS against the number of guests without persistent grants: a peak
  near 650k around 5 guests, about 400k at 10.
- ``E.C.2`` with 6.1's persistent grants IOPS do not fall past that knee.
- ``E.C.3`` unmap hypercalls and TLB flushes per request: 1 and 1 without, 0 and 0 with
  (v3.8's and 6.1's), after the warm-up maps.
- ``E.C.4`` the guest's copy in persistent mode costs it little CPU per request.
- ``E.C.5`` a guest granting a fresh page for every segment: ``persistent_gnt_c`` never passes
  the cap (352 per device in v3.8, 1,056 per ring in 6.1), and every segment beyond it is
  mapped and unmapped; 6.1's purge removes the excess plus 50 at a time.

The dom0 side is the model of ``machine/xen`` (map and unmap hypercalls, Xen's flush lock);
its costs are ``[xen.cost]`` estimates whose shape is mechanisms.md §C.6's. Every figure here
comes from a run made by this module. report.json holds ``{"checks": [{"id", "claim",
"expected", "measured", "pass"}]}``; ``iops.csv`` is the plot-ready curve.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..results import write_text_atomic
from ..store import Store
from ..tables import markdown_table
from .checks import Check, Situation, close_situation, finish, open_situation

NAME = "persistent-grants"
TITLE = "Xen blkback persistent grants: I/O scaling with the number of guests (seed 003)"

#: The seed's dom0 (mechanisms.md §C.6).
DOM0_VCPUS = 24
GUESTS = list(range(1, 11))
#: Simulated time per point: enough for ~100k requests at the peak.
DURATION = "200ms"
#: The thread's figures (§E.C.1).
THREAD_PEAK, THREAD_AT_10 = 650_000, 400_000
#: How close "near" is: the thread gives round numbers from one experiment.
TOLERANCE = 0.15



SITUATIONS = [
    Situation("scaling", "E.C.1-E.C.3: aggregate IOPS against guests, 24 dom0 vCPUs, ramdisks",
              ["none", "v38", "v61"]),
    Situation("copy", "E.C.4: the guest's CPU per request", ["none", "v61"]),
    Situation("flood", "E.C.5: a guest granting a fresh page for every segment", ["v38", "v61"]),
]


def scaling_scenario(grants: str, guests: int, *, pattern: str = "random",
                     duration: str = DURATION) -> dict[str, Any]:
    """``guests`` domUs, one vCPU and one ramdisk VBD each, doing 4 KiB random writes at queue
    depth 32 (fio-like), against a dom0 of 24 vCPUs."""
    return {
        "name": f"xen-grants-{grants}-{guests}",
        "sim": {"duration": duration, "sample_interval": "100ms"},
        "host": {"ram": "4GiB", "cpus": DOM0_VCPUS, "cpu_contention": True},
        "swap": {"size": "0"},
        "xen": {"ram": "64GiB"},
        "policy": {"blkback_grants": grants},
        "guest": [{
            "name": f"vm{i + 1}", "ram": "256MiB", "vcpus": 1, "boot_resident": "64MiB",
            "vbd": [{"name": "xvda", "backend": "ramdisk"}],
            "workload": [{"name": "fio", "blkio": {
                "vbd": "xvda", "pattern": pattern, "bs": "4KiB", "iodepth": 32}}],
        } for i in range(guests)],
    }


def reproduce(situations, root: Path, seed: int, *, store: Store, trace: bool = False,
              on_run: Callable[[Any, str, Any], None] | None = None):
    """Run ``situations`` with ``seed`` into ``store`` (runs linked under ``root``); write
    report.md, report.json, iops.csv and the HTML report's manifest there."""
    t0 = time.perf_counter()
    report = [f"# {TITLE}", "", f"Seed {seed}. Runs in `{root}`.", "",
              f"Dom0 with {DOM0_VCPUS} vCPUs (its TLB flush IPIs every one); each guest has one "
              "vCPU and one VBD on a dom0 ramdisk and runs 4 KiB random writes at queue depth "
              f"32 for {DURATION}. The grant costs are `[xen.cost]` estimates; Xen's flush lock "
              "serialises the flushes and each other ring unmapping at the same time lengthens "
              "them (mechanisms.md §C.6).", ""]
    checks: list[Check] = []
    manifest: dict[str, Any] = {"experiment": NAME, "title": TITLE, "seed": seed,
                                "situations": []}
    for sit in situations:
        report += [f"## {sit.title}", ""]
        ensure, keys = open_situation(root, sit, store, seed, on_run)

        def run(label: str, scn: dict[str, Any]) -> dict[str, Any]:
            ens = ensure(label, scn)
            return ens.summary["xen"]

        got: list[Check] = []
        if sit.key == "scaling":
            xs = {g: {v: run(f"{v}-{g}", scaling_scenario(v, g)) for v in sit.policies}
                  for g in GUESTS}
            iops = {v: {g: round(xs[g][v]["aggregate"]["iops"]) for g in GUESTS}
                    for v in sit.policies}
            rows = [[g, iops["none"][g], iops["v38"][g], iops["v61"][g],
                     round(xs[g]["none"]["tlb_flushes_per_request"], 3),
                     round(xs[g]["none"]["flush_wait_ms"], 1)] for g in GUESTS]
            report.append(markdown_table(
                ["guests", "IOPS, no persistent grants", "IOPS, v3.8", "IOPS, 6.1",
                 "flushes per request (none)", "time spinning on the flush lock (ms, none)"],
                rows))
            report += ["", f"The thread: a peak of {THREAD_PEAK:,} IOPS at 5 guests, "
                       f"{THREAD_AT_10:,} at 10, without persistent grants; no figure with "
                       "them."]
            _write_curve(root / "iops.csv", iops)
            none = iops["none"]
            peak_g = max(GUESTS, key=lambda g: none[g])
            peak = none[peak_g]
            tail = [none[g] for g in GUESTS if g >= peak_g]
            v61 = iops["v61"]
            got = [
                Check("E.C.1.peak", "without persistent grants IOPS peak near 650k around 5 "
                      "guests", f"peak at 4-6 guests, {THREAD_PEAK:,} ± 15 %",
                      f"{peak:,} at {peak_g}",
                      4 <= peak_g <= 6 and abs(peak - THREAD_PEAK) <= TOLERANCE * THREAD_PEAK),
                Check("E.C.1.fall", "and fall to about 400k by 10 guests",
                      f"{THREAD_AT_10:,} ± 15 %, falling after the peak", none[10],
                      abs(none[10] - THREAD_AT_10) <= TOLERANCE * THREAD_AT_10
                      and all(a >= b for a, b in zip(tail, tail[1:]))),
                Check("E.C.2", "with persistent grants IOPS at 10 guests are at least those at 5",
                      f">= {v61[5]:,}", v61[10], v61[10] >= v61[5]),
                Check("E.C.2.knee", "and do not decline past the knee",
                      "non-decreasing in the guests", [v61[g] for g in GUESTS],
                      all(a <= b for a, b in zip(list(v61.values()), list(v61.values())[1:]))),
            ]
            for v in ("none", "v38", "v61"):
                x = xs[10][v]
                unmaps = round(x["unmap_hypercalls_per_request"], 3)
                flushes = round(x["tlb_flushes_per_request"], 3)
                want = 1.0 if v == "none" else 0.0
                got.append(Check(
                    f"E.C.3.{v}", "unmap hypercalls and TLB flushes per request, 10 guests"
                    + (" (no persistent grants)" if v == "none" else f" ({v}, after warm-up)"),
                    f"{want:g} and {want:g}", f"{unmaps} and {flushes}",
                    abs(unmaps - want) <= 0.01 and abs(flushes - want) <= 0.01))
        elif sit.key == "copy":
            xs = {v: run(f"{v}-1", scaling_scenario(v, 1)) for v in sit.policies}
            cpu = {v: xs[v]["jobs"][0]["guest_cpu_ns_per_request"] for v in sit.policies}
            copied = xs["v61"]["jobs"][0]["guest_copied_bytes"]
            report.append(markdown_table(
                ["grants", "guest CPU per request (ns)", "bytes copied by the guest"],
                [[v, round(cpu[v], 1), xs[v]["jobs"][0]["guest_copied_bytes"]]
                 for v in sit.policies]))
            change = (cpu["v61"] - cpu["none"]) / cpu["none"]
            got = [Check("E.C.4", "the guest's copy to persistent grants costs it little: CPU "
                         "per request within a few % of granting each page",
                         "within 5 %", f"{change * 100:+.2f} %",
                         abs(change) <= 0.05 and copied > 0)]
        elif sit.key == "flood":
            table = []
            for v in sit.policies:
                x = run(v, scaling_scenario(v, 1, pattern="fresh_grefs", duration="1s"))
                ring = x["devices"][0]["rings"][0]
                table.append([v, ring["max_pgrants"], ring["persistent_gnt_max_seen"],
                              x["segments"], x["map_ops"], x["unmap_ops"],
                              x["persistent_purged"], ring["persistent_gnt_c"]])
                cap, seen = ring["max_pgrants"], ring["persistent_gnt_max_seen"]
                got.append(Check(f"E.C.5.cap.{v}", f"persistent_gnt_c never passes the cap "
                                 f"({v})", f"<= {cap}", seen, seen <= cap and seen == cap))
                # Every segment is a fresh gref: mapped; each mapping is unmapped at its
                # request's end unless it is held as a persistent grant (purged ones are
                # unmapped by the purge) or its request is still in flight at the end.
                held = x["mapped_pages"]
                got.append(Check(
                    f"E.C.5.churn.{v}", f"each segment beyond the cap costs a map and an unmap "
                    f"({v})", f"maps = segments, unmaps = segments - still mapped ({held})",
                    f"{x['map_ops']:,} maps, {x['unmap_ops']:,} unmaps",
                    x["map_ops"] == x["segments"]
                    and x["unmap_ops"] == x["segments"] - held))
                if v == "v61":
                    # A purge every 100 ms over 1 s: each removes at least the 50 of
                    # (1056 / 100) * 5 once the tree overflowed.
                    got.append(Check(
                        "E.C.5.purge", "6.1's purge removes the excess + 50 each 100 ms while "
                        "overflowed", ">= 50 per purge over the ~9 purges after the cap fills",
                        x["persistent_purged"], x["persistent_purged"] >= 50 * 8))
            report.append(markdown_table(
                ["grants", "cap", "most persistent grants", "segments", "map ops", "unmap ops",
                 "purged", "held at the end"], table))
        close_situation(report, checks, manifest, sit, got, keys)
    return finish(root, report, checks, manifest, t0)


def _write_curve(path: Path, iops: dict[str, dict[int, int]]) -> None:
    """One row per guest count, one IOPS column per grants variant."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    names = list(iops)
    w.writerow(["guests"] + [f"iops_{n}" for n in names])
    for g in GUESTS:
        w.writerow([g] + [iops[n][g] for n in names])
    write_text_atomic(path, out.getvalue())
