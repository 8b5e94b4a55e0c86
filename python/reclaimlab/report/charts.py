"""Charts: one run's time series (free pages against the watermarks, scan and steal rates,
swap), and bars of a counter per group with 95 % intervals of the mean (Student's t)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..results import RunDirError

#: The headline counters the comparison charts show, in this order (when a run has them).
METRICS = (
    "pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct", "pgsteal_direct", "pswpout", "pswpin",
    "pgmajfault", "allocstall", "kswapd_awake_ms", "direct_stall_ms",
)
#: At most this many points of a sweep get time-series charts (the first seed of each).
MAX_TIMESERIES_POINTS = 8
#: Samples per time-series line (longer series are thinned evenly; the last sample is kept).
MAX_SAMPLES = 400
CHART_WIDTH = 330
CHART_HEIGHT = 180



def _thin(df):
    if len(df) <= MAX_SAMPLES:
        return df
    step = math.ceil(len(df) / MAX_SAMPLES)
    keep = list(range(0, len(df) - 1, step)) + [len(df) - 1]
    return df.iloc[keep]


def _rate(df, column: str):
    """Per-second rate of a cumulative counter between samples."""
    dt = df["time_ns"].diff() / 1e9
    return (df[column].diff() / dt).where(dt > 0)


def run_charts(path: Path, title: str) -> list[tuple[str, Any]]:
    """(slug, chart) for one run: free pages vs watermarks per zone, scan/steal rates, swap."""
    import altair as alt
    import pandas as pd

    try:
        summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
        ts = pd.read_parquet(path / "timeseries.parquet")
    except (OSError, ValueError) as e:
        raise RunDirError(f"{path}: unreadable result: {e}") from None
    ts = ts.sort_values("time_ns").reset_index(drop=True)
    ts["t"] = ts["time_ns"] / 1e9
    out: list[tuple[str, Any]] = []

    zones = []
    for z in summary.get("zones", []):
        col = f"free_{str(z['zone']).lower()}"
        if z.get("managed", 0) > 0 and col in ts.columns:
            zones.append((z, col))
    panels = []
    for z, col in zones:
        d = _thin(ts)[["t", col]].rename(columns={col: "pages"})
        # Symmetric log: the watermarks are a few hundred pages, free memory at the start and
        # end can be a million; on a linear axis the watermarks sit on the floor.
        y_scale = alt.Scale(type="symlog")
        lines = alt.Chart(d).mark_line(color="#1f77b4").encode(
            x=alt.X("t:Q", title="simulated time (s)"),
            y=alt.Y("pages:Q", title="free pages (symlog)", scale=y_scale),
        )
        marks = pd.DataFrame(
            [{"watermark": w, "pages": z[w]} for w in ("min", "low", "high") if w in z]
        )
        rules = alt.Chart(marks).mark_rule(strokeDash=[4, 3]).encode(
            y=alt.Y("pages:Q", scale=y_scale),
            color=alt.Color("watermark:N", scale=alt.Scale(domain=["min", "low", "high"],
                                                           range=["#c0392b", "#e67e22", "#27ae60"])),
        )
        panels.append((lines + rules).properties(
            title=f"{z['zone']}: free pages vs watermarks", width=CHART_WIDTH, height=CHART_HEIGHT))
    if panels:
        out.append((f"{title} free", alt.hconcat(*panels).properties(
            title=f"{title}: free pages per zone")))

    def rates(columns: Sequence[str], what: str, slug: str) -> None:
        present = [c for c in columns if c in ts.columns]
        if not present or len(ts) < 2:
            return
        d = ts[["t"]].copy()
        for c in present:
            d[c] = _rate(ts, c)
        d = _thin(d.dropna()).melt("t", var_name="counter", value_name="rate")
        out.append((f"{title} {slug}", alt.Chart(d).mark_line().encode(
            x=alt.X("t:Q", title="simulated time (s)"),
            y=alt.Y("rate:Q", title="pages/s"),
            color=alt.Color("counter:N"),
        ).properties(title=f"{title}: {what}", width=CHART_WIDTH, height=CHART_HEIGHT)))

    rates(("pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct", "pgsteal_direct"),
          "scan and steal rates", "scan")
    rates(("pswpin", "pswpout"), "swap traffic", "swap")
    for slug, chart in (("pressure", pressure_chart(ts, title)),
                        ("cgroups", cgroup_chart(ts, title)),
                        ("cgroup pressure", cgroup_pressure_chart(ts, title))):
        if chart is not None:
            out.append((f"{title} {slug}", chart))
    return out


def pressure_chart(ts, title: str):
    """The share of each interval the system's tasks spent stalled on memory (the PSI totals'
    growth, "some" and "full"), when the run recorded them; None otherwise."""
    import altair as alt

    cols = {"some": "psi_memory_some_total_us", "full": "psi_memory_full_total_us"}
    if not all(c in ts.columns for c in cols.values()) or len(ts) < 2:
        return None
    d = ts[["t"]].copy()
    for kind, c in cols.items():
        # Microseconds of stall per second of time, as a percentage.
        d[kind] = _rate(ts, c) / 1e4
    d = _thin(d.dropna()).melt("t", var_name="line", value_name="percent")
    return alt.Chart(d).mark_line().encode(
        x=alt.X("t:Q", title="simulated time (s)"),
        y=alt.Y("percent:Q", title="% of time stalled"),
        color=alt.Color("line:N", title="memory"),
    ).properties(title=f"{title}: memory pressure (PSI)", width=CHART_WIDTH, height=CHART_HEIGHT)


def cgroup_chart(ts, title: str):
    """Each memory cgroup's memory.current (and memory.swap.current, dashed) over the run, in
    MiB, when it has cgroups; None otherwise. The data is long (one row per sample, cgroup and
    file): Vega-Lite would read the dots of the columns' names as nested fields."""
    import altair as alt
    import pandas as pd

    found = []
    for c in ts.columns:
        m = re.fullmatch(r"cgroup/(.+)/(memory\.current|memory\.swap\.current)", str(c))
        if m:
            found.append((c, m.group(1), "swap" if "swap" in m.group(2) else "memory"))
    if not found:
        return None
    thin = _thin(ts)
    d = pd.concat([pd.DataFrame({"t": thin["t"], "cgroup": name, "file": kind,
                                 "MiB": thin[c] / (1 << 20)}) for c, name, kind in found],
                  ignore_index=True)
    return alt.Chart(d).mark_line().encode(
        x=alt.X("t:Q", title="simulated time (s)"),
        y=alt.Y("MiB:Q", title="MiB"),
        color=alt.Color("cgroup:N"),
        strokeDash=alt.StrokeDash("file:N", title="file"),
    ).properties(title=f"{title}: cgroups' memory (memory.current, memory.swap.current)",
                 width=CHART_WIDTH, height=CHART_HEIGHT)


def cgroup_pressure_chart(ts, title: str):
    """The share of each interval each memory cgroup's tasks spent stalled on memory (its
    memory.pressure "some" total's growth, as a percentage), when the run has cgroups with
    pressure columns; None otherwise."""
    import altair as alt
    import pandas as pd

    found = [(c, m.group(1)) for c in ts.columns
             if (m := re.fullmatch(r"cgroup/(.+)/memory\.pressure\.some_total_us", str(c)))]
    if not found or len(ts) < 2:
        return None
    d = pd.concat([pd.DataFrame({"t": ts["t"], "cgroup": name, "percent": _rate(ts, c) / 1e4})
                   for c, name in found], ignore_index=True).dropna()
    d = pd.concat([_thin(g) for _, g in d.groupby("cgroup", sort=False)], ignore_index=True)
    return alt.Chart(d).mark_line().encode(
        x=alt.X("t:Q", title="simulated time (s)"),
        y=alt.Y("percent:Q", title="% of time stalled (some)"),
        color=alt.Color("cgroup:N"),
    ).properties(title=f"{title}: cgroups' memory pressure (memory.pressure, some)",
                 width=CHART_WIDTH, height=CHART_HEIGHT)


# ---- statistics -------------------------------------------------------------------------------


def interval95(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95% confidence interval of the mean (Student's t); low = high =
    mean for fewer than two values or no spread."""
    import numpy as np

    xs = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if len(xs) == 0:
        return (math.nan, math.nan, math.nan)
    m = float(xs.mean())
    if len(xs) < 2 or float(xs.std(ddof=1)) == 0.0:
        return (m, m, m)
    # Student's t quantile from scipy.special (what scipy.stats' t.ppf computes, the same
    # bits): importing scipy.stats costs a second of CPU, a report's bar charts (one run per
    # group, mostly) seldom need it at all.
    from scipy.special import stdtrit

    half = float(stdtrit(len(xs) - 1, 0.975) * xs.std(ddof=1) / math.sqrt(len(xs)))
    return (m, m - half, m + half)


def bars_with_intervals(df, group: str, metric: str, title: str, order: Sequence[str] | None = None):
    """Mean of ``metric`` per ``group`` with 95% interval whiskers (from the rows' samples)."""
    import altair as alt
    import pandas as pd

    rows = []
    for g, sub in df.groupby(group, sort=False):
        m, lo, hi = interval95(list(sub[metric].astype(float)))
        if not math.isnan(m):
            rows.append({group: str(g), "mean": m, "low": lo, "high": hi, "n": len(sub)})
    if not rows:
        return None
    d = pd.DataFrame(rows)
    sort = list(order) if order is not None else list(d[group])
    base = alt.Chart(d).encode(y=alt.Y(f"{group}:N", sort=sort, title=None))
    bars = base.mark_bar(color="#4c78a8").encode(
        x=alt.X("mean:Q", title=metric),
        # Channel objects, not shorthand strings: altair turns each string into its channel
        # class through a table of every schema class that it builds again for each string
        # (about 8 ms each, most of a bar chart's time). The specification is the same.
        tooltip=[alt.Tooltip(f"{group}:N"), alt.Tooltip("mean:Q"), alt.Tooltip("low:Q"),
                 alt.Tooltip("high:Q"), alt.Tooltip("n:Q")],
    )
    whisk = base.mark_errorbar(color="#222").encode(x=alt.X("low:Q", title=metric),
                                                    x2=alt.X2("high:Q"))
    return (bars + whisk).properties(title=title, width=CHART_WIDTH, height=alt.Step(16))
