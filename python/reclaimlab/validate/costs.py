"""What a sitting's boots measured of the guest's costs: the figures behind a scenario's
`[cost]`, `[swap]` and `[disk]` when they are measured rather than fitted (docs/VALIDATION.md,
"The 2026-11-28 sitting").

Three sources, all kept beside the scenario in its `real/` directory:

- the scored boots (`real/<scenario>.json`): every boot traces kswapd, so each rep's
  `kswapd_trace` carries what a page cost kswapd by its fate (`kswapd_per_page`: kept,
  written, freed) and how long each disk's requests took (`block_requests`);
- one boot tracing every task's scheduler events (`real/<scenario>.tasks.json`,
  `scripts/validate-trace.py --tasks`): the workload tasks' time on their vCPUs
  (`ktrace.workload_time`) beside that boot's vmstat delta;
- the single traced boot `real/<scenario>.trace.json` (`scripts/validate-trace.py`), for two
  figures the scored boots' summaries lack when they predate them: how far apart a read-ahead
  window's pages are allocated (`readahead_page_gap`, behind `[cost] readahead_alloc`) and
  kswapd's time from its switch onto a CPU to its first LRU batch (`switch_in_to_first_batch`,
  behind `[cost] balance_start`). That boot ran at its own day's pace, so its figures are
  scaled by the pace of the scored boots relative to it: the ratio of what a page cost kswapd
  in each (`kswapd_per_page`, the median over the fates both traced enough of).

Each figure is a median over the boots of each boot's median (the boots of a sitting differ
in pace by a few per cent; a median keeps one odd boot out). The split of a page's reclaim
between the keys of `[cost]` follows their definitions (docs/MODEL.md): a page kept costs
`scan_mapped`; a page swapped out costs `scan_mapped + unmap + swapout_submit`, with
`swapout_submit` (the bio) the scenario's own; a clean page freed costs `scan_unmapped +
free_page`. A device's request latency is its median time from issue to completion less the
transfer of its mean request at the device's bandwidth, which the model adds itself (no figure
when the transfer alone is longer: the device was faster than that bandwidth).
"""

from __future__ import annotations

import json
import statistics
import tomllib
from typing import Any

from .. import api
from .spec import GuestSpec, duration_ns, size_bytes

PAGE = 4096
# The guest's disks as its kernel names them: the swap disk first, the data disk second.
SWAP_DEV, DATA_DEV = "254,0", "254,16"
# A boot's per-page median counts only with this many batches of that fate behind it.
MIN_BATCHES = 20


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def from_boots(spec: GuestSpec, reps: list[dict[str, Any]]) -> dict[str, float]:
    """The reclaim costs and device latencies, in microseconds, that the scored boots ``reps``
    of ``spec`` measured (or the measurements kept of their transcripts, for boots whose
    summaries predate `kswapd_per_page`), with the two figures of the single traced boot
    scaled to their pace; a figure is absent when too few of its events were traced."""
    # The scenario with every default written out (the simulator declares them).
    resolved = tomllib.loads(api.show_defaults(spec.path))

    def cost_us(key: str) -> float:
        return duration_ns(resolved["cost"][key]) / 1e3

    def bandwidth(section: str) -> float:
        return float(size_bytes(str(resolved[section]["bandwidth"]).removesuffix("/s")))

    traced = [r["kswapd_trace"] for r in reps if "kswapd_trace" in r]
    fate = kswapd_fates(spec, reps)
    out: dict[str, float] = {}
    if fate["kept"] is not None:
        out["scan_mapped"] = fate["kept"]
        if fate["written"] is not None:
            out["unmap"] = fate["written"] - fate["kept"] - cost_us("swapout_submit")
    if fate["freed"] is not None:
        out["scan_unmapped"] = fate["freed"] - cost_us("free_page")
    single = load_trace(spec)
    for key, field in (("readahead_alloc", "readahead_page_gap"),
                       ("balance_start", "switch_in_to_first_batch")):
        own = _median([t[field]["median_us"] for t in traced
                       if t.get(field, {}).get("n", 0) >= MIN_BATCHES])
        if own is not None:
            out[key] = own
            continue
        if single is None or single["trace"].get(field, {}).get("n", 0) < MIN_BATCHES:
            continue
        pace = _pace(fate, single["trace"]["kswapd_per_page"])
        if pace is not None:
            out[key] = single["trace"][field]["median_us"] * pace
    for dev, section in ((SWAP_DEV, "swap"), (DATA_DEV, "disk")):
        for rw in ("read", "write"):
            rows = [t.get("block_requests", {}).get(f"{dev} {rw}") for t in traced]
            rows = [r for r in rows if r and r.get("n", 0) >= MIN_BATCHES]
            if not rows:
                continue
            pages = statistics.fmean(r["pages"] / r["n"] for r in rows)
            transfer_us = pages * PAGE / bandwidth(section) * 1e6
            latency = _median([r["median_us"] for r in rows]) - transfer_us
            # A device faster than the section's bandwidth (file-write's large writes land in
            # the host's page cache) leaves no latency to measure this way.
            if latency > 0:
                out[f"{section}.{rw}_latency"] = latency
    return out


def wake_to_first_batch(spec: GuestSpec, reps: list[dict[str, Any]]) -> float | None:
    """kswapd's time, in microseconds, from the start of its run (`mm_vmscan_kswapd_wake`) to
    its first LRU batch: `[cost] balance_start` when the wake-up latency samples run from the
    allocator's `mm_vmscan_wakeup_kswapd` to that start (`kswapd_wait_us`), as the guest
    profile's do. A boot's switch-in to its first batch less its switch-in to the run (their
    medians), from the scored boots ``reps`` when they trace both, else from the single traced
    boot scaled to their pace as `from_boots` scales it; None when neither traced enough."""
    fields = ("switch_in_to_first_batch", "switch_in_to_balance")

    def gap(t: dict[str, Any]) -> float | None:
        if any(t.get(f, {}).get("n", 0) < MIN_BATCHES for f in fields):
            return None
        return t[fields[0]]["median_us"] - t[fields[1]]["median_us"]

    own = _median([g for r in reps if "kswapd_trace" in r
                   if (g := gap(r["kswapd_trace"])) is not None])
    if own is not None:
        return own
    single = load_trace(spec)
    if single is None or (g := gap(single["trace"])) is None:
        return None
    pace = _pace(kswapd_fates(spec, reps), single["trace"]["kswapd_per_page"])
    return None if pace is None else g * pace


def kswapd_fates(spec: GuestSpec, reps: list[dict[str, Any]]) -> dict[str, float | None]:
    """What a page cost kswapd, in microseconds, by what became of it ("kept", "written",
    "freed"): the median over the scored boots ``reps`` of each boot's median, from their
    summaries or, for boots that predate `kswapd_per_page`, the measurements kept of their
    transcripts; None for a fate too few batches had."""
    traced = [r["kswapd_trace"] for r in reps if "kswapd_trace" in r]
    fate: dict[str, float | None] = {}
    for k in ("kept", "written", "freed"):
        fate[k] = _median([t["kswapd_per_page"][k]["median_us"] for t in traced
                           if "kswapd_per_page" in t
                           and t["kswapd_per_page"][k]["batches"] >= MIN_BATCHES])
    if all(v is None for v in fate.values()):
        fate = _kept_measurements(spec) or fate
    return fate


def _kept_measurements(spec: GuestSpec) -> dict[str, float | None] | None:
    """What a page cost kswapd by its fate, from a sitting's `real/measurements-*.json`: the
    summaries taken again from the console transcripts of scored boots that predate
    `kswapd_per_page` in their own summary (anon-seq-reread's of 2026-11-28)."""
    for path in sorted(spec.real_dir.glob("measurements-*.json")):
        per_page = json.loads(path.read_text()).get(spec.name, {}).get("kswapd_per_page")
        if per_page:
            return {k: per_page[k]["median_us"] if per_page[k]["batches"] >= MIN_BATCHES
                    else None for k in ("kept", "written", "freed")}
    return None


def _pace(fate: dict[str, float | None], other: dict[str, Any]) -> float | None:
    """How much longer the scored boots took for a page kswapd reclaimed than another boot
    (its `kswapd_per_page`): the median over the fates both traced enough batches of."""
    ratios = [fate[k] / other[k]["median_us"] for k in ("kept", "written", "freed")
              if fate[k] is not None and other[k]["batches"] >= MIN_BATCHES
              and other[k]["median_us"] > 0]
    return _median(ratios)


def workload_cpu(tasks: dict[str, Any]) -> list[dict[str, float]]:
    """Each workload task's own CPU time in seconds (on its vCPU, less its direct reclaim),
    from a ``--tasks`` boot's kept summary, busiest first, with what its boot's vmstat
    delta says the tasks did (pages faulted, read in, swapped in)."""
    delta = tasks["vmstat_delta"]
    out = []
    for rec in tasks["workload_time"].values():
        out.append({
            "cpu_s": rec["on_cpu_s"] - rec["direct_reclaim_s"],
            "cpu_before_swap_in_s": (rec["on_cpu_before_swap_in_s"]
                                     - rec["direct_reclaim_before_swap_in_s"]),
            "io_wait_s": rec["io_wait_s"],
            "direct_reclaim_s": rec["direct_reclaim_s"],
        })
    out.sort(key=lambda r: -r["cpu_s"])
    return [r | {"pgpgin_pages": delta.get("pgpgin", 0) / 4, "pswpin": delta.get("pswpin", 0),
                 "pgmajfault": delta.get("pgmajfault", 0)} for r in out]


def load_tasks(spec: GuestSpec) -> dict[str, Any] | None:
    path = spec.real_dir / f"{spec.name}.tasks.json"
    return json.loads(path.read_text()) if path.is_file() else None


def load_trace(spec: GuestSpec) -> dict[str, Any] | None:
    path = spec.real_dir / f"{spec.name}.trace.json"
    return json.loads(path.read_text()) if path.is_file() else None


def describe(spec: GuestSpec, reps: list[dict[str, Any]]) -> list[str]:
    """The measured figures of ``spec`` as lines for `scripts/validate-costs.py`."""
    lines = [f"{spec.name} ({len(reps)} boots):"]
    for key, us in sorted(from_boots(spec, reps).items()):
        section, _, name = key.rpartition(".")
        lines.append(f"  [{section or 'cost'}] {name} = {us:.1f} us")
    tasks = load_tasks(spec)
    if tasks is not None:
        for i, r in enumerate(workload_cpu(tasks)[:2]):
            lines.append(
                f"  task {i + 1} (--tasks boot, {tasks['wall_time_s']:.1f} s): "
                f"CPU {r['cpu_s']:.2f} s"
                f" ({r['cpu_before_swap_in_s']:.2f} s before its first swap-in), I/O wait "
                f"{r['io_wait_s']:.2f} s, direct reclaim {r['direct_reclaim_s']:.2f} s; "
                f"pgpgin {r['pgpgin_pages']:.0f} pages, pswpin {r['pswpin']}, "
                f"pgmajfault {r['pgmajfault']}")
    return lines
