"""The HTML report (``reclaimlab report``, ``reclaimlab reproduce all``) and its figures.

One self-contained HTML file: the charts are Vega-Lite specifications built with altair, with
their data inline, drawn in the page by vega-embed, whose JavaScript (with Vega and Vega-Lite)
is inlined from vl-convert's bundle, so the file needs no network to view. vl-convert also
renders each chart to SVG and PNG (``<report>-figures/``) for papers, without a browser.

Every string that comes from the user (scenario names, axis keys and values, paths, errors) is
HTML-escaped in the page; chart specifications are JSON inside ``<script>`` with ``<`` escaped,
so no value can close the script element.

The page records its own rendering: each chart's container gets ``data-rendered="1"`` once
vega-embed has drawn it, and the body ``data-charts-rendered``/``data-errors``, which the tests
read from headless Chromium.

What it draws, from a run's ``timeseries.parquet`` and ``summary.json``: free pages of each zone
against its min/low/high watermarks; kswapd and direct scan and steal rates; swap-in/out rates;
the share of time stalled on memory (PSI) and each memory cgroup's memory when the run has them
(a run's own page: its headline counters, pressure and cgroups as tables). From a sweep's ``summary.parquet``: bars of headline counters per point with 95% intervals over
the seeds (Student's t), lines along each axis, and a heatmap when there are two axes. For a
reproduction (``reproduce.json``, written by the experiment runner): each situation's checks,
the thread's published changes beside ours, the counters per policy and each run's time series.
"""

from __future__ import annotations

import os
from pathlib import Path

from .charts import METRICS, bars_with_intervals, interval95, run_charts
from .page import Page, ReportError, esc
from .reproduction import REPRODUCTION_MANIFEST, find_reproductions, reproduction_page
from .run import is_run_dir, run_page
from .sweep import sweep_page

__all__ = [
    "METRICS", "REPRODUCTION_MANIFEST", "Page", "ReportError", "bars_with_intervals", "esc",
    "find_reproductions", "interval95", "page_for", "reproduction_page", "run_charts",
    "run_page", "sweep_page",
]


def page_for(directory: str | os.PathLike) -> Page:
    """The report of a sweep directory, of a reproduction's output directory, or of one run's."""
    d = Path(directory)
    if not d.is_dir():
        raise ReportError(f"{d}: no such directory")
    if (d / "sweep.json").is_file():
        return sweep_page(d)
    found = find_reproductions(d)
    if found:
        return reproduction_page(found)
    if is_run_dir(d):
        return run_page(d)
    raise ReportError(
        f"{d}: neither a sweep directory (sweep.json), a reproduction's (reproduce.json) nor a "
        "run's (summary.json and timeseries.parquet); give the --out of `reclaimlab sweep`, "
        "`reclaimlab reproduce` or `reclaimlab run`"
    )
