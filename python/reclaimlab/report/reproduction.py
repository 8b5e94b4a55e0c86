"""The report of one or more reproductions (``reproduce.json``, written by the experiment
runner): each situation's checks with their figures, bands and ratios, its sensitivity sweeps,
the thread's published changes beside ours, the counters per policy and each run's series."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..results import RunDirError
from .charts import CHART_WIDTH, METRICS, bars_with_intervals, run_charts
from .page import Page, ReportError

#: The manifest a reproduction writes in its root.
REPRODUCTION_MANIFEST = "reproduce.json"


def reproduction_page(manifests: Sequence[tuple[Path, Mapping[str, Any]]],
                      figures_for: Path | None = None) -> Page:
    """The report of one or more reproductions (``reproduce.json`` of each experiment).
    ``figures_for``: the HTML file the page will be written to, whose figures are drawn as
    the charts are made (:meth:`Page.start_figures`)."""
    import altair as alt
    import pandas as pd

    page = Page("reclaimlab: reproductions of the seed threads")
    if figures_for is not None:
        page.start_figures(figures_for)
    page.h(1, "Reproductions of the seed threads")
    total = sum(len(s["checks"]) for _, m in manifests for s in m["situations"])
    failed = sum(not c["passed"] for _, m in manifests for s in m["situations"] for c in s["checks"])
    page.p(f"{len(manifests)} experiments, {total} checks: "
           + ("all pass." if not failed else f"{failed} FAIL."), "note")
    # A run two situations share (free-page-hinting's fresh D4 run is also its 40 s gap point)
    # is drawn once: its second appearance points to the first.
    drawn: dict[Path, str] = {}
    for root, m in manifests:
        page.h(2, m["title"])
        page.p(f"Seed {m['seed']}; runs in {root}.", "note")
        for sit in m["situations"]:
            page.h(3, sit["title"])
            page.p(sit["story"])
            page.checks(sit["checks"])
            for sens in sit.get("sensitivity", []):
                _sensitivity(page, root, sens)
            labels = [r["label"] for r in sit["runs"]]
            if sit.get("thread"):
                rows = []
                for label, t in sit["thread"].items():
                    ours = sit["ours"].get(label, [None, None])
                    for who, (old, new) in (("thread", t), ("reclaimlab", ours)):
                        if old not in (None, 0) and new is not None:
                            rows.append({"row": label, "who": who, "change": 100.0 * (new - old) / old})
                page.table(["", f"thread {labels[0]}", f"thread {labels[1]}",
                            f"reclaimlab {labels[0]}", f"reclaimlab {labels[1]}"],
                           [[k, *t, *sit["ours"].get(k, [None, None])] for k, t in sit["thread"].items()])
                if rows:
                    page.chart(f"{sit['key']} thread vs ours", alt.Chart(pd.DataFrame(rows)).mark_bar().encode(
                        y=alt.Y("row:N", title=None, sort=list(sit["thread"])),
                        yOffset=alt.YOffset("who:N"),
                        x=alt.X("change:Q", title=f"change of {labels[1]} from {labels[0]} (%)"),
                        color=alt.Color("who:N", title=None),
                    ).properties(title="the thread's published change beside ours", width=CHART_WIDTH * 1.4))
            runs = []
            for r in sit["runs"]:
                summary = root / r["path"] / "summary.json"
                try:
                    head = json.loads(summary.read_text(encoding="utf-8"))["headline"]
                except (OSError, ValueError, KeyError) as e:
                    raise RunDirError(f"{summary}: unreadable result: {e}") from None
                runs.append({"policy": r["label"], **{k: v for k, v in head.items() if k in METRICS}})
            df = pd.DataFrame(runs)
            page.row_start()
            for metric in [x for x in METRICS if x in df.columns][:6]:
                page.chart(f"{sit['key']} {metric}", bars_with_intervals(df, "policy", metric, metric, labels))
            page.row_end()
            for t in sit.get("tables", []):
                page.h(4, t["title"])
                page.table(t["headers"], t["rows"])
            for r in sit["runs"]:
                run_dir, name = (root / r["path"]).resolve(), f"{sit['key']} {r['label']}"
                if run_dir in drawn:
                    page.p(f"{name}: the same run as {drawn[run_dir]}, whose course is drawn "
                           "above.", "note")
                    continue
                drawn[run_dir] = name
                page.row_start()
                for slug, chart in run_charts(run_dir, name):
                    page.chart(slug, chart)
                page.row_end()
    return page


def _sensitivity(page: Page, root: Path, sens: Mapping[str, Any]) -> None:
    """A sensitivity sweep of a reproduction: the range and why, the table per point, the
    count of points where the claim holds, and the plot (an SVG beside the manifest)."""
    holds = sens.get("holds") or {}
    page.h(4, f"Sensitivity: {sens['title']} (holds at {holds.get('n')} of {holds.get('of')} points)")
    if sens.get("range"):
        page.p(sens["range"], "note")
    page.pre(sens.get("table", ""))
    plot = sens.get("plot")
    if plot:
        path = root / plot
        try:
            page.svg(path.read_text(encoding="utf-8"), sens["title"])
        except OSError as e:
            page.p(f"(plot {path} unreadable: {e.strerror})", "note")



def find_reproductions(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The reproductions at ``directory`` or one level below (``reproduce all``'s layout)."""
    found = []
    for cand in [directory / REPRODUCTION_MANIFEST, *sorted(directory.glob(f"*/{REPRODUCTION_MANIFEST}"))]:
        if cand.is_file():
            try:
                found.append((cand.parent, json.loads(cand.read_text(encoding="utf-8"))))
            except ValueError as e:
                raise ReportError(f"{cand}: unreadable: {e}") from None
    return found
