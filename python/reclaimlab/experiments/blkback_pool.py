"""Seed 000: "xen/blkback: Aggressively shrink page pools if a memory pressure is detected"
(SeongJae Park, v2, December 2019; merged as the xenbus "xen-backend" shrinker in 5.6). Each
blkback ring keeps a pool of pages to map guests' grants into, up to ``max_buffer_pages``
(1,024) after every pass; with pools backed by ballooned dom0 RAM, guests using many block
devices push dom0 into swap. The patch squeezes every pool to 0 for
``buffer_squeeze_duration_ms`` whenever dom0 reclaims (mechanisms.md §B, §E.B).

One check group per statement of §E.B:

- ``E.B.1`` dom0 pswpin and pswpout while guests write to many network-backed VBDs: B2 and B3
  at 10 ms cut pswpout more than 10x against B1, and pswpin falls more.
- ``E.B.2`` the squeeze duration: 1 ms leaves more swap traffic than 10 ms, and 100 ms gains
  little over 10 ms.
- ``E.B.3`` forcing ``max_buffer_pages = 0`` leaves dd's throughput unchanged, on the slow disk
  and on a ramdisk.
- ``E.B.4`` after every housekeeping step each ring's pool is at most its target; pages in use
  are never freed (the invariant checker: blkback's frames are dom0 kernel pages held once,
  and in balloon mode exactly the pages handed to Xen); with 6.1's unpopulated backing,
  squeezing changes dom0's free memory by about nothing.

Every figure comes from a run made here. report.json holds ``{"checks": [{"id", "claim",
"expected", "measured", "pass"}]}``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import api
from ..results import load_run
from ..store import Store
from ..tables import markdown_table
from .checks import Check, Situation, close_situation, finish, open_situation

NAME = "blkback-pool"
TITLE = "Xen blkback page pools under dom0 memory pressure (seed 000)"

#: Dom0: 2 GiB, its services' anonymous memory (zipf: a hot core and a cold tail), swap.
DOM0_RAM, DOM0_ANON, DOM0_SWAP = "2GiB", "1650MiB", "4GiB"
#: Other sizes of dom0's services, to show how the cut depends on how close dom0 is to fitting.
SENSITIVITY = ["1600MiB", "1700MiB", "1750MiB"]
#: 10 guests with 10 network-backed VBDs each; every VBD has a dd writing 64 MiB at a time,
#: then idle 5 s, the VBDs' starts spread over 6 s: about a quarter are busy at any time.
GUESTS, VBDS, BURST_IOS, PAUSE, DURATION = 10, 10, 16384, "5s", "60s"
#: The thread's figures (mechanisms.md §B.6): (pswpin, pswpout).
THREAD = {"B1": (76_672, 185_799), "B2": (212, 3_325), "B3": (867, 3_967)}
THREAD_SWEEP = {1: (852, 6_424), 10: (212, 3_325), 100: (203, 3_340)}
#: dd to a network-backed disk: the thread's steady rate is 38.7 MB/s (36.9 MiB/s).
NETWORK_BANDWIDTH = "37MiB/s"
#: dd to a ramdisk: the guest's own cost per 4 KiB write (syscall and page-cache copy), which
#: bounds it near the thread's 419 MB/s.
RAMDISK_THINK = "9us"



SITUATIONS = [
    Situation("pressure", "E.B.1: dom0 swap traffic with balloon-backed pools, 100 busy VBDs",
              ["B1", "B2", "B3"]),
    Situation("duration", "E.B.2: B3's squeeze duration", ["1ms", "10ms", "100ms"]),
    Situation("throughput", "E.B.3: dd with max_buffer_pages 1024 and 0", ["network", "ramdisk"]),
    Situation("sensitivity", "E.B.1 against the size of dom0's services", SENSITIVITY),
    # Last: its pool-target check covers every run before it.
    Situation("invariants", "E.B.4: pool targets, pages in use, unpopulated backing",
              ["B3-checked", "unpopulated-B1", "unpopulated-B3"]),
]


def pressure_scenario(pool: str, *, squeeze_ms: int = 10, backing: str = "balloon",
                      anon: str = DOM0_ANON, duration: str = DURATION,
                      guests: int = GUESTS) -> dict[str, Any]:
    """Dom0 running its services next to blkback serving ``guests`` x ``VBDS`` busy VBDs. The
    frontends do not negotiate persistent grants, so every in-flight segment takes a pool
    page."""
    guest_list = []
    for g in range(guests):
        names = [f"xvd{chr(97 + v)}" for v in range(VBDS)]
        guest_list.append({
            "name": f"vm{g + 1}", "ram": "256MiB", "boot_resident": "64MiB",
            "vbd": [{"name": n, "backend": "network", "persistent": False} for n in names],
            "workload": [{
                "name": f"dd-{n}", "start": f"{((g * VBDS + v) * 137) % 6000}ms",
                "blkio": {"vbd": n, "pattern": "sequential", "bs": "4KiB", "count": BURST_IOS,
                          "repeat": 1000, "pause": PAUSE},
            } for v, n in enumerate(names)],
        })
    return {
        "name": f"blkback-pool-{pool}-{backing}-{squeeze_ms}ms",
        "sim": {"duration": duration, "sample_interval": "1s"},
        "host": {"ram": DOM0_RAM, "cpus": 4},
        "swap": {"size": DOM0_SWAP},
        "xen": {"ram": "64GiB", "blkback": {"buffer_squeeze_duration_ms": squeeze_ms}},
        "policy": {"blkback_pool": pool, "blkback_backing": backing},
        "workload": [{"name": "dom0-services", "anon": {
            "size": anon, "pattern": "zipf", "passes": 1_000_000, "think": "2us"}}],
        "guest": guest_list,
    }


def dd_scenario(device: str, max_buffer_pages: int) -> dict[str, Any]:
    """The thread's throughput test: one guest, ``dd bs=4k count=131072`` five times."""
    vbd: dict[str, Any] = {"name": "xvda", "backend": device, "persistent": False}
    blkio: dict[str, Any] = {"vbd": "xvda", "pattern": "sequential", "bs": "4KiB",
                             "count": 131072, "repeat": 5, "pause": "1s"}
    if device == "network":
        vbd["bandwidth"] = NETWORK_BANDWIDTH
    else:
        blkio["think"] = RAMDISK_THINK
    return {
        "name": f"blkback-dd-{device}-{max_buffer_pages}",
        "sim": {"sample_interval": "1s"},
        "host": {"ram": DOM0_RAM, "cpus": 4},
        "xen": {"ram": "64GiB", "blkback": {"max_buffer_pages": max_buffer_pages}},
        "policy": {"blkback_pool": "B2", "blkback_backing": "balloon"},
        "guest": [{"name": "instance", "ram": "1GiB", "boot_resident": "128MiB", "vbd": [vbd],
                   "workload": [{"name": "dd", "blkio": blkio}]}],
    }


def _over_target(x: dict[str, Any]) -> int:
    return sum(r["pool_over_target"] for d in x["devices"] for r in d["rings"])


def reproduce(situations, root: Path, seed: int, *, store: Store, trace: bool = False,
              on_run: Callable[[Any, str, Any], None] | None = None):
    """Run ``situations`` with ``seed`` into ``store`` (runs linked under ``root``); write
    report.md, report.json and the HTML report's manifest there."""
    t0 = time.perf_counter()
    report = [f"# {TITLE}", "", f"Seed {seed}. Runs in `{root}`.", "",
              f"Dom0: {DOM0_RAM} of RAM, {DOM0_SWAP} of swap, services touching {DOM0_ANON} "
              f"(zipf). {GUESTS} guests with {VBDS} network-backed VBDs each (one ring each); "
              f"every VBD's dd writes {BURST_IOS * 4 // 1024} MiB, rests {PAUSE}, again, for "
              f"{DURATION}. Pools are balloon-backed: every pool or mapped page is a dom0 page "
              "given to Xen. The frontends do not use persistent grants.", ""]
    checks: list[Check] = []
    manifest: dict[str, Any] = {"experiment": NAME, "title": TITLE, "seed": seed,
                                "situations": []}
    seen_over: dict[str, int] = {}
    for sit in situations:
        report += [f"## {sit.title}", ""]
        ensure, keys = open_situation(root, sit, store, seed, on_run)

        def run(label: str, scn: dict[str, Any]) -> dict[str, Any]:
            ens = ensure(label, scn)
            seen_over[f"{sit.key}/{label}"] = _over_target(ens.summary["xen"])
            # The summary, with dom0's vmstat counters beside it.
            return {**ens.summary, "vmstat": load_run(ens.path).vmstat}

        got: list[Check] = []
        if sit.key == "pressure":
            s = {p: run(p, pressure_scenario(p)) for p in sit.policies}
            swp = {p: (_vmstat(s[p], "pswpin"), _vmstat(s[p], "pswpout")) for p in sit.policies}
            report.append(markdown_table(
                ["pool", "thread pswpin", "thread pswpout", "pswpin", "pswpout",
                 "pool pages at the end", "squeezes", "pressure calls"],
                [[p, THREAD[p][0], THREAD[p][1], swp[p][0], swp[p][1],
                  s[p]["xen"]["pool_pages"], s[p]["xen"]["squeezes"],
                  s[p]["xen"]["pressure_calls"]] for p in sit.policies]))
            b1_in, b1_out = swp["B1"]
            for p in ("B2", "B3"):
                pin, pout = swp[p]
                cut = b1_out / max(pout, 1)
                got.append(Check(f"E.B.1.{p}", f"{p} at 10 ms cuts dom0 pswpout more than 10x "
                                 "against B1", "> 10x", f"{cut:.1f}x", cut > 10))
            pin, pout = swp["B3"]
            got.append(Check("E.B.1.pswpin", "and pswpin falls more than pswpout",
                             f"pswpin cut > pswpout cut ({b1_out / max(pout, 1):.1f}x)",
                             f"{b1_in / max(pin, 1):.1f}x",
                             b1_in / max(pin, 1) > b1_out / max(pout, 1)))
        elif sit.key == "duration":
            out = {}
            rows = []
            for label in sit.policies:
                ms = int(label.removesuffix("ms"))
                s = run(label, pressure_scenario("B3", squeeze_ms=ms))
                out[ms] = (_vmstat(s, "pswpin"), _vmstat(s, "pswpout"))
                rows.append([label, THREAD_SWEEP[ms][0], THREAD_SWEEP[ms][1], out[ms][0],
                             out[ms][1], s["xen"]["squeezes"]])
            report.append(markdown_table(
                ["duration", "thread pswpin", "thread pswpout", "pswpin", "pswpout",
                 "squeezes"], rows))
            report += ["", "The duration is rounded up to jiffies (HZ 250): 1 ms squeezes for "
                       "one 4 ms jiffy, 10 ms for three. An idle ring's kthread looks at its "
                       "pool every 100 ms, so a short window misses most of them."]
            o1, o10, o100 = out[1][1], out[10][1], out[100][1]
            got = [
                Check("E.B.2.short", "1 ms leaves more swap-out than 10 ms", f"> {o10:,}", o1,
                      o1 > o10),
                Check("E.B.2.returns", "and 100 ms gains little over 10 ms: diminishing "
                      "returns above 10 ms", f"10 -> 100 ms gain < 1/5 of the 1 -> 10 ms gain "
                      f"({o1 - o10:,})", o10 - o100, o10 - o100 < (o1 - o10) / 5),
            ]
        elif sit.key == "throughput":
            rows = []
            for dev in sit.policies:
                mbps = {}
                for mbp in (1024, 0):
                    s = run(f"{dev}-{mbp}", dd_scenario(dev, mbp))
                    runs = s["xen"]["jobs"][0]["runs_mb_per_s"]
                    mbps[mbp] = runs
                    rows.append([dev, mbp, ", ".join(f"{r:.1f}" for r in runs),
                                 f"{sum(runs) / len(runs):.1f}",
                                 s["xen"]["pool_pages_grown"]])
                a, b = (sum(mbps[m]) / len(mbps[m]) for m in (1024, 0))
                change = (b - a) / a
                # The thread's ramdisk runs have a standard deviation of 2.5-4.4 MB/s around
                # 419 MB/s (0.6-1 %); the slow disk's repeat to the tenth. A deterministic
                # difference under 1 % is inside that noise.
                got.append(Check(f"E.B.3.{dev}", f"max_buffer_pages = 0 leaves dd's throughput "
                                 f"unchanged ({dev})", "within 1 % (the thread's noise)",
                                 f"{a:.1f} vs {b:.1f} MB/s ({change * 100:+.2f} %)",
                                 abs(change) < 0.01))
            report.append(markdown_table(
                ["backend", "max_buffer_pages", "MB/s per run", "mean MB/s", "pool pages grown"],
                rows))
            report += ["", "The thread: 45.8, 38.7, 38.7, 38.7, 38.7 MB/s either way on the "
                       "network-backed disk; 419.4 vs 417.8 MB/s on average on the ramdisk "
                       "(\"no difference proven at 95% confidence\"). The test here: the "
                       "simulation is deterministic, so the two settings' means are compared "
                       "directly against the thread's run-to-run spread (about 1 %)."]
        elif sit.key == "sensitivity":
            rows = []
            cuts = {}
            for anon in sit.policies:
                b1 = run(f"B1-{anon}", pressure_scenario("B1", anon=anon))
                b3 = run(f"B3-{anon}", pressure_scenario("B3", anon=anon))
                o1, o3 = _vmstat(b1, "pswpout"), _vmstat(b3, "pswpout")
                cuts[anon] = o1 / max(o3, 1)
                rows.append([anon, _vmstat(b1, "pswpin"), o1, _vmstat(b3, "pswpin"), o3,
                             f"{cuts[anon]:.1f}x"])
            report.append(markdown_table(
                ["dom0 services", "B1 pswpin", "B1 pswpout", "B3 pswpin", "B3 pswpout",
                 "pswpout cut"], rows))
            report += ["", "The cut is large when dom0 fits its services once the idle pools "
                       "are squeezed and shrinks as the services alone come close to filling "
                       "dom0; B3 swaps less than B1 at every size."]
            got = [Check("E.B.1.sizes", "B3 swaps out less than B1 at every size of dom0's "
                         "services", "cut > 1x at each", ", ".join(f"{c:.1f}x" for c in
                                                                  cuts.values()),
                         all(c > 1 for c in cuts.values()))]
        elif sit.key == "invariants":
            # Pages in use are never freed: the invariant checker after every 4,000th event of
            # the first 20 s of the B3 pressure run.
            small = pressure_scenario("B3", duration="20s")
            try:
                x = api.run(small, seed=seed, invariants=4000).summary["xen"]
                measured, ok = f"no violation, {x['squeezes']} squeezes", x["squeezes"] > 0
                seen_over["invariants/B3-checked"] = _over_target(x)
            except api.SimulationError as e:
                measured, ok = str(e).splitlines()[0], False
            got.append(Check("E.B.4.in-use", "pages in use are never freed: blkback's frames "
                             "are held once, as dom0 kernel pages, and are exactly the pages "
                             "handed to Xen (checked every 4,000 events of 20 s under B3)",
                             "no violation, squeezes > 0", measured, ok))
            # Unpopulated backing: dom0 is short of memory by itself (its services need more
            # than it has), so B3 squeezes, and that frees no RAM.
            free = {}
            for label in ("unpopulated-B1", "unpopulated-B3"):
                pool = label.split("-")[1]
                s = run(label, pressure_scenario(pool, backing="unpopulated", anon="1950MiB"))
                free[pool] = (_vmstat(s, "nr_free_pages"), s["xen"]["squeezes"],
                              _vmstat(s, "pswpout"))
            report.append(markdown_table(
                ["unpopulated backing", "dom0 free pages at the end", "squeezes", "pswpout"],
                [[p, *free[p]] for p in ("B1", "B3")]))
            ram_pages = 2 * 1024 * 256
            diff = abs(free["B3"][0] - free["B1"][0])
            got.append(Check("E.B.4.unpopulated", "with unpopulated backing, squeezing changes "
                             "dom0's free memory by about 0",
                             "< 1 % of dom0's RAM, with squeezes", f"{diff:,} pages",
                             diff < 0.01 * ram_pages and free["B3"][1] > 0))
            over = sum(seen_over.values())
            got.append(Check("E.B.4.target", "after every housekeeping step each ring's pool "
                             "is at most its target (1,024, or 0 while squeezing), in every run "
                             "of this reproduction", "0 steps over", over, over == 0))
        close_situation(report, checks, manifest, sit, got, keys)
    return finish(root, report, checks, manifest, t0)


def _vmstat(summary: dict[str, Any], name: str) -> int:
    """A dom0 vmstat counter from a run's summary."""
    return int(summary["vmstat"][name])
