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
against its min/low/high watermarks; kswapd and direct scan and steal rates; swap-in/out rates.
From a sweep's ``summary.parquet``: bars of headline counters per point with 95% intervals over
the seeds (Student's t), lines along each axis, and a heatmap when there are two axes. For a
reproduction (``reproduce.json``, written by the experiment runner): each situation's checks,
the thread's published changes beside ours, the counters per policy and each run's time series.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .results import RunDirError, write_text_atomic

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


class ReportError(Exception):
    """The directory holds nothing a report can be made of."""


# ---- building blocks --------------------------------------------------------------------------


@dataclass
class Page:
    """A report being assembled: HTML blocks and the charts they embed."""

    title: str
    blocks: list[str] = field(default_factory=list)
    charts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (slug, spec)

    def h(self, level: int, text: str) -> None:
        self.blocks.append(f"<h{level}>{esc(text)}</h{level}>")

    def p(self, text: str, cls: str = "") -> None:
        attr = f' class="{cls}"' if cls else ""
        self.blocks.append(f"<p{attr}>{esc(text)}</p>")

    def pre(self, text: str) -> None:
        self.blocks.append(f"<pre>{esc(text)}</pre>")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        head = "".join(f"<th>{esc(h)}</th>" for h in headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(_cell(c))}</td>" for c in r) + "</tr>" for r in rows
        )
        self.blocks.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def checks(self, checks: Sequence[Mapping[str, Any]]) -> None:
        """A situation's checks: the verdict line of each, then (when any check has a figure,
        a band or a sweep) a table of verdict, measured, figure, ratio, band, role, holds."""
        items = "".join(
            f'<li class="{"pass" if c["passed"] else "fail"}"><b>{"PASS" if c["passed"] else "FAIL"}</b> '
            f'{esc(c["claim"])} <span class="detail">({esc(c["detail"])})</span></li>'
            for c in checks
        )
        self.blocks.append(f'<ul class="checks">{items}</ul>')
        if any(c.get("band") is not None or c.get("holds") is not None or c.get("figure") is not None
               for c in checks):
            self.table(["check", "verdict", "measured", "figure", "ratio", "band", "role", "holds"],
                       [_check_row(c) for c in checks])

    def svg(self, text: str, caption: str = "") -> None:
        """A figure drawn elsewhere (matplotlib), inlined so the page stays self-contained:
        its XML prologue and namespace declarations dropped (HTML places an inline <svg> in the
        SVG namespace), scripts refused."""
        start = text.find("<svg")
        body = text[start:] if start >= 0 else ""
        if not body or re.search(r"<\s*script", body, re.I):
            self.p(f"(figure not shown: {caption or 'not an SVG file'})", "note")
            return
        body = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", body, count=2)
        cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
        self.blocks.append(f'<figure class="sensitivity">{body}{cap}</figure>')

    def chart(self, slug: str, chart: Any) -> None:
        """Add an altair chart (or None: nothing to draw)."""
        if chart is None:
            return
        spec = chart.to_dict()
        # A URL naming the schema version: never fetched, but a page with no URLs in it is
        # easier to check for self-containment (the mode is given to vega-embed instead).
        spec.pop("$schema", None)
        n = len(self.charts)
        self.charts.append((f"{n:02d}-{_slug(slug)}", spec))
        self.blocks.append(f'<div class="chart" id="chart-{n}" data-rendered="0"></div>')

    def row_start(self) -> None:
        self.blocks.append('<div class="row">')

    def row_end(self) -> None:
        self.blocks.append("</div>")

    def html(self) -> str:
        import vl_convert as vlc

        specs = [spec for _, spec in self.charts]
        script = (
            "const specs = " + _script_json(specs) + ";\n" + _RENDER_SCRIPT
        )
        return _TEMPLATE.format(
            title=esc(self.title),
            style=_STYLE,
            errors=_ERRORS_SCRIPT,
            bundle=vlc.javascript_bundle().replace("</script", "<\\/script"),
            body="\n".join(self.blocks),
            script=script,
        )

    def write(self, path: str | os.PathLike, *, figures: bool = True) -> list[Path]:
        """Write the HTML file, and unless ``figures`` is False each chart as SVG and PNG in
        ``<name>-figures/`` beside it; returns the figure files."""
        path = Path(path)
        write_text_atomic(path, self.html())
        if not figures:
            return []
        import vl_convert as vlc

        fig_dir = path.with_name(path.stem + "-figures")
        fig_dir.mkdir(parents=True, exist_ok=True)
        for old in fig_dir.glob("*"):
            if old.suffix in (".svg", ".png"):
                old.unlink()
        written = []
        for slug, spec in self.charts:
            svg = fig_dir / f"{slug}.svg"
            write_text_atomic(svg, vlc.vegalite_to_svg(spec))
            png = fig_dir / f"{slug}.png"
            png.write_bytes(vlc.vegalite_to_png(spec, scale=2))
            written += [svg, png]
        return written


def _check_row(c: Mapping[str, Any]) -> list[Any]:
    """One check as a row of the checks table (blank where a check has no such field)."""
    band, holds = c.get("band"), c.get("holds")
    ratio = c.get("ratio")
    return [c.get("id") or c["claim"], "PASS" if c["passed"] else "FAIL",
            _short(c.get("measured")), c.get("figure"),
            c.get("zero") if ratio is None and c.get("zero") else ratio,
            "" if band is None else f"[{_cell(band[0])}, {_cell(band[1])}]",
            c.get("role", ""),
            "" if holds is None else f"holds at {holds['n']} of {holds['of']} points"]


def _short(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    return value


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "chart"


def _script_json(data: Any) -> str:
    """JSON safe inside <script>: nothing in it can end the element or open a comment."""
    text = json.dumps(data, allow_nan=False, default=_json_default)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { margin-top: 1.5em; } .row { display: flex; flex-wrap: wrap; gap: 1em; }
.chart { min-height: 60px; } table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
td:first-child { text-align: left; }
th { background: #f3f3f3; } pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
.checks { list-style: none; padding-left: 0; } .pass b { color: #17803d; } .fail b { color: #c0392b; }
.detail { color: #666; } .note { color: #555; font-size: 0.9em; }
figure.sensitivity svg { max-width: 100%; height: auto; }
"""

# Renders every chart as SVG and records the outcome on the page itself.
# Installed first in <head>, before the bundle, so that an error anywhere is recorded.
_ERRORS_SCRIPT = """
window.reportErrors = [];
window.addEventListener('error', (e) => window.reportErrors.push(String(e.message)));
const origError = console.error;
console.error = (...a) => { window.reportErrors.push(a.map(String).join(' ')); origError(...a); };
"""

_RENDER_SCRIPT = """
const errors = window.reportErrors;
let rendered = 0;
Promise.all(specs.map((spec, i) =>
  vegaEmbed('#chart-' + i, spec, {mode: 'vega-lite', renderer: 'svg', actions: false})
    .then(() => { document.getElementById('chart-' + i).dataset.rendered = '1'; rendered++; })
    .catch((e) => errors.push('chart ' + i + ': ' + e))
)).finally(() => {
  document.body.dataset.chartsRendered = String(rendered);
  document.body.dataset.errors = JSON.stringify(errors);
});
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{style}</style>
<script type="text/javascript">
{errors}
</script>
<script type="text/javascript" id="vega-bundle">
{bundle}
</script>
</head>
<body data-charts-rendered="pending" data-errors="[]">
{body}
<script type="text/javascript">
{script}
</script>
</body>
</html>
"""


# ---- charts of one run ------------------------------------------------------------------------


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
    return out


# ---- statistics -------------------------------------------------------------------------------


def interval95(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95% confidence interval of the mean (Student's t); low = high =
    mean for fewer than two values or no spread."""
    import numpy as np
    from scipy import stats

    xs = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if len(xs) == 0:
        return (math.nan, math.nan, math.nan)
    m = float(xs.mean())
    if len(xs) < 2 or float(xs.std(ddof=1)) == 0.0:
        return (m, m, m)
    half = float(stats.t.ppf(0.975, len(xs) - 1) * xs.std(ddof=1) / math.sqrt(len(xs)))
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
        tooltip=[f"{group}:N", "mean:Q", "low:Q", "high:Q", "n:Q"],
    )
    whisk = base.mark_errorbar(color="#222").encode(x=alt.X("low:Q", title=metric), x2="high:Q")
    return (bars + whisk).properties(title=title, width=CHART_WIDTH, height=alt.Step(16))


# ---- the sweep report -------------------------------------------------------------------------


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
        for axis in axes:
            x, others = safe[axis], [safe[a] for a in axes if a != axis]
            for m in metrics[:4]:
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


# ---- the reproduction report ------------------------------------------------------------------


def reproduction_page(manifests: Sequence[tuple[Path, Mapping[str, Any]]]) -> Page:
    """The report of one or more reproductions (``reproduce.json`` of each experiment)."""
    import altair as alt
    import pandas as pd

    page = Page("reclaimlab: reproductions of the seed threads")
    page.h(1, "Reproductions of the seed threads")
    total = sum(len(s["checks"]) for _, m in manifests for s in m["situations"])
    failed = sum(not c["passed"] for _, m in manifests for s in m["situations"] for c in s["checks"])
    page.p(f"{len(manifests)} experiments, {total} checks: "
           + ("all pass." if not failed else f"{failed} FAIL."), "note")
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
                        yOffset="who:N",
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
                page.row_start()
                for slug, chart in run_charts(root / r["path"], f"{sit['key']} {r['label']}"):
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


#: The manifest a reproduction writes in its root.
REPRODUCTION_MANIFEST = "reproduce.json"


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


def page_for(directory: str | os.PathLike) -> Page:
    """The report of a sweep directory or of a reproduction's output directory."""
    d = Path(directory)
    if not d.is_dir():
        raise ReportError(f"{d}: no such directory")
    if (d / "sweep.json").is_file():
        return sweep_page(d)
    found = find_reproductions(d)
    if found:
        return reproduction_page(found)
    raise ReportError(
        f"{d}: neither a sweep directory (sweep.json) nor a reproduction's (reproduce.json); "
        "give the --out of `reclaimlab sweep` or `reclaimlab reproduce`"
    )
