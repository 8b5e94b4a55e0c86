"""The report of one run's directory (what `reclaimlab run` writes): its headline counters,
its memory cgroups and pressure when it has them, and its time series."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .charts import run_charts
from .page import Page, ReportError

#: summary.json's per-cgroup figures the page's table shows, in this order.
CGROUP_COLUMNS = ("memory.current", "memory.peak", "memory.swap.current")
CGROUP_EVENTS = ("low", "high", "max", "oom", "oom_kill")


def is_run_dir(d: Path) -> bool:
    return (d / "summary.json").is_file() and (d / "timeseries.parquet").is_file()


def run_page(directory: str | os.PathLike) -> Page:
    """The report of a run directory (summary.json and timeseries.parquet)."""
    d = Path(directory)
    try:
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ReportError(f"{d}: not a readable run directory: {e}") from None
    name = str(summary.get("name", d.name))
    page = Page(f"reclaimlab run: {name}")
    page.h(1, f"Run {name}")
    page.p(f"Seed {summary.get('seed')}; {summary.get('sim_time_ns', 0) / 1e9:.1f} s simulated; "
           f"stopped because: {summary.get('stop_reason', '?')}.", "note")
    headline = summary.get("headline", {})
    if headline:
        page.h(2, "Headline counters")
        page.table(["counter", "value"], [[k, v] for k, v in headline.items()])
    pressure = summary.get("pressure", {}).get("memory")
    if pressure:
        page.h(2, "Memory pressure (/proc/pressure/memory at the end)")
        page.table(["line", "avg10", "avg60", "avg300", "total (us)"],
                   [[k, *(pressure[k].get(f) for f in ("avg10", "avg60", "avg300", "total_us"))]
                    for k in ("some", "full") if k in pressure])
    cgroups: dict[str, Any] = summary.get("cgroups") or {}
    if cgroups:
        page.h(2, "Memory cgroups at the end")
        page.table(["cgroup", "parent", *(f"{c} (MiB)" for c in CGROUP_COLUMNS),
                    *(f"events {e}" for e in CGROUP_EVENTS)],
                   [[n, cg.get("parent") or "(root)",
                     *(_mib(cg.get(c)) for c in CGROUP_COLUMNS),
                     *(cg.get("memory.events", {}).get(e) for e in CGROUP_EVENTS)]
                    for n, cg in cgroups.items()])
        lines = [[n, k, *(cg["memory.pressure"][k].get(f) for f in ("avg10", "avg60", "avg300",
                                                                    "total_us"))]
                 for n, cg in cgroups.items() if isinstance(cg.get("memory.pressure"), dict)
                 for k in ("some", "full") if k in cg["memory.pressure"]]
        if lines:
            page.h(2, "Memory pressure of each cgroup (memory.pressure at the end)")
            page.table(["cgroup", "line", "avg10", "avg60", "avg300", "total (us)"], lines)
    page.h(2, "Over time")
    page.row_start()
    for slug, chart in run_charts(d, name):
        page.chart(slug, chart)
    page.row_end()
    return page


def _mib(v: Any) -> Any:
    return round(v / (1 << 20), 1) if isinstance(v, (int, float)) else v
