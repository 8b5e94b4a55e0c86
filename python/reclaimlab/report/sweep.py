"""The report of a sweep directory: headline counters per point with intervals over the
seeds, lines along each axis, a heatmap for two axes, and the first points' time series."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .charts import CHART_HEIGHT, CHART_WIDTH, MAX_TIMESERIES_POINTS, METRICS, bars_with_intervals, run_charts
from .page import Page, ReportError


def sweep_page(directory: str | os.PathLike) -> Page:
    """The report of a sweep directory (summary.parquet and sweep.json)."""
    import altair as alt
    import pandas as pd

    d = Path(directory)
    try:
        manifest = json.loads((d / "sweep.json").read_text(encoding="utf-8"))
        df = pd.read_parquet(d / "summary.parquet")
    except (OSError, ValueError) as e:
        raise ReportError(f"{d}: not a readable sweep directory: {e}") from None
    axes = [a for a in manifest.get("axes", []) if a in df.columns]
    store = (d / manifest.get("store", ".store")).resolve()
    page = Page(f"reclaimlab sweep: {d.name}")
    page.h(1, f"Sweep {manifest.get('sweep', d.name)}")
    ok = df[df["status"] == "ok"] if len(df) else df
    failed = df[df["status"] != "ok"] if len(df) else df
    page.p(f"Scenario {manifest.get('scenario')}; axes: {', '.join(axes) or 'none'}; seeds "
           f"{manifest.get('seeds')}. {len(ok)} runs succeeded, {len(failed)} failed. Bars are "
           "means over the seeds with 95% confidence intervals (Student's t).", "note")
    if len(ok) == 0:
        page.p("No finished run to show.")
        return page
    ok = ok.copy()
    ok["point"] = ok[axes].astype(str).agg(", ".join, axis=1) if axes else "base scenario"
    order = list(dict.fromkeys(ok["point"]))
    metrics = [m for m in METRICS if m in ok.columns and ok[m].notna().any()]
    # Then what a run has beside the headline (sweep/execution.extra_columns): the workloads'
    # throughput, memory pressure and each cgroup's figures.
    metrics += [m for m in ok.columns if m.startswith(("accesses_", "psi_", "cg_"))
                and ok[m].notna().any()]

    page.h(2, "Headline counters per point")
    means = ok.groupby("point", sort=False)[metrics].mean().reindex(order)
    page.table(["point", "runs", *metrics],
               [[p, int((ok["point"] == p).sum()), *[means.loc[p, m] for m in metrics]] for p in order])
    page.row_start()
    for m in metrics:
        page.chart(f"bars {m}", bars_with_intervals(ok, "point", m, m, order))
    page.row_end()

    if axes:
        # Vega-Lite reads dots in a field name as nested access: chart the axes as a0, a1...
        safe = {a: f"a{i}" for i, a in enumerate(axes)}
        renamed = ok.rename(columns=safe)
        page.h(2, "Along the axes")
        page.row_start()
        # The first four headline counters, and the pressure and cgroup refaults when the runs
        # have them (what a memory.high sweep is about).
        along = metrics[:4] + [m for m in metrics if m.startswith("psi_")
                               or (m.startswith("cg_") and m.endswith("_refaults"))]
        for axis in axes:
            x, others = safe[axis], [safe[a] for a in axes if a != axis]
            for m in along:
                g = renamed.groupby(list(safe.values()), sort=False)[m].mean().reset_index()
                g[x] = g[x].astype(str)
                g["other"] = g[others].astype(str).agg(", ".join, axis=1) if others else "all"
                chart = alt.Chart(g).mark_line(point=True).encode(
                    x=alt.X(f"{x}:N", sort=list(dict.fromkeys(g[x])), title=axis),
                    y=alt.Y(f"{m}:Q", title=f"mean {m}"),
                    color=alt.Color("other:N", title=", ".join(a for a in axes if a != axis) or " "),
                ).properties(title=f"{m} along {axis}", width=CHART_WIDTH, height=CHART_HEIGHT)
                page.chart(f"line {axis} {m}", chart)
        page.row_end()
        if len(axes) == 2:
            (a, sa), (b, sb) = safe.items()
            page.row_start()
            for m in metrics[:4]:
                g = renamed.groupby([sa, sb], sort=False)[m].mean().reset_index()
                g[sa], g[sb] = g[sa].astype(str), g[sb].astype(str)
                page.chart(f"heatmap {m}", alt.Chart(g).mark_rect().encode(
                    x=alt.X(f"{sa}:N", sort=list(dict.fromkeys(g[sa])), title=a),
                    y=alt.Y(f"{sb}:N", sort=list(dict.fromkeys(g[sb])), title=b),
                    color=alt.Color(f"{m}:Q", title=m),
                    tooltip=[alt.Tooltip(f"{sa}:N", title=a), alt.Tooltip(f"{sb}:N", title=b),
                             f"{m}:Q"],
                ).properties(title=f"mean {m}", width=CHART_WIDTH * 0.7, height=CHART_HEIGHT * 0.7))
            page.row_end()

    page.h(2, "Time series (first seed of each point)")
    firsts = ok.drop_duplicates("point").head(MAX_TIMESERIES_POINTS)
    if len(order) > MAX_TIMESERIES_POINTS:
        page.p(f"The first {MAX_TIMESERIES_POINTS} of {len(order)} points.", "note")
    for _, row in firsts.iterrows():
        entry = store / "runs" / row["key"][:2] / row["key"]
        page.h(3, f"{row['point']} (seed {row['seed']})")
        page.row_start()
        for slug, chart in run_charts(entry, str(row["point"])):
            page.chart(slug, chart)
        page.row_end()
    if len(failed):
        page.h(2, "Failed runs")
        page.table([*axes, "seed", "error"],
                   [[*[r[a] for a in axes], r["seed"], r.get("error", "")] for _, r in failed.iterrows()])
    return page
